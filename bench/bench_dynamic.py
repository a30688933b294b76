"""Benchmark: what serving a size range costs at the default size (issue 24, item d).

For each example, the sizes named in `RANGES` get a range; the documented pipeline
(examples/README.md) runs twice, in one process:

  * static:  on the example as written (every size fixed: trip counts are constants,
             no tail where the tile divides the size);
  * ranged:  on the example with the ranges (the passes that keep ranges give run-time trip
             counts `(M + T - 1) / T` and tails `min(T, M - i0 * T)`: the one result serves
             every size of the range, `tests/test_range_passes.py`).

The ranged result is emitted twice: specialised at the default sizes (the range-serving
*transformation*'s cost: tails kept, a row of ranged length tiled), and as the run-time-size
kernel that reads its sizes from a tiling struct (docs/codegen.md, "Run-time sizes": one
build serves every shape; a kernel that path does not reach yet is specialised, and the row
says `specialised`). All are profiled at the default sizes on the timing model (timing-only);
the row prints ranged / static and runtime / static cycles (goal <= 1.1 each).

`--at 'S=2048;S=4096'` also profiles each row's run-time kernel (the one build) at those
shapes against the static kernel emitted at each (the tiling keys' test: within ~1.0x).

    python bench/bench_dynamic.py [--only NAME]... [--at SHAPES] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_kernels import TARGET, documented  # noqa: E402

# example -> {size: "in LO..HI [multiple of M]"}: the range each size serves
RANGES: dict[str, dict[str, str]] = {
    "add": {"M": "in 1..4096", "N": "in 16..65536 multiple of 16"},
    "add_rows": {"M": "in 1..4096"},
    "softmax": {"R": "in 1..8192"},
    "rmsnorm": {"N": "in 1..8192"},
    "layernorm": {"N": "in 1..8192"},
    "matmul": {"M": "in 1..4096", "N": "in 1..4096", "K": "in 1..4096"},
    "attention": {"S": "in 128..4096 multiple of 128"},
}
EXAMPLE = {"add_rows": "add"}  # a row name -> the example it ranges
WITH_PASS = {"matmul": "gemm", "attention": "flash_attention"}  # a row -> the pass its pipeline runs (cube / mix kernel)


@dataclass
class Row:
    name: str
    pipeline: str
    ranges: str
    static_cycles: int
    ranged_cycles: int
    runtime_cycles: int
    runtime: bool  # the run-time-size path took the kernel (else it was specialised)

    @property
    def ratio(self) -> float:
        return self.ranged_cycles / self.static_cycles

    @property
    def runtime_ratio(self) -> float:
        return self.runtime_cycles / self.static_cycles


def ranged_text(text: str, ranges: dict[str, str]) -> str:
    """The example's text with `size S = V` made `size S = V <range>` for each ranged size."""
    for size, rng in ranges.items():
        text, n = re.subn(rf"^(\s*size {size} = \d+)\s*$", rf"\1 {rng}", text, count=1, flags=re.M)
        if n != 1:
            raise SystemExit(f"no `size {size} = N` line to range")
    return text


def measure(name: str) -> Row:
    from transformer.api import parse, transform
    from transformer.timing.profile import profile_kernel

    example = EXAMPLE.get(name, name)
    path = ROOT / "examples" / f"{example}.ir"
    pipeline = documented(example, WITH_PASS.get(name))
    static = transform(parse(path.read_text()), pipeline, TARGET)
    ranged_kernel = parse(ranged_text(path.read_text(), RANGES[name]))
    ranged = transform(ranged_kernel, pipeline, TARGET)
    if ranged.size_ranges() != ranged_kernel.size_ranges():
        raise SystemExit(f"{name}: `{pipeline}` does not keep the ranges")
    from transformer.codegen import emit_ascendc

    specialised = emit_ascendc(ranged, TARGET, source_name=str(path), runtime_sizes=False)
    runtime = emit_ascendc(ranged, TARGET, source_name=str(path))
    cycles = [profile_kernel(k, TARGET, timing_only=True, source_name=str(path), emitted=em).cycles
              for k, em in ((static, None), (ranged, specialised), (ranged, runtime))]
    return Row(name, pipeline, ", ".join(f"{s} {r}" for s, r in RANGES[name].items()), int(cycles[0]), int(cycles[1]),
               int(cycles[2]), bool(runtime.plan and runtime.plan.runtime_sizes))


def measure_at(name: str, shapes: list[dict[str, int]]) -> list[dict[str, object]]:
    """Row `name`'s run-time kernel profiled at each shape vs the static kernel emitted there."""
    from transformer.api import parse, transform
    from transformer.codegen import emit_ascendc
    from transformer.timing.profile import profile_kernel

    example = EXAMPLE.get(name, name)
    path = ROOT / "examples" / f"{example}.ir"
    pipeline = documented(example, WITH_PASS.get(name))
    ranged = transform(parse(ranged_text(path.read_text(), RANGES[name])), pipeline, TARGET)
    runtime = emit_ascendc(ranged, TARGET, source_name=str(path))
    out = []
    for shape in shapes:
        static = transform(parse(path.read_text(), sizes=shape), pipeline, TARGET)
        st = profile_kernel(static, TARGET, timing_only=True, source_name=str(path)).cycles
        rt = profile_kernel(ranged.with_sizes(shape), TARGET, timing_only=True, source_name=str(path), emitted=runtime,
                            at_sizes=True).cycles
        out.append({"name": name, "shape": shape, "static_cycles": int(st), "runtime_cycles": int(rt), "ratio": rt / st})
        print(f"{name:10s} at {','.join(f'{k}={v}' for k, v in shape.items()):12s} static {int(st):>10,d}  runtime "
              f"{int(rt):>10,d}  ratio {rt / st:.3f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(RANGES), help="run only these rows")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--at", help="also profile the run-time kernel at these shapes ('S=2048;S=4096') vs static there")
    args = ap.parse_args()
    rows = []
    t0 = time.perf_counter()
    for name in args.only or list(RANGES):
        r = measure(name)
        rows.append(r)
        ok = "ok" if max(r.ratio, r.runtime_ratio) <= 1.1 else "ABOVE 1.1"
        print(f"{r.name:10s} {r.pipeline:28s} {r.ranges:40s} static {r.static_cycles:>10,d}  ranged "
              f"{r.ranged_cycles:>10,d}  ratio {r.ratio:.3f}  {'runtime' if r.runtime else 'specialised'} "
              f"{r.runtime_cycles:>10,d}  ratio {r.runtime_ratio:.3f} {ok}", flush=True)
    shapes = [{k: int(v) for k, v in (kv.split("=") for kv in sh.split(","))} for sh in (args.at or "").split(";") if sh]
    at = [x for name in (args.only or list(RANGES)) for x in (measure_at(name, shapes) if shapes else [])]
    print(f"({time.perf_counter() - t0:.0f} s, target {TARGET}, timing-only)")
    if args.json:
        args.json.write_text(json.dumps([{**r.__dict__, "ratio": r.ratio, "runtime_ratio": r.runtime_ratio} for r in rows]
                                        + at, indent=2))


if __name__ == "__main__":
    main()
