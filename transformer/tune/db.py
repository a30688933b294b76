"""The tuning database: every evaluation ever made, in SQLite (stdlib `sqlite3`, WAL).

Why SQLite in WAL mode: each evaluation is committed in its own transaction the moment it
is known, so a `kill -9` mid-run loses at most the evaluation in flight; readers (`ascx db
list` while a tune runs) never block the writer. Only the driver process writes (workers of
`--jobs` / Ray return results to it).

Keys:
- `source`: `kernel_key` of the kernel being tuned (printed kernel + sizes + target): what
  "this tuning problem" means; a tuned shape answers from the DB immediately.
- `candidate`: `kernel_key` of a transformed kernel: equivalent kernels are measured once,
  whichever source or pipeline reached them.
- `model_version`: the measurer's backend and version; a new timing model re-measures.

Tables: `evaluations` (one row per (source, candidate, model_version): pipeline, time,
cycles, bound, per-pipe busy cycles, verified, error text, wall time), `runs` (one per
`ascx tune` invocation, with its outcome, its driver's pid and host and a heartbeat),
`run_evals` (which evaluations each run used: resumed, reused or measured, so `ascx
explain RUN` shows that run's view and not a later run's), `decisions` (every choice the
strategy made, with its reason) and `claims` (candidates being measured right now, so two
tunes on one DB never measure the same kernel twice). The default file is `$ASCX_TUNE_DB`,
else `<user cache dir>/ascx/tune.sqlite`.

A failure by time limit (`Measurement.transient`) is not final: `lookup` does not offer it
to other problems, a resumed run measures it again, and the new row replaces it.

A run whose driver died (`kill -9`, a crash) cannot mark itself: `runs()` reports a
`running` run as `killed` when its pid is gone on this host, or when its heartbeat (beaten
every HEARTBEAT_S by the driver) is older than STALE_S.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .measure import TIMEOUT, Measurement

SCHEMA_VERSION = "2"  # 2: runs.pid/host/heartbeat, run_evals, claims
HEARTBEAT_S = 20.0
STALE_S = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS evaluations(
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  candidate TEXT NOT NULL,
  model_version TEXT NOT NULL,
  kernel_name TEXT, sizes TEXT, target TEXT,
  pipeline TEXT NOT NULL,
  time_us REAL, cycles REAL, bound TEXT, pipes TEXT, roofline_us REAL,
  verified INTEGER, error TEXT, wall_s REAL, backend TEXT,
  measured INTEGER NOT NULL DEFAULT 1,
  created REAL, run_id INTEGER,
  UNIQUE(source, candidate, model_version));
CREATE INDEX IF NOT EXISTS ev_source ON evaluations(source, model_version);
CREATE INDEX IF NOT EXISTS ev_candidate ON evaluations(candidate, model_version);
CREATE INDEX IF NOT EXISTS ev_name ON evaluations(kernel_name, target, model_version);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL, model_version TEXT NOT NULL,
  kernel_name TEXT, sizes TEXT, target TEXT,
  strategy TEXT, budget INTEGER, seed INTEGER,
  started REAL, finished REAL,
  best_pipeline TEXT, best_time_us REAL, baseline_us REAL,
  documented_pipeline TEXT, documented_us REAL,
  evaluations_new INTEGER, status TEXT, source_text TEXT);
CREATE TABLE IF NOT EXISTS decisions(
  id INTEGER PRIMARY KEY, run_id INTEGER, step INTEGER, kind TEXT,
  pipeline TEXT, detail TEXT, created REAL);
CREATE TABLE IF NOT EXISTS run_evals(
  run_id INTEGER NOT NULL, evaluation_id INTEGER NOT NULL, PRIMARY KEY(run_id, evaluation_id));
CREATE TABLE IF NOT EXISTS claims(
  candidate TEXT NOT NULL, model_version TEXT NOT NULL, run_id INTEGER NOT NULL, created REAL,
  PRIMARY KEY(candidate, model_version));
"""
# columns added after schema 1 (a database of schema 1 gets them on open)
_NEW_COLUMNS = {"runs": (("pid", "INTEGER"), ("host", "TEXT"), ("heartbeat", "REAL"))}
_TRANSIENT = f"(evaluations.error IS NOT NULL AND evaluations.error LIKE '{TIMEOUT}%')"



