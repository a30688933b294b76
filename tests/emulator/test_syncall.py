"""SyncAll: the documented all-core barrier (hardware and software forms, AIV-only and mix
launches), and its failure modes: a missing participant is a deadlock report naming the
blocks (exit 3), never a hang (cases/syncall.cpp)."""

from __future__ import annotations

import pytest

from transformer.emulator import ERROR_EXIT, run_binary

from .conftest import build


@pytest.fixture(scope="module")
def syncall_bin(emu_cache):
    return build(emu_cache, "syncall")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["two_phase", "two_phase_soft"])
def test_syncall_orders_two_phases_across_8_blocks(syncall_bin, case):
    r = run_binary(syncall_bin, [case], timeout=60)
    assert r.returncode == 0, r.stderr
    # block b reads the slice block b+1 wrote before the barrier: (b + 2) * 10
    assert r.stdout.split() == [case, "20", "30", "40", "50", "60", "70", "80", "10"]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["mix", "mix_all"])
def test_syncall_in_mix_mode_sees_every_vector_core(syncall_bin, case):
    r = run_binary(syncall_bin, [case], timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["mix"] + ["36"] * 8  # 1 + 2 + ... + 8 written before the barrier


FAILURES = {
    "missing": ("deadlock: blocks 0, 1, 2, 4, 5, 6, 7 wait in SyncAll #1 (7 of 8 participants arrived)",
                "but block 3 ended", "on core b0.aiv0"),
    "twice": ("deadlock: block 5 waits in SyncAll #2", "blocks 0, 1, 2, 3, 4, 6, 7 ended"),
    "small_ws": ("gmWorkspace holds 16 bytes", "needs at least 256 (32 B per core)"),
    "used_cores": ("block 4 takes part in a SyncAll of usedCores = 4",),
    "mix_missing": ("deadlock: every running core is blocked", "SyncAll #1 (7 of 8 cores arrived; missing b1.aiv0)"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(FAILURES))
def test_syncall_failure_is_reported_not_hung(syncall_bin, case):
    r = run_binary(syncall_bin, [case], timeout=60)
    assert r.returncode == ERROR_EXIT, (r.returncode, r.stdout, r.stderr)
    assert "ascx-emu: error: SyncAll: " in r.stderr
    assert "syncall.cpp:" in r.stderr
    for frag in FAILURES[case]:
        assert frag in r.stderr, r.stderr
