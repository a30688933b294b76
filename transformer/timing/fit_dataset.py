"""Calibration of the timing model on the public-measurement dataset (`ascx calibrate --dataset`).

Why: the dataset (`transformer/timing/dataset.py`) gives published kernel times, and for
four matmul points the msprof busy share of each pipe.  The model is linear per pipe
(busy = sum parameter x feature) and nearly linear per kernel (time = launch +
max(makespan, L2 time, HBM time)), so the parameters follow from least squares in two stages:

1. **Pipes.**  Each published pipe ratio gives a measured busy time (ratio x time) to set
   against the features the emulator counted on the busiest core of the kernel.  When the
   points separate a pipe's parameters (full column rank), they are fitted by non-negative
   least squares on relative errors (`calibrate._solve`).  When they cannot (the published
   kernels repeat one load pattern, so bytes, bursts and instructions grow together), the
   pipe's parameters are scaled by one common factor: the data fix the cost of the pattern,
   not its split, and the report says so.
2. **Totals.**  With the pipes fitted, the kernels are profiled again, and the whole-kernel
   terms are fitted on what is left: `launch` (every kernel), `launch_mix` (MIX_MODE
   kernels) and the HBM cycles per byte (kernels the model finds HBM-bound):
   `measured - on_chip = launch + launch_mix [MIX]` or `measured = launch + launch_mix [MIX]
   + hbm_bytes / hbm_bytes_per_cycle`, where `on_chip = max(makespan, L2 time)`: the L2
   term (its bandwidth is not fitted) bounds a kernel as the profile does, so the launch is
   not charged for an L2-bound kernel's L2 time.

`fit` points train; `check` points are only scored.  Leave-one-out refits stage 2 (and
stage 1 when the point has pipe ratios) without the point and predicts it, scaling its
makespan by the change of its bound pipe's busy cycles (no re-profile per fold).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..targets import Target
from .calibrate import _solve, nnls, spearman
from .dataset import Point
from .params import PIPE_FEATURES

#: Whole-kernel terms fitted in stage 2 -> the fact each sets.
TOTAL_FACTS = {"launch": "timing_launch_cycles", "launch_mix": "timing_launch_mix_cycles",
               "hbm_cycle_per_byte": "hbm_bandwidth_gbps"}


@dataclass(frozen=True)
class Observed:
    """What one profile of a point says (the model's side of the comparison)."""

    cycles: float
    makespan: float
    hbm_cycles: float
    hbm_bytes: float
    launch_cycles: float
    mode: str
    bound: str
    pipes: Mapping[tuple[str, str], tuple[float, Mapping[str, float]]]  # (pipe, kind) -> (busy, features)
    l2_cycles: float = 0.0  # the launch's L2 time (the profile's third bound)

    @property
    def on_chip(self) -> float:
        """The kernel's time before HBM and launch: the cores' makespan or the L2 time."""
        return max(self.makespan, self.l2_cycles)

    @staticmethod
    def of(profile: Any) -> "Observed":
        l = profile.details["launches"][0]
        return Observed(cycles=float(profile.cycles), makespan=float(l["makespan"]), hbm_cycles=float(l["hbm_cycles"]),
                        hbm_bytes=float(l.get("hbm_bytes") or 0.0), launch_cycles=float(l.get("launch_cycles") or 0.0),
                        mode=str(l["mode"]), bound=profile.bound,
                        pipes={(p.pipe, p.core_kind): (p.busy_cycles, dict(p.features)) for p in profile.pipes},
                        l2_cycles=float(l.get("l2_cycles") or 0.0))


@dataclass(frozen=True)
class FittedFact:
    fact: str
    before: float
    after: float
    how: str  # "nnls", "scale x<factor>", "total", "kept"
    points: tuple[str, ...]


@dataclass
class DatasetCalibration:
    target: str
    facts: list[FittedFact] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # the observations the fit used (for leave-one-out): stage-1 profiles under the prior,
    # stage-2 profiles under the fitted pipes, and the targets of both stages
    first: dict[str, Observed] = field(default_factory=dict)
    second: dict[str, Observed] = field(default_factory=dict)
    stage0: Target | None = None
    stage1: Target | None = None

    def values(self) -> dict[str, float]:
        return {f.fact: f.after for f in self.facts if f.how != "kept"}

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"target": self.target, "facts": [asdict(f) for f in self.facts], "notes": list(self.notes)}

    def format(self) -> str:
        lines = [f"calibration of {self.target} on the dataset", "",
                 f"{'fact':<36} {'before':>12} {'after':>12}  how (points)"]
        for f in self.facts:
            lines.append(f"{f.fact:<36} {f.before:12.6g} {f.after:12.6g}  {f.how} ({', '.join(f.points) or '-'})")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _clock(target: Target) -> float:
    return float(target.value("clock_mhz"))


