"""`ascx tune --shapes`: one pipeline for a set of sizes, minimising the weighted time.

Why: a pipeline tuned at one size is not safe at another (explicit tiles that fit UB at
N = 256 overflow it at N = 65536) nor best there. A kernel that serves several shapes (the
sequence lengths of a model, decode and prefill) needs one pipeline that is legal, fits and
is verified at each, and is fastest on the mix the shapes are called with.

    ascx tune FILE --shapes 'S=512,D=64:3;S=1024,D=64:1' --budget 20

Each shape is `NAME=V,...` (the `--size` overrides) with an optional `:weight` (default 1;
the weights are normalised). The search proposes pipelines at the heaviest shape (the agent,
random or TPE over its staged and knob spaces); each is re-checked at every shape before it
is measured there: applied through the mask (legality, the capacity proof), and interpreted
against the untransformed kernel on fresh random inputs when small enough (`carry.py`; a
precision pass from `--allow` is checked at its tolerance, `precision.py`). A pipeline refused
or wrong at any shape is a recorded failure for the set. Otherwise its objective is
sum(weight x time) over the shapes, each time measured once per canonical kernel (the DB's
per-shape rows are reused across runs and by plain `ascx tune` at that shape).

DB keys record the distribution: the set's rows and run use the source key `shapes_key`,
the SHA-256 of the printed kernel, every shape with its weight, and the target; the run's
`sizes` holds the heaviest shape and its `source_text` the kernel.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .. import ir
from ..printer import print_kernel
from .measure import Measurement, Measurer

if TYPE_CHECKING:
    from ..targets import Target
    from .db import TuningDB

Shape = tuple[dict[str, int], float]


def parse_shapes(text: str) -> list[tuple[tuple[str, ...], float]]:
    """`'S=512,D=64:3;S=1024'` -> [(("S=512", "D=64"), 3.0), (("S=1024",), 1.0)]; ValueError
    (with what is wrong) for an empty item, a bad weight or a weight <= 0."""
    out = []
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        sizes, _, w = item.partition(":")
        try:
            weight = float(w) if w.strip() else 1.0
        except ValueError:
            raise ValueError(f"shape `{item}`: the weight `{w}` is not a number") from None
        if not weight > 0 or math.isinf(weight):
            raise ValueError(f"shape `{item}`: the weight must be positive, got {w}")
        parts = tuple(p.strip() for p in sizes.split(",") if p.strip())
        if not parts or any("=" not in p for p in parts):
            raise ValueError(f"shape `{item}`: expected NAME=VALUE,... (the --size overrides)")
        out.append((parts, weight))
    if not out:
        raise ValueError("no shape given: expected e.g. 'S=512,D=64:3;S=1024,D=64:1'")
    return out


def shapes_key(kernel: ir.Kernel, shapes: Sequence[Shape], target: "Target") -> str:
    """The set's DB key: the kernel, every shape with its (normalised) weight, the target."""
    total = sum(w for _, w in shapes)
    dist = sorted((sorted(s.items()), round(w / total, 9)) for s, w in shapes)
    blob = json.dumps(["shapes", print_kernel(kernel), dist, getattr(target, "name", str(target))])
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class ShapeEval:
    """One pipeline at one shape: refused, wrong, or measured."""

    sizes: dict[str, int]
    weight: float
    refused: str = ""
    verified: bool | None = None
    m: Measurement | None = None

    def to_json(self) -> dict[str, Any]:
        return {"sizes": self.sizes, "weight": self.weight, "refused": self.refused or None, "verified": self.verified,
                "time_us": self.m.time_us if self.m is not None and self.m.ok else None,
                "error": self.m.error if self.m is not None and not self.m.ok else None}


@dataclass
class ShapesResult:
    best_pipeline: str | None
    weighted_us: float | None
    per_shape: list[ShapeEval]
    baseline_us: float | None
    evaluations: int
    run_id: int
    db: str
    key: str = ""  # the set's source key (`shapes_key`)
    history: list[tuple[str, float | None]] = field(default_factory=list)
    explanation: Any = None  # `explain.Explanation` on the weighted time (`explain=True`)
    main: int = 0  # the heaviest shape: the search's, and the one `-o` writes
    kernel: ir.Kernel | None = None  # the winner at the heaviest shape

    def to_json(self) -> dict[str, Any]:
        d = {"best_pipeline": self.best_pipeline, "weighted_us": self.weighted_us, "baseline_weighted_us": self.baseline_us,
             "shapes": [e.to_json() for e in self.per_shape], "evaluations": self.evaluations, "run_id": self.run_id,
             "db": self.db}
        if self.explanation is not None:
            d["explanation"] = self.explanation.to_json()
        return d


