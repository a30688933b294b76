"""Benchmark: `tile` without parameters (the capacity-solver search) on a kernel of many
softmax-like nests, and the dry runs it spends on attention.

    python bench/bench_tile.py [--nests 32] [--repeat 3]

Reports, for a chain of N fused row-softmax nests (`bench/nests.py`, R=256, C=1024):

* the best-of-N wall time of `tile` without parameters (issue 10 target: < 2 s for 32
  nests), its dry runs (footprint calls) and points pruned by the capacity model;
* as a baseline measured in the same run, `tile{...}` with the sizes the search chose
  (the same pass without any search), and the ratio search / baseline;
* the dry runs of `tile` on examples/attention.ir (target: <= 20) as it is, after `fuse`
  and after `round_operand{pv.s=f16}`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_passes import best  # noqa: E402
from nests import softmax_chain  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nests", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from passes.base import run_pipeline
    from transformer.capacity import tiles
    from transformer.parser import parse, parse_file

    kernel = parse(softmax_chain(args.nests))
    run_pipeline(parse(softmax_chain(2)), "tile", "ascend910b2")  # warm imports

    chosen: dict[str, str] = {}

    def search() -> None:
        tiles.clear_cache()
        _, trace = run_pipeline(kernel, "tile", "ascend910b2")
        chosen["d"] = trace[0].decisions[0]

    t_search = best(search, args.repeat)
    stats = tiles.LAST_STATS
    sizes = chosen["d"].split("chose ", 1)[1].split(" (", 1)[0]
    fixed = "tile{" + sizes.replace(" ", "") + "}"
    t_fixed = best(lambda: run_pipeline(kernel, fixed, "ascend910b2"), args.repeat)
    print(f"kernel: {args.nests} fused softmax nests (R=256, C=1024), ascend910b2")
    print(f"  tile (search)           {t_search:8.3f} s   dry runs {stats.dry_runs}, "
          f"pruned {stats.pruned}, groups {stats.groups}   (target < 2 s)")
    print(f"  tile{{...}} (baseline)   {t_fixed:8.3f} s")
    print(f"  ratio search / baseline {t_search / t_fixed:8.1f}x")
    for pre in ("", "fuse", "round_operand{pv.s=f16}"):
        k = parse_file(str(ROOT / "examples" / "attention.ir"))
        if pre:
            k, _ = run_pipeline(k, pre, "ascend910b2")
        tiles.clear_cache()
        t0 = time.perf_counter()
        run_pipeline(k, "tile", "ascend910b2")
        dt = time.perf_counter() - t0
        print(f"attention {pre + ',' if pre else ''}tile: {tiles.LAST_STATS.dry_runs} dry runs "
              f"(target <= 20), {dt:.3f} s")


if __name__ == "__main__":
    main()
