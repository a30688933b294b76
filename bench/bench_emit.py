"""Compile time and run time of emitted Ascend C on the emulator.

    python bench/bench_emit.py [--size S=1024 --size D=64] [--pipeline P] [--json]

Measures, for attention at S=1024, D=64 under its documented pipeline (targets: compile
< 10 s, run < 10 s on 2 cores), for the mix attention (`attention_mix`: QKᵀ and P·V on the
cube; `attention_mix_f32p`: `tile` alone, P·V on the vector cores), for matmul at
512x512x512 under its documented pipeline (cube instructions; `matmul_scalar` is the same
kernel without instruction selection) and for a same-run baseline (the emitted add kernel
under its documented pipeline): the lowering + rendering time, the g++ time (-O1, cache bypassed), and
the kernel's run time on one random input set. Also checks the outputs against the
interpreter, so a fast wrong kernel cannot look good.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from passes.base import parse_pipeline, run_pipeline  # noqa: E402
from transformer.codegen import emit_ascendc, run_compiled  # noqa: E402
from transformer.emulator import cflags  # noqa: E402
from transformer.interp import compare_outputs, random_inputs, run  # noqa: E402
from transformer.parser import parse_file  # noqa: E402

CASES = {
    "attention": ("examples/attention.ir", "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer", {"S": 1024, "D": 64}),
    "attention_mix": ("examples/attention.ir", "round_operand{pv.s=f16},tile", {"S": 1024, "D": 64}),
    "attention_mix_f32p": ("examples/attention.ir", "tile", {"S": 1024, "D": 64}),
    "add": ("examples/add.ir", "tile,double_buffer", {}),
    "matmul": ("examples/matmul.ir", "tile{mm.i=64,mm.j=64,mm.k=64},double_buffer", {"M": 512, "N": 512, "K": 512}),
    "matmul_scalar": ("examples/matmul.ir", "tile{mm.i=64,mm.j=64,mm.k=64},double_buffer", {"M": 512, "N": 512, "K": 512}),
}
SCALAR = {"matmul_scalar"}  # emitted with instruction selection off (`ascx emit --scalar`): the baseline


def bench(name: str, path: str, pipeline: str, sizes: dict[str, int], check: bool) -> dict[str, object]:
    k = parse_file(str(ROOT / path))
    if sizes:
        k = k.with_sizes(sizes)
    t0 = time.perf_counter()
    t = run_pipeline(k, parse_pipeline(pipeline), None)[0] if pipeline else k
    em = emit_ascendc(t, source_name=path, pipeline=pipeline, select=name not in SCALAR)
    t_emit = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="ascx-bench-") as tmp:
        src = Path(tmp) / "kernel.cpp"
        text, _ = em.combined()
        src.write_text(text)
        binary = Path(tmp) / "kernel"
        assert em.plan is not None
        flags = [*cflags(em.plan.scope_bytes), "-O1", "-g0", "-Wall", "-Wextra", "-Werror"]
        t0 = time.perf_counter()
        subprocess.run([os.environ.get("CXX", "g++"), *flags, str(src), "-o", str(binary)], check=True)
        t_compile = time.perf_counter() - t0
        inputs = random_inputs(k, np.random.default_rng(0))
        t0 = time.perf_counter()
        outputs = run_compiled(binary, em.plan, inputs, Path(tmp) / "data", timeout=600)
        t_run = time.perf_counter() - t0
    ok = None
    if check:
        ok = all(d.ok for d in compare_outputs(k, run(k, inputs), outputs))
    return {"case": name, "pipeline": pipeline, "sizes": sizes or k.size_values(), "kind": em.plan.kind,
            "emit_s": round(t_emit, 3), "compile_s": round(t_compile, 2), "run_s": round(t_run, 2),
            "matches_interpreter": ok, "scalar_fallbacks": len(em.warnings),
            "instructions": em.plan.instructions()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=["attention", "attention_mix", "matmul", "add"], help=f"of {sorted(CASES)}")
    ap.add_argument("--no-check", action="store_true", help="skip the interpreter comparison")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [bench(c, *CASES[c], check=not a.no_check) for c in a.cases]
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        print(f"{r['case']:14s} {r['kind']:6s} emit {r['emit_s']:6.2f} s  compile {r['compile_s']:6.2f} s  "
              f"run {r['run_s']:6.2f} s  matches={r['matches_interpreter']}  fallbacks={r['scalar_fallbacks']}  "
              f"({r['pipeline']}, {r['sizes']})")


if __name__ == "__main__":
    main()
