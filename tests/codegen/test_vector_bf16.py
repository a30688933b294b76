"""bf16 arithmetic as vector code through f32 (issue 14 item 2): no vector instruction
computes in bf16; an operand is widened by `Cast` (exact), the operation runs in f32 and its
result is rounded once to bf16 (`Cast`, CAST_RINT) — what the interpreter computes (an
operand of a bf16 operation rounded to bf16, the operation in f32, docs/ir.md); a scalar is
rounded to bf16 first; `T[j] op= e` into bf16 is `T = bf16(f32(T) op f32(e))`; f16 <-> bf16
casts go through the exact f32; an f16 (or bf16) accumulator of f32 values, `H += e`, is
`f16(f32(H) + e)` computed in f32 and rounded once. The emitted code must equal the interpreter bit for bit
(same roundings), over tile tails, under sanitizers."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.codegen import build_and_run, emit_ascendc
from transformer.interp import random_inputs, run
from transformer.lower import lower_kernel
from transformer.lower.instr import VecOp

from .conftest import apply, fresh_seed, kernel_text

BF = """
kernel bfk(A: bf16[M, N], B: bf16[M, N], X: f16[M, N]) -> (C: bf16[M, N], D: bf16[M, N], E: f32[M, N], G: bf16[M, N]) {
  size M = 4
  size N = 100
  a: for i in 0..M {
    for j in 0..N {
      C[i, j] = A[i, j] * B[i, j] + A[i, j] / 3.0
      D[i, j] = -exp(A[i, j]) + max(B[i, j], bf16(0.5))
      E[i, j] = f32(A[i, j] - B[i, j]) * 2.0 + f32(f16(A[i, j]) + X[i, j])
      G[i, j] = bf16(X[i, j])
      G[i, j] += A[i, j] * 0.1
      D[i, j] max= tanh(B[i, j])
    }
  }
}
"""
PIPELINE = "tile{a.i=2,a.j=48},double_buffer"

# accumulators narrower than their values: `H += e` with H f16 and e f32 is f16(f32(H) + e),
# computed in f32 and rounded once; the same into bf16; a bf16 copy through f32
ACC = """
kernel acck(A: bf16[M, N], X: f16[M, N], Y: f32[M, N]) -> (H: f16[M, N], G: bf16[M, N]) {
  size M = 4
  size N = 100
  a: for i in 0..M {
    for j in 0..N {
      H[i, j] = X[i, j]
      H[i, j] += Y[i, j] * 0.5
      H[i, j] max= Y[i, j]
      G[i, j] = A[i, j]
      G[i, j] += Y[i, j] * 3.0
      G[i, j] *= f32(X[i, j])
    }
  }
}
"""


def test_bf16_plan_computes_in_f32() -> None:
    plan = lower_kernel(apply(kernel_text(BF), PIPELINE))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    ops = [p.item for n in plan.nests for p in n.plan if isinstance(p.item, VecOp)]
    # every instruction but the Casts into bf16 and the f16 add computes in f32
    assert all(o.dst.dtype == "f32" for o in ops if o.op not in ("Cast", "Add"))
    assert all(o.dst.dtype in ("f32", "f16") for o in ops if o.op == "Add")
    narrowing = [o for o in ops if o.op == "Cast" and o.dst.dtype == "bf16"]
    assert narrowing and all(o.round == "CAST_RINT" and o.srcs[0].dtype == "f32" for o in narrowing)
    assert all(o.srcs[0].dtype == "bf16" for o in ops if o.op == "Cast" and o.dst.dtype == "f32" and o.srcs[0].dtype != "f16")


def test_narrow_accumulators_plan_computes_in_f32() -> None:
    plan = lower_kernel(apply(kernel_text(ACC), PIPELINE))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    ops = [p.item for n in plan.nests for p in n.plan if isinstance(p.item, VecOp)]
    assert all(o.dst.dtype == "f32" for o in ops if o.op in ("Muls", "Add", "Max", "Mul"))
    # H's two updates and G's copy and two updates each end in one rounding Cast into the local
    into = [o.dst.base for o in ops if o.op == "Cast" and o.dst.dtype in ("f16", "bf16") and "_ubLocal" in o.dst.base]
    assert sorted(into) == ["G_ubLocal"] * 3 + ["H_ubLocal"] * 2, into


@pytest.mark.slow
@pytest.mark.parametrize("text,outputs", [(BF, ("C", "D", "E", "G")), (ACC, ("H", "G"))], ids=["bf16", "accumulators"])
def test_bf16_emitted_equals_the_interpreter_bit_for_bit(text: str, outputs: tuple[str, ...]) -> None:
    k = kernel_text(text)
    t = apply(k, PIPELINE)
    em = emit_ascendc(t)
    assert not em.warnings and "bfloat16_t" in em.source
    seed = fresh_seed()
    inputs = random_inputs(k, np.random.default_rng(seed))
    want = run(k, inputs)
    got = build_and_run(t, None, inputs, sanitize=True, emitted=em)
    for name in outputs:
        np.testing.assert_array_equal(np.asarray(got[name], np.float32), np.asarray(want[name], np.float32),
                                      err_msg=f"{name} (seed {seed})")
