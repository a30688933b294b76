"""`ascx emit` and `ascx emulator`: Ascend C out of a kernel, and the emulator's flags.

    ascx emit FILE [--passes P] [--size N=V]... [--target T] [-o kernel.cpp] [--harness DIR] [--project DIR]
    ascx emulator --cflags
    ascx emulator build DIR [--sanitize] [--no-run] [ARGS]...

Exit codes as everywhere (`cli_common`): 0 ok, 2 bad input, 3 internal error (a compiler
error in emitted code is an internal error: it is our bug).
"""

from __future__ import annotations

from typing import Any

import click

from .cli_common import (  # noqa: F401  (check_harness_dir, write_emitted: re-exported)
    CheckFailed,
    auto_sync_flags,
    check_harness_dir,
    check_output_dir,
    define_flags,
    check_output_path,
    handle_errors,
    load_kernel,
    load_target,
    no_auto_sync_option,
    size_option,
    strict_option,
    target_file,
    target_file_option,
    target_option,
    transform_kernel,
    write_emitted,
)
from .diagnostics import UsageError
from .targets import Target


def emit_for_cli(file: str, kernel: Any, pipeline: str | None, target: Target, *, select: bool = True,
                 runtime_sizes: bool = True) -> Any:
    """Run the pipeline (if any) and emit (`driver.transform`, `driver.emit`). `runtime_sizes`
    False: ranged sizes specialised at their values (a `--project` the run-time project does not serve)."""
    from .driver import emit

    out = kernel
    if pipeline:
        out, _ = transform_kernel(file, kernel, pipeline, target)
    return out, emit(out, target, select=select, source_name=file, pipeline=pipeline or "", runtime_sizes=runtime_sizes)


@click.command("emit")
@click.argument("file")
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE", help="Passes to run first (see `ascx passes`).")
@size_option
@target_option
@click.option("-o", "--output", metavar="KERNEL.cpp", help="Write the Ascend C kernel here (default: stdout).")
@click.option("--harness", "harness_dir", metavar="DIR", help="Also write kernel, host harness (main.cpp) and build.sh into DIR.")
@click.option("--project", "project_dir", metavar="DIR",
              help="Write a custom-operator project (op_host/ tiling, op_kernel/, CMake presets) into DIR.")
@click.option("--plan", "show_plan", is_flag=True, help="Print the lowering plan (buffers, phases, instructions) to stderr.")
@click.option("--scalar", is_flag=True, help="Disable instruction selection: every nest as scalar code (reference path).")
@click.option("--explain", is_flag=True,
              help="List every scalar fallback with its reason and its share of the profiled run's pipe-busy cycles "
                   "(stderr; profiles the kernel).")
@strict_option
@handle_errors
def emit_cmd(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None, output: str | None,
             harness_dir: str | None, show_plan: bool, scalar: bool, explain: bool, project_dir: str | None = None) -> None:
    """Emit idiomatic Ascend C for FILE (after --passes), for the emulator or CANN."""
    if output:
        check_output_path(output, "-o", inputs=(file,))
    if harness_dir:
        check_harness_dir(harness_dir, output, file)
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    out, em = emit_for_cli(file, kernel, pipeline, target, select=not scalar)
    if project_dir:
        from .project import project_files, write_project
        from .project_runtime import runtime_why

        why = runtime_why(out, em.plan) if em.plan is not None and em.plan.runtime_sizes else "-"
        if why is not None and out.size_ranges():  # the project is specialised to the sizes (note why)
            from .driver import emit

            if why != "-":
                click.echo(f"{file}: note: the project is specialised to the sizes: {why}", err=True)
            em = emit(out, target, select=not scalar, source_name=file, pipeline=pipeline or "", runtime_sizes=False)
        files = project_files(em, out if why is None else (out.specialised() if out.size_ranges() else out),
                              source_name=file, pipeline=pipeline or "")
        check_output_dir(project_dir, "--project", files, inputs=(file,))
        for p in write_project(project_dir, files):
            click.echo(f"wrote {p}", err=True)
        if output or harness_dir:
            write_emitted(em, output, harness_dir)
    else:
        write_emitted(em, output, harness_dir)
    if show_plan and em.plan is not None:
        click.echo(em.plan.summary(), err=True)
    if explain:
        click.echo(explain_fallbacks(em, target), err=True)


