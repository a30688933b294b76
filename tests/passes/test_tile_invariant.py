"""`tile` stages a row-invariant input once before its nest (issue 14, layernorm): gamma and
beta of layernorm (a vector broadcast over the rows) are copied into UB once — one copy
per core, one stage — instead of once per row tile with two stages; the capacity check
counts them once, so whole 8192-element rows fit. Inputs whose footprint moves with the
tile loop, or whose whole footprint is more than twice a tile's, keep their per-tile
copies (long rows). Differential tests on fresh random inputs."""

from __future__ import annotations

import pytest

from passes_testutil import equivalent, example, kernel
from passes.base import run_pipeline
from transformer import ir
from transformer.capacity import check_kernel_capacity
from transformer.loops import buffer_stages


def _prologue(k: ir.Kernel) -> list[ir.Copy]:
    return [s for s in k.body if isinstance(s, ir.Copy)]


@pytest.mark.parametrize("sizes", [None, {"N": 100, "H": 64}, {"N": 37, "H": 48}, {"N": 3, "H": 1024}])
def test_layernorm_stages_gamma_and_beta_once_before_the_nest(sizes: dict[str, int] | None) -> None:
    k = example("layernorm", sizes)
    out, trace = run_pipeline(k, "fuse,tile,double_buffer")
    pro = _prologue(out)
    assert sorted(c.src.tensor for c in pro) == ["beta", "gamma"]
    assert isinstance(out.body[-1], ir.For) and len(out.body) == 3  # the copies, then the one nest
    stages = buffer_stages(out)
    assert all(stages.get(c.dst.tensor, 1) == 1 for c in pro)  # one stage each
    # X is still staged per row tile, with two stages
    x = [s for s in ir.iter_stmts(out.body) if isinstance(s, ir.Copy) and s.src.tensor == "X"]
    assert len(x) == 1 and stages[x[0].dst.tensor] == 2
    assert any("once, before `mean`" in c for c in trace[1].changes)
    assert equivalent(k, out) == []


def test_whole_8192_rows_fit_once_gamma_and_beta_are_staged_once() -> None:
    k = example("layernorm", {"N": 8192, "H": 8192})
    out, _ = run_pipeline(k, "fuse,tile,double_buffer")
    x_ub = next(s.dst.tensor for s in ir.iter_stmts(out.body) if isinstance(s, ir.Copy) and s.src.tensor == "X")
    decl = out.tensor(x_ub)
    assert decl is not None and [int(d.value) for d in decl.shape] == [1, 8192]  # type: ignore[union-attr]
    # X is read from GM once per row: one copy of it in the whole kernel
    assert sum(isinstance(s, ir.Copy) and s.src.tensor == "X" for s in ir.iter_stmts(out.body)) == 1
    assert sorted(c.src.tensor for c in _prologue(out)) == ["beta", "gamma"]
    assert check_kernel_capacity(out, "ascend910b2").status == "sat"


def test_long_rows_keep_gamma_staged_per_row_tile() -> None:
    k = example("layernorm", {"N": 2, "H": 65536})
    out, _ = run_pipeline(k, "fuse,tile,double_buffer")
    assert _prologue(out) == []  # all of gamma (128 KiB) is more than twice a tile of it
    inner = [s for s in ir.iter_stmts(out.body) if isinstance(s, ir.Copy) and s.src.tensor == "gamma"]
    assert len(inner) == 1 and buffer_stages(out)[inner[0].dst.tensor] == 2
    assert equivalent(k, out) == []


ROW_SCALE = """
kernel rs(X: f32[M, N], s: f32[M], b: f32[N]) -> (Y: f32[M, N]) {
  size M = 64
  size N = 256
  ew: for i in 0..M {
    for j in 0..N {
      Y[i, j] = X[i, j] * s[i] + b[j]
    }
  }
}
"""


def test_only_inputs_that_do_not_move_with_the_tile_loop_are_staged_once() -> None:
    k = kernel(ROW_SCALE)
    out, _ = run_pipeline(k, "tile{ew.i=16}")
    # `s[i]` moves with the row tiles: per tile; `b[j]` is the same for every row tile: once
    assert [c.src.tensor for c in _prologue(out)] == ["b"]
    assert any(isinstance(s, ir.Copy) and s.src.tensor == "s" for s in ir.iter_stmts(out.body[-1:]))
    assert equivalent(k, out) == []
    # a tile of `b` that is less than half of it: `b` stays per tile (hoisting never needs
    # more UB than the per-tile copies with two stages)
    out2, _ = run_pipeline(k, "tile{ew.i=16,ew.j=64}")
    assert _prologue(out2) == []
    assert equivalent(k, out2) == []


def test_staging_once_keeps_the_explicit_stage_pass_unchanged() -> None:
    k = kernel(ROW_SCALE)
    out, _ = run_pipeline(k, "split{ew.i=16},stage{b=ew}")
    assert _prologue(out) == []  # `stage` stages exactly where it is asked
    assert equivalent(k, out) == []


def test_a_tile_that_would_start_unaligned_inside_the_one_buffer_stays_per_tile() -> None:
    """Tiles of 130 f32 (520 B) of `b`: the second would start 8 B past a 32 B boundary in a
    buffer holding all of `b` (vector operands must start aligned), so `b` keeps its
    per-tile copies; tiles of 128 (512 B) are staged once."""
    k = kernel(ROW_SCALE)
    out, _ = run_pipeline(k, "tile{ew.i=16,ew.j=130}")
    assert _prologue(out) == []
    assert equivalent(k, out) == []
    out, _ = run_pipeline(k, "tile{ew.i=16,ew.j=128}")
    assert [c.src.tensor for c in _prologue(out)] == ["b"]
    assert equivalent(k, out) == []


def test_a_temp_with_one_element_per_tile_is_kept_as_a_scalar() -> None:
    """`var[n]` over one-row tiles: a scalar temp (each core's register), not a one-element UB
    local; over 16-row tiles it stays a local of 16."""
    k = example("layernorm", {"N": 64, "H": 8192})
    out, trace = run_pipeline(k, "fuse,tile{mean=1},double_buffer")
    var = out.tensor("var")
    assert var is not None and var.kind == "temp" and var.rank == 0
    assert not any(d.name.startswith("var_") for d in out.buffers)
    assert any(c.startswith("kept `var` as a scalar") for c in trace[1].changes)
    assert equivalent(k, out) == []
    out16, _ = run_pipeline(example("layernorm", {"N": 64, "H": 64}), "fuse,tile{mean=16},double_buffer")
    assert out16.tensor("var") is None and out16.tensor("var_ub") is not None
