"""tanh / sigmoid / gelu as vector code (issue 14 item 2): `tanh(x)` is composed as
`1 - 2 / (exp(2x) + 1)` in f32 (safe where exp overflows or underflows; an f16 `x` widened
and the result narrowed once); sigmoid `1 / (1 + exp(-x))` and the tanh form of gelu are IR
expressions of these and vectorise with them; a subexpression written twice in a statement
(swiglu's `f32(G)`) is computed once. Plan tests (no compile) assert the
instructions and that nothing falls back to scalar code; the slow test checks the emitted
code against the interpreter (f32 tolerance: rtol 1e-4, atol 1e-5) under sanitizers, with
inputs scaled by 8 so tanh and the sigmoid saturate, over tile tails and whole tiles."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel
from transformer.lower.instr import VecOp

from .conftest import apply, check_emitted, kernel_text

ACTS = """
kernel acts(X: f32[M, N], H: f16[M, N], Z: f32[M, K], Gt: f16[M, K]) -> (T: f32[M, N], S: f32[M, N], G: f32[M, N], U: f16[M, N], V: f32[M, K], W: f16[M, K]) {
  size M = 4
  size N = 100
  size K = 64
  a: for i in 0..M {
    for j in 0..N {
      T[i, j] = tanh(X[i, j] * 8.0)
      S[i, j] = 1.0 / (1.0 + exp(-X[i, j] * 8.0))
      G[i, j] = 0.5 * X[i, j] * (1.0 + tanh(0.7978845608 * (X[i, j] + 0.044715 * X[i, j] * X[i, j] * X[i, j])))
      U[i, j] = tanh(H[i, j] * f16(4.0))
    }
  }
  b: for i in 0..M {
    for k in 0..K {
      V[i, k] = tanh(Z[i, k] * 8.0)
      W[i, k] = f16(f32(Gt[i, k]) / (1.0 + exp(-f32(Gt[i, k]))) * Z[i, k])
    }
  }
}
"""
PIPELINE = "tile{a.i=2,a.j=48,b.i=2,b.k=64},double_buffer"


def _ops(plan, nest: str) -> list[VecOp]:  # type: ignore[no-untyped-def]
    return [p.item for n in plan.nests if n.nest == nest for p in n.plan if isinstance(p.item, VecOp)]


def test_activations_plan() -> None:
    plan = lower_kernel(apply(kernel_text(ACTS), PIPELINE))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    a = _ops(plan, "j")
    assert {o.op for o in a} == {"Muls", "Exp", "Adds", "Duplicate", "Div", "Mul", "Add", "Cast"}
    # three tanh and one sigmoid: four Exp, all in f32 (the f16 tanh is widened first)
    assert sum(o.op == "Exp" for o in a) == 4 and all(o.dst.dtype == "f32" for o in a if o.op == "Exp")
    casts = [(o.srcs[0].dtype, o.dst.dtype, o.round) for o in a if o.op == "Cast"]
    assert casts == [("f16", "f32", "CAST_NONE"), ("f32", "f16", "CAST_RINT")]
    # tanh's -2 / (..) over a tail: the scalar Duplicated over the run-time count
    assert any(o.op == "Duplicate" and o.scalar == "-2.0f" and isinstance(o.count, str) for o in a)
    b = _ops(plan, "i")  # whole tiles: the division reads a broadcast block (repeat form)
    assert [o.op for o in b][:7] == ["Muls", "Muls", "Exp", "Adds", "Duplicate", "Div", "Adds"]
    div = b[5]
    assert div.repeat is not None and div.repeat.blk[1] == 0 and div.repeat.rep[1] == 0


def test_a_subexpression_written_twice_is_computed_once() -> None:
    """Issue 29 item 10: swiglu's `f32(G)` in `f32(G) / (1 + exp(-f32(G))) * U` was cast
    twice; now once, into a slot nothing overwrites before its second use (the Div reads it
    after the Muls, Exp and Adds of the sigmoid's denominator)."""
    plan = lower_kernel(apply(kernel_text(ACTS), PIPELINE))
    w = _ops(plan, "i")[7:]
    assert [o.op for o in w] == ["Cast", "Muls", "Exp", "Adds", "Div", "Mul", "Cast"]
    held = w[0].dst.cpp()
    assert w[0].srcs[0].cpp().startswith("Gt_") and held in [x.cpp() for x in w[4].srcs]
    assert all(o.dst.cpp() != held for o in w[1:4])


@pytest.mark.slow
def test_activations_match_the_interpreter_under_sanitizers() -> None:
    k = kernel_text(ACTS)
    t = apply(k, PIPELINE)
    em = emit_ascendc(t)
    assert "Exp(" in em.source and not em.warnings
    check_emitted(t, k, emitted=em, sanitize=True, what="tanh / sigmoid / gelu")
