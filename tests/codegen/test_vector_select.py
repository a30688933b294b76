"""Vector instruction selection, pattern by pattern: each kernel below stages its operands
in UB (`tile`), must select the listed instructions, and must match the interpreter."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, check_emitted, kernel_text

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


# binary vector-vector ops, scalar forms, unary ops, casts, Duplicate
ELEMENTWISE = """
kernel ew(A: f32[R, C], B: f32[R, C], H: f16[R, C]) -> (O1: f32[R, C], O2: f32[R, C], O3: f16[R, C]) {
  size R = 4
  size C = 64
  const k: f32 = 0.75
  ew: for i in 0..R {
    for j in 0..C {
      O1[i, j] = (A[i, j] + B[i, j]) * (A[i, j] - B[i, j]) / (abs(B[i, j]) + 1.5) + max(A[i, j], B[i, j]) - min(A[i, j], 0.25)
      O2[i, j] = exp(A[i, j]) + sqrt(abs(B[i, j])) + rsqrt(abs(A[i, j]) + 1.0) + log(abs(B[i, j]) + 2.0) - k / (abs(A[i, j]) + 1.0) - 2.0 * -A[i, j] + A[i, j] / k
      O3[i, j] = f16(f32(H[i, j]) * k) + H[i, j]
    }
  }
}
"""

# row statistics (reductions) read back by a row-wise nest
ROWS = """
kernel rows(X: f32[R, C], Y: f16[R, C]) -> (S: f32[R], M: f32[R], N: f16[R], Z: f32[R, C]) {
  size R = 4
  size C = 64
  rw: for i in 0..R {
    S[i] = 0.0
    for j in 0..C { S[i] += X[i, j] * 2.0 }
    M[i] = -inf
    for j in 0..C { M[i] max= X[i, j] }
    N[i] = f16(inf)
    for j in 0..C { N[i] min= Y[i, j] }
    for j in 0..C { Z[i, j] = X[i, j] - M[i] + 1.0 / (S[i] + 100.0) }
  }
}
"""

FILL = """
kernel fill(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 4
  size C = 64
  const c: f32 = 3.5
  f: for i in 0..R {
    for j in 0..C { Y[i, j] = c }
  }
  g: for i in 0..R {
    for j in 0..C { Y[i, j] = Y[i, j] + X[i, j] }
  }
}
"""

# P·V with its init and normalisation: the `d` loop distributed over its statements
PV = """
kernel pv(P: f32[R, S], V: f16[S, D], sm: f32[R]) -> (O: f16[R, D]) {
  size R = 4
  size S = 32
  size D = 64
  temp acc: f32[R, D]
  pv: for i in 0..R {
    for d in 0..D {
      acc[i, d] = 0.0
      for j in 0..S { acc[i, d] += P[i, j] * f32(V[j, d]) }
      O[i, d] = f16(acc[i, d] / (abs(sm[i]) + 2.0))
    }
  }
}
"""


PATTERNS = {  # case -> (kernel text, the instructions it must select), under `tile`
    "elementwise": (ELEMENTWISE, {"Add", "Sub", "Mul", "Div", "Max", "Mins", "Abs", "Adds", "Exp", "Sqrt", "Rsqrt", "Ln",
                                  "Muls", "Duplicate", "Cast"}),
    # short rows: the whole tile at once (rows2d.py: one WholeReduce repeat per row, Brcb)
    "rows": (ROWS, {"WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "Brcb", "Muls", "Adds"}),
    "fill": (FILL, {"Duplicate", "Add"}),
    "pv": (PV, {"Duplicate", "Cast", "Muls", "Add", "Div"}),
}


@pytest.fixture(scope="module")
def patterns() -> Bundle:
    """The PATTERNS kernels, tiled, in ONE build (tests/codegen/bundle.py)."""
    return build_cases({c: apply(kernel_text(text), "tile") for c, (text, _) in PATTERNS.items()}, sanitize=False)


@pytest.mark.parametrize("case", PATTERNS)
def test_pattern_selected_and_matches(patterns: Bundle, case: str) -> None:
    text, want = PATTERNS[case]
    em = patterns.emitted[case]
    assert em.plan is not None
    got = set(em.plan.instructions())
    assert want <= got, f"missing instructions {sorted(want - got)}; chose {sorted(got)}"
    assert not [w for w in em.warnings if "falls back" in w], em.warnings
    check_bundled(patterns, case, kernel_text(text), what=f"{case} vector patterns")


def test_scalar_path_equals_reference() -> None:
    """select=False (`ascx emit --scalar`) is the reference path: all nests scalar, warned."""
    k = kernel_text(ROWS)
    t = apply(k, "tile")
    em = emit_ascendc(t, select=False)
    assert any("falls back" in w for w in em.warnings)
    assert "ReduceSum" not in em.source
    check_emitted(t, k, emitted=em, what="rows, scalar path")


def test_select_on_data_is_vectorised() -> None:
    k = kernel_text("""
kernel sel(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 4
  size C = 32
  s: for i in 0..R {
    for j in 0..C { Y[i, j] = select(X[i, j] > 0.0, X[i, j], 0.5 * X[i, j]) }
  }
}
""")
    t = apply(k, "tile")
    em = emit_ascendc(t)
    assert not em.warnings and "CompareScalar(" in em.source and "Select(" in em.source
    check_emitted(t, k, emitted=em, what="select on data (CompareScalar + Select)")
