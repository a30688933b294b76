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
             measurer=FakeMeasurer(sleep={sleep}, log={log!r}), db=TuningDB({db!r}), seed=0, jobs={jobs})
    print(r.evaluations_new)
""")


def _script(budget: int, sleep: float, db: str, *, jobs: int = 1, log: str = "") -> str:
    return _SCRIPT.format(tests=str(ROOT / "tests"), budget=budget, sleep=sleep, db=db, jobs=jobs, log=log)


def _wait_for_rows(path: str, n: int, p: subprocess.Popen, limit: float = 120) -> int:
    """Wait until the DB at `path` holds `n` evaluations (the driver `p` runs meanwhile)."""
    deadline = time.time() + limit
    have = 0
    while time.time() < deadline and have < n:
        if os.path.exists(path):
            try:
                have = len(TuningDB(path).evaluations())
            except Exception:
                have = 0
        time.sleep(0.1)
    assert have >= n, p.stderr.read().decode() if p.poll() is not None else "too slow"
    return have


def _children(pid: int) -> list[int]:
    """Pids whose parent is `pid` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def test_kill_9_mid_run_loses_at_most_the_evaluation_in_flight_and_resumes(tmp_path):
    path = str(tmp_path / "k.sqlite")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-c", _script(12, 0.4, path)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        _wait_for_rows(path, 3, p)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    db = TuningDB(path)
    assert db.integrity() == "ok"
    kept = len(db.evaluations())
    assert 3 <= kept < 12
    assert [r["status"] for r in db.runs()] == ["killed"]  # its pid is gone: not `running` forever
    fast = subprocess.run([sys.executable, "-c", _script(12, 0, path)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert fast.returncode == 0, fast.stderr
    assert int(fast.stdout.strip()) == 12 - kept
    assert len(TuningDB(path).evaluations()) == 12


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_a_pool_driver_leaves_no_orphan_workers(tmp_path):
    path = str(tmp_path / "j.sqlite")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-c", _script(12, 0.5, path, jobs=2)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        _wait_for_rows(path, 2, p)
        workers = _children(p.pid)
        assert len(workers) >= 2
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    deadline = time.time() + 15
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:  # do not leave them behind even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not left, f"orphaned pool workers: {left}"
    assert [r["status"] for r in TuningDB(path).runs()] == ["killed"]


def test_two_tunes_on_one_db_never_measure_a_candidate_twice(tmp_path):
    path, log = str(tmp_path / "two.sqlite"), str(tmp_path / "measured.log")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    TuningDB(path).close()  # the schema exists before the two drivers race for it
    procs = [subprocess.Popen([sys.executable, "-c", _script(6, 0.3, path, log=log)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e.decode() for _, e in outs]
    measured = open(log).read().split()
    assert len(measured) == len(set(measured)) == 6  # each candidate once, by one of the two
    assert sum(int(o.decode().strip()) for o, _ in outs) == 6
    db = TuningDB(path)
    assert [r["status"] for r in db.runs()] == ["done", "done"]
    assert all(len(db.run_evaluations(r["id"])) == 6 for r in db.runs())


def test_a_timeout_is_not_reused_for_other_problems_and_is_measured_again(tmp_path, target, fake):
    from transformer.tune.measure import TIMEOUT

    db = TuningDB(tmp_path / "t.sqlite")
    k = small("add", M=16, N=256)
    r = tune(k, target, budget=3, strategy="grid", measurer=fake, db=db, seed=0)
    slow = next(e for e in db.evaluations(r.source) if e.pipeline)
    db.conn.execute("UPDATE evaluations SET time_us=NULL, error=? WHERE id=?",
                    (f"{TIMEOUT}: over 120 s: loaded machine", slow.id))
    assert db.lookup(slow.candidate, r.model_version) is None  # never offered to another problem
    r2 = tune(k, target, budget=3, strategy="grid", measurer=fake, db=TuningDB(db.path), seed=0)
    assert r2.evaluations_new == 1  # the timed-out candidate, measured again
    again = next(e for e in TuningDB(db.path).evaluations(r.source) if e.candidate == slow.candidate)
    assert again.measurement.ok and again.id == slow.id  # the new measurement replaced it
    # a real failure stays final
    db.record(source="s", candidate="c", model_version="m", kernel_name="k", sizes={}, target="t", pipeline="p",
              m=Measurement.failure("mismatch: output differs"))
    db.record(source="s", candidate="c", model_version="m", kernel_name="k", sizes={}, target="t", pipeline="p",
              m=Measurement(1.0))
    assert db.evaluations("s")[0].measurement.error == "mismatch: output differs"


def test_time_limits_are_relative_to_the_best_so_far(tmp_path, target):
    from dataclasses import dataclass

    from transformer.tune.tuner import TIMEOUT_FACTOR, TIMEOUT_FLOOR_S

    limits: list[float] = []

    @dataclass(frozen=True)
    class Timed(FakeMeasurer):
        timeout: float = 1000.0
        wall: float = 5.0

        def measure(self, kernel, target):
            limits.append(self.timeout)
            m = super().measure(kernel, target)
            return Measurement(m.time_us, m.cycles, m.bound, m.pipes, m.roofline_us, True, None, self.wall, "fake")

    tune(small("add", M=16, N=256), target, budget=4, strategy="grid", measurer=Timed(), db=TuningDB(tmp_path / "t.sqlite"))
    assert limits[0] == 1000.0  # nothing measured yet: the measurer's own limit
    assert limits[1:] == [max(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * 5.0)] * 3


def test_the_emulator_measurers_time_limit_is_a_transient_failure(monkeypatch, target):
    """The profile's time limit (a ResourceError since `profile --timeout`) is a `timeout`."""
    from pathlib import Path

    import transformer.timing.profile as prof
    from transformer.tune.emulator import EmulatorMeasurer

    def slow_profile(kernel, target, *, timeout, **kw):  # the real limit, on a run that sleeps
        return prof.run_profiled(Path("/bin/sleep"), target, ["5"], timeout=timeout)

    monkeypatch.setattr(prof, "profile_kernel", slow_profile)
    m = EmulatorMeasurer(timeout=0.2).measure(small("add", M=512, N=1024), target)  # too large to verify first
    assert m.transient and m.error.startswith("timeout: over 0.2 s"), m.error


def test_a_claim_after_another_run_stored_the_candidate_is_refused(tmp_path):
    """The race test_two_tunes_on_one_db_never_measure_a_candidate_twice hit under load: run B's
    lookup misses, run A stores its measurement (dropping its claim), then B claims. The claim
    itself must see the stored row, or B measures the candidate a second time."""
    db = TuningDB(tmp_path / "c.sqlite")
    runs = [db.start_run(source="s", model_version="m", kernel_name="k", sizes={}, target="t", strategy="agent",
                         budget=2, seed=0) for _ in range(2)]
    assert db.lookup("x", "m") is None  # B looks first: nothing yet
    assert db.claim("x", "m", runs[0])  # A claims, measures and stores
    db.record(source="s", candidate="x", model_version="m", kernel_name="k", sizes={}, target="t", pipeline="p",
              m=Measurement(1.0), run_id=runs[0])
    assert not db.claim("x", "m", runs[1])  # B's late claim: already measured, wait for the row
    assert db.lookup("x", "m").time_us == 1.0
    # a transient failure (timeout) is measured again: its claim is granted
    from transformer.tune.db import TIMEOUT
    db.record(source="s", candidate="y", model_version="m", kernel_name="k", sizes={}, target="t", pipeline="p",
              m=Measurement.failure(f"{TIMEOUT} after 30 s"), run_id=runs[0])
    assert db.claim("y", "m", runs[1])


def test_opening_a_file_another_process_is_creating_tries_again(tmp_path, monkeypatch):
    """Two processes opening a fresh DB at once can deadlock on the switch to WAL: SQLite says
    "database is locked" at once, without the busy timeout (the kill -9 test's driver died of it
    under load while the test polled the file). The loser tries again; other errors still raise."""
    import sqlite3

    import pytest

    real = TuningDB._init_schema
    fails = {"n": 2}

    def flaky(self):
        if fails["n"]:
            fails["n"] -= 1
            raise sqlite3.OperationalError("database is locked")
        real(self)

    monkeypatch.setattr(TuningDB, "_init_schema", flaky)
    db = TuningDB(tmp_path / "f.sqlite")
    assert fails["n"] == 0 and db.integrity() == "ok" and db.runs() == []

    def broken(self):
        raise sqlite3.OperationalError("no such table: nothing")

    monkeypatch.setattr(TuningDB, "_init_schema", broken)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        TuningDB(tmp_path / "g.sqlite")
