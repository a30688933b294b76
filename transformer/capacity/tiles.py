"""Solver-chosen tile sizes for `tile` without parameters (the `choose_tiles` seam).

    from transformer.capacity.tiles import solver_tiles, kernel_footprint
    fp = kernel_footprint(dry_run, target)          # sizes -> buffers the emitted kernel allocates
    solver_tiles(kernel, {"qk.i": 1024, "qk.j": 1024}, target, footprint=fp,
                 nests={"qk.i": 0, "qk.j": 0})      # {"qk.i": 128, ...}

The capacity package does not know how `tile` works: the caller gives it a *footprint
function* `footprint({loop: size}) -> (buffers, api_temp)` — the on-chip buffers the
emitted kernel allocates when those loops are tiled with those sizes (every `local`, with
its stages, and the lowering's vector temporaries), or None when the sizes are refused.
`passes/tile.py` builds it from a dry run of the pass (`kernel_footprint`).  Each call is a
*dry run*; the search keeps their number small:

0. **Preference.** A footprint may carry a third element, False when the sizes fit but are
   not preferred (`tile`: `double_buffer` finds no loop to pipeline); after such a fit the
   search spends at most `SECOND_CHOICE_RUNS` more dry runs looking for a preferred one.
1. **Nests separately.** Loops are grouped by `nests` (loop -> top-level nest).  The lowering
   resets the pipe between top-level nests, so their buffers are never live together: each
   group is solved alone, then the union is verified once (solved jointly, with the same
   bounds, only when that fails — nests coupled through a shared local).
2. **Lazy candidates.** The grid of candidate sizes (`tile_candidates` per loop) is never
   built: points come from a heap, largest product of sizes first, one at a time.
3. **Guess.** One probe (the smallest sizes >= 16, or the next smaller ones when those
   are refused) is read as if every dim equal to a
   loop's size were that size; the best point of that guessed model is dry-run next, and
   when it fits (the common case) the nest costs two dry runs.
3b. **Probes and pruning.** Otherwise two small assignments are dry-run (the smallest sizes >= 16
   and the next ones up; down, or the smallest of all, when those are refused) and
   compared: a buffer dim equal to loop L's size in both probes becomes the symbolic dim
   "L" (constants stay constants; DataCopy runs become constant x sizes).  The symbolic
   `local`s plus the temporaries at their least (one row per slot: a 2-D nest is collapsed
   only when that fits too) are a lower bound of the footprint, so a point they do not fit
   is pruned without a dry run.  Points are ranked by the objective over the model
   (`feasible_tiles`) when the nest's grid is small, else taken lazily and filtered;
   without a model (probes refused or not plain tile sizes), lazily, unpruned.
4. **Verify.** Survivors are dry-run in rank order; the first whose real buffers `check`
   proves sat wins — so `ascx check` accepts what is returned.

Bounds: at most `max_dry_runs` dry runs per group and `time_budget_s` for the whole search
(then `NoFeasibleTilesError`, or with `partial` the nest is left untiled).  `LAST_STATS` records the last
search (dry runs, pruned points, groups), for tests and benchmarks.  Results are cached
in-process when the caller gives a `cache_key`.

Size: about 530 lines: the tile-size search (candidates, the footprint seam, the Z3
query and its preferences) is one algorithm.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from .. import ir
from ..targets import Target
from .buffer import Buffer
from .cache import LRU
from .errors import CapacityError, NoFeasibleTilesError
from .evaluate import compile_checker
from .model import build_system
from .search import DEFAULT_CANDIDATES, feasible_tiles
from .solve import DEFAULT_TIMEOUT_MS, check, resolve_target

Apply = Callable[[ir.Kernel, Mapping[str, int]], ir.Kernel]
Fit = tuple  # (buffers, api_temp) or (buffers, api_temp, preferred)
Footprint = Callable[[Mapping[str, int]], "Fit | None"]
SECOND_CHOICE_RUNS = 2  # dry runs spent looking for a preferred fit after a plain one

MAX_DRY_RUNS = 48       # per group of loops (one top-level nest)
TIME_BUDGET_S = 20.0    # the whole search
SMALL_GRID = 20_000     # rank a nest's whole grid over the model up to this many points
SMALL = (1, 2, 4, 8)
_CACHE: LRU[dict[str, int]] = LRU(256)


@dataclass
class SearchStats:
    """What the last `solver_tiles` did: dry runs (footprint calls), points pruned by the
    capacity model without a dry run, groups solved, seconds."""

    dry_runs: int = 0
    pruned: int = 0
    groups: int = 0
    seconds: float = 0.0
    per_group: list[int] = field(default_factory=list)


LAST_STATS = SearchStats()


def tile_candidates(extent: int, values: Iterable[int] | None = None) -> tuple[int, ...]:
    """Tile sizes to try for a loop of `extent`: the candidates (default 1, 2, 4, 8 and
    `DEFAULT_CANDIDATES`) that are <= extent and divide it (no tail), plus the extent itself
    (one tile) when <= 1024, plus the *tail-leaving* sizes larger than the largest of those
    that each cut the number of tiles further (`ceil(extent / v)` strictly below the
    previous size's).  So 4096 keeps its divisors (up to 1024: a tail would gain nothing),
    4097 (= 17 x 241) gets 16 .. 1024 (four tiles of 1024 and a tail of 1) instead of 1
    alone, and 1536 does not get 1024 (two tiles, as 768 gives without a tail).  Tails cost
    little since they are vector code (`DataCopyPad`, run-time counts); the search prefers
    larger sizes, and the cube constraints rule small ones out for cube operands.  Small
    sizes are there for long rows (a 16-row tile of 8192 f16 already needs 256 KiB)."""
    base = tuple(values) if values is not None else SMALL + DEFAULT_CANDIDATES
    vals = sorted(v for v in base if 1 <= v <= extent)
    out = {v for v in vals if extent % v == 0}
    if extent <= max(1024, max(base, default=0)) and (values is None or extent in base):
        out.add(extent)
    best = max(out, default=0)
    for v in vals:
        if v > best and (best == 0 or -(-extent // v) < -(-extent // best)):
            out.add(v)
            best = v
    return tuple(sorted(out)) or (extent,)


def kernel_footprint(apply: Apply, kernel: ir.Kernel, target: Target | str | None = None
                     ) -> Footprint:
    """A footprint function from a dry run `apply(kernel, {loop: size}) -> kernel` (raising
    an `AscxError`, e.g. the pass's refusal, marks the sizes infeasible): the buffers are
    `kernel_buffers` of the result (what the lowering allocates, temporaries included).

    Only the top-level statements the dry run changed are lowered (the lowering plans each
    top-level nest on its own and resets the pipe between them), so a dry run on one nest
    of a long kernel costs that nest; a local shared with an unchanged nest is then counted
    on chip (the whole kernel would move it to GM): never less than the kernel needs."""
    import dataclasses

    from ..diagnostics import AscxError
    from .from_kernel import kernel_buffers, needs_api_temp

    tgt = resolve_target(target)
    before = {id(s) for s in kernel.body}

    def footprint(sizes: Mapping[str, int]) -> Fit | None:
        try:
            k = apply(kernel, dict(sizes))
        except AscxError:
            return None
        changed = tuple(s for s in k.body if id(s) not in before)
        if len(changed) < len(k.body):
            k = dataclasses.replace(k, body=changed)
        return kernel_buffers(k, tgt), needs_api_temp(k, tgt)
    return footprint


# --------------------------------------------------------------------------------------
# probing: concrete buffers at two assignments -> symbolic buffers


def is_temporaries(b: Buffer) -> bool:
    """The lowering's vector temporaries (see `kernel_buffers`), not a `local`."""
    return b.position == "VECCALC" and b.origin.startswith("vector temporaries")


def _symbolize(b1: Sequence[Buffer], b2: Sequence[Buffer], p1: Mapping[str, int],
               p2: Mapping[str, int]) -> list[Buffer] | None:
    """Symbolic buffers from two probes, or None when some dim is not a plain tile size."""
    if [(b.name, b.scope, b.dtype, len(b.shape)) for b in b1] != \
            [(b.name, b.scope, b.dtype, len(b.shape)) for b in b2]:
        return None
    inv1 = {v: k for k, v in p1.items()}

    def dim(x: int, y: int) -> int | str | None:
        if x == y:
            # Equal in both probes: a constant (no loop has the same value in both).
            return x
        n = inv1.get(x)
        if n is not None and p2[n] == y:
            return n
        return None

    def run(x: Any, y: Any) -> Any:
        if x == y:
            return x
        if not (isinstance(x, int) and isinstance(y, int)):
            return None
        for n in p1:
            if x % p1[n] == 0 and y % p2[n] == 0 and x // p1[n] == y // p2[n]:
                k = x // p1[n]
                return n if k == 1 else (k, n)
        for m, n in itertools.combinations(p1, 2):
            d1, d2 = p1[m] * p1[n], p2[m] * p2[n]
            if x % d1 == 0 and y % d2 == 0 and x // d1 == y // d2:
                k = x // d1
                return (m, n) if k == 1 else (k, m, n)
        return None

    out: list[Buffer] = []
    for x, y in zip(b1, b2):
        shape = [dim(a, b) for a, b in zip(x.shape, y.shape)]
        if any(d is None for d in shape):
            return None
        if len(x.copy_lengths) != len(y.copy_lengths):
            return None
        runs = [run(a, b) for a, b in zip(x.copy_lengths, y.copy_lengths)]
        if any(r is None for r in runs):
            return None
        live = x.live if x.live == y.live else None
        # where the probes differ (stages, padding, slots), the smaller: a lower bound
        out.append(Buffer(x.name, x.scope, x.dtype, tuple(shape),  # type: ignore[arg-type]
                          stages=min(x.stages, y.stages),
                          position=x.position, cube_operand=x.cube_operand,
                          copy_lengths=tuple(runs), pad_allowed=x.pad_allowed,
                          origin=x.origin, loc=x.loc, live=live,
                          row_align=x.row_align if x.row_align == y.row_align else 0,
                          slots=min(x.slots, y.slots), tbuf=x.tbuf or y.tbuf))
    return out


# --------------------------------------------------------------------------------------
# lazy candidates


def _rank(env: Mapping[str, int]) -> tuple:
    vals = list(env.values())
    return (math.prod(vals), sum(v % 16 == 0 for v in vals), sum(v % 64 == 0 for v in vals),
            tuple(sorted(vals, reverse=True)))


def lazy_grid(cands: Mapping[str, tuple[int, ...]]) -> Iterator[dict[str, int]]:
    """Every point of the candidate grid, largest product of sizes first (ties: more
    multiples of 16, then of 64), generated from a heap without building the grid."""
    names = list(cands)
    vals = [sorted(cands[n], reverse=True) for n in names]
    if not names:
        yield {}
        return
    start = (0,) * len(names)

    def key(ix: tuple[int, ...]) -> tuple:
        r = _rank({n: vals[i][j] for i, (n, j) in enumerate(zip(names, ix))})
        return tuple(-x if isinstance(x, int) else tuple(-y for y in x) for x in r)

    heap = [(key(start), start)]
    seen = {start}
    while heap:
        _, ix = heapq.heappop(heap)
        yield {n: vals[i][j] for i, (n, j) in enumerate(zip(names, ix))}
        for i in range(len(ix)):
            if ix[i] + 1 < len(vals[i]):
                nxt = ix[:i] + (ix[i] + 1,) + ix[i + 1:]
                if nxt not in seen:
                    seen.add(nxt)
                    heapq.heappush(heap, (key(nxt), nxt))


# --------------------------------------------------------------------------------------
# the search


class _Budget:
    """Dry runs and time left; counts into `LAST_STATS`."""

    def __init__(self, footprint: Footprint, target: Target, api_temp: bool | None,
                 timeout_ms: int, deadline: float) -> None:
        self.footprint = footprint
        self.target = target
        self.api_temp = api_temp
        self.timeout_ms = timeout_ms
        self.deadline = deadline
        self.runs = 0
        self.memo: dict[tuple, Fit | None] = {}

    def exhausted(self, limit: int) -> bool:
        return self.runs >= limit or time.perf_counter() > self.deadline

    def dry(self, env: Mapping[str, int]) -> Fit | None:
        key = tuple(sorted(env.items()))
        if key not in self.memo:
            self.runs += 1
            LAST_STATS.dry_runs += 1
            self.memo[key] = self.footprint(env)
        return self.memo[key]

    def fits(self, env: Mapping[str, int]) -> bool:
        fp = self.dry(env)
        if fp is None:
            return False
        bufs, reserve = fp[0], fp[1]
        res = check(bufs, self.target, timeout_ms=self.timeout_ms, hints=False,
                    api_temp=reserve if self.api_temp is None else self.api_temp)
        return res.status == "sat"

    def preferred(self, env: Mapping[str, int]) -> bool:
        """The footprint's third element (e.g. `double_buffer` applies); default True."""
        fp = self.dry(env)
        return fp is not None and (len(fp) < 3 or bool(fp[2]))


def _second_probe(cands: Mapping[str, tuple[int, ...]], p1: Mapping[str, int],
                  up: bool = False, down: bool = False) -> dict[str, int] | None:
    """A probe whose size differs from `p1`'s for every loop, sizes pairwise distinct:
    the largest such sizes, or the nearest ones above (`up`) or below (`down`) `p1`'s."""
    p2: dict[str, int] = {}
    for n in cands:
        order = sorted(v for v in cands[n] if v > p1[n]) if up else \
            sorted((v for v in cands[n] if v < p1[n]), reverse=True) if down else \
            sorted(cands[n], reverse=True)
        vs = [v for v in order
              if v != p1[n] and v not in p2.values() and (up or v not in p1.values())]
        v = next(iter(vs), None) if up or down else \
            next((x for x in vs if x >= 16), None) or next(iter(vs), None)
        if v is None:
            return None
        p2[n] = v
    return p2


def _low_probe(cands: Mapping[str, tuple[int, ...]], floor: int = 16) -> dict[str, int] | None:
    """Small sizes (the smallest >= `floor` when there is one), pairwise distinct: a probe
    the pass accepts when larger ones are refused."""
    p: dict[str, int] = {}
    for n in cands:
        vs = [v for v in sorted(cands[n]) if v not in p.values()]
        v = next((x for x in vs if x >= floor), None) or next(iter(vs), None)
        if v is None:
            return None
        p[n] = v
    return p


def _model(b: _Budget, cands: Mapping[str, tuple[int, ...]]
           ) -> tuple[list[Buffer], bool] | None:
    """Symbolic buffers, a lower bound of the footprint, from two dry-run probes: small
    sizes (the smallest >= 16) and the next ones up, or down when those are refused, or the
    smallest sizes of all and the next ones up."""
    low16, low1 = _low_probe(cands, 16), _low_probe(cands, 1)
    pairs = []
    if low16 is not None:
        pairs += [(low16, _second_probe(cands, low16, up=True)),
                  (low16, _second_probe(cands, low16, down=True))]
    if low1 is not None and low1 != low16:
        pairs.append((low1, _second_probe(cands, low1, up=True)))
    for q1, q2 in pairs:
        if q2 is None:
            continue
        first = b.dry(q1)
        second = b.dry(q2) if first is not None else None
        if first is None or second is None:
            continue
        sym = _symbolize([x for x in first[0] if not is_temporaries(x)],
                         [x for x in second[0] if not is_temporaries(x)], q1, q2)
        if sym is None:
            continue
        # The temporaries at their least: one row per slot (the lowering collapses a 2-D
        # nest only when that fits too), when the rows are plain tile sizes in both probes.
        rows = _symbolize(_rows(first[0]), _rows(second[0]), q1, q2)
        return sym + (rows or []), first[1] if b.api_temp is None else b.api_temp
    return None


def _rows(bufs: Sequence[Buffer]) -> list[Buffer]:
    """Each temporaries buffer cut to one row per slot: a lower bound of its size."""
    from dataclasses import replace

    return [replace(x, shape=x.shape[-1:]) for x in bufs if is_temporaries(x)]


def _wide_rows(sym: Sequence[Buffer], target: Target, names: list[str]
               ) -> Callable[[dict[str, int]], float]:
    """The footprint objective, ties broken toward a larger size of the last loop (the
    innermost of the band: longer contiguous DataCopy runs)."""
    from . import expr as E
    from .model import alloc_expr

    total = E.add(*(E.prod(alloc_expr(x, target), E.const(x.stages))
                    for x in sym if x.scope != "gm"))
    last = names[-1]
    return lambda env: float(E.evaluate(total, env) * 4096 + min(env.get(last, 0), 4095))


def _guess(b: _Budget, cands: Mapping[str, tuple[int, ...]], objective: Any
           ) -> dict[str, int] | None:
    """One probe (small sizes) read as if every dim equal to a loop's size were that size:
    the best point of that guessed model, to be dry-run next.  When it fits the nest costs
    two dry runs; when not, it serves as the second probe of the real model (`_model`)."""
    p = _low_probe(cands, 16)
    if p is None or len(set(p.values())) < len(p):
        return None
    fp = b.dry(p)
    if fp is None:  # refused: the nearest smaller sizes
        p = _second_probe(cands, p, down=True)  # type: ignore[assignment]
        fp = b.dry(p) if p is not None else None
        if fp is None:
            return None
    inv = {v: n for n, v in p.items()}
    sym = [Buffer(x.name, x.scope, x.dtype, tuple(inv.get(d, d) for d in x.shape),
                  stages=x.stages, position=x.position, cube_operand=x.cube_operand,
                  origin=x.origin, live=x.live, row_align=x.row_align, slots=x.slots, tbuf=x.tbuf)
           for x in fp[0] if not is_temporaries(x)]
    sym += [Buffer(x.name, x.scope, x.dtype, tuple(inv.get(d, d) for d in x.shape[-1:]),
                   slots=x.slots, position=x.position, origin=x.origin, live=x.live)
            for x in fp[0] if is_temporaries(x)]
    reserve = fp[1] if b.api_temp is None else b.api_temp
    for env in _candidates(b, cands, objective, (sym, reserve)):
        return env  # may be `p` itself (already dry-run)
    return None


def _candidates(b: _Budget, cands: Mapping[str, tuple[int, ...]], objective: Any,
                model: tuple[list[Buffer], bool] | None) -> Iterator[dict[str, int]]:
    """Points to verify, best first; pruned by the model's compiled predicate."""
    if model is None:
        yield from lazy_grid(cands)
        return
    sym, reserve = model
    used = set().union(*(x.symbols() for x in sym)) if sym else set()
    fixed = {n: max(cands[n]) for n in cands if n not in used}
    free = {n: cands[n] for n in cands if n in used}
    if not free:
        yield dict(fixed)
        return
    if math.prod(len(v) for v in free.values()) <= SMALL_GRID:
        try:
            # lists: `feasible_tiles` reads a 2- or 3-tuple as a range (lo, hi[, step])
            ranked = feasible_tiles(sym, b.target, {n: list(v) for n, v in free.items()}, api_temp=reserve,
                                    objective=_wide_rows(sym, b.target, list(free))
                                    if objective == "footprint" else objective,
                                    timeout_ms=b.timeout_ms)
        except CapacityError:
            ranked = None
        if ranked is not None:
            total = math.prod(len(v) for v in free.values())
            LAST_STATS.pruned += total - len(ranked)
            for env in ranked:
                yield {**fixed, **env}
            return
    system = build_system(sym, b.target, api_temp=reserve)
    names = [v for v in system.variables]
    ok = compile_checker(system, names, {})
    for env in lazy_grid(free):
        if ok(*(env[n] for n in names)):
            yield {**fixed, **env}
        else:
            LAST_STATS.pruned += 1


def _solve_group(b: _Budget, cands: Mapping[str, tuple[int, ...]], objective: Any,
                 max_dry_runs: int) -> dict[str, int]:
    """Best assignment for loops that belong together (one top-level nest)."""
    start = b.runs
    limit = start + max_dry_runs
    guess = _guess(b, cands, objective)
    if guess is not None and b.fits(guess) and b.preferred(guess):
        return guess
    model = _model(b, cands)
    plain: dict[str, int] | None = None  # the best fit that is not preferred
    for env in _candidates(b, cands, objective, model):
        if b.exhausted(limit) or plain is not None and b.runs >= plain_at + SECOND_CHOICE_RUNS:
            break
        if b.fits(env):
            if b.preferred(env):
                return env
            if plain is None:
                plain, plain_at = env, b.runs
    if plain is not None:
        return plain
    smallest = {n: min(v) for n, v in cands.items()}
    why = "dry-run budget spent" if b.exhausted(limit) else "none fits"
    raise NoFeasibleTilesError(
        f"no candidate tiles of {', '.join(cands)} fit on {b.target.name}",
        f"candidates: {dict(cands)}; smallest: {smallest}; {why} after {b.runs - start} dry runs")


def solver_tiles(kernel: ir.Kernel | None, loops: Mapping[str, int],
                 target: Target | str | None = None, *,
                 footprint: Footprint | None = None, apply: Apply | None = None,
                 nests: Mapping[str, int] | None = None,
                 candidates: Mapping[str, Iterable[int]] | None = None,
                 objective: Any = "footprint", api_temp: bool | None = None,
                 partial: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                 max_dry_runs: int = MAX_DRY_RUNS, time_budget_s: float = TIME_BUDGET_S,
                 cache_key: str | None = None) -> dict[str, int]:
    """The largest feasible tile sizes for `loops` ({loop name: extent}).

    footprint:  sizes -> (buffers, api_temp) of the emitted kernel, or None when refused
                (see the module docstring); or give `apply` (a dry run returning the tiled
                kernel: `kernel_footprint(apply, kernel, target)` is used).
    nests:      loop -> top-level nest; loops of different nests are solved separately
                (default: one group).
    candidates: per loop, the sizes to try (default `tile_candidates(extent)`).
    objective:  "footprint" (largest tiles that fit), "reuse", or callable(env) -> float
                (over the symbolic model, when the probes give one).
    api_temp:   force the UB API temp reserve (default: what the footprint says).
    partial:    leave out (do not tile) the loops of a nest where nothing fits, instead of
                raising `NoFeasibleTilesError`.
    Every returned assignment was dry-run and proven sat by `check`, so `ascx check
    --passes 'tile{...}'` accepts it (for the footprint the caller gave).
    """
    tgt = resolve_target(target)
    if not loops:
        return {}
    if footprint is None:
        if apply is None or kernel is None:
            raise TypeError("solver_tiles needs a footprint function (or apply and kernel)")
        footprint = kernel_footprint(apply, kernel, tgt)
    cands = {n: tuple(candidates[n]) if candidates and n in candidates else tile_candidates(e)
             for n, e in loops.items()}
    key = None
    if cache_key is not None and not callable(objective):
        import hashlib
        import json
        key = hashlib.sha256(json.dumps([cache_key, sorted(cands.items()), tgt.name,
                                         objective, api_temp, timeout_ms, max_dry_runs,
                                         sorted((nests or {}).items())]).encode()).hexdigest()
        hit = _CACHE.get(key)
        if hit is not None:
            return dict(hit)
    t0 = time.perf_counter()
    LAST_STATS.__init__()  # type: ignore[misc]
    b = _Budget(footprint, tgt, api_temp, timeout_ms, t0 + time_budget_s)
    groups: dict[int, dict[str, tuple[int, ...]]] = {}
    for n in cands:
        groups.setdefault((nests or {}).get(n, 0), {})[n] = cands[n]
    chosen: dict[str, int] = {}
    try:
        for _, g in sorted(groups.items()):
            before = b.runs
            try:
                chosen.update(_solve_group(b, g, objective, max_dry_runs))
            except NoFeasibleTilesError:
                if not partial:
                    raise
            finally:
                LAST_STATS.per_group.append(b.runs - before)
        LAST_STATS.groups = len(groups)
        if len(groups) > 1 and chosen and not b.fits(chosen):
            # Nests coupled through a shared local: solve them together.
            chosen = _solve_group(b, {n: cands[n] for n in chosen}, objective, max_dry_runs)
    finally:
        LAST_STATS.seconds = time.perf_counter() - t0
    if key is not None:
        _CACHE.put(key, dict(chosen))
    return {n: chosen[n] for n in loops if n in chosen}


def clear_cache() -> None:
    _CACHE.clear()


__all__ = ["LAST_STATS", "CapacityError", "NoFeasibleTilesError", "SearchStats",
           "clear_cache", "is_temporaries", "kernel_footprint", "lazy_grid", "solver_tiles",
           "tile_candidates"]
