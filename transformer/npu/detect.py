"""Finding CANN: the toolkit, the Ascend C compiler, cmake, msprof and an NPU device.

Why one place: every `--backend npu` command needs the same things, and when one is
missing the user should get one message that names everything missing and how to install
it (exit 2), not a CMake log or a traceback.

Where things are looked for:
- the toolkit root: `$ASCEND_HOME_PATH` (set by the toolkit's `set_env.sh`); if unset, a
  `set_env.sh` at the usual install places (`/usr/local/Ascend/ascend-toolkit/`,
  `~/Ascend/ascend-toolkit/`, `/usr/local/Ascend/cann/`) is sourced and its environment used;
- the Ascend C compiler `bisheng` (on `PATH`, else `<root>/compiler/ccec_compiler/bin`) and the
  toolkit's CMake module `ascendc.cmake` (`<root>/compiler/tikcpp/ascendc_kernel_cmake` or
  `<root>/tools/tikcpp/ascendc_kernel_cmake`), and `cmake` itself;
- `msprof` (on `PATH`, else `<root>/tools/profiler/bin`), only needed to profile;
- the device: `/dev/davinci<N>` (the driver's device node; `--device N`, default 0).
  `ASCX_NPU_DEV_DIR` replaces `/dev` (tests point it at a fake).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..diagnostics import UsageError

SET_ENV_PLACES = ("/usr/local/Ascend/ascend-toolkit/set_env.sh", "~/Ascend/ascend-toolkit/set_env.sh",
                  "/usr/local/Ascend/cann/set_env.sh", "~/Ascend/cann/set_env.sh")
CMAKE_MODULE_DIRS = ("compiler/tikcpp/ascendc_kernel_cmake", "tools/tikcpp/ascendc_kernel_cmake")

INSTALL_TOOLKIT = ("install the CANN toolkit (Ascend-cann-toolkit_<version>_linux-<arch>.run --install, "
                   "from the Ascend community downloads) and `source <install>/ascend-toolkit/set_env.sh`")


class NpuUnavailable(UsageError):
    """Something the NPU backend needs is missing (exit 2, with how to install it)."""


@dataclass(frozen=True)
class CannToolchain:
    """What `--backend npu` builds, runs and profiles with."""

    home: Path  # the toolkit root ($ASCEND_HOME_PATH)
    cmake: str
    compiler: str  # bisheng
    cmake_module_dir: Path  # holds ascendc.cmake
    msprof: str | None
    device: int
    env: Mapping[str, str] = field(default_factory=dict)  # environment for build, run, profile


def _source_set_env(path: Path, env: dict[str, str]) -> dict[str, str]:
    """The environment after `source path` in bash (env unchanged when that fails)."""
    try:
        r = subprocess.run(["bash", "-c", '. "$1" >/dev/null 2>&1; env -0', "ascx", str(path)],
                           capture_output=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return env
    if r.returncode != 0:
        return env
    out = dict(env)
    for item in r.stdout.split(b"\0"):
        key, sep, value = item.decode("utf-8", "replace").partition("=")
        if sep and key:
            out[key] = value
    return out


def _which(name: str, env: Mapping[str, str], *fallbacks: Path) -> str | None:
    found = shutil.which(name, path=env.get("PATH", ""))
    if found:
        return found
    for f in fallbacks:
        if f.is_file() and os.access(f, os.X_OK):
            return str(f)
    return None


def detect_cann(device: int = 0, *, need_msprof: bool = False, env: Mapping[str, str] | None = None) -> CannToolchain:
    """The CANN toolchain and device `device`, or `NpuUnavailable` naming everything missing."""
    environ = dict(os.environ if env is None else env)
    missing: list[tuple[str, str, str]] = []  # (what, why we think so, how to get it)
    set_env = None
    if not environ.get("ASCEND_HOME_PATH"):
        for place in SET_ENV_PLACES:
            home_dir = environ.get("HOME", "")
            p = Path(home_dir + place[1:] if place.startswith("~") and home_dir else place)
            if p.is_file():
                set_env = p
                environ = _source_set_env(p, environ)
                break
    home_s = environ.get("ASCEND_HOME_PATH", "")
    home = Path(home_s) if home_s else None
    if home is None:
        where = f"sourcing {set_env} did not set it" if set_env else \
            "and no set_env.sh in " + ", ".join(SET_ENV_PLACES)
        missing.append(("the CANN toolkit", f"ASCEND_HOME_PATH is not set, {where}", INSTALL_TOOLKIT))
    elif not home.is_dir():
        missing.append(("the CANN toolkit", f"ASCEND_HOME_PATH={home_s} is not a directory", INSTALL_TOOLKIT))
        home = None
    cmake = _which("cmake", environ)
    if cmake is None:
        missing.append(("cmake", "no cmake on PATH", "apt-get install cmake (>= 3.16), or pip install cmake"))
    compiler = None
    module_dir = None
    if home is not None:
        compiler = _which("bisheng", environ, home / "compiler/ccec_compiler/bin/bisheng")
        if compiler is None:
            missing.append(("the Ascend C compiler bisheng", f"not on PATH nor in {home}/compiler/ccec_compiler/bin",
                            "it ships with the CANN toolkit: reinstall the toolkit, or source its set_env.sh"))
        module_dir = next((home / d for d in CMAKE_MODULE_DIRS if (home / d / "ascendc.cmake").is_file()), None)
        if module_dir is None:
            missing.append(("the Ascend C CMake module ascendc.cmake",
                            f"not in {home}/{CMAKE_MODULE_DIRS[0]} nor {home}/{CMAKE_MODULE_DIRS[1]}",
                            "it ships with the CANN toolkit (the Ascend C kernel-launch support)"))
    msprof = _which("msprof", environ, *((home / "tools/profiler/bin/msprof",) if home else ()))
    if need_msprof and msprof is None:
        missing.append(("msprof", "not on PATH" + (f" nor in {home}/tools/profiler/bin" if home else ""),
                        "it ships with the CANN toolkit: source its set_env.sh"))
    dev_dir = Path(environ.get("ASCX_NPU_DEV_DIR") or "/dev")
    if not (dev_dir / f"davinci{device}").exists():
        missing.append((f"NPU device {device}", f"{dev_dir}/davinci{device} does not exist",
                        "install the Ascend NPU driver and firmware (`npu-smi info` lists the devices), "
                        "or pick a visible device with --device N"))
    if missing:
        lines = [f"- {what}: {why}; {how}" for what, why, how in missing]
        raise NpuUnavailable("--backend npu needs CANN and an NPU; missing: " + ", ".join(w for w, _, _ in missing),
                             hint="\n".join(["to run on an NPU:", *lines, "see docs/npu.md"]))
    assert home is not None and cmake is not None and compiler is not None and module_dir is not None
    return CannToolchain(home, cmake, compiler, module_dir, msprof, device, environ)
