"""Solver-chosen tile sizes for `tile` without parameters (the `choose_tiles` seam).

    from transformer.capacity.tiles import solver_tiles
    solver_tiles(kernel, {"qk.i": 1024, "qk.j": 1024}, "ascend910b2")   # {"qk.i": 128, ...}

How (always consistent with what `tile` really creates):

1. **Probe.** `tile` is applied twice with two different candidate assignments (a dry run:
   `passes.tile.tile_kernel`, or the `apply` callable you pass) and `kernel_buffers` of both
   results are compared.  A buffer dim that equals the tile size of loop L in both probes
   becomes the symbolic dim "L"; a dim equal in both is a constant; likewise for DataCopy
   runs (constant x tile sizes).  That gives a symbolic `Buffer` list, the tile sizes
   being Z3/search variables.
2. **Search.** `best_tiles` over the candidate grid (objective: largest on-chip footprint;
   ties toward multiples of 16/64) with every hard constraint of the capacity model.
3. **Verify.** The winner is applied for real and `check_kernel_capacity` must say sat;
   otherwise the next ranked assignments are tried.
4. **Fallback.** When a dim is not a plain tile size (a conv halo `T + 2`, ...) or the
   probes disagree on the buffer set, the grid is enumerated by dry runs instead, largest
   tiles first, and the first assignment the checker proves sat wins.

Loops are solved nest by nest (loops of different top-level nests are independent, since
the capacity model's liveness separates top-level nests); the union is verified at the end.
Results are cached in-process by (printed kernel, loops, target, options).

Raises `NoFeasibleTilesError` when no candidate assignment fits.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import ir
from ..targets import Target
from .buffer import Buffer
from .cache import LRU
from .errors import CapacityError, NoFeasibleTilesError
from .from_kernel import check_kernel_capacity, kernel_buffers, needs_api_temp
from .search import DEFAULT_CANDIDATES, feasible_tiles
from .solve import DEFAULT_TIMEOUT_MS, resolve_target

Apply = Callable[[ir.Kernel, Mapping[str, int]], ir.Kernel]

MAX_DRY_RUNS = 200
SMALL = (1, 2, 4, 8)
_CACHE: LRU[dict[str, int]] = LRU(256)


class _Infeasible(Exception):
    """A dry run the tile pass refused (PassError) or that did not type-check."""


def tile_candidates(extent: int, values: Iterable[int] | None = None) -> tuple[int, ...]:
    """Tile sizes to try for a loop of `extent`: the candidates (default 1, 2, 4, 8 and
    `DEFAULT_CANDIDATES`) that are <= extent, the divisors of extent among them when there
    are any (no tails), plus the extent itself (one tile) when <= 1024.  Small sizes are
    there for long rows (a 16-row tile of 8192 f16 already needs 256 KiB); the search
    prefers larger ones, and the cube constraints rule them out for cube operands."""
    base = tuple(values) if values is not None else SMALL + DEFAULT_CANDIDATES
    vals = [v for v in base if 1 <= v <= extent]
    divs = [v for v in vals if extent % v == 0]
    out = set(divs or vals)
    if extent <= max(1024, max(base, default=0)) and (values is None or extent in base):
        out.add(extent)
    return tuple(sorted(out)) or (extent,)


def _default_apply(target: Any) -> Apply:
    def apply(kernel: ir.Kernel, sizes: Mapping[str, int]) -> ir.Kernel:
        from passes.base import PassError, TraceEntry
        from passes.tile import tile_kernel

        from ..check import check_kernel
        try:
            out = tile_kernel(kernel, tuple(sizes.items()), target, TraceEntry("tile"))
        except PassError as e:
            raise _Infeasible(str(e)) from None
        if check_kernel(out):
            raise _Infeasible("tile produced an invalid kernel")
        return out
    return apply


def _dry(apply: Apply, kernel: ir.Kernel, sizes: Mapping[str, int]) -> ir.Kernel:
    try:
        return apply(kernel, dict(sizes))
    except _Infeasible:
        raise
    except Exception as e:  # PassError from a custom `apply`
        from ..diagnostics import AscxError
        if isinstance(e, AscxError):
            raise _Infeasible(str(e)) from None
        raise


# --------------------------------------------------------------------------------------
# probing: concrete buffers at two assignments -> symbolic buffers


def _probes(cands: Mapping[str, tuple[int, ...]]) -> tuple[dict[str, int], dict[str, int]] | None:
    """Two assignments where every loop gets two different values and no two loops share
    a value in the same probe (so a dim maps back to exactly one loop)."""
    names = list(cands)
    p1: dict[str, int] = {}
    p2: dict[str, int] = {}
    for n in names:
        vs = sorted(cands[n], reverse=True)
        a = next((v for v in vs if v not in p1.values() and v >= 16), None) or \
            next((v for v in vs if v not in p1.values()), None)
        if a is None:
            return None
        b = next((v for v in vs if v != a and v not in p2.values() and v not in p1.values()
                  and v >= 16), None) or \
            next((v for v in vs if v != a and v not in p2.values()), None)
        if b is None:
            return None
        p1[n], p2[n] = a, b
    return p1, p2


def _symbolize(b1: Sequence[Buffer], b2: Sequence[Buffer], p1: Mapping[str, int],
               p2: Mapping[str, int]) -> list[Buffer] | None:
    """Symbolic buffers from two probes, or None when some dim is not a plain tile size."""
    if [(b.name, b.scope, b.dtype, b.stages, len(b.shape)) for b in b1] != \
            [(b.name, b.scope, b.dtype, b.stages, len(b.shape)) for b in b2]:
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
        out.append(Buffer(x.name, x.scope, x.dtype, tuple(shape), stages=x.stages,  # type: ignore[arg-type]
                          position=x.position, cube_operand=x.cube_operand,
                          copy_lengths=tuple(runs), pad_allowed=x.pad_allowed,
                          origin=x.origin, loc=x.loc, live=live))
    return out


# --------------------------------------------------------------------------------------
# the search


def _rank(env: Mapping[str, int]) -> tuple:
    vals = list(env.values())
    return (math.prod(vals), sum(v % 16 == 0 for v in vals), sum(v % 64 == 0 for v in vals),
            tuple(sorted(vals, reverse=True)))


def _fits(apply: Apply, kernel: ir.Kernel, env: Mapping[str, int], target: Target,
          api_temp: bool | None, timeout_ms: int) -> bool:
    try:
        k = _dry(apply, kernel, env)
    except _Infeasible:
        return False
    res = check_kernel_capacity(k, target, timeout_ms=timeout_ms, api_temp=api_temp,
                                hints=False)
    return res.status == "sat"


def _solve_group(kernel: ir.Kernel, cands: Mapping[str, tuple[int, ...]], target: Target,
                 apply: Apply, api_temp: bool | None, objective: Any,
                 timeout_ms: int) -> dict[str, int]:
    """Best assignment for loops that belong together (one top-level nest)."""
    probes = _probes(cands)
    if probes is not None:
        try:
            k1, k2 = _dry(apply, kernel, probes[0]), _dry(apply, kernel, probes[1])
            sym = _symbolize(kernel_buffers(k1, target), kernel_buffers(k2, target), *probes)
        except _Infeasible:
            sym = None
        if sym is not None:
            reserve = needs_api_temp(k1) if api_temp is None else api_temp
            used = set().union(*(b.symbols() for b in sym)) if sym else set()
            fixed = {n: max(cands[n]) for n in cands if n not in used}
            try:
                ranked = feasible_tiles(sym, target, {n: cands[n] for n in cands if n in used},
                                        objective=objective, api_temp=reserve, limit=16,
                                        timeout_ms=timeout_ms) if used else [{}]
            except CapacityError:  # grid too large: enumerate by dry runs below
                ranked = []
            for env in ranked:
                full = {**fixed, **env}
                if _fits(apply, kernel, full, target, api_temp, timeout_ms):
                    return {n: full[n] for n in cands}
    # Fallback: enumerate by dry runs, largest tiles first.
    grid = [dict(zip(cands, vs)) for vs in itertools.product(*cands.values())]
    grid.sort(key=_rank, reverse=True)
    for env in grid[:MAX_DRY_RUNS]:
        if _fits(apply, kernel, env, target, api_temp, timeout_ms):
            return env
    smallest = {n: min(v) for n, v in cands.items()}
    raise NoFeasibleTilesError(
        f"no candidate tiles of {', '.join(cands)} fit on {target.name}",
        f"candidates: {dict(cands)}; smallest tried: {smallest}")


def _nest_of(kernel: ir.Kernel, name: str) -> int:
    try:
        from passes.base import resolve_loop
        return resolve_loop(kernel, name, "tile").path[0]
    except Exception:
        return -1


def solver_tiles(kernel: ir.Kernel, loops: Mapping[str, int], target: Target | str | None = None,
                 *, candidates: Mapping[str, Iterable[int]] | None = None,
                 objective: Any = "footprint", api_temp: bool | None = None,
                 apply: Apply | None = None, partial: bool = False,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[str, int]:
    """The largest feasible tile sizes for `loops` ({loop name: extent}) of `kernel`.

    For `passes/tile.py`'s `choose_tiles(kernel, target)` seam:

        def choose_tiles(kernel, target=None):
            sizes = kernel.size_values()
            loops = {n: L.loop_extent(lp, sizes) for band in _default_bands(kernel)
                     for n, lp in band}
            try:
                from transformer.capacity import CapacityError, solver_tiles
                return solver_tiles(kernel, loops, target, partial=True)
            except (ImportError, CapacityError):
                pass                                  # the power-of-two policy below
            ...

    partial:    leave out (do not tile) the loops of a nest where nothing fits, instead of
                raising `NoFeasibleTilesError` (e.g. attention fused without K/V blocking:
                whole K and V rows are staged whatever the query tile).

    candidates: per loop, the sizes to try (default `tile_candidates(extent)`).
    objective:  "footprint" (largest tiles that fit), "reuse", or callable(env) -> float.
    api_temp:   reserve the UB API temp (default: automatic, as `ascx check`).
    apply:      the dry run, `apply(kernel, {loop: size}) -> tiled kernel`; default
                `passes.tile.tile_kernel` (raising `PassError` marks a size infeasible).
    Every returned assignment was applied and proven sat by `check_kernel_capacity`, so
    `ascx check --passes 'tile{...}'` accepts it.  Raises `NoFeasibleTilesError` when no
    candidate fits; cached by (printed kernel, loops, candidates, target, options).
    """
    from ..printer import print_kernel

    tgt = resolve_target(target)
    if not loops:
        return {}
    cands = {n: tuple(candidates[n]) if candidates and n in candidates else tile_candidates(e)
             for n, e in loops.items()}
    key = None
    if apply is None and not callable(objective):
        import hashlib
        import json
        key = hashlib.sha256(json.dumps([print_kernel(kernel), sorted(cands.items()), tgt.name,
                                         objective, api_temp, timeout_ms]).encode()).hexdigest()
        hit = _CACHE.get(key)
        if hit is not None:
            return dict(hit)
    run = apply or _default_apply(tgt)
    if api_temp is None:
        # The UB API temp is reserved for the whole kernel: decide it once, from a dry run
        # tiling every loop (it depends on the kernel's structure, not on the sizes).
        try:
            api_temp = needs_api_temp(_dry(run, kernel, {n: min(v) for n, v in cands.items()}))
        except _Infeasible:
            api_temp = None
    groups: dict[int, dict[str, tuple[int, ...]]] = {}
    for n in cands:
        groups.setdefault(_nest_of(kernel, n), {})[n] = cands[n]
    chosen: dict[str, int] = {}
    for _, g in sorted(groups.items()):
        try:
            chosen.update(_solve_group(kernel, g, tgt, run, api_temp, objective, timeout_ms))
        except NoFeasibleTilesError:
            if not partial:
                raise
    if len(groups) > 1 and chosen and not _fits(run, kernel, chosen, tgt, api_temp, timeout_ms):
        # Nests coupled through a shared local: solve them together.
        chosen = _solve_group(kernel, {n: cands[n] for n in chosen}, tgt, run, api_temp,
                              objective, timeout_ms)
    if key is not None:
        _CACHE.put(key, dict(chosen))
    return {n: chosen[n] for n in loops if n in chosen}


def clear_cache() -> None:
    _CACHE.clear()


__all__ = ["CapacityError", "NoFeasibleTilesError", "clear_cache", "solver_tiles",
           "tile_candidates"]
