"""UB bank conflicts on the timing model (issue 26 item 6 = issue 25 item 2), one compile of
`cases/bank_conflicts.cpp`: our own kernels with the structure of the two public best-practice
samples about bank conflicts (the queue Add of 1 x 4096 float, v1 conflicting / v2 not; the
static-tensor Add of 72 x 4096 float, v3 linear / v4 moved), and the write-conflict examples of
the public page "Avoiding Bank Conflicts in the Unified Buffer" (dst block stride 16: 8 beats a
repeat; 8: 4 beats). The model (timing.h `bank_extra_beats`, docs/timing.md "UB banks") charges
`V.bank_beat` per beat past the first of each repeat."""

from __future__ import annotations

import pytest

from transformer.targets import get_target
from transformer.timing.params import model_parameters
from transformer.timing.profile import run_profiled

from .conftest import build

pytestmark = pytest.mark.slow  # compiles C++ against the emulator

T = get_target("ascend910b2")
P = model_parameters(T)


@pytest.fixture(scope="module")
def run(emu_cache):
    binary = build(emu_cache, "bank_conflicts")

    def go(*args: str) -> tuple[dict, dict]:
        summary, r = run_profiled(binary, T, list(args))  # full arithmetic: each case checks its result
        assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
        assert summary["hazards"] == [], summary["hazards"]
        launch = summary["launches"][0]
        return summary, max(launch["cores"], key=lambda c: c["end"])

    return go


def _v(core: dict, feature: str) -> float:
    return core["features"]["V"][feature]


def test_the_bank_layout_facts_are_documented():
    for name, value in (("ub_bank_groups", 16), ("ub_banks_per_group", 3), ("ub_bank_row_bytes", 32), ("ub_bank_depth", 128)):
        assert T.fact(name).value == value and T.fact(name).status == "documented"
    # 48 banks of 128 rows x 32 B are the whole UB
    assert 16 * 3 * 128 * 32 == T.scope("ub").physical_bytes


def test_write_conflicts_take_the_beats_the_page_gives(run):
    """dst 0x1FE00, block stride 16: the 8 blocks of a repeat are in one bank group -> 8 beats;
    stride 8: two groups -> 4 beats; stride 1: 1 beat. 8 repeats of Adds (+ a conflict-free
    Duplicate of 8 repeats)."""
    beats = {}
    for stride in (16, 8, 1):
        _, core = run("stride", str(stride))
        beats[stride] = _v(core, "bank_beat")
    assert beats == {16: 8 * 7, 8: 8 * 3, 1: 0}


def test_queue_add_sample_v1_conflicts_v2_does_not(run):
    """v1: x 0, y 0x4000 read the same bank groups (read-read) and z 0x8000 is written to x's
    banks (read-write): 3 beats a repeat; v2 (y 0x4100, z 0x10000): 1 beat. 4096 floats are
    64 repeats of one Add."""
    s1, c1 = run("add", "v1")
    s2, c2 = run("add", "v2")
    assert (_v(c1, "repeat"), _v(c2, "repeat")) == (64, 64)
    assert (_v(c1, "bank_beat"), _v(c2, "bank_beat")) == (64 * 2, 0)
    v1, v2 = c1["busy"]["V"], c2["busy"]["V"]
    assert v1 - v2 == pytest.approx(128 * P["V.bank_beat"])
    assert v1 / v2 == pytest.approx((P["V.instr"] + 3 * 64 * P["V.repeat"]) / (P["V.instr"] + 64 * P["V.repeat"]))
    assert s1["cycles"] > s2["cycles"]  # the launch and the copies dominate this one-tile kernel


def test_static_tensor_sample_v3_conflicts_v4_does_not(run):
    """v3 lays x0 x1 y0 y1 z0 z1 from UB byte 0 (x and y of a buffer 32 KB apart: the same
    banks, read together): 2 beats a repeat; v4 (y 256 B into the next section, z in the
    third): 1 beat. 9 tiles of 4096 floats a core = 9 x 64 repeats."""
    s3, c3 = run("static", "v3")
    s4, c4 = run("static", "v4")
    assert (_v(c3, "bank_beat"), _v(c4, "bank_beat")) == (9 * 64, 0)
    assert c3["busy"]["V"] == pytest.approx(9 * (P["V.instr"] + 2 * 64 * P["V.repeat"]))
    assert c4["busy"]["V"] == pytest.approx(9 * (P["V.instr"] + 64 * P["V.repeat"]))
    assert s3["cycles"] > s4["cycles"]
