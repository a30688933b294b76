"""The tuning loop: budget, resume, DB, parallel evaluation.

    result = tune(kernel, target, budget=20, strategy="agent", db=TuningDB(path))
    result.best.pipeline, result.best_m.time_us, result.evaluations_new

The budget counts *distinct candidate kernels evaluated for this problem* (kernel + sizes
+ target + model version), whenever they were evaluated: a run killed after 7 of 20
evaluations resumes with 13 new ones, and a problem already tuned to the budget answers
from the DB without measuring anything. The untransformed kernel (the baseline) and the
documented pipeline (when given) are always among the evaluations. A kernel already
measured for another problem (same canonical kernel) is reused, not re-measured.

Several tunes may share one DB: a candidate is *claimed* before it is measured, and a
candidate another live run has claimed is awaited (its row is then reused), never measured
twice. A failure by time limit is transient (`Measurement.transient`): a resumed run
measures it again. The time limit of a measurer with a `timeout` field is relative to the
best so far: TIMEOUT_FACTOR x the wall time of the fastest candidate's evaluation (at least
TIMEOUT_FLOOR_S, at most the measurer's own limit), so one slow candidate under load costs
little and says why.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import ir
from ..printer import print_kernel
from .db import Heartbeat, TuningDB
from .executors import make_executor, result_of
from .measure import Measurement, Measurer
from .measurers import default_measurer
from .space import DEFAULT_STAGES, Candidate, SearchSpace, kernel_key
from .carry import Carried, recheck
from .costmodel import dataset_from_db
from .knobs import KnobSpace
from .precision import PRECISION_PASSES, Check, check, stages_for, uses
from .strategies import Strategy, make_strategy, nearest_sizes
from ..targets import Target

TIMEOUT_FACTOR = 10.0
TRANSFER_EXAMPLES = 120  # other problems' measurements the cost model trains on (newest first)
TIMEOUT_FLOOR_S = 30.0
POLL_S = 0.5  # how often a run waiting on another run's claimed candidate looks again


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
    carried: list[Carried] = field(default_factory=list)  # pipelines from other sizes, re-checked here
    allow: tuple[str, ...] = ()  # the precision-changing passes the search could use
    precision: dict[str, Check] = field(default_factory=dict)  # candidate key -> the interpreter's verdict

    def precision_choice(self) -> tuple[list[str], Check | None]:
        """The winner's precision-changing passes and their verification ([] when none)."""
        if self.best is None:
            return [], None
        used = uses(self.best.passes, self.allow)
        return used, self.precision.get(self.best.key) if used else None

    def carried_best(self) -> Carried | None:
        """The re-check of the winner when it is a pipeline carried over from other sizes."""
        if self.best is None:
            return None
        return next((c for c in self.carried if not c.refused and self.space is not None
                     and (cand := self.space.candidate_for(c.pipeline)) is not None and cand.key == self.best.key), None)

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
            "carried": [c.to_json() for c in self.carried],
            "best_carried_from": (cb.tuned_at if (cb := self.carried_best()) is not None else None),
            "allow": list(self.allow),
            "precision": self._precision_json(),
        }

    def _precision_json(self) -> dict[str, Any] | None:
        used, chk = self.precision_choice()
        return {"passes": used, "verified": chk.to_json() if chk else None} if used else None

    def top(self, n: int = 5) -> list[tuple[Candidate, Measurement]]:
        ok = [(c, m) for c, m in self.history if m.ok]
        return sorted(ok, key=lambda cm: cm[1].time_us or math.inf)[:n]


def model_version(measurer: Measurer) -> str:
    return f"{measurer.name}:{measurer.version}"


