"""Short rows as one tile (issue 14 item 2, `transformer/lower/rows2d.py`), emitted and run on
the emulator under the sanitizers against the interpreter (fresh random inputs; a sync hazard
fails the run): softmax with a tail of rows (run-time repeat counts), layernorm with rows of
two 256 B repeats (folded before the reduction), rmsnorm with rows padded to a 32 B pitch, and
a kernel with a `min=` statistic, a sum that starts from 1.0 (combined, not folded), a row
statistic in a local, a column broadcast and a partial second repeat. The plans are checked
to be the whole-tile form, so the runs test it and not the per-row fallback."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc

from .conftest import apply, check_emitted, example, kernel_text

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)

STATS = """
kernel rowstats(X: f32[R, C], g: f32[C]) -> (Y: f32[R, C], S: f32[R]) {
  size R = 37
  size C = 100
  temp lo: f32
  temp s: f32
  temp sc: f32[R]
  a: for r in 0..R {
    lo = inf
    for c in 0..C { lo min= X[r, c] }
    s = 1.0
    for c in 0..C { s += X[r, c] - lo }
    sc[r] = s * 0.5 + lo
    for c in 0..C { Y[r, c] = (X[r, c] - lo) * g[c] / sc[r] + s }
    S[r] = s
  }
}
"""


@pytest.mark.parametrize("name,sizes", [
    ("softmax", {"R": 1001, "C": 48}),  # 16-row tiles and a tail of 9: run-time repeat counts
    ("layernorm", {"N": 100, "H": 128}),  # rows of 128 f32: two repeats folded per row
    ("rmsnorm", {"N": 257, "H": 8}),  # rows of 8 f16 at a pitch of 16
])
def test_short_row_kernels_as_one_tile_match(name: str, sizes: dict[str, int]) -> None:
    k = example(name, sizes)
    t = apply(k, "fuse,tile,double_buffer")
    em = emit_ascendc(t)
    assert em.plan is not None and any("as one tile" in n.where for n in em.plan.nests), em.plan.summary()
    assert "HardEvent::V_S" not in em.source
    check_emitted(t, k, emitted=em, sanitize=True, what=f"{name} {sizes} as one tile")


def test_statistics_min_combined_sum_and_broadcasts_match() -> None:
    k = kernel_text(STATS)
    t = apply(k, "tile{a.r=16},double_buffer")
    em = emit_ascendc(t)
    assert em.plan is not None
    (tile,) = [n for n in em.plan.nests if "as one tile" in n.where]
    assert {"WholeReduceMin", "WholeReduceSum", "Brcb", "Div"} <= set(tile.instructions)
    check_emitted(t, k, emitted=em, sanitize=True, what="row statistics as one tile")


@pytest.mark.parametrize("name,sizes,pipeline", [
    # 128-row tiles (by hand) whose whole-tile scratch does not fit UB: row groups; the second
    # tile is a tail of 72 rows (a run-time group count, the last group's rows at run time)
    ("softmax", {"R": 200, "C": 128}, "fuse,tile{rmax.r=128},double_buffer"),
    # a row statistic in a local (`var_ub[n]`, moved by the group) and column broadcasts
    ("layernorm", {"N": 200, "H": 128}, "fuse,tile{mean.n=128},double_buffer"),
])
def test_row_groups_where_the_whole_tile_does_not_fit_match(name: str, sizes: dict[str, int], pipeline: str) -> None:
    k = example(name, sizes)
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.plan is not None
    (tile,) = [n for n in em.plan.nests if "as one tile" in n.where]
    assert "128 rows x 128 as one tile in groups of" in tile.where, tile.where
    assert "HardEvent::V_S" not in em.source
    check_emitted(t, k, emitted=em, sanitize=True, what=f"{name} {sizes} {pipeline} in row groups")
