"""Calibration: known parameters are recovered from synthetic measurements (within 5 %),
the fit improves rank correlation on held-out kernels, and the CSV format and the written
override round-trip."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from transformer.targets import get_target
from transformer.targets._base import assumed
from transformer.targets._override import apply_override, parse_override
from transformer.diagnostics import Source
from transformer.timing.calibrate import (
    TOTAL,
    CalibrationInputError,
    Sample,
    calibrate,
    coefficients,
    nnls,
    override_text,
    predict_totals,
    read_samples_csv,
    samples_csv,
    spearman,
)

# A model of the same form as the timing model's (pipe -> feature -> fact; "1/" = a rate).
PIPES = {
    "MTE2": {"bytes": "1/mte2_gm_to_ub_bytes_per_cycle", "instrs": "t_mte2_instr_cycles"},
    "MTE3": {"bytes": "1/mte3_ub_to_gm_bytes_per_cycle", "instrs": "t_mte3_instr_cycles"},
    "V": {"repeats": "1/vector_repeats_per_cycle", "instrs": "t_vector_instr_cycles"},
    "S": {"instrs": "t_scalar_instr_cycles"},
    TOTAL: {"launches": "t_launch_cycles", "blocks": "t_block_cycles"},
}
# What the target says (a guess) and what the "hardware" does.
GUESS = {"mte2_gm_to_ub_bytes_per_cycle": 32, "mte3_ub_to_gm_bytes_per_cycle": 64, "vector_repeats_per_cycle": 1,
         "t_mte2_instr_cycles": 20.0, "t_mte3_instr_cycles": 20.0, "t_vector_instr_cycles": 4.0,
         "t_scalar_instr_cycles": 1.0, "t_launch_cycles": 2000.0, "t_block_cycles": 100.0}
TRUE = {"mte2_gm_to_ub_bytes_per_cycle": 21.0, "mte3_ub_to_gm_bytes_per_cycle": 47.0, "vector_repeats_per_cycle": 0.55,
        "t_mte2_instr_cycles": 61.0, "t_mte3_instr_cycles": 35.0, "t_vector_instr_cycles": 17.0,
        "t_scalar_instr_cycles": 2.6, "t_launch_cycles": 9500.0, "t_block_cycles": 410.0}


def _target(values: dict[str, float]):
    base = get_target("ascend910b2")
    facts = dict(base.facts)
    for k, v in values.items():
        facts[k] = dataclasses.replace(facts[k], value=v) if k in facts else assumed(v, "test parameter")
    return dataclasses.replace(base, facts=facts)


def _runs(n: int, rng: np.random.Generator, noise: float) -> list[Sample]:
    """`n` kernels with random feature mixes, 'measured' under TRUE with relative noise."""
    truth = coefficients(_target(TRUE), PIPES)
    out: list[Sample] = []
    for k in range(n):
        name = f"k{k}"
        feats = {
            "MTE2": {"bytes": rng.uniform(1e4, 4e6), "instrs": rng.integers(1, 400)},
            "MTE3": {"bytes": rng.uniform(1e4, 2e6), "instrs": rng.integers(1, 400)},
            "V": {"repeats": rng.uniform(1e2, 6e4), "instrs": rng.integers(1, 3000)},
            "S": {"instrs": rng.uniform(1e2, 5e4)},
        }
        busiest = 0.0
        for pipe, f in feats.items():
            cyc = sum(truth[PIPES[pipe][feat].removeprefix("1/")] * x for feat, x in f.items())
            busiest = max(busiest, cyc)
            out.append(Sample(name, pipe, cyc * (1 + rng.normal(0, noise)), {a: float(b) for a, b in f.items()}, "aiv"))
        tf = {"launches": 1.0, "blocks": float(rng.integers(1, 49))}
        total = busiest + truth["t_launch_cycles"] + truth["t_block_cycles"] * tf["blocks"]
        out.append(Sample(name, TOTAL, total * (1 + rng.normal(0, noise)), tf))
    return out


def test_calibration_recovers_known_parameters_and_improves_ranking_on_held_out_kernels() -> None:
    rng = np.random.default_rng(16)
    train, held_out = _runs(40, rng, noise=0.01), _runs(25, rng, noise=0.01)
    guess = _target(GUESS)
    rep = calibrate(train, guess, PIPES)
    got = rep.values()
    assert set(got) == set(TRUE)
    for name, true in TRUE.items():
        assert abs(got[name] - true) / true < 0.05, (name, got[name], true)
    # per-pipe error drops to about the noise level
    for e in rep.errors:
        assert e.after < 0.03 and e.after < e.before, e
    # held-out kernels: predicted totals rank like the measured ones, better than before
    fitted = _target(got)
    before = predict_totals(held_out, coefficients(guess, PIPES), PIPES).values()
    after = predict_totals(held_out, coefficients(fitted, PIPES), PIPES).values()
    rho_before = spearman([p for p, _ in before], [m for _, m in before])
    rho_after = spearman([p for p, _ in after], [m for _, m in after])
    assert rho_after > rho_before and rho_after > 0.95, (rho_before, rho_after)
    assert "rank correlation" in rep.format() and "MTE2" in rep.format()


def test_unidentifiable_parameters_are_kept_and_reported() -> None:
    rng = np.random.default_rng(3)
    runs = [s for s in _runs(12, rng, noise=0.0) if s.pipe != "MTE3"]
    rep = calibrate(runs, _target(GUESS), PIPES)
    by = {p.fact: p for p in rep.params}
    assert not by["mte3_ub_to_gm_bytes_per_cycle"].fitted and by["mte3_ub_to_gm_bytes_per_cycle"].after == 64
    assert by["t_scalar_instr_cycles"].fitted and math.isclose(by["t_scalar_instr_cycles"].after, 2.6, rel_tol=1e-6)
    assert "mte3_ub_to_gm_bytes_per_cycle" not in rep.values()
    unknown = calibrate(runs + [Sample("k0", "FIX", 10.0, {"bytes": 1.0})], _target(GUESS), PIPES)
    assert any("FIX" in n for n in unknown.notes)


def test_nnls_matches_unconstrained_solution_when_positive_and_clamps_otherwise() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, (30, 4))
    x_true = np.array([1.0, 2.0, 0.5, 3.0])
    assert np.allclose(nnls(a, a @ x_true), x_true)
    b = a @ np.array([1.0, -2.0, 0.5, 3.0])
    x = nnls(a, b)
    assert (x >= 0).all() and x[1] == 0.0
    # KKT: the gradient is ~0 on the free variables and <= 0 on the clamped one
    g = a.T @ (b - a @ x)
    assert np.allclose(g[x > 0], 0, atol=1e-8) and g[1] <= 1e-8


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(np.corrcoef([1, 2.5, 2.5, 4], [1, 2, 3, 4])[0, 1])
    assert math.isnan(spearman([1], [2]))


def test_csv_round_trip_and_override_text(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    runs = _runs(15, rng, noise=0.0)
    again = read_samples_csv(samples_csv(runs), clock_mhz=1800)
    assert [(s.kernel, s.pipe, s.measured_cycles, dict(s.features)) for s in again] == \
        [(s.kernel, s.pipe, s.measured_cycles, dict(s.features)) for s in runs]
    rep = calibrate(again, _target(GUESS), PIPES)
    text = override_text(rep, ["runs.csv"])
    name, facts = parse_override(Source("cal.toml", text))
    assert name == "ascend910b2"
    assert math.isclose(facts["vector_repeats_per_cycle"][0], 0.55, rel_tol=1e-4)
    t = apply_override(_target(GUESS), facts, Source("cal.toml", text))
    assert t.fact("vector_repeats_per_cycle").status == "calibrated"
    assert "ascx calibrate runs.csv" in text and "mean error" in text


def test_csv_measured_us_and_comments() -> None:
    text = "# from msprof\nkernel,pipe,measured_us,bytes\n\nadd,MTE2,2.5,1024\nadd,total,10,\n"
    s = read_samples_csv(text, clock_mhz=1800)
    assert [(x.pipe, x.measured_cycles, dict(x.features)) for x in s] == \
        [("MTE2", 4500.0, {"bytes": 1024.0}), (TOTAL, 18000.0, {})]


@pytest.mark.parametrize("text,line,col,fragment", [
    ("pipe,measured_cycles\nV,1\n", 1, 1, "no `kernel` column"),
    ("kernel,pipe,bytes\nk,V,1\n", 1, 1, "no `measured_cycles`"),
    ("kernel,pipe,measured_cycles,bytes\nk,V,12,lots\n", 2, 8, "`lots` is not a number"),
    ("kernel,pipe,measured_cycles,bytes\nk,V,-3,1\n", 2, 5, ">= 0"),
    ("kernel,pipe,measured_cycles\n# c\nk,V\n", 3, 1, "2 fields"),
    ("kernel,pipe,measured_cycles,bytes\nk,V,,1\n", 2, 1, "no measurement"),
    ("kernel,pipe,measured_cycles,pipe\n", 1, 29, "appears twice"),
])
def test_bad_csv_is_located(text: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(CalibrationInputError) as ei:
        read_samples_csv(text, 1800)
    assert fragment in ei.value.message and (ei.value.line, ei.value.col) == (line, col)


def test_calibrate_command_writes_an_override_every_command_can_load(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from transformer.cli import main

    params = tmp_path / "model.toml"
    params.write_text('[MTE2]\nbytes = "1/mte2_gm_to_ub_bytes_per_cycle"\n'
                      '[MTE3]\nbytes = "1/mte3_ub_to_gm_bytes_per_cycle"\n'
                      '[V]\nrepeats = "1/vector_repeats_per_cycle"\n')
    rng = np.random.default_rng(7)
    rows = []
    for k in range(10):  # hardware: 24 B/cycle in, 50 B/cycle out, 0.8 repeats/cycle
        b2, b3, rep = rng.uniform(1e5, 1e6, 3)
        rows += [Sample(f"k{k}", "MTE2", b2 / 24, {"bytes": b2}), Sample(f"k{k}", "MTE3", b3 / 50, {"bytes": b3}),
                 Sample(f"k{k}", "V", rep / 0.8, {"repeats": rep}),
                 Sample(f"k{k}", TOTAL, max(b2 / 24, b3 / 50, rep / 0.8) + 5000, {"launches": 1})]
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text(samples_csv(rows))
    out = tmp_path / "cal.toml"
    r = CliRunner()
    res = r.invoke(main, ["calibrate", str(csv_path), "-o", str(out), "--params", str(params), "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    fitted = {p["fact"]: p["after"] for p in rep["params"]}
    assert fitted["mte2_gm_to_ub_bytes_per_cycle"] == pytest.approx(24, rel=1e-6)
    assert fitted["vector_repeats_per_cycle"] == pytest.approx(0.8, rel=1e-6)
    res = r.invoke(main, ["targets", "--target-file", str(out), "--json"])
    facts = {row["name"]: row for row in json.loads(res.output)["facts"]}
    assert facts["mte3_ub_to_gm_bytes_per_cycle"]["status"] == "calibrated"
    assert facts["mte3_ub_to_gm_bytes_per_cycle"]["value"] == pytest.approx(50, rel=1e-5)
    # bad inputs: located, exit 2, nothing written
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,pipe,measured_cycles,bytes\nk,MTE2,10,many\n")
    res = r.invoke(main, ["calibrate", str(bad), "-o", str(tmp_path / "x.toml"), "--params", str(params)])
    assert res.exit_code == 2 and f"{bad}:2:11: error: `bytes`: `many` is not a number" in res.output
    assert not (tmp_path / "x.toml").exists()
    params.write_text('[MTE2]\nbytes = "1/mte2_gm_to_ub_bytes_per_cyle"\n')
    res = r.invoke(main, ["calibrate", str(csv_path), "-o", str(tmp_path / "x.toml"), "--params", str(params)])
    assert res.exit_code == 2 and "did you mean `mte2_gm_to_ub_bytes_per_cycle`" in res.output


def test_calibration_recovers_the_timing_models_own_parameters() -> None:
    """With the model's real parameterisation (PIPE_FEATURES and its target facts):
    measurements generated from parameters 0.5x-2x the table's are fitted back within 5 %."""
    from transformer.cli_calibrate import model_pipe_features

    pipes = model_pipe_features(None)
    target = get_target("ascend910b2")
    rng = np.random.default_rng(12)
    facts = sorted({spec for f in pipes.values() for spec in f.values()})
    true = {f: (float(target.value(f)) or 1.0) * rng.uniform(0.5, 2.0) for f in facts}
    runs: list[Sample] = []
    for k in range(80):
        busiest = 0.0
        for pipe, feats in pipes.items():
            if pipe == TOTAL:
                continue
            # each term worth 1e3..1e5 cycles, whatever the parameter's magnitude
            x = {feat: float(10 ** rng.uniform(3, 5) / true[feats[feat]]) for feat in feats}
            cyc = sum(true[feats[f]] * v for f, v in x.items())
            busiest = max(busiest, cyc)
            runs.append(Sample(f"k{k}", pipe, cyc * (1 + rng.normal(0, 0.002)), x, "aiv"))
        if TOTAL in pipes:
            x = {feat: float(rng.integers(1, 6)) * 2e4 / true[pipes[TOTAL][feat]] for feat in pipes[TOTAL]}
            runs.append(Sample(f"k{k}", TOTAL, busiest + sum(true[pipes[TOTAL][f]] * v for f, v in x.items()), x))
    rep = calibrate(runs, target, pipes)
    got = rep.values()
    assert set(got) == set(facts)
    for f in facts:
        assert abs(got[f] - true[f]) / true[f] < 0.05, (f, got[f], true[f])
