"""Run a tree of public Ascend C samples on the emulator, unchanged, and say which pass.

Usage::

    python bench/bench_samples.py SAMPLES_DIR [--json] [--only NAME] [--timeout S] [--kernel-launch-only] [--write-doc]

What it does for each sample, as the sample's own ``run.sh -r cpu`` would:

1. finds the sample folders under SAMPLES_DIR: a kernel-launch folder (a ``run.sh`` next to a
   ``.cpp`` that defines ``main`` and at least one kernel ``.cpp``) or an op project
   (``op_host/`` + ``op_kernel/``);
2. copies the folder to a scratch directory (the tree is never written to);
3. runs the data-generation step that ``run.sh`` names (``python3 scripts/gen_data.py ...``);
4. compiles the folder with the emulator (:func:`transformer.emulator.folder.build_folder`),
   with the chip definitions its CMakeLists gives (for run.sh's default chip, or ``--soc`` as
   ``run.sh -v`` would);
5. runs the binary with the arguments ``run.sh`` passes to ``ascendc_kernels_bbit``;
6. runs the golden comparison that ``run.sh`` names (``python3 scripts/verify_result.py ...``).

Each step has a timeout. The report per sample is compiled / ran / matched and the first error
line (a compiler ``error:`` line, an emulator check, or the verify script's last line). An op
project has no CPU mode in its scripts (it is run through aclnn on a device), so it is only
compiled (with the emulator's generated driver) and reported as not run.

``--write-doc`` replaces the table between the ``<!-- bench_samples -->`` markers in
docs/emulator.md with this run's table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transformer.emulator import CompileError  # noqa: E402
from transformer.emulator.folder import FolderError, build_folder, find_sources, run_folder  # noqa: E402
from transformer.emulator.opproject import is_op_project  # noqa: E402

DOC = ROOT / "docs" / "emulator.md"
BEGIN, END = "<!-- bench_samples begin -->", "<!-- bench_samples end -->"
_MAIN = re.compile(r"^\s*(?:int|int32_t|auto)\s+main\s*\(", re.MULTILINE)


@dataclass
class Outcome:
    """What happened to one sample."""

    name: str
    kind: str             # "kernel-launch" or "op-project"
    compiled: bool = False
    ran: bool = False
    matched: bool = False
    error: str = ""
    seconds: float = 0.0

    @property
    def status(self) -> str:
        if self.matched:
            return "pass"
        if self.ran:
            return "mismatch"
        if self.compiled:
            return "run failed" if self.kind == "kernel-launch" else "compiled (not run)"
        if self.error.startswith("run.sh has no cpu mode"):
            return "no cpu mode"
        if self.error.startswith("gen_data"):
            return "gen_data failed"
        return "compile failed"


def _defines_main(path: Path) -> bool:
    return _MAIN.search(path.read_text(errors="replace")) is not None


def find_samples(tree: Path) -> list[Path]:
    """Every sample folder below ``tree`` (kernel-launch folders and op projects), sorted."""
    found: set[Path] = set()
    for run_sh in tree.rglob("run.sh"):
        folder = run_sh.parent
        cpps = [p for p in folder.iterdir() if p.is_file() and p.suffix == ".cpp"]
        if len(cpps) >= 2 and any(_defines_main(p) for p in cpps):
            found.add(folder)
    for op_host in tree.rglob("op_host"):
        if op_host.is_dir() and is_op_project(op_host.parent):
            found.add(op_host.parent)
    return sorted(found)


def _cpu_lines(run_sh: str) -> list[str]:
    """The commands of run.sh, one per line, with continuation lines joined."""
    return [line.strip() for line in run_sh.replace("\\\n", " ").splitlines()]


def _python_step(run_sh: str, script: str) -> list[str] | None:
    """The arguments run.sh gives ``python3 .../<script>`` (None if it does not run it)."""
    for line in _cpu_lines(run_sh):
        m = re.search(r"python3?\s+(\S*" + re.escape(script) + r")\s*(.*)$", line)
        if m and not line.startswith("#"):
            path = re.sub(r"^\$\{?CURRENT_DIR\}?/|^\./", "", m.group(1).strip("\"'"))
            return [path, *m.group(2).split()]
    return None


def _binary_args(run_sh: str) -> list[str]:
    """The arguments run.sh passes to the sample binary in the plain (cpu) run."""
    for line in _cpu_lines(run_sh):
        m = re.match(r"^\S*ascendc_kernels_bbit\"?\s*(.*)$", line)
        if m:  # up to a pipe (`| tee output_msg.txt`), without redirections
            return [a for a in m.group(1).split("|")[0].split() if not a.startswith((">", "2>"))]
    return []


def _soc_default(run_sh: str) -> str | None:
    """The chip run.sh builds for when no ``-v`` is given (``SOC_VERSION="..."``)."""
    m = re.search(r"SOC_VERSION=\"?(Ascend[0-9A-Za-z]+)", run_sh)
    return m.group(1) if m else None


def _cmake_defines(folder: Path, soc: str | None) -> list[str]:
    """The compile definitions the samples' CMakeLists give every unit that depend on the chip:
    ``SOC_VERSION="<soc>"`` (a string, read by main.cpp) and ``CUSTOM_ASCEND310P`` for the
    chips in ``CUSTOM_ASCEND310P_LIST``."""
    cmake = folder / "CMakeLists.txt"
    text = cmake.read_text(errors="replace") if cmake.exists() else ""
    flags = []
    if soc and 'SOC_VERSION="${SOC_VERSION}"' in text:
        flags.append(f'-DSOC_VERSION="{soc}"')
    m = re.search(r"set\(CUSTOM_ASCEND310P_LIST([^)]*)\)", text)
    if soc and m and soc in m.group(1).replace('"', " ").split():
        flags.append("-DCUSTOM_ASCEND310P")
    return flags


def _chip_build(soc: str) -> dict[str, object]:
    """What the chip changes in the emulator build, from the target table: the local memory
    sizes (a 310P's UB is 256 KB, a 910B's 192 KB) and, on a split chip only, the kernel mode
    inferred from each kernel's source (a coupled chip runs every kernel on one kind of core).
    An unknown chip keeps the emulator's default (910B) build."""
    from transformer.targets import get_target

    name = soc.lower()
    name = "ascend310p" if name.startswith("ascend310p") else name
    try:
        tgt = get_target(name)
    except Exception:  # not in the table: the default build
        return {}
    scopes = {s.upper(): int(tgt.scope(s).physical_bytes) for s in ("ub", "l1", "l0a", "l0b", "l0c")}
    return {"scope_bytes": scopes, "infer_kernel_mode": tgt.arch == "split"}


