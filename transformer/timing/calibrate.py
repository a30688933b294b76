"""Calibration: fit the timing model's per-pipe parameters to measured runs.

Why: the model prices each pipe of each core as a linear function of per-pipe *features*
(bytes moved, instructions issued, vector repeats, cube fractals, ...) with parameters that
are facts of the target (`PIPE_FEATURES`: pipe -> feature -> fact).  Many of those facts
are assumed.  Given runs of kernels whose features the emulator counted and whose busy
cycles were measured on a device (msprof PipeUtilization), the parameters can be fitted by
least squares, pipe by pipe, and written as a target override (`--target-file`).

Input: `Sample`s, one per (run, pipe): the features and the measured busy cycles.  A sample
of the pseudo-pipe `TOTAL` carries the run's measured end-to-end cycles and the features
of the whole-kernel costs (e.g. `launches`, `blocks`); the model of a total used here is
`TOTAL features . TOTAL parameters + max over the run's pipes of their busy cycles` (pipes
overlap; the slowest bounds the kernel), so the TOTAL parameters are fitted second, on what
the fitted pipes leave unexplained.

A mapping value `"name"` means the coefficient of the feature is the fact's value (e.g.
cycles per instruction); `"1/name"` means it is the inverse (the fact is a rate such as
bytes per cycle, and cycles = bytes / rate).

Fit: non-negative least squares (Lawson-Hanson, numpy only) on *relative* errors (each
row weighted by 1 / measured), so small and large kernels count alike.  A parameter whose
features are zero in every sample is not identifiable and keeps its value.  The report
gives, per pipe, the mean relative error of the busy cycles before (target as given) and
after the fit, and the Spearman rank correlation of predicted vs measured total time across
kernels (what the tuner relies on: ranking variants).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
from ..targets import Target

TOTAL = "TOTAL"

PipeFeatures = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Sample:
    """One pipe (or the TOTAL) of one measured run."""

    kernel: str
    pipe: str
    measured_cycles: float
    features: Mapping[str, float] = field(default_factory=dict)
    core_kind: str = ""


@dataclass(frozen=True)
class ParamFit:
    fact: str
    inverse: bool  # the coefficient is 1 / fact value
    before: float  # fact value
    after: float  # fact value (== before when not identifiable)
    fitted: bool
    samples: int  # samples in which one of its features is non-zero


@dataclass(frozen=True)
class PipeError:
    pipe: str
    samples: int
    before: float  # mean |predicted - measured| / measured
    after: float


@dataclass(frozen=True)
class CalibrationReport:
    target: str
    params: tuple[ParamFit, ...]
    errors: tuple[PipeError, ...]
    spearman_before: float | None
    spearman_after: float | None
    kernels: int
    notes: tuple[str, ...] = ()

    def values(self) -> dict[str, float]:
        """fact -> fitted value, for the parameters that were fitted."""
        return {p.fact: p.after for p in self.params if p.fitted}

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {"target": self.target, "kernels": self.kernels,
                "params": [asdict(p) for p in self.params], "errors": [asdict(e) for e in self.errors],
                "spearman_before": self.spearman_before, "spearman_after": self.spearman_after,
                "notes": list(self.notes)}

    def format(self) -> str:
        lines = [f"calibration of {self.target} on {self.kernels} kernel(s)", "",
                 f"{'parameter':<40} {'before':>12} {'after':>12}  samples"]
        for p in self.params:
            after = f"{p.after:12.6g}" if p.fitted else f"{'(kept)':>12}"
            lines.append(f"{p.fact:<40} {p.before:12.6g} {after}  {p.samples}")
        lines += ["", f"{'pipe':<8} {'samples':>7} {'error before':>13} {'error after':>12}"]
        for e in self.errors:
            lines.append(f"{e.pipe:<8} {e.samples:>7} {e.before:>12.1%} {e.after:>12.1%}")
        if self.spearman_before is not None:
            lines += ["", f"rank correlation of total time across kernels (Spearman): "
                          f"{self.spearman_before:.3f} before, {self.spearman_after:.3f} after"]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------
# the model as calibration sees it


def _spec(spec: str) -> tuple[str, bool]:
    spec = spec.strip()
    return (spec[2:].strip(), True) if spec.startswith("1/") else (spec, False)


def coefficients(target: Target, pipe_features: PipeFeatures) -> dict[str, float]:
    """fact -> the coefficient the model multiplies its features by (value or 1/value)."""
    out: dict[str, float] = {}
    for feats in pipe_features.values():
        for spec in feats.values():
            name, inv = _spec(spec)
            v = float(target.value(name))
            out[name] = (1.0 / v if v > 0 else math.inf) if inv else v
    return out


def predict_pipe(sample: Sample, coef: Mapping[str, float], pipe_features: PipeFeatures) -> float:
    """Busy cycles the model gives `sample`'s features (TOTAL: only its own terms)."""
    feats = pipe_features.get(sample.pipe, {})
    total = 0.0
    for feat, spec in feats.items():
        x = float(sample.features.get(feat, 0.0))
        if x:
            total += coef[_spec(spec)[0]] * x
    return total


