"""Solver outcomes: unknown on timeout, agreement between Z3 and the compiled evaluator."""

from __future__ import annotations

import random

import pytest
from solver_doubles import timing_out_solver

from transformer.capacity import Buffer, build_system, check
from transformer.capacity.evaluate import compile_checker, violated
from transformer.targets import get_target


LINEAR_DOMS = {"a": (20, 4000)}


def overflowing() -> list[Buffer]:
    """A linear system Z3 decides in milliseconds: even the smallest `a` overflows UB."""
    return [Buffer("T", "ub", "f32", ("a", 4096), stages=2)]


def test_tiny_timeout_is_unknown_not_unsat(monkeypatch: pytest.MonkeyPatch) -> None:
    # The solver double times out whatever the query; the real query afterwards is a linear
    # one, so the test does not depend on how fast Z3 decides a nonlinear system on a loaded
    # machine (the five-product system came back `unknown` after 120 s on a CI run).
    with timing_out_solver(monkeypatch) as budgets:
        res = check(overflowing(), "ascend910b2", domains=LINEAR_DOMS, timeout_ms=1, use_cache=False)
    assert budgets and set(budgets) == {1}  # the budget reaches the solver
    assert res.status == "unknown"
    assert "timeout" in res.reason and res.explanations == [] and res.core == []
    assert res.message.startswith("unknown:")
    # Unknown results are never cached: the same query with a real budget decides.
    full = check(overflowing(), "ascend910b2", domains=LINEAR_DOMS, timeout_ms=120000)
    assert full.status == "unsat" and not full.cached
    assert "UB:" in full.message


def _random_buffers(rng: random.Random) -> tuple[list[Buffer], dict[str, int]]:
    scopes = [("ub", "VECIN"), ("ub", "VECCALC"), ("l1", "A1"), ("l0a", "A2"), ("l0c", "CO1")]
    bufs = []
    sizes = {"x": rng.choice([8, 16, 48, 64, 100, 128, 256]),
             "y": rng.choice([16, 32, 40, 64, 128, 512])}
    for i in range(rng.randint(1, 6)):
        scope, pos = rng.choice(scopes)
        shape = tuple(rng.choice([16, 32, 64, 128, "x", "y", 3]) for _ in range(rng.randint(1, 2)))
        bufs.append(Buffer(f"b{i}", scope, rng.choice(["f16", "f32", "i8"]), shape,
                           stages=rng.randint(1, 3), position=pos,
                           cube_operand=scope.startswith("l0") and rng.random() < 0.5,
                           copy_lengths=(shape[-1],), pad_allowed=rng.random() < 0.5))
    return bufs, sizes


def test_z3_and_evaluator_agree_on_random_systems() -> None:
    rng = random.Random(4)
    t = get_target("ascend910b2")
    seen = set()
    for _ in range(40):
        bufs, sizes = _random_buffers(rng)
        system = build_system(bufs, t)
        sizes = {k: v for k, v in sizes.items() if k in system.variables}
        res = check(bufs, t, sizes=sizes, hints=False)
        bad = violated(system, sizes)
        assert (res.status == "sat") == (not bad)
        assert compile_checker(system, [], sizes)() == (not bad)
        if res.status == "unsat":
            assert {e.constraint for e in res.explanations} == {c.name for c in bad}
        seen.add(res.status)
    assert seen == {"sat", "unsat"}
