"""int8 x int8 -> i32 on the cube (issue 28 item 2d) with the per-channel dequant on the
vector cores: `examples/int8_linear.ir` under `gemm,tile`.

The cube multiplies s8 x s8 into s32 (docs/ascend-facts.md: int8 fractals of 16 x 32); the
`gemm` lowering takes int8 L1/L0A/L0B buffers, an int32 L0C, K blocks and slices in
multiples of 32, and writes the i32 accumulator by `Fixpipe` without quantisation to the
GM workspace, from which the split-off epilogue (`Cast` i32 -> f32, `Mul` by `scale`,
`Cast` to f16) runs on the vector cores. Plan tests without a compile; the interpreter is
checked against the numpy reference (tests/references.py) on full-range int8; the slow test
builds once (sanitizers) at sizes with M, N and K tails and compares bit for bit."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from transformer.codegen import compile_emitted, emit_ascendc, run_compiled
from passes.base import parse_pipeline, run_pipeline
from transformer.interp import run
from transformer.lower import lower_kernel

from .conftest import apply, example, fresh_seed, kernel_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import references  # noqa: E402  (tests/references.py, independent of the interpreter)

PIPELINE = "gemm,tile"
TAILS = {"M": 50, "N": 40, "K": 100}  # M, N tails of the 16-row fractal; K of the int8 fractal's 32


def _full_range(k, rng: np.random.Generator) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """int8 operands over all of -128..127 (the extremes included), scales of both signs."""
    s = k.size_values()
    m, n, kk = s["M"], s["N"], s["K"]
    a = rng.integers(-128, 128, size=(m, kk)).astype(np.int8)
    w = rng.integers(-128, 128, size=(n, kk)).astype(np.int8)
    a[0, :] = -128  # the largest products: 128 * 128 per term
    w[0, :] = -128
    scale = rng.uniform(-1e-3, 1e-3, size=n).astype(np.float32)
    return {"A": a, "W": w, "scale": scale}


def test_gemm_puts_the_int8_matmul_on_the_cube_and_splits_the_dequant() -> None:
    t, trace = run_pipeline(example("int8_linear"), parse_pipeline(PIPELINE), None)
    text = "\n".join(c for e in trace for c in (*e.changes, *e.decisions))
    assert "split the epilogue of the matmul nest `mm`" in text and "`acc` (i32) to the GM workspace" in text, text
    mm = next(s for s in t.body if getattr(s, "label", "") == "mm")
    ann = mm.annotation("gemm")
    assert ann is not None and int(ann.get("k")) % 32 == 0 and int(ann.get("k0")) % 32 == 0, ann
    em = emit_ascendc(t)
    src = em.source
    assert "AllocTensor<int8_t>()" in src and "AllocTensor<int32_t>()" in src and "Mmad(" in src
    assert "F322F16" not in src  # the i32 accumulator leaves L0C unquantised
    # int8 fractals: 16 x 32 = 512 elements per L0A fractal, K groups of 32
    assert "* 512]" in src and "+ 31) / 32;" in src
    plan = lower_kernel(t)
    assert not [(n.where, n.fallback) for n in plan.nests if n.fallback]
    epi = [n for n in plan.nests if n.plan and any(getattr(p.item, "op", "") == "Cast" for p in n.plan)]
    assert epi, "the dequant epilogue is vector code"


def test_int8_b_stored_k_by_n_is_refused_with_the_reason() -> None:
    k = kernel_text("""
kernel m(A: i8[M, K], B: i8[K, N]) -> (C: i32[M, N]) {
  size M = 32
  size N = 32
  size K = 64
  temp acc: i32[M, N]
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0
      for k in 0..K { acc[i, j] += i32(A[i, k]) * i32(B[k, j]) }
      C[i, j] = acc[i, j]
    }
  }
}
""")
    t, trace = run_pipeline(k, parse_pipeline("gemm"), None)
    text = "\n".join(e.noop or "" for e in trace)
    assert all(getattr(s, "annotation", lambda _: None)("gemm") is None for s in t.body)
    assert "LoadData transposes 16-bit fractals only" in text, (text, trace)


def test_interpreter_matches_the_numpy_reference_on_full_range_int8() -> None:
    seed = fresh_seed()
    k = example("int8_linear", TAILS)
    ins = _full_range(k, np.random.default_rng(seed))
    got = run(k, ins)["C"]
    want = references.int8_linear(**ins)["C"]
    assert np.array_equal(got, want), f"seed {seed}"


@pytest.mark.slow
def test_emitted_int8_matmul_with_tails_is_exact() -> None:
    """One build under sanitizers at M, N, K tails; full-range int8: the emitted kernel's
    f16 output equals the interpreter's and the numpy reference's bit for bit."""
    k = example("int8_linear", TAILS)
    t = apply(k, PIPELINE)
    em = emit_ascendc(t)
    assert not em.warnings, em.warnings
    binary = compile_emitted(em, sanitize=True, optimize="-O0")
    seed = fresh_seed()
    ins = _full_range(k, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory(prefix="ascx-i8mm-") as tmp:
        got = run_compiled(binary, em.plan, ins, Path(tmp))["C"]
    want = references.int8_linear(**ins)["C"]
    assert np.array_equal(run(k, ins)["C"], want), f"interpreter (seed {seed})"
    assert np.array_equal(got, want), f"emitted (seed {seed}): max diff {np.max(np.abs(got.astype(float) - want))}"
