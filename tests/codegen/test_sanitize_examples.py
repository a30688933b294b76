"""Issue 5 acceptance: for every example under every pipeline documented in
examples/README.md (the table is read here, so a new row is covered or fails loudly), the
emitted Ascend C compiled with `-fsanitize=address,undefined` (plus -Wall -Wextra -Werror,
-O0 as every verification, through the codegen helpers' compile cache) runs clean and matches the interpreter
of the original kernel on fresh random inputs (seed from OS entropy, printed on failure).
Sizes are small, and every row is in ONE build (tests/codegen/bundle.py): 20 sanitizer builds
one by one were about 160 s of CPU. The first row of each example doubles as its
"documented pipeline matches the interpreter" check (test_examples.py builds it no second
time)."""

from __future__ import annotations

import pytest

from documented import OPERATORS, ROWS

from .bundle import Bundle, build_cases, check_bundled
from .conftest import DOCUMENTED, ROOT, apply, example

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


def _case(i: int) -> str:
    name, _ = ROWS[i]
    return f"{name}_row{i}"


def _original(i: int):  # type: ignore[no-untyped-def]
    name, pipeline = ROWS[i]
    return example(name, SMALL_FOR.get((name, pipeline), SMALL[name]))


@pytest.fixture(scope="module")
def rows_bundle() -> Bundle:
    """Every row of examples/README.md transformed, in one sanitizer build."""
    return build_cases({_case(i): apply(_original(i), ROWS[i][1]) for i in range(len(ROWS))}, sanitize=True)


def test_first_rows_are_the_documented_pipelines_at_their_sizes() -> None:
    """test_examples.py relies on this file for DOCUMENTED: each example's first row here is
    its documented pipeline at the sizes of the codegen tests."""
    first: dict[str, int] = {}
    for i, (name, _) in enumerate(ROWS):
        first.setdefault(name, i)
    for name, (pipeline, sizes) in DOCUMENTED.items():
        i = first[name]
        assert ROWS[i][1] == pipeline and SMALL_FOR.get((name, pipeline), SMALL[name]) == sizes, name


@pytest.mark.parametrize("i", range(len(ROWS)), ids=[f"{n}-{p}" for n, p in ROWS])
def test_documented_pipeline_runs_clean_under_sanitizers(rows_bundle: Bundle, i: int) -> None:
    name, pipeline = ROWS[i]
    check_bundled(rows_bundle, _case(i), _original(i),
                  what=f"{name} --passes {pipeline} under -fsanitize=address,undefined")
