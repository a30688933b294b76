"""The human report of a measured (`backend="npu"`) profile, and recording calibration runs.

`format_npu_report` prints what msprof measured (time, cores, per-pipe busy time of the
busiest block) next to the emulator's prediction when one is given, so a user sees at once
where the model is off.  `record_runs` appends the pairing of both profiles to a
calibration CSV (`ascx profile --backend npu --record runs.csv`), the input of
`ascx calibrate`.
"""

from __future__ import annotations

import os
from typing import Any

from ..timing.calibrate import read_samples_csv, samples_csv, samples_from_profiles


def format_npu_report(measured: Any, predicted: Any = None) -> str:
    d = measured.details
    lines = [f"profile of `{measured.kernel}` on {measured.target} (NPU device {d.get('device', '?')}, "
             f"{d.get('soc_version', '?')}, msprof op)"]
    pred = f"  (emulator model: {predicted.time_us:,.2f} us)" if predicted is not None else ""
    lines.append(f"  total        {measured.time_us:,.2f} us = {measured.cycles:,.0f} cycles at "
                 f"{d.get('freq_mhz', 0):.0f} MHz{pred}")
    lines.append(f"  cores used   {measured.cores_used} (Block Dim)")
    lines.append(f"  bound        {measured.bound}")
    lines.append(f"  roofline     {measured.roofline_us:,.2f} us (GM traffic only); achieved/roofline = "
                 f"{measured.ratio:,.1f}x")
    model = {(p.pipe, p.core_kind): p.busy_cycles for p in predicted.pipes} if predicted is not None else {}
    lines.append("  pipe   core  busy cycles   util" + ("   model cycles" if model else ""))
    for p in sorted(measured.pipes, key=lambda p: (-p.busy_cycles, p.core_kind, p.pipe)):
        extra = f"   {model[(p.pipe, p.core_kind)]:>12,.0f}" if (p.pipe, p.core_kind) in model else ""
        lines.append(f"  {p.pipe:<6} {p.core_kind:<4} {p.busy_cycles:>12,.0f}  {100 * p.utilisation:5.1f}%{extra}")
    if not measured.pipes:
        lines.append("  (msprof wrote no PipeUtilization.csv: per-pipe times unknown)")
    lines.append(f"  msprof output {d.get('msprof_output', '?')}")
    return "\n".join(lines)


def total_features(emulated: Any) -> dict[str, float]:
    """Whole-kernel features of an emulator profile for the TOTAL calibration sample:
    launches, and block-dispatch waves (blocks over the cores they share)."""
    launches = emulated.details.get("launches", [])
    waves = sum(-(-int(l.get("block_dim", 1)) // max(1, int(l.get("slots", 1)))) for l in launches)
    return {"launch": float(len(launches) or 1), "block_dispatch": float(waves or 1)}


def record_runs(path: str, emulated: Any, measured: Any) -> int:
    """Append the calibration samples pairing `emulated` (features) with `measured` (busy
    cycles) to the CSV at `path` (created with its header; rows already there are kept).
    Returns the number of samples added."""
    new = samples_from_profiles(emulated, measured, total_features(emulated))
    old = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = read_samples_csv(f.read(), float(emulated.details.get("clock_mhz") or 1.0))
    from ..cli_common import write_output_file

    write_output_file(path, samples_csv(old + new))
    return len(new)
