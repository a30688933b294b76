"""Benchmark: the operators of issue 28 (examples/) at the sizes models use, against their roofline.

Each `Op` is an example under its documented pipeline (examples/README.md, the first row) at a
realistic size. The bench
  1. emits the kernel and lists its scalar fallbacks (what `ascx emit --explain` lists: a nest
     or copy with no vector / DMA instruction, and why);
  2. profiles it timing-only on the pipe-level model (`profile_kernel`, a per-kernel timeout);
     a kernel with a scalar fallback would take minutes there, so it is profiled at its
     `probe` sizes instead and its time **estimated** by scaling with the work
     (statement executions of the kernel as written, `work`, over the cores each launch uses);
     the row says so;
  3. reports ratio = time / roofline, where the roofline is the profile's (max of compulsory
     GM bytes at HBM bandwidth, cube fractals over every AIC, vector repeats over every AIV, at
     the model's own rates: docs/performance.md) raised to the operator's cube floor for the
     matmul operators (its multiply-adds at the cube's fractal rate: a scalar or vector kernel
     runs no fractals, so the profile alone would not count the cube work it should have done);
  4. the shares `emit --explain` prints for the fallbacks (each at most 100 %: issue 28);
  5. the goals: every ratio <= 3, geometric mean <= 2 (met / missed, with the profile line).

    python bench/bench_ops.py [--only NAME]... [--write-doc] [--json OUT.json] [--timeout S]
    python bench/bench_ops.py --from-json OUT.json [--write-doc]     # re-render saved rows

`--write-doc` rewrites the generated section of docs/performance.md between
`<!-- bench_ops:begin -->` and `<!-- bench_ops:end -->` (the prose around it stays).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_kernels import TARGET, documented, write_doc as _write_doc_between  # noqa: E402

BEGIN, END = "<!-- bench_ops:begin -->", "<!-- bench_ops:end -->"
GOAL_EACH, GOAL_GEOMEAN = 3.0, 2.0


def _mm(m: str, n: str, k: str, *, batch: str | None = None, k_per_fractal: int = 16,
        count: int = 1) -> Callable[[dict[str, int]], float]:
    """Cube fractals of `count` matmuls: ceil(M/16) ceil(N/16) ceil(K/k_per_fractal) (x batch);
    an int8 fractal is 16 x 32 x 16 (design/ascend-facts.md: twice the f16 K per fractal)."""
    def fractals(s: dict[str, int]) -> float:
        b = s[batch] if batch else 1
        return count * b * math.ceil(s[m] / 16) * math.ceil(s[n] / 16) * math.ceil(s[k] / k_per_fractal)
    return fractals


@dataclass(frozen=True)
class Op:
    name: str
    example: str
    sizes: dict[str, int]  # the realistic size
    probe: dict[str, int]  # the size a kernel with a scalar fallback is profiled at (then scaled)
    fractals: Callable[[dict[str, int]], float] | None = None  # the operator's cube work, if a matmul
    note: str = ""
    pipeline: str = field(default="")
    # the compulsory GM bytes when not every element of every tensor is (a gather reads only
    # the rows its indices name: the embedding table's 4096 of 32000 rows)
    gm_bytes: Callable[[dict[str, int]], float] | None = None

    def documented_pipeline(self) -> str:
        return self.pipeline or documented(self.example)


OPS: list[Op] = [
    # issue 28 item 1 (data-dependent indices): examples/embedding.ir, cross_entropy.ir, paged_attention.ir
    Op("embedding", "embedding", {"V": 32000, "H": 4096, "N": 4096}, {"V": 512, "H": 1024, "N": 96},
       gm_bytes=lambda s: s["N"] * s["H"] * 2 * 2 + s["N"] * 4),  # the N gathered rows, the output, the ids
    Op("cross_entropy", "cross_entropy", {"R": 1024, "C": 32000}, {"R": 16, "C": 4096}),
    Op("paged attention", "paged_attention", {"B": 8, "NH": 32, "D": 128, "BS": 16, "MB": 256, "NB": 2048},
       {"B": 2, "NH": 4, "D": 128, "BS": 16, "MB": 8, "NB": 16}),
    Op("rope half-split", "rope", {"S": 1024, "H": 32, "D": 128}, {"S": 8, "H": 4, "D": 128}),
    Op("rope interleaved", "rope_interleaved", {"S": 1024, "H": 32, "D": 128}, {"S": 8, "H": 4, "D": 128}),
    Op("swiglu (gate, up, silu*up)", "swiglu", {"M": 1024, "K": 4096, "F": 11008}, {"M": 64, "K": 256, "F": 256},
       _mm("M", "F", "K", count=2)),
    Op("gelu tanh", "gelu", {"R": 4096, "C": 11008}, {"R": 64, "C": 1024}),
    Op("gelu erf", "gelu_erf", {"R": 4096, "C": 11008}, {"R": 64, "C": 1024}),
    Op("residual add + rmsnorm", "add_rmsnorm", {"N": 4096, "D": 4096}, {"N": 64, "D": 1024}),
    Op("log_softmax", "log_softmax", {"R": 1024, "C": 32000}, {"R": 16, "C": 4096}),
    Op("transpose", "transpose", {"M": 4096, "N": 4096}, {"M": 256, "N": 256}),
    Op("group_norm", "group_norm", {"N": 2, "C": 320, "HH": 64, "WW": 64, "G": 32},
       {"N": 1, "C": 64, "HH": 16, "WW": 16, "G": 8}),
    Op("depthwise conv 3x3 (valid)", "dwconv3x3", {"N": 8, "C": 256, "H": 58, "W": 58},
       {"N": 1, "C": 8, "H": 18, "W": 18}),
    Op("depthwise conv 3x3 (same)", "dwconv3x3_same", {"N": 8, "C": 256, "H": 56, "W": 56},
       {"N": 1, "C": 8, "H": 16, "W": 16}),
    Op("cumsum", "cumsum", {"R": 4096, "C": 4096}, {"R": 64, "C": 1024}),
    Op("max-pool 2x2", "maxpool", {"N": 8, "C": 64, "H": 112, "W": 112}, {"N": 1, "C": 8, "H": 32, "W": 32}),
    Op("argmax", "argmax", {"R": 1024, "C": 32000}, {"R": 16, "C": 4096}),
    Op("bmm", "bmm", {"Bt": 32, "M": 1024, "N": 1024, "K": 128}, {"Bt": 2, "M": 128, "N": 256, "K": 128},
       _mm("M", "N", "K", batch="Bt")),
    Op("decode attention GQA", "decode_attention", {"HQ": 32, "HK": 8, "S": 4096, "D": 128},
       {"HQ": 8, "HK": 2, "S": 256, "D": 128}),
    Op("int8 matmul + dequant", "int8_matmul", {"M": 1024, "N": 4096, "K": 4096}, {"M": 48, "N": 128, "K": 4096},
       _mm("M", "N", "K", k_per_fractal=32)),
]


def work(kernel: Any) -> int:
    """Statement executions of `kernel` (each assignment times the trips of its loops), the
    measure a scalar kernel's time grows with."""
    from transformer import ir
    from transformer.affine import eval_int

    sizes = kernel.size_values()

    def walk(stmts: Any, trips: int, env: dict[str, int]) -> int:
        n = 0
        for s in stmts:
            if isinstance(s, ir.For):
                lo, hi = eval_int(s.lo, {**sizes, **env}), eval_int(s.hi, {**sizes, **env})
                n += walk(s.body, trips * max(0, hi - lo), {**env, s.var: lo})
            elif isinstance(s, (ir.Assign, ir.Copy)):
                n += trips
        return n

    return walk(kernel.body, 1, {})


