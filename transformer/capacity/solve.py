"""`check`: decide with Z3 whether a buffer set fits a target; sat / unsat / unknown.

Encoding: every hard constraint of the system (`model.py`) is asserted with
`assert_and_track` under its own name, so an unsat core is a list of constraint names that
`explain.py` turns into sentences.  Bound sizes are substituted before encoding (a fully
bound system is linear integer arithmetic over constants, decided instantly); unbound
symbolic dims become Z3 integers with a tracked domain (`domain:<v>`: v >= 1, plus the
allowed values or bounds), and the solver picks them (returned in `CapacityResult.model`).
Nonlinear products of unbound dims can make Z3 give up: the solver timeout (`timeout_ms`) is
then reported as `unknown`, never as unsat.  sat/unsat results are cached by the hash of the
constraint system plus sizes/domains; unknown results are not cached.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence, Union

from ..targets import Target, get_target
from . import expr as E
from .buffer import Buffer
from .cache import LRU
from .errors import UnboundSizeError
from .evaluate import holds, violated
from .explain import explain, note_pad
from .model import Constraint, System, alloc_expr, build_system
from .result import CapacityResult, Explanation, ScopeUsage, UsageRow

if TYPE_CHECKING:  # z3 is imported where a solver runs (see `_solve`)
    import z3

DEFAULT_TIMEOUT_MS = 5000

Domain = Union[Sequence[int], range, tuple[int, int]]
_RESULTS: LRU[CapacityResult] = LRU(512)


def resolve_target(target: Target | str | None) -> Target:
    """A `Target` from a Target, a name, or None (the default target)."""
    return target if isinstance(target, Target) else get_target(target)


def normalize_sizes(sizes: Mapping[str, int] | None, system: System) -> dict[str, int]:
    """Validate bindings: known symbolic dims, positive ints."""
    out: dict[str, int] = {}
    for k, v in (sizes or {}).items():
        if k not in system.variables:
            raise UnboundSizeError(f"size {k} names no symbolic dim",
                                   f"symbolic dims: {', '.join(system.variables) or 'none'}")
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise UnboundSizeError(f"size {k}={v!r} must be a positive int")
        out[k] = v
    return out


def normalize_domain(name: str, d: Domain) -> tuple[int, ...] | tuple[str, int, int]:
    """A list of allowed values (sorted, positive) or ("range", lo, hi)."""
    if isinstance(d, tuple) and len(d) == 2 and all(isinstance(x, int) for x in d):
        lo, hi = d
        if lo < 1 or hi < lo:
            raise UnboundSizeError(f"domain of {name}: need 1 <= lo <= hi, got {d}")
        return ("range", lo, hi)
    vals = tuple(sorted({int(x) for x in d}))
    if not vals or vals[0] < 1:
        raise UnboundSizeError(f"domain of {name} must be non-empty positive ints")
    return vals


def _domain_z3(v: z3.ArithRef, dom: tuple) -> z3.BoolRef:
    import z3

    if dom and dom[0] == "range":
        return z3.And(v >= dom[1], v <= dom[2])
    return z3.Or(*(v == x for x in dom))


def _smallest(system: System, v: str, dom: tuple | None) -> int:
    """Smallest allowed value of `v` meeting its single-variable constraints (cube16...):
    the most favourable value to quote in an explanation of a symbolic unsat."""
    if dom is None:
        values: Iterable[int] = range(1, 4097)
    elif dom[0] == "range":
        values = range(dom[1], min(dom[2], dom[1] + 4096) + 1)
    else:
        values = dom
    own = [c for c in system.hard() if E.symbols(c.lhs) == {v}]
    first = None
    for x in values:
        first = x if first is None else first
        if all(holds(c, {v: x}) for c in own):
            return x
    return first if first is not None else 1


def _key(system: System, sizes: Mapping[str, int], doms: Mapping[str, tuple], hints: bool) -> str:
    blob = json.dumps([system.key, sorted(sizes.items()), sorted(doms.items()), hints])
    return hashlib.sha256(blob.encode()).hexdigest()


def check(buffers: Iterable[Buffer], target: Target | str | None = None, *,
          sizes: Mapping[str, int] | None = None,
          domains: Mapping[str, Domain] | None = None,
          timeout_ms: int = DEFAULT_TIMEOUT_MS, api_temp: bool = False, hints: bool = True,
          use_cache: bool = True) -> CapacityResult:
    """Does `buffers` fit `target`?  Returns a `CapacityResult` (sat, unsat or unknown).

    sizes:      values of symbolic dims (e.g. {"kv.j": 128}); unbound dims are chosen by
                the solver within `domains` (default: any positive integer).
    timeout_ms: Z3 budget; exceeding it yields status "unknown".
    api_temp:   reserve the target's UB API temp area (Compare/Select-style APIs).
    hints:      compute "try tile{...}" hints for unsat capacity constraints.
    """
    t0 = time.perf_counter()
    tgt = resolve_target(target)
    system = build_system(buffers, tgt, api_temp=api_temp)
    bound = normalize_sizes(sizes, system)
    doms = {k: normalize_domain(k, d) for k, d in (domains or {}).items()}
    for k in doms:
        if k not in system.variables:
            raise UnboundSizeError(f"domain given for {k}, which names no symbolic dim")
    key = _key(system, bound, doms, hints)
    if use_cache:
        hit = _RESULTS.get(key)
        if hit is not None:
            res = copy.deepcopy(hit)
            res.cached = True
            res.elapsed_ms = (time.perf_counter() - t0) * 1e3
            return res
    res = _solve(system, bound, doms, timeout_ms, hints)
    res.key = key
    res.elapsed_ms = (time.perf_counter() - t0) * 1e3
    if use_cache and res.status != "unknown":
        _RESULTS.put(key, copy.deepcopy(res))
    return res


def _solve(system: System, bound: dict[str, int], doms: dict[str, tuple], timeout_ms: int,
           hints: bool) -> CapacityResult:
    free = [v for v in system.variables if v not in bound]
    if not free and not violated(system, bound):
        return _sat(system, bound, {})  # every constraint is a true constant: no solver needed
    import z3

    zv = {v: z3.Int(v) for v in free}
    s = z3.Solver()
    s.set("timeout", max(1, int(timeout_ms)))
    # No core.minimize: with bound sizes each violated constraint is a tracked constant
    # False, so the core is already exact; minimisation only costs time on symbolic cases.
    for v in free:
        cond = zv[v] >= 1
        if v in doms:
            cond = z3.And(cond, _domain_z3(zv[v], doms[v]))
        s.assert_and_track(cond, z3.Bool(f"domain:{v}"))
    by_name: dict[str, Constraint] = {}
    for c in system.hard():
        by_name[c.name] = c
        lhs = E.substitute(c.lhs, bound)
        if lhs[0] == "c":
            formula = z3.BoolVal(c.holds(lhs[1]))
        else:
            formula = Constraint(c.name, c.kind, lhs, c.rel, c.rhs).z3(zv)
        s.assert_and_track(formula, z3.Bool(c.name))
    r = s.check()
    res = CapacityResult(status="unknown", target=system.target.name, per_scope={},
                         sizes=dict(bound), api_temp=system.api_temp)
    if r == z3.sat:
        m = s.model()
        return _sat(system, bound, {v: m.eval(zv[v], model_completion=True).as_long() for v in free})
    if r == z3.unsat:
        res.status = "unsat"
        res.core = sorted(str(x) for x in s.unsat_core())
        res.explanations = _explanations(system, bound, doms, free, res.core, by_name, hints)
        res.per_scope = usage(system, bound if not free else None)
    else:
        why = s.reason_unknown()
        res.reason = (f"solver timeout after {timeout_ms} ms" if "timeout" in why or
                      "canceled" in why else f"solver gave up: {why}")
        res.per_scope = usage(system, bound if not free else None)
    return res


def _sat(system: System, bound: dict[str, int], model: dict[str, int]) -> CapacityResult:
    """The result for a system that fits with `bound` plus the solver's `model`."""
    res = CapacityResult(status="sat", target=system.target.name, per_scope={}, sizes=dict(bound),
                         api_temp=system.api_temp)
    res.model = model
    env = {**bound, **model}
    res.pad_required = [note_pad(system, c, env) for c in system.soft() if not holds(c, env)]
    res.per_scope = usage(system, env)
    return res


