"""Reading `msprof op` results into a `ProfileResult(backend="npu")`.

`msprof op --output=DIR APP ARGS` writes `DIR/OPPROF_<timestamp>_<id>/` holding, among
others (fields as documented in the CANN "msprof op" performance-data pages):

- `OpBasicInfo.csv`: one row per profiled kernel: `Op Name`, `Op Type`,
  `Task Duration(us)` (the measured time, scheduling to completion), `Block Dim`,
  `Mix Block Dim`, `Device Id`, `Pid`, `Current Freq`, `Rated Freq` (MHz);
- `PipeUtilization.csv`: one row per block (`block_id`, `sub_block_id`) with, per kind of
  core (`aic_` cube, `aiv_` vector), the block's total `ai*_time(us)` / `ai*_total_cycles`
  and each pipe's `ai*_<pipe>_time(us)` and `ai*_<pipe>_ratio`: `aiv_vec`, `aic_cube`,
  `ai*_scalar`, `aic_fixpipe`, `aic_mte1`, `ai*_mte2`, `ai*_mte3`.

Per-pipe busy cycles are the pipe's time on the busiest block, at the frequency msprof
reports (`Current Freq`, else the target's clock).  Unknown columns are ignored, so newer
msprof versions with more metrics still read.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any

from ..diagnostics import AscxError
from ..timing.result import PipeStats, ProfileResult
from ..targets import Target

# msprof pipe names -> ours (transformer.timing.result.PIPES)
PIPE_NAMES = {"vec": "V", "cube": "M", "scalar": "S", "fixpipe": "FIX", "mte1": "MTE1", "mte2": "MTE2", "mte3": "MTE3"}
_PIPE_COLUMN = re.compile(r"^(aic|aiv)_([a-z0-9]+)_time\(us\)$")


class MsprofError(AscxError):
    """msprof ran but its output cannot be read (missing file, column or number)."""


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    t = text.strip().rstrip("%")
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(f)]


def find_output(directory: str | Path) -> Path:
    """The newest folder under `directory` holding an OpBasicInfo.csv."""
    found = sorted(Path(directory).rglob("OpBasicInfo.csv"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise MsprofError(f"msprof wrote no OpBasicInfo.csv under {directory}",
                          hint="run `msprof op --output=DIR APP` by hand to see why (docs/npu.md)")
    return found[-1].parent


def read_msprof(directory: str | Path, *, kernel: str, target: Target, entry: str | None = None,
                roofline_us: float = 0.0, details: dict[str, Any] | None = None) -> ProfileResult:
    """The profile of `entry` (default: the first kernel) in msprof's output `directory`
    (the OPPROF folder, or a folder holding one)."""
    out = find_output(directory)
    rows = _rows(out / "OpBasicInfo.csv")
    if not rows:
        raise MsprofError(f"{out}/OpBasicInfo.csv has no kernel row")
    row = next((r for r in rows if entry and entry in r.get("Op Name", "")), rows[0])
    time_us = _number(row.get("Task Duration(us)"))
    if time_us is None:
        raise MsprofError(f"{out}/OpBasicInfo.csv: no number in `Task Duration(us)` for {row.get('Op Name', '?')!r}",
                          hint="columns found: " + ", ".join(row))
    freq = _number(row.get("Current Freq")) or float(target.clock_mhz)
    block_dim = _number(row.get("Block Dim"))
    coupled = getattr(target, "arch", "split") == "coupled"
    busy: dict[tuple[str, str], float] = {}
    pipe_file = out / "PipeUtilization.csv"
    if pipe_file.is_file():
        for r in _rows(pipe_file):
            for col, text in r.items():
                m = _PIPE_COLUMN.match(col)
                v = _number(text)
                if not m or v is None or m.group(2) not in PIPE_NAMES:
                    continue
                key = (PIPE_NAMES[m.group(2)], "core" if coupled else m.group(1))
                busy[key] = max(busy.get(key, 0.0), v * freq)
    cycles = time_us * freq
    pipes = tuple(PipeStats(p, kind, c, c / cycles if cycles > 0 else 0.0) for (p, kind), c in sorted(busy.items()))
    bound = max(pipes, key=lambda p: p.busy_cycles).pipe if pipes else "?"
    info = {"msprof_output": str(out), "op_name": row.get("Op Name", ""), "freq_mhz": freq,
            "mix_block_dim": row.get("Mix Block Dim", ""), "device_id": row.get("Device Id", ""),
            "pipe_utilization": pipe_file.is_file()}
    return ProfileResult(kernel=kernel, target=target.name, backend="npu", cycles=cycles, time_us=time_us,
                         roofline_us=roofline_us, bound=bound, cores_used=int(block_dim or 0), pipes=pipes,
                         details=info | (details or {}))
