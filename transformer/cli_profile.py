"""`ascx profile`: how fast a kernel runs on the emulator's pipe-level timing model.

    ascx profile FILE|DIR [--passes P] [--size N=V]... [--target T] [--json] [--trace out.json] [--svg out.svg]
                 [--full | --timing-only] [--timeout SECONDS] [ARGS]...
    ascx profile FILE --passes P --shapes 'S=128;S=1000'      # one line per shape

FILE is an `.ir` kernel (emitted after --passes) or a hand-written Ascend C `.cpp` with its
own `main`; DIR a sample folder (its `.cpp` defining `main` plus the kernel files) or an op
project (op_host/ + op_kernel/, run through the generated driver as `ascx emulator build`
does: ARGS give its input shapes and attributes), so all are measured on the same model
(`transformer.timing`). ARGS go to a hand-written program. Hand-written code is built without
`-Werror` (its warnings are shown) and runs the arithmetic by default (it may check its own
results); an `.ir` kernel runs timing-only by default (same cycles, faster).  The emulator
run stops after `--timeout` seconds (default `DEFAULT_TIMEOUT_S`; a scalar kernel at a
realistic size can run for many minutes), with a progress line on stderr while it runs
(`transformer/progress.py`).  Exit codes: 0 ok, 1 the kernel has sync hazards (reported
with both source lines), 2 bad input or a resource limit (the time limit, host memory for
GM), 3 internal error.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .cli_common import (
    backend_option,
    device_option,
    npu_toolchain,
    CheckFailed,
    auto_sync_flags,
    check_output_path,
    define_flags,
    write_output_file,
    handle_errors,
    load_kernel,
    load_target,
    echo_shapes,
    kernels_at_shapes,
    no_auto_sync_option,
    parse_shapes,
    size_option,
    target_option,
    transform_kernel,
)
from .diagnostics import UsageError
from .targets import Target

#: `--timeout` when none is given: long enough for every documented example at its default
#: sizes (seconds on the emulator), short enough that a forgotten scalar kernel at a
#: realistic size stops with a message saying how to raise it.
DEFAULT_TIMEOUT_S = 300.0


def format_report(r: Any) -> str:
    """The human report of a `ProfileResult`."""
    d = r.details
    mode = "timing-only" if d.get("timing_only") else "full run"
    lines = [f"profile of `{r.kernel}` on {r.target} (emulator, model {r.model_version}, {mode})"]
    lines.append(f"  total        {r.cycles:,.0f} cycles = {r.time_us:,.2f} us at {d.get('clock_mhz', 0):.0f} MHz"
                 f" (launch overhead {d.get('launch_cycles', 0):,.0f} cycles)")
    avail = d.get("cores_available", {})
    for l in d.get("launches", []):
        kind = "AIC groups" if l["mode"] in ("AIC", "MIX") else "AIV cores"
        waves = -(-l["block_dim"] // max(1, l["slots"]))
        lines.append(f"  launch       {l['name']}: {l['mode']} mode, blockDim {l['block_dim']} on {l['slots']} {kind}"
                     f" ({waves} wave{'s' if waves != 1 else ''}); HBM-bound time {l['hbm_cycles']:,.0f} cycles"
                     f" vs cores {l['makespan']:,.0f}")
    lines.append(f"  cores used   {r.cores_used} (of {avail.get('aiv', '?')} AIV + {avail.get('aic', '?')} AIC)")
    lines.append(f"  bound        {r.bound}")
    rc = d.get("roofline_cycles", {})
    lines.append(f"  roofline     {r.roofline_us:,.2f} us (max of HBM {rc.get('hbm', 0):,.0f}, cube {rc.get('cube', 0):,.0f},"
                 f" vector {rc.get('vector', 0):,.0f} cycles over all cores); achieved/roofline = {r.ratio:,.1f}x")
    lines.append("  pipe   core  busy cycles   util")
    for p in sorted(r.pipes, key=lambda p: (-p.busy_cycles, p.core_kind, p.pipe)):
        lines.append(f"  {p.pipe:<6} {p.core_kind:<4} {p.busy_cycles:>12,.0f}  {100 * p.utilisation:5.1f}%")
    crit = d.get("critical_core")
    if crit:
        total = sum(v for k, v in crit["busy"].items())
        busiest = max(crit["busy"], key=lambda k: crit["busy"][k])
        lines.append(f"  overlap      critical core {crit['name']}: pipes busy {total:,.0f} cycles in {crit['end']:,.0f}"
                     f" elapsed ({total / crit['end'] if crit['end'] else 0:.2f}x overlap); {busiest} alone is"
                     f" {crit['busy'][busiest]:,.0f}")
    lines.append(f"  scalar       {100 * r.scalar_share:.1f}% of the critical core's time in scalar fallback"
                 " (GetValue/SetValue)")
    if r.hot_lines:
        lines.append("  hottest lines (emitted -> IR, pipe, cycles over all cores):")
        for h in r.hot_lines[:8]:
            lines.append(f"    {h.line:<18} {('-> ' + h.ir_line) if h.ir_line else '':<28} {h.pipe:<5} {h.cycles:>14,.0f}")
    if r.hazards:
        lines.append(f"  hazards      {len(r.hazards)} sync hazard(s):")
        lines.extend("    " + h.message() for h in r.hazards)
    else:
        lines.append("  hazards      none")
    return "\n".join(lines)


@click.command("profile")
@click.argument("file")
@click.argument("args", nargs=-1)
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE", help="Passes to run first (see `ascx passes`).")
@size_option
@click.option("--shapes", "shapes_text", default=None, metavar="'S=128;S=1000,T=8'",
              help="Profile an .ir kernel at each of these shapes (`;` between shapes; on top of --size): one line each.")
@target_option
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
@click.option("--trace", "trace_path", default=None, metavar="OUT.json",
              help="Write a Chrome trace-event timeline (a track per core x pipe; open in Perfetto).")
@click.option("--svg", "svg_path", default=None, metavar="OUT.svg",
              help="Also draw the timeline of the first two cores as a static SVG picture (docs, CI artifacts).")
@click.option("--full/--timing-only", "full", default=None,
              help="Run the arithmetic too, or skip it (same cycles, faster). Default: timing-only for an .ir kernel, "
                   "full for hand-written code (it may check its own results).")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="Hand-written code: define a macro for the build (e.g. -D SOC_VERSION=Ascend910B1); repeatable.")
@no_auto_sync_option
@click.option("--timeout", "timeout", type=float, default=DEFAULT_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="Stop the emulator run after SECONDS (0: no limit); hitting it is exit 2.")
@backend_option
@device_option
@click.option("--record", "record_path", default=None, metavar="RUNS.csv",
              help="With --backend npu: also profile on the emulator and append both to this calibration CSV "
                   "(the input of `ascx calibrate`).")
@handle_errors
def profile_cmd(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None, as_json: bool,
                trace_path: str | None, svg_path: str | None, full: bool | None,
                defines: tuple[str, ...], no_auto_sync: bool, timeout: float, backend: str, device: int | None,
                record_path: str | None, args: tuple[str, ...] = (), shapes_text: str | None = None) -> None:
    """Profile FILE (.ir after --passes, or a hand-written Ascend C .cpp with main) or DIR (a
    sample folder: main.cpp plus its kernels; or an op project: op_host/ + op_kernel/) on the
    pipe-level timing model: cycles, per-pipe busy time, bound, roofline, hot lines, hazards.
    ARGS go to a hand-written program (an op project's: its input shapes, as for `ascx emulator build`)."""
    if timeout < 0:
        raise UsageError(f"--timeout {timeout:g}: give a number of seconds >= 0", hint="--timeout 0 sets no limit")
    if svg_path and backend == "npu":
        raise UsageError("--svg draws the emulator's timeline; --backend npu has none (msprof measures the device)")
    shapes = parse_shapes(shapes_text)
    if shapes:
        if trace_path or svg_path or record_path or backend == "npu" or defines or no_auto_sync or args:
            raise UsageError("--shapes does not go with --trace, --svg, --record, --backend npu, -D, --no-auto-sync "
                             "or program arguments",
                             hint="profile one shape with --size for those")
        _profile_shapes(file, pipeline, sizes, shapes, load_target(target_name), as_json, full, timeout)
        return
    if trace_path:
        check_output_path(trace_path, "--trace", inputs=(file,))
    if svg_path:
        check_output_path(svg_path, "--svg", inputs=(file,), suffix=".svg")
    with _trace_file(trace_path, svg_path) as tp:
        _profile(file, pipeline, sizes, target_name, as_json, tp, full, timeout, backend, device, record_path,
                 define_flags(defines) + auto_sync_flags(no_auto_sync), args)
        if svg_path:
            _write_svg(Path(tp), Path(svg_path), file)
    if trace_path:
        click.echo(f"wrote {trace_path} (open in https://ui.perfetto.dev)", err=True)


@contextlib.contextmanager
def _trace_file(trace_path: str | None, svg_path: str | None) -> Iterator[str | None]:
    """The trace to write: the user's `--trace`, or a temporary one when only `--svg` wants it."""
    if trace_path or not svg_path:
        yield trace_path
        return
    with tempfile.TemporaryDirectory(prefix="ascx-svg-") as tmp:
        yield str(Path(tmp) / "trace.json")


def _write_svg(trace: Path, svg: Path, file: str) -> None:
    from .timing.timeline_svg import render

    write_output_file(str(svg), render(json.loads(trace.read_text()), title=Path(file).name))
    click.echo(f"wrote {svg}", err=True)


def _profile(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None, as_json: bool,
             trace_path: str | None, full: bool | None, timeout: float, backend: str, device: int | None,
             record_path: str | None, build_flags: list[str], args: tuple[str, ...] = ()) -> None:
    from .progress import ProgressLine
    from .timing.profile import profile_kernel

    if record_path and backend != "npu":
        raise UsageError("--record goes with --backend npu", hint="it pairs a measured profile with the emulator's")
    handwritten = file.endswith((".cpp", ".cc", ".cxx")) or os.path.isdir(file)
    if backend == "npu" and (trace_path or handwritten):
        raise UsageError("--backend npu profiles .ir kernels, without --trace (msprof measures the device; "
                         "see docs/npu.md)")
    if record_path:
        check_output_path(record_path, "--record", inputs=(file,), suffix=".csv")
    toolchain = npu_toolchain(backend, device, need_msprof=True)
    target = load_target(target_name)
    if handwritten:
        result = _profile_handwritten(file, pipeline, sizes, target, full, trace_path, build_flags, timeout, args)
    elif args:
        raise UsageError(f"{file}: program arguments ({' '.join(args)}) go to hand-written sources",
                         hint="an .ir kernel takes its sizes as --size NAME=INT")
    elif build_flags:
        raise UsageError("-D and --no-auto-sync apply to hand-written sources (emitted kernels carry their own flags "
                         "and are always checked without auto-sync)")
    else:
        from .driver import emit

        kernel = load_kernel(file, sizes)
        out = transform_kernel(file, kernel, pipeline, target)[0] if pipeline else kernel
        em = emit(out, target, source_name=file, pipeline=pipeline or "")
        if toolchain is not None:
            _profile_npu(out, em, target, toolchain, file=file, as_json=as_json, record_path=record_path, full=full)
            return
        progress = ProgressLine(f"profiling `{out.name}` on the emulator", timeout)
        try:
            result = profile_kernel(out, target, timing_only=not full, source_name=file, trace=trace_path, emitted=em,
                                    timeout=timeout, progress=progress)
        finally:
            progress.close()
    click.echo(json.dumps(result.to_json(), indent=2) if as_json else format_report(result))
    if result.hazards:
        raise CheckFailed()


def _profile_shapes(file: str, pipeline: str | None, sizes: tuple[str, ...], shapes: list[tuple[str, ...]],
                    target: Target, as_json: bool, full: bool | None, timeout: float) -> None:
    """`profile --shapes`: the kernel at each shape (loaded with `--size`'s checks), emitted
    and profiled; one line per shape. When every pass keeps ranges the pipeline runs once
    over the ranges and that one result is emitted at each shape (as `verify --shapes`).
    Exit 1 when any shape has sync hazards."""
    from .cli_common import one_build
    from .driver import emit
    from .gathers import kernel_has_gathers
    from .timing.profile import profile_kernel

    if file.endswith((".cpp", ".cc", ".cxx")) or os.path.isdir(file):
        raise UsageError(f"{file}: --shapes applies to .ir kernels, not to hand-written sources")
    once, at = kernels_at_shapes(file, sizes, shapes, pipeline, target)
    # one build for every shape: the kernel transformed once reads its sizes at run time
    # (timing-only runs; a gathering kernel runs with its data, so per shape)
    shared, note = one_build(file, sizes, pipeline, target) if once and not full and \
        not any(kernel_has_gathers(out) for _, _, out in at) else (None, "")
    rows = []
    for shape, _, out in at:
        em = shared or emit(out, target, source_name=file, pipeline=pipeline or "")
        rows.append((shape, profile_kernel(out, target, timing_only=not full, source_name=file, emitted=em,
                                           timeout=timeout, at_sizes=shared is not None)))
    echo_shapes(rows, as_json, f"profile {file} --passes {pipeline or '(as written)'}: {len(rows)} shape(s) on {target.name}"
                + note, once, lambda r: f"{r.cycles:,.0f} cycles = {r.time_us:,.2f} us, bound {r.bound}, {r.ratio:,.1f}x the "
                "roofline, " + (f"{len(r.hazards)} sync hazard(s)" if r.hazards else "no hazards"))
    if any(r.hazards for _, r in rows):
        raise CheckFailed()


def _profile_handwritten(file: str, pipeline: str | None, sizes: tuple[str, ...], target: Target, full: bool | None,
                         trace_path: str | None, build_flags: list[str], timeout: float, args: tuple[str, ...] = ()) -> Any:
    """Profile a hand-written `.cpp` or sample folder; its compiler warnings go to stderr."""
    from .emulator import CompileError
    from .emulator.folder import FolderError
    from .progress import ProgressLine
    from .timing.profile import ProfileError, profile_source

    if pipeline or sizes:
        raise UsageError(f"{file}: --passes and --size apply to .ir kernels, not to hand-written sources")
    if not os.path.exists(file):
        raise UsageError(f"cannot read `{file}`: no such file or folder")
    progress = ProgressLine(f"profiling {file} on the emulator", timeout)
    try:
        result = profile_source(file, target, args=args, timing_only=full is False, trace=trace_path, extra_flags=build_flags,
                                timeout=timeout, progress=progress)
    except FolderError as e:
        raise UsageError(str(e), hint="a sample folder holds main.cpp (defining main) and its kernel .cpp files; "
                                      "an op project op_host/ and op_kernel/") from None
    except CompileError as e:
        raise UsageError(f"{file}: g++ rejected the source:\n{e.stderr.strip()[:3000]}") from None
    except ProfileError as e:
        raise UsageError(f"{file}: {e}") from None
    finally:
        progress.close()
    warnings = result.details.get("warnings", "").strip()
    if warnings:
        click.echo(f"{warnings[:3000]}\nascx profile: {file}: compiled with the warnings above (not fatal)", err=True)
    return result


def _profile_npu(kernel: Any, em: Any, target: Target, toolchain: Any, *, file: str, as_json: bool,
                 record_path: str | None, full: bool) -> None:
    """`--backend npu`: build with CANN, run under msprof on the device, report what it
    measured (with --record, next to the emulator's prediction, appended to a calibration CSV)."""
    from .npu import profile_on_npu
    from .npu.report import format_npu_report, record_runs
    from .timing.profile import profile_kernel

    result = profile_on_npu(kernel, target, toolchain, source_name=file, emitted=em)
    predicted = None
    if record_path:
        predicted = profile_kernel(kernel, target, timing_only=not full, source_name=file, emitted=em)
        n = record_runs(record_path, predicted, result)
        click.echo(f"appended {n} calibration sample(s) to {record_path} (fit with `ascx calibrate {record_path}`)",
                   err=True)
    click.echo(json.dumps(result.to_json(), indent=2) if as_json else format_npu_report(result, predicted))


def register(group: click.Group) -> None:
    group.add_command(profile_cmd)
