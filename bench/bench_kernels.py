"""Benchmark: emitted kernels against their roofline on the timing model (issues 14, 15).

Each `Case` is an example under a pipeline (by default its documented pipeline in
examples/README.md) at a full size. The bench
  1. profiles the emitted kernel with `transformer.timing.profile.profile_kernel` (timing-only:
     the same cycles as a full run, no arithmetic),
  2. computes ratio = kernel time / roofline bound (the roofline `ascx profile` prints:
     max(compulsory GM bytes / HBM bandwidth, cube work / peak, vector work / peak)),
  3. checks the emitted output against the interpreter at the case's `small` sizes,
and prints one row per case with the profile that explains it (blockDim, bound, busiest
pipes of the critical core). `VERSUS` rows compare an emitted kernel with a hand-written
Ascend C source profiled on the same model (`profile_source`): ratio = emitted / hand-written.

    python bench/bench_kernels.py [--only NAME]... [--write-doc] [--json OUT.json] [--no-small]
    python bench/bench_kernels.py --from-json OUT.json [--write-doc]     # re-render saved rows

`--write-doc` rewrites the generated section of docs/performance.md between
`<!-- bench_kernels:begin -->` and `<!-- bench_kernels:end -->` (the prose around it stays).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import time
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_kernels:begin -->", "<!-- bench_kernels:end -->"
TARGET = "ascend910b2"


def documented(example: str, with_pass: str | None = None) -> str:
    """The first documented pipeline of `example` (examples/README.md), or its first one
    that runs the pass `with_pass` (e.g. the precision option `reciprocal`)."""
    rows = re.findall(rf"^\|\s*`{re.escape(example)}\.ir`\s*\|\s*`([^`]+)`", (ROOT / "examples" / "README.md").read_text(), re.M)
    if with_pass is not None:
        rows = [r for r in rows if with_pass in re.split(r"[,{}]", r)]
    if not rows:
        raise SystemExit(f"no documented pipeline for {example}{' with ' + with_pass if with_pass else ''} "
                         "in examples/README.md")
    return rows[0]


@dataclass(frozen=True)
class Case:
    name: str
    example: str
    sizes: dict[str, int]
    pipeline: str
    goal: float | None
    issue: int
    small: dict[str, int]  # sizes of the output check against the interpreter
    bound: str = "roofline"  # the ratio's denominator: the profile's roofline, "causal" (`causal_bound`) or
    # "unshared" (`unshared_bound`)


@dataclass(frozen=True)
class Versus:
    """An emitted case against a hand-written source at the same size (ratio = emitted /
    hand-written). The source's `main` takes `ELEMENTS BLOCKS`: the case's element count and
    the target's vector core count (one block per core)."""

    name: str
    case: str  # a Case name
    source: str  # path under the repository
    goal: float | None = None
    issue: int = 14


