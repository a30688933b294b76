"""Tile tails without scalar loops (issue 14 item 2): a staged tile whose extent is
`min(T, N - i0 * T)` (sizes not multiples of the tile) is copied by one DMA instruction with
run-time lengths (`DataCopyPad` with run-time `DataCopyExtParams`, or `DataCopy` with a
computed count / `DataCopyParams` with run-time rows when the rows are whole 32 B blocks)
and computed by count-form vector instructions of the run-time count (temporaries sized for
the full tile). Plan tests (no compile) assert the instructions chosen and that no nest or
copy falls back to scalar code; the slow tests run the emitted code against the interpreter
under sanitizers (a sync hazard fails the run)."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel
from transformer.lower.instr import Loop, VecOp

from .conftest import apply, check_emitted, example, kernel_text

# column tails (100 = 2 x 48 + 4: a ragged 8 B f16 row), row tails (5 = 2 x 2 + 1), the
# corner tile with both; a Cast, a broadcast per-row scalar, divisions by a scalar on both
# sides, and a reduction over a ragged row
TAILS = """
kernel tails(A: f16[M, N], B: f32[M, N], s: f32[M]) -> (C: f16[M, N], D: f32[M, N], E: f32[M]) {
  size M = 5
  size N = 100
  ew: for i in 0..M {
    for j in 0..N {
      C[i, j] = A[i, j] + f16(B[i, j])
      D[i, j] = (f32(A[i, j]) - s[i]) / 3.0 + 2.0 / (abs(B[i, j]) + 1.0)
    }
  }
  rd: for i in 0..M {
    E[i] = -inf
    for j in 0..N {
      E[i] max= B[i, j] * 2.0
    }
  }
}
"""
TAILS_PIPELINE = "tile{ew.i=2,ew.j=48,rd.i=2,rd.j=40},double_buffer"

# row tails of whole-block rows: DataCopy(DataCopyParams) with run-time rows, and the 2-D
# nest collapsed into one instruction of (rows x 48) elements
ROWTAIL = """
kernel rowtail(A: f16[M, N], B: f16[M, N]) -> (C: f16[M, N]) {
  size M = 5
  size N = 96
  ew: for i in 0..M {
    for j in 0..N {
      C[i, j] = A[i, j] * B[i, j]
    }
  }
}
"""


def _vec_ops(plan) -> list[VecOp]:  # type: ignore[no-untyped-def]
    out = []
    for n in plan.nests:
        for p in n.plan:
            items = p.item.body if isinstance(p.item, Loop) else (p,)
            out.extend(q.item for q in items if isinstance(q.item, VecOp))
    return out


def _copies(plan) -> dict[str, tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return {n.where.split("copy ")[1]: n.instructions for n in plan.nests if " copy `" in n.where}


def test_tails_plan_has_dma_and_run_time_counts() -> None:
    plan = lower_kernel(apply(kernel_text(TAILS), TAILS_PIPELINE))
    fallbacks = [(n.where, n.fallback) for n in plan.nests if n.fallback]
    # no scalar code left: `E[i] = -inf` is staged too (a Duplicate into E_ub, one row per tile)
    assert fallbacks == [], fallbacks
    copies = _copies(plan)
    assert set(copies) == {"`A_ub <- A`", "`B_ub <- B`", "`C <- C_ub`", "`D <- D_ub`", "`B_ub_1 <- B`",
                           "`s_ub <- s`", "`E <- E_ub`"}
    assert all(v == ("DataCopyPad",) for v in copies.values()), copies
    ops = _vec_ops(plan)
    names = {o.op for o in ops}
    assert {"Cast", "Add", "Adds", "Div", "Abs", "Muls", "ReduceMax"} <= names, names
    # every instruction of the tail nests runs over the run-time count (a C++ expression)
    assert all(isinstance(o.count, str) and "ascx_min" in o.count for o in ops if o.repeat is None), \
        [(o.op, o.count) for o in ops]
    # a division by a scalar over a run-time count: a Duplicate of the count, then a count-form Div
    assert any(o.op == "Duplicate" for o in ops) and all(o.repeat is None for o in ops if o.op == "Div")


def test_row_tails_of_whole_blocks_use_datacopy_params_and_one_collapsed_instruction() -> None:
    plan = lower_kernel(apply(kernel_text(ROWTAIL), "tile{ew.i=2,ew.j=48},double_buffer"))
    assert not [n for n in plan.nests if n.fallback]
    assert set(_copies(plan).values()) == {("DataCopy(DataCopyParams)",)}
    (mul,) = _vec_ops(plan)
    assert mul.op == "Mul" and isinstance(mul.count, str) and mul.count.endswith("* 48")


@pytest.mark.parametrize("name,sizes", [("add", {"M": 100, "N": 1009}), ("add", {"M": 7, "N": 1000})])
def test_add_with_sizes_not_multiples_of_the_tile_has_no_scalar_fallback(name: str, sizes: dict[str, int]) -> None:
    plan = lower_kernel(apply(example(name, sizes), "tile,double_buffer"))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    assert all(n.instructions[0].startswith("DataCopy") for n in plan.nests if " copy `" in n.where)


def test_long_softmax_rows_with_a_tail_stream_without_scalar_code() -> None:
    # rows longer than UB, C not a multiple of the row tile: every streamed tile is `min(T, ..)`
    plan = lower_kernel(apply(example("softmax", {"R": 2, "C": 65537}), "fuse,tile,double_buffer"))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    ops = _vec_ops(plan)
    assert {"ReduceMax", "ReduceSum", "Exp", "Div"} <= {o.op for o in ops}
    assert set(_copies(plan).values()) == {("DataCopyPad",)}


@pytest.mark.slow
def test_tails_emitted_match_the_interpreter_under_sanitizers() -> None:
    k = kernel_text(TAILS)
    t = apply(k, TAILS_PIPELINE)
    em = emit_ascendc(t)
    assert "DataCopyPad(" in em.source and "GetValue(ascx_c" not in em.source
    check_emitted(t, k, emitted=em, sanitize=True, what="tile tails")


@pytest.mark.slow
def test_row_tails_emitted_match_the_interpreter_under_sanitizers() -> None:
    k = kernel_text(ROWTAIL)
    t = apply(k, "tile{ew.i=2,ew.j=48},double_buffer")
    check_emitted(t, k, sanitize=True, what="row tails")


@pytest.mark.slow
def test_long_softmax_rows_with_a_tail_match_the_interpreter() -> None:
    k = example("softmax", {"R": 2, "C": 65537})
    t = apply(k, "fuse,tile,double_buffer")
    check_emitted(t, k, sanitize=True, what="softmax C=65537")
