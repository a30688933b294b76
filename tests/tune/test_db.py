"""The tuning DB: every evaluation stored, resume, immediate answers, kill -9 safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from transformer.tune.db import TuningDB
from transformer.tune.measure import Measurement
from transformer.tune.tuner import tune

from .conftest import ROOT, FakeMeasurer, small


def test_every_evaluation_is_stored_and_a_tuned_shape_answers_at_once(tmp_path, target, fake):
    db = TuningDB(tmp_path / "t.sqlite")
    k = small("add", M=16, N=256)
    r1 = tune(k, target, budget=6, strategy="random", measurer=fake, db=db, seed=3)
    assert r1.evaluations == 6 and r1.evaluations_new == 6
    rows = db.evaluations(r1.source, r1.model_version)
    assert len(rows) == 6 and all(e.measured for e in rows)
    assert {e.pipeline for e in rows} == {c.pipeline for c, _ in r1.history}
    best = min(e.measurement.time_us for e in rows if e.measurement.ok)
    assert r1.best_m.time_us == best
    r2 = tune(k, target, budget=6, strategy="agent", measurer=fake, db=TuningDB(db.path), seed=9)
    assert r2.evaluations_new == 0 and r2.best.pipeline == r1.best.pipeline
    # a larger budget resumes: only the difference is measured
    r3 = tune(k, target, budget=9, strategy="random", measurer=fake, db=TuningDB(db.path), seed=3)
    assert r3.evaluations == 9 and r3.evaluations_new == 3


def test_failures_are_recorded_with_their_reason_and_do_not_stop_the_search(tmp_path, target):
    m = FakeMeasurer(fail_on="@pipeline")  # every double-buffered kernel "fails"
    db = TuningDB(tmp_path / "t.sqlite")
    r = tune(small("add", M=16, N=256), target, budget=8, strategy="agent", measurer=m, db=db, seed=0)
    fails = [e for e in db.evaluations(r.source) if e.measurement.error]
    assert r.evaluations == 8
    assert fails and all("fake failure" in e.measurement.error for e in fails)
    assert r.best is not None and "double_buffer" not in r.best.pipeline


def test_equivalent_kernel_of_another_problem_is_reused_not_remeasured(tmp_path, target, fake):
    db = TuningDB(tmp_path / "t.sqlite")
    k = small("add", M=16, N=256)
    tune(k, target, budget=4, strategy="grid", measurer=fake, db=db, seed=0)
    # the same kernel with the documented pipeline forced in: a new problem key (documented
    # differs) is not needed; instead record a foreign measurement and check lookup reuse
    c_key = db.evaluations()[0].candidate
    assert db.lookup(c_key, "fake:1") is not None
    db.record(source="other", candidate="k2", model_version="fake:1", kernel_name="x", sizes={}, target="t",
              pipeline="p", m=Measurement(1.0))
    assert db.lookup("k2", "fake:1").time_us == 1.0
    assert db.lookup("k2", "other:1") is None


_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from tune.conftest import FakeMeasurer, small
    from transformer.targets import get_target
    from transformer.tune.db import TuningDB
    from transformer.tune.tuner import tune
    r = tune(small("add", M=16, N=256), get_target("ascend910b2"), budget={budget}, strategy="grid",
             measurer=FakeMeasurer(sleep={sleep}), db=TuningDB({db!r}), seed=0)
    print(r.evaluations_new)
""")


def test_kill_9_mid_run_loses_at_most_the_evaluation_in_flight_and_resumes(tmp_path):
    path = str(tmp_path / "k.sqlite")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = _SCRIPT.format(tests=str(ROOT / "tests"), budget=12, sleep=0.4, db=path)
    p = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        n = 0
        while time.time() < deadline:
            if os.path.exists(path):
                try:
                    n = len(TuningDB(path).evaluations())
                except Exception:
                    n = 0
                if n >= 3:
                    break
            time.sleep(0.1)
        assert n >= 3, p.stderr.read().decode() if p.poll() is not None else "too slow"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    db = TuningDB(path)
    assert db.integrity() == "ok"
    kept = len(db.evaluations())
    assert 3 <= kept < 12
    assert [r["status"] for r in db.runs()] == ["running"]  # killed: never finished
    fast = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=str(ROOT / "tests"), budget=12, sleep=0, db=path)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert fast.returncode == 0, fast.stderr
    assert int(fast.stdout.strip()) == 12 - kept
    assert len(TuningDB(path).evaluations()) == 12
