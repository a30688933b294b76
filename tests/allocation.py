"""What an emitted plan allocates on chip, summed from the plan itself (TQue/TBuf sizes):
the other side of the plan-vs-proof equality (`ascx check` totals, issue 11)."""

from __future__ import annotations

from transformer.lower import KernelPlan, lower_kernel
from transformer.targets import get_target


def plan_totals(plan: KernelPlan, target: str = "ascend910b2") -> dict[str, int]:
    """Per scope: the peak over phases (the pipe is reset between them) of the bytes every
    `InitBuffer` of the phase takes — each TQue/TBuf rounded up to the scope's allocation
    granularity (32 B, or the L0 fractal) times its depth, plus the temporaries TBuf."""
    tgt = get_target(target)
    out: dict[str, int] = {}
    for ph in plan.phases:
        per: dict[str, int] = {}
        for b in ph.buffers:
            a = max(32, tgt.scope(b.scope).alignment_bytes)
            per[b.scope] = per.get(b.scope, 0) + -(-b.nbytes // a) * a * b.depth
        if ph.tmp_bytes:
            per["ub"] = per.get("ub", 0) + ph.tmp_bytes
        for s, v in per.items():
            out[s] = max(out.get(s, 0), v)
    return out


def kernel_plan_totals(kernel, target: str = "ascend910b2") -> dict[str, int]:
    return plan_totals(lower_kernel(kernel, target), target)


def capacity_fallbacks(plan: KernelPlan) -> list[str]:
    """Nests that fell back to scalar code because their temporaries did not fit."""
    return [f"{n.where}: {n.fallback}" for n in plan.nests if n.capacity]
