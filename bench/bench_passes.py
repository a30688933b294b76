"""Benchmark: parse + the attention pipeline, at the kernel's default sizes (S=1024, D=64).

    python bench/bench_passes.py [--repeat N] [--pipeline P]

Reports the best-of-N wall time of (parse examples/attention.ir + run the pipeline) and,
as a baseline measured in the same run, the time of parsing alone, with their ratio. The
pipeline is the attention pipeline documented in examples/README.md when it names one
(a backticked pipeline on a line mentioning attention.ir), else `fuse,multicore{qk}`.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FALLBACK = "fuse,multicore{qk}"


def documented_pipeline() -> str | None:
    readme = ROOT / "examples" / "README.md"
    if not readme.exists():
        return None
    for line in readme.read_text().splitlines():
        if "attention.ir" in line and "causal" not in line:
            m = re.search(r"--passes[ =]['\"]?([^'\"`\s]+)", line) or re.search(r"`([a-z_]+(\{[^`]*\})?(,[^`]+)+)`", line)
            if m:
                return m.group(1)
    return None


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pipeline", default=None)
    args = ap.parse_args()
    from passes import base
    from transformer import deps
    from transformer.parser import parse

    text = (ROOT / "examples" / "attention.ir").read_text()
    pipeline = args.pipeline or documented_pipeline() or FALLBACK
    try:
        base.parse_pipeline(pipeline)
    except Exception as e:  # a documented pipeline that names passes not present yet
        print(f"note: `{pipeline}` is not runnable here ({e}); using `{FALLBACK}`")
        pipeline = FALLBACK
    base.registry()

    def parse_only() -> None:
        parse(text, "attention.ir")

    def parse_and_pipeline() -> None:
        deps.analyze.cache_clear()  # no help from a previous repetition
        k = parse(text, "attention.ir")
        base.run_pipeline(k, pipeline)

    parse_and_pipeline()  # warm imports and grammar
    t_parse = best(parse_only, args.repeat)
    t_total = best(parse_and_pipeline, args.repeat)
    print(f"pipeline: {pipeline}")
    print(f"parse alone:          {t_parse * 1e3:8.1f} ms (baseline)")
    print(f"parse + pipeline:     {t_total * 1e3:8.1f} ms  ({t_total / t_parse:.1f}x parse)")


if __name__ == "__main__":
    main()
