"""Regressions found by `test_fuzz_emitted.py`: each kernel text is emitted, compiled
(-Wall -Wextra -Werror), run on the emulator and compared with the interpreter."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc

from .conftest import apply, check_emitted, example, kernel_text
from .test_tbuf_ping_pong import FIVE

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


def _check(text: str, warning: str = "") -> None:
    k = kernel_text(text)
    em = emit_ascendc(k)
    if warning:
        assert any(warning in w for w in em.warnings), em.warnings
    check_emitted(k, k, emitted=em, what=text)


def test_local_shared_by_two_phases() -> None:
    """A local written by one top-level nest and read by the next was declared once per
    phase (g++: redeclaration of `buf_B2`); it now lives in the GM workspace, warned."""
    _check("""
kernel k(B: f16[4]) -> (B1: f32[4]) {
  local B2: f32[4] @ub
  s: for i in 0..4 {
    B2[i] = f32(B[i])
  }
  t: for i in 0..4 {
    B1[i] = B2[i] * 2.0
  }
}
""", "local `B2` is used by phases `s`, `t`: it lives in the GM workspace")


def test_cube_locals_shared_by_two_phases() -> None:
    _check("""
kernel k(B: f16[2, 4]) -> (A: f32[2, 3]) {
  local L: bf16[3] @l0b
  w: for h in 0..3 {
    L[h] = -bf16(B[1, 0] - B[0, 3])
  }
  r: for m in 0..2 {
    for t in 0..3 {
      A[m, t] = -f32(L[2 - t]) + f32(B[m, t])
    }
  }
}
""", "local `L` is used by phases `w`, `r`")


def test_ub_local_in_a_cube_phase() -> None:
    """`tile{mm=8},tile{mm=4}` on a matmul stages C through `ub` inside the cube nest: the
    AIC has no UB (the emulator stopped at InitBuffer); the local goes to the workspace."""
    _check("""
kernel matmul(A: f16[M, K], B: f16[K, N]) -> (C: f16[M, N]) {
  size M = 32
  size N = 32
  size K = 16
  local A_l1: f16[8, 16] @l1
  local A_l0a: f16[8, 16] @l0a
  local B_l1: f16[16, 32] @l1
  local B_l0b: f16[16, 32] @l0b
  local acc_l0c: f32[8, 32] @l0c
  local C_ub: f16[8, 32] @ub
  mm: for i00 in 0..1 {
    for i0 in 0..4 {
      copy A_l1[0:8, 0:K] <- A[(i00 * 4 + i0) * 8:(i00 * 4 + i0) * 8 + 8, 0:K]
      copy A_l0a[0:8, 0:K] <- A_l1[0:8, 0:K]
      copy B_l1[0:K, 0:N] <- B[0:K, 0:N]
      copy B_l0b[0:K, 0:N] <- B_l1[0:K, 0:N]
      for i in 0..8 {
        for j in 0..N {
          acc_l0c[i, j] = 0.0
          for k in 0..K {
            acc_l0c[i, j] += f32(A_l0a[i, k]) * f32(B_l0b[k, j])
          }
          C_ub[i, j] = f16(acc_l0c[i, j])
        }
      }
      copy C[(i00 * 4 + i0) * 8:(i00 * 4 + i0) * 8 + 8, 0:N] <- C_ub[0:8, 0:N]
    }
  }
}
""", "local `C_ub` is used in the cube phase `mm` (the AIC has no UB)")


def test_reduction_of_a_loop_invariant_value() -> None:
    """`t[i] max= 2.0` in an innermost loop: vector selection asserted (AssertionError in
    `reduce`) on an operand that does not depend on the loop; it now falls back."""
    _check("""
kernel k(X: f32[8]) -> (Y: f32[8]) {
  local t: f32[8] @ub
  ew: for i in 0..8 {
    copy t[0:8] <- X[0:8]
    for z in 0..2 {
      t[i] max= 2.0
    }
    copy Y[0:8] <- t[0:8]
  }
}
""", "the `max=` operand does not depend on the loop")


def test_labels_equal_in_camel_case() -> None:
    """Phases labelled `G` and `_G` both became `ProcessG` (g++: cannot be overloaded)."""
    k = kernel_text("""
