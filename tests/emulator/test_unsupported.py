"""An API the emulator does not implement fails at compile time with one error that names it
(ascx_emu/unsupported.h), not an unknown-identifier error or a template cascade."""

from __future__ import annotations

import re
import subprocess

import pytest

from transformer.emulator import cflags

USES = {
    "Silu": "Silu(t, t, 128);",
    "Sigmoid": "Sigmoid<half, false>(t, t, 128);",                       # explicit template arguments
    "LoadData3DParamsV2": "LoadData3DParamsV2<half> p; (void)p;",      # a parameter struct
    "GatherRepeatParams": "GatherRepeatParams q; (void)q;",
    "TQueSync": "TQueSync<PIPE_V, PIPE_MTE3> s; (void)s;",
    "ConfusionTranspose": "ConfusionTranspose(t, t);",
    "SetMaskCount": "SetMaskCount();",
    "SoftmaxFlashV2": "SoftmaxFlashV2<half>(t, t, t, t);",
}


@pytest.mark.slow
def test_each_unsupported_api_is_one_error_naming_it(tmp_path):
    body = "\n    ".join(USES.values())
    src = tmp_path / "uses.cpp"
    src.write_text(f"""#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k() {{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<half> t = b.Get<half>();
    {body}
}}
""")
    r = subprocess.run(["g++", *cflags(), "-Wall", "-Wextra", "-fsyntax-only", str(src)], capture_output=True, text=True)
    assert r.returncode != 0
    errors = [ln for ln in r.stderr.splitlines() if " error: " in ln]
    for name in USES:
        assert sum(f"AscendC::{name} is not emulated" in ln for ln in errors) == 1, (name, r.stderr)
    assert len(errors) == len(USES), "\n".join(errors)  # nothing but the named errors


@pytest.mark.slow
def test_supported_names_are_not_shadowed(tmp_path):
    """printf/PRINTF and the emulated overloads still compile next to the catch-all names."""
    src = tmp_path / "ok.cpp"
    src.write_text("""#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k() {
    PRINTF("block %d\\n", static_cast<int>(GetBlockIdx()));
    printf("plain\\n");
}
int main() { ICPU_RUN_KF(k, 2); return 0; }
""")
    exe = tmp_path / "ok"
    r = subprocess.run(["g++", *cflags(), "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert re.findall(r"block (\d)", run.stdout) == ["0", "1"] and run.stdout.count("plain") == 2
