"""Unit cases of the APIs added for public samples (issue 26 item 3), one compile of
`cases/units_more.cpp`: event ids (`GetTPipePtr()->FetchEventID` / `AllocEventID` /
`ReleaseEventID`, `event_t`), the `set_flag` / `wait_flag` intrinsics (ordering real pipe pairs:
the run is hazard-checked), `SetL2CacheHint`, `InitOutput`, `DumpTensor` + `ShapeInfo`,
`DEFAULT_C0_SIZE`, `Gelu` / `FasterGelu` / `FasterGeluV2` against their public formulas, a
kernel `assert(cond, fmt, ...)`, and the LocalTensor operators (`dst = a + b` and its kin,
`t(i)`, `SetAddrWithOffset`, `SetBufferLen`, `SetShapeInfo` / `GetShapeInfo`), `Broadcast` / `BroadCast`, `TBufPool` and `LocalMemAllocator`."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.emulator import ERROR_EXIT, run_binary

from .conftest import build, parse_named_lines

pytestmark = pytest.mark.slow  # compiles C++ against the emulator


@pytest.fixture(scope="module")
def more(emu_cache):
    binary = build(emu_cache, "units_more")
    r = run_binary(binary)  # hazard detection on: the flags must order what they claim
    assert r.returncode == 0, r.stderr
    values = "\n".join(ln for ln in r.stdout.splitlines() if not ln.startswith("DumpTensor:"))
    return binary, r.stdout, parse_named_lines(values)


def _stops_with(more, case: str, message: str) -> None:
    """`./units_more <case>` stops with the emulator's error exit and `message` on stderr."""
    binary, _, _ = more
    r = run_binary(binary, [case])
    assert r.returncode == ERROR_EXIT, r.stderr
    assert message in r.stderr, r.stderr


def test_event_ids_fetch_alloc_release(more):
    _, _, v = more
    np.testing.assert_array_equal(v["event_ids"], [0, 0, 0, 1, 0])


def test_gelu_family_matches_the_public_formulas(more):
    _, _, v = more
    x = v["x"]
    gelu = x / (1 + np.exp(-1.59576912 * (x + 0.044715 * x ** 3)))
    faster = x / (1 + np.exp(-1.702 * x))
    sgn = (x + 1e-12) / np.abs(x + 1e-12)
    v2 = x * (sgn * (-0.1444 * (np.minimum(np.abs(0.7071 * x), 1.769) - 1.769) ** 2 + 0.5) + 0.5)
    for name, want in (("gelu", gelu), ("faster_gelu", faster), ("faster_gelu_v2", v2)):
        np.testing.assert_allclose(v[name], want.astype(np.float32), rtol=1e-6, atol=1e-7, err_msg=name)
    assert abs(v["gelu"][40] - 1.0 * (0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (1 + 0.044715))))) < 2e-3  # GELU(1) ~ 0.841


def test_init_output_dump_tensor_and_c0(more):
    _, out, v = more
    np.testing.assert_array_equal(v["init_output"], np.full(64, 1.5))
    assert "DumpTensor: desc=7, LocalTensor, 4 elements of float, shape [8, 8]: -4 -3.875 -3.75 -3.625" in out
    assert "DumpTensor: desc=9, LocalTensor, 3 elements of float: -3.75 -3.625 -3.5" in out  # DumpAccChkPoint(x, 9, 2, 3)
    assert v["c0"][0] == 32


def test_kernel_assert_with_a_message_stops_the_run(more):
    binary, _, _ = more
    r = run_binary(binary, ["assert_fail"])
    assert r.returncode == ERROR_EXIT, r.stderr
    assert "ascx-emu: error: assert: Assertion `n == 4' failed. n is 3, expected 4" in r.stderr
    assert "units_more.cpp:" in r.stderr


def test_local_tensor_operators(more):
    """`s = a + b` and its kin run the whole-tensor instruction; `t(i)` reads and writes an
    element; SetAddrWithOffset places a tensor an element offset into another's buffer."""
    _, _, v = more
    i = np.arange(64, dtype=np.float64)
    a, b = i, 2.0 + i % 4
    s = a + b
    ops = v["tensor_ops"].reshape(6, 64)
    np.testing.assert_array_equal(ops[0], s)
    np.testing.assert_array_equal(ops[1], s * b)
    np.testing.assert_allclose(ops[2], s, rtol=1e-6)  # (s * b) / b
    np.testing.assert_allclose(ops[3], b, rtol=1e-6)  # s - a
    u = 0x0F0F + np.arange(64)
    np.testing.assert_array_equal(ops[4], u & 0x00FF)
    np.testing.assert_array_equal(ops[5], u | 0x00FF)
    np.testing.assert_array_equal(v["tensor_sizes"], [64, 640 * 4])  # SetBufferLen size; 640 floats in
    np.testing.assert_array_equal(v["shape_info"], [3, 2, 3, 4, 0])  # SetShapeInfo on a copy only


def test_broadcast_along_each_axis(more):
    """[3, 1] -> [3, 5] (axis 1, k not 32 B aligned), [1, 8] -> [4, 8] (axis 0), [1] -> [10]."""
    _, _, v = more
    src = 1.0 + np.arange(9)
    want = np.concatenate([np.broadcast_to(src[:3, None], (3, 5)).ravel(),
                           np.broadcast_to(src[None, :8], (4, 8)).ravel(), np.full(10, src[8])])
    np.testing.assert_array_equal(v["broadcast"], want)


