"""`ascx tune`, `ascx explain` and `ascx db`: the tuner's command line.

    ascx tune FILE [--size N=V]... [--target T] [--budget N] [--strategy agent|random|grid|tpe]
              [--jobs J] [--executor local|ray] [--db PATH] [--seed S] [--measure M]
              [--allow PASS]... [--shapes 'N=V,...:W;...'] [--documented PIPELINE] [--space] [--explain] [--json]
              [-o tuned.ir] [--emit ascendc]
    ascx explain RUN [--db PATH] [--json]
    ascx db list|show RUN|export [--db PATH] [--json]

Exit codes as everywhere: 0 ok, 2 bad input / usage, 3 internal error.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

import click

from .cli_common import (
    check_output_path,
    handle_errors,
    load_kernel,
    load_target,
    non_negative,
    size_option,
    target_option,
    write_output_file,
)
from .diagnostics import UsageError

if TYPE_CHECKING:
    from .ir import Kernel
    from .targets import Target


def _db(path: str | None) -> Any:
    from .tune.db import TuningDB

    try:
        return TuningDB(path)
    except Exception as e:  # sqlite3.DatabaseError, OSError
        raise UsageError(f"--db {path}: cannot open the tuning database: {e}",
                         hint="give a writable path to a tuning database (or a new file)") from None


def documented_pipeline(file: str) -> str | None:
    """The pipeline `examples/README.md` documents for FILE (when FILE is an example)."""
    readme = os.path.join(os.path.dirname(os.path.abspath(file)), "README.md")
    name = os.path.splitext(os.path.basename(file))[0]
    try:
        text = open(readme, encoding="utf-8").read()
    except OSError:
        return None
    m = re.search(rf"^\|\s*`{re.escape(name)}\.ir`\s*\|\s*`([^`]+)`\s*\|", text, re.M)
    return m.group(1) if m else None


def _measurer(kind: str) -> Any:
    from .tune.measurers import EstimateMeasurer, default_measurer

    if kind == "estimate":
        return EstimateMeasurer()
    m = default_measurer()
    if kind == "emulator" and m.name != "emulator":
        raise UsageError("--measure emulator: the emulator profiler is not available in this build",
                         hint="use --measure estimate (the analytic model)")
    return m


class _Bar:
    """A one-line progress bar on stderr (only on a terminal)."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, p: Any) -> None:
        width = 24
        n = int(width * min(1.0, p.done / max(1, p.budget)))
        best = f"{p.best_us:.3f} us" if p.best_us is not None else "-"
        sys.stderr.write(f"\r[{'#' * n}{'.' * (width - n)}] {p.done}/{p.budget}  best {best}  "
                         f"{p.per_minute:.1f} eval/min ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def _fmt(us: float | None) -> str:
    return f"{us:.3f} us" if us is not None else "failed"


@click.command("tune")
@click.argument("file")
@size_option
@target_option
@click.option("--budget", type=int, default=20, show_default=True, help="Distinct kernels to evaluate (past evaluations in the DB count).")
@click.option("--strategy", type=click.Choice(["agent", "random", "grid", "tpe"]), default="agent", show_default=True)
@click.option("--jobs", type=int, default=1, show_default=True, help="Evaluations in parallel (process pool, or Ray tasks in flight).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--db", "db_path", metavar="PATH", default=None, help="Tuning database (default: $ASCX_TUNE_DB or ~/.cache/ascx/tune.sqlite).")
@click.option("--seed", type=int, default=0, callback=non_negative, show_default=True)
@click.option("--measure", "measure", type=click.Choice(["auto", "emulator", "estimate"]), default="auto", show_default=True,
              help="auto: the emulator profiler when available, else the analytic estimate.")
@click.option("--allow", "allow", metavar="PASS", multiple=True,
              help="Let the search use this precision-changing pass (repeatable: round_operand, reciprocal); each "
                   "candidate using it is verified against the interpreter at the outputs' tolerance.")
@click.option("--shapes", "shapes", metavar="SHAPES", default=None,
              help="Tune one pipeline for a set of sizes, minimising the weighted time: 'S=512,D=64:3;S=1024,D=64:1' "
                   "(NAME=V,... as --size, ':weight' default 1); re-checked (capacity + verify) at each.")
@click.option("--documented", metavar="PIPELINE", default=None, help="Pipeline to compare with (default: the one examples/README.md documents for FILE).")
@click.option("--space", "show_space", is_flag=True,
              help="Print the search space (each knob, its masked domain, the space's size; the staged pass sequences); "
                   "measure nothing.")
@click.option("--explain", "explain_", is_flag=True, help="Explain the choice (ablation, bounds, pruned alternatives, top five).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@click.option("-o", "--output", metavar="PATH", default=None, help="Write the tuned kernel (.ir, or Ascend C with --emit ascendc).")
@click.option("--emit", type=click.Choice(["ir", "ascendc"]), default="ir", show_default=True, help="What -o receives.")
@handle_errors
def tune_cmd(file: str, sizes: tuple[str, ...], target_name: str | None, budget: int, strategy: str, jobs: int,
             executor: str, db_path: str | None, seed: int, measure: str, allow: tuple[str, ...], shapes: str | None,
             documented: str | None, show_space: bool, explain_: bool, as_json: bool, output: str | None,
             emit: str) -> None:
    """Choose the pass pipeline for FILE by measured latency; every evaluation is stored in
    the tuning DB (a tuned shape answers at once, an interrupted tune resumes)."""
    from .tune.precision import PRECISION_PASSES
    from .tune.tuner import tune

    for a in allow:
        if a not in PRECISION_PASSES:
            raise UsageError(f"--allow {a}: not a precision-changing pass",
                             hint=f"--allow takes one of: {', '.join(PRECISION_PASSES)} (the other passes are always searched)")
    if budget < 1:
        raise UsageError(f"--budget must be at least 1, got {budget}")
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if output:
        check_output_path(output, "-o", inputs=(file,))
    if emit == "ascendc" and not output:
        raise UsageError("--emit ascendc needs -o PATH", hint="e.g. -o tuned.cpp")
    if shapes is not None:
        _tune_shapes(file, sizes, shapes, target_name, budget, strategy, db_path, seed, measure, allow, as_json,
                     jobs=jobs, executor=executor, explain_=explain_, output=output, emit=emit)
        return
    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    if show_space:
        click.echo(_space_text(kernel, target, tuple(dict.fromkeys(allow)), as_json))
        return
    measurer = _measurer(measure)
    if strategy == "tpe":
        try:
            import optuna  # noqa: F401
        except ImportError:
            raise UsageError("--strategy tpe needs optuna", hint="pip install optuna") from None
    if executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError("--executor ray needs ray", hint="pip install 'ascx[ray]'") from None
    doc = documented if documented is not None else documented_pipeline(file)
    if doc:
        from passes.base import parse_pipeline

        parse_pipeline(doc)  # a malformed --documented is a usage error (located)
    db = _db(db_path)
    bar = _Bar() if (not as_json and sys.stderr.isatty()) else None
    try:
        res = tune(kernel, target, budget=budget, strategy=strategy, measurer=measurer, db=db, seed=seed,
                   jobs=jobs, executor=executor, documented=doc or None, progress=bar, allow=tuple(dict.fromkeys(allow)))
    finally:
        if bar is not None:
            bar.close()
    expl = None
    if explain_:
        from .tune.explain import explain

        expl = explain(res, measurer, db)
    if output and res.best is not None:
        _write_tuned(output, emit, res.best.kernel, target, file, res.best.pipeline)
    if as_json:
        d = res.to_json()
        if expl is not None:
            d["explanation"] = expl.to_json()
        click.echo(json.dumps(d, indent=2))
    else:
        click.echo(_report(res))
        if expl is not None:
            click.echo(expl.render())
    db.close()


SPACE_SECONDS = 15.0  # `--space` enumerates the staged tree for at most this long (then: size is a lower bound)


def _space_text(kernel: "Kernel", target: "Target", allow: tuple[str, ...], as_json: bool) -> str:
    """`ascx tune --space`: the knob space and the staged space as data (no measurement)."""
    from .tune.knobs import KnobSpace
    from .tune.precision import stages_for
    from .tune.space import DEFAULT_STAGES, SearchSpace

    staged = SearchSpace(kernel, target, stages_for(allow, DEFAULT_STAGES))
    ks = KnobSpace.build(kernel, target, allow, space=staged)
    d = ks.describe()
    st = staged.describe(seconds=SPACE_SECONDS)
    d["staged"] = st
    if as_json:
        return json.dumps(d, indent=2)
    out = [f"search space of `{kernel.name}`: {d['size']:,} points, the product of {len(d['knobs'])} knobs' domains "
           "(the tile:LOOP sizes under tile=sizes); a combination the passes refuse or the capacity proof does not "
           "show to fit is pruned when reached"]
    for k in d["knobs"]:
        dom = k["domain"]
        out.append(f"  {k['knob']}: {len(dom)} choices: " + ", ".join(dom[:8]) + (" ..." if len(dom) > 8 else ""))
    out.append(f"staged pass sequences: {'' if st['complete'] else 'at least '}{st['size']} distinct candidate "
               f"kernels ({st['pruned']} pass instances pruned by legality or capacity)")
    for k in st["knobs"]:
        dom = k["domain"]
        out.append(f"  {k['stage']}: {len(dom)} choices: " + ", ".join(dom[:8]) + (" ..." if len(dom) > 8 else ""))
    if not st["complete"]:
        out.append(f"  (enumeration stopped after {SPACE_SECONDS:g} s or {st['size']} candidates: the domains seen so far)")
    return "\n".join(out)


def _write_tuned(output: str, emit: str, kernel: "Kernel", target: "Target", file: str, pipeline: str) -> None:
    """`-o`: the tuned kernel as `.ir`, or its Ascend C with `--emit ascendc`."""
    if emit == "ascendc":
        from .codegen import emit_ascendc

        write_output_file(output, emit_ascendc(kernel, target, source_name=file, pipeline=pipeline).source)
    else:
        from .printer import print_kernel

        write_output_file(output, print_kernel(kernel))


def _tune_shapes(file: str, sizes: tuple[str, ...], text: str, target_name: str | None, budget: int, strategy: str,
                 db_path: str | None, seed: int, measure: str, allow: tuple[str, ...], as_json: bool, *, jobs: int = 1,
                 executor: str = "local", explain_: bool = False, output: str | None = None, emit: str = "ir") -> None:
    """`ascx tune FILE --shapes ...` (transformer/tune/shapes.py); `-o` writes the winner at
    the heaviest shape (the sizes the search ran at)."""
    from .tune.shapes import parse_shapes, tune_shapes

    try:
        parsed = parse_shapes(text)
    except ValueError as e:
        raise UsageError(f"--shapes: {e}", hint="e.g. --shapes 'S=512,D=64:3;S=1024,D=64:1'") from None
    kernels = [load_kernel(file, sizes + s) for s, _ in parsed]
    target = load_target(target_name)
    db = _db(db_path)
    res = tune_shapes(kernels, [w for _, w in parsed], target, budget=budget, strategy=strategy,
                      measurer=_measurer(measure), db=db, seed=seed, allow=tuple(dict.fromkeys(allow)), jobs=jobs,
                      executor=executor, explain=explain_)
    written = ""
    if output and res.kernel is not None:
        _write_tuned(output, emit, res.kernel, target, file, res.best_pipeline or "")
        written = ",".join(f"{k}={v}" for k, v in sorted(res.kernel.size_values().items()))
    if as_json:
        d = res.to_json()
        if written:
            d["written"] = {"path": output, "sizes": res.kernel.size_values() if res.kernel else None}
        click.echo(json.dumps(d, indent=2))
        db.close()
        return
    if res.best_pipeline is None:
        click.echo("no pipeline is legal, fits and verifies at every shape (see `ascx db show`)")
    else:
        ratio = f" (untransformed: {res.baseline_us:.3f} us, {res.baseline_us / res.weighted_us:.2f}x)" \
            if res.baseline_us and res.weighted_us else ""
        click.echo(f"best for the set: {res.best_pipeline or '(no passes)'}  weighted {_fmt(res.weighted_us)}{ratio}")
        for e in res.per_shape:
            at = ",".join(f"{k}={v}" for k, v in sorted(e.sizes.items()))
            check = "verified" if e.verified else "not verified (too large for the interpreter)" if e.verified is None \
                else "not verified"
            click.echo(f"  {at} (weight {e.weight:.3f}): {_fmt(e.m.time_us if e.m else None)}, fits, {check}")
    click.echo(f"evaluations: {res.evaluations} pipelines x {len(kernels)} shapes; db: {res.db} (run {res.run_id})")
    if written:
        click.echo(f"wrote {output}: the tuned kernel at {written} (the heaviest shape)")
    if res.explanation is not None:
        click.echo("times below are weighted over the shapes; bounds are per shape, in the order given (" +
                   ", ".join(",".join(f"{k}={v}" for k, v in sorted(e.sizes.items())) for e in res.per_shape) + ")")
        click.echo(res.explanation.render())
    db.close()


def _report(res: Any) -> str:
    out = []
    if res.best is None:
        out.append("no candidate could be evaluated (every one failed; see `ascx db show`)")
    else:
        b = res.best_m
        out.append(f"best: {res.best.pipeline or '(no passes)'}  {_fmt(b.time_us)}  ({b.bound}-bound, {b.backend})")
        for label, m in (("documented " + (res.documented or ""), res.documented_m), ("untransformed", res.baseline_m)):
            if label.startswith("documented") and not res.documented:
                continue
            if m is not None and m.ok and b.time_us:
                out.append(f"{label}: {_fmt(m.time_us)}  (best is {m.time_us / b.time_us:.2f}x faster)")
            elif m is not None:
                out.append(f"{label}: failed: {m.error}")
        out.append(f"passes: --passes '{res.best.pipeline}'" if res.best.pipeline else "passes: (none)")
        used, chk = res.precision_choice()
        if used:
            verdict = f"verified against the interpreter: {chk.detail}" if chk and chk.ok else \
                f"NOT verified: {chk.detail if chk else 'no check'}"
            out.append(f"precision: {', '.join(used)} (allowed by --allow; {verdict})")
        elif res.allow:
            out.append(f"precision: unchanged (the best uses none of --allow {' '.join(res.allow)})")
        cb = res.carried_best()
        if cb is not None:
            out.append(f"note: the best {cb.describe()}")
    out += [f"note: {c.describe()}" for c in res.carried if c.refused]
    failed = sum(1 for _, m in res.history if not m.ok)
    out.append(f"evaluations: {res.evaluations} ({res.evaluations_new} new, {failed} failed), strategy {res.strategy}, "
               f"model {res.model_version}")
    out.append(f"db: {res.db} (run {res.run_id})")
    return "\n".join(out)


@click.command("explain")
@click.argument("run_id", type=int)
@click.option("--db", "db_path", metavar="PATH", default=None)
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def explain_cmd(run_id: int, db_path: str | None, as_json: bool) -> None:
    """Explain the choice of a stored tuning run (see `ascx db list`)."""
    from .tune.explain import explain
    from .tune.tuner import result_from_db

    db = _db(db_path)
    try:
        res, measurer, _ = result_from_db(db, run_id)
    except LookupError as e:
        raise UsageError(str(e), hint="`ascx db list` shows the runs") from None
    expl = explain(res, measurer, db)
    click.echo(json.dumps(expl.to_json(), indent=2) if as_json else expl.render())


@click.group("db")
def db_group() -> None:
    """Inspect the tuning database."""


@db_group.command("list")
@click.option("--db", "db_path", metavar="PATH", default=None)
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def db_list(db_path: str | None, as_json: bool) -> None:
    """One line per tuning run."""
    db = _db(db_path)
    runs = db.runs()
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.items() if k != "source_text"} for r in runs], indent=2))
        return
    for r in runs:
        sizes = ",".join(f"{k}={v}" for k, v in sorted(r["sizes"].items()))
        best = f"{r['best_time_us']:.3f} us" if r["best_time_us"] is not None else "-"
        click.echo(f"{r['id']:>4}  {r['kernel_name']}[{sizes}] {r['target']}  {r['strategy']} budget {r['budget']}  "
                   f"{r['status']}  best {best}  {r['best_pipeline'] or ''}")


