"""Matmul on the cube at any size (`gemm` pass, transformer/lower/gemm.py): the pass marks
matmul nests and splits other epilogues off (with or without `fuse`), the blocks fit the
chip, the lowering uses every AIC, and the emitted kernel — tails in M, N and K, several C
tiles, L1 blocks and L0 slices — matches the interpreter, hazard-free (an emulator run with
a sync hazard fails)."""

from __future__ import annotations

import pytest

from passes.base import BadParameter, CapacityExceeded, PipelineError
from passes.gemm import Gemm
from transformer import ir
from transformer.capacity.from_kernel import check_kernel_capacity
from transformer.codegen import emit_ascendc
from transformer.lower.gemm import Blocks, choose_blocks, gemm_buffers, match_gemm
from transformer.targets import resolve_target

from .conftest import apply, check_emitted, example, kernel_text
from .test_examples import MATMUL_RELU

BIAS_RELU = MATMUL_RELU.replace("M = 32", "M = 40").replace("N = 32", "N = 72").replace("K = 64", "K = 100")

RELU_BT = """
kernel mm_relu_t(A: f16[M, K], Bt: f16[N, K]) -> (C: f16[M, N]) {
  size M = 40
  size N = 72
  size K = 100
  temp acc: f32[M, N]
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += f32(A[i, k]) * f32(Bt[j, k]) }
      C[i, j] = f16(max(acc[i, j], 0.0))
    }
  }
}
"""

SMALL_BLOCKS = "gemm{m=16,n=32,k=64,k0=32}"  # at 40 x 72 x 100: 3 x 3 tiles, 2 K blocks, 2 slices, tails everywhere


def _gemm_nests(k: ir.Kernel) -> list[ir.For]:
    return [s for s in k.body if isinstance(s, ir.For) and s.annotation("gemm") is not None]


@pytest.mark.parametrize("sizes", [{"M": 4096, "N": 4096, "K": 4096}, {"M": 3000, "N": 3000, "K": 3000},
                                   {"M": 17, "N": 33, "K": 1000}, {"M": 300, "N": 40, "K": 8}])
def test_chosen_blocks_fit_every_scope_and_the_kernel_uses_every_aic(sizes: dict[str, int]) -> None:
    k = apply(example("matmul", sizes), "gemm")
    (nest,) = _gemm_nests(k)
    assert check_kernel_capacity(k).status == "sat"
    em = emit_ascendc(k)
    assert em.plan is not None and em.plan.kind == "cube" and em.warnings == []
    assert {"DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe"} <= set(em.plan.instructions())
    g = match_gemm(k, nest)
    assert not isinstance(g, str)
    bl = choose_blocks(g, resolve_target(None))
    tiles = -(-sizes["M"] // bl.m) * -(-sizes["N"] // bl.n)
    assert em.plan.block_dim == min(24, tiles)
    assert em.plan.workspace == []  # the accumulator stays in L0C
    assert "GetValue" not in em.source and "SetValue" not in em.source


def test_blocks_at_4096_fill_l0c_and_double_buffer_l1_and_l0() -> None:
    k = example("matmul", {"M": 4096, "N": 4096, "K": 4096})
    g = match_gemm(k, k.body[0])
    assert not isinstance(g, str)
    bl = choose_blocks(g, resolve_target(None))
    assert bl == Blocks(128, 256, 256, 64)
    stages = {role: st for role, _, _, _, st, _ in gemm_buffers(bl)}
    assert stages == {"A_l1": 2, "B_l1": 2, "A_l0a": 2, "B_l0b": 2, "C_l0c": 1}


def test_blocks_that_do_not_fit_are_refused() -> None:
    k = example("matmul")
    with pytest.raises(CapacityExceeded) as e:
        apply(k, "gemm{m=256,n=256,k=256,k0=64}")
    assert e.value.scope == "l1"
    with pytest.raises(PipelineError):
        Gemm.from_args((("m", "64"),))
    with pytest.raises(BadParameter) as b:  # a block that is not a multiple of 16: refused, not a TypeError
        apply(k, "gemm{m=24,n=32,k=64,k0=32}")
    assert b.value.param == "blocks" and "m=24" in str(b.value)


def test_epilogue_is_split_off_with_or_without_fuse() -> None:
    k = kernel_text(BIAS_RELU)
    for pipeline in ("gemm", "fuse,gemm"):
        t = apply(k, pipeline)
        (nest,) = _gemm_nests(t)
        g = match_gemm(t, nest)
        assert not isinstance(g, str) and g.store is None and g.acc == "acc", pipeline
        assert [s.label for s in t.body if isinstance(s, ir.For)][1].endswith("epi")
        assert t.tensor("acc").rank == 2  # type: ignore[union-attr]


def test_tile_leaves_a_gemm_nest_alone() -> None:
    t = apply(kernel_text(BIAS_RELU), "gemm,tile")
    (nest,) = _gemm_nests(t)
    assert not any(isinstance(s, ir.Copy) for s in ir.iter_stmts((nest,)))
    assert any(d.kind == "local" for d in t.buffers)  # the epilogue was staged


def test_relu_store_stays_on_fixpipe_after_fuse() -> None:
    t = apply(kernel_text(RELU_BT), "fuse,gemm")
    (nest,) = _gemm_nests(t)
    g = match_gemm(t, nest)
    assert not isinstance(g, str) and g.relu and g.b_nk and g.store == "C"


@pytest.mark.slow
@pytest.mark.parametrize("text,pipeline", [
    (None, SMALL_BLOCKS),
    (BIAS_RELU, "fuse,gemm,tile,double_buffer"),
])  # relu(A @ Btᵀ) with tails: built with the batched ones (tests/codegen/test_bmm.py)
def test_emitted_gemm_matches_the_interpreter_with_tails(text: str | None, pipeline: str) -> None:
    k = kernel_text(text) if text else example("matmul", {"M": 40, "N": 72, "K": 100})
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.warnings == [] and "Mmad(" in em.source
    if pipeline == SMALL_BLOCKS:
        assert em.plan is not None and em.plan.block_dim == 9
    check_emitted(t, k, emitted=em, sanitize=True, what=f"gemm {pipeline}")


@pytest.mark.parametrize("text,sizes,zeroed", [
    (None, {"M": 40, "N": 72, "K": 100}, True),   # B[K, N] with a K tail: its padding rows are zeroed
    (None, {"M": 40, "N": 72, "K": 96}, False),   # K a multiple of 16: no padding rows
    (RELU_BT, None, False),                        # Bᵀ[N, K]: K is Nd2Nz's d, zero-filled by the copy
])
def test_k_tail_padding_rows_of_b_are_zeroed_in_l1(text: str | None, sizes: dict[str, int] | None, zeroed: bool) -> None:
    k = kernel_text(text) if text else example("matmul", sizes)
    em = emit_ascendc(apply(k, SMALL_BLOCKS))
    assert ("InitConstValue(" in em.source) == zeroed
    assert em.plan is not None and any("InitConstValue" in n.instructions for n in em.plan.nests) == zeroed
    if zeroed:  # the rows kLen..kPad of every 16-column group: np/16 runs of (kPad - kLen) 32 B blocks, kLen apart
        line = next(ln for ln in em.source.splitlines() if "InitConstValue(" in ln)
        assert "/ 16," in line and "half(0.0f)" in line
