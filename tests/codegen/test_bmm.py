"""Batched matmul on the cube (`gemm` and `tile` without sizes, transformer/lower/gemm.py): a
batch loop around a matmul nest is one matmul per batch, the C tiles of every batch dealt
over the AIC; an operand indexed without the batch variable is shared by every batch. The
IR keeps its meaning (interpreted before == after on fresh random inputs), and the emitted
kernel matches the interpreter with tails in M, N and K, hazard-free."""

from __future__ import annotations

import re

import pytest

from transformer import api, ir
from transformer.capacity.from_kernel import check_kernel_capacity
from transformer.codegen import emit_ascendc
from transformer.lower.gemm import match_gemm

from .conftest import apply, check_emitted, example, fresh_seed, kernel_text

# the user's form (issue 29): the f32 output accumulates, no temp; weights shared by batches too
SHARED_BT = """
kernel bmm_w(A: f16[B, M, K], W: f16[N, K], Bt: f16[B, N, K], V: f16[B, K, N], A0: f16[M, K], Bt0: f16[N, K]) -> (C: f32[B, M, N], D: f16[B, M, N], E: f16[B, M, N], F: f16[M, N]) {
  size B = 3
  size M = 40
  size K = 100
  size N = 72
  temp acc: f32[B, M, N]
  temp acc2: f32[B, M, N]
  temp acc0: f32[M, N]
  mw: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        C[b, i, j] = 0.0
        for k in 0..K { C[b, i, j] += f32(A[b, i, k]) * f32(W[j, k]) }
      }
    }
  }
  mt: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        acc[b, i, j] = 0.0
        for k in 0..K { acc[b, i, j] += f32(A[b, i, k]) * f32(Bt[b, j, k]) }
        D[b, i, j] = f16(max(acc[b, i, j], 0.0))
      }
    }
  }
  mv: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        acc2[b, i, j] = 0.0
        for k in 0..K { acc2[b, i, j] += f32(A[b, i, k]) * f32(V[b, k, j]) }
        E[b, i, j] = f16(acc2[b, i, j])
      }
    }
  }
  m0: for i in 0..M {
    for j in 0..N {
      acc0[i, j] = 0.0
      for k in 0..K { acc0[i, j] += f32(A0[i, k]) * f32(Bt0[j, k]) }
      F[i, j] = f16(max(acc0[i, j], 0.0))
    }
  }
}
"""

NOT_BATCHED = """
kernel odd(A: f16[M, B, K], W: f16[B, K, N]) -> (C: f32[B, M, N]) {
  size B = 2
  size M = 32
  size K = 32
  size N = 32
  mm: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        C[b, i, j] = 0.0
        for k in 0..K { C[b, i, j] += f32(A[i, b, k]) * f32(W[b, k, j]) }
      }
    }
  }
}
"""

SMALL = {"Bt": 3, "M": 40, "N": 72, "K": 100}
SMALL_BLOCKS = "gemm{m=16,n=32,k=64,k0=32}"  # 3 x 3 tiles per batch, 2 K blocks, 2 slices, tails everywhere


def _marked(k: ir.Kernel) -> list[ir.For]:
    return [s for s in k.body if isinstance(s, ir.For) and s.annotation("gemm") is not None]


def test_a_batch_loop_around_a_matmul_is_one_matmul_per_batch() -> None:
    k = example("bmm")
    g = match_gemm(k, k.body[0])
    assert not isinstance(g, str)
    assert (g.batch, g.m, g.n, g.k, g.a_batched, g.b_batched, g.store) == (16, 512, 512, 512, True, True, "C")
    t = kernel_text(SHARED_BT)
    gw, gt, _, g0 = (match_gemm(t, s) for s in t.body)
    assert not isinstance(g0, str) and (g0.batch, g0.a_batched, g0.b_batched) == (1, False, False)
    assert not isinstance(gw, str) and not isinstance(gt, str)
    assert (gw.a_batched, gw.b_batched, gw.b_nk, gw.store, gw.acc) == (True, False, True, None, "C")
    assert (gt.b_batched, gt.b_nk, gt.relu, gt.store) == (True, True, True, "D")
    why = match_gemm(kernel_text(NOT_BATCHED), kernel_text(NOT_BATCHED).body[0])
    assert why == "`A` is not indexed [b, .., ..]"


@pytest.mark.parametrize("pipeline", ["gemm", "tile"])
def test_bmm_reaches_the_cube_on_every_aic(pipeline: str) -> None:
    """`tile` without sizes chose nothing at 16 x 512^3 (a batch's A does not fit L1) and
    `mm=1` (3-D staging, scalar) at smaller sizes: both now give the blocked cube kernel."""
    for sizes in (None, {"Bt": 4, "M": 64, "N": 64, "K": 64}):
        k = example("bmm", sizes)
        t = apply(k, pipeline)
        (nest,) = _marked(t)
        assert check_kernel_capacity(t).status == "sat"
        em = emit_ascendc(t)
        assert em.plan is not None and em.plan.kind == "cube" and em.warnings == []
        assert {"DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe"} <= set(em.plan.instructions())
        assert "GetValue" not in em.source and "SetValue" not in em.source
        g = match_gemm(t, nest)
        assert not isinstance(g, str)
        tiles = g.batch * -(-g.m // 128) * -(-g.n // 256)  # the 128 x 256 C tile, clamped to N
        assert em.plan.block_dim == min(24, max(tiles, g.batch))


def test_gemm_and_tile_keep_the_meaning_on_fresh_inputs() -> None:
    for text, pipeline in ((None, "gemm"), (None, "tile"), (SHARED_BT, "gemm"), (SHARED_BT, "tile")):
        k = kernel_text(text) if text else example("bmm", SMALL)
        t = apply(k, pipeline)
        # `tile` leaves the unbatched `m0` of SHARED_BT to its own staged cube tiles
        assert len(_marked(t)) == len(k.body) - (text is not None and pipeline == "tile")
        rep = api.verify(k, t, trials=1, seed=fresh_seed())
        assert rep.ok, (pipeline, rep)


def test_bmm_trace_names_the_batches() -> None:
    from passes.base import parse_pipeline, run_pipeline

    _, trace = run_pipeline(example("bmm"), parse_pipeline("tile"), None)
    text = "\n".join(x for e in trace for x in e.changes)
    assert "`mm` (16 batches of 512 x 512 x 512) runs on the cube: @gemm(m=128, n=256, k=256, k0=64)" in text


@pytest.mark.slow
def test_emitted_bmm_matches_the_interpreter_with_tails() -> None:
    """One build, three batched matmuls: A[b] @ Wᵀ (weights shared, the f32 output
    accumulates), relu(A[b] @ Bt[b]ᵀ), A[b] @ V[b]; and an unbatched relu(A0 @ Bt0ᵀ) (the
    case tests/codegen/test_gemm.py built on its own); tails in M, N and K, 9 tiles a batch."""
    k = kernel_text(SHARED_BT)
    t = apply(k, SMALL_BLOCKS)
    assert len(_marked(t)) == 4
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.block_dim == 24 and len(re.findall(r"bIdx\w* \* ", em.source)) == 8  # A 3x, B 2x (W shared), C 3x
    check_emitted(t, k, emitted=em, sanitize=True, what="bmm")
