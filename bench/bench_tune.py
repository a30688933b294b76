"""Benchmark: tuning strategies against the exhaustive optimum.

For each problem (5 kernels x 2 shapes) the benchmark enumerates the whole search space
(`BENCH_STAGES`, every candidate legal and proven to fit: asserted), measures every
candidate once with the measurer (stored in the tuning DB, so a rerun measures nothing),
takes the fastest as the ground-truth optimum, then *replays* each strategy against that
table (the model is deterministic, so replay = rerunning the search) at budgets 10, 20 and
50 with >= 20 seeds, and reports the median and 10th percentile of optimum / found (1.0 =
the optimum found). It also reports the measurer's throughput (evaluations per minute on
softmax 1024 x 1024 with a warm compile cache).

    python bench/bench_tune.py [--measure auto|emulator|estimate] [--seeds 20] [--budgets 10,20,50]
                               [--jobs J] [--db PATH] [--only add,softmax] [--json] [--markdown]
    python bench/bench_tune.py --large [--budgets 20,50,200] [--seeds 10] [--reference agent,random] ...

`--large`: the knob spaces (`transformer/tune/knobs.py`, >= 10^4 points) of matmul, attention
with the flash options, conv2d and softmax with the tile lengths of every loop, searched by
`ascx tune` itself (`tune`, fresh DB per run, one shared measurement cache per problem); the
reference is the best time of every run and of the `--reference` strategies at 20x the smallest
budget (exhaustive measurement is out of reach); cells are reference / found.
`--problem softmax:R=64,C=1024` (repeatable; `attention:S=256,D=64:round_operand` adds `--allow`)
replaces the problem list; `--cache FILE` keeps every measurement in a JSON-lines file shared by
all runs and processes (each distinct kernel measured once: what makes emulator measurements
affordable); `--partial FILE` appends each run's result as it finishes, and `--from-partial FILE`
renders the table of whatever finished (`--reference ""` skips the 20x runs). The runs are
deterministic given their measurements, so `--cache-only --points FILE` replays finished runs
without measuring and writes every candidate they measured (pipeline and time, the format of
`bench_costmodel.py --out`: the cost model's held-out correlation on the tuner's own points).

With `--measure estimate` the ground truth is the analytic estimate, which is also the
agent's prior: the agent's numbers are then not evidence of anything (the report says so).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformer.capacity import check_kernel_capacity  # noqa: E402
from transformer.cli_common import load_kernel  # noqa: E402
from transformer.targets import get_target  # noqa: E402
from transformer.tune.db import TuningDB  # noqa: E402
from transformer.tune.estimate import estimate  # noqa: E402
from transformer.tune.executors import make_executor, result_of  # noqa: E402
from transformer.tune.measure import Measurement  # noqa: E402
from transformer.tune.measurers import EstimateMeasurer, default_measurer  # noqa: E402
from transformer.tune.space import SearchSpace, kernel_key  # noqa: E402
from transformer.tune.strategies import Agent, make_strategy  # noqa: E402
from transformer.tune.tuner import model_version, tune  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The tuner's stages (DEFAULT_STAGES) less those that multiply the space beyond what can be
# measured exhaustively on the emulator in one run (about 10 s a candidate on 2 cores):
# - `multicore`: lowering already spreads every kernel over all cores (docs/codegen.md);
#   `multicore` only chooses another split, and triples every space (attention S=512: 484
#   candidates with it, 123 without);
# - `interchange`; and `gemm` except for matmul (on attention's two matmul nests it grows the
#   space from 484 to 732 candidates).
BENCH_STAGES = ("fuse", "online_softmax", "tile", "double_buffer")
STAGES_FOR: dict[str, tuple[str, ...]] = {"matmul": ("fuse", "gemm", "tile", "double_buffer")}


def stages_for(name: str) -> tuple[str, ...]:
    return STAGES_FOR.get(name, BENCH_STAGES)
PROBLEMS: list[tuple[str, dict[str, int]]] = [
    ("add", {"M": 256, "N": 1024}), ("add", {"M": 2048, "N": 512}),
    ("softmax", {"R": 256, "C": 1024}), ("softmax", {"R": 1024, "C": 1024}),
    ("layernorm", {"N": 256, "H": 1024}), ("layernorm", {"N": 1024, "H": 768}),
    ("matmul", {"M": 256, "N": 256, "K": 512}), ("matmul", {"M": 512, "N": 512, "K": 512}),
    ("attention", {"S": 512, "D": 64}), ("attention", {"S": 1024, "D": 64}),
]


@dataclass(frozen=True)
class TableMeasurer:
    """Replays stored measurements (the ground-truth table) by canonical kernel key."""

    table: dict[str, Measurement]
    name: str = "table"
    version: str = "1"

    def measure(self, kernel: Any, target: Any) -> Measurement:
        return self.table[kernel_key(kernel, target)]


def ground_truth(name: str, sizes: dict[str, int], target: Any, measurer: Any, db: TuningDB, jobs: int) \
        -> tuple[SearchSpace, dict[str, Measurement], int]:
    kernel = load_kernel(str(ROOT / "examples" / f"{name}.ir"), tuple(f"{k}={v}" for k, v in sizes.items()))
    space = SearchSpace.build(kernel, target, stages_for(name))
    assert space.complete, f"{name}: space truncated"
    for c in space.candidates:  # never a candidate that breaks capacity (legality: by apply)
        if any(b.kind == "local" for b in c.kernel.buffers):
            assert check_kernel_capacity(c.kernel, target).status == "sat", c.pipeline
    mv = model_version(measurer)
    source = kernel_key(kernel, target)
    table: dict[str, Measurement] = {}
    todo = []
    for c in space.candidates:
        hit = db.lookup(c.key, mv)
        if hit is not None:
            table[c.key] = hit
        else:
            todo.append(c)
    ex = make_executor("local", jobs)
    try:
        futs = {ex.submit(measurer, c.kernel, target): c for c in todo}
        for f in list(futs):
            c = futs[f]
            m = result_of(f)
            db.record(source=source, candidate=c.key, model_version=mv, kernel_name=kernel.name, sizes=sizes,
                      target=target.name, pipeline=c.pipeline, m=m)
            table[c.key] = m
    finally:
        ex.close()
    return space, table, len(todo)


def replay(space: SearchSpace, table: dict[str, Measurement], strategy: str, budget: int, seed: int,
           prior: dict[str, float]) -> tuple[float, set[str]]:
    kw: dict[str, Any] = {}
    strat = Agent(space, seed, prior=lambda c: prior[c.key]) if strategy == "agent" else \
        make_strategy(strategy, space, seed, **kw)
    res = tune(space.kernel, space.target, budget=budget, strategy=strat, measurer=TableMeasurer(table),
               db=TuningDB(":memory:"), seed=seed, space=space)
    keys = {c.key for c, _ in res.history}
    return (res.best_m.time_us if res.best_m else math.inf), keys


def throughput(measurer: Any, target: Any, n: int = 10) -> dict[str, float]:
    """Evaluations per minute on softmax 1024 x 1024 with a warm compile cache: the first
    `n` candidates are measured once (warming the cache), then timed again."""
    kernel = load_kernel(str(ROOT / "examples" / "softmax.ir"), ("R=1024", "C=1024"))
    space = SearchSpace.build(kernel, target, stages_for("softmax"))
    cands = [c for c in space.candidates if c.pipeline][:n]
    for c in cands:
        measurer.measure(c.kernel, target)
    t = time.perf_counter()
    for c in cands:
        measurer.measure(c.kernel, target)
    wall = time.perf_counter() - t
    return {"n": len(cands), "wall_s": wall, "per_minute": len(cands) / wall * 60}


# ---- large spaces (issue 27 item 6): the knob space, a reference from a 20x budget ---------

LARGE_PROBLEMS: list[tuple[str, dict[str, int], tuple[str, ...]]] = [
    ("matmul", {"M": 512, "N": 512, "K": 512}, ()),
    ("attention", {"S": 1024, "D": 64}, ("round_operand",)),  # with the flash options
    ("conv2d", {}, ()),
    ("softmax", {"R": 1024, "C": 1024}, ()),  # tile lengths of every loop
]
REFERENCE_FACTOR = 20
NOT_CACHED = "not in the measurement cache"


@dataclass
class CachedMeasurer:
    """`inner` measured once per canonical kernel (runs on fresh DBs share the results).

    With `path`, the cache is also a JSON-lines file (one line per measured kernel: its key,
    pipeline, time or error, in the format of `bench_costmodel.py --out`), read again on a
    miss and appended to under a lock, so an interrupted benchmark resumes, and several
    benchmark processes (one per problem) share their measurements."""

    inner: Any
    cache: dict[str, Measurement]
    path: str = ""
    only: bool = False  # never measure: a kernel not in the cache fails (replaying finished runs)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def version(self) -> str:
        return str(self.inner.version)

    def _load(self) -> None:
        if self.path and Path(self.path).exists():
            for line in Path(self.path).read_text().splitlines():
                r = json.loads(line)
                if r.get("version") == self.version and not str(r.get("error") or "").startswith("timeout"):
                    self.cache.setdefault(r["key"], Measurement(r["time_us"], bound=r.get("bound", ""),
                                                                error=r["error"], backend=self.name))

    def measure(self, kernel: Any, target: Any) -> Measurement:
        key = kernel_key(kernel, target)
        if key not in self.cache:
            self._load()
        if key not in self.cache and self.only:
            return Measurement.failure(f"{NOT_CACHED} (--cache-only)", backend=self.name)
        if key not in self.cache:
            m = self.inner.measure(kernel, target)
            self.cache[key] = m
            if self.path:
                import fcntl

                row = {"key": key, "version": self.version, "kernel": kernel.name, "sizes": kernel.size_values(),
                       "time_us": m.time_us, "error": m.error, "bound": m.bound, "wall_s": round(m.wall_s, 1)}
                with open(self.path, "a") as f:
                    fcntl.flock(f, fcntl.LOCK_EX)
                    f.write(json.dumps(row) + "\n")
                print(f"    measured {m.time_us if m.ok else m.error} ({m.wall_s:.0f} s)", file=sys.stderr, flush=True)
        return self.cache[key]


def problems(a: Any) -> list[tuple[str, dict[str, int], tuple[str, ...]]]:
    """LARGE_PROBLEMS, or `--problem NAME[:N=V,...][:allow,...]` (repeatable) instead."""
    if not a.problem:
        return LARGE_PROBLEMS
    out = []
    for spec in a.problem:
        name, _, rest = spec.partition(":")
        sz, _, allow = rest.partition(":")
        sizes = {k: int(v) for k, v in (x.split("=") for x in sz.split(",") if x)}
        out.append((name, sizes, tuple(x for x in allow.split(",") if x)))
    return out


def large(a: Any, measurer: Any, target: Any, budgets: list[int], strategies: list[str]) -> list[dict[str, Any]]:
    """found / reference per (problem, strategy, budget) over seeds; the reference is the best
    time of every run plus `reference` strategies at REFERENCE_FACTOR x the smallest budget.
    Runs go seed by seed (every budget and strategy of seed 0 first), and with `--partial`
    each run's result is appended to that JSON-lines file as it finishes, so a benchmark
    stopped early still says what it reached."""
    from transformer.tune.knobs import KnobSpace

    only = set(a.only.split(",")) - {""}
    rows = []
    for name, sizes, allow in problems(a):
        if only and name not in only:
            continue
        kernel = load_kernel(str(ROOT / "examples" / f"{name}.ir"), tuple(f"{k}={v}" for k, v in sizes.items()))
        size = KnobSpace.build(kernel, target, allow).size
        cached = CachedMeasurer(measurer, {}, a.cache, a.cache_only)
        tg = time.perf_counter()
        label = f"{name} " + ",".join(f"{k}={v}" for k, v in sizes.items())

        def run(strategy: str, budget: int, seed: int) -> float:
            t = time.perf_counter()
            res = tune(kernel, target, budget=budget, strategy=strategy, measurer=cached, db=TuningDB(":memory:"),
                       seed=seed, allow=allow)
            us = res.best_m.time_us if res.best_m and res.best_m.time_us else math.inf
            print(f"  {label} {strategy} @{budget} seed {seed}: {us:.3f} us {res.best.pipeline if res.best else None}"
                  f" ({time.perf_counter() - t:.0f} s, {len(cached.cache)} kernels measured)", file=sys.stderr, flush=True)
            if a.points:  # every measured candidate of the run, for bench_costmodel.py (its --out format)
                have = {json.loads(x)["key"] for x in Path(a.points).read_text().splitlines()} \
                    if Path(a.points).exists() else set()
                with open(a.points, "a") as f:
                    for c, m in res.history:
                        if c.key not in have and not (m.error or "").startswith(NOT_CACHED):
                            have.add(c.key)
                            f.write(json.dumps({"key": c.key, "kernel": name, "sizes": sizes, "pipeline": c.pipeline,
                                                "time_us": m.time_us, "error": m.error}) + "\n")
            if a.partial:
                with open(a.partial, "a") as f:
                    f.write(json.dumps({"kernel": name, "sizes": sizes, "allow": list(allow), "strategy": strategy,
                                        "budget": budget, "seed": seed, "time_us": us, "measurer": model_version(cached),
                                        "pipeline": res.best.pipeline if res.best else None,
                                        "kernels_measured": len(cached.cache)}) + "\n")
            return us

        found = {(s, b, seed): run(s, b, seed) for seed in range(a.seeds) for b in budgets for s in strategies
                 if s != "grid" or seed == 0}
        ref_runs = {s: run(s, REFERENCE_FACTOR * budgets[0], 0) for s in a.reference.split(",") if s}
        ref = min([*found.values(), *ref_runs.values()])
        print(f"{label}: knob space {size:.3g} points, reference {ref:.3f} us (best of every run and "
              f"{', '.join(f'{s} @{REFERENCE_FACTOR * budgets[0]}: {t:.3f}' for s, t in ref_runs.items())}), "
              f"{len(cached.cache)} kernels measured, {time.perf_counter() - tg:.0f} s", file=sys.stderr, flush=True)
        rows += summarize(found, ref, name, sizes, f"{size:.2g}", strategies, budgets)
    return rows


def summarize(found: dict[tuple[str, int, int], float], ref: float, name: str, sizes: dict[str, int], size: str,
              strategies: list[str], budgets: list[int]) -> list[dict[str, Any]]:
    """The table rows (median, p10 of reference / found over seeds) of one problem."""
    rows = []
    for s in strategies:
        for b in budgets:
            ratios = [ref / t if t and math.isfinite(t) else 0.0 for (s2, b2, _), t in found.items() if (s2, b2) == (s, b)]
            if not ratios:
                continue
            rows.append({"kernel": name, "sizes": sizes, "candidates": size, "strategy": s, "budget": b,
                         "seeds": len(ratios), "median": statistics.median(ratios), "p10": pct(ratios, 0.10),
                         "optimum_us": ref})
            print(f"  {s:7} @{b:<3} median {rows[-1]['median']:.3f}  p10 {rows[-1]['p10']:.3f}", file=sys.stderr,
                  flush=True)
    return rows


def from_partial(path: str) -> list[dict[str, Any]]:
    """The table rows of a `--partial` file (the reference: the best of its runs per problem)."""
    runs = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows: list[dict[str, Any]] = []
    for prob in dict.fromkeys((r["kernel"], json.dumps(r["sizes"])) for r in runs):
        mine = [r for r in runs if (r["kernel"], json.dumps(r["sizes"])) == prob]
        found = {(r["strategy"], r["budget"], r["seed"]): r["time_us"] for r in mine}
        ref = min(found.values())
        strategies = list(dict.fromkeys(r["strategy"] for r in mine))
        budgets = sorted({r["budget"] for r in mine})
        rows += summarize(found, ref, prob[0], json.loads(prob[1]), "", strategies, budgets)
    return rows


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return math.nan
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", choices=["auto", "emulator", "estimate"], default="auto")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="10,20,50")
    ap.add_argument("--strategies", default="agent,random,grid,tpe")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--db", default=str(ROOT / "bench" / ".bench_tune.sqlite"))
    ap.add_argument("--only", default="")
    ap.add_argument("--target", default="ascend910b2")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--large", action="store_true",
                    help="the knob spaces (>= 10^4 points) of LARGE_PROBLEMS, against a reference found with a 20x budget")
    ap.add_argument("--reference", default="agent,random", help="--large: strategies run at 20x the smallest budget")
    ap.add_argument("--problem", action="append", default=[],
                    help="--large: NAME[:N=V,...][:ALLOW,...] instead of LARGE_PROBLEMS (repeatable)")
    ap.add_argument("--cache", default="", help="--large: JSON-lines measurement cache shared across runs and processes")
    ap.add_argument("--partial", default="", help="--large: append each run's result to this JSON-lines file")
    ap.add_argument("--timeout", type=float, default=0.0, help="the emulator's time limit per run, s (default its own)")
    ap.add_argument("--cache-only", action="store_true", help="--large: measure nothing (replay runs the cache holds)")
    ap.add_argument("--points", default="", help="--large: append every run's measured candidates (pipeline, time) here")
    ap.add_argument("--from-partial", default="", help="the --large table of a --partial file (nothing measured)")
    a = ap.parse_args()
    measurer = EstimateMeasurer() if a.measure == "estimate" else default_measurer()
    if a.measure == "emulator" and measurer.name != "emulator":
        print("the emulator profiler is not available in this build", file=sys.stderr)
        return 2
    if a.timeout and hasattr(measurer, "timeout"):
        import dataclasses

        measurer = dataclasses.replace(measurer, timeout=a.timeout)
    target = get_target(a.target)
    budgets = [int(b) for b in a.budgets.split(",")]
    strategies = a.strategies.split(",")
    if "tpe" in strategies:
        try:
            import optuna  # noqa: F401
        except ImportError:
            print("note: optuna not installed, tpe left out (pip install optuna)", file=sys.stderr)
            strategies.remove("tpe")
    if a.from_partial:
        rows = from_partial(a.from_partial)
        strategies = list(dict.fromkeys(r["strategy"] for r in rows))
        budgets = sorted({r["budget"] for r in rows})
        print(render(rows, budgets, strategies, None).replace("optimum time / found", "reference time / found"))
        return 0
    if a.large:
        t0 = time.perf_counter()
        rows = large(a, measurer, target, budgets, strategies)
        note = ("ground truth = the analytic estimate, which is also the agent's prior: the agent's numbers are not "
                "evidence") if measurer.name == "estimate" else None
        if a.json:
            print(json.dumps({"measurer": model_version(measurer), "rows": rows, "wall_s": time.perf_counter() - t0,
                              "note": note}, indent=2))
        else:
            print(render(rows, budgets, strategies, note).replace("optimum time / found", "reference time / found"))
        return 0
    db = TuningDB(a.db)
    only = set(a.only.split(",")) - {""}
    rows = []
    t0 = time.perf_counter()
    for name, sizes in PROBLEMS:
        if only and name not in only:
            continue
        tg = time.perf_counter()
        space, table, measured = ground_truth(name, sizes, target, measurer, db, a.jobs)
        ok = {k: m.time_us for k, m in table.items() if m.ok and m.time_us}
        opt = min(ok.values())
        prior = {c.key: estimate(c.kernel, target).time_us for c in space.candidates}
        label = f"{name} " + ",".join(f"{k}={v}" for k, v in sizes.items())
        print(f"{label}: {len(space.candidates)} candidates ({len(table) - len(ok)} failed, {measured} measured now, "
              f"{time.perf_counter() - tg:.0f} s), optimum {opt:.3f} us", file=sys.stderr)
        for strategy in strategies:
            for budget in budgets:
                ratios = []
                for seed in range(a.seeds if strategy != "grid" else 1):
                    found, keys = replay(space, table, strategy, budget, seed, prior)
                    assert keys <= set(space.by_key), "a measured candidate outside the masked space"
                    ratios.append(opt / found if found else 0.0)
                rows.append({"kernel": name, "sizes": sizes, "candidates": len(space.candidates),
                             "strategy": strategy, "budget": budget, "seeds": len(ratios),
                             "median": statistics.median(ratios), "p10": pct(ratios, 0.10),
                             "optimum_us": opt})
                print(f"  {strategy:7} @{budget:<3} median {rows[-1]['median']:.3f}  p10 {rows[-1]['p10']:.3f}",
                      file=sys.stderr, flush=True)
    out = {"measurer": model_version(measurer), "stages": BENCH_STAGES, "stages_for": STAGES_FOR, "rows": rows,
           "wall_s": time.perf_counter() - t0}
    if not only or "softmax" in only:
        out["throughput"] = throughput(measurer, target)
        print(f"throughput: {out['throughput']['per_minute']:.1f} evaluations/min "
              f"(softmax 1024x1024, {out['throughput']['n']} candidates, warm compile cache)", file=sys.stderr)
    if measurer.name == "estimate":
        out["note"] = ("ground truth = the analytic estimate, which is also the agent's prior: "
                       "the agent's numbers are not evidence")
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(render(rows, budgets, strategies, out.get("note")))
    return 0


def render(rows: list[dict[str, Any]], budgets: list[int], strategies: list[str], note: str | None) -> str:
    lines = []
    if note:
        lines.append(f"**{note}**\n")
    head = "| kernel | sizes | cands | " + " | ".join(f"{s} @{b}" for b in budgets for s in strategies) + " |"
    lines += [head, "|" + "---|" * (3 + len(budgets) * len(strategies))]
    probs: dict[tuple[str, str], dict[tuple[str, int], dict[str, Any]]] = {}
    for r in rows:
        key = (r["kernel"], ",".join(f"{k}={v}" for k, v in r["sizes"].items()))
        probs.setdefault(key, {})[(r["strategy"], r["budget"])] = r
    for (k, sz), cells in probs.items():
        n = next(iter(cells.values()))["candidates"]
        vals = [f"{cells[(s, b)]['median']:.3f} / {cells[(s, b)]['p10']:.3f}" if (s, b) in cells else "-"
                for b in budgets for s in strategies]
        lines.append(f"| {k} | {sz} | {n} | " + " | ".join(vals) + " |")
    lines.append("\ncells: median / p10 of optimum time / found time over seeds (1.000 = optimum found)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
