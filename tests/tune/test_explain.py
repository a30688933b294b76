"""`explain`: the ablation of each pass of the winner."""

from __future__ import annotations

import dataclasses

from transformer.tune.db import TuningDB
from transformer.tune.explain import explain
from transformer.tune.measurers import EstimateMeasurer
from transformer.tune.tuner import tune

from .conftest import small


def test_dropping_tile_says_needed_not_the_baseline_time(tmp_path, target):
    m = EstimateMeasurer()
    db = TuningDB(tmp_path / "t.sqlite")
    res = tune(small("add", M=16, N=256), target, budget=3, strategy="grid", measurer=m, db=db,
               documented="tile,double_buffer")
    win = res.space.candidate_for("tile,double_buffer")
    assert win is not None and win.pipeline == "tile,double_buffer"
    res = dataclasses.replace(res, best=win, best_m=dict((c.key, x) for c, x in res.history)[win.key])
    ab = {a.dropped: a for a in explain(res, m, db).ablations}
    # without `tile`, `double_buffer` has nothing to pipeline: the kernel left is the baseline,
    # which says nothing about what `tile` contributes
    assert ab["tile"].time_us is None and ab["tile"].note.startswith("needed")
    assert "`double_buffer` does nothing" in ab["tile"].note
    assert ab["double_buffer"].time_us is not None  # `tile` alone still applies: measured
