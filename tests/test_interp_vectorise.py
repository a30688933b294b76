"""Property test of the interpreter's vectorisation criterion: on random programs with
shifted reads and writes of the same tensors (loop-carried dependences of every kind) and
reductions, running loops vectorised gives the same outputs — or the same kind of error —
as running every iteration in order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer.diagnostics import InterpError
from transformer.interp import random_inputs, run
from transformer.parser import parse


@st.composite
def stencil_programs(draw: st.DrawFn) -> str:
    n, m = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    temps = ["T", "U"]
    dtypes = {t: draw(st.sampled_from(["f32", "f16"])) for t in temps}
    ops = ["=", "=", "+=", "max=", "*="]
    lines = [f"kernel p(X: f32[N + 2, M + 2]) -> (Y: f32[N + 2, M + 2], R: f32[N + 2]) {{",
             f"  size N = {n}", f"  size M = {m}"]
    lines += [f"  temp {t}: {dtypes[t]}[N + 2, M + 2]" for t in temps]
    lines += ["  init: for i in 0..N + 2 {", "    for j in 0..M + 2 {"]
    lines += [f"      {t}[i, j] = X[i, j] * 0.5" for t in temps]
    lines += ["    }", "    R[i] = 0.0", "  }"]

    def off(v: str) -> str:
        d = draw(st.integers(-1, 1))
        return v if d == 0 else f"{v} + 1" if d > 0 else f"{v} - 1"

    def operand() -> str:
        src = draw(st.sampled_from(temps + ["X"]))
        return f"{src}[{off('i')}, {off('j')}]"

    for k in range(draw(st.integers(1, 3))):
        # loops 1..N+1 keep every +-1 offset in bounds
        order = draw(st.sampled_from([("i", "j"), ("j", "i")]))
        bounds = {"i": "1..N + 1", "j": "1..M + 1"}
        lines.append(f"  s{k}: for {order[0]} in {bounds[order[0]]} {{")
        lines.append(f"    for {order[1]} in {bounds[order[1]]} {{")
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["stencil", "stencil", "rowreduce"]))
            if kind == "rowreduce":
                op = draw(st.sampled_from(["+=", "max="]))
                lines.append(f"      R[{off('i')}] {op} {operand()}")
            else:
                tgt = draw(st.sampled_from(temps))
                op = draw(st.sampled_from(ops))
                rhs = operand() if draw(st.booleans()) else f"{operand()} * 0.5 + {operand()} * 0.25"
                lines.append(f"      {tgt}[{off('i')}, {off('j')}] {op} {rhs}")
        lines += ["    }", "  }"]
    lines += ["  out: for i in 0..N + 2 {", "    for j in 0..M + 2 {",
              "      Y[i, j] = f32(T[i, j]) + f32(U[i, j])", "    }", "  }", "}"]
    return "\n".join(lines) + "\n"


def _outcome(k, inputs, vectorise):
    try:
        return run(k, inputs, vectorise=vectorise)
    except InterpError as e:
        return e


@pytest.mark.slow  # a fuzzer (hundreds of generated kernels): full tier only
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stencil_programs(), st.integers(0, 2**32 - 1))
def test_vectorised_equals_sequential(text: str, seed: int) -> None:
    k = parse(text, "p.ir")
    inputs = random_inputs(k, np.random.default_rng(seed))
    seq = _outcome(k, inputs, vectorise=False)
    vec = _outcome(k, inputs, vectorise=True)
    if isinstance(seq, InterpError) or isinstance(vec, InterpError):
        assert type(seq) is type(vec), f"{text}\nsequential: {seq}\nvectorised: {vec}"
        return
    for name in seq:
        # f32 sums may be reassociated by vectorised reductions; everything else is exact
        np.testing.assert_allclose(vec[name], seq[name], rtol=1e-5, atol=1e-6, err_msg=text)


def test_carried_dependence_is_detected_by_the_oracle_itself() -> None:
    """Guard that the oracle really runs in order: a prefix recurrence gives a different
    result from an all-at-once evaluation."""
    k = parse("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 5
      Y[0] = X[0]
      for i in 1..N { Y[i] = Y[i - 1] * 2.0 + X[i] } }""", "p.ir")
    x = np.ones(5, np.float32)
    np.testing.assert_array_equal(run(k, {"X": x}, vectorise=False)["Y"], [1, 3, 7, 15, 31])
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], [1, 3, 7, 15, 31])
