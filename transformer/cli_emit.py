"""`ascx emit` and `ascx emulator`: Ascend C out of a kernel, and the emulator's flags.

    ascx emit FILE [--passes P] [--size N=V]... [--target T] [-o kernel.cpp] [--harness DIR]
    ascx emulator --cflags

Exit codes as everywhere (`cli_common`): 0 ok, 2 bad input, 3 internal error (a compiler
error in emitted code is an internal error: it is our bug).
"""

from __future__ import annotations

from typing import Any

import click

from .cli_common import (
    check_output_dir,
    check_output_path,
    handle_errors,
    load_kernel,
    load_target,
    size_option,
    target_file,
    target_file_option,
    target_option,
    write_output_file,
)
from .diagnostics import UsageError


def emit_for_cli(file: str, kernel: Any, pipeline: str | None, target: Any, *, select: bool = True) -> Any:
    """Run the pipeline (if any) and emit; the shared step of `ascx emit`,
    `ascx transform --emit ascendc` and `ascx verify --emitted`."""
    from .codegen import emit_ascendc

    out = kernel
    if pipeline:
        from .cli_passes import transform_kernel

        out, _ = transform_kernel(file, kernel, pipeline, target)
    return out, emit_ascendc(out, target, select=select, source_name=file, pipeline=pipeline or "")


def check_harness_dir(harness_dir: str, output: str | None, file: str) -> None:
    """Refuse, before any work, a --harness DIR that is a file or whose kernel, harness or
    build script would overwrite the input."""
    check_output_dir(harness_dir, "--harness", (_kernel_file(output), "main.cpp", "build.sh"), inputs=(file,))


def _kernel_file(output: str | None) -> str:
    import os

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


@click.command("emit")
@click.argument("file")
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE", help="Passes to run first (see `ascx passes`).")
@size_option
@target_option
@click.option("-o", "--output", metavar="KERNEL.cpp", help="Write the Ascend C kernel here (default: stdout).")
@click.option("--harness", "harness_dir", metavar="DIR", help="Also write kernel, host harness (main.cpp) and build.sh into DIR.")
@click.option("--plan", "show_plan", is_flag=True, help="Print the lowering plan (buffers, phases, instructions) to stderr.")
@click.option("--scalar", is_flag=True, help="Disable instruction selection: every nest as scalar code (reference path).")
@handle_errors
def emit_cmd(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None, output: str | None,
             harness_dir: str | None, show_plan: bool, scalar: bool) -> None:
    """Emit idiomatic Ascend C for FILE (after --passes), for the emulator or CANN."""
    if output:
        check_output_path(output, "-o", inputs=(file,))
    if harness_dir:
        check_harness_dir(harness_dir, output, file)
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    _, em = emit_for_cli(file, kernel, pipeline, target, select=not scalar)
    write_emitted(em, output, harness_dir)
    if show_plan and em.plan is not None:
        click.echo(em.plan.summary(), err=True)


@click.command("emulator")
@click.option("--cflags", "show_cflags", is_flag=True, help="Print the g++ flags that build Ascend C against the emulator.")
@click.option("--target", "target_name", default=None, metavar="NAME",
              help="Size local memories from this target's table (default: the 910B sizes compiled in).")
@target_file_option
@handle_errors
def emulator_cmd(show_cflags: bool, target_name: str | None) -> None:
    """The clean-room Ascend C emulator: `g++ $(ascx emulator --cflags) k.cpp -o k && ./k`."""
    from .emulator import cflags, include_dir

    if not show_cflags:
        click.echo(f"ascx Ascend C emulator: headers in {include_dir()}\n"
                   "build a kernel: g++ $(ascx emulator --cflags) -Wall -Wextra -Werror my_kernel.cpp -o k && ./k")
        return
    scope = None
    if target_name or target_file():
        t = load_target(target_name)
        scope = {s.upper(): int(t.scopes[s].usable.value) for s in ("ub", "l1", "l0a", "l0b", "l0c")}
    click.echo(" ".join(cflags(scope)))


def register(group: click.Group) -> None:
    group.add_command(emit_cmd)
    group.add_command(emulator_cmd)
