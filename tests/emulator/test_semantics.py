"""Documented API semantics, pinned with hand-computed expectations (cases/units.cpp)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


def test_half_conversion_edges(units):
    xs = np.array([1.0, 65504.0, 65519.0, 65520.0, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08,
                   1.00048828125, 1.00146484375, -0.0, 0.1, -2.5, 1e-5], dtype=np.float32)
    with np.errstate(over="ignore"):
        expect = xs.astype(np.float16).view(np.uint16).astype(np.float64)  # numpy rounds RNE
    np.testing.assert_array_equal(units["half_bits"], expect)
    # hand-checked: 65519 -> 0x7bff (65504), 65520 -> inf (0x7c00), 2^-25 tie -> 0, 1+2^-11 tie -> 1.0
    assert units["half_bits"][2] == 0x7BFF and units["half_bits"][3] == 0x7C00
    assert units["half_bits"][5] == 0 and units["half_bits"][7] == 0x3C00 and units["half_bits"][8] == 0x3C02
    bits = np.array([0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x3555, 0x8001], dtype=np.uint16)
    np.testing.assert_array_equal(units["half_to_f32"].astype(np.float32), bits.view(np.float16).astype(np.float32))
    # bfloat16: 1.0 = 0x3f80; 1+2^-8 is a tie -> even (0x3f80); 1.01171875 = 1+3*2^-8 -> tie -> 0x3f82
    np.testing.assert_array_equal(units["bf16_bits"], [0x3F80, 0x3F80, 0x3F82])


def test_binary_repeat_continuous_mask(units):
    d = units["add_mask64_rep2"]
    exp = np.full(256, -1.0)
    for r in range(2):  # 2 repeats of 128 halves, only the first 64 elements active
        idx = np.arange(r * 128, r * 128 + 64)
        exp[idx] = idx + 1000
    np.testing.assert_array_equal(d, exp)


def test_binary_dst_block_stride(units):
    d = units["add_dstblk2"]
    exp = np.full(128, -1.0)
    for b in range(8):  # float: 8 elements per 32 B block; dst block stride 2 blocks
        for e in range(8):
            i = b * 8 + e
            exp[b * 16 + e] = i + 100 * i
    np.testing.assert_array_equal(d, exp)


def test_bit_mask_form(units):
    d = units["mul_bitmask"]
    exp = np.full(128, -1.0)
    exp[0], exp[2], exp[127] = 0.0, 1.0, 63.5  # bits 0, 2 of mask[0]; bit 63 of mask[1]
    np.testing.assert_array_equal(d, exp)


def test_unary_repeat_stride(units):
    d = units["muls_srcrep16"]
    exp = np.concatenate([2.0 * (np.arange(64) + r * 128) for r in range(3)])  # src skips 16 blocks per repeat
    np.testing.assert_array_equal(d, exp)


def test_count_forms(units):
    s = np.arange(300, dtype=np.float64) - 150
    s1 = (np.arange(300) % 7) + 1.0
    np.testing.assert_array_equal(units["adds_count300"], np.append(s + 0.5, -1.0))  # element 300 untouched
    np.testing.assert_array_equal(units["relu_count"], np.maximum(s, 0))
    np.testing.assert_array_equal(units["maxs_count"], np.maximum(s, 10))
    np.testing.assert_allclose(units["div_count"], (s / s1).astype(np.float32), rtol=1e-7)
    np.testing.assert_array_equal(units["sub_count"], s - s1)
    np.testing.assert_allclose(units["exp_count"], np.exp(s1[:8]).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(units["sqrt_count"], np.sqrt(s1[:8]), rtol=1e-6)
    np.testing.assert_allclose(units["recip_count"], 1 / s1[:8], rtol=1e-6)


def test_duplicate_repeat(units):
    exp = np.full(128, -1.0)
    exp[0:16] = 7  # mask 16 halves = 1 block, repeat stride 2 blocks (32 halves)
    exp[32:48] = 7
    np.testing.assert_array_equal(units["dup_rep"], exp)


def test_brcb(units):
    exp = np.repeat(np.arange(1, 17, dtype=np.float64), 8)  # each element fills one 32 B block
    np.testing.assert_array_equal(units["brcb"], exp)


def test_reductions(units):
    np.testing.assert_array_equal(units["reducemax"], [50.0, 77.0])
    np.testing.assert_array_equal(units["reducesum"], [4950.0])
    exp = [sum(range(r * 64, r * 64 + 64)) for r in range(3)] + [-1.0]
    np.testing.assert_array_equal(units["wholereducesum"], exp)
    # values (37*i) % 128: the maximum 127 sits at i = 83 in each 128-element repeat
    np.testing.assert_array_equal(units["wholereducemax"], [127, 83, 127, 83])


def test_cast_rounding(units):
    # f32 -> f16, inputs {1+2^-11, 1+3*2^-11, -(1+2^-11), 65520, 0.1, 3, -2.5, 2.5}
    np.testing.assert_array_equal(units["cast_f32_f16_rint"], [1, 1.001953125, -1, np.inf, 0.0999755859375, 3, -2.5, 2.5])
    np.testing.assert_array_equal(units["cast_f32_f16_floor"], [1, 1.0009765625, -1.0009765625, np.inf, 0.0999755859375, 3, -2.5, 2.5])
    np.testing.assert_array_equal(units["cast_f32_f16_ceil"], [1.0009765625, 1.001953125, -1, np.inf, 0.10003662109375, 3, -2.5, 2.5])
    np.testing.assert_array_equal(units["cast_f32_f16_trunc"], [1, 1.0009765625, -1, np.inf, 0.0999755859375, 3, -2.5, 2.5])
    # f32 -> i32 for {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7}
    np.testing.assert_array_equal(units["cast_f32_i32_rint"], [-2, -2, 0, 0, 2, 2, 3, -3])
    np.testing.assert_array_equal(units["cast_f32_i32_floor"], [-3, -2, -1, 0, 1, 2, 2, -3])
    np.testing.assert_array_equal(units["cast_f32_i32_ceil"], [-2, -1, 0, 1, 2, 3, 3, -2])
    np.testing.assert_array_equal(units["cast_f32_i32_round"], [-3, -2, -1, 1, 2, 3, 3, -3])
    np.testing.assert_array_equal(units["cast_f32_i32_trunc"], [-2, -1, 0, 0, 1, 2, 2, -2])
    np.testing.assert_array_equal(units["cast_i32_f32"], [16777216, -7])  # 2^24+1 rounds to even
    np.testing.assert_array_equal(units["cast_f16_f32"], np.arange(8) * 0.25)
    np.testing.assert_array_equal(units["cast_bf16_roundtrip"], [1.0, 1.015625])
    # repeat form f16 -> f32: 64 elements per repeat, src repeat stride 4 blocks = 64 halves
    np.testing.assert_array_equal(units["cast_rep_f16_f32"], np.arange(128))


def test_compare_select(units):
    np.testing.assert_array_equal(units["compare_gt"], [0, 0, 0, 0, 255, 255, 255, 255])
    exp = np.where(np.arange(64) > 31.5, np.arange(64), 31.5)
    np.testing.assert_array_equal(units["select"], exp)


def test_datacopy_params_strides(units):
    exp = np.full(64, -1.0)
    exp[0:16] = np.arange(16)  # block 0 of GM
    exp[32:48] = np.arange(32, 48)  # GM gap of 1 block (16 halves) skipped; UB gap 1 block left as is
    np.testing.assert_array_equal(units["dcp_gm_ub"], exp)
    out = np.zeros(96)
    out[0:16] = 500 + np.arange(16)
    out[48:64] = 516 + np.arange(16)  # dst gap 2 blocks = 32 halves
    np.testing.assert_array_equal(units["dcp_ub_gm"], out)


def test_datacopy_pad(units):
    exp = []
    for r in range(3):  # 5 halves from GM row r (GM row stride 5 + gap 2 halves), padded to a 32 B block
        exp += list(100 + 7 * r + np.arange(5)) + [9.0] * 11
    np.testing.assert_array_equal(units["dcpad_gm_ub"], exp)
    np.testing.assert_array_equal(units["dcpad_ub_gm"], [100, 101, 102, 103, 104, 107, 108, 109, 110, 111, 114, 115, 116, 117, 118, 0])
    np.testing.assert_array_equal(units["dcpad_left"], [0, 0, 10, 11, 12] + [0] * 11)


M = K = N = 32


def _nz(mat: np.ndarray, c0: int = 16) -> np.ndarray:
    """ND [rows, cols] -> NZ: column groups of c0, each rows x c0 row-major."""
    rows, cols = mat.shape
    return np.concatenate([mat[:, j:j + c0].reshape(-1) for j in range(0, cols, c0)])


def test_nd2nz_l1_layout(units):
    a = units["mm_a"].reshape(M, K)
    np.testing.assert_array_equal(units["l1_a_nz"], _nz(a))


def test_l0a_zz_layout(units):
    a = units["mm_a"].reshape(M, K)
    l0a = units["l0a_zz"]
    for m in range(M):
        for k in range(K):  # ((m/16)*K1 + k/16)*256 + (m%16)*16 + k%16
            assert l0a[((m // 16) * (K // 16) + k // 16) * 256 + (m % 16) * 16 + k % 16] == a[m, k]


def test_l0b_zn_layout(units):
    b = units["mm_b"].reshape(K, N)
    l0b = units["l0b_zn"]
    for k in range(K):
        for n in range(N):  # ((k/16)*N1 + n/16)*256 + (n%16)*16 + k%16
            assert l0b[((k // 16) * (N // 16) + n // 16) * 256 + (n % 16) * 16 + k % 16] == b[k, n]


def test_mmad_fixpipe_matches_numpy(units):
    a = units["mm_a"].reshape(M, K)
    b = units["mm_b"].reshape(K, N)
    ref = 2 * (a @ b)  # Mmad with cmatrixInitVal=true then false; exact in fp32
    np.testing.assert_array_equal(units["mm_c_nd"].reshape(M, N), ref)
    # NZ output (CFG_NZ): column group j of 16 at j * M * 16, rows of 16 inside
    np.testing.assert_array_equal(units["mm_c_nz"], _nz(ref))
    # F322F16 with relu
    np.testing.assert_array_equal(units["mm_c_half_relu"].reshape(M, N),
                                  np.maximum(ref, 0).astype(np.float16).astype(np.float64))


def test_mmad_bias_form_adds_the_bias_table_row(units):
    """Mmad(dst, fm, filter, bias, params), the bias in C2 (the bias table, filled from L1 with
    DataCopyParams in 64 B units, float or half converted to float): C = A x B + bias[n] on
    every row."""
    a = units["mm_a"].reshape(M, K)
    b = units["mm_b"].reshape(K, N)
    bias = units["mm_bias"]
    assert bias.shape == (N,) and len(set(bias)) == N
    np.testing.assert_array_equal(units["mm_c_bias"].reshape(M, N), a @ b + bias[None, :])
    # the same bias as half in L1, converted to float by the L1 -> bias table DataCopy
    np.testing.assert_array_equal(units["mm_c_bias_h"].reshape(M, N), a @ b + bias[None, :])


def test_init_const_value_l1_and_l0(units):
    # L1: from element 16 (byte 32), 3 iterations of 2 x 32 B blocks (32 halves) set to 0,
    # 1 block (16 halves) skipped between them; everything else was never written (NaN)
    l1 = units["init_l1"]
    want = np.full(160, np.nan)
    for r in range(3):
        want[16 + r * 48: 16 + r * 48 + 32] = 0.0
    np.testing.assert_array_equal(l1, want)
    # L0A: one 512 B block of float = 128 elements
    l0a = units["init_l0a"]
    np.testing.assert_array_equal(l0a[:128], np.full(128, 2.5))
    assert np.isnan(l0a[128:]).all()


def test_max_min_propagate_nan_and_order_signed_zeros(units):
    """NaN wins in Max/Min (either operand, count and repeat form), Maxs/Mins and every
    max/min reduction (value NaN, index of the first NaN): the IR's `max`/`min`. Of two
    zeros Max gives +0 and Min -0 in either order (IEEE 754-2019 maximum/minimum)."""
    nan, inf = np.nan, np.inf
    want_max = [nan, nan, 5, 0, 0, nan, 7, 3]
    want_min = [nan, nan, 2, -0.0, -0.0, nan, -inf, -inf]
    for name, want in [("nan_max", want_max), ("nan_max_rep_swapped", want_max),
                       ("nan_min", want_min), ("nan_min_rep_swapped", want_min)]:
        got = units[name]
        np.testing.assert_array_equal(got, want, err_msg=name)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"{name}: sign of zero")
    np.testing.assert_array_equal(units["nan_maxs"], [1.5, nan, 2, 1.5, 1.5, nan, 1.5, 3])
    np.testing.assert_array_equal(units["nan_mins"], [1, nan, 1.5, -0.0, 0, nan, -inf, 1.5])
    for name in ("nan_reducemax", "nan_reducemin", "nan_reducemax_rep", "nan_wholereducemax", "nan_wholereducemin"):
        assert np.isnan(units[name][0]) and units[name][1] == 5, (name, units[name])
    # 16 halves per 32 B block: block 0 holds both NaNs, the others i % 4 (and 90 at i = 7, block 0)
    for name in ("nan_blockreducemax", "nan_blockreducemin"):
        got = units[name]
        assert np.isnan(got[0]) and not np.isnan(got[1:]).any(), (name, got)
    np.testing.assert_array_equal(units["nan_blockreducemax"][1:], [3] * 7)
    np.testing.assert_array_equal(units["nan_blockreducemin"][1:], [0] * 7)
    assert units["zero_reducemax"][1] == 1 and not np.signbit(units["zero_reducemax"][0])
    assert units["zero_reducemin"][1] == 0 and np.signbit(units["zero_reducemin"][0])