def predict_totals(samples: Iterable[Sample], coef: Mapping[str, float],
                   pipe_features: PipeFeatures) -> dict[str, tuple[float, float]]:
    """kernel -> (predicted, measured) total cycles, for kernels with a TOTAL sample."""
    busiest: dict[str, float] = {}
    totals: dict[str, Sample] = {}
    for s in samples:
        if s.pipe == TOTAL:
            totals[s.kernel] = s
        elif s.pipe in pipe_features:
            busiest[s.kernel] = max(busiest.get(s.kernel, 0.0), predict_pipe(s, coef, pipe_features))
    return {k: (predict_pipe(t, coef, pipe_features) + busiest.get(k, 0.0), t.measured_cycles)
            for k, t in totals.items()}


def spearman(a: Iterable[float], b: Iterable[float]) -> float:
    """Spearman rank correlation (average ranks for ties); nan for fewer than 2 points or
    a constant series."""
    x, y = np.asarray(list(a), float), np.asarray(list(b), float)
    if len(x) < 2:
        return math.nan
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v), dtype=float)
    for value in np.unique(v):  # ties share the average rank
        idx = v == value
        if idx.sum() > 1:
            ranks[idx] = ranks[idx].mean()
    return ranks


def pipe_errors(samples: Iterable[Sample], coef: Mapping[str, float],
                pipe_features: PipeFeatures) -> dict[str, tuple[int, float]]:
    """pipe -> (samples, mean relative error); TOTAL uses the composed total."""
    samples = list(samples)
    acc: dict[str, list[float]] = {}
    for s in samples:
        if s.pipe != TOTAL and s.pipe in pipe_features and s.measured_cycles > 0:
            acc.setdefault(s.pipe, []).append(abs(predict_pipe(s, coef, pipe_features) - s.measured_cycles)
                                              / s.measured_cycles)
    for pred, meas in predict_totals(samples, coef, pipe_features).values():
        if meas > 0:
            acc.setdefault(TOTAL, []).append(abs(pred - meas) / meas)
    return {p: (len(v), float(np.mean(v))) for p, v in acc.items()}


# --------------------------------------------------------------------------------------
# fitting


def nnls(a: np.ndarray, b: np.ndarray, max_iter: int | None = None) -> np.ndarray:
    """x >= 0 minimising ||a x - b||_2 (Lawson and Hanson's active-set method)."""
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    tol = 10 * np.finfo(float).eps * max(m, n) * (np.abs(a).sum(axis=0).max() if a.size else 0.0)
    w = a.T @ (b - a @ x)
    for _ in range(max_iter or 3 * n + 10):
        if passive.all() or w[~passive].max(initial=-np.inf) <= tol:
            break
        j = int(np.argmax(np.where(passive, -np.inf, w)))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > tol).all():
                x = z
                break
            neg = passive & (z <= tol)
            alpha = np.min(x[neg] / np.maximum(x[neg] - z[neg], 1e-300))
            x = x + alpha * (z - x)
            passive &= x > tol
            x[~passive] = 0.0
            if not passive.any():
                break
        w = a.T @ (b - a @ x)
    return x


