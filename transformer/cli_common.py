"""Pieces shared by every `ascx` command: `--size`, `--target`, loading a kernel, the
steps several commands share (transform, capacity gate, writing emitted code), and turning
errors into exit codes. The work itself is in `transformer/driver.py`; this module only
adapts it to the command line, so no command module imports another.

Exit codes (all commands): 0 success, 1 a check failed (mismatch, over capacity),
2 bad input or usage. A user error never shows a Python traceback; an internal error
prints one line (and the traceback only with `ASCX_DEBUG=1`) and exits 3.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import sys
import traceback
from typing import Any, Callable, Iterable, TypeVar

import click

from . import ir
from .diagnostics import AscxError, Source, UsageError
from .targets import Target

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3

F = TypeVar("F", bound=Callable[..., Any])


class CheckFailed(Exception):
    """Raised by a command whose check failed after printing its report (exit 1)."""


def parse_size_overrides(values: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        name, sep, num = v.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--size expects NAME=INT, got `{v}`", hint="e.g. --size S=256")
        try:
            value = int(num)
        except ValueError:
            raise UsageError(f"--size {name}: `{num}` is not an integer", hint="e.g. --size S=256") from None
        if value <= 0:
            raise UsageError(f"--size {name}: must be positive, got {value}")
        out[name] = value
    return out


def parse_shapes(text: str | None) -> list[tuple[str, ...]]:
    """`--shapes 'S=128;S=1000,T=8'` -> one tuple of `NAME=INT` items per shape (`;`
    between shapes, `,` between the sizes of one shape); each item is checked as `--size`
    checks its value. None or empty: no shapes."""
    if text is None:
        return []
    shapes = []
    for part in text.split(";"):
        items = tuple(x.strip() for x in part.split(",") if x.strip())
        if not items:
            raise UsageError(f"--shapes {text}: an empty shape", hint="e.g. --shapes 'S=128;S=1000,T=8'")
        for item in items:
            try:
                parse_size_overrides((item,))
            except UsageError as e:
                raise UsageError(f"--shapes: {e.message.removeprefix('--size ')}",
                                 hint="e.g. --shapes 'S=128;S=1000,T=8'") from None
        shapes.append(items)
    return shapes


def non_negative(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """Option callback: a seed (or count) that must be >= 0."""
    if value is not None and value < 0:
        raise click.BadParameter(f"must be a non-negative integer, got {value}")
    return value


def size_option(f: F) -> F:
    return click.option(
        "--size", "sizes", multiple=True, metavar="NAME=INT",
        help="Override a `size` default (repeatable).",
    )(f)


_TARGET_FILE = "ascx.target_file"


def _remember_target_file(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta[_TARGET_FILE] = value


def target_file_option(f: F) -> F:
    """`--target-file FILE.toml`: facts overriding the target's (docs/targets.md). The path
    is kept in the click context and applied by `load_target`, so commands need no
    extra parameter."""
    return click.option(
        "--target-file", metavar="FILE.toml", default=None, expose_value=False, is_eager=False,
        callback=_remember_target_file,
        help="Override target facts from this TOML file (e.g. written by `ascx calibrate`).",
    )(f)


def target_option(f: F) -> F:
    return target_file_option(click.option(
        "--target", "target_name", default=None, metavar="NAME",
        help="Target chip (default ascend910b2; see `ascx targets`).",
    )(f))


def target_file() -> str | None:
    """The `--target-file` of the running command (None outside a command or without it)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get(_TARGET_FILE)


def load_target(name: str | None) -> Any:
    """`--target` value -> Target (`driver.resolve_target`: unknown names are bad input)."""
    from .driver import resolve_target

    path = target_file()
    if path is not None:
        from .targets._override import load_override

        return load_override(path, name)
    return resolve_target(name)


def load_kernel(path: str, sizes: tuple[str, ...] = ()) -> ir.Kernel:
    """Parse `path` (`-` is stdin) and apply `--size` overrides, re-checking the result.
    The text is remembered for the running command, so errors raised later (by a pass,
    the interpreter, the capacity gate) render with its line and caret."""
    from .driver import load_text
    from .parser import read_source

    _loaded_source.set(None)
    src = read_source(path)
    _loaded_source.set(src)
    return load_text(src, parse_size_overrides(sizes), size_text=sizes).kernel


