"""`ascx profile --backend npu` against the fake toolchain (conftest.py): the acceptance
command of the NPU backend, its messages without CANN, and `--record` feeding calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.timing.calibrate import TOTAL, read_samples_csv

from .conftest import FakeCann

ADD = str(Path(__file__).resolve().parents[2] / "examples" / "add.ir")


def test_profile_backend_npu_returns_the_measured_profile(fake_cann: FakeCann) -> None:
    res = CliRunner().invoke(main, ["profile", ADD, "--passes", "tile,double_buffer", "--backend", "npu", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert d["backend"] == "npu" and d["time_us"] == 48.26 and d["cores_used"] == 8 and d["bound"] == "MTE2"
    assert d["pipes"]["MTE2"] == pytest.approx(31.25 * 1800)
    (call,) = fake_cann.calls("msprof")
    assert call["argv"][0] == "op" and "--kernel-name=add" in call["argv"]
    res = CliRunner().invoke(main, ["profile", ADD, "--passes", "tile", "--backend", "npu"])
    assert res.exit_code == 0 and "48.26 us" in res.output and "msprof op" in res.output


def test_profile_backend_npu_without_cann_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("ASCX_NPU_DEV_DIR", str(tmp_path / "nodev"))
    res = CliRunner().invoke(main, ["profile", ADD, "--passes", "tile,double_buffer", "--backend", "npu", "--json"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "missing: the CANN toolkit" in res.output and "NPU device 0" in res.output
    assert "install the CANN toolkit" in res.output


def test_profile_npu_usage_errors(fake_cann: FakeCann, tmp_path: Path) -> None:
    r = CliRunner()
    res = r.invoke(main, ["profile", ADD, "--record", str(tmp_path / "runs.csv")])
    assert res.exit_code == 2 and "--record goes with --backend npu" in res.output
    res = r.invoke(main, ["profile", ADD, "--backend", "npu", "--trace", str(tmp_path / "t.json")])
    assert res.exit_code == 2 and "without --trace" in res.output
    res = r.invoke(main, ["profile", ADD, "--device", "1"])
    assert res.exit_code == 2 and "--device goes with --backend npu" in res.output
    assert fake_cann.calls() == []


@pytest.mark.slow
def test_profile_record_then_calibrate_then_use_the_override(fake_cann: FakeCann, tmp_path: Path) -> None:
    """--record pairs the emulator's features with the measurement; calibrate fits; the
    override changes the emulator's prediction."""
    r = CliRunner()
    runs = tmp_path / "runs.csv"
    res = r.invoke(main, ["profile", ADD, "--passes", "tile,double_buffer", "--backend", "npu", "--record", str(runs)])
    assert res.exit_code == 0, res.output
    assert "emulator model:" in res.output
    samples = read_samples_csv(runs.read_text(), 1800)
    by = {s.pipe: s for s in samples}
    assert by["MTE2"].measured_cycles == pytest.approx(31.25 * 1800) and by["MTE2"].features
    assert by[TOTAL].measured_cycles == pytest.approx(48.26 * 1800)
    cal = tmp_path / "cal.toml"
    res = r.invoke(main, ["calibrate", str(runs), "-o", str(cal), "--json"])
    assert res.exit_code == 0, res.output
    before = json.loads(r.invoke(main, ["profile", ADD, "--passes", "tile,double_buffer", "--json"]).output)
    after = json.loads(r.invoke(main, ["profile", ADD, "--passes", "tile,double_buffer", "--json",
                                       "--target-file", str(cal)]).output)
    assert after["time_us"] != before["time_us"]
    # calibrated on this one kernel, the model now predicts its measured time closely
    assert abs(after["time_us"] - 48.26) < abs(before["time_us"] - 48.26)