def _parse(op: Op, sizes: dict[str, int]) -> tuple[Any, Any]:
    from transformer import api

    k = api.parse(str(ROOT / "examples" / f"{op.example}.ir"), sizes=sizes)
    return k, api.transform(k, op.documented_pipeline(), TARGET)


def _busy(r: Any) -> dict[str, int]:
    crit = r.details.get("critical_core") or {}
    return {p: round(float(c)) for p, c in sorted((crit.get("busy") or {}).items(), key=lambda x: -x[1]) if c > 0}


def cube_floor_us(op: Op, sizes: dict[str, int]) -> float:
    """The operator's cube work at the model's fractal rate over every AIC (0 if not a matmul)."""
    from transformer.targets import get_target
    from transformer.timing.params import core_counts, model_parameters

    if op.fractals is None:
        return 0.0
    tgt = get_target(TARGET)
    p = model_parameters(tgt)
    _, aic = core_counts(tgt)
    return op.fractals(sizes) * p["M.fractal"] / aic / p["clock_mhz"]


def _roofline_us(op: Op, r: Any) -> float:
    """The profile's roofline, its HBM term from `op.gm_bytes` where the operator sets it."""
    if op.gm_bytes is None:
        return float(r.roofline_us)
    from transformer.targets import get_target
    from transformer.timing.params import model_parameters

    p = model_parameters(get_target(TARGET))
    rc = r.details["roofline_cycles"]
    return max(op.gm_bytes(op.sizes) / p["hbm_bytes_per_cycle"], rc["cube"], rc["vector"]) / p["clock_mhz"]


