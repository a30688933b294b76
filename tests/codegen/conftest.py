"""Shared helpers of the code generation tests: example kernels, pipelines, and a
differential check (emitted Ascend C on the emulator vs the interpreter) whose seed comes
from OS entropy and is printed on failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from documented import MAIN
from passes.base import parse_pipeline, run_pipeline
from transformer import ir
from transformer.parser import parse, parse_file

ROOT = Path(__file__).resolve().parents[2]

# The first documented pipeline of each example (examples/README.md), with small sizes.
DOCUMENTED = MAIN


def example(name: str, sizes: dict[str, int] | None = None) -> ir.Kernel:
    k = parse_file(str(ROOT / "examples" / f"{name}.ir"))
    return k.with_sizes(sizes) if sizes else k


def kernel_text(text: str) -> ir.Kernel:
    return parse(text, "test.ir")


def apply(kernel: ir.Kernel, pipeline: str, target=None) -> ir.Kernel:  # type: ignore[no-untyped-def]
    return run_pipeline(kernel, parse_pipeline(pipeline), target)[0] if pipeline else kernel


def fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


def check_emitted(transformed: ir.Kernel, reference: ir.Kernel, *, target=None, sanitize: bool = False,  # type: ignore[no-untyped-def]
                  emitted=None, what: str = "") -> None:
    """Emitted code of `transformed` matches the interpreter on `reference` (fresh inputs)."""
    from transformer.codegen import verify_emitted

    seed = fresh_seed()
    diffs = verify_emitted(transformed, target, trials=1, seed=seed, reference=reference, sanitize=sanitize,
                           emitted=emitted)
    bad = [d.describe() for d in diffs if not d.ok]
    assert not bad, f"{what}: emitted code differs from the interpreter (seed {seed}): {bad}"
    assert diffs, f"{what}: no outputs compared"
