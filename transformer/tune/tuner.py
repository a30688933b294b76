"""The tuning loop: budget, resume, DB, parallel evaluation.

    result = tune(kernel, target, budget=20, strategy="agent", db=TuningDB(path))
    result.best.pipeline, result.best_m.time_us, result.evaluations_new

The budget counts *distinct candidate kernels evaluated for this problem* (kernel + sizes
+ target + model version), whenever they were evaluated: a run killed after 7 of 20
evaluations resumes with 13 new ones, and a problem already tuned to the budget answers
from the DB without measuring anything. The untransformed kernel (the baseline) and the
documented pipeline (when given) are always among the evaluations. A kernel already
measured for another problem (same canonical kernel) is reused, not re-measured.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import ir
from ..printer import print_kernel
from .db import TuningDB
from .executors import make_executor, result_of
from .measure import Measurement, Measurer
from .measurers import default_measurer
from .space import DEFAULT_STAGES, Candidate, SearchSpace, kernel_key
from .strategies import Strategy, make_strategy, nearest_pipelines
from ..targets import Target


@dataclass
class Progress:
    """What the progress bar shows."""

    done: int
    budget: int
    best_us: float | None
    per_minute: float


@dataclass
class TuneResult:
    source: str
    model_version: str
    best: Candidate | None
    best_m: Measurement | None
    baseline_m: Measurement | None
    documented: str | None
    documented_m: Measurement | None
    evaluations: int
    evaluations_new: int
    db: str
    run_id: int
    history: list[tuple[Candidate, Measurement]] = field(default_factory=list)
    space: SearchSpace | None = None
    strategy: str = ""

    def to_json(self) -> dict[str, Any]:
        def us(m: Measurement | None) -> float | None:
            return m.time_us if m is not None and m.ok else None

        return {
            "best_pipeline": self.best.pipeline if self.best else None,
            "time_us": us(self.best_m),
            "bound": self.best_m.bound if self.best_m else None,
            "pipes": self.best_m.pipes if self.best_m else {},
            "baseline_us": us(self.baseline_m),
            "documented_pipeline": self.documented,
            "documented_us": us(self.documented_m),
            "evaluations": self.evaluations,
            "evaluations_new": self.evaluations_new,
            "failed": sum(1 for _, m in self.history if not m.ok),
            "strategy": self.strategy,
            "model_version": self.model_version,
            "backend": self.best_m.backend if self.best_m else None,
            "db": self.db,
            "run_id": self.run_id,
        }

    def top(self, n: int = 5) -> list[tuple[Candidate, Measurement]]:
        ok = [(c, m) for c, m in self.history if m.ok]
        return sorted(ok, key=lambda cm: cm[1].time_us or math.inf)[:n]


def model_version(measurer: Measurer) -> str:
    return f"{measurer.name}:{measurer.version}"


def tune(kernel: ir.Kernel, target: Target, *, budget: int = 20, strategy: str | Strategy = "agent",
         measurer: Measurer | None = None, db: TuningDB | None = None, seed: int | None = None,
         jobs: int = 1, executor: str = "local", documented: str | None = None,
         space: SearchSpace | None = None, stages: tuple[str, ...] = DEFAULT_STAGES,
         progress: Callable[[Progress], None] | None = None) -> TuneResult:
    """Tune `kernel` (at its sizes) on `target`; every evaluation goes to `db`."""
    measurer = measurer or default_measurer()
    db = db or TuningDB()
    mv = model_version(measurer)
    tname = getattr(target, "name", str(target))
    source = kernel_key(kernel, target)
    sizes = kernel.size_values()
    space = space or SearchSpace(kernel, target, stages)
    history: dict[str, tuple[Candidate, Measurement]] = {}

    # ---- resume: this problem's past evaluations ------------------------------------
    past = db.evaluations(source, mv)
    for e in past:
        c = space.candidate_for(e.pipeline)
        if c is not None:
            history.setdefault(c.key, (c, e.measurement))
    warm: list[str] = []
    if not past:
        rows = [(e.sizes, e.pipeline, e.measurement.time_us) for e in
                db.evaluations(None, mv, kernel_name=kernel.name, target=tname) if e.measurement.ok]
        warm = nearest_pipelines(rows, sizes)
    strat = strategy if isinstance(strategy, Strategy) else \
        make_strategy(strategy, space, seed, **({"warm": warm} if strategy == "agent" else {}))
    for c, m in history.values():
        strat.observe(c, m)
    run_id = db.start_run(source=source, model_version=mv, kernel_name=kernel.name, sizes=sizes, target=tname,
                          strategy=strat.name, budget=budget, seed=seed, source_text=print_kernel(kernel))
    baseline = space.reach(space.root())
    doc = space.candidate_for(documented) if documented else None
    must = [c for c in (baseline, doc) if c is not None]

    new = 0
    step = len(history)
    t_start = time.perf_counter()
    ex = make_executor(executor, jobs) if len(history) < budget else None
    busy: dict[cf.Future[Measurement], Candidate] = {}

    def flush_decisions() -> None:
        db.decisions_add(run_id, [(step, k, p, d) for k, p, d in strat.decisions])
        strat.decisions.clear()

    def best_us() -> float | None:
        ts = [m.time_us for _, m in history.values() if m.ok and m.time_us is not None]
        return min(ts) if ts else None

    try:
        while ex is not None and (len(history) + len(busy) < budget or busy):
            while len(history) + len(busy) < budget and len(busy) < max(1, jobs):
                busy_keys = {c.key for c in busy.values()}
                c = next((x for x in must if x.key not in history and x.key not in busy_keys), None)
                if c is not None:
                    strat.decide("reference", c, why="baseline" if c is baseline else "documented pipeline")
                else:
                    c = strat.propose(busy_keys)
                if c is None:
                    break
                hit = db.lookup(c.key, mv)
                if hit is not None:  # the same kernel measured for another problem
                    _store(db, source, mv, kernel, tname, c, hit, run_id, measured=False)
                    history[c.key] = (c, hit)
                    strat.observe(c, hit)
                    strat.decide("reuse", c, why="same canonical kernel already measured")
                    continue
                busy[ex.submit(measurer, c.kernel, target)] = c
            flush_decisions()
            if not busy:
                break
            done, _ = cf.wait(list(busy), return_when=cf.FIRST_COMPLETED)
            for f in done:
                c = busy.pop(f)
                m = result_of(f)
                _store(db, source, mv, kernel, tname, c, m, run_id, measured=True)
                history[c.key] = (c, m)
                strat.observe(c, m)
                new += 1
                step += 1
                if progress is not None:
                    mins = max(1e-9, (time.perf_counter() - t_start) / 60)
                    progress(Progress(len(history), budget, best_us(), new / mins))
    finally:
        if ex is not None:
            ex.close()
        flush_decisions()

    ok = [(c, m) for c, m in history.values() if m.ok]
    best = min(ok, key=lambda cm: cm[1].time_us or math.inf) if ok else None
    base_m = history.get(baseline.key, (None, None))[1]
    doc_m = history.get(doc.key, (None, None))[1] if doc is not None else None
    res = TuneResult(source, mv, best[0] if best else None, best[1] if best else None, base_m, documented, doc_m,
                     len(history), new, str(db.path), run_id, list(history.values()), space, strat.name)
    db.finish_run(run_id, best_pipeline=res.best.pipeline if res.best else None,
                  best_time_us=res.best_m.time_us if res.best_m else None,
                  baseline_us=base_m.time_us if base_m else None, documented_pipeline=documented,
                  documented_us=doc_m.time_us if doc_m else None, evaluations_new=new)
    return res


def _store(db: TuningDB, source: str, mv: str, kernel: ir.Kernel, target: str, c: Candidate, m: Measurement,
           run_id: int, *, measured: bool) -> None:
    db.record(source=source, candidate=c.key, model_version=mv, kernel_name=kernel.name,
              sizes=kernel.size_values(), target=target, pipeline=c.pipeline, m=m, run_id=run_id,
              measured=measured)


def result_from_db(db: TuningDB, run_id: int) -> tuple[TuneResult, Measurer, Any]:
    """Rebuild the `TuneResult` of a stored run (for `ascx explain RUN`): the kernel from
    the stored text, the history from the DB, the measurer from the model version."""
    from ..parser import parse
    from ..targets import get_target
    from .measurers import measurer_for

    run = db.run(run_id)
    if run is None:
        raise LookupError(f"no run {run_id} in {db.path}")
    kernel = parse(run["source_text"] or "", f"<run {run_id}>")
    target = get_target(run["target"])
    space = SearchSpace(kernel, target)
    history: dict[str, tuple[Candidate, Measurement]] = {}
    for e in db.evaluations(run["source"], run["model_version"]):
        c = space.candidate_for(e.pipeline)
        if c is not None:
            history.setdefault(c.key, (c, e.measurement))
    best = space.candidate_for(run["best_pipeline"]) if run["best_pipeline"] is not None else None
    best_m = history.get(best.key, (None, None))[1] if best else None
    base = space.reach(space.root())
    doc = run["documented_pipeline"]
    doc_c = space.candidate_for(doc) if doc else None
    res = TuneResult(run["source"], run["model_version"], best, best_m, history.get(base.key, (None, None))[1],
                     doc, history.get(doc_c.key, (None, None))[1] if doc_c else None, len(history), 0,
                     str(db.path), run_id, list(history.values()), space, run["strategy"] or "")
    return res, measurer_for(run["model_version"]), target
