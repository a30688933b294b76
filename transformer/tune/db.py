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
`ascx tune` invocation, with its outcome) and `decisions` (every choice the strategy made,
with its reason). The default file is `$ASCX_TUNE_DB`, else `<user cache dir>/ascx/tune.sqlite`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .measure import Measurement

SCHEMA_VERSION = "1"

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
"""


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


class TuningDB:
    """A connection to one tuning database file (created on first use)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a committed transaction survives the process being killed
        # (only an OS crash / power loss may lose the last commits).
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "TuningDB":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- evaluations ----------------------------------------------------------------
    def record(self, *, source: str, candidate: str, model_version: str, kernel_name: str,
               sizes: dict[str, int], target: str, pipeline: str, m: Measurement,
               run_id: int | None = None, measured: bool = True) -> None:
        """Store one evaluation (committed at once). A row already present for the same
        (source, candidate, model version) is kept (the first measurement wins)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO evaluations(source, candidate, model_version, kernel_name, sizes,"
            " target, pipeline, time_us, cycles, bound, pipes, roofline_us, verified, error, wall_s,"
            " backend, measured, created, run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (source, candidate, model_version, kernel_name, json.dumps(sizes, sort_keys=True), target,
             pipeline, m.time_us, m.cycles, m.bound, json.dumps(m.pipes), m.roofline_us, int(m.verified),
             m.error, m.wall_s, m.backend, int(measured), time.time(), run_id))

    def lookup(self, candidate: str, model_version: str) -> Measurement | None:
        """A measurement of this exact kernel (from any source), or None."""
        row = self.conn.execute(
            "SELECT * FROM evaluations WHERE candidate=? AND model_version=? AND measured=1 "
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

    # ---- runs and decisions -----------------------------------------------------------
    def start_run(self, *, source: str, model_version: str, kernel_name: str, sizes: dict[str, int],
                  target: str, strategy: str, budget: int, seed: int | None, source_text: str = "") -> int:
        """A new run (status `running` until `finish_run`); `source_text` is the printed
        kernel, so `ascx explain RUN` can rebuild the problem."""
        cur = self.conn.execute(
            "INSERT INTO runs(source, model_version, kernel_name, sizes, target, strategy, budget, seed,"
            " started, status, source_text) VALUES (?,?,?,?,?,?,?,?,?, 'running', ?)",
            (source, model_version, kernel_name, json.dumps(sizes, sort_keys=True), target, strategy,
             budget, seed, time.time(), source_text))
        return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, **fields: Any) -> None:
        cols = ", ".join(f"{k}=?" for k in fields)
        self.conn.execute(f"UPDATE runs SET {cols}, finished=?, status='done' WHERE id=?",
                          (*fields.values(), time.time(), run_id))

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
