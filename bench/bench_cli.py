"""Start-up cost of `ascx` commands, as ratios to `python -c 'import numpy'` in the same run.

    python bench/bench_cli.py [--repeat N] [--json] [COMMAND ...]

Every command runs as its own process (as a kernel author or CI runs it): `python -m
transformer.cli ARGS` with the interpreter of this run, so the entry-point script adds
nothing. Each is measured `--repeat` times, interleaved with the baseline, and reported
as the median CPU time (user + system of the child: the shared 2-core machine makes wall
time noisy; the wall median is printed too). Targets (issue 10): `--help` and `parse`
<= 1.5x the baseline, `transform` / `check` / `emit` of attention under its documented
pipeline <= 2.5x.

The first, unmeasured run of each command warms the parser cache (the Lark table in the
user cache dir), Python's bytecode cache and the OS file cache, as every run after a user's
first does. Children run with bytecode caching on, as an installed ascx has it (pip
compiles it at install time): `PYTHONDONTWRITEBYTECODE` is dropped from their environment,
since with it every start recompiles ascx's own modules (numpy's are precompiled either
way) and that would be measuring the sandbox, not ascx. `--keep-env` runs them with the
environment as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = "examples/attention.ir"
PIPELINE = "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer"

BASELINE = ["-c", "import numpy"]
COMMANDS: dict[str, tuple[list[str], float]] = {
    # name: (arguments of `ascx`, target ratio to the baseline)
    "help": (["--help"], 1.5),
    "parse": (["parse", ATTENTION], 1.5),
    "transform": (["transform", ATTENTION, "--passes", PIPELINE], 2.5),
    "check": (["check", ATTENTION, "--passes", PIPELINE], 2.5),
    "emit": (["emit", ATTENTION, "--passes", PIPELINE], 2.5),
}


def measure(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one `python ARGS` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"`python {' '.join(args)}` failed (exit {proc.returncode}):\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("commands", nargs="*", choices=[[], *COMMANDS], default=[], metavar="COMMAND",
                    help=f"which commands (default all: {', '.join(COMMANDS)})")
    ap.add_argument("--repeat", type=int, default=9, help="measured runs per command (default 9)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--keep-env", action="store_true",
                    help="run the commands with this environment as it is (default: bytecode caching on)")
    a = ap.parse_args()
    env = None if a.keep_env else {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    names = a.commands or list(COMMANDS)
    runs = {name: ["-m", "transformer.cli", *COMMANDS[name][0]] for name in names}
    for args in [BASELINE, *runs.values()]:
        measure(args, env)  # warm-up: parser cache, bytecode cache, OS file cache
    samples: dict[str, list[tuple[float, float]]] = {"baseline": [], **{n: [] for n in names}}
    for _ in range(a.repeat):  # interleaved, so load changes hit every command alike
        samples["baseline"].append(measure(BASELINE, env))
        for name, args in runs.items():
            samples[name].append(measure(args, env))
    med = {n: (statistics.median(c for c, _ in s), statistics.median(w for _, w in s)) for n, s in samples.items()}
    base_cpu, base_wall = med["baseline"]
    rows = []
    for name in names:
        cpu, wall = med[name]
        target = COMMANDS[name][1]
        rows.append({"command": "ascx " + " ".join(COMMANDS[name][0]), "cpu_s": round(cpu, 4), "wall_s": round(wall, 4),
                     "ratio": round(cpu / base_cpu, 2), "wall_ratio": round(wall / base_wall, 2),
                     "target": target, "met": cpu / base_cpu <= target})
    if a.json:
        print(json.dumps({"baseline": {"command": "python -c 'import numpy'", "cpu_s": round(base_cpu, 4),
                                       "wall_s": round(base_wall, 4)}, "repeat": a.repeat,
                          "bytecode_cache": env is not None or "PYTHONDONTWRITEBYTECODE" not in os.environ,
                          "commands": rows}, indent=2))
        return 0
    print(f"baseline python -c 'import numpy': cpu {base_cpu * 1e3:.0f} ms, wall {base_wall * 1e3:.0f} ms "
          f"(medians of {a.repeat}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"bytecode cache {'as in this environment' if env is None else 'on'})")
    width = max(len(r["command"]) for r in rows)
    for r in rows:
        print(f"{r['command']:<{width}}  cpu {r['cpu_s'] * 1e3:5.0f} ms  {r['ratio']:4.2f}x  "
              f"(wall {r['wall_s'] * 1e3:5.0f} ms {r['wall_ratio']:4.2f}x)  target <= {r['target']}x  "
              f"{'met' if r['met'] else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
