"""Emit Ascend C for a kernel, and build + run it on the clean-room emulator.

    emitted = emit_ascendc(kernel, target)            # source, harness, warnings, template_map
    outputs = build_and_run(kernel, target, inputs)   # g++ -Werror against the emulator, run
    diffs   = verify_emitted(kernel, target, trials=2, seed=1)   # vs the interpreter

The kernel is lowered to a `KernelPlan` (`transformer.lower`) and rendered by the Jinja2
templates `kernel.cpp.j2` and `harness.cpp.j2` (strict: an undefined variable is an error).
A compiler error in emitted code is a bug of ascx: it is raised as `EmittedCodeError` with
the offending emitted line and the template / plan item / IR location it came from
(`Emitted.template_map`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from . import ir
from .diagnostics import AscxError
from .lower import KernelPlan, Line, NoRuntimeLowering, lower_kernel
from .targets import Target

if TYPE_CHECKING:  # numpy is imported where kernels are run, not for `ascx emit`
    import numpy as np

KERNEL_TEMPLATE = "kernel.cpp.j2"
HARNESS_TEMPLATE = "harness.cpp.j2"
_MARK = re.compile("\x1e([0-9]+)\x1f")


class EmittedCodeError(AscxError):
    """g++ rejected emitted code (a bug of ascx, reported with its origin)."""


class EmulatorRunError(AscxError):
    """The emitted kernel stopped on the emulator (a hardware rule broken, or a crash)."""


@dataclass
class Emitted:
    source: str  # the kernel (.cpp, no main)
    harness: str  # host harness (main); `#include "kernel.cpp"`
    warnings: list[str]
    template_map: dict[int, str]  # 1-based line of `source` -> origin (template, plan item, IR location)
    plan: KernelPlan | None = None
    harness_map: dict[int, str] = field(default_factory=dict)

    def combined(self) -> tuple[str, dict[int, str]]:
        """Kernel + harness as one translation unit (what `build_and_run` compiles)."""
        body = "\n".join(l for l in self.harness_standalone.splitlines())
        text = self.source + "\n// ---- host harness ----\n" + body + "\n"
        tmap = dict(self.template_map)
        off = self.source.count("\n") + 1
        for k in range(1, body.count("\n") + 2):
            tmap[off + k] = self.harness_map.get(k, f"templates/{HARNESS_TEMPLATE}")
        return text, tmap

    harness_standalone: str = ""


# --------------------------------------------------------------------------------------
# rendering


@functools.lru_cache(maxsize=1)
def _env() -> Any:
    """The one Jinja environment of the process: it compiles each template once and keeps
    it (a new environment per render recompiled both templates, ~70 % of `ascx emit`)."""
    import jinja2

    from .resources import templates_dir

    root = templates_dir()

    def load(name: str) -> str:
        return root.joinpath(name).read_text(encoding="utf-8")

    return jinja2.Environment(loader=jinja2.FunctionLoader(load), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=False)


def _code(lines: list[Line], base: int, origins: list[str], where: str) -> str:
    out = []
    for l in lines:
        origins.append(f"{where}" + (f" <- {l.origin}" if l.origin else ""))
        out.append(" " * (base + 4 * l.depth) + l.text + f"\x1e{len(origins) - 1}\x1f")
    return "".join(o + "\n" for o in out)


def _strip_marks(text: str, origins: list[str], template: str) -> tuple[str, dict[int, str]]:
    tmap: dict[int, str] = {}
    out = []
    for i, line in enumerate(text.split("\n"), start=1):
        m = _MARK.search(line)
        if m:
            tmap[i] = f"templates/{template}: {origins[int(m.group(1))]}"
            line = _MARK.sub("", line)
        else:
            tmap[i] = f"templates/{template}"
        out.append(line)
    return "\n".join(out), tmap


def render(plan: KernelPlan, *, source_name: str = "", pipeline: str = "", kernel_file: str = "kernel.cpp") -> Emitted:
    env = _env()
    origins: list[str] = []
    gm_params = [p for p in plan.params if p.role != "workspace"]
    args = [p.cname for p in plan.params] + ([plan.tiling_names[1]] if plan.runtime_sizes else [])
    entry_params = ", ".join(f"GM_ADDR {a}" for a in args)
    entry_args = ", ".join(args)
    methods = []
    buffers = []
    init_lines: list[Line] = []
    tmp_buffers = []
    pad_buffers: list[str] = []
    for ph in plan.phases:
        buffers.extend(ph.buffers)
        init_lines.extend(ph.init)
        if ph.tmp_bytes:
            tmp_buffers.append({"buf": ph.tmp_buf_name, "tensor": ph.tmp_name})
        pad_buffers.extend(ph.pads)
        for m in ph.methods:
            methods.append({
                "name": m.name,
                "signature": ", ".join(f"int32_t {p}" for p in m.params),
                "code": _code(m.body, 8, origins, f"method {m.name} ({m.stage or 'phase'} of phase `{ph.label}`)"),
            })
    ctx = dict(
        plan=plan, source_name=source_name or f"{plan.name}.ir",
        pipeline_text=f" --passes {pipeline}" if pipeline else "",
        gm_params=gm_params, entry_params=entry_params, entry_args=entry_args, methods=methods,
        buffers=buffers, tmp_buffers=tmp_buffers, pad_buffers=pad_buffers,
        init_code=_code(init_lines, 8, origins, "Init (InitBuffer)"),
        process_code=_code(plan.process, 8, origins, "Process"),
    )
    raw = env.get_template(KERNEL_TEMPLATE).render(**ctx)
    source, tmap = _strip_marks(raw, origins, KERNEL_TEMPLATE)
    hctx = dict(plan=plan, entry_args=entry_args, include_kernel=True, kernel_file=kernel_file)
    harness = env.get_template(HARNESS_TEMPLATE).render(**hctx)
    standalone = env.get_template(HARNESS_TEMPLATE).render(**{**hctx, "include_kernel": False})
    e = Emitted(source, harness, list(plan.warnings), tmap, plan)
    e.harness_standalone = standalone
    return e


def emit_ascendc(kernel: ir.Kernel, target: Target | None = None, *, select: bool = True, source_name: str = "",
                 pipeline: str = "", runtime_sizes: bool = True) -> Emitted:
    """Lower `kernel` for `target` (a Target, a name, or None for the default) and render it.

    First the bounds proof (`bounds.check_bounds`): a kernel whose loop bounds let an access
    leave its tensor, or leave an output's end unwritten (a tiled kernel whose sizes were
    edited), is refused at the access, never emitted with wrong counts. A kernel with
    ranged sizes is emitted at their values (the lowering, and the dependence tests it runs,
    which leave a ranged size free, see them fixed)."""
    from .bounds import check_bounds

    ranged = kernel
    kernel = kernel.specialised() if kernel.size_ranges() else kernel
    errors = check_bounds(kernel)
    if errors:
        raise errors[0]
    if ranged.size_ranges() and runtime_sizes:
        try:
            plan = lower_kernel(ranged, target, select=select, source_name=source_name,
                                runtime=frozenset(ranged.size_ranges()))
            return render(plan, source_name=source_name, pipeline=pipeline)
        except NoRuntimeLowering as e:
            why = str(e)
        plan = lower_kernel(kernel, target, select=select, source_name=source_name)
        plan.warnings.append(f"{source_name or kernel.name + '.ir'}: note: the ranged sizes are specialised at their "
                             f"values ({', '.join(f'{n} = {v}' for n, v in kernel.size_values().items() if n in ranged.size_ranges())}): "
                             f"the run-time-size path does not reach this kernel yet: {why}")
        return render(plan, source_name=source_name, pipeline=pipeline)
    plan = lower_kernel(kernel, target, select=select, source_name=source_name)
    return render(plan, source_name=source_name, pipeline=pipeline)


# --------------------------------------------------------------------------------------
# building and running


def _to_bytes(arr: np.ndarray, dtype: str) -> bytes:
    import numpy as np

    a = np.ascontiguousarray(arr)
    if dtype == "f16":
        return a.astype(np.float16).tobytes()
    if dtype == "bf16":
        bits = a.astype(np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16).tobytes()
    return a.astype({"f32": np.float32, "i8": np.int8, "i32": np.int32}[dtype]).tobytes()


def _from_bytes(data: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    import numpy as np

    if dtype == "f16":
        return np.frombuffer(data, np.float16).reshape(shape).copy()
    if dtype == "bf16":
        u = np.frombuffer(data, np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).reshape(shape).copy()
    return np.frombuffer(data, {"f32": np.float32, "i8": np.int8, "i32": np.int32}[dtype]).reshape(shape).copy()


def _compile_error(err: Exception, text: str, tmap: dict[int, str]) -> EmittedCodeError:
    stderr = getattr(err, "stderr", str(err))
    lines = text.split("\n")
    m = re.search(r"kernel\.cpp:(\d+):(\d+): error: (.*)", stderr)
    if not m:
        return EmittedCodeError(f"g++ rejected the emitted Ascend C (an ascx bug):\n{stderr[:4000]}")
    n = int(m.group(1))
    src_line = lines[n - 1].strip() if 0 < n <= len(lines) else ""
    return EmittedCodeError(
        f"g++ rejected the emitted Ascend C at line {n}: {m.group(3)}\n"
        f"  emitted: {src_line}\n  from: {tmap.get(n, '?')}",
        hint="this is a bug in ascx's code generator; please report it with the kernel and pipeline\n"
             + stderr[:3000])


def compile_emitted(emitted: Emitted, *, sanitize: bool = False, optimize: str | None = None) -> Path:
    from .emulator import CompileError, compile_source

    text, tmap = emitted.combined()
    scope = emitted.plan.scope_bytes if emitted.plan else None
    try:
        return compile_source(text, sanitize=sanitize, optimize=optimize, scope_bytes=scope, name="kernel")
    except CompileError as e:
        raise _compile_error(e, text, tmap) from None


def size_args(plan: KernelPlan, sizes: Mapping[str, int] | None) -> list[str]:
    """The harness's `NAME=VALUE` arguments of a run-time-size kernel at `sizes` (the IR's
    size names; a size not given runs at its default)."""
    if not plan.runtime_sizes or not sizes:
        return []
    return [f"{c}={sizes[n]}" for n, c in plan.runtime_names.items() if n in sizes]


def run_compiled(binary: Path, plan: KernelPlan, inputs: Mapping[str, np.ndarray], workdir: Path,
                 timeout: float = 300.0, *, sizes: Mapping[str, int] | None = None,
                 out_shapes: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    """Run a compiled kernel on `inputs`; a run-time-size kernel runs at `sizes` (its
    outputs then have `out_shapes`, the kernel's output shapes at those sizes)."""
    import numpy as np

    from .emulator import host_resource_error, run_binary

    workdir.mkdir(parents=True, exist_ok=True)
    for p in plan.inputs:
        (workdir / f"{p.name}.bin").write_bytes(_to_bytes(np.asarray(inputs[p.name]), p.dtype))
    r = run_binary(binary, [str(workdir), *size_args(plan, sizes)], timeout=timeout)
    refused = host_resource_error(r)
    if refused is not None:
        raise refused
    if r.returncode != 0:
        raise EmulatorRunError(f"the emitted kernel `{plan.entry}` failed on the emulator (exit {r.returncode}):\n"
                               + (r.stderr.strip() or r.stdout.strip())[:4000])
    out: dict[str, np.ndarray] = {}
    for p in plan.outputs:
        shape = (out_shapes or {}).get(p.name, p.shape)
        out[p.name] = _from_bytes((workdir / f"{p.name}.bin").read_bytes(), p.dtype, shape)
    return out


def build_and_run(kernel: ir.Kernel, target: Target, inputs: Mapping[str, np.ndarray], keep_dir: str | Path | None = None,
                  sanitize: bool = False, *, emitted: Emitted | None = None, optimize: str | None = None) -> dict[str, np.ndarray]:
    """Emit, compile (g++ -std=c++17 -Wall -Wextra -Werror + emulator flags, cached by
    source hash), run on `inputs` and return the outputs keyed by name. With `keep_dir`,
    the kernel, harness, build script, binary and data files are kept there."""
    em = emitted or emit_ascendc(kernel, target)
    binary = compile_emitted(em, sanitize=sanitize, optimize=optimize)
    assert em.plan is not None
    if keep_dir is not None:
        kd = Path(keep_dir)
        write_sources(em, kd)
        shutil.copyfile(binary, kd / "kernel")
        os.chmod(kd / "kernel", 0o755)
        return run_compiled(binary, em.plan, inputs, kd / "data")
    with tempfile.TemporaryDirectory(prefix="ascx-run-") as tmp:
        return run_compiled(binary, em.plan, inputs, Path(tmp))


BUILD_SCRIPT = """#!/bin/sh
# Build the kernel and its CPU-debug harness against the ascx Ascend C emulator.
# The emulator's flags (its include path) come from `ascx emulator --cflags` on the machine
# that builds, so this folder builds wherever ascx is installed; the memory sizes are the
# target's the kernel was emitted for. ASCX=/path/to/ascx picks another ascx.
set -e
cd "$(dirname "$0")"
ASCX="${{ASCX:-ascx}}"
if ! command -v "$ASCX" >/dev/null 2>&1; then
    echo "build.sh: error: \\`$ASCX\\` is not on PATH; it gives the emulator's compiler flags" >&2
    echo "hint: install ascx (pip install ascx) or activate its virtualenv, or run ASCX=/path/to/ascx sh build.sh" >&2
    exit 2
fi
CFLAGS=$("$ASCX" emulator --cflags)
g++ $CFLAGS {scope} -O1 -Wall -Wextra -Werror main.cpp -o kernel
echo "built ./kernel; run: ./kernel DATA_DIR (reads <input>.bin, writes <output>.bin)"
"""


def write_sources(em: Emitted, directory: str | Path, kernel_file: str = "kernel.cpp") -> list[Path]:
    """Write kernel, harness (`main.cpp`) and `build.sh` into `directory`. The build script
    holds no path of this machine: it asks `ascx emulator --cflags` for the include path."""
    from .emulator import scope_flags

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / kernel_file).write_text(em.source)
    harness = em.harness.replace('#include "kernel.cpp"', f'#include "{kernel_file}"')
    (d / "main.cpp").write_text(harness)
    scope = em.plan.scope_bytes if em.plan else None
    (d / "build.sh").write_text(BUILD_SCRIPT.format(scope=" ".join(scope_flags(scope))))
    os.chmod(d / "build.sh", 0o755)
    return [d / kernel_file, d / "main.cpp", d / "build.sh"]