# The source the running command loaded: set by `load_kernel`, scoped to one command
# invocation by `handle_errors` (a context variable, not a module global, so commands run
# in one process, as the tests do, never see each other's files).
_loaded_source: contextvars.ContextVar[Source | None] = contextvars.ContextVar("ascx_loaded_source", default=None)


def current_source() -> Source | None:
    """The source the running command loaded (None before it loaded one)."""
    return _loaded_source.get()


def source_of(path: str) -> Source | None:
    """The text of `path` for rendering error locations: the kernel the command loaded
    when that is `path` (always so for stdin), else the file read anew (None when it
    cannot be read; bytes that are not UTF-8 are replaced)."""
    loaded = _loaded_source.get()
    if loaded is not None and (path == "-" or loaded.path == path):
        return loaded
    if path == "-":
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return Source(path, f.read())
    except OSError:
        return None


def handle_errors(f: F) -> F:
    """Run a command body; map errors to messages and exit codes."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return contextvars.copy_context().run(_run_command, f, args, kwargs)

    return wrapper  # type: ignore[return-value]


def _run_command(f: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """One command invocation, in its own context (its own loaded source)."""
    _loaded_source.set(None)
    try:
        return f(*args, **kwargs)
    except AscxError as e:
        if e.source is None and e.loc is not None:
            e.with_source(_loaded_source.get())
        click.echo(e.render(), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except CheckFailed:
        sys.exit(EXIT_CHECK_FAILED)
    except (click.exceptions.Exit, click.ClickException, SystemExit):
        raise
    except KeyboardInterrupt:
        click.echo("ascx: interrupted", err=True)
        sys.exit(130)
    except Exception as e:  # an ascx bug, not a user error
        if os.environ.get("ASCX_DEBUG"):
            traceback.print_exc()
        click.echo(f"ascx: internal error: {type(e).__name__}: {e}\n"
                   "hint: this is a bug in ascx; rerun with ASCX_DEBUG=1 for details", err=True)
        sys.exit(EXIT_INTERNAL)


def check_output_path(path: str, option: str, *, inputs: Iterable[str | None] = (), force: bool | None = None,
                      suffix: str | None = None) -> None:
    """Refuse, before any work, a path the command was asked to write that cannot be
    written or would destroy an input: wrong suffix, a directory, a missing folder, or the
    same file as one of `inputs` (allowed when `force` is True; None: the command has no
    --force)."""
    if suffix and not path.endswith(suffix):
        raise UsageError(f"{option} {path}: give a path ending in {suffix}")
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory", hint="give a file path")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: folder `{folder}` does not exist")
    for i in inputs:
        if i and i != "-" and os.path.exists(path) and os.path.exists(i) and os.path.samefile(path, i) and not force:
            raise UsageError(f"{option} {path} would overwrite the input file",
                             hint="write elsewhere" + (", or pass --force" if force is not None else ""))


def check_output_dir(path: str, option: str, files: Iterable[str], *, inputs: Iterable[str | None] = ()) -> None:
    """Refuse, before any work, a directory the command would create (with its parents)
    and write `files` into, when it is a file or one of those files is an input."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{option} {path}: is not a directory")
    if os.path.isdir(path):
        for f in files:
            check_output_path(os.path.join(path, f), option, inputs=inputs)


def write_output_file(path: str, data: bytes | str, *, force: bool = True) -> None:
    """Write a file the user asked for by name (atomic replace, so a failure midway, even
    an interrupt, never leaves a truncated file or a temporary one). A destination that
    exists and is not a regular file (`/dev/null`, a FIFO, a terminal) is written in place:
    replacing it would turn the device node into a plain file (as root: `-o /dev/null`
    used to destroy /dev/null)."""
    mode = "wb" if isinstance(data, bytes) else "w"
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        try:
            with open(path, mode) as fh:
                fh.write(data)
        except OSError as e:
            raise UsageError(f"cannot write `{path}`: {e.strerror}") from None
        return
    tmp = f"{path}.ascx-tmp-{os.getpid()}"
    try:
        with open(tmp, mode) as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise UsageError(f"cannot write `{path}`: {e.strerror}") from None
        raise


def backend_option(f: F) -> F:
    """`--backend emulator|npu`: where emitted code runs (npu: CANN and a device, docs/npu.md)."""
    return click.option(
        "--backend", type=click.Choice(["emulator", "npu"]), default="emulator", show_default=True,
        help="Run emitted Ascend C on the clean-room emulator, or build it with CANN and run it on an NPU.",
    )(f)


