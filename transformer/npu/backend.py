"""Build, run, check and profile an emitted kernel on an NPU with CANN.

    project = build_project(emitted, toolchain, target, directory)   # CMake + ascendc + ACL host
    outputs = run_on_npu(project, plan, inputs, toolchain, workdir)  # on device `toolchain.device`
    diffs   = verify_on_npu(kernel, target, toolchain, trials=2, seed=1, reference=original)
    profile = profile_on_npu(kernel, target, toolchain)             # msprof op -> ProfileResult

The project has the kernel-launch layout of the public Ascend C samples: `CMakeLists.txt`
including the toolkit's `ascendc.cmake` and compiling `kernel.cpp` (the emitted kernel) with
`ascendc_library`, and `main.cpp`, a host program that copies the inputs to the device,
launches the kernel with `ACLRT_LAUNCH_KERNEL` on `plan.block_dim` blocks, and copies the
outputs back.  Data files are the emulator harness's: `DIR/<name>.bin`, raw little endian.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .. import ir
from ..diagnostics import AscxError
from ..timing.result import ProfileResult
from .detect import CannToolchain
from .msprof import read_msprof
from ..targets import Target

MAIN_TEMPLATE = "npu_main.cpp.j2"
CMAKE_TEMPLATE = "npu_CMakeLists.txt.j2"
BINARY = "ascx_npu_main"


class NpuError(AscxError):
    """The CANN build, the run on the device, or msprof failed."""


class NpuRunError(NpuError):
    """The kernel failed on the device (or wrote no output): a verification failure."""


@dataclass(frozen=True)
class NpuProject:
    directory: Path
    binary: Path
    soc_version: str


def soc_version(target: Target) -> str:
    """The SoC name CANN's compiler expects: the target's `soc_version` fact, else its
    name spelled the CANN way (ascend910b2 -> Ascend910B2; ascend310p -> Ascend310P3)."""
    if target.has("soc_version"):
        return str(target.value("soc_version"))
    name = target.name
    if name == "ascend310p":
        return "Ascend310P3"
    return "Ascend" + name.removeprefix("ascend").upper()


def write_project(emitted: Any, target: Target, directory: str | Path) -> NpuProject:
    """Write the kernel-launch project of `emitted` into `directory`."""
    from ..codegen import _env

    plan = emitted.plan
    assert plan is not None
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    soc = soc_version(target)
    env = _env()
    ctx = dict(plan=plan, soc_version=soc, device_args=", ".join(f"{p.cname}Device" for p in plan.params))
    (d / "kernel.cpp").write_text(emitted.source)
    (d / "main.cpp").write_text(env.get_template(MAIN_TEMPLATE).render(**ctx))
    (d / "CMakeLists.txt").write_text(env.get_template(CMAKE_TEMPLATE).render(**ctx))
    return NpuProject(d, d / "build" / BINARY, soc)


def _run(cmd: list[str], tc: CannToolchain, what: str, cwd: Path, timeout: float,
         error: type[NpuError] = NpuError) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(cmd, cwd=cwd, env=dict(tc.env), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise error(f"{what} did not finish in {timeout:.0f} s: {' '.join(cmd)}") from None
    except OSError as e:
        raise error(f"{what} could not start: {cmd[0]}: {e.strerror}") from None
    if r.returncode != 0:
        log = (r.stderr.strip() + "\n" + r.stdout.strip()).strip()
        if error is NpuRunError:  # the device's own words belong in the one-line verdict
            raise error(f"{what} failed (exit {r.returncode}): {log[-500:] or 'no output'}",
                        hint=f"command: {' '.join(cmd)}")
        raise error(f"{what} failed (exit {r.returncode}): {' '.join(cmd)}",
                       hint=(log[-3000:] or "no output") + f"\n(the project is in {cwd}; keep it with --keep DIR)")
    return r


def build_project(emitted: Any, tc: CannToolchain, target: Target, directory: str | Path,
                  timeout: float = 900.0) -> NpuProject:
    """Write and build the project with cmake and the CANN toolchain."""
    proj = write_project(emitted, target, directory)
    d = proj.directory
    _run([tc.cmake, "-S", str(d), "-B", str(d / "build"), f"-DSOC_VERSION={proj.soc_version}",
          f"-DASCEND_CANN_PACKAGE_PATH={tc.home}", "-DCMAKE_BUILD_TYPE=Release"], tc, "cmake configure", d, timeout)
    _run([tc.cmake, "--build", str(d / "build"), "-j"], tc, "the CANN build", d, timeout)
    if not proj.binary.is_file():
        raise NpuError(f"the CANN build produced no {proj.binary}")
    return proj


def _write_inputs(plan: Any, inputs: Mapping[str, np.ndarray], workdir: Path) -> None:
    from ..codegen import _to_bytes

    workdir.mkdir(parents=True, exist_ok=True)
    for p in plan.inputs:
        (workdir / f"{p.name}.bin").write_bytes(_to_bytes(np.asarray(inputs[p.name]), p.dtype))


def _read_outputs(plan: Any, workdir: Path) -> dict[str, np.ndarray]:
    from ..codegen import _from_bytes

    out: dict[str, np.ndarray] = {}
    for p in plan.outputs:
        f = workdir / f"{p.name}.bin"
        if not f.is_file() or f.stat().st_size != p.nbytes:
            raise NpuRunError(f"the kernel run wrote no {p.nbytes}-byte {f}")
        out[p.name] = _from_bytes(f.read_bytes(), p.dtype, p.shape)
    return out


def run_on_npu(proj: NpuProject, plan: Any, inputs: Mapping[str, np.ndarray], tc: CannToolchain,
               workdir: Path, timeout: float = 300.0) -> dict[str, np.ndarray]:
    """Run the built kernel on the device on `inputs`; the outputs keyed by name."""
    _write_inputs(plan, inputs, workdir)
    _run([str(proj.binary), str(workdir), str(tc.device)], tc, f"the kernel on NPU device {tc.device}", proj.directory,
         timeout, NpuRunError)
    return _read_outputs(plan, workdir)


def _workspace(keep_dir: str | Path | None) -> tuple[Path, Any]:
    if keep_dir is not None:
        Path(keep_dir).mkdir(parents=True, exist_ok=True)
        return Path(keep_dir), None
    tmp = tempfile.TemporaryDirectory(prefix="ascx-npu-")
    return Path(tmp.name), tmp


def verify_on_npu(kernel: ir.Kernel, target: Target, tc: CannToolchain, trials: int = 1, seed: int | None = None, *,
                  reference: ir.Kernel | None = None, keep_dir: str | Path | None = None,
                  emitted: Any = None) -> list[Any]:
    """Build once, run on `trials` random input sets drawn from `seed` on the device, and
    compare each output with the interpreter running `reference` (default: the kernel).
    One `OutputDiff` per output (the worst over trials), as `codegen.verify_emitted`."""
    from ..codegen import emit_ascendc
    from ..interp import OutputDiff, compare_outputs, random_inputs, run

    ref = reference or kernel
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    em = emitted or emit_ascendc(kernel, target, runtime_sizes=False)  # npu_main: fixed sizes
    root, tmp = _workspace(keep_dir)
    try:
        proj = build_project(em, tc, target, root)
        worst: dict[str, OutputDiff] = {}
        for t in range(trials):
            inputs = random_inputs(ref, np.random.default_rng([seed, t]))
            expected = run(ref, inputs)
            actual = run_on_npu(proj, em.plan, inputs, tc, root / f"data{t}")
            for d in compare_outputs(ref, expected, actual):
                w = worst.get(d.name)
                if w is None or (w.ok and not d.ok) or (w.ok == d.ok and d.max_abs > w.max_abs):
                    worst[d.name] = d
        return list(worst.values())
    finally:
        if tmp is not None:
            tmp.cleanup()


def gm_roofline_us(plan: Any, target: Target) -> float:
    """Lower bound of the kernel's time from its GM traffic alone: bytes of its inputs and
    outputs at the target's HBM bandwidth (`hbm_bandwidth_gbps`)."""
    nbytes = sum(p.nbytes for p in plan.params if p.role in ("input", "output"))
    return nbytes / (float(target.value("hbm_bandwidth_gbps")) * 1e3)


