"""Parallel evaluation: a process pool (`--jobs`) and Ray tasks (`--executor ray`); the
driver alone writes the DB."""

from __future__ import annotations

import pytest

from transformer.tune.db import TuningDB
from transformer.tune.measurers import EstimateMeasurer
from transformer.tune.tuner import tune

from .conftest import FakeMeasurer, small


def test_process_pool_evaluates_the_same_candidates_as_serial(tmp_path, target):
    k = small("add", M=16, N=256)
    serial = tune(k, target, budget=6, strategy="grid", measurer=FakeMeasurer(), db=TuningDB(tmp_path / "s.sqlite"))
    pooled = tune(k, target, budget=6, strategy="grid", measurer=FakeMeasurer(), db=TuningDB(tmp_path / "p.sqlite"),
                  jobs=2)
    assert pooled.evaluations_new == 6
    assert {c.pipeline for c, _ in pooled.history} == {c.pipeline for c, _ in serial.history}
    assert pooled.best_m.time_us == serial.best_m.time_us
    assert len(TuningDB(tmp_path / "p.sqlite").evaluations()) == 6


def test_a_crashing_measurer_is_a_recorded_failure(tmp_path, target):
    class Boom:
        name, version = "boom", "1"

        def measure(self, kernel, target):
            raise RuntimeError("segfault-ish")

    r = tune(small("add", M=16, N=256), target, budget=3, strategy="grid", measurer=Boom(),
             db=TuningDB(tmp_path / "b.sqlite"))
    assert r.evaluations == 3 and r.best is None
    assert all("measurer error: RuntimeError" in m.error for _, m in r.history)


@pytest.mark.slow
def test_ray_tasks_on_a_local_instance(tmp_path, target):
    ray = pytest.importorskip("ray", reason="ray is the optional extra ascx[ray]")
    try:
        r = tune(small("add", M=16, N=256), target, budget=4, strategy="grid", measurer=EstimateMeasurer(),
                 db=TuningDB(tmp_path / "r.sqlite"), jobs=2, executor="ray")
    finally:
        ray.shutdown()
    assert r.evaluations_new == 4 and r.best is not None
    assert len(TuningDB(tmp_path / "r.sqlite").evaluations()) == 4
