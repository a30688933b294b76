"""Guarded reads (issue 28 item 5, `transformer/guards.py`, docs/ir.md "Guarded reads"): a read
in an arm of `select` is made only where that arm is chosen.

* the interpreter never evaluates an unchosen arm's read (no bounds or unwritten-read error
  there), vectorised or not, and still reports a chosen one at its access;
* same-padding 1-D convolution and a shifted read written with nested `select`s match numpy;
* the static bounds proof assumes the arm's condition (a ranged kernel with a padded read is
  accepted, an unguarded one refused);
* `tile` leaves a guarded read that may leave its tensor in GM (saying why) and stays correct,
  and the emitted scalar code is a C++ conditional.
"""

from __future__ import annotations

import numpy as np
import pytest

from passes.base import parse_pipeline, run_pipeline
from transformer.codegen import emit_ascendc
from transformer.diagnostics import AscxError, InterpError
from transformer.interp import random_inputs, run
from transformer.parser import parse

SHIFT = """kernel shift(X: f32[N]) -> (Y: f32[N]) {
  size N = 40
  sh: for i in 0..N {
    Y[i] = select(i >= 1, X[i - 1], 0.0) + select(i + 1 < N, X[i + 1], 0.0)
  }
}
"""

# same padding: Y[i] = sum_k W[k] * X[i + k - 1], X read as 0 outside 0..N-1
CONV_SAME = """kernel conv1d(X: f32[N], W: f32[3]) -> (Y: f32[N]) {
  size N = 37
  cv: for i in 0..N {
    Y[i] = 0.0
    for k in 0..3 {
      Y[i] += W[k] * select(i + k >= 1, select(i + k <= N, X[i + k - 1], 0.0), 0.0)
    }
  }
}
"""


def _conv_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    p = np.concatenate([[0.0], x.astype(np.float64), [0.0]])
    return np.array([sum(w[k] * p[i + k] for k in range(3)) for i in range(len(x))], np.float32)


@pytest.mark.parametrize("vectorise", [True, False])
def test_an_unchosen_arm_is_never_read(vectorise: bool) -> None:
    k = parse(SHIFT, "s.ir")
    x = random_inputs(k, np.random.default_rng(1))["X"]
    want = np.concatenate([[0], x[:-1]]) + np.concatenate([x[1:], [0]])
    np.testing.assert_allclose(run(k, {"X": x}, vectorise=vectorise)["Y"], want, rtol=1e-6)
    k = parse(CONV_SAME, "c.ir")
    ins = random_inputs(k, np.random.default_rng(2))
    np.testing.assert_allclose(run(k, ins, vectorise=vectorise)["Y"], _conv_same(ins["X"], ins["W"]), rtol=1e-5, atol=1e-6)


def test_a_chosen_read_out_of_bounds_is_still_an_error_at_it() -> None:
    k = parse(SHIFT.replace("select(i >= 1, X[i - 1], 0.0)", "select(i >= 0, X[i - 1], 0.0)"), "s.ir")
    with pytest.raises(InterpError) as e:
        run(k, {"X": np.ones(40, np.float32)})
    assert "index -1 is out of bounds for dimension 0 of `X`" in e.value.short()
    assert str(e.value.loc) == "4:27"  # at `X[i - 1]`


def test_an_unwritten_element_in_an_unchosen_arm_is_not_read() -> None:
    k = parse("""kernel k(X: f32[N]) -> (Y: f32[N]) {
  size N = 8
  temp t: f32[N]
  w: for i in 0..4 {
    t[i] = X[i]
  }
  r: for i in 0..N {
    Y[i] = select(i < 4, t[i], 1.0)
  }
}""", "u.ir")
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], [0, 1, 2, 3, 1, 1, 1, 1])


def test_bounds_proof_assumes_the_arm_condition() -> None:
    ranged = CONV_SAME.replace("size N = 37", "size N = 37 in 1..4096")
    k = parse(ranged, "r.ir")  # accepted: every read is guarded into 0..N-1
    assert k.size_ranges()
    with pytest.raises(AscxError, match="leaves|out of bounds|outside"):
        parse(ranged.replace("select(i + k <= N, X[i + k - 1], 0.0)", "X[i + k - 1]"), "r.ir")


@pytest.mark.parametrize("text", [SHIFT, CONV_SAME])
def test_tile_leaves_a_guarded_read_that_may_leave_in_gm_and_stays_correct(text: str) -> None:
    k = parse(text, "g.ir")
    t, trace = run_pipeline(k, parse_pipeline("tile"), None)
    assert not any(b.name.startswith("X_") for b in t.buffers), [b.name for b in t.buffers]
    assert "guarded by `select`" in "\n".join(str(x) for x in trace)
    for seed in (3, 4):
        ins = random_inputs(k, np.random.default_rng(seed))
        np.testing.assert_allclose(run(t, ins)["Y"], run(k, ins)["Y"], rtol=1e-6, atol=1e-6)
    code = emit_ascendc(t).combined()[0]
    assert "? " in code and "XGm.GetValue(" in code


def test_may_leave_sees_through_tile_tails() -> None:
    """`i0 * 2 + i` under `for i in 0..min(2, M - i0 * 2)` never reaches M = 5, though its
    interval does ([0, 5]): the staging check asks Z3 before refusing, so a guarded read in a
    tiled nest with a tail is staged (five codegen tests went scalar on the interval alone);
    a read that really leaves (`i0 * 2 + i + 1`) is still reported with a value it reaches."""
    from transformer import ir
    from transformer.bounds import may_leave

    def name(n: str) -> ir.Name:
        return ir.Name(n)

    def lit(v: int) -> ir.IntLit:
        return ir.IntLit(v)

    i0 = ir.For("i0", lit(0), lit(3), ())
    tail = ir.Call("min", (lit(2), ir.Binary("-", name("M"), ir.Binary("*", name("i0"), lit(2)))))
    i = ir.For("i", lit(0), tail, ())
    at = ir.Binary("+", ir.Binary("*", name("i0"), lit(2)), name("i"))
    assert may_leave(ir.Access("A", (at,)), (i0, i), (name("M"),), {"M": 5}) is None
    why = may_leave(ir.Access("A", (ir.Binary("+", at, lit(1)),)), (i0, i), (name("M"),), {"M": 5})
    assert why is not None and "reaches 5" in why


def test_tile_stages_a_guarded_read_cut_to_the_tensor_when_it_covers_whole_dimensions() -> None:
    """Same-padding depthwise conv (examples/dwconv3x3_same.ir): the guarded read's footprint
    `y + r - 1` over a whole channel is -1..H, cut to the tensor it is the whole dimension,
    staged at corner 0 (the local's indices are the tensor's, the guards unchanged)."""
    from pathlib import Path

    from transformer.parser import parse_file

    k = parse_file(str(Path(__file__).resolve().parents[1] / "examples" / "dwconv3x3_same.ir")).with_sizes(
        {"N": 1, "C": 4, "H": 5, "W": 7})
    t, trace = run_pipeline(k, parse_pipeline("tile"), None)
    (xl,) = [b for b in t.buffers if b.name == "X_ub"]
    assert [getattr(d, "value", None) for d in xl.shape[-2:]] == [5, 7], xl.shape
    assert "guarded by `select`" not in "\n".join(str(x) for x in trace)
    for seed in (5, 6):
        ins = random_inputs(k, np.random.default_rng(seed))
        np.testing.assert_array_equal(run(t, ins)["Y"], run(k, ins)["Y"])
