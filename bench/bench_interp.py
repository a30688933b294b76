"""The reference interpreter against plain numpy on the same computation, in one run.

    python bench/bench_interp.py [--repeat N] [--json] [--quick] [CASE ...]

Cases: `examples/matmul.ir` at 512^3 and 1024^3, `examples/attention.ir` at D=128 and
S = 1024, 2048, 4096. Each case times `transformer.interp.run` (inputs drawn beforehand)
and the same math written directly in numpy (f16 inputs widened to f32, matmuls through
`@`, f16 result), as medians of `--repeat` runs of CPU time (all threads of the process:
numpy's BLAS may use both cores, and so may the interpreter's; CPU time is also what stays
put on a loaded shared machine; wall medians are printed too), checks that the two agree within the output
dtype's tolerance (a fast wrong interpreter cannot look good), and prints the ratio
interpreter / numpy. For each kernel it also prints the growth exponent of the
interpreter's time in the work (log t2/t1 over log w2/w1 between the smallest and the
largest size; 1.0 is linear). Targets (issue 10): <= 5x numpy on matmul 1024^3 and
attention S=4096, D=128; linear in the work.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transformer.interp import compare_outputs, random_inputs, run  # noqa: E402
from transformer.parser import parse_file  # noqa: E402


def numpy_matmul(x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"C": (x["A"].astype(np.float32) @ x["B"].astype(np.float32)).astype(np.float16)}


def numpy_attention(x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    q, k, v = (x[n].astype(np.float32) for n in "QKV")
    s = (q @ k.T) * np.float32(0.125) + x["M"].astype(np.float32)
    s = np.exp(s - s.max(axis=1, keepdims=True))
    sm = s.sum(axis=1, keepdims=True)
    return {"O": ((s @ v) / sm).astype(np.float16)}


# name: (kernel file, sizes, numpy version, work in multiply-adds)
CASES: dict[str, tuple[str, dict[str, int], Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]], int]] = {
    "matmul512": ("examples/matmul.ir", {"M": 512, "N": 512, "K": 512}, numpy_matmul, 512**3),
    "matmul1024": ("examples/matmul.ir", {"M": 1024, "N": 1024, "K": 1024}, numpy_matmul, 1024**3),
    "attention1024": ("examples/attention.ir", {"S": 1024, "D": 128}, numpy_attention, 2 * 1024**2 * 128),
    "attention2048": ("examples/attention.ir", {"S": 2048, "D": 128}, numpy_attention, 2 * 2048**2 * 128),
    "attention4096": ("examples/attention.ir", {"S": 4096, "D": 128}, numpy_attention, 2 * 4096**2 * 128),
}
TARGETS = {"matmul1024": 5.0, "attention4096": 5.0}
QUICK = ("matmul512", "attention1024")


def _median_time(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (CPU seconds of all the process's threads, wall seconds) of `repeat` runs."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return statistics.median(cpu), statistics.median(wall)


def bench(name: str, repeat: int) -> dict[str, object]:
    path, sizes, reference, work = CASES[name]
    kernel = parse_file(str(ROOT / path)).with_sizes(sizes)
    inputs = random_inputs(kernel, np.random.default_rng(0))
    got = run(kernel, inputs)
    diffs = compare_outputs(kernel, reference(inputs), got)
    t_interp, w_interp = _median_time(lambda: run(kernel, inputs), repeat)
    t_numpy, w_numpy = _median_time(lambda: reference(inputs), max(repeat, 3))
    return {"case": name, "sizes": sizes, "work": work, "interp_s": round(t_interp, 4), "numpy_s": round(t_numpy, 4),
            "ratio": round(t_interp / t_numpy, 2), "interp_wall_s": round(w_interp, 4), "numpy_wall_s": round(w_numpy, 4),
            "wall_ratio": round(w_interp / w_numpy, 2), "target": TARGETS.get(name),
            "met": None if name not in TARGETS else t_interp / t_numpy <= TARGETS[name],
            "agrees": all(d.ok for d in diffs), "max_rel_err": max(float(d.max_rel) for d in diffs)}


def growth(rows: list[dict[str, object]]) -> dict[str, float]:
    """Exponent of interpreter time in the work, per kernel, smallest to largest case."""
    out = {}
    for kernel in ("matmul", "attention"):
        rs = sorted((r for r in rows if str(r["case"]).startswith(kernel)), key=lambda r: int(r["work"]))  # type: ignore[call-overload]
        if len(rs) >= 2:
            a, b = rs[0], rs[-1]
            out[kernel] = round(math.log(float(b["interp_s"]) / float(a["interp_s"]))  # type: ignore[arg-type]
                                / math.log(int(b["work"]) / int(a["work"])), 2)  # type: ignore[call-overload]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", metavar="CASE", help=f"cases to run (default all: {', '.join(CASES)})")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case (default 3)")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    a = ap.parse_args()
    names = list(QUICK) if a.quick else (a.cases or list(CASES))
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]}; cases: {', '.join(CASES)}")
    rows = [bench(n, a.repeat) for n in names]
    grow = growth(rows)
    if a.json:
        print(json.dumps({"cases": rows, "growth_exponent": grow}, indent=2))
    else:
        print(f"interpreter vs numpy (CPU-time medians of {a.repeat}; "
              f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')})")
        for r in rows:
            target = f"target <= {r['target']}x {'met' if r['met'] else 'MISSED'}" if r["target"] else ""
            print(f"{r['case']:<14} interp {float(r['interp_s']):8.3f} s  numpy {float(r['numpy_s']):7.3f} s  "  # type: ignore[arg-type]
                  f"{float(r['ratio']):6.2f}x  (wall {float(r['wall_ratio']):6.2f}x)  "  # type: ignore[arg-type]
                  f"agrees={r['agrees']}  {target}")
        for kernel, e in grow.items():
            print(f"growth exponent {kernel}: {e} (time ~ work^{e}; 1.0 is linear)")
    return 0 if all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