def _solve(rows: list[tuple[Mapping[str, float], float]], params: list[str]) -> tuple[dict[str, float], dict[str, int]]:
    """Fit `params` to rows (param -> feature sum, target cycles) by relative NNLS."""
    index = {p: i for i, p in enumerate(params)}
    a = np.zeros((len(rows), len(params)))
    b = np.zeros(len(rows))
    for r, (feats, target) in enumerate(rows):
        weight = 1.0 / max(abs(target), 1.0)
        for p, x in feats.items():
            a[r, index[p]] += x * weight
        b[r] = target * weight
    counts = {p: int((a[:, i] != 0).sum()) for p, i in index.items()}
    live = [i for i in range(len(params)) if counts[params[i]] > 0]
    out: dict[str, float] = {}
    if live and len(rows):
        sub = a[:, live]
        scale = np.linalg.norm(sub, axis=0)
        x = nnls(sub / scale, b) / scale
        out = {params[i]: float(v) for i, v in zip(live, x)}
    return out, counts


def _design(sample: Sample, pipe_features: PipeFeatures) -> dict[str, float]:
    feats: dict[str, float] = {}
    for feat, spec in pipe_features.get(sample.pipe, {}).items():
        x = float(sample.features.get(feat, 0.0))
        if x:
            name = _spec(spec)[0]
            feats[name] = feats.get(name, 0.0) + x
    return feats


def calibrate(samples: Iterable[Sample], target: Target, pipe_features: PipeFeatures) -> CalibrationReport:
    """Fit the parameters named in `pipe_features` to `samples`; the target is not changed
    (write `report.values()` as an override with `override_text`)."""
    samples = list(samples)
    notes: list[str] = []
    unknown = sorted({s.pipe for s in samples if s.pipe not in pipe_features and s.pipe != TOTAL})
    if unknown:
        notes.append(f"pipes the model has no parameters for were ignored: {', '.join(unknown)}")
    specs = {_spec(spec)[0]: _spec(spec)[1] for feats in pipe_features.values() for spec in feats.values()}
    before = coefficients(target, pipe_features)
    total_params = [_spec(s)[0] for s in pipe_features.get(TOTAL, {}).values()]
    pipe_params = [p for p in dict.fromkeys(_spec(s)[0] for pipe, f in pipe_features.items() if pipe != TOTAL
                                             for s in f.values())]
    clash = set(total_params) & set(pipe_params)
    if clash:
        notes.append(f"parameters shared by TOTAL and a pipe are fitted with the pipes only: {', '.join(sorted(clash))}")
    pipe_rows = [(_design(s, pipe_features), s.measured_cycles) for s in samples
                 if s.pipe in pipe_features and s.pipe != TOTAL]
    fitted, counts = _solve(pipe_rows, pipe_params)
    after = dict(before)
    after.update(fitted)
    # TOTAL: what the fitted pipes leave of each measured total
    own = [p for p in dict.fromkeys(total_params) if p not in clash]
    if own:
        busiest: dict[str, float] = {}
        for s in samples:
            if s.pipe in pipe_features and s.pipe != TOTAL:
                busiest[s.kernel] = max(busiest.get(s.kernel, 0.0), predict_pipe(s, after, pipe_features))
        rows = []
        for s in samples:
            if s.pipe == TOTAL:
                feats = {p: x for p, x in _design(s, pipe_features).items() if p in own}
                shared = sum(after[p] * x for p, x in _design(s, pipe_features).items() if p not in own)
                rows.append((feats, s.measured_cycles - busiest.get(s.kernel, 0.0) - shared))
        tfit, tcounts = _solve(rows, own)
        after.update(tfit)
        fitted.update(tfit)
        counts.update(tcounts)
    params = []
    for name, inv in specs.items():
        ok = name in fitted and (not inv or fitted[name] > 0)
        value_before = float(target.value(name))
        value_after = (1.0 / fitted[name] if inv else fitted[name]) if ok else value_before
        if name in fitted and not ok:
            notes.append(f"{name}: the fit gives an infinite rate (coefficient 0); kept")
            after[name] = before[name]
        params.append(ParamFit(name, inv, value_before, value_after, ok, counts.get(name, 0)))
    eb, ea = pipe_errors(samples, before, pipe_features), pipe_errors(samples, after, pipe_features)
    order = [p for p in pipe_features if p in eb and p != TOTAL] + ([TOTAL] if TOTAL in eb else [])
    errors = tuple(PipeError(p, eb[p][0], eb[p][1], ea[p][1]) for p in order)
    tb, ta = predict_totals(samples, before, pipe_features), predict_totals(samples, after, pipe_features)
    rb = spearman([v[0] for v in tb.values()], [v[1] for v in tb.values()]) if len(tb) >= 2 else None
    ra = spearman([v[0] for v in ta.values()], [v[1] for v in ta.values()]) if len(ta) >= 2 else None
    kernels = len({s.kernel for s in samples})
    return CalibrationReport(target.name, tuple(params), errors, rb, ra, kernels, tuple(notes))


