"""`tile`: differential tests on every example (tails included), the automatic policy and
the action space (golden text for small cases: `tests/passes/golden/tile/`)."""

from __future__ import annotations

import pytest

from passes_testutil import apply, equivalent, example, kernel, roundtrips
from passes.base import run_pipeline
from passes.tile import Tile, choose_tiles
from transformer.printer import print_kernel

ADD = """
kernel add(A: f16[M, N], B: f16[M, N]) -> (C: f16[M, N]) {
  size M = 6
  size N = 10
  ew: for i in 0..M {
    for j in 0..N {
      C[i, j] = A[i, j] + B[i, j]
    }
  }
}
"""

ROWSUM = """
kernel rs(X: f32[R, C]) -> (Y: f32[R]) {
  size R = 8
  size C = 16
  rows: for r in 0..R {
    Y[r] = 0.0
    for c in 0..C {
      Y[r] += X[r, c]
    }
  }
}
"""

MATMUL = """
kernel mm(A: f16[M, K], B: f16[K, N]) -> (C: f16[M, N]) {
  size M = 32
  size N = 16
  size K = 32
  temp acc: f32[M, N]
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K {
        acc[i, j] += f32(A[i, k]) * f32(B[k, j])
      }
      C[i, j] = f16(acc[i, j])
    }
  }
}
"""

def test_tails_use_min_and_verify() -> None:
    out = apply(ADD, "tile{ew.i=4,ew.j=8}")
    text = print_kernel(out)
    assert "min(4, M - i0 * 4)" in text
    assert equivalent(kernel(ADD), out, trials=3) == []


def test_single_loop_tile_keeps_order_and_label() -> None:
    out = apply(ROWSUM, "tile{rows.r=4}")
    assert out.body[0].label == "rows" and out.body[0].var == "r0"
    assert equivalent(kernel(ROWSUM), out) == []


def test_matmul_scopes() -> None:
    out = apply(MATMUL, "tile{mm.i=16,mm.j=16}")
    scopes = {b.name: b.scope for b in out.buffers if b.kind == "local"}
    assert scopes == {"A_l1": "l1", "A_l0a": "l0a", "B_l1": "l1", "B_l0b": "l0b", "acc_l0c": "l0c"}
    assert "acc" not in {b.name for b in out.buffers}  # contracted
    assert equivalent(kernel(MATMUL), out) == []


CASES = [
    ("add", "tile{ew.i=4,ew.j=4}"),
    ("add", "tile{ew.j=3}"),
    ("softmax", "tile{rmax.r=4,expo.r=4,norm.r=4,norm.c=5}"),
    ("softmax", "tile{expo.c=5}"),
    ("layernorm", "tile{mean.n=4,vari.n=4,vari.h=8,norm.n=4}"),
    ("rmsnorm", "tile{sumsq.n=4,sumsq.h=5,scale.n=2,scale.h=8}"),
    ("matmul", "tile{mm.i=4,mm.j=4,mm.k=4}"),
    ("matmul", "tile{mm.k=3}"),
    ("attention", "tile{qk.i=4,qk.j=8,pv.i=4,pv.j=5}"),
    ("attention_causal", "tile{qk.i=8,rmax.i=5,expo.i=4,pv.i=4,pv.d=2}"),
    ("conv2d", "tile{conv.n=1,conv.f=2,conv.y=3}"),
]


@pytest.mark.parametrize("name,pipeline", CASES)
def test_examples_verify(name: str, pipeline: str) -> None:
    k = example(name)
    out, trace = run_pipeline(k, pipeline)
    assert roundtrips(out)
    assert any(c.startswith("staged") for c in trace[0].changes)
    assert equivalent(k, out) == []


@pytest.mark.parametrize("name", ["add", "softmax", "layernorm", "rmsnorm", "matmul", "attention", "conv2d"])
def test_auto_tiles_verify(name: str) -> None:
    # matmul stages cube operands, whose dims must be multiples of 16
    k = example(name, {"M": 64, "N": 32, "K": 48}) if name == "matmul" else example(name)
    chosen = choose_tiles(k)
    assert chosen
    out, trace = run_pipeline(k, "tile")
    assert "chose" in trace[0].decisions[0]
    assert equivalent(k, out) == []


