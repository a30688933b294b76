"""Capacity over size ranges: a kernel with `size S = 1024 in 1..65536` fits for every S.

The choice (docs/capacity.md, "Ranged sizes"): the **monotone maximum**. A local's bytes are
a product of its dims (row-padded, times its stages), each dim affine in the sizes; when no
ranged size has a negative coefficient in any local's shape (checked here: otherwise
`unknown`, with the local named), every buffer, and so every scope's total, is largest at
the ranged sizes' largest allowed values. One ordinary proof (`check_kernel_capacity`,
lowering temporaries included) at those values is then the proof for the whole range, and it
is what a kernel serving the range allocates anyway: its buffers are sized for the largest
shape. A universally quantified Z3 query would say the same with nonlinear products of
sizes, where Z3 often answers `unknown`.

When the largest values do not fit, the refusal names a size and the first value that
overflows: the ranged sizes are raised one at a time, in declaration order, from their
defaults to their largest values; the first whose raise overflows is bisected (the footprint
is monotone) for its smallest overflowing value, the earlier sizes kept at their largest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .. import ir
from ..affine import to_affine
from .result import CapacityResult


@dataclass(frozen=True)
class RangeCapacity:
    """The verdict for the whole range. sat: `at` are the largest values, proven to fit.
    unsat: `size` overflows from `first` (at the sizes `at`). unknown: `reason`."""

    status: str
    at: dict[str, int] = field(default_factory=dict)
    size: str | None = None
    first: int | None = None
    result: CapacityResult | None = None
    reason: str = ""

    def sentence(self, kernel: ir.Kernel) -> str:
        ranges = ", ".join(f"{s.name} in {s.lo}..{s.hi}" + (f" multiple of {s.multiple}" if s.multiple else "")
                           for s in kernel.sizes if s.ranged)
        at = ", ".join(f"{n} = {v}" for n, v in self.at.items())
        if self.status == "sat":
            return f"fits for every size in its range ({ranges}): proven at the largest values {at} " \
                   "(the buffers' monotone maximum)"
        if self.status == "unsat":
            msg = self.result.message if self.result is not None else ""
            return f"size `{self.size}` overflows from {self.size} = {self.first} (at {at}): {msg}"
        return f"capacity over the ranges ({ranges}) not decided: {self.reason}"


def _allowed(lo: int, hi: int, step: int) -> tuple[int, int]:
    """The smallest and largest multiples of `step` in `lo..hi`."""
    return -(-lo // step) * step, hi // step * step


def not_monotone(kernel: ir.Kernel) -> str | None:
    """Why the monotone maximum does not apply (a local whose shape shrinks as a ranged
    size grows, or is not affine in it), or None."""
    ranged = kernel.size_ranges()
    fixed = {n: v for n, v in kernel.size_values().items() if n not in ranged}
    for t in kernel.buffers:
        if t.kind != "local":
            continue
        for d in t.shape:
            a = to_affine(d, fixed)
            if a is None:
                return f"local `{t.name}` has a dim that is not affine in the sizes"
            for n, c in a.coeffs:
                if n in ranged and c < 0:
                    return f"local `{t.name}` shrinks as `{n}` grows ({n} has coefficient {c})"
    return None


def check_ranges(kernel: ir.Kernel, decide: Callable[[ir.Kernel], CapacityResult]) -> RangeCapacity | None:
    """The verdict for every value of the kernel's ranged sizes (None: it has none).
    `decide` proves one kernel at fixed sizes (`from_kernel.check_kernel_capacity` with the
    caller's target and budget; this module stays below `from_kernel`, which calls it)."""
    ranges = kernel.size_ranges()
    if not ranges:
        return None
    why = not_monotone(kernel)
    if why is not None:
        return RangeCapacity("unknown", reason=why)
    top = {n: _allowed(*r)[1] for n, r in ranges.items()}
    res = decide(kernel.with_sizes(top))
    if res.status != "unsat":
        return RangeCapacity(res.status, top, result=res, reason=res.reason or "")
    env = {n: kernel.size_values()[n] for n in ranges}
    for n, (lo, hi, step) in ranges.items():
        trial = {**env, n: top[n]}
        worst = decide(kernel.with_sizes(trial))
        if worst.status != "unsat":
            env = trial
            continue
        # bisect the allowed values of n (by index from the smallest): `bad` overflows, `good` fits
        first, _ = _allowed(lo, hi, step)
        good, bad = -1, (top[n] - first) // step
        while bad - good > 1:
            mid = (good + bad) // 2
            r = decide(kernel.with_sizes({**env, n: first + mid * step}))
            if r.status == "unsat":
                bad, worst = mid, r
            else:
                good = mid
        return RangeCapacity("unsat", {**env, n: first + bad * step}, n, first + bad * step, worst)
    return RangeCapacity("unsat", top, next(iter(ranges)), top[next(iter(ranges))], res)