def test_broadcast_of_shapes_that_do_not_broadcast_is_an_error(more):
    _stops_with(more, "broadcast_bad", "ascx-emu: error: Broadcast: srcShape[0] = 2, dstShape[0] = 3: the source must be "
                "1 along axis 1 and equal to the destination elsewhere")


def test_tbufpool_lays_buffers_out_inside_its_bytes(more):
    """Pool A takes 1 KB of UB; its TBuf (100 B -> 128 B), a 2 x 256 B queue and a 128 B sub-pool
    follow one another inside it; pool B, made with shareBuf = A, starts on A's first byte."""
    _, _, v = more
    np.testing.assert_array_equal(v["pool_offsets"], [128, 384, 640, 0, 1024])


def test_tbufpool_of_too_many_buffers_is_an_error(more):
    _stops_with(more, "pool_full", "ascx-emu: error: TBufPool::InitBuffer: more than 1 buffers from one TBufPool (its bufIDSize)")


def test_local_mem_allocator_hands_out_tensors_in_order(more):
    """Alloc<float, 10> (40 B -> 64 B) at 0, Alloc<VECIN, half, 16> at 64, Alloc<float>(8) at 96;
    GetCurAddr is 128; the tensors work with vector instructions (t2 = t0 + 1)."""
    _, _, v = more
    am = v["local_mem_allocator"]
    np.testing.assert_array_equal(am[:5], [0, 64, 96, 128, 10])
    np.testing.assert_array_equal(am[5:], 0.5 * np.arange(8) + 1.0)


def test_local_mem_allocator_past_the_memory_is_an_error(more):
    _stops_with(more, "alloc_full", "ascx-emu: error: LocalMemAllocator::Alloc: UB over-allocation: 1048576 elements of "
                "float at offset 128 need 4194432 bytes, capacity is 196608 bytes")


def test_list_tensor_desc_parses_the_documented_layout(more):
    """ListTensorDesc over [offset 64 | (0,2) 2 4 | (1,3) 2 3 4 | ptr0 ptr1]: two tensors; the
    second's TensorDesc has dim 3, index 1, shape 2 x 3 x 4, a GlobalTensor of 24 floats, and
    the data pointers lead to the tensors (t0[3] = 103, t1[5] = 205)."""
    _, _, v = more
    np.testing.assert_array_equal(v["list_tensor_desc"], [2, 3, 1, 2, 3, 4, 24, 205, 103, 1])
    # the shape address receives the dim shape values and nothing more (the public AddN sample
    # gives a buffer of exactly dim words)
    np.testing.assert_array_equal(v["list_shape_buf"], [2, 3, 4, 7])


def test_list_tensor_desc_index_past_the_list_is_an_error(more):
    _stops_with(more, "list_index", "ListTensorDesc::GetDataPtr: index 2 of a list of 2 tensors")


def test_pad_and_unpad_with_their_host_tilings(more):
    """Pad: 16 x 15 half + a column of 7 -> 16 x 16 (rows 0-2 shown); an 8 x 16 float's two
    redundant columns refilled with -1 in place (rows 0-1); UnPad: 8 x 16 half without its last
    two columns -> 8 x 14, packed (rows 0-1). Tilings from PadTilingFunc / UnPadTilingFunc."""
    _, _, v = more
    pad = v["pad_unpad"]
    row15 = np.append(np.arange(15), 7)
    np.testing.assert_array_equal(pad[:48], np.tile(row15, 3))
    f = np.arange(32, dtype=float).reshape(2, 16)
    f[:, 14:] = -1
    np.testing.assert_array_equal(pad[48:80], f.reshape(-1))
    np.testing.assert_array_equal(pad[80:], np.tile(np.arange(14), 2))


def test_pad_to_an_unaligned_width_is_an_error(more):
    _stops_with(more, "pad_unaligned", "Pad: leftPad 0 + width 15 + rightPad 2 = 17 elements of half is not 32 B aligned")


def test_static_tensor_constructor_places_the_tensor_at_its_address(more):
    _, _, v = more
    st = v["static_tensor"]
    assert st[0] == 512 and st[1] == 8  # byte address and element count as given
    np.testing.assert_array_equal(st[2:], (np.arange(8) - 2.0) * 3.0)


@pytest.mark.parametrize("case, message", [
    ("static_misaligned", "LocalTensor(pos, addr, tileSize): address 100 in UB is not 32-byte aligned"),
    ("static_past_end", "LocalTensor(pos, addr, tileSize): 1048576 elements of float at byte 0 end at byte 4194304, past UB's"),
])
def test_static_tensor_constructor_checks_its_address(more, case, message):
    _stops_with(more, case, message)


def test_init_soc_state_turns_atomic_accumulation_off(more):
    """DataCopy to GM, SetAtomicAdd, InitSocState, the same DataCopy: GM holds the values once."""
    _, _, v = more
    np.testing.assert_array_equal(v["init_soc_state"], (np.arange(8) - 2.0) * 3.0)