def explain_fallbacks(em: Any, target: Target) -> str:
    """The `--explain` report: each scalar fallback, why, and what it costs on the model."""
    from .timing.explain import fallback_costs

    costs, r = fallback_costs(em, target)
    if not costs:
        return "scalar fallbacks: none (every nest and copy has a vector or DMA instruction)"
    d = r.details
    lines = [f"scalar fallbacks: {len(costs)} (share of the {d['busy_cycles_all_cores']:,.0f} pipe-busy cycles summed over"
             f" the {d['cores_run']} core{'s' if d['cores_run'] != 1 else ''} of the profiled run,"
             f" which takes {r.cycles:,.0f} cycles)"]
    for c in costs:
        lines.append(f"  {c.share:6.1%}  {c.cycles:12,.0f} cycles  {c.where}: {c.reason}")
        lines.extend(refusal_lines(c.tried, "      "))
    return "\n".join(lines)


def refusal_lines(tried: tuple[tuple[str, float | None, str], ...], indent: str) -> list[str]:
    """What each pattern said at a nest that went scalar: the missing pattern is one that
    would accept it (docs/lowering.md, "Adding a pattern")."""
    if not tried:
        return []
    out = [f"{indent}no pattern applies (docs/lowering.md: add one):"]
    out.extend(f"{indent}  {name}: {why}" for name, price, why in tried if price is None)
    return out


@click.group("emulator", invoke_without_command=True)
@click.option("--cflags", "show_cflags", is_flag=True, help="Print the g++ flags that build Ascend C against the emulator.")
@click.option("--target", "target_name", default=None, metavar="NAME",
              help="Size local memories from this target's table (default: the 910B sizes compiled in).")
@target_file_option
@click.pass_context
@handle_errors
def emulator_cmd(ctx: click.Context, show_cflags: bool, target_name: str | None) -> None:
    """The clean-room Ascend C emulator: `g++ $(ascx emulator --cflags) k.cpp -o k && ./k`."""
    from .emulator import cflags, include_dir

    if ctx.invoked_subcommand is not None:
        if show_cflags or target_name:
            raise UsageError("--cflags/--target go without a subcommand", hint="e.g. ascx emulator --cflags")
        return
    if not show_cflags:
        click.echo(f"ascx Ascend C emulator: headers in {include_dir()}\n"
                   "build a kernel: g++ $(ascx emulator --cflags) -Wall -Wextra -Werror my_kernel.cpp -o k && ./k\n"
                   "build and run a sample folder (main.cpp + *_custom.cpp): ascx emulator build DIR")
        return
    scope = None
    if target_name or target_file():
        t = load_target(target_name)
        scope = {s.upper(): int(t.scopes[s].usable.value) for s in ("ub", "l1", "l0a", "l0b", "l0c")}
    click.echo(" ".join(cflags(scope)))


