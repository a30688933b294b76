"""Row-invariant inputs: what `tile` stages once before a nest instead of once per tile.

Layernorm's gamma and beta (rmsnorm's gamma, a bias row) are read by every row tile at the
same place: staged per tile, they are copied again for every tile and take two stages of
UB. Staged once before the nest (a top-level `copy`, the *prologue* of the nest's phase in
the lowering: `transformer/lower/spread.py`), every core copies them once into one buffer.
Used by `stage.stage_nest` (the `tile` step that places copies). Not a pass.
"""

from __future__ import annotations

from typing import Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.regions import AccessSite, Box, box_of, merge

from . import _rewrite as R

Path = tuple[int, ...]


def invariant_box(decl: ir.TensorDecl, lst: list[AccessSite], places: list[tuple[Path, Box, bool, bool]],
                   nest: ir.For, sizes: Mapping[str, int]) -> Box | None:
    """The footprint of input `decl` over the whole nest when it can be staged once before the
    nest (`Check_row_invariant`), else None."""
    if decl.kind != "input" or decl.rank != 1 or any(a.write for a in lst):
        return None
    boxes = [box_of(a, (), sizes) for a in lst]
    if any(b is None for b in boxes):
        return None
    box = merge(boxes, sizes)  # type: ignore[arg-type]
    if box is None:
        return None
    return box if Check_row_invariant(box, places, nest, sizes, ir.DTYPE_BYTES[decl.dtype]) else None


def Check_row_invariant(box: Box, places: list[tuple[Path, Box, bool, bool]], nest: ir.For,
                        sizes: Mapping[str, int], esize: int) -> bool:
    """Condition for staging an input once before its nest (a vector broadcast over the
    rows: layernorm's gamma/beta, a bias; `invariant_box` takes rank-1 inputs only):
    its footprint over the nest does not move with the nest's outer loop (no corner or
    extent names its variable), and the one buffer is no larger than the per-tile staging
    it replaces with room for two stages (so hoisting never needs more UB than the tiles
    the capacity solver chose: rows too long for UB keep their per-tile copies); and every
    per-tile footprint starts 32 B aligned inside it (the tile a vector instruction reads
    from the one buffer starts where its own copy would have: aligned, as vector operands
    must be)."""
    for lo, ext, _, _ in box.dims:
        if nest.var in R.names_in(lo) or nest.var in R.names_in(ext):
            return False
    base = [to_affine(lo, sizes) for lo, _, _, _ in box.dims]
    for _, b, _, _ in places:
        for (lo, _, _, _), b0 in zip(b.dims, base):
            a = to_affine(lo, sizes)
            if a is None or b0 is None:
                return False
            d = a - b0
            if (d.const * esize) % 32 or any((c * esize) % 32 for _, c in d.coeffs):
                return False

    def elems(b: Box) -> int:
        n = 1
        for _, _, mx, _ in b.dims:
            n *= mx
        return n

    return elems(box) <= 2 * sum(elems(b) for _, b, _, _ in places)
