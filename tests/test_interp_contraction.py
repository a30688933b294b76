"""The interpreter's fast paths against its in-order oracle (`run(..., vectorise=False)`).

- Contractions (`T[f] += a * b` summed over loop variables, f32) run as one matrix
  product (`transformer.contraction`): same results within the output dtype's tolerance
  (the IR promises the accumulation dtype and store rounding, not a summation order), the
  same errors, and memory bounded by the operands, not the iteration space.
- f16/bf16 accumulations keep their dtype's rounding: bit-identical to the oracle.
- Strided views (`X[i, k + 1]` read as a slice, not a gather) give identical results
  (forced on every access that allows them, not only the large ones they are used for).
"""

from __future__ import annotations

import contextlib
import tracemalloc
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import contraction_kernels, runnable_kernels

from transformer import contraction, interp
from transformer.check import check_kernel
from transformer.diagnostics import InterpError
from transformer.interp import random_inputs, run, tolerance
from transformer.parser import parse, parse_file
from transformer.printer import print_kernel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _outcome(k, inputs, vectorise):  # type: ignore[no-untyped-def]
    try:
        return run(k, inputs, vectorise=vectorise)
    except InterpError as e:
        return e


@contextlib.contextmanager
def _views_from(n: int) -> Iterator[None]:
    """Read accesses of at least `n` elements as strided views (1: every one that can be)."""
    old = interp.BASIC_MIN_ELEMENTS
    interp.BASIC_MIN_ELEMENTS = n
    try:
        yield
    finally:
        interp.BASIC_MIN_ELEMENTS = old


def _agree(k, seed: int, *, sum_of_products: bool = False) -> None:  # type: ignore[no-untyped-def]
    """The fast interpreter (with strided views as small as they come, and as shipped)
    agrees with the in-order oracle: same error, or outputs within the dtype's tolerance.

    Reordering a sum changes its rounding by up to ~eps x the sum of the magnitudes of its
    terms, which a sum that cancels to a small value (a scalar total near 0) turns into a
    large relative error. So the tolerance is taken relative to that magnitude: for a sum
    of products, the kernel run on the inputs' absolute values; otherwise 1."""
    inputs = random_inputs(k, np.random.default_rng(seed))
    seq = _outcome(k, inputs, vectorise=False)
    text = print_kernel(k)
    scale: dict[str, object] = {t.name: 1.0 for t in k.outputs}
    if sum_of_products and not isinstance(seq, InterpError):
        scale = {n: np.maximum(np.abs(np.asarray(v, np.float64)), 1.0)
                 for n, v in run(k, {n: np.abs(v) for n, v in inputs.items()}).items()}
    for views_from in (1, interp.BASIC_MIN_ELEMENTS):
        with _views_from(views_from):
            fast = _outcome(k, inputs, vectorise=True)
        if isinstance(seq, InterpError) or isinstance(fast, InterpError):
            assert isinstance(seq, InterpError) and isinstance(fast, InterpError), f"{text}\noracle: {seq}\nfast: {fast}"
            assert (seq.message, seq.loc) == (fast.message, fast.loc), text
            continue
        for t in k.outputs:
            rtol, atol = tolerance(t.dtype)
            e, a = (np.asarray(x[t.name], np.float64) for x in (seq, fast))
            same = (e == a) | (np.isnan(e) & np.isnan(a))
            ok = same | (np.abs(a - e) <= atol * scale[t.name] + rtol * np.abs(e))
            assert ok.all(), f"{t.name}: oracle {e[~ok][:4]} fast {a[~ok][:4]}\n{text}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contraction_kernels(), st.integers(0, 2**32 - 1))