def pipe_rows(points: Iterable[Point], observed: Mapping[str, Observed], target: Target) -> dict[str, list[tuple[str, Mapping[str, float], float]]]:
    """pipe -> [(point id, features, measured busy cycles)] from the published pipe ratios
    (the busiest core of the kind that runs the pipe: AIC for M / MTE1 / FIX, else the
    kind the profile has)."""
    out: dict[str, list[tuple[str, Mapping[str, float], float]]] = {}
    for p in points:
        obs = observed[p.id]
        for pipe, ratio in p.pipe_ratios.items():
            hit = [(k, v) for k, v in obs.pipes.items() if k[0] == pipe]
            if not hit:
                continue
            (_, kind), (_, feats) = max(hit, key=lambda kv: kv[1][0])
            out.setdefault(pipe, []).append((p.id, feats, ratio * p.measured_us * _clock(target)))
    return out


def fit_pipes(rows: Mapping[str, list[tuple[str, Mapping[str, float], float]]], target: Target) -> list[FittedFact]:
    """Stage 1: per pipe, NNLS when the points separate its parameters, else one scale."""
    out: list[FittedFact] = []
    for pipe, samples in rows.items():
        feats = PIPE_FEATURES[pipe]
        live = [f for f in feats if any(s[1].get(f, 0.0) for s in samples)]
        if not live:
            continue
        ids = tuple(s[0] for s in samples)
        prior = {f: float(target.value(feats[f])) for f in live}
        a = np.array([[s[1].get(f, 0.0) / s[2] for f in live] for s in samples])
        rank = int(np.linalg.matrix_rank(a / np.maximum(np.linalg.norm(a, axis=0), 1e-300), tol=1e-6))
        if rank == len(live) and len(samples) > len(live):
            fitted, _ = _solve([({f: s[1].get(f, 0.0) for f in live}, s[2]) for s in samples], live)
            for f in live:
                out.append(FittedFact(feats[f], prior[f], fitted.get(f, prior[f]), "nnls", ids))
            continue
        pred = np.array([sum(prior[f] * s[1].get(f, 0.0) for f in live) / s[2] for s in samples])
        scale = float(pred.sum() / (pred ** 2).sum())
        for f in live:
            out.append(FittedFact(feats[f], prior[f], prior[f] * scale, f"scale x{scale:.3f}", ids))
    return out


def total_row(p: Point, obs: Observed, target: Target) -> tuple[dict[str, float], float]:
    """Stage-2 row of one point: (features of the whole-kernel terms, cycles they explain)."""
    measured = p.measured_us * _clock(target)
    feats = {"launch": 1.0, "launch_mix": 1.0 if obs.mode == "MIX" else 0.0}
    if obs.hbm_cycles > obs.on_chip:
        feats["hbm_cycle_per_byte"] = obs.hbm_bytes
        return feats, measured
    return feats, measured - obs.on_chip


def fit_totals(points: Sequence[Point], observed: Mapping[str, Observed], target: Target) -> list[FittedFact]:
    """Stage 2: launch, launch_mix and HBM cycles per byte by relative NNLS."""
    rows = [total_row(p, observed[p.id], target) for p in points]
    names = [n for n in TOTAL_FACTS if any(r[0].get(n, 0.0) for r in rows)]
    # relative to each point's published time (not to the residual, which may be ~0 or < 0)
    w = np.array([1.0 / (p.measured_us * _clock(target)) for p in points])
    a = np.array([[r[0].get(n, 0.0) for n in names] for r in rows]) * w[:, None]
    b = np.array([r[1] for r in rows]) * w
    fitted: dict[str, float] = {}
    if names:
        scale = np.linalg.norm(a, axis=0)
        x = nnls(a / scale, b) / scale
        fitted = dict(zip(names, map(float, x)))
    clock = _clock(target)
    ids = tuple(p.id for p in points)
    out: list[FittedFact] = []
    for n in names:
        fact = TOTAL_FACTS[n]
        before = float(target.value(fact))
        if n == "hbm_cycle_per_byte":
            if fitted.get(n, 0.0) <= 0:
                continue
            after = clock * 1e6 / fitted[n] / 1e9  # bytes per cycle x clock -> GB/s
            used = tuple(p.id for p, r in zip(points, rows) if r[0].get(n))
            out.append(FittedFact(fact, before, after, "total", used))
        else:
            used = tuple(p.id for p, r in zip(points, rows) if r[0].get(n)) if n == "launch_mix" else ids
            out.append(FittedFact(fact, before, fitted.get(n, 0.0), "total", used))
    return out


