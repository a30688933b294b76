"""Validation of the timing model (issue item 5; the table in docs/timing.md) on
hand-written kernels: one compile of `cases/validation.cpp`, each case one timing-only run."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer.emulator import compile_source
from transformer.targets import get_target
from transformer.timing.params import model_parameters
from transformer.timing.profile import parse_summary, run_profiled

SRC = Path(__file__).parent / "cases" / "validation.cpp"
pytestmark = pytest.mark.slow
T = get_target("ascend910b2")
P = model_parameters(T)


@pytest.fixture(scope="module")
def run():
    binary = compile_source(SRC, name="validation")

    def go(*args: object):
        summary, _ = run_profiled(binary, T, [str(a) for a in args], timing_only=True)
        launch = summary["launches"][0]
        crit = max(launch["cores"], key=lambda c: c["end"])
        return summary, launch, crit

    return go


def test_copy_time_is_linear_in_bytes_and_512_alignment_is_faster(run):
    busy = [run("copy", n, 0)[2]["busy"]["MTE2"] for n in (8192, 16384, 32768, 65536)]
    steps = [b - a for a, b in zip(busy, busy[1:])]
    assert steps[1] == pytest.approx(2 * steps[0]) and steps[2] == pytest.approx(2 * steps[1])
    assert steps[0] == pytest.approx(8192 * P["MTE2.ub_byte"])
    unaligned = run("copy", 65536, 32)[2]["busy"]["MTE2"]
    start_up = P["MTE2.instr"] + P["MTE2.block"]
    assert (unaligned - start_up) / (busy[3] - start_up) == pytest.approx(1.4)


def test_double_buffering_moves_time_from_sum_to_max(run):
    _, _, one = run("pipe", 1)
    _, _, two = run("pipe", 2)
    b = two["busy"]
    assert b["MTE2"] == pytest.approx(b["V"], rel=0.1)  # balanced load / compute
    assert one["end"] >= 0.9 * (b["MTE2"] + b["V"])
    assert two["end"] <= 1.2 * max(b["MTE2"], b["V"], b["MTE3"])


def test_scalar_fallback_is_at_least_20x_slower(run):
    _, _, vec = run("ew", "vec", 16384)
    _, _, sca = run("ew", "scalar", 16384)
    assert sca["busy"]["S"] >= 20 * vec["busy"]["V"]
    assert sca["end"] >= 20 * vec["end"]
    assert sca["scalar_cycles"] / sca["end"] > 0.9


def test_multicore_speedup_compute_bound_and_hbm_saturation(run):
    # every block does the same work: speed-up = B * t(1) / t(B)
    c1 = run("mc", "compute", 1)[1]["makespan"]
    c48 = run("mc", "compute", 48)[1]["makespan"]
    c96 = run("mc", "compute", 96)[1]["makespan"]
    assert 48 * c1 / c48 == pytest.approx(48, rel=0.05)
    assert 96 * c1 / c96 == pytest.approx(48, rel=0.1)  # two waves on 48 AIV cores
    s1, m1, _ = run("mc", "memory", 1)
    s48, m48, _ = run("mc", "memory", 48)
    speedup = 48 * s1["cycles"] / s48["cycles"]
    assert speedup < 30  # saturates: 48 cores would need 48x the per-core bandwidth
    assert m48["hbm_cycles"] > m48["makespan"]
    r = parse_summary(s48, T, kernel="mc")
    assert r.bound == "HBM"


def test_matmul_4096_cube_work_and_what_bounds_it(run):
    """Cube work is priced at the calibrated fractal rate per AIC; the model says this blocked
    kernel (K steps of 128) is bound by GM->L1 traffic, not by the cube: docs/timing.md
    reports the 1.3x-of-cube-peak goal as missed with this profile."""
    summary, launch, crit = run("mm", 4096, 4096, 4096)
    fractals = sum(c["features"]["M"]["fractal"] for c in launch["cores"])
    assert fractals == (4096 // 16) ** 3
    cube_roof = fractals * P["M.fractal"] / 24
    r = parse_summary(summary, T, kernel="mm")
    assert r.details["roofline_cycles"]["cube"] == pytest.approx(cube_roof)
    aic_m = max(c["busy"]["M"] for c in launch["cores"])
    assert cube_roof <= aic_m <= 1.1 * cube_roof  # 512 C tiles over 24 cores: 22 on the busiest
    assert r.bound in ("MTE2", "HBM")
    assert crit["busy"]["MTE2"] > crit["busy"]["M"]


def test_l2_is_an_lru_over_lines_not_a_footprint_test():
    """With a 1 MiB L2 (a target override), four 512 KiB chunks each read three times in a
    row: the footprint (2 MiB) exceeds L2, but each re-read is one chunk away, so the LRU
    hits it: HBM carries the footprint only. Re-reading the whole 2 MiB three times instead
    (reuse distance 2 MiB > L2) misses every time; below L2 the footprint rule applies."""
    import dataclasses

    from transformer.targets._base import Fact

    small = dataclasses.replace(T, facts=dict(T.facts) | {"l2_bytes": Fact(1 << 20, "assumed", "test")})
    binary = compile_source(SRC, name="validation")

    def launch(*args: object) -> dict:
        summary, _ = run_profiled(binary, small, [str(a) for a in args], timing_only=True)
        return summary["launches"][0]

    local = launch("l2", 512 << 10, 4, 3)
    assert local["footprint_bytes"] == pytest.approx(2 << 20, rel=1e-3) and local["gm_bytes"] == 3 * (2 << 20)
    assert local["hbm_bytes"] == pytest.approx(2 << 20, rel=1e-2)  # only first touches miss
    far = launch("l2", 2 << 20, 1, 3)
    # every touch misses, but the line two consecutive 32 KiB copies share (GmAlloc is not
    # 512 B aligned) is hit by the second
    assert far["hbm_bytes"] == pytest.approx(far["gm_bytes"], rel=3e-2) and far["hbm_bytes"] > 2.9 * local["hbm_bytes"]
    fits = launch("l2", 256 << 10, 1, 3)
    assert fits["hbm_bytes"] == pytest.approx(256 << 10, rel=1e-2)
    assert local["l2_cycles"] == pytest.approx(local["gm_bytes"] / P["l2_bytes_per_cycle"])


def test_mix_kernel_overlaps_cube_and_vector(run):
    summary, launch, _ = run("mix", 100)
    aic = next(c for c in launch["cores"] if c["kind"] == "AIC")
    aiv = [c for c in launch["cores"] if c["kind"] == "AIV"]
    assert aic["busy"]["M"] > 0.4 * aiv[0]["busy"]["V"]
    assert launch["makespan"] < 0.8 * (aic["busy"]["M"] + aiv[0]["busy"]["V"])
