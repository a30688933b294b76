"""Fast concrete evaluation of a constraint system (no solver).

Why: the tile search tries thousands of candidate assignments and the hint generator tries
dozens; with every symbolic dim bound, each constraint is plain integer arithmetic.  The
system's hard constraints are compiled once into one Python function over the free variables
(the same `Constraint` objects the Z3 encoding uses, so both agree).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from . import expr as E
from .model import Constraint, System


def value(c: Constraint, env: Mapping[str, int]) -> int:
    """The constraint's left-hand side under `env` (all its symbols bound)."""
    return E.evaluate(c.lhs, env)


def holds(c: Constraint, env: Mapping[str, int]) -> bool:
    return c.holds(value(c, env))


def violated(system: System, env: Mapping[str, int], *, hard_only: bool = True) -> list[Constraint]:
    """Constraints that fail under `env` (which must bind every variable they use)."""
    return [c for c in system.constraints
            if (c.hard or not hard_only) and not holds(c, env)]


def compile_checker(system: System, free: Sequence[str],
                    fixed: Mapping[str, int] | None = None) -> Callable[..., bool]:
    """f(*values_of_free) -> True iff every hard constraint holds.

    Variables not in `free` are taken from `fixed`.  Constraints made constant by `fixed`
    are folded: a constant False makes the checker always False.
    """
    fx = tuple(sorted((fixed or {}).items()))
    key = (system.key, tuple(free), fx)
    fn = _COMPILED.get(key)
    if fn is None:
        if len(_COMPILED) >= 256:
            _COMPILED.pop(next(iter(_COMPILED)))
        fn = _COMPILED[key] = _compile(system.hard(), tuple(free), dict(fx))
    return fn


_COMPILED: dict[tuple[object, ...], Callable[..., bool]] = {}


def _compile(hard: list[Constraint], free: tuple[str, ...],
             env: dict[str, int]) -> Callable[..., bool]:
    names = {v: f"_v{i}" for i, v in enumerate(free)}
    terms: list[str] = []
    for c in hard:
        lhs = E.substitute(c.lhs, env)
        if lhs[0] == "c":
            if not c.holds(lhs[1]):
                return lambda *_a: False
            continue
        unbound = E.symbols(lhs) - set(names)
        if unbound:
            raise KeyError(f"variables {sorted(unbound)} are neither free nor fixed")
        bound = Constraint(c.name, c.kind, lhs, c.rel, c.rhs)
        terms.append(bound.python(names))
    # Cheapest first: divisibility and bounds on single dims, then capacity sums.
    terms.sort(key=len)
    body = " and ".join(terms) or "True"
    src = f"def _check({', '.join(names.values())}):\n    return {body}\n"
    ns: dict[str, object] = {}
    exec(compile(src, "<capacity-checker>", "exec"), ns)  # noqa: S102 - generated from our own exprs
    return ns["_check"]  # type: ignore[return-value]