def tune_shapes(kernels: Sequence[ir.Kernel], weights: Sequence[float], target: "Target", *, budget: int = 20,
                strategy: str = "agent", measurer: Measurer | None = None, db: "TuningDB | None" = None,
                seed: int | None = None, allow: tuple[str, ...] = (), jobs: int = 1, executor: str = "local",
                explain: bool = False) -> ShapesResult:
    """Tune one pipeline for `kernels` (one kernel at each shape) weighted by `weights`.
    `jobs`: pipelines evaluated at once (their re-checks in the driver, every shape's
    measurement in a pool, `executors.py`); `explain`: the winner's ablation on the weighted
    time (`ShapesResult.explanation`)."""
    from .db import TuningDB
    from .executors import make_executor, result_of
    from .knobs import KnobSpace
    from .measurers import default_measurer
    from .precision import PRECISION_PASSES, stages_for, uses
    from .space import DEFAULT_STAGES, SearchSpace
    from .strategies import make_strategy
    from .tuner import model_version

    if len(kernels) != len(weights) or not kernels:
        raise ValueError("one weight per shape, at least one shape")
    measurer = measurer or default_measurer()
    db = db or TuningDB()
    mv = model_version(measurer)
    tname = getattr(target, "name", str(target))
    total = float(sum(weights))
    ws = [w / total for w in weights]
    shapes = [(k.size_values(), w) for k, w in zip(kernels, ws)]
    key = shapes_key(kernels[0], shapes, target)
    main = max(range(len(kernels)), key=lambda i: (ws[i], -i))
    spaces = [SearchSpace(k, target, stages_for(allow, DEFAULT_STAGES)) for k in kernels]
    ks = KnobSpace.build(kernels[main], target, allow, space=spaces[main])
    kw: dict[str, Any] = {"knobs": ks} if strategy != "grid" else {}
    strat = make_strategy(strategy, spaces[main], seed, **kw)
    run_id = db.start_run(source=key, model_version=mv, kernel_name=kernels[main].name, sizes=kernels[main].size_values(),
                          target=tname, strategy=f"{strat.name} (shapes)", budget=budget, seed=seed,
                          source_text=print_kernel(kernels[main]))
    strat.decide("shapes", None, shapes=[{"sizes": s, "weight": round(w, 6)} for s, w in shapes], key=key[:16])
    results: dict[str, tuple[float | None, list[ShapeEval]]] = {}
    ex = make_executor(executor, jobs)

    def evaluate_all(pipelines: Sequence[str]) -> None:
        """Evaluate the pipelines not evaluated yet: each re-checked at every shape
        (`_recheck`), then every measurement the DB does not hold, all at once."""
        todo = [p for p in dict.fromkeys(pipelines) if p not in results]
        evs: dict[str, list[ShapeEval]] = {p: [] for p in todo}
        pending: dict[str, list[tuple[int, ShapeEval, Any]]] = {}  # candidate key -> (shape, eval, candidate)
        for p in todo:
            for i in range(len(kernels)):
                ev, c = _recheck(spaces[i], shapes[i], p, i == main, allow, seed)
                evs[p].append(ev)
                if ev.refused:
                    break
                hit = db.lookup(c.key, mv)
                if hit is not None:
                    ev.m = hit
                else:
                    pending.setdefault(c.key, []).append((i, ev, c))
        futures = {k: ex.submit(measurer, waits[0][2].kernel, target) for k, waits in pending.items()}
        for k, f in futures.items():
            m = result_of(f)
            i, _, c = pending[k][0]
            sp = spaces[i]
            db.record(source=_source(sp, target), candidate=c.key, model_version=mv, kernel_name=sp.kernel.name,
                      sizes=sp.kernel.size_values(), target=tname, pipeline=c.pipeline, m=m, run_id=None, measured=True)
            for _, ev, _ in pending[k]:
                ev.m = m
        for p in todo:
            results[p] = _weighted(evs[p], len(kernels))
            wt, bad = results[p][0], next((e for e in evs[p] if e.refused or e.m is None or not e.m.ok), None)
            at = ",".join(f"{k}={v}" for k, v in sorted(bad.sizes.items())) if bad else ""
            m = Measurement(wt, None, "", {}, 0.0, True, None, 0.0, measurer.name) if wt is not None else \
                Measurement.failure(f"at {at}: {bad.refused or (bad.m.error if bad.m else 'not measured')}",
                                    backend=measurer.name)
            db.record(source=key, candidate=hashlib.sha256(f"{key}:{p}".encode()).hexdigest(), model_version=mv,
                      kernel_name=kernels[main].name, sizes=kernels[main].size_values(), target=tname, pipeline=p,
                      m=m, run_id=run_id, measured=True)

    forbidden = tuple(n for n in PRECISION_PASSES if n not in allow)
    try:
        evaluate_all([""])
        base = results[""]
        strat.observe(spaces[main].reach(spaces[main].root()), _as_m(base[0], measurer.name))
        while len(results) < budget:
            batch: list[Any] = []
            while len(results) + len(batch) < budget and len(batch) < max(1, jobs):
                c = strat.propose({b.key for b in batch})
                if c is None:
                    break
                if uses(c.passes, forbidden):
                    strat.observe(c, Measurement.failure("precision pass not allowed"))
                    continue
                batch.append(c)
            if not batch:
                break
            evaluate_all([c.pipeline for c in batch])
            for c in batch:
                strat.observe(c, _as_m(results[c.pipeline][0], measurer.name))
        ok = [(p, r) for p, r in results.items() if r[0] is not None]
        best = min(ok, key=lambda pr: pr[1][0] or math.inf) if ok else None
        searched = dict(results)  # the ablations below are evaluated (and stored) too, outside the budget
        expl = _explain(best[0], best[1], results, spaces, evaluate_all) if explain and best is not None else None
    finally:
        ex.close()
    db.decisions_add(run_id, [(0, k, p, d) for k, p, d in strat.decisions])
    db.finish_run(run_id, best_pipeline=best[0] if best else None, best_time_us=best[1][0] if best else None,
                  baseline_us=base[0], documented_pipeline=None, documented_us=None, evaluations_new=len(searched))
    out = ShapesResult(best[0] if best else None, best[1][0] if best else None, best[1][1] if best else [], base[0],
                       len(searched), run_id, str(db.path), key, [(p, r[0]) for p, r in searched.items()])
    out.explanation = expl
    out.main = main
    out.kernel = (spaces[main].apply_all([best[0]] if best and best[0] else [], strict=False)[0]
                  if best is not None else None)
    return out