def default_path() -> Path:
    """`$ASCX_TUNE_DB`, else `$XDG_CACHE_HOME/ascx/tune.sqlite` (`~/.cache/...`)."""
    env = os.environ.get("ASCX_TUNE_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ascx" / "tune.sqlite"


@dataclass(frozen=True)
class Evaluation:
    """One stored row of `evaluations`."""

    id: int
    source: str
    candidate: str
    model_version: str
    kernel_name: str
    sizes: dict[str, int]
    target: str
    pipeline: str
    measurement: Measurement
    measured: bool
    created: float
    run_id: int | None

    def to_json(self) -> dict[str, Any]:
        m = self.measurement
        return {"id": self.id, "source": self.source, "candidate": self.candidate,
                "model_version": self.model_version, "kernel": self.kernel_name, "sizes": self.sizes,
                "target": self.target, "pipeline": self.pipeline, "time_us": m.time_us,
                "cycles": m.cycles, "bound": m.bound, "pipes": m.pipes, "roofline_us": m.roofline_us,
                "verified": m.verified, "error": m.error, "wall_s": m.wall_s, "backend": m.backend,
                "measured": self.measured, "created": self.created, "run_id": self.run_id}


INIT_ATTEMPTS = 20  # tries at opening a file another process is creating (see `TuningDB.__init__`)


class TuningDB:
    """A connection to one tuning database file (created on first use)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
        # Two processes opening a fresh file at once can deadlock on the switch to WAL or the
        # schema (both hold a read lock and want to write): SQLite then answers "database is
        # locked" at once, without waiting out the busy timeout. Whoever loses tries again.
        for attempt in range(INIT_ATTEMPTS):
            try:
                self._init_schema()
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == INIT_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _init_schema(self) -> None:
        self.conn.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a committed transaction survives the process being killed
        # (only an OS crash / power loss may lose the last commits).
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        for table, cols in _NEW_COLUMNS.items():
            have = {c[1] for c in self.conn.execute(f"PRAGMA table_info({table})")}
            for name, typ in cols:
                if name not in have:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {typ}")
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "TuningDB":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- evaluations ----------------------------------------------------------------
    def record(self, *, source: str, candidate: str, model_version: str, kernel_name: str,
               sizes: dict[str, int], target: str, pipeline: str, m: Measurement,
               run_id: int | None = None, measured: bool = True) -> int:
        """Store one evaluation (committed at once) and return its row id; link it to
        `run_id`. A row already present for the same (source, candidate, model version) is
        kept (the first measurement wins), unless it is a transient failure (a timeout):
        then the new evaluation replaces it."""
        cols = ("pipeline", "time_us", "cycles", "bound", "pipes", "roofline_us", "verified", "error", "wall_s",
                "backend", "measured", "created", "run_id")
        with self._tx():
            self.conn.execute(
                "INSERT INTO evaluations(source, candidate, model_version, kernel_name, sizes, target, "
                + ", ".join(cols) + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(source, candidate, model_version) DO UPDATE SET "
                + ", ".join(f"{c}=excluded.{c}" for c in cols) + f" WHERE {_TRANSIENT}",
                (source, candidate, model_version, kernel_name, json.dumps(sizes, sort_keys=True), target,
                 pipeline, m.time_us, m.cycles, m.bound, json.dumps(m.pipes), m.roofline_us, int(m.verified),
                 m.error, m.wall_s, m.backend, int(measured), time.time(), run_id))
            eid = int(self.conn.execute("SELECT id FROM evaluations WHERE source=? AND candidate=? AND model_version=?",
                                        (source, candidate, model_version)).fetchone()[0])
            if run_id is not None:
                self.conn.execute("INSERT OR IGNORE INTO run_evals VALUES (?, ?)", (run_id, eid))
                self.conn.execute("DELETE FROM claims WHERE candidate=? AND model_version=? AND run_id=?",
                                  (candidate, model_version, run_id))
        return eid

    def link(self, run_id: int, evaluation_ids: list[int]) -> None:
        """Record that run `run_id` used these (earlier) evaluations."""
        with self._tx():
            self.conn.executemany("INSERT OR IGNORE INTO run_evals VALUES (?, ?)", [(run_id, i) for i in evaluation_ids])

    def lookup(self, candidate: str, model_version: str) -> Measurement | None:
        """A measurement of this exact kernel (from any source), or None; a transient
        failure (timeout) is never offered: it is measured again."""
        row = self.conn.execute(
            f"SELECT * FROM evaluations WHERE candidate=? AND model_version=? AND measured=1 AND NOT {_TRANSIENT} "
            "ORDER BY id LIMIT 1", (candidate, model_version)).fetchone()
        return _row(self.conn, row).measurement if row else None

    def evaluations(self, source: str | None = None, model_version: str | None = None, *,
                    kernel_name: str | None = None, target: str | None = None) -> list[Evaluation]:
        q, args = "SELECT * FROM evaluations WHERE 1=1", []
        for col, v in (("source", source), ("model_version", model_version),
                       ("kernel_name", kernel_name), ("target", target)):
            if v is not None:
                q += f" AND {col}=?"
                args.append(v)
        return [_row(self.conn, r) for r in self.conn.execute(q + " ORDER BY id", args)]

    def run_evaluations(self, run_id: int) -> list[Evaluation]:
        """The evaluations run `run_id` used (resumed, reused or measured), in id order.
        A run stored before `run_evals` existed: its problem's rows created up to its end."""
        rows = self.conn.execute("SELECT e.* FROM evaluations e JOIN run_evals r ON r.evaluation_id = e.id "
                                 "WHERE r.run_id=? ORDER BY e.id", (run_id,)).fetchall()
        if rows:
            return [_row(self.conn, r) for r in rows]
        run = self.run(run_id)
        if run is None:
            return []
        end = run["finished"] if run["finished"] is not None else time.time()
        return [e for e in self.evaluations(run["source"], run["model_version"]) if e.created <= end]

    # ---- claims: candidates in flight ------------------------------------------------
    def claim(self, candidate: str, model_version: str, run_id: int) -> bool:
        """Claim a candidate for measurement by `run_id`: True when the claim is ours (new,
        already ours, or taken over from a run that is no longer running), False when a
        live run is measuring it or its measurement is already stored (wait for its row:
        `lookup`). The stored-row test is inside the claim's transaction: a caller's earlier
        `lookup` can miss a row another run stores (and unclaims) just before this claim."""
        with self._tx():
            done = self.conn.execute(
                f"SELECT 1 FROM evaluations WHERE candidate=? AND model_version=? AND measured=1 AND NOT {_TRANSIENT} "
                "LIMIT 1", (candidate, model_version)).fetchone()
            if done is not None:
                return False
            row = self.conn.execute("SELECT run_id FROM claims WHERE candidate=? AND model_version=?",
                                    (candidate, model_version)).fetchone()
            if row is not None and row[0] != run_id and self._live(row[0]):
                return False
            self.conn.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
                              (candidate, model_version, run_id, time.time()))
            return True

    def release_claims(self, run_id: int) -> None:
        self.conn.execute("DELETE FROM claims WHERE run_id=?", (run_id,))

    def _live(self, run_id: int) -> bool:
        row = self.conn.execute("SELECT status, pid, host, heartbeat FROM runs WHERE id=?", (run_id,)).fetchone()
        return row is not None and _status(*row) == "running"

    # ---- runs and decisions -----------------------------------------------------------
    def start_run(self, *, source: str, model_version: str, kernel_name: str, sizes: dict[str, int],
                  target: str, strategy: str, budget: int, seed: int | None, source_text: str = "") -> int:
        """A new run (status `running` until `finish_run`, with this process's pid and host
        and a first heartbeat); `source_text` is the printed kernel, so `ascx explain RUN`
        can rebuild the problem."""
        now = time.time()
        cur = self.conn.execute(
            "INSERT INTO runs(source, model_version, kernel_name, sizes, target, strategy, budget, seed,"
            " started, status, source_text, pid, host, heartbeat) VALUES (?,?,?,?,?,?,?,?,?, 'running', ?,?,?,?)",
            (source, model_version, kernel_name, json.dumps(sizes, sort_keys=True), target, strategy,
             budget, seed, now, source_text, os.getpid(), socket.gethostname(), now))
        return int(cur.lastrowid or 0)

    def beat(self, run_id: int) -> None:
        """The driver of `run_id` is alive (see `Heartbeat`)."""
        self.conn.execute("UPDATE runs SET heartbeat=? WHERE id=?", (time.time(), run_id))

    def finish_run(self, run_id: int, **fields: Any) -> None:
        cols = ", ".join(f"{k}=?" for k in fields)
        self.conn.execute(f"UPDATE runs SET {cols}, finished=?, status='done' WHERE id=?",
                          (*fields.values(), time.time(), run_id))
        self.release_claims(run_id)

    def decisions_add(self, run_id: int | None, items: list[tuple[int, str, str, dict[str, Any]]]) -> None:
        """Store decisions (step, kind, pipeline, detail) in one transaction."""
        if not items:
            return
        now = time.time()
        with self._tx():
            self.conn.executemany(
                "INSERT INTO decisions(run_id, step, kind, pipeline, detail, created) VALUES (?,?,?,?,?,?)",
                [(run_id, s, k, p, json.dumps(d, default=str), now) for s, k, p, d in items])

    def runs(self) -> list[dict[str, Any]]:
        cur = self.conn.execute("SELECT * FROM runs ORDER BY id")
        names = [c[0] for c in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(names, r))
            d["sizes"] = json.loads(d["sizes"] or "{}")
            status = _status(d["status"], d.get("pid"), d.get("host"), d.get("heartbeat"))
            if status != d["status"]:  # its driver died: say so, once and for all
                self.conn.execute("UPDATE runs SET status=? WHERE id=? AND status='running'", (status, d["id"]))
                d["status"] = status
            out.append(d)
        return out

    def run(self, run_id: int) -> dict[str, Any] | None:
        return next((r for r in self.runs() if r["id"] == run_id), None)

    def decisions(self, run_id: int) -> list[dict[str, Any]]:
        cur = self.conn.execute("SELECT step, kind, pipeline, detail FROM decisions WHERE run_id=? ORDER BY id",
                                (run_id,))
        return [{"step": s, "kind": k, "pipeline": p, "detail": json.loads(d or "{}")} for s, k, p, d in cur]

    def integrity(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    # ---- helpers ----------------------------------------------------------------------
    def _tx(self) -> "_Tx":
        return _Tx(self.conn)


def _status(status: str, pid: int | None, host: str | None, heartbeat: float | None) -> str:
    """`killed` for a `running` run whose driver is gone (pid dead on this host, or no
    heartbeat for STALE_S), else the stored status."""
    if status != "running":
        return status
    if heartbeat is not None and time.time() - heartbeat > STALE_S:
        return "killed"
    if pid is not None and host == socket.gethostname() and not _pid_alive(pid):
        return "killed"
    return status


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    try:  # a zombie (dead, not yet reaped) is dead
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


class Heartbeat:
    """A daemon thread beating `run_id`'s heartbeat every HEARTBEAT_S on its own
    connection (a measurement in the driver may take minutes)."""

    def __init__(self, path: Path, run_id: int) -> None:
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if str(path) != ":memory:":
            self.thread = threading.Thread(target=self._loop, args=(path, run_id), daemon=True)
            self.thread.start()

    def _loop(self, path: Path, run_id: int) -> None:
        db = TuningDB(path)
        try:
            while not self.stop.wait(HEARTBEAT_S):
                db.beat(run_id)
        finally:
            db.close()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=5)


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, et: Any, *_: Any) -> None:
        self.conn.execute("ROLLBACK" if et else "COMMIT")


