"""Benchmark: `ascx check` on the attention example after its pipeline, in-process.

Times, in one process (issue 4 targets: under 1 s cold, under 100 ms warm):
  import      importing the CLI with the check command (z3 included)
  cold        the first `ascx check` call (empty capacity caches, passes not yet imported)
  warm        later calls (median): parse + pipeline + kernel_buffers + cached check
  resolve     warm, with the capacity result cache cleared before each call (Z3 re-solves)
and, as same-run baselines: `parse` (load the file alone) and `pipeline` (parse + passes,
no capacity check).  Ratios are against `parse`.

    python bench/bench_check.py [--passes PIPELINE] [--repeat N] [--json]

The pipeline defaults to the attention pipeline documented in examples/README.md when it
lists one, else `tile`.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "attention.ir"

t0 = time.perf_counter()
from click.testing import CliRunner  # noqa: E402

from transformer.cli import main  # noqa: E402

IMPORT_MS = (time.perf_counter() - t0) * 1e3


def documented_pipeline() -> str | None:
    readme = ROOT / "examples" / "README.md"
    if not readme.exists():
        return None
    for line in readme.read_text().splitlines():
        if re.search(r"(?<![\w/])attention(\.ir)?(?!\w)", line):
            m = re.search(r"--passes[= ]+['\"]?([^'\"`\s]+)", line)
            if m:
                return m.group(1)
            for c in re.findall(r"`([^`]+)`", line):
                if " " not in c and "--" not in c and c != "attention" and not c.endswith(".ir"):
                    return c
    return None


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    pipeline = a.passes or documented_pipeline() or "tile"
    runner = CliRunner()
    args = ["check", str(EXAMPLE), "--passes", pipeline]

    def check() -> None:
        r = runner.invoke(main, args)
        if r.exit_code != 0:
            raise SystemExit(f"ascx check failed ({r.exit_code}):\n{r.output}{r.stderr}")

    from transformer.capacity import clear_caches

    clear_caches()
    cold = timed(check, 1)[0]
    warm = timed(check, a.repeat)

    def resolve() -> None:
        clear_caches()
        check()

    resolved = timed(resolve, max(3, a.repeat // 4))

    from passes.base import run_pipeline

    from transformer.cli_common import load_kernel

    parse = timed(lambda: load_kernel(str(EXAMPLE)), a.repeat)
    pipe = timed(lambda: run_pipeline(load_kernel(str(EXAMPLE)), pipeline, None), a.repeat)
    med = statistics.median
    fig = {
        "pipeline": pipeline,
        "import_ms": round(IMPORT_MS, 2),
        "check_cold_ms": round(cold, 2),
        "check_warm_ms": round(med(warm), 2),
        "check_resolve_ms": round(med(resolved), 2),
        "baseline_parse_ms": round(med(parse), 2),
        "baseline_pipeline_ms": round(med(pipe), 2),
    }
    fig["warm_over_parse"] = round(fig["check_warm_ms"] / fig["baseline_parse_ms"], 2)
    fig["warm_over_pipeline"] = round(fig["check_warm_ms"] / fig["baseline_pipeline_ms"], 2)
    fig["capacity_share_ms"] = round(fig["check_warm_ms"] - fig["baseline_pipeline_ms"], 2)
    fig["cold_ok"] = cold < 1000
    fig["warm_ok"] = med(warm) < 100
    if a.json:
        print(json.dumps(fig, indent=2))
    else:
        print(f"ascx check examples/attention.ir --passes '{pipeline}' (in-process)")
        print(f"  import CLI (z3 incl.)   {fig['import_ms']:8.2f} ms")
        print(f"  check cold (1st call)   {fig['check_cold_ms']:8.2f} ms   target < 1000 ms "
              f"{'ok' if fig['cold_ok'] else 'MISSED'}")
        print(f"  check warm (median)     {fig['check_warm_ms']:8.2f} ms   target < 100 ms "
              f"{'ok' if fig['warm_ok'] else 'MISSED'}")
        print(f"  check, Z3 re-solving    {fig['check_resolve_ms']:8.2f} ms")
        print(f"  baseline: parse alone   {fig['baseline_parse_ms']:8.2f} ms   "
              f"(warm check = {fig['warm_over_parse']}x parse)")
        print(f"  baseline: parse+passes  {fig['baseline_pipeline_ms']:8.2f} ms   "
              f"(warm check = {fig['warm_over_pipeline']}x; capacity part "
              f"~{fig['capacity_share_ms']} ms)")
    return 0 if fig["cold_ok"] and fig["warm_ok"] else 1


if __name__ == "__main__":
    sys.exit(main_())
