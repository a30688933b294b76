"""Each hardware failure mode stops the kernel with exit 3 and a located message."""

from __future__ import annotations

import pytest

from transformer.emulator import ERROR_EXIT, run_binary

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)

CASES = {
    "ub_overalloc": ("TPipe::InitBuffer", "UB over-allocation", "capacity is 196608 bytes"),
    "l0a_overalloc": ("TPipe::InitBuffer", "L0A over-allocation", "capacity is 65536 bytes"),
    "misaligned": ("Add", "misaligned local address", "UB address 6 is not 32-byte aligned"),
    "datacopy_len": ("DataCopy", "not a multiple of 32 B", "silently truncates"),
    "repeat_255": ("Adds", "repeatTimes 300 out of range [0, 255]"),
    "que_buffers": ("TPipe::InitBuffer", "more than 8 queue buffers on position VECIN"),
    "deque_empty": ("TQue::DeQue", "DeQue on an empty VECIN queue"),
    "alloc_in_use": ("TQue::AllocTensor", "all 1 buffers of the VECOUT queue are in use"),
    "flag_twice": ("SetFlag", "SetFlag<HardEvent::MTE2_V>(0) set twice"),
    "wait_no_set": ("WaitFlag", "WaitFlag<HardEvent::V_MTE3>(1) without a preceding SetFlag"),
    "unbalanced": ("kernel end", "unbalanced flags: SetFlag<HardEvent::MTE3_MTE2>(2)"),
    "local_oob": ("Adds", "local tensor access out of its buffer", "buffer is [0, 256)"),
    "getvalue_oob": ("LocalTensor::GetValue", "out of its buffer"),
    "gm_oob": ("DataCopy", "GM access out of bounds", "leaves 16 elements"),
    "use_after_free": ("Adds", "used after FreeTensor"),
    "cube_on_aiv": ("TPipe::InitBuffer", "L1 does not exist on an AIV core"),
    "fixpipe_quant": ("Fixpipe", "needs quantPre = QuantMode_t::F322F16"),
    "deadlock": ("CrossCoreWaitFlag", "deadlock"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_mode_reported(negative_bin, case):
    r = run_binary(negative_bin, [case], timeout=60)
    assert r.returncode == ERROR_EXIT, (r.returncode, r.stdout, r.stderr)
    assert "no error" not in r.stdout
    api, *fragments = CASES[case]
    assert f"ascx-emu: error: {api}: " in r.stderr, r.stderr
    for frag in fragments:
        assert frag in r.stderr, r.stderr
    assert "negative.cpp:" in r.stderr  # kernel source location
    assert "on core b0." in r.stderr