def _has_cpu_mode(run_sh: str) -> bool:
    """run.sh offers ``-r cpu`` (the NPU-only samples name no cpu mode)."""
    return re.search(r"RUN_MODE_LIST=\"[^\"]*\bcpu\b", run_sh) is not None or '"cpu"' in run_sh


def _acl_host(folder: Path) -> bool:
    """An NPU-only host that launches through the generated ``aclrtlaunch_<kernel>.h``
    (``ACLRT_LAUNCH_KERNEL``): the emulator build generates that header and the ACL stand-in
    runs its device calls, so it runs unchanged. A host launching with bisheng's
    ``kernel<<<...>>>`` syntax (the hello-world sample) is not C++ g++ can build."""
    for p in sorted(folder.glob("*.cpp")):
        text = p.read_text(errors="replace")
        if "<<<" in text:
            return False
        if re.search(r'#\s*include\s+"aclrtlaunch_\w+\.h"', text) and "ACLRT_LAUNCH_KERNEL" in text:
            return True
    return False


def _first_error(text: str) -> str:
    """The first line that says what went wrong (else the last non-empty line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"\berror\b|ERROR|Assertion|Segmentation|AddressSanitizer|runtime error", ln):
            return ln[:240]
    return lines[-1][:240] if lines else ""


_TF_SHIM = '''"""Stand-in made by bench_samples.py: the samples' scripts take only tf.bfloat16 from TensorFlow."""
import ml_dtypes


class _DType:
    as_numpy_dtype = ml_dtypes.bfloat16


