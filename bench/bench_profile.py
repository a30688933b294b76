"""Benchmark: the cost of measuring with the timing model (issue 12, item 2).

In one process, on the documented attention pipeline (examples/README.md) at S x D:
  compile      emit + g++ of the kernel (cold: a fresh cache directory)
  plain        the emulator run without the model (ASCX_HAZARDS=off, no parameters)
  profile      the same run with pipe accounting and hazard detection (full arithmetic)
  timing-only  profile without the arithmetic (same cycles: checked here too)
  eval/min     profiles per minute of the pipeline (emit + cached compile + timing-only run)
Ratios are against `plain`, measured in the same run.

    python bench/bench_profile.py [--size S=256] [--size D=64] [--pipeline P] [--repeat N] [--json]

`--pipeline` picks another attention pipeline than the first documented one, e.g. the
FlashAttention mix kernel at the issue's size:

    python bench/bench_profile.py --size S=8192 --size D=128 --pipeline 'round_operand{pv.s=f16},flash_attention'
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transformer.cli_common import load_kernel  # noqa: E402
from transformer.cli_common import transform_kernel  # noqa: E402
from transformer.codegen import compile_emitted, emit_ascendc  # noqa: E402
from transformer.emulator import run_binary  # noqa: E402
from transformer.targets import get_target  # noqa: E402
from transformer.timing.profile import _write_inputs, run_profiled  # noqa: E402


def documented_attention() -> str:
    rows = re.findall(r"^\|\s*`attention\.ir`\s*\|\s*`([^`]+)`", (ROOT / "examples" / "README.md").read_text(), re.M)
    return rows[0]


def timed(f, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pipeline", default=None, help="an attention pipeline (default: the first documented one)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sizes = tuple(a.size) or ("S=256", "D=64")
    target = get_target(None)
    pipeline = a.pipeline or documented_attention()
    src = str(ROOT / "examples" / "attention.ir")

    def emit():  # type: ignore[no-untyped-def]
        k, _ = transform_kernel(src, load_kernel(src, sizes), pipeline, target)
        return emit_ascendc(k, target)

    import os

    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as data:
        os.environ["ASCX_EMU_CACHE"] = cache
        t0 = time.perf_counter()
        em = emit()
        binary = compile_emitted(em)
        compile_s = time.perf_counter() - t0
        _write_inputs(em.plan, Path(data))
        plain_s, _ = timed(lambda: run_binary(binary, [data], env={"ASCX_HAZARDS": "off"}), a.repeat)
        prof_s, full = timed(lambda: run_profiled(binary, target, [data], timing_only=False), a.repeat)
        fast_s, fast = timed(lambda: run_profiled(binary, target, [data], timing_only=True), a.repeat)
        same = full[0]["cycles"] == fast[0]["cycles"]  # type: ignore[index]

        def evaluation():  # type: ignore[no-untyped-def]
            e = emit()
            b = compile_emitted(e)
            return run_profiled(b, target, [data], timing_only=True)

        eval_s, _ = timed(evaluation, a.repeat)
    res = {
        "pipeline": pipeline, "sizes": list(sizes), "compile_s": compile_s, "plain_s": plain_s, "profile_s": prof_s,
        "timing_only_s": fast_s, "profile_vs_plain": prof_s / plain_s, "timing_only_vs_full": fast_s / prof_s,
        "timing_only_vs_plain": fast_s / plain_s, "evals_per_min": 60.0 / eval_s, "same_cycles": same,
        "cycles": fast[0]["cycles"],  # type: ignore[index]
    }
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print(f"attention {' '.join(sizes)} `{pipeline}`: {res['cycles']:,.0f} cycles")
    print(f"  compile (cold)     {compile_s:8.2f} s")
    print(f"  plain run          {plain_s:8.3f} s   1.00x")
    print(f"  profile (full)     {prof_s:8.3f} s   {prof_s / plain_s:5.2f}x plain")
    print(f"  profile (timing)   {fast_s:8.3f} s   {fast_s / plain_s:5.2f}x plain, {fast_s / prof_s:5.2f}x full;"
          f" same cycles: {same}")
    print(f"  evaluations/min    {60.0 / eval_s:8.1f}     (emit + cached compile + timing-only run)")


if __name__ == "__main__":
    main()
