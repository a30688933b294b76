"""Benchmark: the learned cost model's rank correlation with a measurer on held-out candidates.

Measures `--n` distinct random points of a kernel's knob space (about 70% with explicit tile
sizes, all staged on chip) with the measurer, appending each to a JSON-lines file (so an
interrupted run resumes), then over `--splits` random train / held-out splits (`--train`
fraction) fits `CostModel` on the training part and reports the Spearman correlation of its
predictions and of the analytic prior with the measured times on the held-out part.

    python bench/bench_costmodel.py [--kernel softmax] [--size R=256 --size C=1024] [--n 40]
                                    [--measure auto|emulator|estimate] [--out PATH] [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transformer.cli_common import load_kernel  # noqa: E402
from transformer.targets import get_target  # noqa: E402
from transformer.tune.costmodel import CostModel, features, spearman  # noqa: E402
from transformer.tune.knobs import KnobSpace  # noqa: E402
from transformer.tune.measurers import EstimateMeasurer, default_measurer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="softmax")
    ap.add_argument("--size", action="append", default=None)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--measure", choices=["auto", "emulator", "estimate"], default="auto")
    ap.add_argument("--out", default=None, help="JSON lines of the measurements (default bench/.costmodel_KERNEL.jsonl)")
    ap.add_argument("--seconds", type=float, default=3600.0, help="stop measuring after this long")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--train", type=float, default=0.6)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    sizes = tuple(a.size or (["R=256", "C=1024"] if a.kernel == "softmax" else []))
    target = get_target("ascend910b2")
    measurer = EstimateMeasurer() if a.measure == "estimate" else default_measurer()
    kernel = load_kernel(str(ROOT / "examples" / f"{a.kernel}.ir"), sizes)
    ks = KnobSpace.build(kernel, target)
    out = Path(a.out or ROOT / "bench" / f".costmodel_{a.kernel}.jsonl")
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    done = {r["pipeline"] for r in rows}
    rng = random.Random(a.seed)
    names = [k.name for k in ks.knobs]
    t0 = time.monotonic()
    with out.open("a") as f:
        while len(rows) < a.n and time.monotonic() - t0 < a.seconds:
            p = list(ks.random_point(rng))
            if "tile" in names and rng.random() < 0.7 and "sizes" in ks.knobs[names.index("tile")].domain:
                p[names.index("tile")] = ks.knobs[names.index("tile")].domain.index("sizes")
            c, _ = ks.realize(tuple(p))
            if c is None or c.pipeline in done or not any(b.kind == "local" for b in c.kernel.buffers):
                continue
            done.add(c.pipeline)
            m = measurer.measure(c.kernel, target)
            rows.append({"pipeline": c.pipeline, "time_us": m.time_us, "error": m.error})
            f.write(json.dumps(rows[-1]) + "\n")
            f.flush()
            print(f"{len(rows):3} {m.time_us if m.ok else m.error}  {c.pipeline}", file=sys.stderr, flush=True)
    ok = [r for r in rows if r["time_us"]]
    X, y = [], []
    for r in ok:
        c = ks.space.candidate_for(r["pipeline"])
        if c is not None:
            X.append(features(c.kernel, target, c.passes))
            y.append(r["time_us"])
    Xa, ya = np.array(X), np.array(y)
    if len(ya) < 8:
        print(f"only {len(ya)} measurements: too few to split", file=sys.stderr)
        return 1
    split = np.random.default_rng(0)
    learned, prior = [], []
    for _ in range(a.splits):
        idx = split.permutation(len(ya))
        n = int(len(ya) * a.train)
        tr, te = idx[:n], idx[n:]
        model = CostModel().fit(Xa[tr], ya[tr])
        learned.append(spearman(model.predict_log(Xa[te]), ya[te]))
        prior.append(spearman(Xa[te, CostModel.PRIOR], ya[te]))
    print(json.dumps({"kernel": a.kernel, "sizes": sizes, "measurer": f"{measurer.name}:{measurer.version}",
                      "measured": len(ya), "time_us": [float(ya.min()), float(ya.max())], "splits": a.splits,
                      "learned": {"median": float(np.median(learned)), "mean": float(np.mean(learned))},
                      "prior": {"median": float(np.median(prior)), "mean": float(np.mean(prior))}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