bfloat16 = _DType()
'''


def _script_env(scratch: Path) -> dict[str, str]:
    """The environment of a sample's Python scripts. Several import TensorFlow only for
    ``tf.bfloat16.as_numpy_dtype``; where TensorFlow is not installed and ml_dtypes is, a
    stand-in module giving that one name is put first on PYTHONPATH."""
    env = dict(os.environ)
    if importlib.util.find_spec("tensorflow") is None and importlib.util.find_spec("ml_dtypes") is not None:
        shim = scratch / "_shims" / "tensorflow"
        shim.mkdir(parents=True, exist_ok=True)
        (shim / "__init__.py").write_text(_TF_SHIM)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(scratch / "_shims"), env.get("PYTHONPATH", "")) if p)
    return env


def _python(step: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *step], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_script_env(cwd.parent))


def run_sample(folder: Path, tree: Path, timeout: float, soc: str | None = None) -> Outcome:
    """Build, run and verify one sample in a scratch copy; never raises for a sample's fault."""
    name = str(folder.relative_to(tree)) if folder != tree else folder.name
    out = Outcome(name, "op-project" if is_op_project(folder) else "kernel-launch")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascx_sample_") as scratch:
        work = Path(scratch) / folder.name
        shutil.copytree(folder, work, symlinks=True)
        run_sh = (work / "run.sh").read_text(errors="replace") if (work / "run.sh").exists() else ""
        chip = soc or _soc_default(run_sh) or "Ascend910B1"
        flags = _cmake_defines(work, chip)
        try:
            find_sources(work)
            if out.kind == "kernel-launch" and not _has_cpu_mode(run_sh) and not _acl_host(work):
                out.error = "run.sh has no cpu mode (an NPU-only sample whose host g++ cannot build)"
                return out
            gen = _python_step(run_sh, "gen_data.py")
            if gen and out.kind == "kernel-launch":
                (work / "input").mkdir(exist_ok=True)
                (work / "output").mkdir(exist_ok=True)
                g = _python(gen, work, timeout)
                if g.returncode != 0:
                    out.error = "gen_data: " + _first_error(g.stderr + g.stdout)
                    return out
            _, binary = build_folder(work, extra_flags=flags, **_chip_build(chip))  # type: ignore[arg-type]
            out.compiled = True
            if out.kind != "kernel-launch":
                out.error = "op project: its scripts run it through aclnn on a device (no cpu mode)"
                return out
            r = run_folder(work, binary, _binary_args(run_sh), timeout=timeout)
            if not r.ok:
                out.error = f"exit {r.returncode}: " + _first_error(r.stderr + "\n" + r.stdout)
                return out
            out.ran = True
            verify = _python_step(run_sh, "verify_result.py")
            if verify is None:
                out.error = "no golden comparison in run.sh"
                out.matched = "error" not in (r.stdout + r.stderr).lower()
                return out
            v = _python(verify, work, timeout)
            out.matched = v.returncode == 0
            if not out.matched:
                out.error = "verify: " + _first_error(v.stdout + v.stderr)
        except FolderError as e:
            out.error = str(e).replace(str(work), folder.name)
        except CompileError as e:
            out.error = _first_error(e.stderr).replace(str(work) + "/", "")
        except subprocess.TimeoutExpired as e:
            out.error = f"timeout after {timeout:.0f} s: {e.cmd if isinstance(e.cmd, str) else ' '.join(map(str, e.cmd))[:120]}"
        except Exception as e:  # a harness fault is reported against the sample, not raised
            out.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:240]
        finally:
            out.seconds = round(time.monotonic() - start, 1)
    return out


def table(outcomes: list[Outcome]) -> str:
    """The markdown table of a run (sample, status, first error)."""
    rows = ["| sample | kind | status | first error |", "|---|---|---|---|"]
    for o in outcomes:
        err = o.error.replace("|", "\\|").replace("`", "'")
        rows.append(f"| {o.name} | {o.kind} | {o.status} | {err} |")
    passed = sum(o.matched for o in outcomes)
    launch = [o for o in outcomes if o.kind == "kernel-launch"]
    rows.append("")
    rows.append(f"{passed} of {len(launch)} kernel-launch samples compile, run and match unchanged; "
                f"{sum(o.compiled for o in outcomes)} of {len(outcomes)} folders compile.")
    return "\n".join(rows)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    if BEGIN not in doc:
        raise SystemExit(f"{DOC}: no {BEGIN} marker")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, help="folder holding the samples (searched recursively)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per sample")
    ap.add_argument("--only", action="append", default=[], help="run the samples whose path contains NAME")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step (default 120)")
    ap.add_argument("--soc", default=None,
                    help="the chip, as run.sh -v gives it (default: the run.sh's own default, else Ascend910B1)")
    ap.add_argument("--kernel-launch-only", action="store_true", help="skip the op projects (they only compile)")
    ap.add_argument("--from-json", type=Path, help="take the outcomes from a saved --json run instead of running")
    ap.add_argument("--write-doc", action="store_true", help="put the table into docs/emulator.md")
    args = ap.parse_args(argv)
    if args.from_json:
        saved = [json.loads(ln) for ln in args.from_json.read_text().splitlines() if ln.strip()]
        fields = set(Outcome.__dataclass_fields__)
        outcomes = [Outcome(**{k: v for k, v in d.items() if k in fields}) for d in saved]
        print(table(outcomes))
        if args.write_doc:
            write_doc(table(outcomes))
        return 0
    if not args.tree.is_dir():
        print(f"{args.tree}: error: not a directory", file=sys.stderr)
        return 2
    tree = args.tree.resolve()
    folders = [f for f in find_samples(tree) if not args.only or any(n in str(f.relative_to(tree)) for n in args.only)]
    if args.kernel_launch_only:
        folders = [f for f in folders if not is_op_project(f)]
    outcomes = []
    for folder in folders:
        o = run_sample(folder, tree, args.timeout, args.soc)
        outcomes.append(o)
        if args.json:
            print(json.dumps({**asdict(o), "status": o.status}), flush=True)
        else:
            print(f"{o.status:18} {o.seconds:6.1f}s  {o.name}  {o.error}", flush=True)
    text = table(outcomes)
    if not args.json:
        print()
        print(text.splitlines()[-1])
    if args.write_doc:
        write_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
