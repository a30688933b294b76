"""The compiler's auto-sync and the device's GM bounds on the emulator (issue 26 item 4).

Hand-written code runs with bisheng's `--cce-auto-sync` (on by default in kernel-launch and op
projects): scalar accesses wait for earlier MTE2 / MTE3 / V accesses of the same bytes, so
they are not hazards; every other pipe pair still is. `ASCX_AUTO_SYNC=off` (or a unit built
with `-DASCX_EMU_NO_AUTO_SYNC`, as emitted kernels are) reports them again. A GM access past a
view's `SetGlobalBuffer` size but inside its allocation warns; outside the allocation it fails.
One compile of `cases/units_sync.cpp` serves the unit cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer.codegen import compile_emitted, emit_ascendc
from transformer.emulator import ERROR_EXIT, run_binary
from transformer.parser import parse

from .conftest import build

pytestmark = pytest.mark.slow  # compiles C++ against the emulator
HAZARD_EXIT = 4


@pytest.fixture(scope="module")
def sync_bin(emu_cache: Path) -> Path:
    return build(emu_cache, "units_sync")


@pytest.mark.parametrize("case, first, want", [
    ("s_after_mte2", "MTE2", "s_after_mte2 0 63"),
    ("s_after_v", "V", "s_after_v 4.5"),
    ("s_write_after_mte3", "MTE3", "s_write_after_mte3 9"),
])
def test_scalar_after_mte2_mte3_v_is_auto_synced(sync_bin, case, first, want):
    r = run_binary(sync_bin, [case])
    assert r.returncode == 0, r.stderr
    assert want in r.stdout and "hazard" not in r.stderr
    off = run_binary(sync_bin, [case], env={"ASCX_AUTO_SYNC": "off"})
    assert off.returncode == HAZARD_EXIT, (off.returncode, off.stderr)
    assert re.search(rf"sync hazard: (RAW|WAR) on UB\[[^)]*\) on core b0.aiv0: {first} at \S*units_sync.cpp:\d+ and S at", off.stderr), off.stderr


def test_pairs_without_the_scalar_unit_are_still_hazards(sync_bin):
    r = run_binary(sync_bin, ["mte2_v_not_auto"])
    assert r.returncode == HAZARD_EXIT, r.stderr
    assert "RAW on UB" in r.stderr and "MTE2 at" in r.stderr and "V at" in r.stderr


def test_auto_sync_prices_the_wait(sync_bin, tmp_path):
    """The scalar read waits for the copy it depends on: the profile has no hazard and the
    core's scalar clock runs past the MTE2 copy's end."""
    import json

    from transformer.targets import get_target
    from transformer.timing.params import params_text

    params = tmp_path / "params.txt"
    params.write_text(params_text(get_target()))
    out = tmp_path / "p.json"
    r = run_binary(sync_bin, ["s_after_mte2"], env={"ASCX_TIMING_PARAMS": str(params), "ASCX_PROFILE": str(out)})
    assert r.returncode == 0, r.stderr
    core = json.loads(out.read_text())["launches"][0]["cores"][0]
    assert core["end"] >= core["busy"]["MTE2"] + core["busy"]["S"]


def test_gm_view_overrun_inside_the_allocation_warns(sync_bin):
    r = run_binary(sync_bin, ["gm_view_overrun"])
    assert r.returncode == 0, r.stderr
    assert "gm_view_overrun 40" in r.stdout  # the device reads past the view: element 40 of the buffer
    assert r.stderr.count("ascx-emu: warning: DataCopy: GM access out of bounds") == 2, r.stderr  # two lines, once each
    assert "leaves 16 elements" in r.stderr and "inside the 512-byte GmAlloc allocation" in r.stderr


def test_gm_access_outside_the_allocation_fails(sync_bin):
    r = run_binary(sync_bin, ["gm_alloc_overrun"])
    assert r.returncode == ERROR_EXIT, r.stderr
    assert "ascx-emu: error: DataCopy: GM access out of bounds" in r.stderr
    assert "outside its 512-byte GmAlloc allocation" in r.stderr


# A scalar nest reads a UB local that vector code wrote: the emitted kernel orders it with its
# own V -> S flag (tests/codegen/test_fuzz_regressions.py, fuzz seed 580693466).
SCALAR_AFTER_VECTOR = """
kernel k(B: bf16[3]) -> (D: bf16[2, 2, 2]) {
  local Y: f32[2, 2] @ub
  for qi in 0..2 {
    for l in 0..2 {
      Y[qi, l] = B[0]
    }
    for p in 0..2 {
      for k in 0..2 {
        D[p, qi, k] = f16(bf16(3.0) + (Y[qi, qi] + Y[qi, qi]))
      }
    }
  }
}
"""


def test_emitted_kernels_are_checked_without_auto_sync(tmp_path):
    """Auto-sync must not hide our own emission bugs: removing each wait of an emitted kernel
    in turn (test-only switch), the V -> S (or MTE2 -> S) one is still reported as a hazard
    whose second pipe is the scalar unit."""
    em = emit_ascendc(parse(SCALAR_AFTER_VECTOR, "scalar_after_vector.ir"))
    assert "#define ASCX_EMU_NO_AUTO_SYNC" in em.source
    binary = compile_emitted(em)
    data = tmp_path / "data"
    data.mkdir()
    (data / "B.bin").write_bytes(b"\x80\x3f" * 3)  # bf16 1.0
    scalar_reports = 0
    for k in range(1, 5):
        r = run_binary(binary, [str(data)], env={"ASCX_EMU_TEST_DROP_WAIT": str(k)})
        if r.returncode == HAZARD_EXIT and re.search(r"sync hazard: RAW on UB\[[^)]*\) on core \S+: (V|MTE2) at \S+ and S at", r.stderr):
            scalar_reports += 1
    assert scalar_reports >= 1
