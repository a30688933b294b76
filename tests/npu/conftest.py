"""A fake CANN installation for the NPU-backend tests (no hardware here).

`fake_cann` puts on PATH small Python scripts standing in for the toolchain, each logging
its command line to `calls.jsonl` and checking what ascx asks of it:

- `cmake -S DIR -B DIR/build -DSOC_VERSION=...`: the project must have the kernel-launch
  layout (CMakeLists.txt including ascendc.cmake and calling ascendc_library on kernel.cpp,
  a main.cpp launching through ACLRT_LAUNCH_KERNEL); `cmake --build DIR/build` writes the
  "device program" `DIR/build/ascx_npu_main`;
- the device program plays the NPU for `examples/add.ir`: it reads `A.bin`, `B.bin` (f16)
  and writes `C.bin` = A + B (FAKE_NPU_MODE=wrong writes A - B, =crash fails like a device
  error);
- `msprof op --output=DIR --kernel-name=K APP ARGS`: runs APP, then writes an OPPROF folder
  with the canned CSVs of tests/npu/data (Op Name = K);
- `bisheng` exists; `$ASCEND_HOME_PATH` holds `compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake`;
  `$ASCX_NPU_DEV_DIR/davinci0` stands for the device node.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

_LOG = """
import json, os, sys
def log(tool):
    with open(os.environ["FAKE_CANN_LOG"], "a") as f:
        f.write(json.dumps({"tool": tool, "argv": sys.argv[1:], "cwd": os.getcwd()}) + "\\n")
def fail(msg):
    sys.stderr.write(msg + "\\n")
    sys.exit(1)
"""

CMAKE = _LOG + r'''
import re
from pathlib import Path
log("cmake")
a = sys.argv[1:]
if a[:1] == ["--build"]:
    build = Path(a[1])
    if not (build / "configured").is_file():
        fail("cmake --build before configure")
    exe = build / "ascx_npu_main"
    exe.write_text("#!" + sys.executable + "\n" + open(os.environ["FAKE_NPU_DEVICE"]).read())
    exe.chmod(0o755)
    sys.exit(0)
src = Path(a[a.index("-S") + 1]); build = Path(a[a.index("-B") + 1])
if not any(x.startswith("-DSOC_VERSION=Ascend") for x in a):
    fail("no -DSOC_VERSION")
text = (src / "CMakeLists.txt").read_text()
for need in ("ascendc.cmake", "ascendc_library(", "kernel.cpp", "add_executable(ascx_npu_main main.cpp)", "ascendcl"):
    if need not in text:
        fail("CMakeLists.txt lacks " + need)
main = (src / "main.cpp").read_text()
entry = re.search(r"ACLRT_LAUNCH_KERNEL\((\w+)\)", main)
if not entry or f'#include "aclrtlaunch_{entry.group(1)}.h"' not in main or "aclrtSynchronizeStream" not in main:
    fail("main.cpp does not launch through ACLRT_LAUNCH_KERNEL")
if f"__aicore__ void {entry.group(1)}(" not in (src / "kernel.cpp").read_text():
    fail("kernel.cpp does not define the entry " + entry.group(1))
if not os.path.isfile(os.path.join(os.environ["ASCEND_HOME_PATH"], "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake")):
    fail("no ascendc.cmake in ASCEND_HOME_PATH")
build.mkdir(parents=True, exist_ok=True)
(build / "configured").write_text("ok")
'''

DEVICE = _LOG + r'''
import numpy as np
log("device")
d = sys.argv[1]
mode = os.environ.get("FAKE_NPU_MODE", "add")
if mode == "crash":
    fail("aclrtSynchronizeStream(stream) failed with ACL error 507011")
a = np.fromfile(os.path.join(d, "A.bin"), np.float16)
b = np.fromfile(os.path.join(d, "B.bin"), np.float16)
(a + b if mode == "add" else a - b).astype(np.float16).tofile(os.path.join(d, "C.bin"))
'''

MSPROF = _LOG + r'''
import shutil, subprocess
from pathlib import Path
log("msprof")
a = sys.argv[1:]
if a[:1] != ["op"]:
    fail("expected `msprof op`")
opts = [x for x in a[1:] if x.startswith("--")]
app = [x for x in a[1:] if not x.startswith("--")]
out = next(x.split("=", 1)[1] for x in opts if x.startswith("--output="))
name = next(x.split("=", 1)[1] for x in opts if x.startswith("--kernel-name="))
r = subprocess.run(app)
if r.returncode:
    fail("the application failed")
res = Path(out) / "OPPROF_20261130105500_ABCDEF"
res.mkdir(parents=True)
data = Path(os.environ["FAKE_MSPROF_DATA"])
(res / "OpBasicInfo.csv").write_text((data / "OpBasicInfo.csv").read_text().replace("KERNEL_NAME", name))
shutil.copy(data / "PipeUtilization.csv", res / "PipeUtilization.csv")
'''


@dataclass
class FakeCann:
    root: Path
    log: Path

    def calls(self, tool: str | None = None) -> list[dict]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in rows if tool is None or r["tool"] == tool]


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)


@pytest.fixture
def fake_cann(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCann:
    root = tmp_path / "fake_cann"
    bin_dir, home, dev = root / "bin", root / "toolkit", root / "dev"
    for d in (bin_dir, home / "compiler/tikcpp/ascendc_kernel_cmake", dev):
        d.mkdir(parents=True)
    (home / "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake").write_text("# fake\n")
    (dev / "davinci0").write_text("")
    _script(bin_dir / "cmake", CMAKE)
    _script(bin_dir / "msprof", MSPROF)
    _script(bin_dir / "bisheng", _LOG + 'log("bisheng")\n')
    device = root / "device.py"
    device.write_text(DEVICE)
    log = root / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.setenv("ASCX_NPU_DEV_DIR", str(dev))
    monkeypatch.setenv("FAKE_CANN_LOG", str(log))
    monkeypatch.setenv("FAKE_NPU_DEVICE", str(device))
    monkeypatch.setenv("FAKE_MSPROF_DATA", str(DATA))
    monkeypatch.delenv("FAKE_NPU_MODE", raising=False)
    return FakeCann(root, log)