CASES: list[Case] = [
    Case("add f16", "add", {"M": 4096, "N": 4096}, documented("add"), 1.15, 14, {"M": 100, "N": 64}),
    Case("softmax f16", "softmax", {"R": 8192, "C": 8192}, documented("softmax"), 1.3, 14, {"R": 100, "C": 64}),
    Case("layernorm f16", "layernorm", {"N": 8192, "H": 8192}, documented("layernorm"), 1.3, 14, {"N": 100, "H": 64}),
    Case("rmsnorm f16", "rmsnorm", {"N": 8192, "H": 8192}, documented("rmsnorm"), 1.3, 14, {"N": 100, "H": 64}),
    Case("softmax f16 long rows", "softmax", {"R": 256, "C": 65536}, documented("softmax"), 1.5, 14, {"R": 50, "C": 4096}),
    # the documented precision choice: divide by a per-row reciprocal (`reciprocal`, docs/passes.md)
    Case("softmax f16 reciprocal", "softmax", {"R": 8192, "C": 8192}, documented("softmax", "reciprocal"), 1.3, 14,
         {"R": 100, "C": 64}),
    Case("softmax f16 long rows reciprocal", "softmax", {"R": 256, "C": 65536}, documented("softmax", "reciprocal"),
         1.5, 14, {"R": 50, "C": 4096}),
    # the rows of the last wave over the cores shared by 3 cores each (`share_tail`, exact, docs/passes.md)
    Case("softmax f16 long rows share_tail", "softmax", {"R": 256, "C": 65536}, documented("softmax") + ",share_tail",
         1.5, 14, {"R": 50, "C": 4096}, bound="unshared"),
    Case("softmax f16 long rows reciprocal share_tail", "softmax", {"R": 256, "C": 65536},
         documented("softmax", "reciprocal") + ",share_tail", 1.5, 14, {"R": 50, "C": 4096}, bound="unshared"),
    # a row not a multiple of any good tile (4097 = 17 x 241): 16 x 1024 tiles and a tail
    Case("add f16 4096x4097 (tail)", "add", {"M": 4096, "N": 4097}, documented("add"), 1.15, 14, {"M": 100, "N": 1030}),
    # issue 15 (cube): matmul through `gemm`, FlashAttention as one mix kernel
    Case("matmul_4096", "matmul", {"M": 4096, "N": 4096, "K": 4096}, "gemm", 1.25, 15, {"M": 40, "N": 72, "K": 100}),
    Case("matmul_3000", "matmul", {"M": 3000, "N": 3000, "K": 3000}, "gemm", 1.25, 15, {"M": 40, "N": 72, "K": 100}),
    Case("attention_4096", "attention", {"S": 4096, "D": 128}, "round_operand{pv.s=f16},flash_attention", 1.8, 15,
         {"S": 256, "D": 64}),
    Case("attention_8192", "attention", {"S": 8192, "D": 128}, "round_operand{pv.s=f16},flash_attention", 1.8, 15,
         {"S": 256, "D": 64}),
    Case("attention_causal f16 D=128 S=8192", "attention_causal", {"S": 8192, "D": 128},
         "round_operand{pv.s=f16},flash_attention", 2.0, 15, {"S": 384, "D": 64}, bound="causal"),
    # issue 15 item 3: conv2d as an implicit GEMM on the cube (img2col gathered during GM->L1)
    Case("conv2d f16 N=8 C=64 H=W=66 F=128", "conv2d", {"N": 8, "C": 64, "H": 66, "W": 66, "F": 128}, "conv_gemm", 2.0,
         15, {"N": 2, "C": 5, "H": 9, "W": 18, "F": 40}),
    # issue 14 item 1: multi-phase kernels spread over the cores (a cross-block barrier between
    # phases that hand data through GM; conv's image x filter tile loops collapsed into one index)
    Case("conv2d f16 vector (example size)", "conv2d", {"N": 2, "C": 16, "H": 34, "W": 34, "F": 32},
         "layout{X=NHWC},tile,double_buffer", None, 14, {"N": 3, "C": 2, "H": 6, "W": 6, "F": 24}),
    Case("attention mix S=1024 D=64", "attention", {"S": 1024, "D": 64}, "round_operand{pv.s=f16},tile", None, 14,
         {"S": 32, "D": 16}),
    # issue 14 item 2: short rows, several rows per instruction (transformer/lower/rows2d.py: the
    # row statistics as row vectors, WholeReduce* one repeat per row, Brcb row broadcasts)
    Case("softmax f16 short rows", "softmax", {"R": 4096, "C": 64}, documented("softmax"), None, 14, {"R": 100, "C": 64}),
    Case("layernorm f16 short rows", "layernorm", {"N": 4096, "H": 64}, documented("layernorm"), None, 14,
         {"N": 100, "H": 64}),
    Case("rmsnorm f16 short rows", "rmsnorm", {"N": 4096, "H": 64}, documented("rmsnorm"), None, 14, {"N": 100, "H": 64}),
    Case("softmax f16 8192x128", "softmax", {"R": 8192, "C": 128}, documented("softmax"), None, 14, {"R": 100, "C": 128}),
    Case("layernorm f16 8192x128", "layernorm", {"N": 8192, "H": 128}, documented("layernorm"), None, 14,
         {"N": 100, "H": 128}),
    # 171-row tiles: the whole tile's scratch does not fit UB, the rows run in groups of 96
    Case("softmax f16 65536x64 (row groups)", "softmax", {"R": 65536, "C": 64}, documented("softmax"), None, 14,
         {"R": 300, "C": 64}),
]

VERSUS: list[Versus] = [
    Versus("add f16 emitted / hand-written TQue", "add f16", "bench/handwritten/add_tque.cpp", goal=1.0),
]


def _kernel(case: Case, sizes: dict[str, int]) -> tuple[Any, Any]:
    from transformer import api

    k = api.parse(str(ROOT / "examples" / f"{case.example}.ir"), sizes=sizes)
    return k, api.transform(k, case.pipeline, TARGET)


def _size_text(sizes: dict[str, int]) -> str:
    return " x ".join(str(v) for v in sizes.values())


