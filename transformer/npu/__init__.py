"""The NPU backend: emitted Ascend C built with CANN, run on a device, profiled by msprof.

- `detect.py`: find the CANN toolkit, the Ascend C compiler, cmake, msprof and a device;
  one message naming whatever is missing and how to install it (`NpuUnavailable`, exit 2).
- `backend.py`: the kernel-launch project (CMake + `ascendc_library` + an ACL host
  program), build, run, compare with the interpreter, profile with `msprof op`.
- `msprof.py`: `msprof op` CSVs (OpBasicInfo, PipeUtilization) -> `ProfileResult(backend="npu")`.

Nothing here runs on machines without CANN; the tests use a fake toolchain on PATH.
See docs/npu.md.
"""

from .backend import NpuError, NpuRunError, build_project, profile_on_npu, run_on_npu, verify_on_npu, write_project
from .detect import CannToolchain, NpuUnavailable, detect_cann
from .msprof import MsprofError, read_msprof

__all__ = [
    "CannToolchain", "MsprofError", "NpuError", "NpuRunError", "NpuUnavailable", "build_project", "detect_cann",
    "profile_on_npu", "read_msprof", "run_on_npu", "verify_on_npu", "write_project",
]
