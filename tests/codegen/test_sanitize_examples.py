"""Issue 5 acceptance: for every example under every pipeline documented in
examples/README.md (the table is read here, so a new row is covered or fails loudly), the
emitted Ascend C compiled with `-fsanitize=address,undefined` (plus -Wall -Wextra -Werror,
-O0 as every verification, through the codegen helpers' compile cache) runs clean and matches the interpreter
of the original kernel on fresh random inputs (seed from OS entropy, printed on failure).
Sizes are small so the whole file stays around a minute on two cores."""

from __future__ import annotations

import pytest

from documented import OPERATORS, ROWS

from .conftest import DOCUMENTED, ROOT, apply, check_emitted, example

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


# small sizes per example: those of the codegen tests (conftest.DOCUMENTED: the matmul
# tiles and the online-softmax block are 64, and double_buffer needs two tiles to pipeline)
SMALL: dict[str, dict[str, int]] = {name: sizes for name, (_, sizes) in DOCUMENTED.items()}
# per (example, pipeline) overrides (the cube wants multiples of 16)
SMALL_FOR: dict[tuple[str, str], dict[str, int]] = {
    ("attention", "round_operand{pv.s=f16},tile"): {"S": 32, "D": 16},
    ("matmul", "gemm"): {"M": 40, "N": 72, "K": 100},  # tails in M, N and K
    ("attention", "round_operand{pv.s=f16},flash_attention"): {"S": 256, "D": 64},  # S % 128, D in (64, 128)
    ("attention_causal", "round_operand{pv.s=f16},flash_attention"): {"S": 256, "D": 64},
}


def test_every_example_has_a_documented_pipeline() -> None:
    names = {p.stem for p in (ROOT / "examples").glob("*.ir")} - set(OPERATORS)  # the operators: test_operators.py
    assert {n for n, _ in ROWS} == names
    assert set(SMALL) == names


@pytest.mark.parametrize("name,pipeline", ROWS)
def test_documented_pipeline_runs_clean_under_sanitizers(name: str, pipeline: str) -> None:
    k = example(name, SMALL_FOR.get((name, pipeline), SMALL[name]))
    t = apply(k, pipeline)
    check_emitted(t, k, sanitize=True, what=f"{name} --passes {pipeline} under -fsanitize=address,undefined")