def verify_emitted(kernel: ir.Kernel, target: Target | None = None, trials: int = 1, seed: int | None = None, *,
                   reference: ir.Kernel | None = None, sanitize: bool = False, keep_dir: str | Path | None = None,
                   emitted: Emitted | None = None, optimize: str = "-O0", at_sizes: bool = False) -> list[Any]:
    """Compile the emitted Ascend C once, run it on `trials` random input sets drawn from
    `seed`, and compare each output with the interpreter running `reference` (default: the
    kernel itself). Returns one `OutputDiff` per output (the worst over trials).

    Verification runs at sizes the interpreter can check, where the emulator's run is
    milliseconds and g++'s optimiser is most of the cost: `-O0` compiles about 30 % faster
    than `-O1` (2.7 s against 4.0 s of CPU for a documented pipeline) and computes the same
    values (x86-64 SSE arithmetic, no contraction). Profiling at real sizes keeps `-O1`.

    `at_sizes`: `emitted` is a run-time-size kernel (one build for every shape of its
    ranges) and runs at the sizes of `reference`, passed on its command line."""
    import numpy as np

    from .interp import OutputDiff, compare_outputs, random_inputs, run

    ref = reference or kernel
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    em = emitted or emit_ascendc(kernel, target)
    binary = compile_emitted(em, sanitize=sanitize, optimize=optimize)
    assert em.plan is not None
    sizes = ref.size_values() if at_sizes else None
    out_shapes = {t.name: tuple(ir.eval_int_expr(d, ref.size_values()) for d in t.shape) for t in ref.outputs} \
        if at_sizes else None
    worst: dict[str, OutputDiff] = {}
    for t in range(trials):
        rng = np.random.default_rng([seed, t])
        inputs = random_inputs(ref, rng)
        expected = run(ref, inputs)
        if keep_dir is not None:
            kd = Path(keep_dir)
            write_sources(em, kd)
            shutil.copyfile(binary, kd / "kernel")
            os.chmod(kd / "kernel", 0o755)
            actual = run_compiled(binary, em.plan, inputs, kd / f"data{t}", sizes=sizes, out_shapes=out_shapes)
        else:
            with tempfile.TemporaryDirectory(prefix="ascx-verify-") as tmp:
                actual = run_compiled(binary, em.plan, inputs, Path(tmp), sizes=sizes, out_shapes=out_shapes)
        for d in compare_outputs(ref, expected, actual):
            w = worst.get(d.name)
            if w is None or (w.ok and not d.ok) or (w.ok == d.ok and d.max_abs > w.max_abs):
                worst[d.name] = d
    return list(worst.values())
