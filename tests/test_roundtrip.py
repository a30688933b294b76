"""Round trip: the printer's output is valid input that means the same kernel.

For every example file and for 500 generated kernels per run (`strategies.kernels()`),
plus 100 `strategies.runnable_kernels()` that must also run in the interpreter:
`parse(print_kernel(k)) == k`, and printing is idempotent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strategies import kernels, runnable_kernels  # noqa: E402

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


@pytest.mark.slow  # a fuzzer (hundreds of generated kernels): full tier only
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kernels())
def test_generated_kernels_round_trip(k: ir.Kernel) -> None:
    errors = check_kernel(k)
    assert errors == [], f"strategy produced an invalid kernel: {errors[0].short()}\n{print_kernel(k)}"
    text = print_kernel(k)
    k2 = _reparse(text)
    assert k2 == k, f"round trip changed the kernel:\n{text}\n---\n{print_kernel(k2)}"
    assert print_kernel(k2) == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(runnable_kernels())
def test_runnable_kernels_round_trip_and_run(k: ir.Kernel) -> None:
    """`runnable_kernels()` (for passes' semantic property tests) yields valid kernels the
    interpreter accepts, with finite outputs."""
    import numpy as np

    from transformer.interp import random_inputs, run

    errors = check_kernel(k)
    assert errors == [], f"{errors[0].short()}\n{print_kernel(k)}"
    text = print_kernel(k)
    assert _reparse(text) == k
    try:
        out = run(k, random_inputs(k, np.random.default_rng(0)))
    except AscxError as e:
        raise AssertionError(f"interpreter rejected a runnable kernel:\n{e.render()}\n---\n{text}") from None
    assert set(out) == {t.name for t in k.outputs}
    for name, a in out.items():
        assert np.all(np.isfinite(a.astype(np.float64))), f"{name} not finite\n{text}"