def override_text(report: CalibrationReport, inputs: Iterable[str] = ()) -> str:
    """The TOML target override (`--target-file`) holding the fitted parameters."""
    from ..targets._override import format_override

    err = {e.pipe: e for e in report.errors}
    facts: dict[str, tuple[int | float | str, str]] = {}
    for p in report.params:
        if p.fitted:
            facts[p.fact] = (float(f"{p.after:.6g}"), f"ascx calibrate, {p.samples} samples")
    files = ", ".join(inputs)
    comment = [f"Written by `ascx calibrate{' ' + files if files else ''}` for {report.target} "
               f"from {report.kernels} kernel(s)."]
    for e in err.values():
        comment.append(f"{e.pipe}: mean error {e.before:.1%} -> {e.after:.1%} over {e.samples} samples")
    if report.spearman_before is not None:
        comment.append(f"Spearman rank correlation of total time: {report.spearman_before:.3f} -> "
                       f"{report.spearman_after:.3f}")
    comment.append("Load with --target-file on any command; see docs/npu.md.")
    return format_override(report.target, facts, comment="\n".join(comment))


# --------------------------------------------------------------------------------------
# the CSV format (emulator features paired with measurements)

FIXED_COLUMNS = ("kernel", "pipe", "core_kind", "measured_cycles", "measured_us")


class CalibrationInputError(ValueError):
    """A calibration CSV that cannot be read: `line`, `col` locate the problem (1-based)."""

    def __init__(self, message: str, line: int, col: int, hint: str | None = None) -> None:
        super().__init__(message)
        self.message, self.line, self.col, self.hint = message, line, col, hint


