"""Calibration on a dataset (`transformer.timing.fit_dataset`), against a stand-in profiler
whose "hardware" is the model's own form with known parameters: stage 1 recovers the pipe
parameters from published pipe ratios (one scale when the points cannot separate them),
stage 2 the launch terms and the HBM bandwidth from totals, and leave-one-out predicts
noise-free points exactly."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from transformer.targets import get_target
from transformer.timing.dataset import Point
from transformer.timing.fit_dataset import (
    calibrate_dataset, dataset_override_text, leave_one_out, prior_target, summary, Score)
from transformer.timing.params import PIPE_FEATURES, hbm_bytes_per_cycle
from transformer.timing.result import PipeStats
from transformer.targets._override import parse_override
from transformer.diagnostics import Source

PRIOR = prior_target("ascend910b2")
CLOCK = float(PRIOR.value("clock_mhz"))
# the "hardware": M at 1.25 cycles per fractal (instr 10 -> 12.5: a common scale), MTE2
# 2.1x the prior per byte and burst, launch 14,000 + 9,000 more in MIX mode, HBM 1,400 GB/s
TRUE = {"M": 1.25, "MTE2": 2.1, "launch": 14000.0, "launch_mix": 9000.0, "hbm_gbps": 1400.0}
# the L2 term is not fitted: the "hardware" and the model share its rate
L2_BYTES_PER_CYCLE = 2640.0


def _point(pid: str, family: str, feats: dict, mode: str = "AIC", hbm_bytes: float = 0.0, ratios: bool = False,
           l2_bytes: float = 0.0) -> Point:
    return Point(id=pid, family=family, role="fit", chip="test", target="ascend910b2", kernel="synthetic", shape="-",
                 dtype="-", measured_us=1.0, source={"repo": "test/test", "path": "-"},
                 ascx={"kind": "synthetic", "feats": feats, "mode": mode, "hbm_bytes": hbm_bytes, "l2_bytes": l2_bytes},
                 pipe_ratios={"M": 0.0, "MTE2": 0.0} if ratios else {})


def _busy(target, pipe: str, feats: dict) -> float:
    return sum(float(target.value(PIPE_FEATURES[pipe][f])) * x for f, x in feats.get(pipe, {}).items())


def _run(p: Point, target) -> SimpleNamespace:
    """What the model says about `p` under `target` (the emulator's part, in closed form)."""
    a = p.ascx
    pipes = tuple(PipeStats(pipe, "aic", _busy(target, pipe, a["feats"]), 0.0, dict(f)) for pipe, f in a["feats"].items())
    makespan = max(s.busy_cycles for s in pipes)
    hbm = a["hbm_bytes"] / hbm_bytes_per_cycle(target)
    l2 = a["l2_bytes"] / L2_BYTES_PER_CYCLE
    launch = float(target.value("timing_launch_cycles")) + (float(target.value("timing_launch_mix_cycles")) if a["mode"] == "MIX" else 0)
    bound = "HBM" if hbm > max(makespan, l2) else "L2" if l2 > makespan else max(pipes, key=lambda s: s.busy_cycles).pipe
    return SimpleNamespace(cycles=launch + max(makespan, l2, hbm), bound=bound,
                           pipes=pipes, details={"launches": [{"makespan": makespan, "hbm_cycles": hbm, "hbm_bytes": a["hbm_bytes"],
                                                               "l2_cycles": l2, "launch_cycles": launch, "mode": a["mode"]}]})


def _truth(p: Point) -> Point:
    """`p` with its 'published' time and pipe ratios under TRUE."""
    f = p.ascx["feats"]
    m = _busy(PRIOR, "M", f) * TRUE["M"]
    t2 = _busy(PRIOR, "MTE2", {"MTE2": {k: v for k, v in f.get("MTE2", {}).items() if k != "instr"}}) * TRUE["MTE2"] + \
        _busy(PRIOR, "MTE2", {"MTE2": {k: v for k, v in f.get("MTE2", {}).items() if k == "instr"}}) * TRUE["MTE2"]
    hbm = p.ascx["hbm_bytes"] / (TRUE["hbm_gbps"] * 1e9 / (CLOCK * 1e6))
    l2 = p.ascx["l2_bytes"] / L2_BYTES_PER_CYCLE
    total = TRUE["launch"] + (TRUE["launch_mix"] if p.ascx["mode"] == "MIX" else 0) + max(m, t2, l2, hbm)
    ratios = {"M": m / total, "MTE2": t2 / total} if p.pipe_ratios else {}
    return dataclasses.replace(p, measured_us=total / CLOCK, pipe_ratios=ratios)


def _dataset() -> list[Point]:
    pts = []
    for i, n in enumerate((1, 2, 4, 8)):  # one load pattern at four sizes: bytes, bursts, instrs collinear
        pts.append(_point(f"M{i}", "matmul", {"M": {"instr": 64 * n, "fractal": 32768 * n},
                                              "MTE2": {"instr": 32 * n, "l1_byte": 3.1e6 * n, "block": 6144 * n}}, ratios=True))
    for i, n in enumerate((1, 3, 9)):
        pts.append(_point(f"F{i}", "attention", {"M": {"instr": 10 * n, "fractal": 800 * n}}, mode="MIX"))
    # an L2-bound attention: the cores wait on L2 (the profile's third bound), not on a pipe
    pts.append(_point("F3", "attention", {"M": {"instr": 30, "fractal": 2400}}, mode="MIX", l2_bytes=2e8))
    pts.append(_point("E", "launch", {"M": {"instr": 1}}, mode="AIV"))
    pts.append(_point("C", "stream", {"MTE2": {"instr": 100, "ub_byte": 1e5}}, mode="AIV", hbm_bytes=2e8))
    return [_truth(p) for p in pts]


def test_two_stages_recover_the_hardware():
    cal, fitted, final = calibrate_dataset(_dataset(), PRIOR, _run)
    got = {f.fact: f for f in cal.facts}
    assert got["timing_m_fractal_cycles"].after == pytest.approx(1.25 * float(PRIOR.value("timing_m_fractal_cycles")), rel=1e-6)
    assert got["timing_m_fractal_cycles"].how.startswith("scale")  # fractals and Mmads grow together
    assert got["timing_mte2_l1_byte_cycles"].after == pytest.approx(2.1 * float(PRIOR.value("timing_mte2_l1_byte_cycles")), rel=1e-6)
    assert "timing_mte2_ub_byte_cycles" not in got  # no point with pipe ratios moves UB bytes: kept
    assert got["timing_launch_cycles"].after == pytest.approx(TRUE["launch"], rel=1e-4)
    assert got["timing_launch_mix_cycles"].after == pytest.approx(TRUE["launch_mix"], rel=1e-4)
    assert got["hbm_bandwidth_gbps"].after == pytest.approx(TRUE["hbm_gbps"], rel=1e-4)
    assert got["hbm_bandwidth_gbps"].points == ("C",)
    points = {p.id: p for p in _dataset()}
    assert final["F3"].bound == "L2"
    for pid, o in final.items():
        assert o.cycles / CLOCK == pytest.approx(points[pid].measured_us, rel=1e-4), pid
        # the report's time is the fitted model's own: a profile under the fitted target agrees
        assert o.cycles == pytest.approx(_run(points[pid], fitted).cycles, rel=1e-9), pid


def test_leave_one_out_predicts_noise_free_points_and_the_summary_scores_them():
    pts = _dataset()
    cal, _, final = calibrate_dataset(pts, PRIOR, _run)
    loo = leave_one_out(pts, cal.first, cal.second, cal.stage0, cal.stage1)
    assert set(loo) == {p.id for p in pts}
    for p in pts:
        if p.id not in ("C", "E"):  # the only HBM-bound point / the only AIV one with launch: not predictable alone
            assert loo[p.id] == pytest.approx(p.measured_us, rel=1e-3), p.id
    s = summary([Score(p, final[p.id].cycles / CLOCK, loo[p.id]) for p in pts])
    assert s["median_abs_error"] < 1e-4 and s["spearman"]["matmul"] == pytest.approx(1.0)
    bad = summary([Score(pts[0], 2 * pts[0].measured_us, None), Score(pts[1], pts[1].measured_us, None)])
    assert bad["worst"] == ("M0", pytest.approx(2.0)) and bad["median_abs_error"] == pytest.approx(0.5)


def test_the_override_marks_each_fact_with_its_points():
    cal, _, _ = calibrate_dataset(_dataset(), PRIOR, _run)
    text = dataset_override_text(cal, "published")
    name, facts = parse_override(Source("cal.toml", text))
    assert name == "ascend910b2"
    assert facts["timing_launch_mix_cycles"][0] == pytest.approx(TRUE["launch_mix"], rel=1e-4)
    assert "F0, F1, F2" in facts["timing_launch_mix_cycles"][1]


def test_prior_target_undoes_the_shipped_calibration():
    shipped, prior = get_target("ascend910b2"), prior_target("ascend910b2")
    assert all(prior.facts[k].status != "calibrated" for k in prior.facts)
    assert set(shipped.facts) == set(prior.facts)


def test_calibrate_dataset_command_refuses_bad_input(tmp_path):
    from click.testing import CliRunner

    from transformer.cli import main

    r = CliRunner()
    res = r.invoke(main, ["calibrate", "--dataset", str(tmp_path / "none.toml"), "-o", str(tmp_path / "c.toml")])
    assert res.exit_code == 2 and "none.toml" in res.output and "Traceback" not in res.output
    csv = tmp_path / "runs.csv"
    csv.write_text("kernel,pipe,measured_cycles\n")
    res = r.invoke(main, ["calibrate", str(csv), "--dataset", "published", "-o", str(tmp_path / "c.toml")])
    assert res.exit_code == 2 and "no RESULTS.csv" in res.output
    res = r.invoke(main, ["calibrate", "-o", str(tmp_path / "c.toml")])
    assert res.exit_code == 2 and "--dataset" in res.output


@pytest.mark.slow
def test_calibrate_dataset_command_fits_launch_and_hbm_from_small_points(tmp_path):
    """End to end on the emulator: an empty kernel and a small HBM-bound copy (timings made
    up for the test) fix the launch and the HBM bandwidth; the override loads everywhere."""
    from click.testing import CliRunner

    from transformer.cli import main

    ds = tmp_path / "small.toml"
    pts = []
    for pid, args, us in (("E", ["0", "48"], 15.0), ("C", [str(192 << 20), "48"], 15.0 + (384 << 20) / 1.2e6)):
        pts.append(f'[[point]]\nid = "{pid}"\nfamily = "stream"\nrole = "fit"\nchip = "test"\ntarget = "ascend910b2"\n'
                   f'kernel = "stream_copy"\nshape = "-"\ndtype = "-"\nmeasured_us = {us}\n'
                   f'source = {{ repo = "test/test", path = "-" }}\n'
                   f'ascx = {{ kind = "source", file = "stream_copy.cpp", args = {args!r} }}\n'.replace("'", '"'))
    ds.write_text("\n".join(pts))
    out = tmp_path / "cal.toml"
    res = CliRunner().invoke(main, ["calibrate", "--dataset", str(ds), "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    name, facts = parse_override(Source(str(out), out.read_text()))
    # 384 MiB of HBM traffic (the copy is beyond L2) in 15 us less than the copy point
    assert facts["hbm_bandwidth_gbps"][0] == pytest.approx(1200, rel=0.02)
    launch = facts["timing_launch_cycles"][0] + float(PRIOR.value("timing_block_dispatch_cycles"))
    assert launch == pytest.approx(15.0 * CLOCK, rel=0.02)
    res = CliRunner().invoke(main, ["targets", "--target-file", str(out), "--json"])
    assert res.exit_code == 0
