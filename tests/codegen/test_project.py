"""`ascx emit --project DIR` (issue 24 item 7): the emitted kernel as a custom-operator
project (op_host/ tiling data, tiling function, InferShape, OpDef; op_kernel/ with the
op-project entry; CMake presets; a torch_npu example). The softmax project builds and runs
on the emulator (its op driver runs our tiling function and launches our kernel), matching
the interpreter; a shape other than the emitted one is refused by the tiling function."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.interp import run
from transformer.parser import parse_file

from .conftest import ROOT

SOFTMAX = str(ROOT / "examples" / "softmax.ir")
PIPELINE = "fuse,tile,double_buffer"


def _project(tmp_path: Path) -> Path:
    out = tmp_path / "proj"
    r = CliRunner().invoke(main, ["emit", SOFTMAX, "--size", "R=8", "--passes", PIPELINE, "--project", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_project_layout_and_its_tiling(tmp_path: Path) -> None:
    out = _project(tmp_path)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["CMakePresets.json", "README.md", "op_host/softmax_custom.cpp", "op_host/softmax_custom_tiling.h",
                     "op_kernel/softmax_custom.cpp", "torch_npu_example.py"]
    tiling = (out / "op_host" / "softmax_custom_tiling.h").read_text()
    assert "BEGIN_TILING_DATA_DEF(SoftmaxCustomTilingData)\nTILING_DATA_FIELD_DEF(int32_t, R);\n" \
           "TILING_DATA_FIELD_DEF(int32_t, C);\nEND_TILING_DATA_DEF;" in tiling
    assert "REGISTER_TILING_DATA_CLASS(SoftmaxCustom, SoftmaxCustomTilingData)" in tiling
    host = (out / "op_host" / "softmax_custom.cpp").read_text()
    assert "s0.GetDimNum() != 2 || s0.GetDim(0) != 8 || s0.GetDim(1) != 1024" in host and "context->SetBlockDim(8);" in host
    assert 'this->Input("X").ParamType(REQUIRED).DataType({ge::DT_FLOAT16})' in host and "OP_ADD(SoftmaxCustom);" in host
    kernel = (out / "op_kernel" / "softmax_custom.cpp").read_text()
    assert 'extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR X, GM_ADDR Y, GM_ADDR workspace, GM_ADDR tiling)' in kernel
    assert kernel.count("__global__") == 1 and "if (t.R != 8 || t.C != 1024) {" in kernel
    preset = json.loads((out / "CMakePresets.json").read_text())
    assert preset["configurePresets"][0]["cacheVariables"]["ASCEND_COMPUTE_UNIT"]["value"] == "ascend910b"
    compile((out / "torch_npu_example.py").read_text(), "torch_npu_example.py", "exec")


def _ranged_project(tmp_path: Path) -> Path:
    """The project of softmax with `size R = 256 in 1..512`: its kernel reads R at run time."""
    src = tmp_path / "softmax.ir"
    src.write_text(Path(SOFTMAX).read_text().replace("size R = 256", "size R = 256 in 1..512"))
    out = tmp_path / "proj"
    r = CliRunner().invoke(main, ["emit", str(src), "--passes", PIPELINE, "--project", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_a_ranged_project_takes_its_sizes_from_the_input_shapes(tmp_path: Path) -> None:
    out = _ranged_project(tmp_path)
    tiling = (out / "op_host" / "softmax_custom_tiling.h").read_text()
    kernel = (out / "op_kernel" / "softmax_custom.cpp").read_text()
    # the tiling-data class is the kernel's TilingData: the same int32_t fields in the same order
    struct = kernel[kernel.index("struct TilingData {"):kernel.index("};", kernel.index("struct TilingData {"))]
    fields = [ln.split()[1].rstrip(";") for ln in struct.splitlines()[1:] if ln.strip().startswith("int32_t")]
    assert fields[0] == "R" and [f"TILING_DATA_FIELD_DEF(int32_t, {f});" in tiling for f in fields] == [True] * len(fields)
    assert tiling.index(f"int32_t, {fields[-1]})") > tiling.index("int32_t, R)")
    host = (out / "op_host" / "softmax_custom.cpp").read_text()
    assert "if (s0.GetDim(0) < 1 || s0.GetDim(0) > 512) {" in host and "s0.GetDim(1) != 1024" in host
    assert "context->SetBlockDim(static_cast<uint32_t>(" in host and "template <typename T> inline T ascx_max" in host
    assert "o0->SetDim(0, context->GetInputShape(0)->GetDim(0));" in host
    assert "softmax_body(X, Y, tiling);" in kernel and "t.R != " not in kernel


@pytest.mark.slow
def test_a_ranged_softmax_project_builds_once_and_runs_at_every_shape_on_the_emulator(tmp_path: Path) -> None:
    """One build of the project (the op driver runs our tiling function on the input shapes and
    launches our kernel); rows 1 (the range's start), 300 (tails of the 3-row tile, not a
    multiple of 16), 512 (its end) match the interpreter; 513 is refused by the tiling function."""
    out = _ranged_project(tmp_path)
    (out / "input").mkdir()
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    kernel = parse_file(SOFTMAX)
    built = set()
    for rows in (300, 1, 512):
        x = rng.standard_normal((rows, 1024)).astype(np.float16)
        x.tofile(out / "input" / "X.bin")
        r = CliRunner().invoke(main, ["emulator", "build", str(out), f"X={rows},1024"])
        assert r.exit_code == 0, r.output
        built.add(next(ln for ln in r.output.splitlines() if ln.startswith("built ")))
        want = run(kernel.with_sizes({"R": rows}), {"X": x})["Y"].astype(np.float32)
        got = np.fromfile(out / "output" / "Y.bin", np.float16).reshape(rows, 1024).astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-3, err_msg=f"R={rows}")
    assert len(built) == 1, built  # one binary (cached by its sources) for every shape
    np.zeros((513, 1024), np.float16).tofile(out / "input" / "X.bin")
    r = CliRunner().invoke(main, ["emulator", "build", str(out), "X=513,1024"])
    assert r.exit_code != 0 and "the tiling function failed" in r.output, r.output
