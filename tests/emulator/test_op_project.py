"""Op projects on the emulator (issue 26 item 2): an op_host/ + op_kernel/ folder builds with a
generated driver that runs the host tiling function and launches the kernel with its tiling
(`GET_TILING_DATA`, `TILING_KEY_IS`, `DTYPE_*` / `ORIG_DTYPE_*`, `memcpy_s`, workspace,
`platform_ascendc` core counts from the target table). `cases/op_project` is written for ascx
in the public layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from transformer.cli import main as cli_main
from transformer.emulator import include_dir
from transformer.emulator.folder import find_sources
from transformer.emulator.opproject import dtype_flags
from transformer.targets import get_target
from transformer.timing.params import core_counts

PROJECT = Path(__file__).parent / "cases" / "op_project"


def test_dtype_macros_come_from_the_first_data_type_of_each_parameter() -> None:
    text = """this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND});
              this->Input("idx") .DataType({ DT_INT32 });
              this->Output("z").ParamType(REQUIRED).Format({ge::FORMAT_ND}).DataType({ge::DT_BF16});"""
    assert dtype_flags(text) == ["-DDTYPE_X=half", "-DORIG_DTYPE_X=DT_FLOAT16", "-DDTYPE_IDX=int32_t",
                                 "-DORIG_DTYPE_IDX=DT_INT32", "-DDTYPE_Z=bfloat16_t", "-DORIG_DTYPE_Z=DT_BF16"]


def test_op_project_sources_flags_and_generated_driver(tmp_path: Path) -> None:
    src = find_sources(PROJECT, tmp_path)
    assert [str(p.relative_to(PROJECT)) for p in src.kernels] == ["op_host/axpy_op_custom.cpp", "op_kernel/axpy_op_custom.cpp"]
    assert src.main.parent.parent == tmp_path and src.main.name == "ascx_op_main.cpp"
    driver = src.main.read_text()
    assert 'ascx_emu::op::run("AxpyOpCustom", 5,' in driver and "ICPU_RUN_KF(axpy_op_custom, blockDim, a[0], a[1], a[2], a[3], a[4])" in driver
    i = src.flags.index("-include")
    assert src.flags[i + 1].endswith("op_host/axpy_op_custom_tiling.h")
    assert "-DDTYPE_Y=half" in src.flags and "-DORIG_DTYPE_Z=DT_FLOAT16" in src.flags


def test_op_project_without_a_kernel_is_a_usage_error(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "p")
    (tmp_path / "p" / "op_kernel" / "axpy_op_custom.cpp").unlink()
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(tmp_path / "p")])
    assert res.exit_code == 2 and "op_kernel/ has no kernel" in res.output, res.output


def test_platform_core_counts_match_the_target_table() -> None:
    """The host platform header's core counts are the default target's (the one place chip numbers live)."""
    text = (include_dir() / "tiling" / "platform" / "platform_ascendc.h").read_text()
    aiv, aic = core_counts(get_target())
    assert f"#define ASCX_EMU_AIV_CORES {aiv}\n" in text and f"#define ASCX_EMU_AIC_CORES {aic}\n" in text
    assert '#include "../../ascx_emu/mem_sizes.h"' in text  # the memory sizes: test_kernels.py checks those


@pytest.mark.slow
def test_op_project_runs_its_tiling_and_kernel(tmp_path: Path) -> None:
    work = tmp_path / "op"
    shutil.copytree(PROJECT, work)
    (work / "input").mkdir()
    rng = np.random.default_rng(26)
    x, y = (rng.standard_normal(8 * 2048).astype(np.float16) for _ in range(2))
    x.tofile(work / "input" / "x.bin")
    y.tofile(work / "input" / "y.bin")
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(work), "x=8,2048", "y=8,2048", "@alpha=0.5"])
    assert res.exit_code == 0, res.output
    assert "op AxpyOpCustom: blockDim 8, tiling key 1, tiling 20 bytes, workspace 1024 bytes" in res.output
    want = (x.astype(np.float32) + np.float32(0.5) * y.astype(np.float32))
    got = np.fromfile(work / "output" / "z.bin", np.float16).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    # another shape takes tiling key 2 with the class registered for it (AxpyOpCustom_2):
    # the kernel reads it with GET_TILING_DATA_WITH_STRUCT and writes only z[0] = alpha + 1
    (work / "input" / "x.bin").write_bytes(x[:8 * 2040].tobytes())
    (work / "input" / "y.bin").write_bytes(y[:8 * 2040].tobytes())
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(work), "x=8,2040", "y=8,2040", "@alpha=0.25"])
    assert res.exit_code == 0 and "tiling key 2, tiling 4 bytes" in res.output, res.output
    z = np.fromfile(work / "output" / "z.bin", np.float16)
    assert z[0] == np.float16(1.25) and not z[1:].any()
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(work), "x=8,2040"])
    assert res.exit_code == 1 and "give the shape of input `y`" in res.output, res.output


@pytest.mark.slow
def test_profile_of_an_op_project_runs_its_tiling_and_kernel(tmp_path: Path) -> None:
    """`ascx profile DIR ARGS` of an op project: the generated driver runs the host tiling and
    the kernel on the timing model (the ARGS as for `ascx emulator build`), in the folder."""
    work = tmp_path / "op"
    shutil.copytree(PROJECT, work)
    (work / "input").mkdir()
    rng = np.random.default_rng(27)
    x, y = (rng.standard_normal(8 * 2048).astype(np.float16) for _ in range(2))
    x.tofile(work / "input" / "x.bin")
    y.tofile(work / "input" / "y.bin")
    res = CliRunner().invoke(cli_main, ["profile", str(work), "x=8,2048", "y=8,2048", "@alpha=0.5", "--json"])
    assert res.exit_code == 0, res.output
    prof = json.loads(res.output[res.output.index("{"):])
    launch = prof["details"]["launches"][0]
    assert prof["kernel"] == "op" and launch["name"] == "axpy_op_custom" and launch["block_dim"] == 8
    assert prof["cores_used"] == 8 and prof["pipes"] and prof["hazards"] == []
    want = (x.astype(np.float32) + np.float32(0.5) * y.astype(np.float32))
    got = np.fromfile(work / "output" / "z.bin", np.float16).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_profile_arguments_go_to_hand_written_programs_only() -> None:
    ir = Path(__file__).parents[2] / "examples" / "add.ir"
    res = CliRunner().invoke(cli_main, ["profile", str(ir), "x=8,2048"])
    assert res.exit_code == 2 and "program arguments (x=8,2048) go to hand-written sources" in res.output, res.output