def device_option(f: F) -> F:
    """`--device N`: the NPU to use with --backend npu."""
    return click.option(
        "--device", type=click.IntRange(min=0), default=None, metavar="N",
        help="With --backend npu: the NPU device id (default 0).",
    )(f)


def no_auto_sync_option(f: F) -> F:
    """`--no-auto-sync`: build hand-written Ascend C without the compiler's automatic
    synchronisation (bisheng's `--cce-auto-sync=off`; docs/emulator.md, "Auto-sync")."""
    return click.option(
        "--no-auto-sync", is_flag=True,
        help="Check the code without the compiler's auto-sync (scalar unit after MTE2/MTE3/V): every "
             "synchronisation must be in the source.",
    )(f)


def auto_sync_flags(no_auto_sync: bool) -> list[str]:
    """The emulator build flag behind `--no-auto-sync`."""
    return ["-DASCX_EMU_NO_AUTO_SYNC=1"] if no_auto_sync else []


_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?")


def define_flags(defines: Iterable[str]) -> list[str]:
    """`-D NAME[=VALUE]` options as g++ flags; a malformed one is a usage error."""
    out = []
    for d in defines:
        if not _MACRO.fullmatch(d):
            raise UsageError(f"-D {d!r}: expected NAME or NAME=VALUE with NAME a C identifier",
                             hint="e.g. -D SOC_VERSION=Ascend910B1")
        out.append(f"-D{d}")
    return out


def npu_toolchain(backend: str, device: int | None, *, need_msprof: bool = False) -> Any:
    """The CANN toolchain for `--backend npu` (None for the emulator); `--device` without
    `--backend npu` is a usage error. Raises `NpuUnavailable` (exit 2) naming what is missing."""
    if backend != "npu":
        if device is not None:
            raise UsageError("--device goes with --backend npu")
        return None
    from .npu import detect_cann

    return detect_cann(device or 0, need_msprof=need_msprof)


# --------------------------------------------------------------------------------------
# steps several commands share (the work is the driver's; here, the command-line side)


def transform_once(file: str, sizes: tuple[str, ...], pipeline: str, target: "Target") -> Any:
    """The kernel (with `--size` on top) transformed over its size ranges when it has ranges
    and every pass of `pipeline` keeps them; else None (the caller transforms per shape)."""
    from passes.base import parse_pipeline

    kernel = load_kernel(file, sizes)
    if not kernel.size_ranges() or not all(p.keeps_ranges for p in parse_pipeline(pipeline)):
        return None
    return transform_kernel(file, kernel, pipeline, target)[0]


def kernels_at_shapes(file: str, sizes: tuple[str, ...], shapes: list[tuple[str, ...]], pipeline: str | None,
                      target: Target) -> tuple[bool, list[tuple[str, ir.Kernel, ir.Kernel]]]:
    """`--shapes`: whether the pipeline ran once over the ranges (`transform_once`), and
    per shape its text, the kernel loaded at it (`--size`'s checks) and the pipeline's
    result there (that one result at the shape's sizes, or the shape transformed alone)."""
    once = transform_once(file, sizes, pipeline, target) if pipeline else None
    out = []
    for shape in shapes:
        kernel = load_kernel(file, sizes + shape)
        result = at_shape(once, kernel) if once is not None else \
            transform_kernel(file, kernel, pipeline, target)[0] if pipeline else kernel
        out.append((",".join(shape), kernel, result))
    return once is not None, out


def echo_shapes(rows: list[tuple[str, Any]], as_json: bool, header: str, once: bool, line: Callable[[Any], str]) -> None:
    """Print the per-shape reports of `--shapes` (`(shape, report)`, a report with
    `to_json`): a JSON list, or `header` (saying whether the pipeline ran once) and a line
    per shape."""
    import json

    if as_json:
        click.echo(json.dumps([{"shape": sh, **r.to_json()} for sh, r in rows], indent=2))
        return
    click.echo(header + ("; transformed once over the size ranges" if once else ""))
    for sh, r in rows:
        click.echo(f"  {sh}: {line(r)}")