def test_contractions_agree_with_in_order_oracle(k, seed: int) -> None:  # type: ignore[no-untyped-def]
    assert check_kernel(k) == []
    _agree(k, seed, sum_of_products=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(runnable_kernels(), st.integers(0, 2**32 - 1))
def test_runnable_kernels_agree_with_in_order_oracle(k, seed: int) -> None:  # type: ignore[no-untyped-def]
    _agree(k, seed)


def _count_contractions(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    calls: list[tuple[int, ...]] = []
    real = contraction.contract

    def counting(values, full, reduced):  # type: ignore[no-untyped-def]
        out = real(values, full, reduced)
        if out is not None:
            calls.append(full)
        return out

    monkeypatch.setattr(interp, "contract", counting)
    return calls


@pytest.mark.parametrize("name,sizes,expected", [
    ("matmul", {"M": 12, "N": 10, "K": 16}, 1),  # the whole GEMM is one matmul
    ("attention", {"S": 16, "D": 4}, 2),  # Q.K^T and P.V
])
def test_examples_take_the_blas_path_and_agree(monkeypatch: pytest.MonkeyPatch, name: str,
                                               sizes: dict[str, int], expected: int) -> None:
    k = parse_file(str(EXAMPLES / f"{name}.ir")).with_sizes(sizes)
    calls = _count_contractions(monkeypatch)
    _agree(k, 7)
    assert len(calls) == 2 * expected  # `_agree` runs the fast interpreter twice


def test_strided_views_equal_gathers_on_stencils() -> None:
    """Shifted and strided reads and writes (`X[i + 1, 2 * j]`), as views and as gathers."""
    k = parse("""kernel p(X: f32[N + 1, 2 * M]) -> (Y: f32[M, N], Z: f32[N, M]) {
      size N = 7
      size M = 5
      for i in 0..N { for j in 0..M {
        Y[j, i] = X[i + 1, 2 * j] * 2.0 + X[i, 2 * j + 1]
        Z[i, j] = Y[j, i] - X[N - i, j]
      } } }""", "p.ir")
    inputs = random_inputs(k, np.random.default_rng(5))
    seq = run(k, inputs, vectorise=False)
    for n in (1, 10**9):
        with _views_from(n):
            fast = run(k, inputs)
        for name in seq:
            np.testing.assert_array_equal(fast[name], seq[name])


def test_f16_products_and_f16_accumulators_are_not_reassociated(monkeypatch: pytest.MonkeyPatch) -> None:
    k = parse("""kernel p(A: f16[N, K], B: f16[K, N]) -> (C: f32[N, N], H: f16[N, N]) {
      size N = 6
      size K = 40
      for i in 0..N { for j in 0..N {
        C[i, j] = 0.0
        H[i, j] = 0.0
        for k in 0..K {
          C[i, j] += A[i, k] * B[k, j]
          H[i, j] += f32(A[i, k]) * f32(B[k, j])
        } } } }""", "p.ir")
    calls = _count_contractions(monkeypatch)
    rng = np.random.default_rng(3)
    inputs = random_inputs(k, rng)
    fast, seq = run(k, inputs), run(k, inputs, vectorise=False)
    assert calls == []  # an f16 product is one factor; an f16 sum runs in order
    np.testing.assert_array_equal(fast["C"], seq["C"])
    np.testing.assert_array_equal(fast["H"], seq["H"])


def test_contraction_reading_unwritten_element_fails_at_that_access() -> None:
    k = parse("""kernel p(A: f32[N, N]) -> (C: f32[N, N]) {
      size N = 8
      temp t: f32[N, N]
      for i in 0..N { for j in 0..N - 1 { t[i, j] = A[i, j] } }
      for i in 0..N { for j in 0..N {
        C[i, j] = 0.0
        for k in 0..N { C[i, j] += A[i, k] * t[k, j] } } } }""", "p.ir")
    inputs = random_inputs(k, np.random.default_rng(0))
    with pytest.raises(InterpError, match=r"unwritten element \[0, 7\] of temp `t`") as fast:
        run(k, inputs)
    with pytest.raises(InterpError) as seq:
        run(k, inputs, vectorise=False)
    assert fast.value.loc == seq.value.loc and fast.value.loc is not None


def test_contraction_memory_is_bounded_by_operands() -> None:
    n = 256  # broadcasting the product over (i, j, k) would hold 64 MiB of f32
    k = parse_file(str(EXAMPLES / "matmul.ir")).with_sizes({"M": n, "N": n, "K": n})
    inputs = random_inputs(k, np.random.default_rng(0))
    tracemalloc.start()
    try:
        run(k, inputs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * n * n * 8, f"peak {peak / 2**20:.1f} MiB"


def test_contraction_cut_into_chunks_still_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interp, "CHUNK_ELEMENTS", 64)  # every loop cut into small chunks
    calls = _count_contractions(monkeypatch)
    k = parse_file(str(EXAMPLES / "attention.ir")).with_sizes({"S": 24, "D": 4})
    _agree(k, 11)
    assert len(calls) > 2


def test_blas_form_on_axis_sets() -> None:
    f = frozenset
    assert contraction.blas_form([f("ik"), f("kj")], f("k"))
    assert contraction.blas_form([f("bik"), f("bkj"), f()], f("k"))  # batched, a scalar factor
    assert contraction.blas_form([f("ik"), f("k"), f("kj")], f("k"))  # `k` joins `kj`
    assert contraction.blas_form([f("k"), f("jk")], f("k"))  # matrix-vector
    assert contraction.blas_form([f("kli"), f("l"), f("i")], f("i"))  # `l` joins `kli`
    assert not contraction.blas_form([f("ik"), f("kj")], f())  # nothing summed
    assert not contraction.blas_form([f("ik"), f("j")], f("k"))  # `k` in one operand only
    assert not contraction.blas_form([f("ik"), f("kj"), f("ij")], f("k"))  # three operands
    assert not contraction.blas_form([f("ijk")], f("k"))  # a plain sum
