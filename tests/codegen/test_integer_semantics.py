"""Integer (and mixed-dtype) semantics of emitted code: exactly the interpreter's.

docs/ir.md, "Meaning": arithmetic wraps in its computation type (two's complement), every
conversion saturates, integer division truncates with `x / 0 == 0`. Each kernel below
compiles once and runs on fixed edge values (0, +-1, the type's extremes), and every output
must equal the interpreter's bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from transformer.codegen import build_and_run
from transformer.interp import run

from .conftest import kernel_text

pytestmark = pytest.mark.slow

I8_EDGES = np.array([0, 1, -1, 2, -2, 3, 5, 7, 100, -100, 126, 127, -127, -128, 64, -64], dtype=np.int8)
I32_EDGES = np.array([0, 1, -1, 2, -2, 3, 46341, -46341, 65536, 2**31 - 1, -(2**31), -(2**31) + 1,
                      100000, -100000, 2**30, 7], dtype=np.int32)


def _exact(text: str, inputs: dict[str, np.ndarray]) -> None:
    k = kernel_text(text)
    want = run(k, inputs)
    assert run(k, inputs, vectorise=False).keys() == want.keys()
    for name, v in run(k, inputs, vectorise=False).items():
        np.testing.assert_array_equal(v, want[name], err_msg=f"interpreter: vectorised != sequential for {name}")
    got = build_and_run(k, None, inputs)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"emitted != interpreted for `{name}`")


def test_i8_product_is_computed_in_i8_like_the_interpreter() -> None:
    """`x[i] * 100` with x: i8 was emitted as a saturating int8 product (the interpreter
    wraps, as the IR's arithmetic in i8 does): mismatches of 224-240."""
    _exact("""
kernel k(x: i8[16], z: i32[16]) -> (y: i8[16], w: i32[16], q: i8[16], r: i32[16], n: i8[16], a: i8[16],
                                    m: i32[16], s: i32[16], big: i32[16], neg: i32[16]) {
  for i in 0..16 {
    y[i] = x[i] * 100
    w[i] = x[i] * 100
    q[i] = x[i] / x[15 - i]
    r[i] = z[i] / z[15 - i]
    n[i] = -x[i]
    a[i] = abs(x[i])
    m[i] = z[i] * z[15 - i] + z[i]
    s[i] = x[i] + z[i]
    big[i] = (i + 2147483600) * 3 - i * 100000
    neg[i] = -z[i] - abs(z[i])
  }
}
""", {"x": I8_EDGES, "z": I32_EDGES})


def test_integer_reductions_saturate_at_every_store() -> None:
    """`acc_i8 += x_i32` computes in i32 and stores (saturating) into i8 after every step;
    `acc_i32 += x_i32` wraps."""
    _exact("""
kernel k(x: i8[16], z: i32[16]) -> (s8: i8, s32: i32, p8: i8, mx: i8) {
  s8 = 0
  s32 = 0
  p8 = 1
  mx = -128
  for i in 0..16 {
    s8 += z[i]
    s32 += z[i]
    p8 *= x[i]
    mx max= x[i] * 3
  }
}
""", {"x": I8_EDGES, "z": I32_EDGES})