def with_facts(target: Target, values: Mapping[str, float], source: str) -> Target:
    """`target` with `values` as calibrated facts (for the second profile and the report)."""
    import dataclasses

    from ..targets._base import Fact

    facts = dict(target.facts)
    for k, v in values.items():
        facts[k] = Fact(float(v), "calibrated", source)
    return dataclasses.replace(target, facts=facts)


def calibrate_dataset(points: Sequence[Point], target: Target, profile: Callable[[Point, Target], Any],
                      *, fixed: Mapping[str, tuple[float, str]] | None = None) -> tuple[DatasetCalibration, Target, dict[str, Observed]]:
    """Fit `target` to the `fit` points: stage 1 on the pipe ratios, stage 2 on the totals.
    `profile(point, target)` runs a point (the dataset's `profile_point`, or a stand-in in
    tests).  `fixed` facts (name -> (value, source)) are set before anything is fitted:
    rates taken from documentation rather than fitted.  Returns the report, the calibrated
    target and the second-stage observations of every point."""
    cal = DatasetCalibration(target.name)
    train = [p for p in points if p.role == "fit"]
    t0 = target
    if fixed:
        t0 = with_facts(target, {k: v for k, (v, _) in fixed.items()}, "documented rate")
        for k, (v, src) in fixed.items():
            cal.facts.append(FittedFact(k, float(target.value(k)), float(v), "fixed: " + src, ()))
    first = {p.id: Observed.of(profile(p, t0)) for p in train if p.pipe_ratios}
    stage1 = fit_pipes(pipe_rows([p for p in train if p.pipe_ratios], first, t0), t0)
    cal.facts += stage1
    t1 = with_facts(t0, {f.fact: f.after for f in stage1}, "ascx calibrate --dataset (pipes)")
    second = {p.id: Observed.of(profile(p, t1)) for p in points}
    stage2 = fit_totals(train, second, t1)
    cal.facts += stage2
    if not any(f.fact == "hbm_bandwidth_gbps" for f in stage2):
        cal.notes.append("no fit point is HBM-bound: the HBM bandwidth is kept")
    cal.notes.append("block dispatch is kept: no point runs more than one wave, so it is not separable from the launch")
    t2 = with_facts(t1, {f.fact: f.after for f in stage2}, "ascx calibrate --dataset (totals)")
    cal.first, cal.second, cal.stage0, cal.stage1 = first, second, t0, t1
    # stage-2 terms do not change a makespan: the final times follow without a re-profile
    final = {pid: _retime(o, t1, t2) for pid, o in second.items()}
    return cal, t2, final


def _retime(o: Observed, before: Target, after: Target) -> Observed:
    """`o` under new whole-kernel terms (launch, launch_mix, HBM bandwidth)."""
    import dataclasses

    from .params import hbm_bytes_per_cycle

    launch = float(after.value("timing_launch_cycles")) + (float(after.value("timing_launch_mix_cycles")) if o.mode == "MIX" else 0.0)
    hbm = o.hbm_bytes / hbm_bytes_per_cycle(after)
    if hbm > o.on_chip:
        bound = "HBM"
    elif o.bound != "HBM":
        bound = o.bound
    else:  # it was HBM-bound and no longer is: the larger of the on-chip bounds
        bound = "L2" if o.l2_cycles > o.makespan else max(o.pipes, key=lambda k: o.pipes[k][0])[0] if o.pipes else "?"
    return dataclasses.replace(o, cycles=launch + max(o.on_chip, hbm), hbm_cycles=hbm, launch_cycles=launch, bound=bound)


