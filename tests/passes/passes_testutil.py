"""Shared helpers for the pass tests: small sizes per example, apply a pipeline to kernel
text, compare two kernels under the reference interpreter, run the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from passes.base import run_pipeline
from transformer import ir
from transformer.diagnostics import AscxError
from transformer.interp import compare_outputs, random_inputs, run
from transformer.parser import parse, parse_file
from transformer.printer import print_kernel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# small sizes that keep the interpreter fast and still exercise remainders (odd extents)
SMALL_SIZES: dict[str, dict[str, int]] = {
    "add": {"M": 6, "N": 10},
    "softmax": {"R": 6, "C": 12},
    "layernorm": {"N": 6, "H": 12},
    "rmsnorm": {"N": 6, "H": 12},
    "matmul": {"M": 8, "N": 6, "K": 10},
    "attention": {"S": 12, "D": 4},
    "attention_causal": {"S": 12, "D": 4},
    "conv2d": {"N": 1, "C": 2, "H": 6, "W": 5, "F": 3},
    "embedding": {"V": 30, "H": 10, "N": 7},
    "cross_entropy": {"R": 6, "C": 12},
    "paged_attention": {"B": 2, "NH": 2, "D": 4, "BS": 3, "MB": 2, "NB": 5},
}


def example(name: str, sizes: dict[str, int] | None = None) -> ir.Kernel:
    k = parse_file(str(EXAMPLES / f"{name}.ir"))
    s = SMALL_SIZES.get(name, {}) if sizes is None else sizes
    return k.with_sizes({n: v for n, v in s.items() if n in k.size_values()})


def kernel(text: str) -> ir.Kernel:
    return parse(textwrap.dedent(text).strip() + "\n", "test.ir")


def apply(text_or_kernel: str | ir.Kernel, pipeline: str, *, strict: bool = False) -> ir.Kernel:
    k = kernel(text_or_kernel) if isinstance(text_or_kernel, str) else text_or_kernel
    out, _ = run_pipeline(k, pipeline, strict=strict)
    return out


def canon(text: str) -> str:
    return print_kernel(kernel(text))


def equivalent(a: ir.Kernel, b: ir.Kernel, *, trials: int = 2, seed: int | None = None) -> list[str]:
    """Problems found comparing `a` and `b` on random inputs (empty: equivalent)."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**32))
    problems = []
    for t in range(trials):
        inputs = random_inputs(a, np.random.default_rng([seed, t]))
        exp = run(a, inputs)
        try:
            got = run(b, inputs)
        except AscxError as e:
            problems.append(f"the transformed kernel fails in the interpreter: {e.short()}")
            return problems
        for d in compare_outputs(a, exp, got):
            if not d.ok:
                problems.append(f"{d.name}: max abs {d.max_abs:.3g} max rel {d.max_rel:.3g} (seed {seed}, trial {t})")
    return problems


def roundtrips(k: ir.Kernel) -> bool:
    text = print_kernel(k)
    again = parse(text, "roundtrip.ir")
    return again == k and print_kernel(again) == text


def cli(*args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "transformer.cli", *args], capture_output=True, text=True,
                          env=e, cwd=cwd or str(ROOT), timeout=120)
