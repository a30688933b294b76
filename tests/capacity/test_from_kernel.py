"""Capacity of kernels: `kernel_buffers`, `check_kernel_capacity`, `capacity_gate`,
`solver_tiles` (issue 4, item 5 and its hand-computed acceptance cases)."""

from __future__ import annotations

from pathlib import Path

import pytest
from solver_doubles import timing_out_solver

from transformer.capacity import (
    CapacityUnknownKernelError,
    CapacityUnsatKernelError,
    KernelCapacityError,
    NoFeasibleTilesError,
    capacity_gate,
    check_kernel_capacity,
    kernel_buffers,
    solver_tiles,
)
from transformer.capacity.from_kernel import format_kernel_report, needs_api_temp
from transformer.capacity.tiles import tile_candidates
from transformer.diagnostics import AscxError
from transformer.parser import parse

KiB = 1024
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def cube_kernel(m: int, k: int, n: int = 128) -> str:
    """One cube tile: A (m x k f16) in L0A, B (k x n) in L0B, C (m x n f32) in L0C."""
    return f"""kernel mm(A: f16[M, K], B: f16[K, N]) -> (C: f32[M, N]) {{
  size M = {m}
  size N = {n}
  size K = {k}
  local At: f16[{m}, {k}] @l0a
  local Bt: f16[{k}, {n}] @l0b
  local Ct: f32[{m}, {n}] @l0c
  mm: for i0 in 0..1 {{
    copy At[0:{m}, 0:{k}] <- A[0:M, 0:K]
    copy Bt[0:{k}, 0:{n}] <- B[0:K, 0:N]
    for i in 0..{m} {{
      for j in 0..{n} {{
        Ct[i, j] = 0.0
        for kk in 0..{k} {{ Ct[i, j] += f32(At[i, kk]) * f32(Bt[kk, j]) }}
      }}
    }}
    copy C[0:M, 0:N] <- Ct[0:{m}, 0:{n}]
  }}
}}
"""


def vec_kernel(t: int, stages: int | None = 2) -> str:
    """Z = X + Y over blocks of T f16 elements, staged in UB, optionally pipelined."""
    ann = f"  @pipeline(stages={stages})\n" if stages else ""
    return f"""kernel vadd(X: f16[N], Y: f16[N]) -> (Z: f16[N]) {{
  size N = {4 * t}
  local Xt: f16[{t}] @ub
  local Yt: f16[{t}] @ub
  local Zt: f16[{t}] @ub
{ann}  blk: for b in 0..4 {{
    copy Xt[0:{t}] <- X[b * {t}:b * {t} + {t}]
    copy Yt[0:{t}] <- Y[b * {t}:b * {t} + {t}]
    for i in 0..{t} {{ Zt[i] = Xt[i] + Yt[i] }}
    copy Z[b * {t}:b * {t} + {t}] <- Zt[0:{t}]
  }}
}}
"""


# ---- hand-computed acceptance cases ---------------------------------------------------
def test_fp16_matmul_tiles_128x64_in_l0a_fit() -> None:
    k = parse(cube_kernel(128, 64))
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.status == "sat"
    l0a = res.per_scope["l0a"]
    assert [r.buffer for r in l0a.rows] == ["At"]
    assert l0a.total == 128 * 64 * 2 == 16 * KiB and l0a.usable == 64 * KiB
    assert l0a.headroom == 48 * KiB
    assert capacity_gate(k, "ascend910b2").status == "sat"


def test_fp16_256x256_in_l0a_refused_naming_l0a_buffer_and_bytes() -> None:
    k = parse(cube_kernel(256, 256, n=16))
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.status == "unsat"
    assert "capacity:l0a" in res.core
    msg = res.message
    assert msg.startswith("L0A:") and "At" in msg and "128 KiB" in msg and "64 KiB usable" in msg
    with pytest.raises(CapacityUnsatKernelError) as ei:
        capacity_gate(k, "ascend910b2")
    e = ei.value
    assert isinstance(e, KernelCapacityError) and isinstance(e, AscxError)
    assert "L0A" in e.message and "At" in e.message and "128 KiB" in e.message
    assert e.loc is not None and e.loc.line == 5  # the declaration of At
    assert e.result.status == "unsat"


