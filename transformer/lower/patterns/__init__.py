"""Instruction-selection patterns: one file per pattern, registered in `REGISTRY` (the one
list), tried by `select.select` at the lowering's sites (`base.py`). To add a pattern,
write a file here with a class that has `name`, `site`, `summary`, `match`, `price` and
`emit` (`base.Pattern`), end it with `PATTERN = YourPattern()`, and add its module to
`_MODULES` below (docs/lowering.md, "Adding a pattern")."""

from __future__ import annotations

from importlib import import_module

from .base import Ctx, Match, Pattern, Reason, SITES

_MODULES = (
    "flash", "gemm", "conv",
    "cube_mmad", "vector_1d", "collapsed_2d", "collapsed_reduction", "interchanged", "vecmat", "distributed",
    "axpy", "dot", "contract",
    "row_context", "rows2d",
    "row_gather", "row_scatter_add",
    "window",
)

REGISTRY: list[Pattern] = [import_module(f"{__name__}.{m}").PATTERN for m in _MODULES]
BY_NAME: dict[str, Pattern] = {p.name: p for p in REGISTRY}
assert len(BY_NAME) == len(REGISTRY), "two patterns share a name"
assert all(p.site in SITES for p in REGISTRY), "a pattern names an unknown site"

__all__ = ["BY_NAME", "Ctx", "Match", "Pattern", "REGISTRY", "Reason", "SITES"]
