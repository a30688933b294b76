"""The inverse question: which tile sizes fit, and which are best.

Method (enumeration + Z3): the candidate values of each free symbolic dim span a finite grid;
every grid point is tested with the compiled evaluator (`evaluate.py`, the same constraints
as the Z3 encoding), which takes microseconds per point.  The feasible points are ranked by
the objective; `best_tiles` then re-checks winners with Z3 (`check`) and returns the first
one Z3 proves sat, so what it returns is always accepted by `check`.  `feasible_tiles(...,
certify=True)` additionally asks Z3 two questions over the whole grid — "is there a feasible
point the list misses?" and "does a listed point violate a constraint?" — and raises if
either is sat.  Z3 Optimize is not used: the objectives are nonlinear (products of dims).

Objectives (larger is better):
  "footprint"  total on-chip bytes of all buffers (roundup x stages): the largest tiles.
  "reuse"      prod(free dims) / bytes moved per tile, where bytes moved is the footprint of
               one stage of every buffer with DataCopy runs (all on-chip buffers if none
               declares any): arithmetic intensity as bytes reused per byte moved.
  callable     f(assignment: dict[str, int]) -> float (not cached).
Ties are broken toward more dims that are multiples of 16, then of 64, then a larger
product of dims, then lexicographically larger values.

Results are cached by a hash of the constraint system, fixed sizes, candidates and objective
(in-process LRU; on disk when `cache_dir` or `$ASCX_CACHE_DIR` is set).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from typing import Callable, Iterable, Mapping, Sequence, Union


from ..targets import Target
from . import expr as E
from .buffer import Buffer
from .cache import LRU, cache_dir as resolve_cache_dir, disk_get, disk_put
from .errors import CapacityError, NoFeasibleTilesError, UnboundSizeError
from .evaluate import compile_checker
from .model import Constraint, System, alloc_expr, build_system
from .solve import DEFAULT_TIMEOUT_MS, check, normalize_sizes, resolve_target

DEFAULT_CANDIDATES: tuple[int, ...] = (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
MAX_POINTS = 2_000_000

Candidates = Union[Sequence[int], range, tuple[int, int], tuple[int, int, int]]
Objective = Union[str, Callable[[dict[str, int]], float]]
_FEASIBLE: LRU[list[dict[str, int]]] = LRU(128)


def normalize_candidates(name: str, c: Candidates | None) -> tuple[int, ...]:
    """Candidate values: a list/range as given; (lo, hi) = multiples of 16 in [lo, hi]
    (every int if there are none); (lo, hi, step) = range(lo, hi + 1, step)."""
    if c is None:
        return DEFAULT_CANDIDATES
    if isinstance(c, tuple) and len(c) in (2, 3) and all(isinstance(x, int) for x in c):
        lo, hi = c[0], c[1]
        if len(c) == 3:
            vals = list(range(lo, hi + 1, c[2]))
        else:
            vals = [x for x in range(lo, hi + 1) if x % 16 == 0] or list(range(lo, hi + 1))
    else:
        vals = list(c)
    out = tuple(sorted({int(v) for v in vals}))
    if not out or out[0] < 1:
        raise UnboundSizeError(f"candidates for {name} must be non-empty positive ints")
    return out


def _objective_fn(system: System, free: Sequence[str], fixed: Mapping[str, int],
                  objective: Objective) -> Callable[[dict[str, int]], float]:
    if callable(objective):
        return objective
    on_chip = [b for b in system.buffers if b.scope != "gm"]
    if objective == "footprint":
        total = E.add(*(E.prod(alloc_expr(b, system.target), E.const(b.stages)) for b in on_chip))
        total = E.substitute(total, fixed)
        return lambda env: float(E.evaluate(total, env))
    if objective == "reuse":
        movers = [b for b in on_chip if b.copy_lengths] or on_chip
        moved = E.substitute(E.add(*(alloc_expr(b, system.target) for b in movers)), fixed)
        return lambda env: math.prod(env[v] for v in free) / max(1, E.evaluate(moved, env))
    raise CapacityError(f"unknown objective {objective!r}",
                        "objectives: 'footprint', 'reuse', or a callable(dict) -> float")


def _rank_key(obj: float, env: dict[str, int], free: Sequence[str]) -> tuple:
    vals = [env[v] for v in free]
    return (round(obj, 9), sum(x % 16 == 0 for x in vals), sum(x % 64 == 0 for x in vals),
            math.prod(vals), tuple(vals))


def _search_key(system: System, fixed: Mapping[str, int], cands: Mapping[str, tuple],
                objective: Objective) -> str | None:
    if callable(objective):
        return None
    blob = json.dumps([system.key, sorted(fixed.items()), sorted(cands.items()), objective])
    return hashlib.sha256(blob.encode()).hexdigest()


def feasible_tiles(buffers: Iterable[Buffer], target: Target | str | None = None,
                   candidates: Mapping[str, Candidates] | None = None, *,
                   sizes: Mapping[str, int] | None = None, objective: Objective = "footprint",
                   api_temp: bool = False, limit: int | None = None, certify: bool = False,
                   cache_dir: str | os.PathLike[str] | bool | None = None,
                   timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[dict[str, int]]:
    """Every candidate assignment of the free symbolic dims that fits, best first.

    candidates: per free dim, the values to try (default `DEFAULT_CANDIDATES`).
    sizes:      dims held fixed (not searched).
    limit:      return at most this many (the ranking is over all of them).
    certify:    prove with Z3 that the list is exactly the feasible part of the grid.
    This is the action-mask API: the agent may only pick listed assignments.
    """
    tgt = resolve_target(target)
    system = build_system(buffers, tgt, api_temp=api_temp)
    fixed = normalize_sizes(sizes, system)
    free = [v for v in system.variables if v not in fixed]
    for k in candidates or {}:
        if k not in system.variables:
            raise UnboundSizeError(f"candidates given for {k}, which names no symbolic dim",
                                   f"symbolic dims: {', '.join(system.variables) or 'none'}")
    cands = {v: normalize_candidates(v, (candidates or {}).get(v)) for v in free}
    key = _search_key(system, fixed, cands, objective)
    directory = resolve_cache_dir(cache_dir)
    ranked: list[dict[str, int]] | None = None
    if key is not None:
        ranked = _FEASIBLE.get(key)
        if ranked is None:
            ranked = disk_get(directory, key)
            if ranked is not None:
                _FEASIBLE.put(key, ranked)
    if ranked is None:
        ranked = _enumerate(system, free, fixed, cands, objective)
        if key is not None:
            _FEASIBLE.put(key, ranked)
            disk_put(directory, key, ranked)
    if certify:
        certify_feasible(system, free, fixed, cands, ranked, timeout_ms=timeout_ms)
    return [dict(r) for r in (ranked if limit is None else ranked[:limit])]


def _enumerate(system: System, free: list[str], fixed: dict[str, int],
               cands: dict[str, tuple[int, ...]], objective: Objective) -> list[dict[str, int]]:
    npoints = math.prod(len(cands[v]) for v in free) if free else 1
    if npoints > MAX_POINTS:
        raise CapacityError(f"tile search grid has {npoints} points (> {MAX_POINTS})",
                            "give fewer candidates per dim or bind some sizes")
    ok = compile_checker(system, free, fixed)
    score = _objective_fn(system, free, fixed, objective)
    found: list[tuple[tuple, dict[str, int]]] = []
    for values in itertools.product(*(cands[v] for v in free)):
        if ok(*values):
            env = dict(zip(free, values))
            full = {**fixed, **env}
            found.append((_rank_key(score(full), env, free), env))
    found.sort(key=lambda t: t[0], reverse=True)
    return [env for _, env in found]


def certify_feasible(system: System, free: list[str], fixed: Mapping[str, int],
                     cands: Mapping[str, tuple[int, ...]], feasible: list[dict[str, int]], *,
                     timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
    """Z3 proof that `feasible` is exactly the grid points meeting every hard constraint.

    completeness: grid AND constraints AND NOT(point in list) is unsat;
    soundness:    (point in list) AND NOT(all constraints) is unsat.
    Raises CapacityError if either is sat or unknown.
    """
    import z3

    zv = {v: z3.Int(v) for v in free}
    hard = []
    for c in system.hard():
        lhs = E.substitute(c.lhs, fixed)
        hard.append(z3.BoolVal(c.holds(lhs[1])) if lhs[0] == "c"
                    else Constraint(c.name, c.kind, lhs, c.rel, c.rhs).z3(zv))
    grid = z3.And(*(z3.Or(*(zv[v] == x for x in cands[v])) for v in free)) if free else z3.BoolVal(True)
    listed = z3.Or(*(z3.And(*(zv[v] == p[v] for v in free)) for p in feasible)) \
        if feasible and free else z3.BoolVal(bool(feasible))
    for what, formula in (("misses a feasible point", z3.And(grid, *hard, z3.Not(listed))),
                          ("lists an infeasible point", z3.And(listed, z3.Not(z3.And(*hard))))):
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(formula)
        r = s.check()
        if r != z3.unsat:
            raise CapacityError(f"feasible-tile certification failed: the list {what} ({r})")


def best_tiles(buffers: Iterable[Buffer], target: Target | str | None = None,
               candidates: Mapping[str, Candidates] | None = None, *,
               sizes: Mapping[str, int] | None = None, objective: Objective = "footprint",
               api_temp: bool = False, timeout_ms: int = DEFAULT_TIMEOUT_MS,
               cache_dir: str | os.PathLike[str] | bool | None = None) -> dict[str, int]:
    """The best feasible assignment of the free symbolic dims under `objective`.

    The winner is re-checked with Z3 (`check`); the first ranked assignment Z3 proves sat is
    returned, so `check(buffers, target, sizes={**sizes, **best})` is sat.  Raises
    `NoFeasibleTilesError` (with the explanation at the smallest candidates) when nothing fits.
    """
    buffers = tuple(buffers)
    tgt = resolve_target(target)
    ranked = feasible_tiles(buffers, tgt, candidates, sizes=sizes, objective=objective,
                            api_temp=api_temp, cache_dir=cache_dir)
    fixed = dict(sizes or {})
    for env in ranked[:8]:
        res = check(buffers, tgt, sizes={**fixed, **env}, timeout_ms=timeout_ms,
                    api_temp=api_temp, hints=False)
        if res.status == "sat":
            return env
    system = build_system(buffers, tgt, api_temp=api_temp)
    free = [v for v in system.variables if v not in fixed]
    smallest = {v: normalize_candidates(v, (candidates or {}).get(v))[0] for v in free}
    res = check(buffers, tgt, sizes={**fixed, **smallest}, timeout_ms=timeout_ms,
                api_temp=api_temp)
    raise NoFeasibleTilesError(
        f"no candidate tiles fit on {tgt.name}" + (f": {res.message}" if res.status == "unsat"
                                                    else ""),
        f"smallest candidates tried: {smallest}", result=res)


def clear_cache() -> None:
    _FEASIBLE.clear()
