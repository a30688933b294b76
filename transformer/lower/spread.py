"""Spreading a kernel over the AI cores: which outermost loop is split across blocks, over
how many cores, and why a kernel is not spread.

An Ascend kernel runs on every core only when its launch asks for `blockDim` blocks and each
block (`GetBlockIdx()`) takes a share of the work. Emitted kernels do that by default: the
outermost loop of a single-phase kernel is split over the target's cores (`aiv_cores` for a
vector kernel, `aic_cores` for a cube kernel; `Target.cores` on a coupled chip), each worker
taking one contiguous share of its iterations (the first `trip % n` workers one iteration
more). No pass is needed; `multicore{L=N}` (an explicit `@cores(N)`) still decides for a loop,
so `multicore{L=1}` keeps a kernel on one core.

A kernel of several phases (top-level nests; copies of inputs staged once right before a nest
are part of its phase, `is_prologue_copy`) has each phase spread on its own. Phases that hand
data to each other through GM (one writes a tensor the other reads or writes: an output, a
temp, a local demoted to the GM workspace) then run on different cores, so a cross-block
barrier separates them (`phase_barriers`; lowering emits it as the all-core flag pair
`multicore` kernels use, priced by the timing model at `timing_xcore_latency_cycles`).
Phases that share nothing in GM need none: a core goes on to its share of the next phase.
A launch with a barrier must fit in one wave (`one_wave`): a barrier cannot wait for blocks
the chip has not started yet.

A phase is not spread, with the reason in the plan (`ascx emit --plan`), when
- the outermost statement is not a loop, its bounds are not constant, or it runs once;
- the loop touches no tensor in GM: no input, output or temp (nothing to share out);
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
    # collapsed: the path, from the loop's body, of the inner loop shared with it (through
    # one-iteration loops: `tile`'s point loop `for n in 0..1` of one-row tiles)
    inner: tuple[int, ...] | None = None


def inner_loop(stmt: ir.For, path: tuple[int, ...]) -> ir.For:
    """The loop at `path` below `stmt` (`Spread.inner`)."""
    s: ir.Stmt = stmt
    for i in path:
        assert isinstance(s, ir.For)
        s = s.body[i]
    assert isinstance(s, ir.For)
    return s


def kind_cores(target: Target, core: str) -> tuple[int, str]:
    """(cores, their name) a phase of core kind `core` ("vec" or "cube") spreads over."""
    if core == "cube" and target.aic_cores is not None:
        return int(target.aic_cores), "AIC"
    return int(target.cores), ("AIV" if target.aiv_cores is not None else "AI")


def decide(kernel: ir.Kernel, stmt: ir.Stmt, index: int, core: str, target: Target, collapse: bool = True) -> Spread:
    """The spread of the phase made of top-level statement `stmt` (at `kernel.body[index]`);
    a phase of a multi-phase kernel is decided alone (`phase_barriers` orders the phases).
    `collapse`: the loop may share one flat index with its inner loop (`collapsible`)."""
    if not isinstance(stmt, ir.For):
        return Spread(1, "not split over cores: the phase is not a loop")
    label = f"`{stmt.label or stmt.var}`"
    a = stmt.annotation("cores")
    if a is not None:
        n = max(1, int(a.get("n", 1) or 1))
        return Spread(n, f"{label} split over {n} worker(s) by `@cores({n})` (multicore)")
    sizes = kernel.size_values()
    ct = const_trip(stmt, sizes)
    if ct is None:
        return Spread(1, f"not split over cores: {label} has no constant bounds")
    trip = ct[1]
    if trip < 2:
        return Spread(1, f"not split over cores: {label} runs {trip} time(s)")
    gm = {t.name for t in (*kernel.inputs, *kernel.outputs, *kernel.buffers) if t.kind != "local"}
    if not (ir.names_used((stmt,)) & gm):
        return Spread(1, f"not split over cores: {label} touches no tensor in GM (input, output or temp)")
    from ..deps import parallel_blockers

    blockers = parallel_blockers(kernel, (index,))
    if blockers:
        d = blockers[0]
        why = (f"a {d.src.reduction} reduction into `{d.src.tensor}` across its iterations" if d.reduction
               else f"a dependence: the {d.describe()}")
        return Spread(1, f"not split over cores: {label} carries {why}")
    avail, kind = kind_cores(target, core)
    n = min(trip, avail)
    collapse = collapse and core == "vec"  # (cube phases lower their own loops: cube.py)
    got = collapsible(kernel, stmt, index, trip, avail) if collapse else ""
    if isinstance(got, tuple):
        pos, trip2 = got
        inner = inner_loop(stmt, pos)
        n2 = min(trip * trip2, avail)
        q, r = divmod(trip * trip2, n2)
        share = f"{q} each" if r == 0 else f"{q + 1} for the first {r}, {q} for the rest"
        return Spread(n2, f"{label} x `{inner.label or inner.var}` collapsed into one index of {trip} x {trip2} = "  # type: ignore[union-attr]
                          f"{trip * trip2} iterations, split over {n2} of {avail} {kind} cores: {share} (contiguous; "
                          f"the critical core runs {-(-trip * trip2 // n2)} inner iterations, not "
                          f"{-(-trip // n) * trip2} with {label} alone)", True, pos)
    q, r = divmod(trip, n)
    share = f"{q} each" if r == 0 else f"{q + 1} for the first {r}, {q} for the rest"
    why = f"; not collapsed with an inner loop: {got}" if collapse and got else ""
    return Spread(n, f"{label} split over {n} of {avail} {kind} cores: {trip} iterations, {share} (contiguous){why}", True)


def collapsible(kernel: ir.Kernel, stmt: ir.For, index: int, trip: int, avail: int
                ) -> tuple[tuple[int, ...], int] | str:
    """(path from `stmt.body`, trip) of the inner loop that collapses with the spread loop
    `stmt` into one flat index (worker w takes a contiguous range of (outer, inner) pairs in
    lexicographic order), or why none does ("" when `stmt` alone already balances).

    The flat share visits a contiguous run of outer iterations, the first and last of them
    only partly; so the statements of `stmt`'s body around the inner loop run again on every
    worker that visits an outer iteration. That is sound only when they come before the
    inner loop and write nothing but locals (per core) that the inner loop does not write: a
    tile staged once per outer iteration (conv2d's input plane). The inner loop must be
    parallel itself and lowered as a loop (its body stages tiles or holds loops). It is
    collapsed only when that lowers the critical core's count of inner iterations. One-
    iteration loops that hold nothing but one loop are looked through (group norm after
    `tile`: `for n0 { for n in 0..1 { for g {..} } }` collapses `n0` x `g`)."""
    n = min(trip, avail)
    if trip % n == 0 and n == avail:
        return ""  # every core already has the same share
    loops = [i for i, x in enumerate(stmt.body) if isinstance(x, ir.For)]
    if len(loops) != 1:
        return f"`{stmt.label or stmt.var}`'s body holds {len(loops)} loops, not one"
    pos = loops[0]
    inner = stmt.body[pos]
    assert isinstance(inner, ir.For)
    path: tuple[int, ...] = (pos,)
    sizes = kernel.size_values()
    while (len(inner.body) == 1 and isinstance(inner.body[0], ir.For)
           and (const_trip(inner, sizes) or (0, 0))[1] == 1):
        inner, path = inner.body[0], path + (0,)
    name = f"`{inner.label or inner.var}`"
    if pos != len(stmt.body) - 1:
        return f"statements follow {name} in the loop's body (they would run on several cores)"
    local = {t.name for t in kernel.buffers if t.kind == "local"}
    pre = stmt.body[:pos]
    if written(pre) - local:
        return f"statements before {name} write GM ({_names(sorted(written(pre) - local))})"
    if written(pre) & written((inner,)):
        return f"{name} writes what the statements before it write"
    if not any(isinstance(x, (ir.For, ir.Copy)) for x in inner.body):
        return f"{name} is one vector nest, not a loop of tiles"
    ct = const_trip(inner, sizes)
    if ct is None or ct[1] < 2:
        return f"{name} has no constant bounds" if ct is None else f"{name} runs {ct[1]} time(s)"
    from ..deps import parallel_blockers

    if parallel_blockers(kernel, (index, *path)):
        return f"{name} is not parallel"
    trip2 = ct[1]
    n2 = min(trip * trip2, avail)
    if -(-trip * trip2 // n2) >= -(-trip // n) * trip2:
        return f"collapsing with {name} would not balance the cores better"
    return path, trip2


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


def kernel_spread(kernel: ir.Kernel, target: Target, collapse: bool = True) -> dict[int, Spread]:
    """The spread of each top-level loop (by its index in `kernel.body`), as lowering decides
    it (for estimates that do not lower: the tuner's analytic model). `collapse=False`: the
    cores of the outermost loop alone (what `tile` sizes that loop's tiles for)."""
    from .cube import CUBE_SCOPES

    body = kernel.body
    cube = {t.name for t in kernel.buffers if t.kind == "local" and t.scope in CUBE_SCOPES}
    return {i: decide(kernel, s, i, "cube" if ir.names_used((s,)) & cube else "vec", target, collapse)
            for i, s in enumerate(body) if isinstance(s, ir.For)}


def written(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """The tensors (and scalar temps) statements write: assignment targets, copy destinations."""
    out: set[str] = set()
    for s in ir.iter_stmts(stmts):
        if isinstance(s, ir.Copy):
            out.add(s.dst.tensor)
        elif isinstance(s, ir.Assign):
            out.add(s.target.tensor if isinstance(s.target, ir.Access) else s.target.name)
    return out


def phase_barriers(kernel: ir.Kernel, phases: list[tuple[ir.Stmt, ...]], cores: list[int]) -> list[str]:
    """For each phase, why a cross-block barrier must precede it ("" when none must).

    Phase b needs one when some phase a before it, after the last barrier, touches a tensor
    in GM (anything but a `local`: locals are per core and per phase) that one of the two
    writes (read after write, write after read or write after write) and one of them is split
    over workers: then a's and b's iterations of that tensor may run on different cores. Two
    phases that both run on worker 0 alone are ordered by program order (and the phase's own
    `PipeBarrier`). The barrier is placed as late as possible, right before b, so one barrier
    serves every pair it separates."""
    local = {t.name for t in kernel.buffers if t.kind == "local"}
    names = [phase_label(kernel, p, i) for i, p in enumerate(phases)]
    uses = [ir.names_used(p) - local for p in phases]
    writes = [written(p) - local for p in phases]
    out: list[str] = []
    since = 0  # the first phase after the last barrier
    for b in range(len(phases)):
        why = ""
        for a in range(since, b):
            if cores[a] <= 1 and cores[b] <= 1:
                continue
            raw, war = sorted(writes[a] & uses[b]), sorted(uses[a] & writes[b])
            if raw:
                why = f"it reads {_names(raw)}, which phase `{names[a]}` writes"
            elif war:
                why = f"it writes {_names(war)}, which phase `{names[a]}` uses"
            if why:
                break
        if why:
            since = b
        out.append(why)
    return out


def one_wave(workers: list[int], kinds: list[str], barrier: bool, vec_cap: int, cube_cap: int) -> list[int]:
    """The workers of each phase (core kind "vec" or "cube"), capped so that a launch with a
    cross-block barrier (`barrier`) fits in one wave: at most `vec_cap` vector and `cube_cap`
    cube workers (`kind_cores`: the cores that run at once). The chip runs `blockDim` blocks
    beyond its cores in waves, a later wave starting only when a block of an earlier one
    ends; a barrier that waits for every block then never completes (the blocks it waits for
    have not started). An explicit `@cores(N)` above the cap is lowered to the cap (each
    worker takes a larger share). Without a barrier, waves are fine and nothing changes."""
    if not barrier:
        return list(workers)
    return [min(n, vec_cap if k == "vec" else cube_cap) if k in ("vec", "cube") else n for n, k in zip(workers, kinds)]


def launch_shape(workers: list[int], kinds: list[str], barrier: bool, mix_vectors: int) -> tuple[str, int]:
    """(kernel mode, blockDim) of a launch whose phases have core kinds `kinds` ("vec",
    "cube") and `workers` each. Vector only: AIV_MODE over the widest phase, unless phases
    hand data through GM across blocks (`barrier`): then the all-AIV barrier runs as a MIX
    launch of `mix_vectors` AIV per block. Cube only: AIC_MODE. Both: MIX_MODE, enough
    blocks for the widest cube phase and for the widest vector phase."""
    vec = max([n for n, k in zip(workers, kinds) if k == "vec"] or [1])
    cube = max([n for n, k in zip(workers, kinds) if k == "cube"] or [1])
    if "cube" in kinds:
        return ("MIX_MODE", max(cube, -(-vec // mix_vectors))) if "vec" in kinds else ("AIC_MODE", cube)
    if vec > 1 and barrier:
        return "MIX_MODE", -(-vec // mix_vectors)
    return "AIV_MODE", vec


def phase_label(kernel: ir.Kernel, stmts: tuple[ir.Stmt, ...], index: int) -> str:
    last = stmts[-1] if stmts else None
    if isinstance(last, ir.For):
        return last.label or f"loop{index}"
    return f"stmts{index}"


def _names(ts: list[str]) -> str:
    return ", ".join(f"`{t}`" for t in ts)


def worker_bounds(lo: int, trip: int, n: int) -> tuple[int, int, str]:
    """(q, r, comment) of the contiguous split of `trip` iterations from `lo` over `n` workers:
    worker w runs [lo + w*q + min(w, r), lo + (w+1)*q + min(w+1, r))."""
    q, r = divmod(trip, n)
    if r == 0:
        return q, r, f"worker w runs iterations [{lo} + w * {q}, {lo} + (w + 1) * {q})"
    return q, r, f"worker w runs {q + 1} iterations if w < {r}, else {q}, contiguous from {lo}"


__all__ = ["Spread", "const_trip", "decide", "is_prologue_copy", "kernel_spread", "kind_cores", "launch_shape",
           "one_wave", "phase_barriers", "phase_spans", "worker_bounds", "written"]