def _explanations(system: System, bound: dict[str, int], doms: dict[str, tuple],
                  free: list[str], core: list[str], by_name: Mapping[str, Constraint],
                  hints: bool) -> list[Explanation]:
    """Core constraints first; with every dim bound, the other violated ones after."""
    if free:
        env = {**bound, **{v: _smallest(system, v, doms.get(v)) for v in free}}
        prefix = ("even with the smallest allowed "
                  + ", ".join(f"{v}={env[v]}" for v in free) + ": ")
    else:
        env, prefix = dict(bound), ""
    out: list[Explanation] = []
    bset = set(bound)
    for name in core:
        if name.startswith("domain:"):
            continue
        out.append(explain(system, by_name[name], env, bound=bset, hints=hints, prefix=prefix))
    if not out:
        doms_txt = ", ".join(n.removeprefix("domain:") for n in core)
        out.append(Explanation("domain", "domain", f"no allowed values for {doms_txt}"))
    if not free:
        seen = {e.constraint for e in out}
        for c in violated(system, env):
            if c.name not in seen:
                out.append(explain(system, c, env, bound=bset, hints=hints, in_core=False))
    return out


def usage(system: System, env: Mapping[str, int] | None) -> dict[str, ScopeUsage]:
    """Per-scope rows; byte columns are None when `env` does not bind every dim."""
    env = env or {}
    out: dict[str, ScopeUsage] = {}
    for b in system.buffers:
        if b.scope == "gm":
            continue
        a = alloc_expr(b, system.target)
        one = E.evaluate(a, env) if E.symbols(a) <= set(env) else None
        sc = system.target.scope(b.scope)
        su = out.get(b.scope)
        if su is None:
            reserved = system.target.api_temp_bytes if system.api_temp and b.scope == "ub" else 0
            su = out[b.scope] = ScopeUsage(b.scope, [], None, system.limits[b.scope],
                                           sc.physical_bytes, reserved)
        su.rows.append(UsageRow(b.name, b.dtype, b.shape_text(dict(env)), b.stages, one,
                                None if one is None else one * b.stages, b.origin))
    for c in system.constraints:
        if c.kind == "capacity" and c.scope in out and E.symbols(c.lhs) <= set(env):
            t = E.evaluate(c.lhs, env)
            su = out[c.scope]
            su.total = t if su.total is None else max(su.total, t)
    return out


def clear_cache() -> None:
    """Forget cached check results (tests and benchmarks use it for cold timings)."""
    _RESULTS.clear()
