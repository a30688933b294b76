"""Sync-hazard detection (happens-before over flags, queues and barriers): hand-written
kernels missing one synchronisation are reported with both source lines, pipes and the
buffer; their fixed versions report nothing; a flag removed from an emitted kernel through
the test-only switch is caught. One compile of `cases/hazards.cpp` serves every case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer.emulator import compile_source, run_binary

CASES = Path(__file__).parent / "cases"
SRC = CASES / "hazards.cpp"
pytestmark = pytest.mark.slow


def _line(marker: str) -> int:
    for i, text in enumerate(SRC.read_text().splitlines(), start=1):
        if f"// @{marker}" in text:
            return i
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def hazards_bin() -> Path:
    return compile_source(SRC, name="hazards")


# case -> expected (kind, first pipe, first marker, second pipe, second marker) reports
EXPECTED = {
    "mte2_v": [("RAW", "MTE2", "copy_in", "V", "compute")],
    "v_mte3": [("RAW", "V", "compute", "MTE3", "copy_out")],
    "v_mte2": [("WAR", "V", "compute", "MTE2", "copy_in")],
    "queue_free": [("RAW", "MTE2", "q_copy_in", "MTE3", "q_copy_out"), ("WAR", "MTE3", "q_copy_out", "MTE2", "q_copy_in")],
    "whole_reduce_raw": [("RAW", "V", "whole_reduce", "MTE3", "wr_copy_out")],
}
REPORT = re.compile(r"sync hazard: (RAW|WAR|WAW) on (UB\[0x[0-9a-f]+, 0x[0-9a-f]+\)) on core \S+: (\S+) at \S*hazards\.cpp:(\d+) "
                    r"and (\S+) at \S*hazards\.cpp:(\d+)")


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_missing_sync_is_reported(hazards_bin, case):
    r = run_binary(hazards_bin, [case])
    assert r.returncode == 4, r.stderr
    found = {(m[0], m[2], int(m[3]), m[4], int(m[5])) for m in REPORT.findall(r.stderr)}
    want = {(k, p1, _line(l1), p2, _line(l2)) for k, p1, l1, p2, l2 in EXPECTED[case]}
    assert found == want, r.stderr


@pytest.mark.parametrize("case", ["fixed_flags", "fixed_queue", "fixed_whole_reduce", "fixed_bias"])
def test_fixed_versions_are_clean(hazards_bin, case):
    r = run_binary(hazards_bin, [case])
    assert r.returncode == 0, r.stderr
    assert "hazard" not in r.stderr


def test_missing_flag_before_a_bias_mmad_is_reported(hazards_bin):
    """The bias table (C2) is a memory of its own: an Mmad reading it before the MTE1 copy that
    fills it is ordered (no MTE1 -> M flag) is a RAW on BT, with both lines."""
    r = run_binary(hazards_bin, ["mte1_m_bias"])
    assert r.returncode == 4, r.stderr
    assert re.search(rf"sync hazard: RAW on BT\[0x0, 0x40\) on core \S+: MTE1 at \S*hazards\.cpp:{_line('bt_copy')} "
                     rf"and M at \S*hazards\.cpp:{_line('bias_mmad')}", r.stderr), r.stderr


def test_report_mode_and_off(hazards_bin, tmp_path):
    """ASCX_HAZARDS=report keeps going (the profile lists them); off disables the check."""
    out = tmp_path / "p.json"
    r = run_binary(hazards_bin, ["mte2_v"], env={"ASCX_HAZARDS": "report", "ASCX_PROFILE": str(out)})
    assert r.returncode == 0 and "y0" in r.stdout
    import json

    hz = json.loads(out.read_text())["hazards"]
    assert [(h["kind"], h["first_pipe"], h["second_pipe"]) for h in hz] == [("RAW", "MTE2", "V")]
    assert hz[0]["second_line"] == f"hazards.cpp:{_line('compute')}"
    assert run_binary(hazards_bin, ["mte2_v"], env={"ASCX_HAZARDS": "off"}).returncode == 0


def test_dropped_flag_in_a_fixed_kernel_is_caught(hazards_bin):
    """The test-only switch removes the k-th wait's ordering: every choice that matters is caught."""
    caught = 0
    for k in range(1, 6):
        r = run_binary(hazards_bin, ["fixed_flags"], env={"ASCX_EMU_TEST_DROP_WAIT": str(k)})
        if r.returncode == 4:
            caught += 1
            assert REPORT.search(r.stderr), r.stderr
    assert caught >= 3
