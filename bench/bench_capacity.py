"""Benchmark: capacity check() and best_tiles() on an attention-like buffer set.

Times, in one process: the import of the capacity package (z3 included), check() cold
(first call, empty caches), check() warm (cached) and warm re-solved (cache bypassed),
best_tiles() cold and warm; and, as a baseline measured in the same run, a plain Python
sum-of-bytes check of the same buffers.  Prints figures and ratios vs the baseline.

    python bench/bench_capacity.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

t_import = time.perf_counter()
from transformer.capacity import Buffer, best_tiles, check, clear_caches  # noqa: E402
from transformer.targets import get_target  # noqa: E402

IMPORT_MS = (time.perf_counter() - t_import) * 1e3

DB = "double_buffer on loop kv"
SIZES = {"q.i": 64, "kv.j": 64, "d": 128}
OVER = {"q.i": 64, "kv.j": 128, "d": 128}  # does not fit: exercises core + hints


def attention() -> list[Buffer]:
    """Flash-attention style vector-side buffers, inputs double buffered."""
    return [
        Buffer("Qt", "ub", "f16", ("q.i", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("Kt", "ub", "f16", ("kv.j", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("Vt", "ub", "f16", ("kv.j", "d"), stages=2, position="VECIN", origin=DB,
               copy_lengths=("d",)),
        Buffer("St", "ub", "f32", ("q.i", "kv.j"), position="VECCALC", origin="tile on loop kv"),
        Buffer("Pt", "ub", "f16", ("q.i", "kv.j"), position="VECCALC"),
        Buffer("Ot", "ub", "f32", ("q.i", "d"), position="VECOUT", copy_lengths=("d",)),
        Buffer("m", "ub", "f32", ("q.i",), position="VECCALC"),
        Buffer("l", "ub", "f32", ("q.i",), position="VECCALC"),
    ]


def baseline(bufs: list[Buffer], sizes: dict[str, int], usable: int) -> bool:
    """Plain Python: sum of roundup32(bytes) x stages <= usable."""
    total = 0
    for b in bufs:
        n = b.elem_bytes
        for d in b.shape:
            n *= sizes[d] if isinstance(d, str) else d
        total += -(-n // 32) * 32 * b.stages
    return total <= usable


def timed(fn, repeat: int) -> float:
    """Median wall time of fn() in ms."""
    xs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t) * 1e3)
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    bufs = attention()
    tgt = get_target("ascend910b2")
    usable = tgt.scope("ub").usable_bytes - tgt.api_temp_bytes

    clear_caches()
    t = time.perf_counter()
    res = check(bufs, tgt, sizes=SIZES, api_temp=True)
    check_cold = (time.perf_counter() - t) * 1e3
    check_warm = timed(lambda: check(bufs, tgt, sizes=SIZES, api_temp=True), args.repeat)
    check_resolve = timed(lambda: check(bufs, tgt, sizes=SIZES, api_temp=True,
                                        use_cache=False), args.repeat)
    t = time.perf_counter()
    over = check(bufs, tgt, sizes=OVER, api_temp=True)
    unsat_cold = (time.perf_counter() - t) * 1e3
    base = timed(lambda: baseline(bufs, SIZES, usable), args.repeat * 20)
    assert res.ok == baseline(bufs, SIZES, usable)

    clear_caches()
    t = time.perf_counter()
    best = best_tiles(bufs, tgt, sizes={"d": 128}, api_temp=True)
    best_cold = (time.perf_counter() - t) * 1e3
    best_warm = timed(lambda: best_tiles(bufs, tgt, sizes={"d": 128}, api_temp=True),
                      args.repeat)

    figs = {
        "import_ms": IMPORT_MS,
        "check_status": res.status,
        "check_cold_ms": check_cold,
        "check_warm_cached_ms": check_warm,
        "check_warm_resolved_ms": check_resolve,
        "check_unsat_with_hints_ms": unsat_cold,
        "unsat_message": over.message,
        "baseline_python_sum_ms": base,
        "best_tiles": best,
        "best_tiles_cold_ms": best_cold,
        "best_tiles_warm_ms": best_warm,
        "ratio_check_warm_vs_baseline": check_warm / base,
        "ratio_check_resolved_vs_baseline": check_resolve / base,
    }
    if args.json:
        print(json.dumps(figs, indent=2))
        return
    print(f"attention buffer set on {tgt.name}, sizes {SIZES}, api_temp reserved: "
          f"{res.status}, UB total {res.per_scope['ub'].total} B of {usable} B")
    print(f"  import transformer.capacity (z3)   {IMPORT_MS:9.2f} ms")
    print(f"  check() cold (first call)          {check_cold:9.3f} ms   (target < 1000 ms)")
    print(f"  check() warm, cached               {check_warm:9.3f} ms   (target < 100 ms)")
    print(f"  check() warm, re-solved by Z3      {check_resolve:9.3f} ms")
    print(f"  check() unsat + core + hints       {unsat_cold:9.3f} ms")
    print(f"    {over.message}")
    print(f"  baseline: plain Python sum check   {base:9.4f} ms")
    print(f"  best_tiles() cold                  {best_cold:9.3f} ms  -> {best}")
    print(f"  best_tiles() warm                  {best_warm:9.3f} ms")
    print(f"  ratio check warm(cached)/baseline  {figs['ratio_check_warm_vs_baseline']:9.1f}x")
    print(f"  ratio check re-solved/baseline     {figs['ratio_check_resolved_vs_baseline']:9.1f}x")


if __name__ == "__main__":
    main()