def test_double_buffering_over_ub_is_refused_naming_double_buffer() -> None:
    # 3 buffers x 36 KiB x 2 stages = 216 KiB > 192 KiB (910B2 UB); 108 KiB single-buffered.
    k = parse(vec_kernel(18 * 1024, stages=2))
    bufs = {b.name: b for b in kernel_buffers(k, "ascend910b2")}
    assert {b.stages for b in bufs.values()} == {2}
    assert bufs["Xt"].origin == "double_buffer on loop blk"
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.status == "unsat"
    assert "double_buffer on loop blk" in res.message and "UB:" in res.message
    assert "216 KiB > 192 KiB usable" in res.message
    assert "single-buffer" in res.message  # a hint that undoes the double buffering
    assert check_kernel_capacity(parse(vec_kernel(18 * 1024, stages=None)),
                                 "ascend910b2").status == "sat"


def test_same_kernel_fits_ascend310p_not_ascend910b2() -> None:
    k = parse(vec_kernel(18 * 1024, stages=2))
    on_310p = check_kernel_capacity(k, "ascend310p")
    assert on_310p.status == "sat"
    assert on_310p.per_scope["ub"].total == 216 * KiB
    assert on_310p.per_scope["ub"].usable == 256 * KiB
    assert check_kernel_capacity(k, "ascend910b2").status == "unsat"


# ---- what is read from the kernel -----------------------------------------------------
def test_positions_copy_runs_and_cube_operands() -> None:
    bufs = {b.name: b for b in kernel_buffers(parse(cube_kernel(128, 64)))}
    assert (bufs["At"].position, bufs["Bt"].position, bufs["Ct"].position) == ("A2", "B2", "CO1")
    assert all(b.cube_operand for b in bufs.values())
    # A is 128x64 = the whole of A (contiguous); B's run is a whole 128-wide row block.
    assert bufs["At"].copy_lengths == (128 * 64,)
    assert bufs["Ct"].copy_lengths == (128 * 128,)
    v = {b.name: b for b in kernel_buffers(parse(vec_kernel(256)))}
    assert (v["Xt"].position, v["Yt"].position, v["Zt"].position) == ("VECIN", "VECIN", "VECOUT")
    assert v["Xt"].copy_lengths == (256,) and not v["Xt"].cube_operand


def test_strided_copy_run_is_the_inner_extent_and_ragged_runs_need_pad() -> None:
    src = """kernel k(X: f16[R, C]) -> (Y: f16[R, C]) {
  size R = 64
  size C = 1000
  local Xt: f16[64, 8] @ub
  local Tt: f32[64, 8] @ub
  for c0 in 0..125 {
    copy Xt[0:64, 0:8] <- X[0:64, c0 * 8:c0 * 8 + 8]
    for i in 0..64 { for j in 0..8 { Tt[i, j] = f32(Xt[i, j]) } }
    for i in 0..64 { for j in 0..8 { Xt[i, j] = f16(Tt[i, j] * 2.0) } }
    copy Y[0:64, c0 * 8:c0 * 8 + 8] <- Xt[0:64, 0:8]
  }
}
"""
    bufs = {b.name: b for b in kernel_buffers(parse(src))}
    assert bufs["Xt"].copy_lengths == (8,)          # 8 f16 = 16 B per row
    assert bufs["Xt"].position == "VECIN" and bufs["Tt"].position == "VECCALC"
    res = check_kernel_capacity(parse(src), "ascend910b2")
    assert res.status == "sat"
    assert any("Xt" in p and "DataCopyPad" in p for p in res.pad_required)


