"""Validation report of the calibrated timing model against published measurements.

    python bench/bench_calibration.py [--json OUT.json] [--from-json IN.json] [--write-doc]

Runs the calibration of `ascx calibrate --dataset published` from the prior table
(`transformer.timing.fit_dataset`), then reports for every shipped point the model's time,
the published time and their ratio; the median absolute error, the largest, Spearman's rho
per kernel family, leave-one-out errors of the fit points; and the held-out points of
`bench/data/calibration_holdout.toml` (never fitted) under the calibrated parameters.
`--write-doc` replaces the generated section of docs/timing.md.  It profiles the
points two to three times (matmul up to 7680^3, FlashAttention up to S = 32768): about
ten minutes of CPU; `--json` keeps the results so `--from-json --write-doc` can redo the
text without profiling.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer.targets import get_target  # noqa: E402
from transformer.timing.params import MODEL_VERSION, params_text  # noqa: E402
from transformer.timing.result import PipeStats  # noqa: E402
from transformer.timing.dataset import Point, load_dataset, profile_point  # noqa: E402
from transformer.timing.fit_dataset import (  # noqa: E402
    Observed, Score, calibrate_dataset, leave_one_out, prior_target, summary, with_facts)

DOC = ROOT / "docs" / "timing.md"
BEGIN, END = "<!-- calibration-report:begin -->", "<!-- calibration-report:end -->"
HOLDOUT = ROOT / "bench" / "data" / "calibration_holdout.toml"
CACHE = Path.home() / ".cache" / "ascx" / "calibration"
GOALS = {"median_abs_error": 0.15, "max_ratio": 1.5, "spearman": 0.95, "loo_median_abs_error": 0.20}


def measure() -> dict:
    """Calibrate from the prior, score every point; a JSON-able dict."""
    points = load_dataset("published")
    held = load_dataset(HOLDOUT)
    prior = prior_target("ascend910b2")
    t0 = time.time()

    def profile(p: Point, target):  # type: ignore[no-untyped-def]
        """`profile_point`, cached by point and model parameters (a rerun costs nothing)."""
        key = hashlib.sha256(f"{MODEL_VERSION}\n{p.id}\n{p.how()}\n{params_text(target)}".encode()).hexdigest()[:24]
        path = CACHE / f"{key}.json"
        if path.is_file():
            return _cached(json.loads(path.read_text()))
        s = time.time()
        r = profile_point(p, target)
        print(f"  profiled {p.id} in {time.time() - s:.1f} s: {r.time_us:.2f} us", file=sys.stderr, flush=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r.to_json()))
        return r

    cal, fitted, final = calibrate_dataset(points, prior, profile)
    clock = float(prior.value("clock_mhz"))
    loo = leave_one_out(points, cal.first, cal.second, cal.stage0, cal.stage1)
    rows = [{"id": p.id, "family": p.family, "role": p.role, "shape": p.shape, "measured_us": p.measured_us,
             "model_us": final[p.id].cycles / clock, "bound": final[p.id].bound, "loo_us": loo.get(p.id),
             "source": p.cite} for p in points]
    per_cycle = {k: v for k, v in cal.values().items() if k.startswith("timing_")}
    hrows = []
    for p in held:
        t = with_facts(prior_target(p.target), per_cycle, "ascx calibrate --dataset published")
        r = profile(p, t)
        hrows.append({"id": p.id, "family": p.family, "role": p.role, "shape": p.shape, "measured_us": p.measured_us,
                      "model_us": r.time_us, "bound": r.bound, "loo_us": None, "source": p.cite, "target": p.target})
    return {"rows": rows, "holdout": hrows, "facts": cal.to_json()["facts"], "notes": cal.notes,
            "cpu_wall_s": time.time() - t0}


def shipped_mismatch(data: dict) -> dict[str, tuple[float, float]]:
    """fact -> (shipped, fitted) where the shipped ascend910b2 table is not this fit."""
    shipped = get_target("ascend910b2")
    fitted = {f["fact"]: f["after"] for f in data["facts"]}
    return {k: (float(shipped.value(k)), v) for k, v in fitted.items()
            if abs(float(shipped.value(k)) - v) > 1e-5 * max(abs(v), 1e-9)}


def _cached(d: dict) -> SimpleNamespace:
    """The parts of a `ProfileResult` the calibration reads, from its JSON."""
    pipes = tuple(PipeStats(**x) for x in d["pipe_detail"])
    return SimpleNamespace(cycles=d["cycles"], time_us=d["time_us"], bound=d["bound"], pipes=pipes, details=d["details"])


def _scores(rows: list[dict], points: dict[str, Point]) -> list[Score]:
    return [Score(points[r["id"]], r["model_us"], r["loo_us"]) for r in rows]


def report(data: dict) -> str:
    """The markdown of the generated section."""
    points = {p.id: p for p in load_dataset("published") + load_dataset(HOLDOUT)}
    sc = _scores(data["rows"], points)
    s = summary(sc)
    out = ["Generated by `python bench/bench_calibration.py --write-doc` (do not edit by hand).", "",
           "| point | family | role | shape | published (us) | model (us) | model / published | bound | leave-one-out (us) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        loo = f"{r['loo_us']:.1f} ({r['loo_us'] / r['measured_us']:.2f}x)" if r["loo_us"] is not None else "-"
        out.append(f"| {r['id']} | {r['family']} | {r['role']} | {r['shape']} | {r['measured_us']:.2f} | {r['model_us']:.2f} | "
                   f"{r['model_us'] / r['measured_us']:.2f} | {r['bound']} | {loo} |")
    rho = ", ".join(f"{f} {v:.3f}" for f, v in s["spearman"].items())
    worst_id, worst = s["worst"]
    ok = lambda b: "met" if b else "**missed**"  # noqa: E731
    out += ["", "| acceptance | target | measured | status |", "|---|---|---|---|",
            f"| median absolute error, shipped points | <= 15 % | {s['median_abs_error']:.1%} | {ok(s['median_abs_error'] <= GOALS['median_abs_error'])} |",
            f"| largest error (as a ratio) | <= 1.5x | {worst:.2f}x ({worst_id}); largest absolute error {s['max_abs_error']:.1%} | {ok(worst <= GOALS['max_ratio'])} |",
            f"| Spearman per family (>= 3 points) | >= 0.95 | {rho} | {ok(all(v >= GOALS['spearman'] for v in s['spearman'].values()))} |",
            f"| leave-one-out median error ({s['loo_points']} fit points) | <= 20 % | {s['loo_median_abs_error']:.1%} | "
            f"{ok(s['loo_median_abs_error'] <= GOALS['loo_median_abs_error'])} |"]
    if data["holdout"]:
        out += ["", "Held-out points (`bench/data/calibration_holdout.toml`, never fitted; their own target, the fitted "
                "per-cycle parameters):", "",
                "| point | target | shape | published (us) | model (us) | model / published | bound |", "|---|---|---|---|---|---|---|"]
        for r in data["holdout"]:
            out.append(f"| {r['id']} | {r['target']} | {r['shape']} | {r['measured_us']:.2f} | {r['model_us']:.2f} | "
                       f"{r['model_us'] / r['measured_us']:.2f} | {r['bound']} |")
    out += ["", "Fitted facts (before -> after; how; from which points):", ""]
    out += [f"* `{f['fact']}`: {f['before']:.6g} -> {f['after']:.6g} ({f['how']}; {', '.join(f['points']) or '-'})" for f in data["facts"]]
    out += [f"* note: {n}" for n in data["notes"]]
    mismatch = shipped_mismatch(data)
    if mismatch:
        out += ["", "**The shipped table differs from this fit:** " + ", ".join(
            f"`{k}` {a:.6g} shipped vs {b:.6g} fitted" for k, (a, b) in mismatch.items())]
    else:
        out += ["", "The shipped ascend910b2 table (`transformer/targets/_calibrated.py`) holds exactly these values."]
    out.append(f"\nOne run: {data['cpu_wall_s'] / 60:.1f} min wall on the shared 2-core machine.")
    return "\n".join(out)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    DOC.write_text(doc[:a] + "\n" + text + "\n" + doc[b:])


TABLE = ROOT / "transformer" / "targets" / "_calibrated.py"
TABLE_BEGIN, TABLE_END = "# --- generated by bench/bench_calibration.py --write-table: begin", "# --- generated: end"


def write_table(data: dict) -> None:
    """Adopt the fit: the fitted facts into `transformer/targets/_calibrated.py` (per-cycle
    facts for every A2 variant, the HBM bandwidth for the 910B2)."""
    a2, b2 = [], []
    for f in data["facts"]:
        src = f"ascx calibrate --dataset published: {f['how']} on {', '.join(f['points']) or '-'} (docs/timing.md)"
        value = float(format(f["after"], ".6g"))
        line = f"    {f['fact']!r}: ({value!r}, {src!r}),"
        (a2 if f["fact"].startswith("timing_") else b2).append(line)
    text = TABLE.read_text()
    i, j = text.index(TABLE_BEGIN), text.index(TABLE_END)
    body = ["A2_TIMING: dict[str, tuple[float, str]] = {", *a2, "}", "",
            "VARIANT: dict[str, dict[str, tuple[float, str]]] = {\"ascend910b2\": {", *b2, "}}"]
    TABLE.write_text(text[:i] + TABLE_BEGIN + "\n" + "\n".join(body) + "\n" + text[j:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write the measurements here")
    ap.add_argument("--from-json", help="report these measurements instead of profiling")
    ap.add_argument("--write-doc", action="store_true", help="replace the generated section of docs/timing.md")
    ap.add_argument("--write-table", action="store_true",
                    help="adopt the fit in the shipped table (transformer/targets/_calibrated.py)")
    args = ap.parse_args()
    data = json.loads(Path(args.from_json).read_text()) if args.from_json else measure()
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))
    text = report(data)
    print(text)
    if args.write_table:
        write_table(data)
    if args.write_doc:
        write_doc(text)


if __name__ == "__main__":
    main()
