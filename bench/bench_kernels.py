"""Kernel speed against the roofline on the pipe-level timing model (issues 14 and 15).

    python bench/bench_kernels.py [--only NAME] [--write-doc] [--no-check]

Each case is an example under a pipeline at a size. It is profiled with
`transformer.timing.profile.profile_kernel` (timing-only at full size); ratio = kernel time /
roofline bound (the roofline `ascx profile` reports: max of compulsory HBM bytes, cube
fractals over all AIC, vector repeats over all AIV; the model's own rates, so the ratio
measures the schedule, not the parameters). The emitted output is checked against the
interpreter at the case's `small` sizes. `--write-doc` rewrites the generated table of
docs/performance.md between `<!-- bench_kernels:begin -->` and `<!-- bench_kernels:end -->`.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- bench_kernels:begin -->", "<!-- bench_kernels:end -->"


@dataclass(frozen=True)
class Case:
    name: str
    example: str
    sizes: dict[str, int]
    pipeline: str
    goal: float | None
    issue: int
    small: dict[str, int]


CASES: list[Case] = [
    Case("matmul_4096", "matmul", {"M": 4096, "N": 4096, "K": 4096}, "gemm", 1.25, 15, {"M": 40, "N": 72, "K": 100}),
    Case("matmul_3000", "matmul", {"M": 3000, "N": 3000, "K": 3000}, "gemm", 1.25, 15, {"M": 40, "N": 72, "K": 100}),
    Case("attention_4096", "attention", {"S": 4096, "D": 128}, "round_operand{pv.s=f16},flash_attention", 1.8, 15,
         {"S": 256, "D": 64}),
    Case("attention_8192", "attention", {"S": 8192, "D": 128}, "round_operand{pv.s=f16},flash_attention", 1.8, 15,
         {"S": 256, "D": 64}),
]


def _load(example: str, sizes: dict[str, int]):  # type: ignore[no-untyped-def]
    from transformer.parser import parse_file

    return parse_file(str(ROOT / "examples" / f"{example}.ir")).with_sizes(sizes)


def _apply(kernel, pipeline: str):  # type: ignore[no-untyped-def]
    from passes.base import parse_pipeline, run_pipeline

    return run_pipeline(kernel, parse_pipeline(pipeline), None)[0] if pipeline else kernel


def run_case(c: Case, check: bool = True) -> dict[str, object]:
    from transformer.codegen import verify_emitted
    from transformer.timing.profile import profile_kernel

    ok: str = "-"
    if check:
        k = _load(c.example, c.small)
        diffs = verify_emitted(_apply(k, c.pipeline), None, trials=1, seed=int(time.time()), reference=k)
        ok = "ok" if diffs and all(d.ok for d in diffs) else "MISMATCH"
    t0 = time.time()
    r = profile_kernel(_apply(_load(c.example, c.sizes), c.pipeline), "ascend910b2", source_name=f"{c.example}.ir")
    return {"case": c, "cycles": r.cycles, "us": r.time_us, "roofline_us": r.roofline_us, "ratio": r.ratio,
            "bound": r.bound, "hazards": len(r.hazards), "check": ok, "seconds": time.time() - t0}


def table(rows: list[dict[str, object]]) -> str:
    out = ["| case | example | sizes | pipeline | time (us) | roofline (us) | ratio | goal | bound | output check | issue |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c: Case = r["case"]  # type: ignore[assignment]
        sizes = " ".join(f"{k}={v}" for k, v in c.sizes.items())
        goal = "-" if c.goal is None else f"<= {c.goal}"
        met = "" if c.goal is None else (" (met)" if float(r["ratio"]) <= c.goal else " (**missed**)")  # type: ignore[arg-type]
        out.append(f"| {c.name} | {c.example} | {sizes} | `{c.pipeline}` | {float(r['us']):.1f} | "  # type: ignore[arg-type]
                   f"{float(r['roofline_us']):.1f} | {float(r['ratio']):.2f}{met} | {goal} | {r['bound']} | "  # type: ignore[arg-type]
                   f"{r['check']} | #{c.issue} |")
    return "\n".join(out)


def write_doc(text: str) -> None:
    doc = ROOT / "docs" / "performance.md"
    old = doc.read_text() if doc.exists() else "# Performance\n\n" + BEGIN + "\n" + END + "\n"
    if BEGIN not in old or END not in old:
        old = old.rstrip("\n") + "\n\n" + BEGIN + "\n" + END + "\n"
    head, rest = old.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(head + BEGIN + "\n" + text + "\n" + END + tail)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="run only this case (repeatable)")
    ap.add_argument("--write-doc", action="store_true", help="rewrite the table in docs/performance.md")
    ap.add_argument("--no-check", action="store_true", help="skip the output check at small sizes")
    a = ap.parse_args()
    cases = [c for c in CASES if not a.only or c.name in a.only]
    if not cases:
        print(f"no case named {a.only}; cases: {', '.join(c.name for c in CASES)}", file=sys.stderr)
        return 2
    rows = []
    for c in cases:
        r = run_case(c, check=not a.no_check)
        print(f"{c.name}: {float(r['us']):.1f} us, ratio {float(r['ratio']):.2f}, bound {r['bound']}, "  # type: ignore[arg-type]
              f"check {r['check']} ({float(r['seconds']):.0f} s)", flush=True)  # type: ignore[arg-type]
        rows.append(r)
    text = table(rows)
    print(text)
    if a.write_doc:
        write_doc(text)
    return 0 if all(r["check"] in ("ok", "-") and not r["hazards"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
