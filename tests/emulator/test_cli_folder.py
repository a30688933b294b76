"""`ascx emulator build` / `ascx profile` on folders and hand-written sources: the command-line
errors (fast: nothing here compiles) and the behaviour on user code (slow: one small build each)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main as cli_main


def _invoke(*args: str):
    return CliRunner().invoke(cli_main, list(args))


def test_build_of_a_folder_without_a_kernel_is_a_usage_error(tmp_path: Path) -> None:
    """Issue 29 item 14: this was `internal error: NameError: name 'UsageError'` with exit 3."""
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    res = _invoke("emulator", "build", str(tmp_path))
    assert res.exit_code == 2, res.output
    assert "has no kernel source next to it" in res.output
    assert "hint:" in res.output and "internal error" not in res.output


def test_build_of_a_missing_folder_and_a_folder_without_main(tmp_path: Path) -> None:
    res = _invoke("emulator", "build", str(tmp_path / "nothing"))
    assert res.exit_code == 2 and "not a directory" in res.output, res.output
    (tmp_path / "k_custom.cpp").write_text("void k() {}\n")
    res = _invoke("emulator", "build", str(tmp_path))
    assert res.exit_code == 2 and "no host program" in res.output, res.output


def test_cflags_with_a_subcommand_is_a_usage_error(tmp_path: Path) -> None:
    res = _invoke("emulator", "--cflags", "build", str(tmp_path))
    assert res.exit_code == 2, res.output
    assert "go without a subcommand" in res.output and "internal error" not in res.output


FOLDER = Path(__file__).parent / "cases" / "profile_folder"


@pytest.mark.slow
def test_profile_of_a_sample_folder_runs_its_self_check_and_shows_warnings(tmp_path: Path) -> None:
    """Issue 26 item 5: `ascx profile DIR` (main.cpp + two kernel files), built without -Werror
    (the unused parameter warns, not fatal); hand-written code runs the arithmetic by default,
    so the host's own check passes; --timing-only fails it with a note saying why."""
    work = tmp_path / "sample"
    shutil.copytree(FOLDER, work)
    res = _invoke("profile", str(work))
    assert res.exit_code == 0, res.output
    assert "warning: unused parameter" in res.output and "compiled with the warnings above (not fatal)" in res.output
    assert "full run" in res.output
    assert "launch       scale_custom: AIV mode, blockDim 4" in res.output
    assert "launch       bias_custom: AIV mode, blockDim 4" in res.output
    assert "hazards      none" in res.output
    assert (work / "output").is_dir()  # created, as the samples' run scripts do
    res = _invoke("profile", str(work), "--timing-only")
    assert res.exit_code == 2, res.output
    assert "mismatch: 4096 of 4096" in res.output and "profile without --timing-only" in res.output


@pytest.mark.slow
def test_profile_of_a_handwritten_cpp_that_checks_itself(tmp_path: Path) -> None:
    """A single .cpp with its own main and check profiles as it is (it failed with "mismatch"
    when hand-written code defaulted to timing-only)."""
    src = tmp_path / "scale.cpp"
    src.write_text((FOLDER / "scale_custom.cpp").read_text() + """
#include <cstdio>
int32_t main()
{
    const size_t bytes = 4 * 1024 * sizeof(float);
    float *x = reinterpret_cast<float *>(AscendC::GmAlloc(bytes));
    float *y = reinterpret_cast<float *>(AscendC::GmAlloc(bytes));
    for (uint32_t i = 0; i < 4 * 1024; ++i) x[i] = static_cast<float>(i % 13);
    ICPU_RUN_KF(scale_custom, 4, reinterpret_cast<GM_ADDR>(x), reinterpret_cast<GM_ADDR>(y), 0u);
    for (uint32_t i = 0; i < 4 * 1024; ++i)
        if (y[i] != 2.0f * x[i]) { std::printf("mismatch at %u\\n", i); return 1; }
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    return 0;
}
""")
    res = _invoke("profile", str(src), "--json")
    assert res.exit_code == 0, res.output
    assert "warning: unused parameter" in res.output
    body = json.loads(res.output[res.output.index("{"):res.output.rindex("}") + 1])
    assert body["details"]["timing_only"] is False and body["cycles"] > 0


def test_malformed_define_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    (tmp_path / "k_custom.cpp").write_text("void k() {}\n")
    res = _invoke("emulator", "build", str(tmp_path), "-D", "1BAD=2")
    assert res.exit_code == 2, res.output
    assert "expected NAME or NAME=VALUE" in res.output and "hint: e.g. -D SOC_VERSION=" in res.output
    res = _invoke("profile", "examples/add.ir", "--no-auto-sync")
    assert res.exit_code == 2 and "apply to hand-written sources" in res.output, res.output


AUTO_SYNC_KERNEL = """#include "kernel_operator.h"
#ifndef SCALE
#error "SCALE comes from -D"
#endif
using namespace AscendC;
extern "C" __global__ __aicore__ void k_custom(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 256);
    LocalTensor<float> t = b.Get<float>();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, 64);
    yg.SetGlobalBuffer((__gm__ float *)y, 64);
    DataCopy(t, xg, 64);
    yg.SetValue(0, t.GetValue(3) * SCALE);  // no MTE2_S flag: the compiler's auto-sync orders it
}
"""
AUTO_SYNC_MAIN = """#include <cstdio>
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void k_custom(GM_ADDR x, GM_ADDR y);
int main()
{
    float *x = reinterpret_cast<float *>(AscendC::GmAlloc(256)), *y = reinterpret_cast<float *>(AscendC::GmAlloc(256));
    for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i);
    ICPU_RUN_KF(k_custom, 1, reinterpret_cast<GM_ADDR>(x), reinterpret_cast<GM_ADDR>(y));
    std::printf("y0 %g\\n", static_cast<double>(y[0]));
    return y[0] == 3.0f * SCALE ? 0 : 1;
}
"""


@pytest.mark.slow
def test_build_passes_defines_and_auto_sync_is_on_unless_turned_off(tmp_path: Path) -> None:
    (tmp_path / "k_custom.cpp").write_text(AUTO_SYNC_KERNEL)
    (tmp_path / "main.cpp").write_text(AUTO_SYNC_MAIN)
    res = _invoke("emulator", "build", str(tmp_path), "-D", "SCALE=2")
    assert res.exit_code == 0, res.output
    assert "y0 6" in res.output and "hazard" not in res.output
    res = _invoke("emulator", "build", str(tmp_path), "-D", "SCALE=2", "--no-auto-sync")
    assert res.exit_code == 1, res.output
    assert "sync hazard: RAW on UB" in res.output and "MTE2 at" in res.output and "and S at" in res.output
