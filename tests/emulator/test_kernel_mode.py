"""The kernel mode the emulator build reads from a kernel's source (transformer/emulator/
kernel_mode.py): vector alone AIV, cube alone AIC, both or the Matmul API MIX,
KERNEL_TASK_TYPE_DEFAULT first, ASCENDC_CUBE_ONLY keeping a Matmul on the AIC; local headers
are read, comments are not. The launch that uses it is in test_matmul_hl (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer.emulator.kernel_mode import infer_mode, infer_modes, mode_flags

KERNEL = 'extern "C" __global__ __aicore__ void {name}(GM_ADDR x)\n{{\n{body}\n}}\n'


@pytest.mark.parametrize("body, mode", [
    ("TQue<TPosition::VECIN, 1> q; TQue<QuePosition::VECOUT, 1> o;", "aiv"),
    ("", "aiv"),
    ("TQue<TPosition::A1, 1> a; TQue<TPosition::CO1, 1> c;", "aic"),
    ("TQue<TPosition::B2, 1> b; TQue<AscendC::TPosition::VECCALC, 1> v;", "mix"),
    ("Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>> mm;", "mix"),
    ("REGIST_MATMUL_OBJ(&pipe, ws, mm, &t);", "mix"),
    ("#define ASCENDC_CUBE_ONLY\nMatmul<A, B, C> mm;", "aic"),
    ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2); TQue<TPosition::A1, 1> a;", "mix"),
    ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY); Matmul<A, B, C> mm;", "aiv"),
    ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY); TQue<TPosition::VECIN, 1> q;", "aic"),
    ("// TPosition::A1 in a comment\nTQue<TPosition::VECIN, 1> q;", "aiv"),
])
def test_mode_rules(body: str, mode: str) -> None:
    assert infer_mode(KERNEL.format(name="k", body=body)) == mode


def test_files_headers_and_flag(tmp_path: Path) -> None:
    (tmp_path / "cube.h").write_text("TQue<TPosition::A2, 1> a;\n")
    mix = tmp_path / "mix_custom.cpp"
    mix.write_text('#include "cube.h"\n#include "kernel_operator.h"\n' + KERNEL.format(name="m", body="TQue<TPosition::VECOUT, 1> o;"))
    vec = tmp_path / "vec_custom.cpp"
    vec.write_text(KERNEL.format(name="v1", body="") + KERNEL.format(name="v2", body="TBuf<TPosition::VECCALC> t;"))
    host = tmp_path / "main.cpp"
    host.write_text("int main() { return 0; }\n")
    assert infer_modes([mix, vec, host]) == {"m": "mix", "v1": "aiv", "v2": "aiv"}
    assert mode_flags([mix, vec]) == ['-DASCX_EMU_INFERRED_MODES="m:mix;v1:aiv;v2:aiv"']
    assert mode_flags([host]) == []
