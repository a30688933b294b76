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


# env of a case: `barrier_waves` runs with the target's core counts known (timing params)
ENV = {"barrier_waves": {"ASCX_TIMING_PARAMS": "aic_cores 2\naiv_cores 4\n"}}
CASES["barrier_waves"] = ("CrossCoreWaitFlag", "waits for all 3 blocks of the launch, but the chip runs 2 at once",
                          "never completes on the chip")


def _env(case: str, tmp_path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    env = dict(ENV.get(case, {}))
    if "ASCX_TIMING_PARAMS" in env:
        f = tmp_path / "params.txt"
        f.write_text(env["ASCX_TIMING_PARAMS"])
        env["ASCX_TIMING_PARAMS"] = str(f)
    return env


@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_mode_reported(negative_bin, case, tmp_path):
    r = run_binary(negative_bin, [case], timeout=60, env=_env(case, tmp_path))
    assert r.returncode == ERROR_EXIT, (r.returncode, r.stdout, r.stderr)
    assert "no error" not in r.stdout
    api, *fragments = CASES[case]
    assert f"ascx-emu: error: {api}: " in r.stderr, r.stderr
    for frag in fragments:
        assert frag in r.stderr, r.stderr
    assert "negative.cpp:" in r.stderr  # kernel source location
    assert ("on core b" if case in ENV else "on core b0.") in r.stderr  # (any block of a barrier may stop first)


def test_barrier_waits_for_slow_cores_without_timing_out(negative_bin):
    """Issue 29, item 15: a core waiting at a barrier while another core still works is not
    a hang: the wait times out only when no core progresses for ASCX_EMU_DEADLOCK_TIMEOUT
    (it fired after 10 s of wall clock, however busy the other cores were)."""
    r = run_binary(negative_bin, ["slow_barrier"], timeout=60, env={"ASCX_EMU_DEADLOCK_TIMEOUT": "0.1"})
    assert r.returncode == 0 and "no error" in r.stdout, (r.returncode, r.stdout, r.stderr)