@emulator_cmd.command("build")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--no-run", is_flag=True, help="Only build; do not run the binary.")
@click.option("--sanitize", is_flag=True, help="Build with -fsanitize=address,undefined.")
@click.option("--werror", is_flag=True, help="Build with -Wall -Wextra -Werror.")
@click.option("--timeout", type=click.FloatRange(min=1.0), default=300.0, show_default=True, help="Run time limit in seconds.")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="Define a macro for the build, as CMake would (e.g. -D SOC_VERSION=Ascend910B1); repeatable.")
@no_auto_sync_option
@click.argument("args", nargs=-1)
@handle_errors
def emulator_build_cmd(folder: str, no_run: bool, sanitize: bool, werror: bool, timeout: float, defines: tuple[str, ...],
                       no_auto_sync: bool, args: tuple[str, ...]) -> None:
    """Build a sample FOLDER (the .cpp defining main + its kernels) with the emulator flags and
    run it there (it reads input/ and writes output/). Exit 0 when it builds and exits 0,
    1 when the build or the run fails (the emulator stops a kernel that breaks a hardware rule
    with exit 3), 2 for a folder without a host program. ARGS go to the program. Hand-written
    code runs with the compiler's auto-sync (scalar unit after MTE2/MTE3/V), as bisheng's
    default; --no-auto-sync turns it off."""
    import subprocess
    from pathlib import Path

    from .emulator import CompileError
    from .emulator.folder import FolderError, build_folder, run_folder

    root = Path(folder)
    try:
        src, binary = build_folder(root, sanitize=sanitize, warnings_as_errors=werror,
                                   extra_flags=define_flags(defines) + auto_sync_flags(no_auto_sync))
    except FolderError as e:
        raise UsageError(str(e), hint="a sample folder holds main.cpp (defining main) and its *_custom.cpp kernels") from None
    except CompileError as e:
        click.echo(e.stderr.rstrip(), err=True)
        click.echo(f"ascx emulator build: {root}: compilation failed", err=True)
        raise CheckFailed() from None
    names = [str(p.relative_to(root)) if p.is_relative_to(root) else p.name for p in src.kernels]
    click.echo(f"built {root}: host {src.main.name}, sources {', '.join(names)} -> {binary}")
    if no_run:
        return
    try:
        r = run_folder(root, binary, args, timeout=timeout)
    except subprocess.TimeoutExpired:
        click.echo(f"ascx emulator build: {root}: the run exceeded {timeout:g} s", err=True)
        raise CheckFailed() from None
    if r.stdout:
        click.echo(r.stdout.rstrip())
    if r.stderr:
        click.echo(r.stderr.rstrip(), err=True)
    click.echo(f"ran {root}: exit {r.returncode}" + (" (stopped by an emulator check)" if r.returncode == 3 else ""))
    if r.returncode != 0:
        raise CheckFailed()


@click.command("patterns")
@click.argument("file", required=False)
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE", help="Passes to run first (see `ascx passes`).")
@size_option
@target_option
@handle_errors
def patterns_cmd(file: str | None, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None) -> None:
    """List the instruction-selection patterns; with FILE, what each said at each nest.

    Without FILE: each registered pattern, its site and a one-line description
    (docs/lowering.md). With FILE (after --passes): per nest, the pattern chosen, and each
    pattern tried there with its price in cycles or why it refused."""
    from .lower.patterns import REGISTRY

    if file is None:
        width = max(len(p.name) for p in REGISTRY)
        for p in REGISTRY:
            click.echo(f"{p.name:<{width}}  {p.site:<6}  {p.summary}")
        return
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    _, em = emit_for_cli(file, kernel, pipeline, target)
    click.echo(patterns_report(em.plan.nests if em.plan is not None else []))


def patterns_report(nests: list[Any]) -> str:
    """`ascx patterns FILE`: each nest the selector saw, its choice, prices and refusals."""
    out: list[str] = []
    for n in nests:
        if not n.tried:
            continue
        out.append(f"{n.where}: {n.pattern or 'scalar (no pattern applies)'}")
        if n.shape:
            out.append(f"  shape: {n.shape}")
        out.extend(_tried_lines(n.tried, "  "))
        for var, tried in n.inner_tried:
            out.append(f"  inner loop `{var}`:")
            out.extend(_tried_lines(tried, "    "))
    return "\n".join(out) if out else "no nest went through the pattern selector"


def _tried_lines(tried: tuple[tuple[str, float | None, str], ...], indent: str) -> list[str]:
    return [f"{indent}{name:<14} " + (f"matches, about {price:,.0f} cycles" if price is not None else f"refuses: {why}")
            for name, price, why in tried]


def register(group: click.Group) -> None:
    group.add_command(emit_cmd)
    group.add_command(patterns_cmd)
    group.add_command(emulator_cmd)
