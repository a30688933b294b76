"""Timing: what a kernel costs on a target (pipe-level model, profiles, hazards).

`result.py` is the typed profile result every backend returns (`emulator` = the clean-room
emulator with in-process pipe accounting, `model` = a plan-level estimate without running,
`npu` = a real device through msprof). The tuner, the NPU backend and calibration read only
this type, so backends can change without touching them.
"""

from transformer.timing.result import Hazard, HotLine, PipeStats, ProfileResult

__all__ = ["Hazard", "HotLine", "PipeStats", "ProfileResult"]
