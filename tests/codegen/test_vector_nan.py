"""NaN and signed zeros through the emitted vector Max/Min (count form), Maxs/Mins and the
ReduceMax/ReduceMin row reductions: the emulator's results equal the interpreter's `max` /
`min` (NaN from either operand propagates; a NaN anywhere in a row makes the row's max NaN).
docs/emulator.md says why: the A2 vector pages do not define NaN, the IR does."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.codegen import build_and_run, emit_ascendc
from transformer.interp import run

from .conftest import apply, fresh_seed, kernel_text

MINMAX = """
kernel minmax(X: f32[R, C], G: f32[R, C], H: f16[R, C]) -> (Y: f32[R, C], Z: f32[R, C], U: f32[R, C], V: f32[R, C], W: f16[R, C], M: f32[R], N: f32[R]) {
  size R = 4
  size C = 200
  ew: for r in 0..R {
    for c in 0..C {
      Y[r, c] = max(X[r, c], G[r, c])
      Z[r, c] = min(X[r, c], G[r, c])
      U[r, c] = max(X[r, c], 0.5)
      V[r, c] = min(G[r, c], -0.5)
      W[r, c] = max(H[r, c], f16(G[r, c]))
    }
  }
  red: for r in 0..R {
    M[r] = -inf
    N[r] = inf
    for c in 0..C {
      M[r] max= X[r, c]
      N[r] min= G[r, c]
    }
  }
}
"""

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]


@pytest.mark.slow
def test_vector_max_min_propagate_nan_like_the_interpreter() -> None:
    k = kernel_text(MINMAX)
    t = apply(k, "tile,double_buffer")
    em = emit_ascendc(t)
    assert em.plan is not None and not [n.fallback for n in em.plan.nests if n.fallback]
    for api in ("Max(", "Min(", "Maxs(", "Mins(", "ReduceMax(", "ReduceMin("):
        assert api in em.source, api
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, dtype in (("X", np.float32), ("G", np.float32), ("H", np.float16)):
        v = rng.uniform(-1.0, 1.0, (4, 200))
        special = rng.random(v.shape) < 0.15
        v[special] = rng.choice(SPECIAL, int(special.sum()))
        inputs[name] = v.astype(dtype)
    # NaN only in X (first operand) or only in G (second), and rows without any NaN
    inputs["X"][0, 7], inputs["G"][0, 7] = np.nan, 0.25
    inputs["X"][1, 9], inputs["G"][1, 9] = 0.25, np.nan
    inputs["X"][3] = np.where(np.isnan(inputs["X"][3]), 0.5, inputs["X"][3])
    inputs["G"][3] = np.where(np.isnan(inputs["G"][3]), 0.5, inputs["G"][3])
    want = run(k, inputs)
    got = build_and_run(t, None, inputs, sanitize=True, emitted=em)
    for name in ("Y", "Z", "U", "V", "W", "M", "N"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} (seed {seed})")
    assert np.isnan(want["Y"][0, 7]) and np.isnan(want["Y"][1, 9]) and np.isnan(want["M"][0])
    assert not np.isnan(want["M"][3]) and not np.isnan(want["N"][3])
