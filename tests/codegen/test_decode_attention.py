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


# examples/decode_attention.ir under its documented pipeline (two-deep rows streamed by
# online_softmax, the group's rows tiled for the cores, P·V by the `vecmat` pattern)
DOCUMENTED = "fuse,online_softmax{block=64},tile,double_buffer"
SMALL_GQA = {"HQ": 4, "HK": 2, "S": 128, "D": 16}


def test_documented_gqa_decode_is_vector_code_with_pv_as_one_tile() -> None:
    from .conftest import example

    k = example("decode_attention", SMALL_GQA)
    t = apply(k, DOCUMENTED)
    em = emit_ascendc(t)
    assert em.plan is not None and not [n for n in em.plan.nests if n.fallback]
    (pv,) = [n for n in em.plan.nests if n.pattern == "vecmat"]
    assert {"Brcb", "Mul", "Add"} <= set(pv.instructions)
    prices = {name: cost for name, cost, _ in pv.tried}
    assert prices["interchanged"] is not None and prices["vecmat"] < prices["interchanged"]
    rep = api.verify(k, t, trials=2, seed=fresh_seed())
    assert rep.ok, rep


def test_vecmat_refuses_key_blocks_that_are_not_whole_brcb_repeats() -> None:
    from .conftest import example

    k = example("decode_attention", {**SMALL_GQA, "S": 48})
    em = emit_ascendc(apply(k, "fuse,online_softmax{block=12},tile,double_buffer"))
    assert em.plan is not None
    (pv,) = [n for n in em.plan.nests if n.pattern == "interchanged"]
    (why,) = [r for name, _, r in pv.tried if name == "vecmat"]
    assert "multiple of 8" in why


def test_each_query_row_gets_a_core_when_the_kv_heads_are_fewer() -> None:
    """32 query heads on 8 KV heads: `tile` cuts each group into 1-row tiles and the lowering
    collapses KV head x row tile over 32 of the 48 vector cores (lowering only)."""
    from .conftest import example

    k = example("decode_attention", {"HQ": 32, "HK": 8, "S": 256, "D": 128})
    em = emit_ascendc(apply(k, DOCUMENTED))
    assert em.plan is not None and em.plan.block_dim == 32
    assert any("collapsed" in ph.spread for ph in em.plan.phases)
