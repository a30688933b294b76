"""The timing model's parameters come from the target table (fast: no compiler)."""

from __future__ import annotations

import dataclasses

import pytest

from transformer.targets import get_target, list_targets
from transformer.timing.params import GLOBAL_FACTS, MODEL_VERSION, PIPE_FEATURES, model_parameters, params_text
from transformer.timing.profile import parse_summary
from transformer.timing.result import PIPES


@pytest.mark.parametrize("name", list_targets())
def test_every_parameter_is_a_fact_with_provenance(name):
    t = get_target(name)
    for feats in PIPE_FEATURES.values():
        for fact in feats.values():
            f = t.fact(fact)
            assert f.status in ("documented", "assumed", "calibrated") and f.source
            if f.status == "calibrated":  # the shipped fit (transformer/targets/_calibrated.py) names its points
                assert f.source.startswith("ascx calibrate --dataset published")
            assert float(f.value) > 0
    for fact in GLOBAL_FACTS.values():
        assert t.fact(fact).source


def test_pipes_and_features_match_the_emulator_header():
    """timing.h names the same features per pipe as PIPE_FEATURES (the parameter file would be
    refused otherwise)."""
    from transformer.emulator import include_dir

    text = (include_dir() / "ascx_emu" / "timing.h").read_text()
    assert set(PIPE_FEATURES) <= set(PIPES)
    for pipe, feats in PIPE_FEATURES.items():
        for feat in feats:
            assert f'"{feat}"' in text, (pipe, feat)


def test_model_parameters_read_through_the_target():
    t = get_target("ascend910b2")
    p = model_parameters(t)
    assert p["MTE2.ub_byte"] == pytest.approx(1 / 58.6)
    assert p["hbm_bytes_per_cycle"] == pytest.approx(float(t.value("hbm_bandwidth_gbps")) * 1e9 / 1800e6)
    assert (p["aiv_cores"], p["aic_cores"]) == (48, 24)
    # an override of a fact (as --target-file does) changes the model
    facts = dict(t.facts)
    facts["timing_v_repeat_cycles"] = dataclasses.replace(facts["timing_v_repeat_cycles"], value=3)
    t2 = dataclasses.replace(t, facts=facts)
    assert model_parameters(t2)["V.repeat"] == 3
    assert "V repeat 3.0" in params_text(t2)
    assert MODEL_VERSION in params_text(t2)


def _summary(end_v: float, busy_v: float, hbm: float = 0.0) -> dict:
    core = {"name": "b0.aiv0", "kind": "AIV", "block": 0, "end": end_v, "scalar_cycles": 100.0, "gm_bytes": 8192.0,
            "busy": {"S": 150.0, "V": busy_v, "MTE2": end_v / 2, "MTE3": 10.0, "M": 0.0, "MTE1": 0.0, "FIX": 0.0},
            "features": {"V": {"instr": 4, "repeat": 64}, "S": {"issue": 50, "local_access": 5}}}
    return {"cycles": end_v + 10900, "timing_only": True,
            "launches": [{"name": "k", "mode": "AIV", "block_dim": 1, "slots": 48, "cycles": end_v + 10900,
                          "makespan": end_v, "hbm_cycles": hbm, "gm_bytes": 8192.0, "cores": [core]}],
            "hot": [{"line": "kernel.cpp:7", "pipe": "V", "cycles": busy_v}],
            "hazards": [{"kind": "RAW", "buffer": "UB[0x0, 0x800)", "core": 0, "first_pipe": "MTE2",
                         "first_line": "kernel.cpp:5", "second_pipe": "V", "second_line": "kernel.cpp:7"}]}


def test_parse_summary_bound_roofline_hot_lines_hazards():
    t = get_target("ascend910b2")
    r = parse_summary(_summary(1000.0, 900.0), t, kernel="k", line_map={7: "templates/kernel.cpp.j2: x <- k.ir:3:5"})
    assert r.bound == "V"
    assert r.time_us == pytest.approx((1000 + 10900) / 1800)
    # roofline = max(8192 B / HBM, 64 repeats * V.repeat cycles / 48 cores)
    p = model_parameters(t)
    assert r.roofline_us == pytest.approx(max(8192 / p["hbm_bytes_per_cycle"], 64 * p["V.repeat"] / 48) / 1800)
    assert r.hot_lines[0].ir_line == "k.ir:3:5"
    assert r.hazards[0].kind == "RAW" and "kernel.cpp:5" in r.hazards[0].message()
    assert r.scalar_share == pytest.approx(0.1)
    j = r.to_json()
    for key in ("kernel", "target", "backend", "cycles", "time_us", "roofline_us", "ratio", "bound", "pipes",
                "cores_used", "hazards"):
        assert key in j
    # HBM bound when the shared bandwidth time exceeds every core's time
    assert parse_summary(_summary(1000.0, 900.0, hbm=5000.0), t, kernel="k").bound == "HBM"