def run_op(op: Op, timeout: float) -> dict[str, Any]:
    from transformer.codegen import emit_ascendc
    from transformer.targets import get_target
    from transformer.timing.explain import fallback_costs, price_fallbacks
    from transformer.timing.profile import profile_kernel

    tgt = get_target(TARGET)
    row: dict[str, Any] = {"name": op.name, "example": op.example, "size": " x ".join(map(str, op.sizes.values())),
                           "pipeline": ""}
    t0 = time.perf_counter()
    if not (ROOT / "examples" / f"{op.example}.ir").is_file():
        row["error"] = f"examples/{op.example}.ir is not in this tree yet"
        row["profile_s"] = 0.0
        return row
    row["pipeline"] = op.documented_pipeline()
    try:
        k, t = _parse(op, op.sizes)
        em = emit_ascendc(t, tgt, source_name=f"examples/{op.example}.ir")
        falls = [(n.where, n.fallback) for n in em.plan.nests if n.fallback]
        row["fallbacks"] = [f"{w}: {why}" for w, why in falls]
        row["instructions"] = sorted(set(em.plan.instructions()))
        costs, r = [], None
        if falls:
            # scalar code at this size would run for minutes: profile the probe size, scale by the work
            pk, pt = _parse(op, op.probe)
            pem = emit_ascendc(pt, tgt, source_name=f"examples/{op.example}.ir")
            costs, r = fallback_costs(pem, tgt, timeout=timeout)
            if r is None:  # the probe size has no fallback (it fits a pattern the full size does not)
                row["probe_note"] = "the probe size has no fallback: profiled at the full size"
        if r is not None:
            # the work grows by `scale`; spread over the cores the full kernel launches
            # (the probe may launch fewer: fewer rows than cores)
            probe_blocks = (r.details.get("launches") or [{}])[0].get("block_dim") or 1
            scale = work(k) / work(pk) * min(probe_blocks, em.plan.block_dim) / em.plan.block_dim
            row["estimated_from"] = " x ".join(map(str, op.probe.values()))
            row["scale"] = round(scale, 1)
            row["probe_block_dim"] = probe_blocks
            row["shares"] = [round(c.share, 4) for c in costs]
            cycles = r.cycles * scale
            # the roofline at the real size: the compulsory HBM bytes (the plan's GM tensors) and the
            # cube floor (the probe's vector repeats are scalar code's, not the operator's)
            from transformer.timing.params import model_parameters

            p = model_parameters(tgt)
            gm = (op.gm_bytes(op.sizes) if op.gm_bytes else
                  float(sum(prm.nbytes for prm in em.plan.params if prm.role != "workspace")))
            roof_us = max(gm / p["hbm_bytes_per_cycle"] / p["clock_mhz"], cube_floor_us(op, op.sizes))
            time_us = cycles / p["clock_mhz"]
            row.update(cycles=round(cycles), time_us=round(time_us, 2), roofline_us=round(roof_us, 2),
                       ratio=round(time_us / roof_us, 3), bound=r.bound, block_dim=em.plan.block_dim,
                       critical_busy=_busy(r), hazards=len(r.hazards))
        else:
            r = profile_kernel(t, tgt, timing_only=True, emitted=em, timeout=timeout)
            if falls:
                row["shares"] = [round(c.share, 4) for c in price_fallbacks(
                    [n for n in em.plan.nests if n.fallback], r, em.combined()[1])]
            roof_us = max(_roofline_us(op, r), cube_floor_us(op, op.sizes))
            row.update(cycles=round(r.cycles), time_us=round(r.time_us, 2), roofline_us=round(roof_us, 2),
                       profile_roofline_us=round(r.roofline_us, 2), ratio=round(r.time_us / roof_us, 3), bound=r.bound,
                       block_dim=(r.details.get("launches") or [{}])[0].get("block_dim"), critical_busy=_busy(r),
                       hazards=len(r.hazards))
    except Exception as e:  # a kernel that cannot be emitted or profiled is a row saying so
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    row["profile_s"] = round(time.perf_counter() - t0, 1)
    return row