def test_auto_tiles_fit_budget_at_default_sizes() -> None:
    from passes.base import parse_pipeline

    from transformer.capacity import check_kernel_capacity

    k = example("add", {})
    chosen = choose_tiles(k)
    # 256 rows spread over 48 cores: at most ceil(256 / 48) = 6 rows per tile, and (with the
    # calibrated table, passes/_balance.py) at most two tiles per core, so the double buffer
    # has a tile to overlap; each row (1024 f16) fits whole, so `j` is not tiled
    assert list(chosen) == ["ew"] and -(-256 // chosen["ew"]) <= 2 * 48 and chosen["ew"] <= 6, chosen
    req = ",".join(f"{n}={v}" for n, v in chosen.items())
    out, _ = run_pipeline(k, parse_pipeline(f"tile{{{req}}},double_buffer"))
    assert check_kernel_capacity(out, "ascend910b2").status == "sat"


def test_space_instances_apply() -> None:
    k = example("softmax")
    sp = Tile.space(k)
    assert sp and all(isinstance(p, Tile) for p in sp)
    for p in sp[:4]:
        out, _ = run_pipeline(k, [p])
        assert equivalent(k, out, trials=1) == []


def test_pipeline_text_roundtrip() -> None:
    from passes.base import parse_pipeline

    (p,) = parse_pipeline("tile{qk.i=64,qk.j=128}")
    assert p.to_text() == "tile{qk.i=64,qk.j=128}"
    assert parse_pipeline("tile")[0].to_text() == "tile"


def test_auto_tiles_leave_matmul_untiled_when_no_cube_legal_tile_exists() -> None:
    k = example("matmul")  # M=8, N=6: no multiple-of-16 tile exists
    assert choose_tiles(k) == {}
    out, trace = run_pipeline(k, "tile")
    assert "chose nothing" in trace[0].decisions[0]
    assert out == k


# ---- step 0: the epilogue of a cube matmul nest is split off ---------------------------

PV16 = """
kernel pv(P: f16[M, K], V: f16[K, N], l: f32[M]) -> (O: f16[M, N]) {
  size M = 32
  size K = 32
  size N = 16
  temp acc: f32[M, N]
  pv: for i in 0..M {
    for d in 0..N {
      acc[i, d] = 0.0
      for j in 0..K {
        acc[i, d] += f32(P[i, j]) * f32(V[j, d])
      }
      O[i, d] = f16(acc[i, d] / l[i])
    }
  }
}
"""


def test_epilogue_split_off_a_cube_matmul() -> None:
    k = kernel(PV16)
    out, trace = run_pipeline(k, "tile{pv.i=16,pv.d=16}")
    text = print_kernel(out)
    assert [s.label for s in out.body] == ["pv", "pv_epi"]
    assert "acc_l0c[i, d] += f32(P_l0a[i, j]) * f32(V_l0b[j, d])" in text
    assert "copy acc[i0 * 16:i0 * 16 + 16, d0 * 16:d0 * 16 + 16] <- acc_l0c[0:16, 0:16]" in text
    assert "O_ub[i, d] = f16(acc_ub[i, d] / l_ub[i])" in text  # the epilogue tiled with the same sizes
    assert "temp acc: f32[M, N]" in text  # acc stays a GM temp between the nests
    assert any("split the epilogue of the matmul nest `pv`" in c for c in trace[0].changes)
    assert equivalent(k, out, trials=2) == []


def test_no_split_for_f32_operands_or_a_plain_store() -> None:
    f32p = PV16.replace("P: f16[M, K]", "P: f32[M, K]").replace("f32(P[i, j])", "P[i, j]")
    assert [s.label for s in apply(f32p, "tile{pv.i=16,pv.d=16}").body] == ["pv"]  # P·V stays one (vector) nest
    store = PV16.replace("f16(acc[i, d] / l[i])", "f16(acc[i, d])")
    assert [s.label for s in apply(store, "tile{pv.i=16,pv.d=16}").body] == ["pv"]  # Mmad + Fixpipe in one nest


def test_no_split_when_the_epilogue_feeds_a_later_matmul_iteration() -> None:
    """The epilogue of row i writes `Bt[j, 0]`, which the matmul of row i + 1 reads:
    splitting would run every matmul before any epilogue (Check_epilogue_split)."""
    text = """
kernel chain(A: f16[M, K], B: f16[N, K]) -> (C: f16[M, N]) {
  size M = 4
  size N = 16
  size K = 16
  temp Bt: f16[N, K]
  temp acc: f32[M, N]
  init: for n in 0..N {
    for k in 0..K { Bt[n, k] = B[n, k] }
  }
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += f32(A[i, k]) * f32(Bt[j, k]) }
      Bt[j, 0] = f16(acc[i, j] * 0.5)
      C[i, j] = f16(acc[i, j])
    }
  }
}
"""
    k = kernel(text)
    out, trace = run_pipeline(k, "tile{mm.i=2}")
    assert [s.label for s in out.body] == ["init", "mm"]
    assert any("kept the epilogue of `mm`" in d for d in trace[0].decisions)
    assert equivalent(k, out, trials=2) == []