@db_group.command("show")
@click.argument("run_id", type=int)
@click.option("--db", "db_path", metavar="PATH", default=None)
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def db_show(run_id: int, db_path: str | None, as_json: bool) -> None:
    """A run: the evaluations it used (fastest first) and its decisions."""
    db = _db(db_path)
    run = db.run(run_id)
    if run is None:
        raise UsageError(f"no run {run_id} in {db.path}", hint="`ascx db list` shows the runs")
    evs = sorted(db.run_evaluations(run_id),
                 key=lambda e: (e.measurement.time_us is None, e.measurement.time_us or 0))
    decisions = db.decisions(run_id)
    if as_json:
        click.echo(json.dumps({"run": {k: v for k, v in run.items() if k != "source_text"},
                               "evaluations": [e.to_json() for e in evs], "decisions": decisions}, indent=2))
        return
    click.echo(f"run {run_id}: {run['kernel_name']} {run['sizes']} on {run['target']}, {run['strategy']}, "
               f"model {run['model_version']}, {run['status']}")
    for e in evs:
        m = e.measurement
        what = f"{m.time_us:10.3f} us  {m.bound:5}" if m.ok else f"{'failed':>13}  {m.error}"
        click.echo(f"  {what}  {e.pipeline or '(no passes)'}{'' if e.measured else '  (reused)'}")
    click.echo(f"decisions ({len(decisions)}):")
    for d in decisions:
        click.echo(f"  [{d['step']}] {d['kind']}: {d['pipeline'] or ''} {json.dumps(d['detail'])}")


@db_group.command("export")
@click.option("--db", "db_path", metavar="PATH", default=None)
@click.option("--json", "as_json", is_flag=True, help="JSON (the only format; accepted for symmetry).")
@handle_errors
def db_export(db_path: str | None, as_json: bool) -> None:
    """Every evaluation and run (with its decisions) as one JSON document."""
    from .tune.db import export

    click.echo(json.dumps(export(_db(db_path)), indent=2))


def register(group: click.Group) -> None:
    group.add_command(tune_cmd)
    group.add_command(explain_cmd)
    group.add_command(db_group)
