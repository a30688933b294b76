"""The reference interpreter's semantics (ir.md, "Meaning"), one behaviour per test."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.diagnostics import InterpError
from transformer.interp import compare_outputs, convert, random_inputs, round_bf16, run, tolerance
from transformer.parser import parse


def kernel(text: str):
    return parse(text, "t.ir")


@pytest.fixture
def rng() -> np.random.Generator:
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def test_program_order_and_sequential_dependence():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 6
      Y[0] = X[0]
      for i in 1..N { Y[i] = Y[i - 1] + X[i] } }""")
    x = np.arange(1, 7, dtype=np.float32)
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], np.cumsum(x))


def test_reverse_dependence_is_not_vectorised_wrongly():
    # iteration i reads X-shifted values written by iteration i+1 only after it ran
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 5
      temp t: f32[N]
      for i in 0..N { t[i] = X[i] }
      for i in 0..N - 1 { t[i] = t[i + 1] * 2.0 }
      for i in 0..N { Y[i] = t[i] } }""")
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], [2, 4, 6, 8, 4])


def test_f16_store_rounds_to_nearest_even():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f16[N]) { size N = 3
      for i in 0..N { Y[i] = X[i] } }""")
    # 2049 is halfway between f16 neighbours 2048 and 2050: ties to even -> 2048
    x = np.array([2049.0, 2051.0, 0.1], dtype=np.float32)
    y = run(k, {"X": x})["Y"]
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, np.array([2048.0, 2052.0, np.float16(0.1)], dtype=np.float16))


def test_f16_arithmetic_happens_in_f16_and_f32_promotes():
    k = kernel("""kernel p(A: f16[N], B: f16[N]) -> (C: f32[N], D: f32[N]) { size N = 1
      for i in 0..N {
        C[i] = A[i] + B[i]
        D[i] = f32(A[i]) + B[i]
      } }""")
    a = np.array([2048.0], np.float16)
    b = np.array([1.0], np.float16)
    out = run(k, {"A": a, "B": b})
    assert out["C"][0] == 2048.0  # f16 + f16 rounds in f16
    assert out["D"][0] == 2049.0  # f32 + f16 computes in f32


def test_weak_literals_take_the_other_operand_type():
    k = kernel("""kernel p(A: f16[N]) -> (C: f32[N]) { size N = 1
      for i in 0..N { C[i] = A[i] * 3.0 + 0.0001 } }""")
    a = np.array([0.1], np.float16)
    expect = np.float16(np.float16(a[0] * np.float16(3.0)) + np.float16(0.0001))
    assert run(k, {"A": a})["C"][0] == np.float32(expect)


def test_reductions_accumulate_in_destination_dtype():
    k = kernel("""kernel p(X: f16[N]) -> (S16: f16, S32: f32) { size N = 4096
      S16 = 0.0
      S32 = 0.0
      for i in 0..N {
        S16 += X[i]
        S32 += f32(X[i])
      } }""")
    x = np.full(4096, 0.1, np.float16)
    out = run(k, {"X": x})
    assert out["S16"] == np.float16(256.0)  # f16 accumulation stalls at 256 (spacing 0.25)
    assert abs(float(out["S32"]) - 4096 * float(np.float16(0.1))) < 1e-2


def test_max_min_product_reductions(rng):
    k = kernel("""kernel p(X: f32[M, N]) -> (MX: f32[M], MN: f32[M], PR: f32[M]) { size M = 7
      size N = 5
      for m in 0..M {
        MX[m] = -inf
        MN[m] = inf
        PR[m] = 1.0
        for n in 0..N {
          MX[m] max= X[m, n]
          MN[m] min= X[m, n]
          PR[m] *= X[m, n]
        }
      } }""")
    x = rng.uniform(-2, 2, (7, 5)).astype(np.float32)
    out = run(k, {"X": x})
    np.testing.assert_array_equal(out["MX"], x.max(1))
    np.testing.assert_array_equal(out["MN"], x.min(1))
    np.testing.assert_allclose(out["PR"], x.prod(1), rtol=1e-5)


def test_select_and_intrinsics(rng):
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 64
      for i in 0..N { Y[i] = select(X[i] > 0.0, sqrt(X[i]), exp(X[i])) + tanh(abs(X[i])) + max(X[i], 0.5) } }""")
    x = rng.uniform(-1, 1, 64).astype(np.float32)
    want = np.where(x > 0, np.sqrt(np.abs(x)), np.exp(x)) + np.tanh(np.abs(x)) + np.maximum(x, 0.5)
    np.testing.assert_allclose(run(k, {"X": x})["Y"], want, rtol=1e-6)


def test_causal_select_on_loop_variables():
    k = kernel("""kernel p(X: f32[N, N]) -> (Y: f32[N, N]) { size N = 4
      for i in 0..N { for j in 0..N { Y[i, j] = select(j <= i, X[i, j], -inf) } } }""")
    x = np.ones((4, 4), np.float32)
    y = run(k, {"X": x})["Y"]
    np.testing.assert_array_equal(np.isinf(y), np.triu(np.ones((4, 4), bool), 1))


def test_read_of_unwritten_temp_is_located():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 8
      temp t: f32[N]
      for i in 0..N - 1 { t[i] = X[i] }
      for i in 0..N { Y[i] = t[i] } }""")
    with pytest.raises(InterpError) as e:
        run(k, {"X": np.ones(8, np.float32)})
    assert "unwritten element [7] of temp `t`" in e.value.message
    assert e.value.loc is not None and e.value.loc.line == 4


