"""`select` on data (issue 14 item 2): `select(x <op> y, a, b)` comparing data is
`Compare` (two vectors) or `CompareScalar` (a vector and a scalar; `s < x` becomes `x > s`)
into a bit mask, then `Select` (tensor-tensor, or tensor-scalar when `b` is a scalar; a
scalar `a` is `Duplicate`d). The documented 256 B count rule of Compare/CompareScalar: the
count is rounded up to whole 256 B, operands read past the nest's elements are temporaries
(a local is copied first) with 256 B of slack after the scratch; the instructions take the
UB API temp area (`NestChoice.api_temp`). Plan tests without a compile; the slow test runs
the emitted code against the interpreter under sanitizers (hazard-free)."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel
from transformer.lower.instr import Loop, VecOp

from .conftest import apply, check_emitted, kernel_text

SEL = """
kernel sel(A: f16[M, N], B: f32[M, N], G: f16[M, K]) -> (C: f16[M, N], D: f32[M, N], H: f16[M, K]) {
  size M = 5
  size N = 100
  size K = 128
  ew: for i in 0..M {
    for j in 0..N {
      C[i, j] = select(A[i, j] > 0.0, A[i, j], f16(0.1) * A[i, j])
      D[i, j] = select(B[i, j] <= f32(A[i, j]), -1.5, B[i, j]) + select(0.25 < B[i, j], B[i, j], 2.0) + select(B[i, j] != 0.5, f32(1.0), 3.0)
    }
  }
  rl: for i in 0..M {
    for k in 0..K {
      H[i, k] = select(G[i, k] >= 0.0, G[i, k], 0.0)
    }
  }
}
"""
PIPELINE = "tile{ew.i=2,ew.j=48,rl.i=2,rl.k=128},double_buffer"


def _nest_ops(plan, nest: str) -> list[VecOp]:  # type: ignore[no-untyped-def]
    out = []
    for n in plan.nests:
        if n.nest == nest and n.plan:
            for p in n.plan:
                items = p.item.body if isinstance(p.item, Loop) else (p,)
                out.extend(q.item for q in items if isinstance(q.item, VecOp))
    return out


def test_select_on_data_plan() -> None:
    plan = lower_kernel(apply(kernel_text(SEL), PIPELINE))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    ew = _nest_ops(plan, "j")
    cmps = [(o.op, o.mode) for o in ew if o.op in ("Compare", "CompareScalar")]
    # A > 0 ; B <= f32(A) (two vectors) ; 0.25 < B flipped to B > 0.25 ; B != 0.5
    assert cmps == [("CompareScalar", "CMPMODE::GT"), ("Compare", "CMPMODE::LE"),
                    ("CompareScalar", "CMPMODE::GT"), ("CompareScalar", "CMPMODE::NE")], cmps
    # a ragged tail count: rounded up to whole 256 B of the compared type
    counts = [o.count for o in ew if o.op in ("Compare", "CompareScalar")]
    assert all(isinstance(c, str) and (c.endswith("/ 128 * 128") or c.endswith("/ 64 * 64")) for c in counts), counts
    sels = [o for o in ew if o.op == "Select"]
    assert [o.mode for o in sels] == ["SELMODE::VSEL_TENSOR_TENSOR_MODE", "SELMODE::VSEL_TENSOR_TENSOR_MODE",
                                      "SELMODE::VSEL_TENSOR_SCALAR_MODE", "SELMODE::VSEL_TENSOR_SCALAR_MODE"]
    assert all(o.srcs[0].dtype == "u8" for o in sels)  # the bit mask
    # the compared operands read past the tail are temporaries, never the staged locals
    assert all("_ubLocal" not in s.base for o in ew if o.op.startswith("Compare") for s in o.srcs)
    (ew_choice,) = [n for n in plan.nests if n.nest == "j"]
    assert ew_choice.api_temp and "comparison masks" in ew_choice.temp_purposes


def test_select_on_whole_256_byte_rows_compares_the_local_directly() -> None:
    plan = lower_kernel(apply(kernel_text(SEL), PIPELINE))
    rl = _nest_ops(plan, "i")  # the 2-D nest of `rl`, collapsed: (rows x 128) f16, whole 256 B
    cmp = [o for o in rl if o.op == "CompareScalar"]
    assert len(cmp) == 1 and cmp[0].count == "(ascx_min<int32_t>(2, i0 * (-2) + 5)) * 128" and "G_ub" in cmp[0].srcs[0].base and cmp[0].mode == "CMPMODE::GE"
    assert [o.op for o in rl] == ["CompareScalar", "Select"]


@pytest.mark.slow
def test_select_on_data_matches_the_interpreter_under_sanitizers() -> None:
    k = kernel_text(SEL)
    t = apply(k, PIPELINE)
    em = emit_ascendc(t)
    assert "CompareScalar(" in em.source and "Select(" in em.source and not em.warnings
    check_emitted(t, k, emitted=em, sanitize=True, what="select on data")
