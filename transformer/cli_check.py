"""`ascx check` (capacity proof of a kernel after a pipeline) and `ascx targets`.

Exit codes: 0 sat; 1 unsat (the explanation is printed) or unknown (solver timeout, printed
as `unknown (solver timeout after N ms)`) — the two are never conflated; 2 bad input
(syntax, unknown size/target/pass, illegal pass request).

`enforce_capacity(kernel, target)` (in `cli_common`, over `driver.capacity_gate`) is the gate
`ascx transform` calls after its pipeline: it prints the refusal and exits 1 like `ascx check`.
"""

from __future__ import annotations

import json
from typing import Any

import click

from .cli_common import (  # noqa: F401  (enforce_capacity: re-exported)
    CheckFailed,
    enforce_capacity,
    handle_errors,
    load_kernel,
    load_target,
    size_option,
    strict_option,
    target_file_option,
    target_option,
    transform_kernel,
)
from .diagnostics import UsageError, did_you_mean


def resolve_cli_target(name: str | None) -> Any:
    """`--target` value -> Target (with `--target-file` applied); an unknown name is bad
    input (exit 2) with a hint."""
    return load_target(name)


def register(group: click.Group) -> None:
    group.add_command(check_cmd)
    group.add_command(targets_cmd)


@click.command("check")
@click.argument("file")
@click.option("--passes", "pipeline", default=None, metavar="PIPELINE",
              help="Run this pass pipeline first, e.g. 'fuse,tile{qk.i=64},double_buffer'.")
@size_option
@target_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--timeout-ms", type=click.IntRange(min=1), default=None, metavar="N",
              help="Solver budget in ms (default 5000); exceeding it reports `unknown`.")
@click.option("--free", "free", multiple=True, metavar="SIZE",
              help="Leave a size symbolic: the solver looks for a value that fits "
                   "(it may only appear alone as a dim of a local). Repeatable.")
@click.option("--api-temp/--no-api-temp", "api_temp", default=None,
              help="Reserve the UB API temp area (default: when the kernel needs it).")
@strict_option
@handle_errors
def check_cmd(file: str, pipeline: str | None, sizes: tuple[str, ...], target_name: str | None,
              as_json: bool, timeout_ms: int | None, free: tuple[str, ...],
              api_temp: bool | None) -> None:
    """Prove that FILE's on-chip buffers fit the target (after --passes).

    Prints a per-scope table (buffer, dtype, shape, stages, bytes; total; usable;
    headroom).  Exit 0 when it fits, 1 when it does not (with the reason and hints) or when
    the solver times out (`unknown`), 2 on bad input."""
    from .capacity.from_kernel import (
        check_kernel_capacity,
        format_kernel_report,
        kernel_buffers,
        report_dict,
    )
    from .capacity.solve import DEFAULT_TIMEOUT_MS

    kernel = load_kernel(file, sizes)
    target = resolve_cli_target(target_name)
    known = {s.name for s in kernel.sizes}
    for f in free:
        if f not in known:
            raise UsageError(f"--free {f}: kernel `{kernel.name}` has no size `{f}`",
                             hint=did_you_mean(f, known) or None)
    text = ""
    if pipeline:
        kernel, trace = transform_kernel(file, kernel, pipeline, target)
        text = ",".join(e.pass_text for e in trace)
    budget = timeout_ms or DEFAULT_TIMEOUT_MS
    try:
        bufs = kernel_buffers(kernel, target, free=free)
        res = check_kernel_capacity(kernel, target, timeout_ms=budget, api_temp=api_temp,
                                    free=free, buffers=bufs)
    except Exception as e:  # capacity errors on malformed buffers are user errors
        from .capacity.errors import CapacityError

        if isinstance(e, CapacityError):
            raise UsageError(e.summary, hint=e.details or None) from None
        raise
    ranged = None
    if res.status == "sat" and not free:
        from .capacity.ranges import check_ranges

        ranged = check_ranges(kernel, lambda k: check_kernel_capacity(
            k, target, timeout_ms=budget, api_temp=api_temp, hints=False))
    if as_json:
        d = report_dict(kernel, res, bufs, pipeline=text)
        if ranged is not None:
            d["ranges"] = {"status": ranged.status, "at": ranged.at, "size": ranged.size, "first": ranged.first,
                           "verdict": ranged.sentence(kernel)}
        click.echo(json.dumps(d, indent=2))
    else:
        click.echo(format_kernel_report(kernel, res, bufs, pipeline=text))
        if ranged is not None:
            click.echo(f"{ranged.status}: {ranged.sentence(kernel)}")
    if res.status != "sat" or (ranged is not None and ranged.status != "sat"):
        raise CheckFailed()


@click.command("targets")
@click.argument("name", required=False)
@target_file_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def targets_cmd(name: str | None, as_json: bool) -> None:
    """List the targets, or print one target's table (every number marked documented or
    assumed, with its source)."""
    from .cli_common import target_file
    from .targets import DEFAULT_TARGET, list_targets

    if name or target_file():  # with --target-file alone: the file's target
        t = resolve_cli_target(name)
        if as_json:
            click.echo(json.dumps({"name": t.name, "arch": t.arch, "description": t.description,
                                   "default": t.name == DEFAULT_TARGET, "facts": t.to_table()},
                                  indent=2, default=str))
        else:
            click.echo(t.format_table())
            n_assumed = sum(1 for r in t.to_table() if r["status"] == "assumed")
            click.echo(f"{n_assumed} assumed value(s): confirm them on hardware "
                       f"(docs/targets.md)")
            n_cal = sum(1 for r in t.to_table() if r["status"] == "calibrated")
            if n_cal:
                click.echo(f"{n_cal} calibrated value(s) from {target_file()}")
        return
    rows = []
    for n in list_targets():
        t = resolve_cli_target(n)
        facts = t.to_table()
        rows.append({
            "name": t.name, "arch": t.arch, "default": t.name == DEFAULT_TARGET,
            "ub_usable_bytes": t.scope("ub").usable_bytes,
            "l1_usable_bytes": t.scope("l1").usable_bytes,
            "l0c_usable_bytes": t.scope("l0c").usable_bytes,
            "assumed": sum(1 for r in facts if r["status"] == "assumed"),
            "facts": len(facts), "description": t.description,
        })
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from .capacity.result import fmt_bytes

    cols = ("name", "arch", "UB", "L1", "L0C", "assumed", "description")
    data = [(r["name"] + (" (default)" if r["default"] else ""), r["arch"],
             fmt_bytes(r["ub_usable_bytes"]), fmt_bytes(r["l1_usable_bytes"]),
             fmt_bytes(r["l0c_usable_bytes"]), f"{r['assumed']}/{r['facts']}",
             r["description"]) for r in rows]
    widths = [max(len(c), *(len(d[i]) for d in data)) for i, c in enumerate(cols)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
    for d in data:
        click.echo("  ".join(v.ljust(w) for v, w in zip(d, widths)).rstrip())
    click.echo("usable bytes shown; `ascx targets NAME` for every fact and its source")