def test_accumulating_into_unwritten_element_is_an_error():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32) { size N = 8
      for i in 0..N { Y += X[i] } }""")
    with pytest.raises(InterpError, match="unwritten"):
        run(k, {"X": np.ones(8, np.float32)})


def test_out_of_bounds_is_located():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 8
      for i in 0..N { Y[i] = X[i + 1] } }""")
    with pytest.raises(InterpError) as e:
        run(k, {"X": np.ones(8, np.float32)})
    assert "index 8 is out of bounds for dimension 0 of `X`" in e.value.message
    assert (e.value.loc.line, e.value.loc.col) == (2, 30)


def test_unwritten_output_is_reported():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 8
      for i in 0..N - 2 { Y[i] = X[i] } }""")
    with pytest.raises(InterpError, match=r"output `Y` element \[6\] is never written"):
        run(k, {"X": np.ones(8, np.float32)})


def test_copies_with_tails_and_locals(rng):
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 10
      local xt: f32[4] @ub
      for i0 in 0..3 {
        copy xt[0:min(4, N - i0 * 4)] <- X[i0 * 4:min(i0 * 4 + 4, N)]
        for i1 in 0..min(4, N - i0 * 4) { xt[i1] = xt[i1] * 2.0 }
        copy Y[i0 * 4:min(i0 * 4 + 4, N)] <- xt[0:min(4, N - i0 * 4)]
      } }""")
    x = rng.uniform(-1, 1, 10).astype(np.float32)
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], x * 2)


def test_copy_of_unwritten_region_is_an_error():
    k = kernel("""kernel p(X: f32[N]) -> (Y: f32[N]) { size N = 4
      local t: f32[N] @ub
      copy Y[0:N] <- t[0:N] }""")
    with pytest.raises(InterpError, match="unwritten"):
        run(k, {"X": np.ones(4, np.float32)})


def test_bf16_rounding():
    x = np.array([1.0, 1.00390625, 1.01171875, 3.0e38], np.float32)
    # 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even -> 1.0
    np.testing.assert_array_equal(round_bf16(x)[:3], np.array([1.0, 1.0, 1.015625], np.float32))
    assert np.isfinite(round_bf16(x)[3]) or np.isinf(round_bf16(x)[3])


def test_integer_stores_round_half_even_and_saturate():
    np.testing.assert_array_equal(convert(np.array([2.5, 3.5, -0.5, 300.0, -300.0]), "i8"), [2, 4, 0, 127, -128])


def test_vectorised_matches_sequential_on_attention_row(rng):
    k = kernel("""kernel p(Q: f16[S, D], K: f16[S, D]) -> (O: f32[S]) { size S = 33
      size D = 17
      temp s: f32[S, S]
      for i in 0..S { for j in 0..S {
        s[i, j] = 0.0
        for k in 0..D { s[i, j] += f32(Q[i, k]) * f32(K[j, k]) } } }
      for i in 0..S { O[i] = -inf
        for j in 0..S { O[i] max= s[i, j] } } }""")
    ins = random_inputs(k, rng)
    q, kk = ins["Q"].astype(np.float32), ins["K"].astype(np.float32)
    np.testing.assert_allclose(run(k, ins)["O"], (q @ kk.T).max(1), rtol=1e-5, atol=1e-6)


def test_random_inputs_are_fresh_and_nonzero():
    k = kernel("kernel p(X: f16[N], I: i8[N]) -> (Y: f16[N]) { size N = 64\n for i in 0..N { Y[i] = X[i] } }")
    a = random_inputs(k, np.random.default_rng(1))
    b = random_inputs(k, np.random.default_rng(2))
    assert a["X"].dtype == np.float16 and a["I"].dtype == np.int8
    assert np.count_nonzero(a["X"]) > 0 and not np.array_equal(a["X"], b["X"])


def test_compare_outputs_reports_mismatch_and_tolerance():
    k = kernel("kernel p(X: f16[N]) -> (Y: f16[N]) { size N = 4\n for i in 0..N { Y[i] = X[i] } }")
    e = {"Y": np.array([1, 2, 3, np.inf], np.float16)}
    ok = compare_outputs(k, e, {"Y": np.array([1.001, 2, 3, np.inf], np.float16)})
    assert ok[0].ok and ok[0].rtol == tolerance("f16")[0]
    bad = compare_outputs(k, e, {"Y": np.array([1, 2, 3.5, np.inf], np.float16)})
    assert not bad[0].ok and bad[0].worst_index == (2,) and bad[0].max_abs == pytest.approx(0.5)


def test_compare_outputs_scales_atol_for_small_outputs():
    k = kernel("kernel p(X: f16[N]) -> (Y: f16[N]) { size N = 4\n for i in 0..N { Y[i] = X[i] } }")
    e = {"Y": np.full(4, 1e-3, np.float16)}
    # a constant 0 is within the unscaled atol (2e-3) but must not pass for outputs ~1e-3
    assert not compare_outputs(k, e, {"Y": np.zeros(4, np.float16)})[0].ok
    assert compare_outputs(k, e, {"Y": np.full(4, 1.004e-3, np.float16)})[0].ok