def at_shape(once: ir.Kernel, shape_kernel: ir.Kernel) -> ir.Kernel:
    """`transform_once`'s result at the sizes of `shape_kernel` (the kernel loaded at one
    shape, as `--size` loads it): what runs, is emitted and is profiled at that shape."""
    values = shape_kernel.size_values()
    return once.with_sizes(values).specialised(set(values) - set(shape_kernel.size_ranges()))


def transform_kernel(path: str, kernel: ir.Kernel, pipeline: str, target: Target) -> tuple[ir.Kernel, list]:
    """Run `pipeline` on `kernel` (`driver.transform`), attaching the right source to any
    error: the pipeline text for pipeline errors, the file for pass errors. A pass with
    nothing to do is noted on stderr (an error under `--strict`)."""
    from .driver import transform

    ctx = click.get_current_context(silent=True)
    strict = bool(ctx is not None and ctx.meta.get("ascx_strict"))
    out, trace = transform(kernel, pipeline, target, source=source_of(path), strict=strict)
    for e in trace:
        if e.noop:
            click.echo(f"{path}: note: {e.pass_text} did nothing: {e.noop}", err=True)
        if e.note:
            click.echo(f"{path}: note: {e.note}", err=True)
    return out, trace


def enforce_capacity(kernel: Any, target: Target | None = None, *, timeout_ms: int | None = None) -> None:
    """Refuse to go on with an over-capacity kernel (for `ascx transform`).

    Prints the explanation (located at the buffer's declaration when known) to stderr and
    raises `CheckFailed` (exit 1) when the kernel is unsat or its capacity unknown."""
    from .capacity.from_kernel import KernelCapacityError
    from .driver import capacity_gate

    tgt = load_target(target) if target is None or isinstance(target, str) else target
    try:
        capacity_gate(kernel, tgt, source=_loaded_source.get(), timeout_ms=timeout_ms)
    except KernelCapacityError as e:
        click.echo(e.render(), err=True)
        raise CheckFailed() from None


def check_harness_dir(harness_dir: str, output: str | None, file: str) -> None:
    """Refuse, before any work, a --harness DIR that is a file or whose kernel, harness or
    build script would overwrite the input."""
    check_output_dir(harness_dir, "--harness", (_kernel_file(output), "main.cpp", "build.sh"), inputs=(file,))


def _kernel_file(output: str | None) -> str:
    return os.path.basename(output) if output else "kernel.cpp"


def write_emitted(emitted: Any, output: str | None, harness_dir: str | None) -> None:
    """Write the kernel to `output` (stdout when None) and, with `harness_dir`, the kernel,
    harness (`main.cpp`) and `build.sh` into that directory. Warnings go to stderr."""
    from .codegen import write_sources

    if harness_dir:
        try:
            paths = write_sources(emitted, harness_dir, kernel_file=_kernel_file(output))
        except OSError as e:
            raise UsageError(f"--harness {harness_dir}: cannot write `{e.filename or harness_dir}`: {e.strerror}") from None
        click.echo("wrote " + ", ".join(str(p) for p in paths), err=True)
    if output:
        write_output_file(output, emitted.source)
    elif not harness_dir:
        click.echo(emitted.source, nl=False)
    for w in emitted.warnings:
        click.echo(w, err=True)


def _set_strict(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    ctx.meta["ascx_strict"] = value


# A pass with nothing to do is a no-op with a note on stderr; `--strict` makes it an error.
strict_option = click.option("--strict", is_flag=True, expose_value=False, callback=_set_strict,
                             help="A pass that finds nothing to do is an error (exit 2), not a no-op with a note.")


def one_build(file: str, sizes: tuple[str, ...], pipeline: str | None, target: "Target") -> tuple[Any, str]:
    """`verify --shapes --emitted` (and `profile --shapes`) of a kernel transformed once over its ranges: the one
    emitted kernel when it reads its sizes at run time (its tiling struct; compiled once,
    run at every shape), and what the header says about the build."""
    from .driver import emit

    once = transform_once(file, sizes, pipeline, target) if pipeline else None
    if once is None:
        return None, ""
    em = emit(once, target, source_name=file, pipeline=pipeline or "")
    if em.plan is None or not em.plan.runtime_sizes:
        why = next((w.split("yet: ", 1)[-1] for w in em.warnings if "run-time-size path" in w), "")
        return None, f"; built once per shape (sizes specialised: {why or 'see ascx emit'})"
    names = ", ".join(em.plan.runtime_names)
    return em, f"; compiled once: one binary for every shape ({names} read at run time from its tiling struct)"