def read_samples_csv(text: str, clock_mhz: float) -> list[Sample]:
    """Samples from a calibration CSV: a header with `kernel`, `pipe`, `measured_cycles` (or
    `measured_us`, converted at `clock_mhz`), optional `core_kind`, and one column per
    feature (empty = 0).  Lines starting with `#` are comments."""
    lines = text.splitlines()
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
    if not numbered:
        raise CalibrationInputError("no header line", 1, 1, hint="expected kernel,pipe,measured_cycles,<features...>")
    reader = csv.reader(io.StringIO("\n".join(line for _, line in numbered)))
    rows = list(reader)
    header = [h.strip() for h in rows[0]]
    hline = numbered[0][0]
    for need in ("kernel", "pipe"):
        if need not in header:
            raise CalibrationInputError(f"the header has no `{need}` column", hline, 1,
                                        hint="expected kernel,pipe,measured_cycles,<features...>")
    if "measured_cycles" not in header and "measured_us" not in header:
        raise CalibrationInputError("the header has no `measured_cycles` (or `measured_us`) column", hline, 1)
    for i, h in enumerate(header):
        if h in header[:i]:
            raise CalibrationInputError(f"column `{h}` appears twice", hline, _col(lines[hline - 1], i + 1))
    out: list[Sample] = []
    for (lineno, raw), row in zip(numbered[1:], rows[1:]):
        if len(row) != len(header):
            raise CalibrationInputError(f"{len(row)} fields, the header has {len(header)}", lineno, 1)
        rec = dict(zip(header, (c.strip() for c in row)))
        nums: dict[str, float] = {}
        for k, v in rec.items():
            if k in ("kernel", "pipe", "core_kind") or v == "":
                continue
            try:
                x = float(v)
            except ValueError:
                raise CalibrationInputError(f"`{k}`: `{v}` is not a number", lineno,
                                            _col(raw, header.index(k) + 1)) from None
            if not math.isfinite(x) or x < 0:
                raise CalibrationInputError(f"`{k}`: {v} must be a finite number >= 0", lineno,
                                            _col(raw, header.index(k) + 1))
            nums[k] = x
        if not rec["kernel"] or not rec["pipe"]:
            raise CalibrationInputError("`kernel` and `pipe` must not be empty", lineno, 1)
        if "measured_cycles" in nums:
            measured = nums.pop("measured_cycles")
            nums.pop("measured_us", None)
        elif "measured_us" in nums:
            measured = nums.pop("measured_us") * clock_mhz
        else:
            raise CalibrationInputError("no measurement in this row", lineno, 1,
                                        hint="fill measured_cycles or measured_us")
        pipe = rec["pipe"].upper() if rec["pipe"].upper() == TOTAL else rec["pipe"]
        out.append(Sample(rec["kernel"], pipe, measured, nums, rec.get("core_kind", "")))
    return out


def _col(line: str, field_no: int) -> int:
    """1-based column where CSV field `field_no` (1-based) of `line` starts (unquoted CSV)."""
    col = 1
    for _ in range(field_no - 1):
        nxt = line.find(",", col - 1)
        if nxt < 0:
            return col
        col = nxt + 2
    return col


def samples_csv(samples: Iterable[Sample]) -> str:
    """The CSV text of `samples` (the format `read_samples_csv` reads)."""
    samples = list(samples)
    feats = list(dict.fromkeys(f for s in samples for f in s.features))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kernel", "pipe", "core_kind", "measured_cycles", *feats])
    for s in samples:
        w.writerow([s.kernel, s.pipe, s.core_kind, repr(float(s.measured_cycles)),
                    *(repr(float(s.features[f])) if f in s.features else "" for f in feats)])
    return buf.getvalue()


def samples_from_profiles(emulated: Any, measured: Any, total_features: Mapping[str, float] | None = None) -> list[Sample]:
    """Pair an emulator `ProfileResult` (features) with a measured one (busy cycles), pipe
    by pipe and core kind by core kind, plus the TOTAL sample (measured end-to-end cycles)."""
    busy = {(p.pipe, p.core_kind): p.busy_cycles for p in measured.pipes}
    out = [Sample(measured.kernel, p.pipe, busy[(p.pipe, p.core_kind)], dict(p.features), p.core_kind)
           for p in emulated.pipes if (p.pipe, p.core_kind) in busy and p.features]
    tf = dict(total_features if total_features is not None else emulated.details.get("total_features", {"launches": 1.0}))
    out.append(Sample(measured.kernel, TOTAL, float(measured.cycles), tf))
    return out