def test_l1_feeding_l0b_is_b1_and_l0a_is_a1() -> None:
    from passes.base import run_pipeline

    k, _ = run_pipeline(parse((EXAMPLES / "matmul.ir").read_text()), "tile{i=64,j=64}",
                        "ascend910b2")
    pos = {b.name: b.position for b in kernel_buffers(k)}
    l1 = {n: p for n, p in pos.items() if n.endswith("_l1")}
    assert sorted(l1.values()) == ["A1", "B1"]


def test_liveness_separates_top_level_nests() -> None:
    # Two nests, each with a 128 KiB UB buffer: 256 KiB in total, but never at once.
    src = """kernel two(X: f32[N]) -> (Y: f32[N], Z: f32[N]) {
  size N = 32768
  local A: f32[32768] @ub
  local B: f32[32768] @ub
  first: for b in 0..1 {
    copy A[0:32768] <- X[0:N]
    copy Y[0:N] <- A[0:32768]
  }
  second: for b in 0..1 {
    copy B[0:32768] <- X[0:N]
    copy Z[0:N] <- B[0:32768]
  }
}
"""
    k = parse(src)
    bufs = {b.name: b for b in kernel_buffers(k)}
    assert bufs["A"].live == (0, 0) and bufs["B"].live == (1, 1)
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.status == "sat" and res.per_scope["ub"].total == 128 * KiB
    # Same buffers in one nest: both live at once.
    one = src.replace("  }\n  second: for b in 0..1 {\n", "")
    res1 = check_kernel_capacity(parse(one), "ascend910b2")
    assert res1.status == "unsat"
    assert "A 128 KiB + B 128 KiB = 256 KiB > 192 KiB usable" in res1.message


def test_live_point_is_named_by_its_top_level_loop() -> None:
    src = """kernel two(X: f32[N]) -> (Y: f32[N]) {
  size N = 1024
  local A: f32[1024] @ub
  local B: f32[40000] @ub
  local C: f32[20000] @ub
  first: for b in 0..1 {
    copy A[0:1024] <- X[0:N]
    copy Y[0:N] <- A[0:1024]
  }
  second: for b in 0..1 {
    for i in 0..20000 { C[i] = 1.0 }
    for i in 0..40000 { B[i] = 2.0 }
  }
}
"""
    res = check_kernel_capacity(parse(src), "ascend910b2")
    assert res.status == "unsat"
    assert "while top-level loop second runs" in res.message
    assert "program point" not in res.message


def test_kernel_without_locals_is_trivially_sat() -> None:
    k = parse((EXAMPLES / "attention.ir").read_text())
    assert kernel_buffers(k) == []
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.status == "sat" and res.per_scope == {}
    text = format_kernel_report(k, res, [])
    assert "no on-chip buffers" in text and text.rstrip().endswith("sat: fits on ascend910b2")


def test_api_temp_is_reserved_where_an_emitted_instruction_needs_it(monkeypatch) -> None:
    """The reserve follows the instructions the lowering emits: a plain add takes none; a
    `select` on data is Compare + Select, which take the shared temp area, so it is reserved;
    an instruction in `API_TEMP_INSTRUCTIONS` reserves it in the model and shrinks the
    lowering's room."""
    from transformer.lower import lower_kernel
    from transformer.lower import temporaries

    assert not needs_api_temp(parse(vec_kernel(256)))
    sel = parse(vec_kernel(256).replace(
        "for i in 0..256 { Zt[i] = Xt[i] + Yt[i] }",
        "for i in 0..256 { Zt[i] = select(Xt[i] > Yt[i], Xt[i], Yt[i]) }"))
    assert needs_api_temp(sel)
    assert check_kernel_capacity(sel, "ascend910b2").per_scope["ub"].usable == 184 * KiB
    # Pretend `Add` took the shared temp area: 6 x 16 KiB + 2 x 48 KiB locals (all of UB)
    # fit without the reserve, not with it; the plan falls back for capacity, the model
    # says unsat, both because of the same 8 KiB.
    big = parse(vec_kernel(8192).replace("local Zt: f16[8192] @ub",
                                         "local Zt: f16[8192] @ub\n  local W: f16[49152] @ub")
                .replace("Zt[i] = Xt[i] + Yt[i] }", "Zt[i] = Xt[i] + Yt[i] }\n"
                         "    for w in 0..49152 { W[w] = 0.0 }"))
    assert check_kernel_capacity(big, "ascend910b2").status == "sat"
    assert not [n for n in lower_kernel(big).nests if n.capacity]
    monkeypatch.setattr(temporaries, "API_TEMP_INSTRUCTIONS", frozenset({"Add"}))
    from transformer.capacity import from_kernel

    from_kernel._ALLOC_CACHE.clear()
    k = parse(vec_kernel(256))
    assert needs_api_temp(k)
    res = check_kernel_capacity(k, "ascend910b2")
    assert res.api_temp and res.per_scope["ub"].usable == 184 * KiB
    assert check_kernel_capacity(k, "ascend910b2", api_temp=False).per_scope["ub"].usable == 192 * KiB
    assert check_kernel_capacity(big, "ascend910b2").status == "unsat"
    assert [n for n in lower_kernel(big).nests if n.capacity]
    from_kernel._ALLOC_CACHE.clear()


