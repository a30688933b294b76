"""`ascx emit` and `ascx emulator`: Ascend C out of a kernel, and the emulator's flags.

    ascx emit FILE [--passes P] [--size N=V]... [--target T] [-o kernel.cpp] [--harness DIR]
    ascx emulator --cflags

Exit codes as everywhere (`cli_common`): 0 ok, 2 bad input, 3 internal error (a compiler
error in emitted code is an internal error: it is our bug).
"""

from __future__ import annotations

from typing import Any

import click

from .cli_common import (  # noqa: F401  (check_harness_dir, write_emitted: re-exported)
    check_harness_dir,
    check_output_path,
    handle_errors,
    load_kernel,
    load_target,
    size_option,
    strict_option,
    target_file,
    target_file_option,
    target_option,
    transform_kernel,
    write_emitted,
)


def emit_for_cli(file: str, kernel: Any, pipeline: str | None, target: Any, *, select: bool = True) -> Any:
    """Run the pipeline (if any) and emit (`driver.transform`, `driver.emit`)."""
    from .driver import emit

    out = kernel
    if pipeline:
        out, _ = transform_kernel(file, kernel, pipeline, target)
    return out, emit(out, target, select=select, source_name=file, pipeline=pipeline or "")


@click.command("emit")
@click.argument("file")
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE", help="Passes to run first (see `ascx passes`).")
@size_option
@target_option
@click.option("-o", "--output", metavar="KERNEL.cpp", help="Write the Ascend C kernel here (default: stdout).")
@click.option("--harness", "harness_dir", metavar="DIR", help="Also write kernel, host harness (main.cpp) and build.sh into DIR.")
@click.option("--plan", "show_plan", is_flag=True, help="Print the lowering plan (buffers, phases, instructions) to stderr.")
@click.option("--scalar", is_flag=True, help="Disable instruction selection: every nest as scalar code (reference path).")
@strict_option
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
