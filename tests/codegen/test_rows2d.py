"""Short rows as one tile (issue 14 item 2, `transformer/lower/rows2d.py`), emitted and run on
the emulator under the sanitizers against the interpreter (fresh random inputs; a sync hazard
fails the run): softmax with a tail of rows (run-time repeat counts), layernorm with rows of
two 256 B repeats (folded before the reduction), rmsnorm with rows padded to a 32 B pitch, and
a kernel with a `min=` statistic, a sum that starts from 1.0 (combined, not folded), a row
statistic in a local, a column broadcast and a partial second repeat. The plans are checked
to be the whole-tile form, so the runs test it and not the per-row fallback."""

from __future__ import annotations

import pytest


from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, example, kernel_text

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


SHORT = {  # case -> (example, sizes), under fuse,tile,double_buffer
    "short_softmax": ("softmax", {"R": 1001, "C": 48}),  # 16-row tiles and a tail of 9: run-time repeat counts
    "short_layernorm": ("layernorm", {"N": 100, "H": 128}),  # rows of 128 f32: two repeats folded per row
    "short_rmsnorm": ("rmsnorm", {"N": 257, "H": 8}),  # rows of 8 f16 at a pitch of 16
}
GROUPS = {  # case -> (example, sizes, pipeline)
    # 128-row tiles (by hand) whose whole-tile scratch does not fit UB: row groups; the second
    # tile is a tail of 72 rows (a run-time group count, the last group's rows at run time)
    "groups_softmax": ("softmax", {"R": 200, "C": 128}, "fuse,tile{rmax.r=128},double_buffer"),
    # a row statistic in a local (`var_ub[n]`, moved by the group) and column broadcasts
    "groups_layernorm": ("layernorm", {"N": 200, "H": 128}, "fuse,tile{mean.n=128},double_buffer"),
}
STATS_PIPELINE = "tile{a.r=16},double_buffer"


@pytest.fixture(scope="module")
def rows() -> Bundle:
    """Every emitted case of this file in ONE sanitizer build (tests/codegen/bundle.py)."""
    cases = {c: apply(example(n, sz), "fuse,tile,double_buffer") for c, (n, sz) in SHORT.items()}
    cases.update({c: apply(example(n, sz), p) for c, (n, sz, p) in GROUPS.items()})
    cases["stats"] = apply(kernel_text(STATS), STATS_PIPELINE)
    return build_cases(cases, sanitize=True)


@pytest.mark.parametrize("case", SHORT)
def test_short_row_kernels_as_one_tile_match(rows: Bundle, case: str) -> None:
    name, sizes = SHORT[case]
    em = rows.emitted[case]
    assert em.plan is not None and any("as one tile" in n.where for n in em.plan.nests), em.plan.summary()
    assert "HardEvent::V_S" not in em.source
    check_bundled(rows, case, example(name, sizes), what=f"{name} {sizes} as one tile")


def test_statistics_min_combined_sum_and_broadcasts_match(rows: Bundle) -> None:
    em = rows.emitted["stats"]
    assert em.plan is not None
    (tile,) = [n for n in em.plan.nests if "as one tile" in n.where]
    assert {"WholeReduceMin", "WholeReduceSum", "Brcb", "Div"} <= set(tile.instructions)
    check_bundled(rows, "stats", kernel_text(STATS), what="row statistics as one tile")


@pytest.mark.parametrize("case", GROUPS)
def test_row_groups_where_the_whole_tile_does_not_fit_match(rows: Bundle, case: str) -> None:
    name, sizes, pipeline = GROUPS[case]
    em = rows.emitted[case]
    assert em.plan is not None
    (tile,) = [n for n in em.plan.nests if "as one tile" in n.where]
    assert "128 rows x 128 as one tile in groups of" in tile.where, tile.where
    assert "HardEvent::V_S" not in em.source
    check_bundled(rows, case, example(name, sizes), what=f"{name} {sizes} {pipeline} in row groups")
