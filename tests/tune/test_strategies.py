"""Strategies: distinct legal proposals within the budget; the agent's decisions and its
use of the prior; warm start from the DB."""

from __future__ import annotations


import pytest

from transformer.tune.db import TuningDB
from transformer.tune.space import SearchSpace
from transformer.tune.strategies import STRATEGIES, make_strategy, nearest_pipelines
from transformer.tune.tuner import tune

from .conftest import FakeMeasurer, small

STAGES = ("fuse", "tile", "double_buffer")


@pytest.fixture(scope="module")
def space():
    from transformer.targets import get_target

    return SearchSpace.build(small("softmax", R=32, C=64), get_target("ascend910b2"), stages=STAGES)


@pytest.mark.parametrize("name", [s for s in STRATEGIES if s != "tpe"])
def test_proposals_are_distinct_unmeasured_candidates_of_the_space(space, name):
    s = make_strategy(name, space, seed=4)
    fake = FakeMeasurer()
    got = []
    for _ in range(8):
        c = s.propose(set())
        assert c is not None and c.key in space.by_key and c.key not in s.seen
        s.observe(c, fake.measure(c.kernel, space.target))
        got.append(c.key)
    assert len(set(got)) == 8
    assert s.decisions and all(kind for kind, _, _ in s.decisions)


def test_exhausted_space_ends_the_search(space):
    s = make_strategy("grid", space, seed=0)
    fake = FakeMeasurer()
    n = 0
    while (c := s.propose(set())) is not None:
        s.observe(c, fake.measure(c.kernel, space.target))
        n += 1
    assert n == len(space.candidates)


def test_agent_finds_the_optimum_of_an_informative_prior_quickly(space, tmp_path):
    fake = FakeMeasurer()
    truth = {c.key: fake.measure(c.kernel, space.target).time_us for c in space.candidates}
    best = min(truth.values())
    r = tune(space.kernel, space.target, budget=8, strategy="agent", measurer=fake,
             db=TuningDB(tmp_path / "a.sqlite"), seed=0, space=space)
    assert r.best_m.time_us <= best * 1.25
    # random at the same budget, median over seeds, does worse or equal
    found = []
    for seed in range(7):
        rr = tune(space.kernel, space.target, budget=8, strategy="random", measurer=fake,
                  db=TuningDB(tmp_path / f"r{seed}.sqlite"), seed=seed, space=space)
        found.append(rr.best_m.time_us)
    assert r.best_m.time_us <= sorted(found)[len(found) // 2]


def test_agent_warm_starts_from_the_nearest_sizes(tmp_path, target):
    db = TuningDB(tmp_path / "w.sqlite")
    fake = FakeMeasurer()
    tune(small("add", M=16, N=256), target, budget=6, strategy="grid", measurer=fake, db=db, seed=0)
    r = tune(small("add", M=32, N=256), target, budget=4, strategy="agent", measurer=fake, db=db, seed=0)
    kinds = [d["kind"] for d in db.decisions(r.run_id)]
    assert "warm" in kinds


def test_nearest_pipelines_prefers_the_closest_shape():
    rows = [({"N": 64}, "a", 3.0), ({"N": 64}, "b", 1.0), ({"N": 4096}, "c", 0.5)]
    assert nearest_pipelines(rows, {"N": 128}, k=2) == ["b", "a"]
    assert nearest_pipelines(rows, {"N": 2048}, k=1) == ["c"]
    assert nearest_pipelines([({"N": 64}, "a", 1.0)], {"N": 64}) == []


def test_tpe_proposes_distinct_legal_candidates(space):
    pytest.importorskip("optuna", reason="tpe needs the optional optuna (pip install 'ascx[tune]')")
    s = make_strategy("tpe", space, seed=2)
    fake = FakeMeasurer()
    got = []
    for _ in range(8):
        c = s.propose(set())
        assert c is not None and c.key in space.by_key and c.key not in s.seen
        s.observe(c, fake.measure(c.kernel, space.target))
        got.append(c.key)
    assert len(set(got)) == 8 and len(s.study.trials) >= 8