def test_free_size_is_chosen_by_the_solver() -> None:
    src = """kernel f(X: f16[N]) -> (Y: f16[N]) {
  size N = 64
  size T = 16
  local Xt: f16[T, 64] @l0a
  for i in 0..N { Y[i] = X[i] }
}
"""
    bufs = kernel_buffers(parse(src), free=["T"])
    assert bufs[0].shape == ("T", 64)
    res = check_kernel_capacity(parse(src), "ascend910b2", free=["T"])
    assert res.status == "sat" and res.model["T"] % 16 == 0


def test_unknown_is_not_unsat_and_gate_says_unknown(monkeypatch) -> None:
    sizes = "\n".join(f"  size a{i} = 16" for i in range(5))
    locs = "\n".join(f"  local T{i}: f16[a{i}, a{(i + 1) % 5}, a{(i + 2) % 5}] @{s}"
                     for i, s in enumerate(["l0a", "l0a", "l0b", "l0b", "l0c"]))
    src = f"kernel nl(X: f16[N]) -> (Y: f16[N]) {{\n  size N = 64\n{sizes}\n{locs}\n" \
          "  for i in 0..N { Y[i] = X[i] }\n}\n"
    k = parse(src)
    with timing_out_solver(monkeypatch):  # a real 1 ms budget races the machine's load
        res = check_kernel_capacity(k, "ascend910b2", free=[f"a{i}" for i in range(5)],
                                    timeout_ms=1, use_cache=False)
    assert res.status == "unknown" and "timeout" in res.reason and not res.explanations
    # With every size bound the real solver decides it (16^3 f16 = 8 KiB each).
    assert check_kernel_capacity(k, "ascend910b2", timeout_ms=60000).status == "sat"


def test_gate_unknown_error_type(monkeypatch) -> None:
    from transformer.capacity import from_kernel as FK

    real = FK.check_kernel_capacity

    def fake(*a, **kw):
        res = real(*a, **kw)
        res.status, res.reason = "unknown", "solver timeout after 1 ms"
        return res

    monkeypatch.setattr(FK, "check_kernel_capacity", fake)
    with pytest.raises(CapacityUnknownKernelError) as ei:
        capacity_gate(parse(cube_kernel(128, 64)), "ascend910b2")
    assert "unknown" in ei.value.message and "timeout after 1 ms" in ei.value.message