def _profile_row(r: Any) -> dict[str, Any]:
    crit = r.details.get("critical_core") or {}
    busy = {p: round(float(c)) for p, c in sorted((crit.get("busy") or {}).items(), key=lambda x: -x[1]) if c > 0}
    launch = (r.details.get("launches") or [{}])[0]
    return {"cycles": round(r.cycles), "time_us": round(r.time_us, 2), "roofline_us": round(r.roofline_us, 2),
            "ratio": round(r.ratio, 3), "bound": r.bound, "block_dim": launch.get("block_dim"),
            "cores_used": r.cores_used, "hbm_cycles": round(float(launch.get("hbm_cycles") or 0)),
            "makespan": round(float(launch.get("makespan") or 0)), "critical_busy": busy,
            "hazards": len(r.hazards), "scalar_share": round(r.scalar_share, 3)}


def causal_bound(r: Any, kernel: Any, sizes: dict[str, int]) -> dict[str, Any]:
    """The causal bound of causal attention: the profile's roofline counts the work the
    kernel *executed* (GM bytes of Q, K, V, O at HBM bandwidth; the Mmad fractals and vector
    repeats that ran), and the kernel runs every (query tile, key block) pair up to the
    diagonal whole, masked half of the diagonal blocks included. The causal bound keeps the
    compulsory HBM term and scales the cube and vector terms to the S (S + 1) / 2 unmasked
    (query, key) pairs: both are proportional to the pairs a kernel runs (each pair of a
    q x 128 block costs the same fractals and repeats), so the bound is what a kernel that
    computed exactly the unmasked scores would need."""
    from transformer.lower.flash import KV_BLOCK, causal_blocks

    first = kernel.body[0]
    q = int(first.annotation("flash").get("q"))
    S = sizes["S"]
    executed = sum(q * KV_BLOCK * causal_blocks(t, q) for t in range(S // q))
    f = S * (S + 1) / 2 / executed
    rc = r.details["roofline_cycles"]
    cyc = max(rc["hbm"], rc["cube"] * f, rc["vector"] * f)
    us = cyc / r.details["clock_mhz"]
    return {"roofline_us": round(us, 2), "ratio": round(r.time_us / us, 3), "generic_roofline_us": round(r.roofline_us, 2),
            "generic_ratio": round(r.ratio, 3), "unmasked_share_of_executed": round(f, 4)}


def unshared_bound(r: Any, case: Case) -> dict[str, Any]:
    """The roofline of the kernel before `share_tail`: the profile's roofline counts the vector
    repeats the kernel ran, and `share_tail` recomputes the statistics of the shared rows on
    several cores, so the run's roofline grows with that redundant work. The operator needs
    the work of the same pipeline without the pass (profiled here), which is the fair bound."""
    from transformer.timing.profile import profile_kernel

    base = dataclasses.replace(case, pipeline=case.pipeline.replace(",share_tail", ""))
    _, t = _kernel(base, case.sizes)
    b = profile_kernel(t, TARGET, timing_only=True, source_name=f"examples/{case.example}.ir")
    return {"roofline_us": round(b.roofline_us, 2), "ratio": round(r.time_us / b.roofline_us, 3),
            "generic_roofline_us": round(r.roofline_us, 2), "generic_ratio": round(r.ratio, 3),
            "bound_name": "without `share_tail`"}


def run_case(case: Case, small: bool) -> dict[str, Any]:
    from transformer.timing.profile import profile_kernel

    row: dict[str, Any] = {"name": case.name, "example": case.example, "size": _size_text(case.sizes),
                           "pipeline": case.pipeline, "goal": case.goal, "issue": case.issue}
    t0 = time.perf_counter()
    try:
        _, t = _kernel(case, case.sizes)
        r = profile_kernel(t, TARGET, timing_only=True, source_name=f"examples/{case.example}.ir")
        row.update(_profile_row(r))
        if case.bound == "causal":
            row.update(causal_bound(r, t, case.sizes))
        elif case.bound == "unshared":
            row.update(unshared_bound(r, case))
    except Exception as e:  # a case that cannot be emitted or run is a row saying so
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    row["profile_s"] = round(time.perf_counter() - t0, 1)
    if small:
        row["small"] = check_small(case)
    return row


def check_small(case: Case) -> str:
    from transformer.codegen import verify_emitted

    try:
        k, t = _kernel(case, case.small)
        diffs = verify_emitted(t, TARGET, trials=1, reference=k)
    except Exception as e:
        return f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    bad = [d.name for d in diffs if not d.ok]
    return ("mismatch: " + ", ".join(bad)) if bad else "ok"


def run_versus(v: Versus, rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    from transformer.timing.profile import profile_source

    from transformer.targets import get_target

    row: dict[str, Any] = {"name": v.name, "case": v.case, "source": v.source, "goal": v.goal, "issue": v.issue}
    case = next(c for c in CASES if c.name == v.case)
    args = (str(math.prod(case.sizes.values())), str(get_target(TARGET).cores))
    try:
        r = profile_source(ROOT / v.source, TARGET, args=args, timing_only=True)
        row["handwritten"] = _profile_row(r)
        emitted = rows.get(v.case, {})
        if "cycles" in emitted:
            row["ratio"] = round(emitted["cycles"] / r.cycles, 3)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return row


def _verdict(ratio: float | None, goal: float | None) -> str:
    if ratio is None:
        return "n/a"
    if goal is None:
        return ""
    return "met" if ratio <= goal else "**missed**"


def _busy_text(busy: dict[str, int]) -> str:
    return ", ".join(f"{p} {c:,}" for p, c in list(busy.items())[:4])


def table(rows: list[dict[str, Any]], versus: list[dict[str, Any]]) -> str:
    out = ["| kernel | size | pipeline | time (us) | roofline (us) | ratio | goal | | blockDim | bound | critical core busy (cycles) | small check |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['name']} | {r['size']} | `{r['pipeline']}` | | | | {r['goal'] or ''} | error | | | {r['error']} | {r.get('small', '')} |")
            continue
        goal = f"≤ {r['goal']}" if r["goal"] is not None else ""
        roof = f"{r['roofline_us']:,}" + (f" {r.get('bound_name', 'causal bound')} (roofline of the run: "
                                         f"{r['generic_roofline_us']:,})" if "generic_roofline_us" in r else "")
        out.append(f"| {r['name']} | {r['size']} | `{r['pipeline']}` | {r['time_us']:,} | {roof} | {r['ratio']} | {goal} | "
                   f"{_verdict(r['ratio'], r['goal'])} | {r['block_dim']} | {r['bound']} | {_busy_text(r['critical_busy'])} | "
                   f"{r.get('small', '')} |")
    if versus:
        out += ["", "| comparison | emitted (us) | hand-written (us) | ratio | goal | | hand-written blockDim, bound, busy |",
                "|---|---|---|---|---|---|---|"]
        byname = {r["name"]: r for r in rows}
        for v in versus:
            if "error" in v:
                out.append(f"| {v['name']} | | | | | error | {v['error']} |")
                continue
            e, h = byname.get(v["case"], {}), v["handwritten"]
            goal = f"≤ {v['goal']}" if v["goal"] is not None else ""
            out.append(f"| {v['name']} | {e.get('time_us', '')} | {h['time_us']} | {v.get('ratio', '')} | {goal} | "
                       f"{_verdict(v.get('ratio'), v['goal'])} | {h['block_dim']}, {h['bound']}, {_busy_text(h['critical_busy'])} |")
    return "\n".join(out)


def write_doc(text: str, commit: str, *, begin: str = BEGIN, end: str = END, script: str = "bench/bench_kernels.py") -> None:
    """Replace the generated section of docs/performance.md between `begin` and `end`."""
    doc = DOC.read_text()
    if begin not in doc or end not in doc:
        raise SystemExit(f"{DOC}: markers {begin} / {end} not found")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    gen = (f"{begin}\n<!-- generated by `python {script} --write-doc` at {commit}; do not edit -->\n\n"
           f"{text}\n\n{end}")
    DOC.write_text(head + gen + tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="run only cases whose name contains this (repeatable)")
    ap.add_argument("--write-doc", action="store_true", help="rewrite the generated table of docs/performance.md")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--no-small", action="store_true", help="skip the output check at small sizes")
    ap.add_argument("--from-json", help="render the table (and --write-doc) from rows saved by --json, without profiling")
    a = ap.parse_args()
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        text = table(saved["cases"], saved["versus"])
        print(text)
        if a.write_doc:
            write_doc(text, saved.get("commit", "?"))
        return
    cases = [c for c in CASES if not a.only or any(o in c.name for o in a.only)]
    versus = [v for v in VERSUS if not a.only or any(o in v.name or o in v.case for o in a.only)]
    need = {v.case for v in versus} - {c.name for c in cases}
    cases += [c for c in CASES if c.name in need]
    rows = []
    for c in cases:
        print(f"... {c.name} {_size_text(c.sizes)}", file=sys.stderr, flush=True)
        rows.append(run_case(c, not a.no_small))
    byname = {r["name"]: r for r in rows}
    vrows = [run_versus(v, byname) for v in versus]
    text = table(rows, vrows)
    print(text)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if a.json:
        Path(a.json).write_text(json.dumps({"commit": commit, "cases": rows, "versus": vrows}, indent=1))
    if a.write_doc:
        write_doc(text, commit or "?")


if __name__ == "__main__":
    main()
