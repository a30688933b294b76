"""The NPU backend without hardware: detection messages, the msprof CSV reader on fixtures
written from the documented format, and build/run/verify/profile against the fake
toolchain of conftest.py (which checks the commands ascx issues)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.cli_common import load_kernel
from transformer.npu import NpuUnavailable, detect_cann, profile_on_npu, read_msprof, verify_on_npu
from transformer.npu.backend import soc_version
from transformer.targets import get_target

from .conftest import DATA, FakeCann

ADD = str(Path(__file__).resolve().parents[2] / "examples" / "add.ir")


def _bare_env(tmp_path: Path) -> dict[str, str]:
    """An environment with no CANN anywhere (HOME moved so ~/Ascend is empty)."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "ASCX_NPU_DEV_DIR": str(tmp_path / "nodev")}


def test_detection_names_everything_missing_and_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(NpuUnavailable) as ei:
        detect_cann(0, env=_bare_env(tmp_path))
    e = ei.value
    assert "missing: the CANN toolkit" in e.message and "NPU device 0" in e.message
    assert "ASCEND_HOME_PATH is not set" in e.hint and "set_env.sh" in e.hint and "npu-smi" in e.hint
    # a toolkit without its compiler and CMake module, and a missing msprof when profiling
    env = _bare_env(tmp_path) | {"ASCEND_HOME_PATH": str(tmp_path)}
    with pytest.raises(NpuUnavailable) as ei:
        detect_cann(2, need_msprof=True, env=env)
    msg = ei.value.message
    assert "bisheng" in msg and "ascendc.cmake" in msg and "msprof" in msg and "NPU device 2" in msg


def test_detection_sources_set_env_sh(tmp_path: Path, fake_cann: FakeCann) -> None:
    """Without ASCEND_HOME_PATH, the toolkit's set_env.sh (at ~/Ascend/ascend-toolkit/) is sourced."""
    home = tmp_path / "home"
    (home / "Ascend/ascend-toolkit").mkdir(parents=True)
    toolkit = fake_cann.root / "toolkit"
    (home / "Ascend/ascend-toolkit/set_env.sh").write_text(
        f'export ASCEND_HOME_PATH="{toolkit}"\nexport ASCX_SOURCED=yes\n')
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"} | {"HOME": str(home)}
    tc = detect_cann(0, need_msprof=True, env=env)
    assert tc.home == toolkit and tc.env["ASCX_SOURCED"] == "yes"
    assert tc.msprof and tc.msprof.endswith("msprof") and tc.compiler.endswith("bisheng")


def test_read_msprof_documented_csvs(tmp_path: Path) -> None:
    out = tmp_path / "OPPROF_1_X"
    out.mkdir()
    (out / "OpBasicInfo.csv").write_text((DATA / "OpBasicInfo.csv").read_text().replace("KERNEL_NAME", "add"))
    shutil.copy(DATA / "PipeUtilization.csv", out / "PipeUtilization.csv")
    t = get_target("ascend910b2")
    p = read_msprof(tmp_path, kernel="add", target=t, entry="add", roofline_us=2.0)
    assert (p.backend, p.time_us, p.cores_used) == ("npu", 48.26, 8)
    assert p.cycles == pytest.approx(48.26 * 1800)
    busy = p.pipe_busy()
    assert busy["MTE2"] == pytest.approx(31.25 * 1800)  # the busiest block
    assert busy["V"] == pytest.approx(6.4 * 1800) and busy["S"] == pytest.approx(3.3 * 1800)
    assert set(busy) == {"MTE2", "MTE3", "V", "S"} and p.bound == "MTE2"
    assert p.to_json()["backend"] == "npu" and p.ratio == pytest.approx(48.26 / 2.0)
    # a mix kernel: cube-core and vector-core pipes, N/A cells skipped
    shutil.copy(DATA / "PipeUtilization_mix.csv", out / "PipeUtilization.csv")
    m = read_msprof(out, kernel="mm", target=t)
    kinds = {(s.pipe, s.core_kind): s.busy_cycles for s in m.pipes}
    assert kinds[("M", "aic")] == pytest.approx(10 * 1800) and kinds[("FIX", "aic")] == pytest.approx(3 * 1800)
    assert kinds[("V", "aiv")] == pytest.approx(11 * 1800) and kinds[("MTE1", "aic")] == pytest.approx(4 * 1800)


def test_read_msprof_reports_missing_output(tmp_path: Path) -> None:
    from transformer.npu import MsprofError

    with pytest.raises(MsprofError, match="no OpBasicInfo.csv"):
        read_msprof(tmp_path, kernel="k", target=get_target(None))


def test_soc_version() -> None:
    assert soc_version(get_target("ascend910b2")) == "Ascend910B2"
    assert soc_version(get_target("ascend310p")) == "Ascend310P3"


