"""Precision options as an explicit choice: `ascx tune --allow PASS`.

Why: some passes change results within a tolerance (`round_operand{pv.s=f16}` reads P in
f16 so that P.V runs on the cube; `reciprocal` multiplies by 1/x). They are outside the
default space, because the tuner must not trade accuracy for speed unasked. `--allow
round_operand` (repeatable, one pass name each) adds the stages that pass opens in front of
the default ones (`round_operand` opens `flash_attention` too: the FlashAttention kernel
needs P rounded first), and every candidate whose pipeline uses an allowed pass is verified
against the interpreter on fresh random inputs at the problem's sizes before it is measured,
at the outputs' dtype tolerance (`interp.compare_outputs`: the same rtol / atol as `ascx
verify`). A candidate that differs, or one too large to interpret (more than
VERIFY_MAX_ELEMS elements in a tensor), is a recorded failure, never measured, never chosen.
The winner's report names its precision choice and the verification it passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import ir

# allowed pass -> the stages it opens (in front of DEFAULT_STAGES, in this order)
PRECISION_PASSES: dict[str, tuple[str, ...]] = {
    "round_operand": ("round_operand", "flash_attention"),
    "reciprocal": ("reciprocal",),
}
VERIFY_MAX_ELEMS = 1 << 24


def stages_for(allow: tuple[str, ...], stages: tuple[str, ...]) -> tuple[str, ...]:
    """`stages` with the stages the allowed precision passes open in front (each once)."""
    front: list[str] = []
    for name in allow:
        for st in PRECISION_PASSES[name]:
            if st not in front and st not in stages:
                front.append(st)
    return (*front, *stages)


def uses(passes: tuple[str, ...], allow: tuple[str, ...]) -> list[str]:
    """The pass instances of a pipeline that are allowed precision choices."""
    return [p for p in passes if p.split("{", 1)[0] in allow]


@dataclass(frozen=True)
class Check:
    """The interpreter's verdict on one precision candidate."""

    ok: bool
    detail: str  # per output: max abs / rel error against the tolerance, or why not checked

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail}


def check(original: ir.Kernel, candidate: ir.Kernel, seed: int | None) -> Check:
    """Verify `candidate` against `original` on one fresh random input set."""
    from ..affine import eval_int
    from ..driver import verify_kernels

    sizes = original.size_values()
    elems = max((math.prod(eval_int(d, sizes) for d in t.shape) for t in (*original.inputs, *original.outputs)),
                default=0)
    if elems > VERIFY_MAX_ELEMS:
        return Check(False, f"too large to verify against the interpreter ({elems} elements in a tensor; "
                            f"at most {VERIFY_MAX_ELEMS})")
    rep = verify_kernels(original, candidate, trials=1, seed=seed or 0)
    if rep.error:
        return Check(False, rep.error)
    detail = "; ".join(f"`{o.name}` max abs err {o.max_abs:.3g}, max rel err {o.max_rel:.3g} "
                       f"(tolerance rtol {o.rtol:g}, atol {o.atol:.3g})" for o in rep.outputs)
    return Check(rep.ok, detail)
