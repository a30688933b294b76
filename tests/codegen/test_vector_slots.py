"""Vector temporaries of a nest (`transformer/lower/vector.py`): a reduction's result and
its documented minimum work area share one slot when they fit; arithmetic overwrites a
temporary operand instead of taking a fresh slot; `e * e` computes `e` once. Fewer slots
are what lets a whole 8192-element layernorm row (X, Y, gamma, beta) stay in UB. Plan
checks (no compile); the emitted kernels are checked against the interpreter by the
documented-pipeline tests (`test_examples.py`, `test_sanitize_examples.py`)."""

from __future__ import annotations

import pytest

from transformer.lower import lower_kernel
from transformer.lower.instr import VecOp

from .conftest import apply, example, kernel_text


def _nest_ops(plan, var_line: int) -> list[VecOp]:  # type: ignore[no-untyped-def]
    for n in plan.nests:
        if f":{var_line}:" in n.where:
            return [p.item for p in n.plan if isinstance(p.item, VecOp)]
    raise AssertionError([n.where for n in plan.nests])


def test_layernorm_8192_row_fits_with_its_widened_row_pinned() -> None:
    """The row context cannot keep all four shared values of a 8192-element row (widened row,
    centred row, widened gamma and beta: 4 x 32 KiB) next to X, Y, gamma and beta; it keeps
    the most used one, the widened row (three slots in all: UB exactly full), instead of
    none: X is widened once per row, not three times."""
    k = apply(example("layernorm", {"N": 8192, "H": 8192}), "fuse,tile,double_buffer")
    plan = lower_kernel(k)
    assert max(n.temp_slots for n in plan.nests) == 3
    assert all(not n.fallback for n in plan.nests)
    ops = [o for n in plan.nests for p in n.plan for o in [p.item] if isinstance(o, VecOp)]
    assert sum(o.op == "Cast" and o.srcs[0].base.startswith("X_ub") for o in ops) == 1
    assert len(ops) == 12  # Cast ReduceSum | Adds Mul ReduceSum | Adds Muls Cast Mul Cast Add Cast
    # the variance: the centred row (one Adds), squared by one Mul of it with itself, in place
    var = _nest_ops(plan, 21)
    assert [o.op for o in var] == ["Adds", "Mul", "ReduceSum"]
    mul = var[1]
    assert mul.srcs[0] == mul.srcs[1] == mul.dst == var[0].dst
    # the result and the work area of the reductions share one slot: work 32 B after it
    red = [o for o in ops if o.op == "ReduceSum"]
    assert red and all(o.work.base == o.dst.base and o.work.offset == f"{o.dst.offset} + 8" for o in red)  # type: ignore[union-attr]
    # the variance is a scalar (one element per row tile): no UB GetValue/SetValue for it, so
    # the compute stage does not wait for the previous row's copy-out
    compute = next(m for ph in plan.phases for m in ph.methods if m.stage == "compute")
    assert not any("MTE3_S" in l.text for l in compute.body)


SUM8 = """
kernel s8(X: f32[R, C]) -> (Y: f32[R]) {
  size R = 4
  size C = 8
  rows: for r in 0..R {
    Y[r] = 0.0
    for c in 0..C {
      Y[r] += X[r, c] * 2.0
    }
  }
}
"""


@pytest.mark.parametrize("c,slots", [(8, 3), (64, 2)])
def test_a_reduction_takes_a_second_slot_only_when_its_work_area_does_not_fit(c: int, slots: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Rows of 8 f32 (a 32 B slot): the result block and the one-block work area need two
    slots; rows of 64 f32 (256 B): both fit in one. (The per-row form: the rows as one tile,
    rows2d.py, are turned off.)"""
    from transformer.lower import rows2d

    monkeypatch.setattr(rows2d, "match_tile", lambda *a, **kw: "turned off by the test")
    k = apply(kernel_text(SUM8.replace("size C = 8", f"size C = {c}")), "tile{rows=2}")
    plan = lower_kernel(k)
    (nest,) = [n for n in plan.nests if "ReduceSum" in n.instructions]
    assert nest.temp_slots == slots
