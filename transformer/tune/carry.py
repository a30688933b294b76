"""Pipelines carried over from other sizes: the DB warm start, re-checked where it lands.

Why: a pipeline tuned at one size is not safe at another (explicit tile sizes that fit
UB at N = 256 overflow it at N = 65536; a tiling may even be refused there). Before the
agent may propose a pipeline tuned for the same kernel at other sizes, each one is
re-checked at the new sizes:
- capacity and legality: applied for real through the space's mask (`apply_masked`: the
  pass's own checks, then the capacity proof); a refused one is never proposed and the
  run's decisions say why (`carry-refused`);
- correctness: interpreted against the untransformed kernel on fresh random inputs at the
  new sizes, when the kernel is small enough for the interpreter (VERIFY_MAX_ELEMS
  elements per tensor); a larger one is said to be not verified here.
The tune report names the sizes a carried-over winner was tuned at and what its re-check
found (`TuneResult.carried`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import ir
from .space import SearchSpace

VERIFY_MAX_ELEMS = 1 << 16


@dataclass(frozen=True)
class Carried:
    """One pipeline from other sizes and what its re-check at these sizes found."""

    pipeline: str
    tuned_at: dict[str, int] = field(default_factory=dict)
    refused: str = ""  # why it is not proposed here ("" = it fits and applies)
    verified: bool | None = None  # None: too large for the interpreter here

    def to_json(self) -> dict[str, Any]:
        return {"pipeline": self.pipeline, "tuned_at": self.tuned_at, "refused": self.refused or None,
                "verified": self.verified}

    def describe(self) -> str:
        at = ",".join(f"{k}={v}" for k, v in sorted(self.tuned_at.items()))
        if self.refused:
            return f"`{self.pipeline}` (tuned at {at}) is refused at these sizes: {self.refused}; not proposed"
        check = ("verified against the interpreter" if self.verified else
                 "not verified here (too large for the interpreter)" if self.verified is None else "")
        return f"`{self.pipeline or '(no passes)'}` was tuned at {at}; re-checked at these sizes: fits on chip, {check}"


def recheck(space: SearchSpace, pipelines: list[str], tuned_at: dict[str, int], seed: int | None) -> list[Carried]:
    """Re-check each pipeline (tuned at `tuned_at`) at the space's sizes."""
    out = []
    for p in pipelines:
        kernel, _, refused = space.apply_all([p], strict=False)
        if refused is not None:
            out.append(Carried(p, dict(tuned_at), f"`{refused.text}`: {refused.reason}"))
            continue
        verified = _verify(space.kernel, kernel, seed)
        if verified is False:
            out.append(Carried(p, dict(tuned_at), "its result differs from the interpreter's at these sizes", False))
        else:
            out.append(Carried(p, dict(tuned_at), "", verified))
    return out


def _verify(original: ir.Kernel, transformed: ir.Kernel, seed: int | None) -> bool | None:
    """True / False: the interpreter agrees / disagrees on fresh random inputs; None: too
    large to interpret here."""
    from ..affine import eval_int
    from ..driver import verify_kernels

    sizes = original.size_values()
    try:
        elems = max(math.prod(eval_int(d, sizes) for d in t.shape) for t in (*original.inputs, *original.outputs))
    except Exception:
        return None
    if elems > VERIFY_MAX_ELEMS:
        return None
    return verify_kernels(original, transformed, trials=1, seed=seed or 0).ok