kernel k(X: f32[6]) -> (A: f32[6], B: f32[6]) {
  G: for i in 0..6 {
    A[i] = X[i] + 1.0
  }
  _G: for i in 0..6 {
    B[i] = X[i] * 2.0
  }
}
""")
    em = emit_ascendc(k)
    assert "void ProcessG()" in em.source and "void ProcessG1()" in em.source
    check_emitted(k, k, emitted=em, what="labels G and _G")


def test_queue_local_copied_in_the_middle_of_a_fused_tile() -> None:
    """`fuse` of two staged nests leaves `copy mu <- mu_ub_1` between the two computes:
    `mu_ub_1` was written before its AllocTensor (emulator: uninitialised LocalTensor) and,
    over several tiles, allocated again without FreeTensor (the queue ran dry)."""
    pipeline = "fuse{mean,vari},tile{norm=4},tile{mean=4},fuse"
    for n in (4, 12):
        k = example("layernorm", {"N": n, "H": 12})
        t = apply(k, pipeline)
        check_emitted(t, k, what=f"layernorm N={n} --passes {pipeline}")


def test_row_buffer_of_a_multicore_phase_is_per_worker() -> None:
    """`fuse` contracts `s` to a row buffer `s[S]` in the GM workspace; `multicore{qk}` splits
    the rows over 16 workers, which all used the same workspace slot (a race: the mix
    launch, forced by the second phase from `layout`, runs the cores concurrently)."""
    k = example("attention_causal", {"S": 16, "D": 16})
    pipeline = "fuse,layout{O=NZ},multicore{qk}"
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert "sGm.SetGlobalBuffer((__gm__ float *)(workspace + 0 + (workerIdx % 16) * 512), 16);" in em.source
    check_emitted(t, k, emitted=em, what=f"attention_causal --passes {pipeline}")


def test_serial_phase_of_a_multicore_kernel_runs_on_one_worker() -> None:
    """`unroll{mean=full}` turns `mean` into top-level statements (`mu[0] = mu[0] / H`), run
    as phases of their own; with `vari` and `norm` split over 6 workers every worker repeated
    those read-modify-writes of the shared `mu` in the GM workspace (a race: wrong Y, found
    with fuzz seed 1425489624). A phase not split over workers now runs on worker 0 alone."""
    k = example("layernorm", {"N": 6, "H": 64})
    pipeline = "unroll{mean=full},multicore{norm},multicore{vari}"
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    body = em.source.split("void ProcessStmts2()", 1)[1].split("__aicore__", 1)[0]
    assert "if (workerIdx == 0) {" in body, body
    check_emitted(t, k, emitted=em, what=f"layernorm --passes {pipeline}")


def test_unrolled_reload_of_l1_waits_for_the_previous_load_data() -> None:
    """`unroll{mm.j0=full}` replicates the reload of `B_l1` inline: the MTE2 copy into L1
    was not ordered after the MTE1 LoadData that read the previous contents (the hazard
    detector's WAR on L1, fuzz seed 1425489627). Inline copies into on-chip buffers now
    drain the pipes first."""
    k = example("matmul", {"M": 128, "N": 64, "K": 128})
    pipeline = "tile{mm=16,j=16},multicore{mm},unroll{mm.j0=full}"
    check_emitted(apply(k, pipeline), k, what=f"matmul --passes {pipeline}")


def test_scalar_nest_after_vector_code_waits_for_v() -> None:
    """A scalar fallback nest read a UB local that a `Duplicate` had just written, with no
    V->S flag (the hazard detector's RAW on UB, fuzz seed 580693466): scalar nests that
    touch UB locals now wait for V, and let V wait for them when they write one."""
    _check("""
kernel k(B: bf16[3]) -> (D: bf16[2, 2, 2], X: f16[2, 4, 2]) {
  local Y: f32[2, 2] @ub
  stage: for qi in 0..2 {
    for l in 0..2 {
      Y[qi, l] = B[0]
    }
    for p in 0..2 {
      for k in 0..2 {
        D[p, qi, k] = f16(bf16(3.0) + (Y[qi, qi] + Y[qi, qi]))
      }
    }
  }
  @cores(2)
  S1: for a in 0..2 {
    for m in 0..4 {
      for q in 0..2 {
        X[a, m, q] = -D[1, q, a] - 0.125
      }
    }
  }
}
""")


def test_scalar_write_into_an_output_queue_allocated_by_the_calling_stage_waits_for_mte3() -> None:
    """`stage{A=j},stage{C=ew},split{ew=2},stage{B=ew}` on add (M=6, N=1) writes `C_ub` with
    SetValue in a compute stage nested in the one that allocates it from its output queue:
    the write was not ordered after the previous row's copy-out (the hazard detector's WAR on
    UB, found by the emitted-code fuzzer). Such a stage now waits MTE3 -> S."""
    k = example("add", {"M": 6, "N": 1})
    pipeline = "stage{A=j},stage{C=ew},split{ew=2},stage{B=ew}"
    t = apply(k, pipeline)
    assert "WaitFlag<HardEvent::MTE3_S>" in emit_ascendc(t).source
    check_emitted(t, k, what=f"add --passes {pipeline}")


def test_scalar_read_of_an_input_queue_dequeued_by_the_calling_stage_waits_for_mte2() -> None:
    """`stage{B=p0AQ},tile{red=8}` makes a compute stage that reads `B4_ub` with GetValue,
    nested in the stage that DeQues it from its input queue: the read was not ordered after
    the copy-in (the hazard detector's RAW on UB, found by the emitted-code fuzzer with
    `stage{_f6rkp=_u30D2},stage{B=p0AQ},stage{B=_u30D2},tile{red=8}`). Such a stage now waits
    MTE2 -> S. (`tile` now stages the row-invariant `B4[q]` once, before the nest: the
    fuzzer's kernel runs as it is, and `B4[p, q]`, staged per tile, keeps the pattern.)"""
    text = """
kernel vZ(B4: f16[W]) -> (B: f32[C, W]) {
  size C = 9
  size W = 1
  red: for p in 0..C {
    for q in 0..W {
      B[p, q] = tanh(B4[q]) + 2.0
    }
  }
}
"""
    pipeline = "stage{B=q},tile{red=8}"
    k = kernel_text(text)
    t = apply(k, pipeline)
    check_emitted(t, k, what=f"{text} --passes {pipeline}")
    text = text.replace("B4: f16[W]", "B4: f16[C, W]").replace("B4[q]", "B4[p, q]")
    k = kernel_text(text)
    t = apply(k, pipeline)
    src = emit_ascendc(t).source
    assert "WaitFlag<HardEvent::MTE2_S>" in src, src
    check_emitted(t, k, what=f"{text} --passes {pipeline}")


_TBUF_PIPELINE = "tile{ew.i=8,ew.j=512},double_buffer"


def test_double_buffered_kernel_with_five_outputs_orders_its_tbuf_locals() -> None:
    """Five double-buffered inputs and outputs need 10 queue buffers per position, more than
    the 8 allowed: `E_ub` and `U_ub` become TBufs. Their one slot was reloaded by MTE2 while
    the previous tile's V still read it, and `U_ub` (written with `+=`) was overwritten by V
    while the previous CopyOut's MTE3 still read it (the hazard detector's WAR on UB, seen
    first with a 5-output kernel under `tile,double_buffer`). They now wait V -> MTE2 before
    the load and MTE3 -> V before the first write (transformer/lower/tbuf_sync.py)."""
    k = kernel_text(FIVE.replace("size M = 40", "size M = 32"))
    t = apply(k, _TBUF_PIPELINE)
    em = emit_ascendc(t)
    assert "TBuf<TPosition::VECIN> buf_E_ub;" in em.source and "TBuf<TPosition::VECOUT> buf_U_ub;" in em.source
    compute = em.source.split("inline void Compute(", 1)[1].split("__aicore__", 1)[0]
    # the wait sits just before U's first write: the four queue outputs before it overlap
    assert compute.index("WaitFlag<HardEvent::MTE3_V>") < compute.index("Muls(U_ubLocal"), compute
    assert compute.index("Max(S_ubLocal") < compute.index("WaitFlag<HardEvent::MTE3_V>"), compute
    check_emitted(t, k, emitted=em, what=f"five outputs --passes {_TBUF_PIPELINE}")


@pytest.mark.parametrize("d_index", ["j", "N - 1 - j"], ids=["vector", "scalar"])
def test_tbuf_local_copied_in_and_out_waits_for_the_previous_copy_out(d_index: str) -> None:
    """A GM temp read-modified-written by a tiled nest with five staged inputs is a TBuf
    copied in and out: the next tile's MTE2 load overwrote it while the previous MTE3
    copy-out still read it (WAR on UB), and, in vector code, while V still used it. The load
    now waits MTE3 -> MTE2 and V -> MTE2; with `D` read backwards the nest is scalar code."""
    k = kernel_text(f"""
kernel io(A: f16[M, N], B: f16[M, N], C: f16[M, N], D: f16[M, N], E: f16[M, N], F: f16[M, N])
    -> (G: f16[M, N], H: f16[M, N]) {{
  size M = 32
  size N = 1024
  temp T: f16[M, N]
  w: for i in 0..M {{
    for j in 0..N {{
      T[i, j] = A[i, j] * 2.0
    }}
  }}
  ew: for i in 0..M {{
    for j in 0..N {{
      T[i, j] += B[i, j] + C[i, j] + D[i, {d_index}] + E[i, j] + F[i, j]
      G[i, j] = T[i, j] * 0.5
    }}
  }}
  r: for i in 0..M {{
    for j in 0..N {{
      H[i, j] = T[i, j]
    }}
  }}
}}
""")
    t = apply(k, _TBUF_PIPELINE)
    em = emit_ascendc(t)
    assert "TBuf<TPosition::VECIN> buf_T_ub;" in em.source, em.source
    assert "WaitFlag<HardEvent::MTE3_MTE2>" in em.source
    check_emitted(t, k, emitted=em, what=f"T += ... --passes {_TBUF_PIPELINE}")


def test_top_level_statement_on_a_queue_local_allocates_it_first() -> None:
    """`stage{X=s},unroll{s=full}` leaves top-level `X_ub[0] = scale` statements around inline
    copies: the first SetValue came before the AllocTensor, which the inline copy emitted
    (the emulator: "LocalTensor::SetValue: LocalTensor is uninitialised"; found by the
    emitted-code fuzzer, ASCX_FUZZ_SEED=11771 shard 0). A statement now acquires the queue
    locals it touches, as an inline copy does."""
    text = """
kernel k(Y: f16[4]) -> (X: f32[2]) {
  const scale: f32 = 0.5
  s: for j in 0..2 {
    X[j] = scale + f32(Y[j])
  }
}
"""
    k = kernel_text(text)
    pipeline = "stage{X=s},unroll{s=full}"
    t = apply(k, pipeline)
    src = emit_ascendc(t).source
    assert src.index("X_ubLocal = outQueue_X_ub.AllocTensor") < src.index("X_ubLocal.SetValue("), src
    check_emitted(t, k, what=f"{text} --passes {pipeline}")


def test_float_literal_suffix_is_not_a_loop_variable() -> None:
    """The `f` of a float literal (`1.0f`) was read as a use of loop variable `f`, so a stage
    method took an unused parameter `f` (g++ -Werror=unused-parameter; found by the
    emitted-code fuzzer, ASCX_FUZZ_SEED=7001, `stage{Y=j},split{j=4},tile{f=8}`)."""
    text = """
kernel k(acc: f32[3], Y: bf16[3]) -> (A: f32[12, 12]) {
  ew: for f in 0..12 {
    for j in 0..12 {
      A[f, j] = acc[0] / (abs(acc[1]) + 1.0) + f32(Y[1])
      for r in 0..1 {
        A[f, j] += rsqrt(tanh(3.0 * acc[2]) + 2.0)
      }
    }
  }
}
"""
    k = kernel_text(text)
    pipeline = "stage{Y=j},split{j=4},tile{f=8}"
    t = apply(k, pipeline)
    check_emitted(t, k, what=f"{text} --passes {pipeline}")


def test_unrolled_copy_out_waits_for_the_vector_code_it_reads() -> None:
    """`unroll{j0=2}` after a tiling with a tail replicates a tile's copy-out inline in the
    compute stage: the MTE3 `DataCopyPad` read `C_ub` right after the `Add` wrote it, with no
    V -> MTE3 ordering (the hazard detector's RAW on UB; found by the emitted-code fuzzer,
    ASCX_FUZZ_SEED=860321824 shard 4). Inline copies out of on-chip buffers now drain the
    pipes first, as inline copies into them did."""
    k = example("add", {"M": 16, "N": 10})
    pipeline = "multicore{ew},tile{ew=4,j=4},unroll{j0=2},split{ew=2}"
    check_emitted(apply(k, pipeline), k, what=f"add --passes {pipeline}")


def test_scalar_operand_read_after_a_vector_write_waits_for_v() -> None:
    """A vector nest whose scalar operand reads a local another nest wrote with vector code
    (`Adds` into `t_ub`, then `Duplicate(X_ub[..], t_ubLocal.GetValue(..))`) had no V -> S
    flag between them (the hazard detector's RAW on UB; found by the emitted-code fuzzer,
    ASCX_FUZZ_SEED=12653 shard 2). `vs_sync.py` now orders every such read."""
    text = """
kernel k(acc: f16[2, 9, 9], Ht: f16[9]) -> (S: f16[2, 3, 9]) {
  temp t: f16[9, 3, 3]
  temp X: f32[9, 3, 3]
  a: for s in 0..9 {
    for s1 in 0..3 {
      for v in 0..3 {
        t[s, s1, v] = rsqrt(tanh(0.125 - (Ht[s] + 0.001)) + 2.0)
        for m in 0..3 {
          t[s, s1, v] += acc[0, s, s]
        }
      }
    }
  }
  b: for r in 0..9 {
    for u in 0..3 {
      for w in 0..3 {
        X[r, u, w] = t[r, 2, u]
      }
    }
  }
  c: for t1 in 0..2 {
    for b1 in 0..3 {
      for i in 0..9 {
        S[t1, b1, i] = Ht[i] / (abs(Ht[i] / (abs(acc[t1, 0, i]) + 1.0) + max(Ht[i], t[i, b1, 2])) + 1.0)
      }
    }
  }
}
"""
    k = kernel_text(text)
    pipeline = "fuse,multicore{c},tile{a=8}"
    t = apply(k, pipeline)
    src = emit_ascendc(t).source
    read = src.index("Duplicate(X_ubLocal")
    assert "WaitFlag<HardEvent::V_S>" in src[src.rindex("Adds(t_ubLocal", 0, read):read], src
    check_emitted(t, k, what=f"{text} --passes {pipeline}")


def test_row_broadcast_store_into_a_bf16_tile_is_not_one_tile() -> None:
    """A row loop whose value depends on the row only (`X[y, y, 0]`), stored into a bf16 tile:
    the whole-tile form (rows2d.py) cast the row vector and never wrote the tile (found by the
    emitted-code fuzzer, ASCX_FUZZ_SEED=31199 shard 2, `unroll{kIv=2},tile{vE=4},...`). A row
    or column vector read as a tile by a count-form instruction is now refused: the per-row
    code runs."""
    text = """
kernel k(X: f16[N, N, 1]) -> (A: bf16[N, R]) {
  size R = 6
  size N = 12
  vE: for y in 0..N {
    for l in 0..R {
      A[y, l] = -(f32(0.001) * (X[y, y, 0] / (abs(0.001) + 1.0)))
    }
  }
}
"""
    k = kernel_text(text)
    t = apply(k, "tile{vE=4}")
    em = emit_ascendc(t)
    assert em.plan is not None and not any("as one tile" in n.where for n in em.plan.nests)
    check_emitted(t, k, emitted=em, what=f"{text} --passes tile{{vE=4}}")