# ---- solver-chosen tiles --------------------------------------------------------------
def test_tile_candidates() -> None:
    assert tile_candidates(1024) == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    assert tile_candidates(64) == (1, 2, 4, 8, 16, 32, 64)
    assert tile_candidates(64, [16, 48, 128]) == (16, 48)  # 48: two tiles (one a tail), not four
    assert tile_candidates(4096) == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # no tails
    # 4097 = 17 x 241: tail-leaving sizes, each with fewer tiles than the one before
    assert tile_candidates(4097) == (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
    assert 1024 not in tile_candidates(1536)  # two tiles, as 768 gives without a tail
    assert tile_candidates(8) == (1, 2, 4, 8)
    assert 1000 in tile_candidates(1000) and all(v <= 1000 for v in tile_candidates(1000))


def test_solver_tiles_with_a_halo_falls_back_to_dry_runs() -> None:
    """A dim `T + 2` is not a plain tile size: the dry-run enumeration still finds the
    largest tile whose buffers fit.  H is not filled by a copy, so @pipeline does not
    stage it (a VECCALC TBuf is never double buffered): (T + 2) x 4 KiB <= 192 KiB."""
    def apply(kernel, sizes):
        t = sizes["r"]
        return parse(f"""kernel h(X: f32[N]) -> (Y: f32[N]) {{
  size N = 64
  local H: f32[{t + 2}, 1024] @ub
  @pipeline(stages=2)
  r: for b in 0..1 {{
    for i in 0..{t + 2} {{ for j in 0..1024 {{ H[i, j] = 0.0 }} }}
    for i in 0..N {{ Y[i] = X[i] }}
  }}
}}
""")
    best = solver_tiles(parse(vec_kernel(256)), {"r": 1024}, "ascend910b2", apply=apply)
    # (T + 2) * 4 KiB <= 192 KiB  =>  T <= 46: the largest candidate is 32.
    assert best == {"r": 32}
    with pytest.raises(NoFeasibleTilesError):
        solver_tiles(parse(vec_kernel(256)), {"r": 1024}, "ascend910b2", apply=apply,
                     candidates={"r": [64, 128]})


def test_solver_tiles_symbolic_path_matches_the_hand_optimum() -> None:
    """apply() stages a T x 256 f16 tile in three UB buffers: 3 x 512 T B <= 192 KiB."""
    def apply(kernel, sizes):
        t = sizes["i"]
        return parse(f"""kernel s(X: f16[N, 256]) -> (Y: f16[N, 256]) {{
  size N = 1024
  local Xt: f16[{t}, 256] @ub
  local Tt: f16[{t}, 256] @ub
  local Yt: f16[{t}, 256] @ub
  i: for i0 in 0..1 {{
    copy Xt[0:{t}, 0:256] <- X[0:{t}, 0:256]
    for i in 0..{t} {{ for j in 0..256 {{ Tt[i, j] = Xt[i, j] }} }}
    for i in 0..{t} {{ for j in 0..256 {{ Yt[i, j] = Tt[i, j] }} }}
    copy Y[0:{t}, 0:256] <- Yt[0:{t}, 0:256]
  }}
}}
""")
    assert solver_tiles(parse(vec_kernel(256)), {"i": 1024}, "ascend910b2",
                        apply=apply) == {"i": 128}
    assert solver_tiles(parse(vec_kernel(256)), {"i": 1024}, "ascend310p",
                        apply=apply) == {"i": 128}  # 256 would need 384 KiB


def test_solver_tiles_partial_leaves_out_nests_where_nothing_fits() -> None:
    from passes.base import run_pipeline

    k, _ = run_pipeline(parse((EXAMPLES / "attention.ir").read_text()), "fuse", "ascend910b2")
    from passes._rewrite import loop_extent
    from passes.tile import _default_bands

    loops = {n: loop_extent(lp, k.size_values()) for band in _default_bands(k) for n, lp in band}
    # fused attention without K/V blocking stages whole K and V rows whatever the query tile
    assert loops == {"qk": 1024}
    from passes.tile import tile_footprint

    fp = tile_footprint(k, "ascend910b2")
    with pytest.raises(NoFeasibleTilesError) as e:
        solver_tiles(k, loops, "ascend910b2", footprint=fp)
    assert "fit on ascend910b2" in e.value.summary
    assert solver_tiles(k, loops, "ascend910b2", footprint=fp, partial=True) == {}
