"""Documented semantics of the APIs in ascx_emu/ops_extra.h (cases/units_extra.cpp), each pinned
with an expectation computed here by hand or by plain numpy, and their hardware-rule checks
(exit 3 with a located message)."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.emulator import ERROR_EXIT, run_binary

from .conftest import build, parse_named_lines


@pytest.fixture(scope="module")
def units_extra_bin(emu_cache):
    return build(emu_cache, "units_extra")


@pytest.fixture(scope="module")
def ux(units_extra_bin):
    # Like cases/units.cpp, units_extra.cpp sets inputs with SetValue and reads results with
    # GetValue without S/V flags (semantic checks, not device-faithful code), so sync-hazard
    # detection is off for it; the ops' accesses are checked in tests/timing/test_extra_ops.py.
    r = run_binary(units_extra_bin, env={"ASCX_HAZARDS": "off"})
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln.split()[1:] for ln in r.stdout.splitlines() if ln.strip()}
    floats = {k: v for k, v in parse_named_lines("\n".join(ln for ln in r.stdout.splitlines() if ":" not in ln and " idx " not in ln)).items()}
    return lines, floats


pytestmark = pytest.mark.slow


def test_std_max_min_and_fill_on_gm(ux):
    lines, f = ux
    assert lines["std_maxmin"] == ["7", "3", "2.5"]
    np.testing.assert_array_equal(f["fill_gm"], [3.5] * 10 + [0] * 6)  # 10 of 16 elements set


def test_reductions_mask_repeat_forms(ux):
    _, f = ux
    s = (np.arange(256) * 37) % 128 - 64.0
    # mask 32, 2 repeats, repeat stride 8 blocks (64 floats): elements 0..31 and 64..95
    act = np.r_[0:32, 64:96]
    assert f["reduce_max_rep"][0] == s[act].max()
    assert f["reduce_max_rep"][1] == act[np.argmax(s[act])]  # index = r * 64 + position
    # bit mask 0xF0F0...: positions 4-7, 12-15, ... of 64; repeat stride 16 blocks (128 floats)
    pos = np.array([p for p in range(64) if (p // 4) % 2 == 1])
    vals = np.r_[s[pos], s[128 + pos]]
    idx = np.r_[pos, 64 + pos]
    assert f["reduce_min_rep"][0] == vals.min() and f["reduce_min_rep"][1] == idx[np.argmin(vals)]
    assert f["reduce_sum_rep"][0] == sum(s[r * 64:r * 64 + 16].sum() for r in range(3))


def test_block_and_pair_reductions(ux):
    _, f = ux
    h = np.arange(128) % 17.0
    np.testing.assert_array_equal(f["block_sum_half"], np.r_[h.reshape(8, 16).sum(1), -1])  # 8 sums, dst[8] untouched
    x = (np.arange(128) * 5) % 67.0
    exp = []
    for r in range(2):  # mask 60: blocks 0..6 full, block 7 only its first 4 elements
        blk = x[r * 64:(r + 1) * 64].reshape(8, 8)
        exp += [blk[b].max() if b < 7 else blk[7, :4].max() for b in range(8)]
    np.testing.assert_array_equal(f["block_max_float"], exp)
    np.testing.assert_array_equal(f["pair_sum_float"], np.r_[x[:64].reshape(32, 2).sum(1), -1])


def test_gather_mask_patterns_and_modes(ux):
    _, f = ux
    np.testing.assert_array_equal(f["gm_even"], [32, 0, 2, 4, 6, 62])          # pattern 1: even elements
    np.testing.assert_array_equal(f["gm_second_of_4"], [32, 1, 5, 125])       # pattern 4, 2 repeats of 64
    np.testing.assert_array_equal(f["gm_custom"], [4, 0, 31, 32, 33])         # bits 0, 31 of word 0; 0, 1 of word 1
    np.testing.assert_array_equal(f["gm_counter"], [10, 0, 9])                # counter mode: mask = 10 elements


def test_gather_byte_offsets(ux):
    _, f = ux
    # src[i] = 2i (half); byte offset (2 + o) / 2 = element: o = 6, 0, 2, 30 -> 4, 1, 2, 16
    np.testing.assert_array_equal(f["gather"], [8, 2, 4, 32])


def test_sort32_and_mrgsort(ux):
    lines, f = ux
    # scores (7i) % 16 over 64 elements: each value appears twice per 32; descending, ties keep input order
    s = (np.arange(32) * 7) % 16
    order = sorted(range(32), key=lambda i: -s[i])  # Python sort is stable
    got = [tuple(p.split(":")) for p in lines["sort32"]]
    assert got == [(str(int(s[i])), str(i)) for i in order[:6]]
    merged = np.array([float(v) for v in lines["mrgsort"][:64]])
    np.testing.assert_array_equal(merged, np.repeat(np.arange(15, -1, -1), 4))
    # ties across lists: list 1 (first repeat, indices < 32) before list 2
    assert lines["mrgsort"][65:] == ["9", "25", "41"]
    # half score: low 2 bytes score (4.0 = 0x4400), 2 reserved zero bytes, index in the high 4 bytes
    assert lines["sort32_half_layout"] == [str(0x4400), "0", "4", "0"]


def test_copy_transpose_axpy(ux):
    _, f = ux
    np.testing.assert_array_equal(f["copy"], [0, 63, -1, 256, 319])  # 2 repeats of 64, src repeat stride 256 halves
    np.testing.assert_array_equal(f["transpose"], [16, 1, 51, 255])    # dst[j*16+i] = src[i*16+j]
    np.testing.assert_array_equal(f["axpy"], 1 + 0.5 * np.arange(8))
    np.testing.assert_array_equal(f["axpy_mixed"], 1 + 0.5 * np.arange(8) + 2 * (np.arange(8) + 0.25))


def test_shifts_and_bitwise(ux):
    _, f = ux
    v = np.array([-8, 5, 1, -1], np.int16)
    w = np.array([0x0F0F, 0x00FF, -1, 0], np.int16)
    np.testing.assert_array_equal(f["shr_i16"], v >> 1)                      # arithmetic for signed
    np.testing.assert_array_equal(f["shl_i16"], (v.astype(np.int32) << 3).astype(np.int16))
    np.testing.assert_array_equal(f["shr_u16"], v.view(np.uint16) >> 12)     # logical for unsigned
    np.testing.assert_array_equal(f["and_i16"], v & w)
    np.testing.assert_array_equal(f["or_i16"], v | w)
    np.testing.assert_array_equal(f["not_i16"], ~w)


def test_integer_vector_arithmetic_wraps(ux):
    """Add/Sub/Mul/Max and Adds/Muls/Mins on int32 (and Mul on int16) compute exactly and
    wrap to the type (two's complement), as the IR's integer arithmetic does."""
    _, f = ux
    v = np.array([2**31 - 1, -(2**31), 46341, -7], np.int64)
    w = np.array([1, -1, 46341, 3], np.int64)

    def wrap(x, bits=32):  # type: ignore[no-untyped-def]
        return ((np.asarray(x, np.int64) + 2**(bits - 1)) % 2**bits) - 2**(bits - 1)

    np.testing.assert_array_equal(f["add_i32"], wrap(v + w))
    np.testing.assert_array_equal(f["sub_i32"], wrap(v - w))
    np.testing.assert_array_equal(f["mul_i32"], wrap(v * w))
    np.testing.assert_array_equal(f["max_i32"], np.maximum(v, w))
    np.testing.assert_array_equal(f["muls_i32"], wrap(-v))
    np.testing.assert_array_equal(f["adds_i32"], wrap(v + 10))
    np.testing.assert_array_equal(f["mins_i32"], np.minimum(v, 0))
    h = np.array([32767, -32768, 300, -3], np.int64)
    np.testing.assert_array_equal(f["mul_i16"], wrap(h * h, 16))


def test_compare_scalar_repeat_compare_and_select_modes(ux):
    _, f = ux
    np.testing.assert_array_equal(f["cmps_ge"], [0] * 4 + [255] * 4)        # bits 32..63 of i >= 32
    np.testing.assert_array_equal(f["sel_scalar"], [-1, -1, 32])
    np.testing.assert_array_equal(f["cmp_rep_lt"], [255] * 8 + [0] * 8)     # i < 127 - i for i < 64 only
    # VSEL_CMPMASK_SPR: the first repeat's bits (all set) serve both repeats -> src0 everywhere
    np.testing.assert_array_equal(f["sel_spr"], [0, 63, 64, 127])


FAILURES = {
    "fill_after_initbuffer": ("Fill", "only before the first InitBuffer"),
    "gather_misaligned": ("Gather", "2 bytes is not a multiple of sizeof(float)"),
    "gathermask_pattern": ("GatherMask", "src1Pattern 9 out of range [1, 7]"),
    "shift_range": ("ShiftLeft", "shift amount 40 out of range [0, 31] for int32_t"),
    "mrgsort_validbit": ("MrgSort", "validBit 0x5 must be 0b0011, 0b0111 or 0b1111"),
    "transpose_inplace": ("Transpose", "same buffer"),
    "reduce_repeat": ("ReduceMax", "repeatTimes 300 out of range [0, 255]"),
    "reduce_oob": ("ReduceSum", "local tensor access out of its buffer"),
    "select_mode": ("Select", "needs selMode = SELMODE::VSEL_TENSOR_SCALAR_MODE"),
    "sort_repeat": ("Sort32", "repeatTimes 256 out of range"),
    "initconst_ub": ("InitConstValue", "destination must be in A1/B1 (L1) or A2/B2 (L0A/L0B), got UB"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_extra_api_rule_violation_is_located(units_extra_bin, case):
    r = run_binary(units_extra_bin, [case], timeout=60)
    assert r.returncode == ERROR_EXIT, (r.returncode, r.stdout, r.stderr)
    assert "no error" not in r.stdout
    api, frag = FAILURES[case]
    assert f"ascx-emu: error: {api}: " in r.stderr and frag in r.stderr, r.stderr
    assert "units_extra.cpp:" in r.stderr and "on core b0.aiv0" in r.stderr