def _row(conn: sqlite3.Connection, r: Any) -> Evaluation:
    cols = [c[1] for c in conn.execute("PRAGMA table_info(evaluations)")]
    d = dict(zip(cols, r))
    m = Measurement(d["time_us"], d["cycles"], d["bound"] or "", json.loads(d["pipes"] or "{}"),
                    d["roofline_us"] or 0.0, bool(d["verified"]), d["error"], d["wall_s"] or 0.0,
                    d["backend"] or "")
    return Evaluation(d["id"], d["source"], d["candidate"], d["model_version"], d["kernel_name"] or "",
                      json.loads(d["sizes"] or "{}"), d["target"] or "", d["pipeline"], m,
                      bool(d["measured"]), d["created"] or 0.0, d["run_id"])


def iter_export(db: TuningDB) -> Iterator[dict[str, Any]]:
    for e in db.evaluations():
        yield e.to_json()


def export(db: TuningDB) -> dict[str, Any]:
    """The whole database as one JSON-able document: runs (each with its decisions and
    the ids of the evaluations it used) and evaluations."""
    runs = []
    for r in db.runs():
        ids = [e.id for e in db.run_evaluations(r["id"])]
        runs.append({**r, "decisions": db.decisions(r["id"]), "evaluation_ids": ids})
    return {"runs": runs, "evaluations": [e.to_json() for e in db.evaluations()]}
