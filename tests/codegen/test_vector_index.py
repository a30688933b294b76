"""Loop variables as values (issue 28 item 2, in part): an index expression of the nest's
loop variable used as data (`f32(c)`, `z[r, c] = c`, after `tile` `c0 * 32 + c1`, a step
`3 * c - 2 * r + 1`) is an arithmetic progression, `CreateVecIndex` in i32 (then `Muls` /
`Adds` for a step or an offset), not scalar code. Plan tests (no compile); one slow test
runs all of them as emitted code against the interpreter (one build)."""

from __future__ import annotations

import pytest

from transformer.lower import lower_kernel

from .conftest import apply, check_emitted, kernel_text

IDX = """
kernel idx(x: f32[R, C], lab: i32[R]) -> (y: f32[R, C], z: i32[R, C], w: f32[R, C], u: f32[R, C]) {
  size R = 4
  size C = 100
  a: for r in 0..R {
    for c in 0..C {
      y[r, c] = x[r, c] * f32(c) + f32(r)
      z[r, c] = c
      w[r, c] = f32(3 * c - 2 * r + 1) * x[r, c]
      u[r, c] = select(f32(c) == f32(lab[r]), x[r, c] - 1.0, x[r, c])
    }
  }
}
"""


def _ops(plan):  # type: ignore[no-untyped-def]
    return [o for n in plan.nests for o in n.instructions]


@pytest.mark.parametrize("pipeline", ["tile", "tile{a.c=32}"])
def test_index_values_vectorise(pipeline: str) -> None:
    plan = lower_kernel(apply(kernel_text(IDX), pipeline))
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    ops = _ops(plan)
    assert "CreateVecIndex" in ops and "Cast" in ops


def test_a_step_is_a_multiply_and_an_offset() -> None:
    plan = lower_kernel(apply(kernel_text(IDX), "tile"))
    items = [p.item for n in plan.nests for p in n.plan]
    made = [i for i in items if getattr(i, "op", "") == "CreateVecIndex"]
    assert any(i.scalar == "int32_t(0)" for i in made)  # the `3 * c` progression starts at 0 ...
    assert any(getattr(i, "op", "") == "Muls" and i.scalar == "int32_t(3)" for i in items)  # ... steps by 3


@pytest.mark.slow
def test_index_values_match_the_interpreter() -> None:
    k = kernel_text(IDX)  # tiles of 32 over 100 columns: offsets c0 * 32 and a tail of 4
    check_emitted(apply(k, "tile{a.c=32}"), k, what="index vectors")


def test_values_that_may_not_fit_i32_stay_scalar() -> None:
    k = kernel_text(IDX.replace("f32(3 * c - 2 * r + 1)", "f32(100000000 * c)"))
    plan = lower_kernel(apply(k, "tile"))
    (why,) = [n.fallback for n in plan.nests if n.fallback]
    assert "may not fit i32" in why