def profile_on_npu(kernel: ir.Kernel, target: Target, tc: CannToolchain, *, seed: int = 0,
                   keep_dir: str | Path | None = None, source_name: str | None = None,
                   emitted: Any = None, timeout: float = 600.0) -> ProfileResult:
    """Build, run under `msprof op` on random inputs, and read the measured profile."""
    from ..codegen import emit_ascendc
    from ..interp import random_inputs

    if tc.msprof is None:
        raise NpuError("msprof was not found", hint="it ships with the CANN toolkit: source its set_env.sh")
    em = emitted or emit_ascendc(kernel, target, source_name=source_name or "", runtime_sizes=False)
    root, tmp = _workspace(keep_dir)
    try:
        proj = build_project(em, tc, target, root)
        data = root / "data"
        _write_inputs(em.plan, random_inputs(kernel, np.random.default_rng(seed)), data)
        prof_dir = root / "msprof"
        prof_dir.mkdir(exist_ok=True)
        _run([tc.msprof, "op", f"--output={prof_dir}", f"--kernel-name={em.plan.entry}", str(proj.binary), str(data),
              str(tc.device)], tc, "msprof op", proj.directory, timeout)
        return read_msprof(prof_dir, kernel=kernel.name, target=target, entry=em.plan.entry,
                           roofline_us=gm_roofline_us(em.plan, target),
                           details={"device": tc.device, "soc_version": proj.soc_version,
                                    "roofline": "GM traffic of inputs and outputs at hbm_bandwidth_gbps",
                                    **({"kept": str(root)} if keep_dir is not None else {})})
    finally:
        if tmp is not None:
            tmp.cleanup()