def tune(kernel: ir.Kernel, target: Target, *, budget: int = 20, strategy: str | Strategy = "agent",
         measurer: Measurer | None = None, db: TuningDB | None = None, seed: int | None = None,
         jobs: int = 1, executor: str = "local", documented: str | None = None,
         space: SearchSpace | None = None, stages: tuple[str, ...] = DEFAULT_STAGES,
         progress: Callable[[Progress], None] | None = None, allow: tuple[str, ...] = (),
         knobs: bool | None = None) -> TuneResult:
    """Tune `kernel` (at its sizes) on `target`; every evaluation goes to `db`. `allow`:
    precision-changing passes the search may use (`precision.py`), each candidate using
    one verified against the interpreter first. `knobs`: search the knob space
    (`knobs.py`) besides the staged one (agent, random, TPE); by default on unless the
    caller restricts the space (`space` or `stages` given)."""
    unknown = [a for a in allow if a not in PRECISION_PASSES]
    if unknown:
        raise ValueError(f"--allow {unknown[0]}: not a precision-changing pass (known: {', '.join(PRECISION_PASSES)})")
    measurer = measurer or default_measurer()
    db = db or TuningDB()
    mv = model_version(measurer)
    tname = getattr(target, "name", str(target))
    source = kernel_key(kernel, target)
    sizes = kernel.size_values()
    if knobs is None:
        knobs = space is None and tuple(stages) == DEFAULT_STAGES
    if space is None:
        space = SearchSpace(kernel, target, stages_for(allow, tuple(stages)))
        space.eager = len(space.stages) - len(stages)
    history: dict[str, tuple[Candidate, Measurement]] = {}
    precision: dict[str, Check] = {}
    forbidden = tuple(n for n in PRECISION_PASSES if n not in allow)  # not chosen, whatever the DB holds

    # ---- resume: this problem's past evaluations ------------------------------------
    past = db.evaluations(source, mv)
    used: list[int] = []
    for e in past:
        if e.measurement.transient:  # a timeout is not final: measured again
            continue
        c = space.candidate_for(e.pipeline)
        if c is not None and c.key not in history and not uses(c.passes, forbidden):
            history[c.key] = (c, e.measurement)
            used.append(e.id)
    warm: list[str] = []
    carried: list[Carried] = []
    # the best pipelines at the nearest other sizes, re-checked here: a new problem starts
    # from them (the warm start); a resumed one still says which of its results they are
    rows = [(e.sizes, e.pipeline, e.measurement.time_us) for e in
            db.evaluations(None, mv, kernel_name=kernel.name, target=tname) if e.measurement.ok]
    tuned_at, pipelines = nearest_sizes(rows, sizes)
    carried = recheck(space, pipelines, tuned_at, seed)
    if not past:
        warm = [c.pipeline for c in carried if not c.refused]
    ks = KnobSpace.build(kernel, target, allow, space=space) if knobs else None
    kw: dict[str, Any] = {"knobs": ks}
    if strategy == "agent":
        kw["warm"] = warm
        if ks is not None:  # the other problems' measurements train the cost model too (transfer)
            X, y, _ = dataset_from_db(db, mv, target, limit=TRANSFER_EXAMPLES, exclude_source=source)
            kw["examples"] = (X, y) if len(y) else None
    strat = strategy if isinstance(strategy, Strategy) else make_strategy(strategy, space, seed, **kw)
    for c, m in history.values():
        strat.observe(c, m)
    for cr in carried:
        strat.decide("carry-refused" if cr.refused else "carry", space.candidate_for(cr.pipeline) if not cr.refused else None,
                     pipeline=cr.pipeline, tuned_at=cr.tuned_at, refused=cr.refused or None, verified=cr.verified)
    run_id = db.start_run(source=source, model_version=mv, kernel_name=kernel.name, sizes=sizes, target=tname,
                          strategy=strat.name, budget=budget, seed=seed, source_text=print_kernel(kernel))
    db.link(run_id, used)
    heart = Heartbeat(db.path, run_id)
    baseline = space.reach(space.root())
    doc = space.candidate_for(documented) if documented else None
    must = [c for c in (baseline, doc) if c is not None]

    new = 0
    step = len(history)
    t_start = time.perf_counter()
    ex = make_executor(executor, jobs) if len(history) < budget else None
    busy: dict[cf.Future[Measurement], Candidate] = {}
    waiting: dict[str, Candidate] = {}  # claimed by another live run: its result is awaited

    def flush_decisions() -> None:
        db.decisions_add(run_id, [(step, k, p, d) for k, p, d in strat.decisions])
        strat.decisions.clear()

    def best_us() -> float | None:
        ts = [m.time_us for _, m in history.values() if m.ok and m.time_us is not None]
        return min(ts) if ts else None

    def reuse(c: Candidate, hit: Measurement, why: str) -> None:
        _store(db, source, mv, kernel, tname, c, hit, run_id, measured=False)
        history[c.key] = (c, hit)
        strat.observe(c, hit)
        strat.decide("reuse", c, why=why)

    def submit(c: Candidate) -> None:
        busy[ex.submit(_limited(measurer, history), c.kernel, target)] = c

    def precision_refused(c: Candidate) -> bool:
        """Verify a candidate using an allowed precision pass; a failed one is recorded."""
        if not uses(c.passes, allow):
            return False
        if c.key not in precision:
            precision[c.key] = check(kernel, c.kernel, seed)
        chk = precision[c.key]
        strat.decide("precision", c, ok=chk.ok, detail=chk.detail)
        if chk.ok:
            return False
        m = Measurement.failure(f"precision: {chk.detail}")
        _store(db, source, mv, kernel, tname, c, m, run_id, measured=False)
        history[c.key] = (c, m)
        strat.observe(c, m)
        return True

    def settle_waiting() -> None:
        for key, c in list(waiting.items()):
            hit = db.lookup(key, mv)
            if hit is not None:
                del waiting[key]
                reuse(c, hit, "measured meanwhile by another run on this DB")
            elif db.claim(key, mv, run_id):  # the other run died (or failed it by timeout)
                del waiting[key]
                submit(c)

    def planned() -> int:
        return len(history) + len(busy) + len(waiting)

    try:
        while ex is not None and (planned() < budget or busy or waiting):
            settle_waiting()
            while planned() < budget and len(busy) < max(1, jobs):
                busy_keys = {c.key for c in busy.values()} | set(waiting)
                c = next((x for x in must if x.key not in history and x.key not in busy_keys), None)
                if c is not None:
                    strat.decide("reference", c, why="baseline" if c is baseline else "documented pipeline")
                else:
                    c = strat.propose(busy_keys)
                if c is None:
                    break
                if precision_refused(c):
                    continue
                hit = db.lookup(c.key, mv)
                if hit is not None:  # the same kernel measured for another problem
                    reuse(c, hit, "same canonical kernel already measured")
                    continue
                if not db.claim(c.key, mv, run_id):
                    waiting[c.key] = c
                    strat.decide("wait", c, why="another run on this DB is measuring it")
                    continue
                submit(c)
            flush_decisions()
            if not busy:
                if waiting:
                    time.sleep(POLL_S)
                    continue
                break
            done, _ = cf.wait(list(busy), timeout=POLL_S if waiting else None, return_when=cf.FIRST_COMPLETED)
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
        heart.close()
        flush_decisions()

    ok = [(c, m) for c, m in history.values() if m.ok and not uses(c.passes, forbidden)]
    best = min(ok, key=lambda cm: cm[1].time_us or math.inf) if ok else None
    if best is not None and uses(best[0].passes, allow) and best[0].key not in precision:  # resumed from the DB
        precision[best[0].key] = check(kernel, best[0].kernel, seed)
    base_m = history.get(baseline.key, (None, None))[1]
    doc_m = history.get(doc.key, (None, None))[1] if doc is not None else None
    res = TuneResult(source, mv, best[0] if best else None, best[1] if best else None, base_m, documented, doc_m,
                     len(history), new, str(db.path), run_id, list(history.values()), space, strat.name, carried,
                     tuple(allow), precision)
    db.finish_run(run_id, best_pipeline=res.best.pipeline if res.best else None,
                  best_time_us=res.best_m.time_us if res.best_m else None,
                  baseline_us=base_m.time_us if base_m else None, documented_pipeline=documented,
                  documented_us=doc_m.time_us if doc_m else None, evaluations_new=new)
    return res


def _limited(measurer: Measurer, history: dict[str, tuple[Candidate, Measurement]]) -> Measurer:
    """`measurer` with its time limit relative to the best so far (see the module
    docstring); unchanged when it has no `timeout` field or nothing succeeded yet."""
    limit = getattr(measurer, "timeout", None)
    ok = [m for _, m in history.values() if m.ok and m.time_us is not None and m.wall_s > 0]
    if limit is None or not ok or not dataclasses.is_dataclass(measurer):
        return measurer
    best = min(ok, key=lambda m: m.time_us or math.inf)
    rel = min(float(limit), max(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * best.wall_s))
    return dataclasses.replace(measurer, timeout=rel) if rel < limit else measurer  # type: ignore[type-var]


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
    for e in db.run_evaluations(run_id):
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