def _verdict(ratio: float | None) -> str:
    return "n/a" if ratio is None else ("met" if ratio <= GOAL_EACH else "**missed**")


def table(rows: list[dict[str, Any]], model: str = "") -> str:
    out = ([f"Timing model `{model}`, target {TARGET}.", ""] if model else []) + ["| operator | size | pipeline | time (us) | roofline (us) | ratio | ≤ 3 | scalar fallback (`emit --explain`) "
           "| blockDim | bound | critical core busy (cycles) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['name']} | {r['size']} | `{r['pipeline']}` | | | | error | {r['error']} | | | |")
            continue
        falls = "none"
        if r.get("fallbacks"):
            shares = r.get("shares") or []
            falls = "; ".join(f"{f}" + (f" ({shares[i]:.1%})" if i < len(shares) else "") for i, f in enumerate(r["fallbacks"]))
        t = f"{r['time_us']:,}"
        if "estimated_from" in r:
            t = f"~{t} (est. from {r['estimated_from']}, x {r['scale']:,})"
        busy = ", ".join(f"{p} {c:,}" for p, c in list(r["critical_busy"].items())[:4])
        out.append(f"| {r['name']} | {r['size']} | `{r['pipeline']}` | {t} | {r['roofline_us']:,} | {r['ratio']:,} | "
                   f"{_verdict(r['ratio'])} | {falls} | {r['block_dim']} | {r['bound']} | {busy} |")
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        met = sum(x <= GOAL_EACH for x in ratios)
        scalar = sum(1 for r in rows if r.get("fallbacks"))
        out += ["", f"Goals: every ratio ≤ {GOAL_EACH:g}: {met} of {len(rows)} "
                f"({'met' if met == len(ratios) and len(ratios) == len(rows) else '**missed**'}); geometric mean "
                f"{gm:,.2f} ≤ {GOAL_GEOMEAN:g}: {'met' if gm <= GOAL_GEOMEAN else '**missed**'}; "
                f"{scalar} of {len(rows)} with a scalar fallback."]
    return "\n".join(out)


def write_doc(text: str, commit: str) -> None:
    _write_doc_between(text, commit, begin=BEGIN, end=END, script="bench/bench_ops.py")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="run only operators whose name or example contains this")
    ap.add_argument("--write-doc", action="store_true", help="rewrite the generated table of docs/performance.md")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--from-json", help="render the table (and --write-doc) from rows saved by --json")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per kernel's profile (default 600)")
    a = ap.parse_args()
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        text = table(saved["rows"], saved.get("model", ""))
        print(text)
        if a.write_doc:
            write_doc(text, saved.get("commit", "?"))
        return
    ops = [o for o in OPS if not a.only or any(s in o.name or s == o.example for s in a.only)]
    if not ops:
        raise SystemExit(f"no operator matches {a.only}; names: {', '.join(o.example for o in OPS)}")
    rows = []
    for o in ops:
        print(f"... {o.name} {' x '.join(map(str, o.sizes.values()))}", file=sys.stderr, flush=True)
        rows.append(run_op(o, a.timeout))
        print(f"    {rows[-1].get('ratio', rows[-1].get('error'))} ({rows[-1]['profile_s']} s)", file=sys.stderr, flush=True)
    from transformer.timing.params import MODEL_VERSION

    text = table(rows, MODEL_VERSION)
    print(text)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if a.json:
        Path(a.json).write_text(json.dumps({"commit": commit, "model": MODEL_VERSION, "rows": rows}, indent=1))
    if a.write_doc:
        write_doc(text, commit or "?")


if __name__ == "__main__":
    main()
