"""`rfactor`: golden text (golden/rfactor/), differential tests (fresh random inputs: max/min exact, float sums
within rounding), the lowering spreading the new partial phase, and located refusals."""

from __future__ import annotations

import pytest

from passes.base import PassError
from passes_testutil import apply, equivalent, example, kernel, roundtrips
from small_kernels import COLSUM
from transformer.lower.lower import lower_kernel
from transformer.printer import print_kernel

ROWMAX = """
kernel rowmax(X: f32[R, C]) -> (Y: f32[R]) {
  size R = 5
  size C = 12
  rows: for r in 0..R {
    Y[r] = -inf
    for c in 0..C {
      Y[r] max= X[r, c]
    }
  }
}
"""

# several accumulators, a rank-0 one re-used per row, an offset loop, min and product
MIXED = """
kernel mixed(X: f32[R, C]) -> (lo: f32[R], pr: f32[R], s: f32[R]) {
  size R = 4
  size C = 18
  temp t: f32
  rows: for r in 0..R {
    t = 1.0
    lo[r] = inf
    pr[r] = 2.0
    for c in 2..C {
      t += X[r, c]
      lo[r] min= X[r, c] * 3.0
      pr[r] *= X[r, c] * 0.5 + 1.0
    }
    s[r] = t
  }
}
"""


def test_row_max_result_roundtrips() -> None:
    # the printed result itself is golden/rfactor/row_max_3.ir (tests/passes/test_golden.py)
    assert roundtrips(apply(ROWMAX, "rfactor{rows.c=3}"))


@pytest.mark.parametrize("text,pipeline", [
    (ROWMAX, "rfactor{rows.c=3}"),
    (ROWMAX, "rfactor{rows.c=12}"),
    (COLSUM, "rfactor{run=8}"),
    (MIXED, "rfactor{rows.c=4}"),
    (MIXED, "rfactor{rows.c=2},tile,double_buffer"),
])
def test_differential(text: str, pipeline: str) -> None:
    k = kernel(text)
    assert not equivalent(k, apply(k, pipeline))


@pytest.mark.parametrize("pipeline", [
    "rfactor{rmax.c=2}",
    "rfactor{rmax.c=2},rfactor{expo.c=4}",
    "rfactor{rmax.c=2},rfactor{expo.c=2},tile,double_buffer",
])
def test_softmax_differential(pipeline: str) -> None:
    k = example("softmax", {"R": 6, "C": 64})
    assert not equivalent(k, apply(k, pipeline))


def test_colsum_becomes_spread_parallel_work() -> None:
    k = kernel(COLSUM)
    before = lower_kernel(k)
    assert before.phases[1].cores == 1 and "reduction into `Y`" in before.phases[1].spread
    plan = lower_kernel(apply(k, "rfactor{run=8}"))
    # the 8 parts run on 8 cores, a barrier, then the combine, parallel over the 32 columns
    assert [p.label for p in plan.phases] == ["init", "run_rf", "run"]
    assert plan.phases[1].cores == 8 and plan.phases[2].cores == 32
    assert "cross-block barrier" in plan.phases[2].spread


def test_rows_times_parts_collapse_over_the_cores() -> None:
    k = example("softmax", {"R": 100, "C": 2048})
    plan = lower_kernel(apply(k, "rfactor{rmax.c=2}"))
    first = plan.phases[0]
    assert first.label == "rmax_rf" and first.cores == 48, plan.summary()
    assert "collapsed into one index of 100 x 2 = 200 iterations" in first.spread


def _rows(params: str, cols: int, init: list[str], body: list[str], *, first: int = 0) -> str:
    """`kernel k(<params>)` over R = 4 rows: `init` per row, then `body` for c in first..C."""
    pre = "".join(f"    {line}\n" for line in init)
    inner = "".join(f"      {line}\n" for line in body)
    return (f"\nkernel k({params}) {{\n  size R = 4\n  size C = {cols}\n  rows: for r in 0..R {{\n"
            f"{pre}    for c in {first}..C {{\n{inner}    }}\n  }}\n}}")


@pytest.mark.parametrize("text,pipeline,message", [
    (ROWMAX, "rfactor{rows.c=5}", "the parts must be at least 2 and divide the trip count"),
    (ROWMAX, "rfactor{rows=5}", "the accumulator `Y` is indexed by `r`"),
    (_rows("X: f32[R, C]) -> (Y: f32[R]", 8, ["Y[r] = 0.0"], ["Y[r] += Y[r] * X[r, c]"]),
     "rfactor{rows.c=2}", "reads the accumulator `Y`"),
    (_rows("X: f32[R, C]) -> (Y: f32[R], Z: f32[R, C]", 10, ["Y[r] = 0.0", "Z[r, 0] = 0.0"],
           ["Z[r, c] = Z[r, c - 1] + X[r, c]", "Y[r] += X[r, c]"], first=1),
     "rfactor{rows.c=3}", "carries a dependence besides its reductions"),
    (_rows("X: i32[R, C]) -> (Y: i32[R]", 8, ["Y[r] = 0"], ["Y[r] max= X[r, c]"]),
     "rfactor{rows.c=2}", "integer `max=` accumulator"),
])
def test_refusals_are_located(text: str, pipeline: str, message: str) -> None:
    with pytest.raises(PassError) as e:
        apply(text, pipeline)
    assert message in str(e.value), str(e.value)
    assert e.value.loc is not None


FUSED = """
kernel fused(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 3
  size C = 16
  temp mx: f32
  temp sm: f32
  rows: for r in 0..R {
    mx = -inf
    m: for c in 0..C {
      mx max= X[r, c]
    }
    sm = 0.0
    s: for c in 0..C {
      sm += exp(X[r, c] - mx)
    }
    for c in 0..C {
      Y[r, c] = exp(X[r, c] - mx) / sm
    }
  }
}
"""


def test_fused_row_loop_hoists_the_max_and_refuses_the_sum() -> None:
    k = kernel(FUSED)
    out = apply(k, "rfactor{m=4}")  # the rank-0 max re-used per row: partials mx_rf[h, r]
    assert out.tensor("mx_rf") is not None and [print_kernel(out).count("mx_rf[h, r]")] == [3]
    assert not equivalent(k, out)
    with pytest.raises(PassError, match="reads `mx`, which `rows: for r in 0..R` writes"):
        apply(k, "rfactor{s=2}")


def test_space_is_empty() -> None:
    from passes.rfactor import Rfactor

    assert Rfactor.space(kernel(ROWMAX)) == []
