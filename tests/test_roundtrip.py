"""Round trip: the printer's output is valid input that means the same kernel.

For every example file and for 500 generated kernels per run (`strategies.kernels()`):
`parse(print_kernel(k)) == k`, and printing is idempotent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strategies import kernels  # noqa: E402

from transformer import ir  # noqa: E402
from transformer.check import check_kernel  # noqa: E402
from transformer.diagnostics import AscxError  # noqa: E402
from transformer.parser import parse  # noqa: E402
from transformer.printer import print_kernel  # noqa: E402

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.ir"))


def _reparse(text: str) -> ir.Kernel:
    try:
        return parse(text, "<printed>")
    except AscxError as e:  # show the printed text with the error
        raise AssertionError(f"printed kernel does not parse:\n{e.render()}\n---\n{text}") from None


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_round_trip(path: Path) -> None:
    k = parse(path.read_text(), str(path))
    text = print_kernel(k)
    k2 = _reparse(text)
    assert k2 == k
    assert print_kernel(k2) == text
    assert check_kernel(k2) == []


def test_examples_present() -> None:
    assert {p.stem for p in EXAMPLES} >= {
        "add", "softmax", "layernorm", "rmsnorm", "matmul", "attention", "attention_causal", "conv2d"}


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kernels())
def test_generated_kernels_round_trip(k: ir.Kernel) -> None:
    errors = check_kernel(k)
    assert errors == [], f"strategy produced an invalid kernel: {errors[0].short()}\n{print_kernel(k)}"
    text = print_kernel(k)
    k2 = _reparse(text)
    assert k2 == k, f"round trip changed the kernel:\n{text}\n---\n{print_kernel(k2)}"
    assert print_kernel(k2) == text
