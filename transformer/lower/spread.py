"""Spreading a kernel over the AI cores: which outermost loop is split across blocks, over
how many cores, and why a kernel is not spread.

An Ascend kernel runs on every core only when its launch asks for `blockDim` blocks and each
block (`GetBlockIdx()`) takes a share of the work. Emitted kernels do that by default: the
outermost loop of a single-phase kernel is split over the target's cores (`aiv_cores` for a
vector kernel, `aic_cores` for a cube kernel; `Target.cores` on a coupled chip), each worker
taking one contiguous share of its iterations (the first `trip % n` workers one iteration
more). No pass is needed; `multicore{L=N}` (an explicit `@cores(N)`) still decides for a loop,
so `multicore{L=1}` keeps a kernel on one core.

A kernel is not spread, with the reason in the plan (`ascx emit --plan`), when
- it has several phases (top-level nests; copies of inputs staged once right before a nest
  are part of its phase, `is_prologue_copy`): each phase split over blocks needs a cross-block
  barrier between phases, so those are split only when asked (`multicore`);
- the outermost statement is not a loop, its bounds are not constant, or it runs once;
- the loop touches no input or output (nothing to share out);
- the loop is not parallel (`transformer.deps.parallel_blockers`: a carried dependence or a
  reduction across its iterations; buffers each iteration writes before reading are private).

Spreading changes no on-chip buffer (each core has its own), so the capacity model lowers
without it (`Lowering(spread=False)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ir
from ..intexpr import const_trip
from ..targets import Target


@dataclass(frozen=True)
class Spread:
    """How one phase's outermost loop is shared among workers (`cores` = 1: not shared)."""

    cores: int
    note: str  # what was decided and why (the plan prints it)
    auto: bool = False  # decided here, not by an explicit `@cores`


def kind_cores(target: Target, core: str) -> tuple[int, str]:
    """(cores, their name) a phase of core kind `core` ("vec" or "cube") spreads over."""
    if core == "cube" and target.aic_cores is not None:
        return int(target.aic_cores), "AIC"
    return int(target.cores), ("AIV" if target.aiv_cores is not None else "AI")


def decide(kernel: ir.Kernel, stmt: ir.Stmt, index: int, core: str, phases: int, target: Target) -> Spread:
    """The spread of the phase made of top-level statement `stmt` (at `kernel.body[index]`)."""
    if not isinstance(stmt, ir.For):
        return Spread(1, "not split over cores: the phase is not a loop")
    label = f"`{stmt.label or stmt.var}`"
    a = stmt.annotation("cores")
    if a is not None:
        n = max(1, int(a.get("n", 1) or 1))
        return Spread(n, f"{label} split over {n} worker(s) by `@cores({n})` (multicore)")
    if phases > 1:
        return Spread(1, f"not split over cores: the kernel has {phases} phases, and phases split over blocks need a "
                         f"cross-block barrier between them; `multicore{{{stmt.label or stmt.var}}}` splits {label} explicitly")
    sizes = kernel.size_values()
    ct = const_trip(stmt, sizes)
    if ct is None:
        return Spread(1, f"not split over cores: {label} has no constant bounds")
    trip = ct[1]
    if trip < 2:
        return Spread(1, f"not split over cores: {label} runs {trip} time(s)")
    if not (ir.names_used((stmt,)) & {t.name for t in (*kernel.inputs, *kernel.outputs)}):
        return Spread(1, f"not split over cores: {label} touches no input or output")
    from ..deps import parallel_blockers

    blockers = parallel_blockers(kernel, (index,))
    if blockers:
        d = blockers[0]
        why = (f"a {d.src.reduction} reduction into `{d.src.tensor}` across its iterations" if d.reduction
               else f"a dependence: the {d.describe()}")
        return Spread(1, f"not split over cores: {label} carries {why}")
    avail, kind = kind_cores(target, core)
    n = min(trip, avail)
    q, r = divmod(trip, n)
    share = f"{q} each" if r == 0 else f"{q + 1} for the first {r}, {q} for the rest"
    return Spread(n, f"{label} split over {n} of {avail} {kind} cores: {trip} iterations, {share} (contiguous)", True)


def is_prologue_copy(kernel: ir.Kernel, s: ir.Stmt) -> bool:
    """A top-level `copy L <- X[..]` of an input into a UB local: a row-invariant input that
    `tile` stages once before its nest (layernorm's gamma/beta). It belongs to the phase of
    the loop after it, and every worker runs it before its share of that loop (each core
    has its own UB; the input is only read)."""
    if not isinstance(s, ir.Copy):
        return False
    dst, src = kernel.tensor(s.dst.tensor), kernel.tensor(s.src.tensor)
    return dst is not None and dst.kind == "local" and (dst.scope or "ub") == "ub" and src is not None \
        and src.kind == "input"


def phase_spans(kernel: ir.Kernel) -> list[tuple[int, int]]:
    """(first, last) index into `kernel.body` of each phase: a loop with the prologue copies
    right before it (`is_prologue_copy`), or a run of other statements."""
    spans: list[tuple[int, int]] = []
    start = 0
    body = kernel.body
    for i, s in enumerate(body):
        if not isinstance(s, ir.For):
            continue
        first = i
        while first > start and is_prologue_copy(kernel, body[first - 1]):
            first -= 1
        if first > start:
            spans.append((start, first - 1))
        spans.append((first, i))
        start = i + 1
    if start < len(body):
        spans.append((start, len(body) - 1))
    return spans


def kernel_spread(kernel: ir.Kernel, target: Target) -> dict[int, Spread]:
    """The spread of each top-level loop (by its index in `kernel.body`), as lowering decides
    it (for estimates that do not lower: the tuner's analytic model)."""
    from .cube import CUBE_SCOPES

    body = kernel.body
    phases = len(phase_spans(kernel))
    cube = {t.name for t in kernel.buffers if t.kind == "local" and t.scope in CUBE_SCOPES}
    return {i: decide(kernel, s, i, "cube" if ir.names_used((s,)) & cube else "vec", phases, target)
            for i, s in enumerate(body) if isinstance(s, ir.For)}


def worker_bounds(lo: int, trip: int, n: int) -> tuple[int, int, str]:
    """(q, r, comment) of the contiguous split of `trip` iterations from `lo` over `n` workers:
    worker w runs [lo + w*q + min(w, r), lo + (w+1)*q + min(w+1, r))."""
    q, r = divmod(trip, n)
    if r == 0:
        return q, r, f"worker w runs iterations [{lo} + w * {q}, {lo} + (w + 1) * {q})"
    return q, r, f"worker w runs {q + 1} iterations if w < {r}, else {q}, contiguous from {lo}"


__all__ = ["Spread", "const_trip", "decide", "is_prologue_copy", "kernel_spread", "kind_cores", "phase_spans",
           "worker_bounds"]