def test_verify_on_fake_npu_builds_runs_and_compares(fake_cann: FakeCann, tmp_path: Path) -> None:
    r = CliRunner()
    keep = tmp_path / "keep"
    res = r.invoke(main, ["verify", ADD, "--passes", "tile,double_buffer", "--emitted", "--backend", "npu",
                          "--seed", "3", "--trials", "2", "--keep", str(keep), "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["ok"] and rep["outputs"][0]["name"] == "C" and rep["pipeline"].endswith("--backend npu")
    configure, build = fake_cann.calls("cmake")
    assert "-DSOC_VERSION=Ascend910B2" in configure["argv"] and build["argv"][:2] == ["--build", str(keep / "build")]
    runs = fake_cann.calls("device")
    assert [c["argv"] for c in runs] == [[str(keep / "data0"), "0"], [str(keep / "data1"), "0"]]
    assert (keep / "CMakeLists.txt").is_file() and "ACLRT_LAUNCH_KERNEL(add)" in (keep / "main.cpp").read_text()
    # a device computing the wrong thing is a mismatch (exit 1); a device error too
    os.environ["FAKE_NPU_MODE"] = "wrong"
    res = r.invoke(main, ["verify", ADD, "--passes", "tile", "--emitted", "--backend", "npu", "--seed", "3", "--trials", "1"])
    assert res.exit_code == 1 and "MISMATCH" in res.output
    os.environ["FAKE_NPU_MODE"] = "crash"
    res = r.invoke(main, ["verify", ADD, "--emitted", "--backend", "npu", "--device", "0", "--seed", "3", "--trials", "1"])
    assert res.exit_code == 1 and "failed on NPU device 0" in res.output and "507011" in res.output


def test_verify_npu_usage_errors(fake_cann: FakeCann) -> None:
    r = CliRunner()
    res = r.invoke(main, ["verify", ADD, "--passes", "tile", "--backend", "npu"])
    assert res.exit_code == 2 and "--backend npu goes with --emitted" in res.output
    res = r.invoke(main, ["verify", ADD, "--emitted", "--device", "1"])
    assert res.exit_code == 2 and "--device goes with --backend npu" in res.output
    res = r.invoke(main, ["verify", ADD, "--emitted", "--backend", "npu", "--device", "5"])
    assert res.exit_code == 2 and "missing: NPU device 5" in res.output and "Traceback" not in res.output
    assert fake_cann.calls() == []  # nothing was built


def test_verify_npu_without_cann_names_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in _bare_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    res = CliRunner().invoke(main, ["verify", ADD, "--emitted", "--backend", "npu"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "missing: the CANN toolkit" in res.output and "install the CANN toolkit" in res.output


def test_profile_on_fake_npu(fake_cann: FakeCann) -> None:
    kernel = load_kernel(ADD)
    target = get_target("ascend910b2")
    tc = detect_cann(0, need_msprof=True)
    prof = profile_on_npu(kernel, target, tc)
    assert prof.backend == "npu" and prof.time_us == 48.26 and prof.kernel == "add" and prof.bound == "MTE2"
    assert prof.roofline_us == pytest.approx(3 * 524288 / (float(target.value("hbm_bandwidth_gbps")) * 1e3))
    (call,) = fake_cann.calls("msprof")
    assert call["argv"][0] == "op" and "--kernel-name=add" in call["argv"]
    assert any(a.startswith("--output=") for a in call["argv"]) and call["argv"][-1] == "0"
    assert len(fake_cann.calls("device")) == 1  # msprof ran the program on the device


def test_verify_on_npu_library(fake_cann: FakeCann) -> None:
    kernel = load_kernel(ADD)
    diffs = verify_on_npu(kernel, get_target("ascend910b2"), detect_cann(0), trials=1, seed=5)
    assert [d.name for d in diffs] == ["C"] and diffs[0].ok


def test_report_and_recorded_runs_feed_calibration(tmp_path: Path) -> None:
    """A measured profile next to the emulator's; `record_runs` writes the CSV `ascx calibrate` reads."""
    from transformer.npu.report import format_npu_report, record_runs
    from transformer.timing.calibrate import TOTAL, read_samples_csv
    from transformer.timing.result import PipeStats, ProfileResult

    emu = ProfileResult("add", "ascend910b2", "emulator", 90000.0, 50.0, 2.0, "MTE2", 8,
                        (PipeStats("MTE2", "aiv", 52000.0, 0.6, {"instr": 16.0, "ub_byte": 131072.0}),
                         PipeStats("V", "aiv", 9000.0, 0.1, {"instr": 8.0, "repeat": 512.0})),
                        details={"clock_mhz": 1800, "launches": [{"block_dim": 8, "slots": 48}]})
    out = tmp_path / "OPPROF_1"
    out.mkdir()
    (out / "OpBasicInfo.csv").write_text((DATA / "OpBasicInfo.csv").read_text().replace("KERNEL_NAME", "add"))
    shutil.copy(DATA / "PipeUtilization.csv", out / "PipeUtilization.csv")
    npu = read_msprof(out, kernel="add", target=get_target("ascend910b2"), details={"device": 0})
    text = format_npu_report(npu, emu)
    assert "48.26 us" in text and "emulator model: 50.00 us" in text and "52,000" in text
    csv_path = tmp_path / "runs.csv"
    assert record_runs(str(csv_path), emu, npu) == 3
    assert record_runs(str(csv_path), emu, npu) == 3  # appends
    rows = read_samples_csv(csv_path.read_text(), 1800)
    assert len(rows) == 6
    mte2 = rows[0]
    assert (mte2.pipe, mte2.measured_cycles, mte2.features["ub_byte"]) == ("MTE2", pytest.approx(31.25 * 1800), 131072.0)
    total = [r for r in rows if r.pipe == TOTAL][0]
    assert total.measured_cycles == pytest.approx(48.26 * 1800)
    assert total.features == {"launch": 1.0, "block_dispatch": 1.0}
