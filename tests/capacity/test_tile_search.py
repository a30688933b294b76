"""The `tile` search is lazy, bounded and pruned (issue 10, item 3): dry runs are counted
through `transformer.capacity.tiles.LAST_STATS` (every call of the footprint function)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from passes.base import run_pipeline
from transformer.capacity import tiles
from transformer.capacity.tiles import lazy_grid, solver_tiles
from transformer.parser import parse, parse_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from nests import softmax_chain  # noqa: E402


def tile_without_parameters(kernel):
    tiles.clear_cache()
    out, trace = run_pipeline(kernel, "tile", "ascend910b2")
    return out, tiles.LAST_STATS


@pytest.mark.parametrize("pipeline", ["", "round_operand{pv.s=f16}", "fuse"])
def test_attention_tile_does_at_most_20_dry_runs(pipeline: str) -> None:
    k = parse_file(str(ROOT / "examples" / "attention.ir"))
    if pipeline:
        k, _ = run_pipeline(k, pipeline, "ascend910b2")
    out, stats = tile_without_parameters(k)
    assert 1 <= stats.dry_runs <= 20, stats


def test_many_nests_are_solved_separately_with_few_dry_runs() -> None:
    """12 nests (bench/bench_tile.py runs the 32-nest chain): each nest is its own group,
    and the dry runs grow linearly, not with the product of the nests' candidates."""
    n = 12
    k = parse(softmax_chain(n))
    out, stats = tile_without_parameters(k)
    assert stats.groups == n and len(stats.per_group) == n
    # one dry run per nest when the largest candidate fits, plus the union check
    assert stats.dry_runs <= 2 * n + 1, stats
    assert sum(1 for t in out.buffers if t.kind == "local") >= n


def test_lazy_grid_is_the_sorted_grid_without_building_it() -> None:
    cands = {"a": (1, 2, 4, 16, 64), "b": (8, 16, 48), "c": (1, 3)}
    got = list(lazy_grid(cands))
    grid = [dict(zip(cands, v)) for v in itertools.product(*cands.values())]
    assert sorted(map(lambda e: tuple(e.values()), got)) == sorted(tuple(e.values()) for e in grid)
    prods = [e["a"] * e["b"] * e["c"] for e in got]
    assert prods == sorted(prods, reverse=True)
    # a huge grid: the first points come at once (nothing is materialised)
    huge = {f"l{i}": tuple(range(1, 1025)) for i in range(32)}
    first = list(itertools.islice(lazy_grid(huge), 3))
    assert first[0] == {f"l{i}": 1024 for i in range(32)}


def test_pruned_points_are_never_dry_run() -> None:
    """A footprint whose buffers are `3 x 1 KiB x r` of UB: the model from two probes
    prunes every r > 64 before any dry run, and the search answers r = 64."""
    from transformer.capacity import Buffer

    seen: list[int] = []

    def footprint(sizes):
        r = sizes["r"]
        seen.append(r)
        return [Buffer(n, "ub", "f16", (r, 512), position="VECIN") for n in "ABC"], False

    cands = {"r": (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)}
    tiles.clear_cache()
    got = solver_tiles(None, {"r": 1024}, "ascend910b2", footprint=footprint, candidates=cands)
    assert got == {"r": 64}
    assert all(r <= 64 or r in (1024, 512) for r in seen), seen  # probes only above 64
    assert tiles.LAST_STATS.pruned >= 3 and tiles.LAST_STATS.dry_runs <= 4


def test_dry_runs_are_bounded_when_nothing_fits() -> None:
    def footprint(sizes):
        return None  # every size refused

    with pytest.raises(tiles.NoFeasibleTilesError):
        solver_tiles(None, {"a": 4096, "b": 4096}, "ascend910b2", footprint=footprint,
                     max_dry_runs=10)
    assert tiles.LAST_STATS.dry_runs <= 10 + 4  # the bound, plus probes
