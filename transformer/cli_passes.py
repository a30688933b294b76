"""`ascx transform`, `ascx verify`, `ascx passes`: the pass pipeline on the command line.

Exit codes as everywhere (`cli_common`): 0 ok, 1 verification mismatch, 2 bad input
(unknown pass or loop, illegal request, bad file), 3 internal error.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from .cli_common import (  # noqa: F401  (transform_kernel: re-exported)
    CheckFailed,
    backend_option,
    check_harness_dir,
    check_output_path,
    device_option,
    enforce_capacity,
    handle_errors,
    one_build,
    load_kernel,
    load_target,
    non_negative,
    npu_toolchain,
    echo_shapes,
    kernels_at_shapes,
    parse_shapes,
    size_option,
    strict_option,
    target_option,
    transform_kernel,
    write_emitted,
    write_output_file,
)
from .diagnostics import UsageError

if TYPE_CHECKING:
    from .targets import Target
from .driver import OutputReport, VerifyReport, verify_emitted_kernel, verify_kernels  # noqa: F401  (re-exported)

DEFAULT_TRIALS = 3


# --------------------------------------------------------------------------------------
# transform


@click.command("transform")
@click.argument("file")
@click.option("--passes", "pipeline", required=True, metavar="PIPELINE",
              help="Passes to run, e.g. `fuse,interchange{mm.i,mm.j},unroll{mm.k=4}` (see `ascx passes`).")
@size_option
@target_option
@click.option("-o", "--output", metavar="OUT.ir", help="Write the transformed IR here instead of stdout.")
@click.option("--force", is_flag=True, help="Allow -o to overwrite FILE itself.")
@click.option("--explain", is_flag=True, help="Print what each pass did and why (stderr when the output goes to stdout).")
@strict_option
@click.option("--emit", type=click.Choice(["ir", "ascendc"]), default="ir", show_default=True,
              help="Print the transformed IR, or the Ascend C kernel emitted from it.")
@click.option("--harness", "harness_dir", metavar="DIR",
              help="With --emit ascendc: also write the kernel, a host harness and build.sh into DIR.")
@handle_errors
def transform_cmd(file: str, pipeline: str, sizes: tuple[str, ...], target_name: str | None,
                  output: str | None, force: bool, explain: bool, emit: str, harness_dir: str | None) -> None:
    """Run a pass pipeline on FILE and print (or write) the transformed IR or Ascend C."""
    from .printer import print_kernel

    if harness_dir and emit != "ascendc":
        raise UsageError("--harness goes with --emit ascendc")
    if output:
        check_output_path(output, "-o", inputs=(file,), force=force)
    if harness_dir:
        check_harness_dir(harness_dir, output, file)
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    out, trace = transform_kernel(file, kernel, pipeline, target)
    enforce_capacity(out, target)  # refuse to hand out a kernel whose buffers do not fit (exit 1)
    if emit == "ascendc":
        from .driver import emit

        write_emitted(emit(out, target, source_name=file, pipeline=pipeline), output, harness_dir)
    elif output:
        write_output_file(output, print_kernel(out))
    else:
        click.echo(print_kernel(out), nl=False)
    if explain:
        report = "\n".join(e.render() for e in trace)
        click.echo(report, err=not output)


# --------------------------------------------------------------------------------------
# verify


def _junit(rep: VerifyReport) -> str:
    from xml.sax.saxutils import escape, quoteattr  # only here: xml.sax costs ~40 ms of start-up

    cases = []
    for o in rep.outputs:
        body = ""
        if not o.ok:
            body = (f"<failure message={quoteattr(f'{o.name}: max abs {o.max_abs:.3g}, max rel {o.max_rel:.3g}')}>"
                    f"{escape(f'rtol {o.rtol} atol {o.atol} seed {rep.seed}')}</failure>")
        cases.append(f'  <testcase classname={quoteattr(rep.file)} name={quoteattr(o.name)} time="{rep.seconds:.3f}">{body}</testcase>')
    if rep.error:
        cases.append(f'  <testcase classname={quoteattr(rep.file)} name="run"><error message={quoteattr(rep.error)}/></testcase>')
    failures = sum(1 for o in rep.outputs if not o.ok)
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            f"<testsuite name={quoteattr('ascx verify ' + rep.pipeline)} tests=\"{len(cases)}\" "
            f"failures=\"{failures}\" errors=\"{1 if rep.error else 0}\" time=\"{rep.seconds:.3f}\">\n"
            + "\n".join(cases) + "\n</testsuite>\n")


@click.command("verify")
@click.argument("file")
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE",
              help="Passes to run (see `ascx passes`); with --emitted it may be omitted (the kernel as written).")
@size_option
@target_option
@click.option("--trials", type=click.IntRange(min=1), default=DEFAULT_TRIALS, show_default=True,
              help="Random input sets to compare on.")
@click.option("--seed", type=int, default=None, callback=non_negative, help="Seed for the inputs (default: fresh, printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--junit", "junit_path", metavar="PATH", help="Also write a JUnit XML report.")
@click.option("--emitted", is_flag=True,
              help="Emit Ascend C, compile it with g++ against the emulator, run it, and compare with the interpreter.")
@click.option("--keep", "keep_dir", metavar="DIR", help="With --emitted: keep sources, binary and data in DIR.")
@click.option("--shapes", "shapes_text", default=None, metavar="'S=128;S=1000,T=8'",
              help="Verify at each of these shapes (`;` between shapes, `,` between sizes; on top of --size).")
@backend_option
@device_option
@strict_option
@handle_errors
def verify_cmd(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None, trials: int,
               seed: int | None, as_json: bool, junit_path: str | None, emitted: bool, keep_dir: str | None,
               shapes_text: str | None, backend: str, device: int | None) -> None:
    """Check that a pipeline preserves FILE's meaning: interpret the original and the
    transformed kernel on fresh random inputs and compare every output within its dtype's
    tolerance. With --emitted, the transformed kernel runs as emitted Ascend C on the
    emulator instead. With --shapes, all of that at each shape. Exit 1 on a mismatch."""
    shapes = parse_shapes(shapes_text)
    if not pipeline and not emitted:
        raise UsageError("verify needs --passes (or --emitted to check the kernel as written)",
                         hint="e.g. --passes 'fuse,tile' or --emitted")
    if keep_dir and not emitted:
        raise UsageError("--keep goes with --emitted")
    if backend == "npu" and not emitted:
        raise UsageError("--backend npu goes with --emitted", hint="e.g. ascx verify K.ir --passes tile --emitted --backend npu")
    if junit_path:
        check_output_path(junit_path, "--junit", inputs=(file,))
    if keep_dir and os.path.exists(keep_dir) and not os.path.isdir(keep_dir):
        raise UsageError(f"--keep {keep_dir}: is not a directory")
    if shapes and (junit_path or keep_dir):
        raise UsageError("--shapes does not go with --junit or --keep", hint="verify one shape with --size for those")
    toolchain = npu_toolchain(backend, device)
    if shapes:
        _verify_shapes(file, pipeline, sizes, shapes, load_target(target_name), trials, seed, as_json, emitted, toolchain)
        return
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    out = transform_kernel(file, kernel, pipeline, target)[0] if pipeline else kernel
    seed = _fresh_seed() if seed is None else seed
    if emitted:
        from .codegen import EmittedCodeError

        try:
            rep = verify_emitted_kernel(kernel, out, target, trials=trials, seed=seed, file=file,
                                        pipeline=pipeline or "", keep_dir=keep_dir,
                                        toolchain=toolchain)
        except EmittedCodeError as e:
            click.echo(e.render(), err=True)
            click.echo("ascx: internal error: emitted Ascend C does not compile; this is a bug in ascx", err=True)
            sys.exit(3)
    else:
        rep = verify_kernels(kernel, out, trials=trials, seed=seed, file=file, pipeline=pipeline or "")
    pipeline = (pipeline or "(as written)") + (" --emitted" if emitted else "") + (" --backend npu" if toolchain else "")
    rep.pipeline = pipeline
    if junit_path:
        write_output_file(junit_path, _junit(rep))
    if as_json:
        click.echo(json.dumps(rep.to_json(), indent=2))
    else:
        click.echo(f"verify {file} --passes {pipeline}: {trials} trial(s), seed {seed}")
        for o in rep.outputs:
            status = "ok" if o.ok else "MISMATCH"
            click.echo(f"  {o.name}: max abs err {o.max_abs:.3g}, max rel err {o.max_rel:.3g} "
                       f"(rtol {o.rtol:g}, atol {o.atol:g}) {status}")
        if rep.error:
            click.echo(f"  error: {rep.error}")
        click.echo("ok" if rep.ok else f"FAILED (reproduce with --seed {seed})")
    if not rep.ok:
        raise CheckFailed()


def _fresh_seed() -> int:
    import numpy as np

    return int(np.random.SeedSequence().entropy % (2**63))


def _verify_shapes(file: str, pipeline: str | None, sizes: tuple[str, ...], shapes: list[tuple[str, ...]],
                   target: "Target", trials: int, seed: int | None, as_json: bool, emitted: bool, toolchain: Any) -> None:
    """`verify --shapes`: the kernel loaded at each shape (the bounds and range checks of
    `--size` apply to each), verified; one line per shape, exit 1 when any fails. When
    every pass of the pipeline keeps ranges (`Pass.keeps_ranges`), the ranged kernel is
    transformed **once** and that one result runs at each shape (what serves the whole
    range is what is checked); otherwise each shape is transformed on its own. With
    --emitted each shape is built from that result at its sizes: the emitted kernel is
    specialised to its sizes (docs/codegen.md)."""
    seed = _fresh_seed() if seed is None else seed
    once, at = kernels_at_shapes(file, sizes, shapes, pipeline, target)
    shared, build_note = one_build(file, sizes, pipeline, target) if emitted and once and toolchain is None \
        else (None, "")
    reports = []
    for shape, kernel, out in at:
        if shared is not None:
            rep = verify_emitted_kernel(kernel, out, target, trials=trials, seed=seed, file=file,
                                        pipeline=pipeline or "", emitted=shared)
        elif emitted:
            rep = verify_emitted_kernel(kernel, out, target, trials=trials, seed=seed, file=file,
                                        pipeline=pipeline or "", toolchain=toolchain)
        else:
            rep = verify_kernels(kernel, out, trials=trials, seed=seed, file=file, pipeline=pipeline or "")
        reports.append((shape, rep))
    text = (pipeline or "(as written)") + (" --emitted" if emitted else "")
    echo_shapes(reports, as_json, f"verify {file} --passes {text}: {len(shapes)} shape(s), {trials} trial(s) each, "
                f"seed {seed}" + build_note, once, lambda rep: ("ok" if rep.ok else "MISMATCH" if rep.error is None else
                                                    f"error: {rep.error}")
                + f" (max rel err {max((o.max_rel for o in rep.outputs), default=0.0):.3g})")
    if not as_json:
        click.echo("ok" if all(r.ok for _, r in reports) else f"FAILED (reproduce with --seed {seed})")
    if not all(r.ok for _, r in reports):
        raise CheckFailed()


# --------------------------------------------------------------------------------------
# passes


def describe_params(cls: type) -> str:
    doc = getattr(cls, "params_doc", "")
    if doc:
        return doc
    fields = [f"{f.name}: {getattr(f.type, '__name__', f.type)}" for f in dataclasses.fields(cls)]
    return "{" + ", ".join(fields) + "}" if fields else "(no parameters)"


@click.command("passes")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@handle_errors
def passes_cmd(as_json: bool) -> None:
    """List every registered pass with its parameters and a one-line summary."""
    from passes.base import registry

    reg = registry()
    rows = [(name, describe_params(cls), cls.summary, cls.__module__) for name, cls in sorted(reg.items())]
    if as_json:
        click.echo(json.dumps([{"name": n, "params": p, "summary": s, "module": m} for n, p, s, m in rows], indent=2))
        return
    for name, params, summary, _ in rows:
        click.echo(f"{name}  {params}")
        click.echo(f"    {summary}")


def register(group: click.Group) -> None:
    group.add_command(transform_cmd)
    group.add_command(verify_cmd)
    group.add_command(passes_cmd)


_ = sys
