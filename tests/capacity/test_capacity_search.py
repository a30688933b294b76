"""The inverse question: feasible tiles, best tiles, caching."""

from __future__ import annotations

import math

import pytest

from transformer.capacity import (
    Buffer,
    NoFeasibleTilesError,
    best_tiles,
    build_system,
    check,
    feasible_tiles,
)
from transformer.capacity.search import _objective_fn
from transformer.targets import get_target

DB = "double_buffer on loop kv"


def attention() -> list[Buffer]:
    return [
        Buffer("Qt", "ub", "f16", ("q.i", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("Kt", "ub", "f16", ("kv.j", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("Vt", "ub", "f16", ("kv.j", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("St", "ub", "f32", ("q.i", "kv.j"), position="VECCALC", origin="tile on loop kv"),
        Buffer("Ot", "ub", "f32", ("q.i", "d"), position="VECOUT", copy_lengths=("d",)),
        Buffer("m", "ub", "f32", ("q.i",), position="VECCALC"),
    ]


def matmul() -> list[Buffer]:
    return [
        Buffer("A", "l0a", "f16", ("m", "k"), stages=2, position="A2", cube_operand=True),
        Buffer("B", "l0b", "f16", ("k", "n"), stages=2, position="B2", cube_operand=True),
        Buffer("C", "l0c", "f32", ("m", "n"), position="CO1", cube_operand=True),
    ]


@pytest.mark.parametrize("target", ["ascend910b2", "ascend310p"])
@pytest.mark.parametrize("objective", ["footprint", "reuse"])
@pytest.mark.parametrize("d", [64, 128])
def test_best_tiles_accepted_by_check(target: str, objective: str, d: int) -> None:
    best = best_tiles(attention(), target, sizes={"d": d}, objective=objective, api_temp=True)
    assert set(best) == {"q.i", "kv.j"}
    assert check(attention(), target, sizes={"d": d, **best}, api_temp=True).ok


@pytest.mark.parametrize("objective", ["footprint", "reuse"])
def test_best_is_maximal_over_feasible_and_feasible_is_exact(objective: str) -> None:
    t = get_target("ascend910b2")
    cands = {"m": [16, 32, 64, 128, 256], "n": [16, 32, 64, 128, 256], "k": [16, 32, 64, 128]}
    feas = feasible_tiles(matmul(), t, cands, objective=objective, certify=True)
    assert feas
    system = build_system(matmul(), t)
    score = _objective_fn(system, ["k", "m", "n"], {}, objective)
    top = max(score(f) for f in feas)
    best = best_tiles(matmul(), t, cands, objective=objective)
    assert math.isclose(score(best), top)
    assert best == feas[0]
    # Every grid point is classified the same way as check() does.
    for m in cands["m"]:
        for n in cands["n"]:
            env = {"m": m, "n": n, "k": 64}
            assert (env in feas) == check(matmul(), t, sizes=env, hints=False).ok


def test_ties_prefer_multiples_of_16_then_64() -> None:
    buf = [Buffer("x", "ub", "f16", ("a",))]
    # Constant objective: every candidate ties; multiples of 64 win, then of 16.
    best = best_tiles(buf, "ascend910b2", {"a": [40, 48, 64, 100]}, objective=lambda e: 1.0)
    assert best == {"a": 64}
    best = best_tiles(buf, "ascend910b2", {"a": [40, 48, 100]}, objective=lambda e: 1.0)
    assert best == {"a": 48}


def test_no_feasible_tiles_explains() -> None:
    big = [Buffer("A", "l0a", "f16", ("m", 4096), cube_operand=True)]
    with pytest.raises(NoFeasibleTilesError) as ei:
        best_tiles(big, "ascend910b2", {"m": [16, 32]})
    assert "L0A" in ei.value.summary
    assert ei.value.result is not None and ei.value.result.status == "unsat"


def test_candidate_forms_and_limit() -> None:
    feas = feasible_tiles(matmul(), "ascend910b2", {"m": (16, 64), "n": (16, 64, 16),
                                                     "k": range(16, 65, 16)}, limit=3)
    assert len(feas) == 3
    assert all(v % 16 == 0 for f in feas for v in f.values())


def test_disk_cache_roundtrip(tmp_path) -> None:
    from transformer.capacity import search

    cands = {"m": [16, 32, 64], "n": [16, 32], "k": [16, 32]}
    first = feasible_tiles(matmul(), "ascend910b2", cands, cache_dir=tmp_path)
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    search.clear_cache()
    again = feasible_tiles(matmul(), "ascend910b2", cands, cache_dir=tmp_path)
    assert again == first
