"""Fused decode attention with grouped-query heads (kv head x group rows, `fuse,tile`):
the score loop over a key block holds the row max (`mx max= s[t]`, fused into it), which
the distributed lowering now reduces once over the block (`Reduce*` where it stood: `mx`
is read nowhere else in the loop) instead of leaving the whole loop to a scalar dot per key.
The transformed kernel keeps the meaning on fresh random inputs; a reduction whose target
the loop reads is still refused."""

from __future__ import annotations

from transformer import api, ir
from transformer.codegen import emit_ascendc
from transformer.lower.vector import _unread_reduction

import pytest

from small_kernels import DECODE_GQA

from .conftest import apply, check_emitted, fresh_seed, kernel_text

SIZES = {"G": 2, "R": 2, "L": 512, "D": 128}


def _decode(sizes: dict[str, int]) -> ir.Kernel:
    return kernel_text(DECODE_GQA).with_sizes(sizes)  # keys tiled in blocks of 128: the distributed score loop


def test_the_score_loop_reduces_its_row_max_as_a_vector() -> None:
    k = _decode(SIZES)
    t = apply(k, "fuse,tile")
    em = emit_ascendc(t)
    assert em.plan is not None and em.warnings == []
    (nest,) = [n for n in em.plan.nests if "ReduceMax" in n.instructions]
    assert nest.pattern == "distributed" and "WholeReduceSum" in nest.instructions
    assert "whole-tile" in nest.where
    rep = api.verify(k, t, trials=1, seed=fresh_seed())
    assert rep.ok, rep


@pytest.mark.slow
def test_emitted_score_loop_with_its_row_max_matches_the_interpreter() -> None:
    """The keys in blocks of 128 (four per row), the row max reduced per block."""
    k = _decode({**SIZES, "R": 1})
    t = apply(k, "fuse,tile")
    em = emit_ascendc(t)
    assert em.plan is not None and any(n.pattern == "distributed" and "ReduceMax" in n.instructions
                                       for n in em.plan.nests)
    check_emitted(t, k, emitted=em, what="decode attention, keys in blocks")


LOOP = """
kernel f(X: f32[N]) -> (Y: f32[N]) {
  size N = 64
  temp mx: f32
  temp y: f32[N]
  mx = -inf
  n: for j in 0..N {
    y[j] = X[j] * 2.0
    mx max= y[j]
    Y[j] = y[j] - mx
  }
}
"""


def test_a_reduction_the_loop_reads_is_not_distributed() -> None:
    k = kernel_text(LOOP)
    loop = next(s for s in k.body if isinstance(s, ir.For))
    leaves = [s for s in loop.body if isinstance(s, ir.Assign)]
    red = leaves[1]
    assert not _unread_reduction(red, leaves)  # `Y[j] = y[j] - mx` reads the partial max
    assert _unread_reduction(red, leaves[:2])
    assert not _unread_reduction(leaves[0], leaves)  # `=` is no reduction
