"""Golden files of the emitted Ascend C (add, softmax, matmul, attention under their
documented pipelines at their default sizes, plus attention as a mix kernel (QKᵀ and P·V
on the cube, `round_operand{pv.s=f16},tile`), and
`matmul_cube`: a cube matmul (Nd2Nz, LoadData, Mmad, Fixpipe into the workspace) whose
bias + relu epilogue runs on the vector cores, a mix kernel). A change in
emitted code must be looked at: regenerate with `pytest tests/codegen --update-golden`."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from transformer.codegen import emit_ascendc

from .conftest import DOCUMENTED, apply, example

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "add": ("add", DOCUMENTED["add"][0], {}),
    "softmax": ("softmax", DOCUMENTED["softmax"][0], {}),
    "matmul": ("matmul", DOCUMENTED["matmul"][0], {}),
    "attention": ("attention", DOCUMENTED["attention"][0], {}),
    "attention_mix": ("attention", "round_operand{pv.s=f16},tile", {"S": 256, "D": 64}),
    "matmul_cube": ("mm_bias_relu", "tile", {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_emitted_source_matches_golden(case: str, update_golden: bool) -> None:
    name, pipeline, sizes = CASES[case]
    if name == "mm_bias_relu":
        from .test_cube_select import matmul_bias_relu

        k = apply(matmul_bias_relu(), pipeline)
    else:
        k = apply(example(name, sizes), pipeline)
    src = emit_ascendc(k, source_name=f"examples/{name}.ir", pipeline=pipeline).source
    path = GOLDEN / f"{case}.cpp"
    if update_golden and (not path.exists() or path.read_text() != src):
        path.write_text(src)
        pytest.skip(f"updated {path}")
    assert path.exists(), f"missing golden file {path}; create it with --update-golden"
    want = path.read_text()
    if src != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), src.splitlines(True), "golden", "emitted", n=2))
        pytest.fail(f"emitted Ascend C for {case} changed (pytest --update-golden to accept):\n{diff[:6000]}")