def _recheck(sp: Any, shape: Shape, pipeline: str, is_main: bool, allow: tuple[str, ...],
             seed: int | None) -> tuple[ShapeEval, Any]:
    """`pipeline` at one shape before any measurement: applied through the mask (legality,
    the capacity proof), then checked against the interpreter (at the tolerance of an
    allowed precision pass); (the evaluation so far, the candidate to measure or None)."""
    from .carry import _verify
    from .precision import check, uses

    ev = ShapeEval(shape[0], shape[1])
    kernel, done, refused = sp.apply_all([pipeline] if pipeline else [], strict=False)
    if refused is not None:
        ev.refused = f"`{refused.text}`: {refused.reason}"
        return ev, None
    if uses(tuple(done), allow):
        chk = check(sp.kernel, kernel, seed)
        ev.verified = chk.ok
        if not chk.ok:
            ev.refused = f"precision: {chk.detail}"
            return ev, None
    elif not is_main or pipeline:
        ev.verified = _verify(sp.kernel, kernel, seed)
        if ev.verified is False:
            ev.refused = "its result differs from the interpreter's at these sizes"
            return ev, None
    return ev, sp.add(kernel, tuple(done))


def _weighted(evs: list[ShapeEval], n: int) -> tuple[float | None, list[ShapeEval]]:
    """sum(weight x time) when the pipeline was measured at all n shapes, else None."""
    ok = len(evs) == n and all(e.m is not None and e.m.ok and e.m.time_us for e in evs)
    return (sum(e.weight * (e.m.time_us or 0.0) for e in evs if e.m is not None) if ok else None), evs


def _explain(best: str, got: tuple[float | None, list[ShapeEval]], results: dict[str, tuple[float | None, list[ShapeEval]]],
             spaces: Sequence[Any], evaluate_all: Any) -> Any:
    """`--explain` for a set: each pass of the winner dropped in turn and the set evaluated
    again (weighted time), a pass whose removal makes a later one refuse or do nothing at
    some shape is "needed"; the bound at each shape; the top alternatives (weighted)."""
    from passes.base import parse_pipeline

    from .explain import Ablation, Explanation, _without

    wt = got[0] or math.nan
    bounds = [e.m.bound if e.m is not None else "" for e in got[1]]
    base_b = [e.m.bound if e.m is not None else "" for e in results[""][1]]
    ex = Explanation(best, got[0], "/".join(base_b), "/".join(bounds))
    passes = tuple(p.to_text() for p in parse_pipeline(best)) if best else ()
    for i, text in enumerate(passes):
        rest = passes[:i] + passes[i + 1:]
        why = next((f"{w} at {','.join(f'{k}={v}' for k, v in sorted(sp.kernel.size_values().items()))}"
                    for sp in spaces for c, w in [_without(sp, rest)] if c is None), None)
        if why is not None:
            ex.ablations.append(Ablation(text, ",".join(rest), None, None, f"needed: without it {why}"))
            continue
        evaluate_all([",".join(rest)])
        t, evs = results[",".join(rest)]
        if t is None:
            bad = next((e.refused or (e.m.error if e.m else "") for e in evs if e.refused or not (e.m and e.m.ok)), "")
            ex.ablations.append(Ablation(text, ",".join(rest), None, None, f"without it the set fails: {bad}"))
        else:
            ex.ablations.append(Ablation(text, ",".join(rest), t, t / wt))
    ranked = sorted(((p, r[0]) for p, r in results.items() if r[0] is not None and p != best), key=lambda pr: pr[1])
    ex.top = [(p, t) for p, t in ranked[:5] if t is not None]
    return ex


def _source(space: Any, target: "Target") -> str:
    from .space import kernel_key

    return kernel_key(space.kernel, target)


def _as_m(weighted: float | None, backend: str) -> Measurement:
    return Measurement(weighted, None, "", {}, 0.0, True, None, 0.0, backend) if weighted is not None else \
        Measurement.failure("refused, wrong or failed at one of the shapes", backend=backend)