def dataset_override_text(cal: DatasetCalibration, dataset: str) -> str:
    """The TOML target override of a dataset calibration: each fact with how it was fitted
    and from which points (loaded with --target-file, the facts become `calibrated`)."""
    from ..targets._override import format_override

    facts = {f.fact: (float(f"{f.after:.6g}"), f"ascx calibrate --dataset {dataset}: {f.how} on {', '.join(f.points) or '-'}")
             for f in cal.facts}
    comment = [f"Written by `ascx calibrate --dataset {dataset}` for {cal.target} (docs/timing.md)."]
    comment += [f"note: {n}" for n in cal.notes]
    return format_override(cal.target, facts, comment="\n".join(comment))


def prior_target(name: str) -> Target:
    """The target `name` before the shipped calibration (`transformer/targets/_calibrated.py`):
    what a calibration starts from, so that it does not fit its own output."""
    from ..targets import get_target
    from ..targets._calibrated import prior

    return prior(get_target(name))


# --------------------------------------------------------------------------------------
# scoring


@dataclass(frozen=True)
class Score:
    point: Point
    model_us: float
    loo_us: float | None

    @property
    def ratio(self) -> float:
        return self.model_us / self.point.measured_us


def summary(scores: Sequence[Score]) -> dict[str, Any]:
    """Median and largest absolute error, the worst ratio, Spearman per family, LOO median."""
    err = [abs(s.ratio - 1) for s in scores]
    worst = max(scores, key=lambda s: max(s.ratio, 1 / s.ratio)) if scores else None
    fams: dict[str, list[Score]] = {}
    for s in scores:
        fams.setdefault(s.point.family, []).append(s)
    rho = {f: spearman([s.model_us for s in v], [s.point.measured_us for s in v]) for f, v in fams.items() if len(v) >= 3}
    loo = [abs(s.loo_us / s.point.measured_us - 1) for s in scores if s.loo_us is not None]
    return {"points": len(scores), "median_abs_error": float(np.median(err)) if err else math.nan,
            "max_abs_error": max(err) if err else math.nan,
            "worst": (worst.point.id, max(worst.ratio, 1 / worst.ratio)) if worst else None,
            "spearman": rho, "loo_median_abs_error": float(np.median(loo)) if loo else math.nan, "loo_points": len(loo)}


def leave_one_out(points: Sequence[Point], first: Mapping[str, Observed], second: Mapping[str, Observed],
                  target_stage0: Target, target_stage1: Target) -> dict[str, float]:
    """point id -> its time (us) under parameters fitted without it (see the module doc)."""
    train = [p for p in points if p.role == "fit"]
    clock = _clock(target_stage0)
    out: dict[str, float] = {}
    for left in train:
        rest = [p for p in train if p.id != left.id]
        t1 = target_stage1
        obs = second[left.id]
        if left.pipe_ratios:
            stage1 = fit_pipes(pipe_rows([p for p in rest if p.pipe_ratios], first, target_stage0), target_stage0)
            t1 = with_facts(target_stage0, {f.fact: f.after for f in stage1}, "loo")
            obs = _rescale(obs, target_stage1, t1)
        stage2 = fit_totals(rest, second, t1)
        t2 = with_facts(t1, {f.fact: f.after for f in stage2}, "loo")
        out[left.id] = _retime(obs, t1, t2).cycles / clock
    return out


def _rescale(o: Observed, fitted: Target, fold: Target) -> Observed:
    """`o`'s makespan scaled by its bound pipe's busy cycles under `fold` vs `fitted`."""
    import dataclasses

    hit = [(k, v) for k, v in o.pipes.items() if k[0] == o.bound]
    if not hit:
        return o
    _, (busy, feats) = max(hit, key=lambda kv: kv[1][0])
    spec = PIPE_FEATURES.get(o.bound, {})

    def cost(t: Target) -> float:
        return sum(float(t.value(spec[f])) * x for f, x in feats.items() if f in spec)

    a, b = cost(fitted), cost(fold)
    return dataclasses.replace(o, makespan=o.makespan * (b / a if a > 0 else 1.0))


__all__ = ["DatasetCalibration", "dataset_override_text", "prior_target", "FittedFact", "Observed", "Score", "calibrate_dataset", "fit_pipes", "fit_totals",
           "leave_one_out", "pipe_rows", "summary", "with_facts"]
