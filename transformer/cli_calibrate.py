"""`ascx calibrate`: fit the timing model's per-pipe parameters to measured runs and write
them as a target override (`--target-file`).

    ascx calibrate runs.csv [more.csv ...] [--target T] [--target-file F] -o cal.toml [--json]
    ascx calibrate --dataset published [--target T] -o cal.toml [--json]

Inputs are calibration CSVs (`transformer.timing.calibrate.read_samples_csv`: emulator
features paired with measured busy cycles, e.g. recorded by `ascx profile --backend npu`);
the model's parameters are `transformer.timing.params.PIPE_FEATURES`, or `--params FILE.toml`
(`[PIPE] feature = "fact"` or `"1/fact"`).  With `--dataset` (a builtin name such as `published`, or a dataset TOML file) the
inputs are published kernel timings instead: every point is profiled on the emulator and
the parameters are fitted in two stages (`transformer.timing.fit_dataset`; it profiles the
points twice, minutes of CPU).  Exit 0 when the override was written, 2 on bad input
(located in the CSV or TOML file) or when no parameter could be fitted.
"""

from __future__ import annotations

import json

import click

from .cli_common import check_output_path, handle_errors, load_target, target_option, write_output_file
from .diagnostics import Source, UsageError, did_you_mean
from .ir import Loc
from .targets import Target


def _read(path: str) -> Source:
    try:
        with open(path, encoding="utf-8") as f:
            return Source(path, f.read())
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a UTF-8 text file") from None


def model_pipe_features(params_path: str | None) -> dict[str, dict[str, str]]:
    """pipe -> feature -> fact spec: from `--params`, else the timing model's."""
    if params_path is None:
        try:
            from .timing.params import PIPE_FEATURES
        except ImportError:
            raise UsageError("this build has no timing-model parameters (transformer/timing/params.py)",
                             hint="pass --params FILE.toml: [PIPE] feature = \"fact\" (or \"1/fact\" for a rate)") from None
        pipes = {p: dict(f) for p, f in PIPE_FEATURES.items()}
        try:  # whole-kernel costs: fitted on the measured totals (transformer.timing.calibrate.TOTAL)
            from .timing.params import GLOBAL_FACTS
        except ImportError:
            return pipes
        total = {k: GLOBAL_FACTS[k] for k in ("launch", "block_dispatch") if k in GLOBAL_FACTS}
        return pipes | ({"TOTAL": total} if total else {})
    import tomllib  # here, not at start-up: every command would pay ~15 ms for it

    src = _read(params_path)
    try:
        data = tomllib.loads(src.text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"--params: not valid TOML: {e}", source=src) from None
    out: dict[str, dict[str, str]] = {}
    for pipe, feats in data.items():
        if not isinstance(feats, dict) or not all(isinstance(v, str) for v in feats.values()):
            raise UsageError(f"--params: `{pipe}` must be a table of feature = \"fact\" strings",
                             _line_of(src.text, pipe), source=src, hint='e.g. [MTE2]\nbytes = "1/mte2_gm_to_ub_bytes_per_cycle"')
        out[pipe] = dict(feats)
    return out


def _line_of(text: str, word: str) -> Loc | None:
    for i, line in enumerate(text.splitlines()):
        col = line.find(word)
        if col >= 0:
            return Loc(i + 1, col + 1)
    return None


def _check_facts(pipes: dict[str, dict[str, str]], target: Target, params_path: str | None) -> None:
    known = target.all_facts()
    for feats in pipes.values():
        for spec in feats.values():
            name = spec.strip().removeprefix("1/").strip()
            if name not in known:
                src = _read(params_path) if params_path else None
                raise UsageError(f"the model's parameter `{name}` is not a fact of target {target.name}",
                                 _line_of(src.text, spec) if src else None, source=src,
                                 hint=did_you_mean(name, known) or f"see `ascx targets {target.name}`")


@click.command("calibrate")
@click.argument("results", nargs=-1, required=False, metavar="RESULTS.csv...")
@click.option("--dataset", "dataset", default=None, metavar="NAME|FILE.toml",
              help="Fit to published timings instead of CSVs: `published` (shipped) or a dataset file.")
@target_option
@click.option("-o", "--output", required=True, metavar="OVERRIDE.toml",
              help="Write the fitted parameters here (load with --target-file).")
@click.option("--params", "params_path", metavar="MODEL.toml", default=None,
              help="Model parameters to fit ([PIPE] feature = \"fact\" or \"1/fact\"); default: the timing model's.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@handle_errors
def calibrate_cmd(results: tuple[str, ...], dataset: str | None, target_name: str | None, output: str,
                  params_path: str | None, as_json: bool) -> None:
    """Fit the timing model's per-pipe parameters (bandwidths, per-instruction costs, vector
    and cube rates, launch overhead) to measured runs by non-negative least squares, print
    the error per pipe before/after and the rank correlation of total time across kernels,
    and write the fitted values as a target override."""
    from .timing.calibrate import CalibrationInputError, calibrate, override_text, read_samples_csv

    if dataset is not None:
        if results or params_path:
            raise UsageError("--dataset fits the published points: give no RESULTS.csv and no --params",
                             hint="ascx calibrate --dataset published -o cal.toml")
        _calibrate_dataset(dataset, target_name, output, as_json)
        return
    if not results:
        raise UsageError("nothing to fit: give RESULTS.csv files or --dataset", hint="ascx calibrate --dataset published -o cal.toml")
    check_output_path(output, "-o", inputs=results, suffix=".toml")
    target = load_target(target_name)
    pipes = model_pipe_features(params_path)
    _check_facts(pipes, target, params_path)
    samples = []
    for path in results:
        src = _read(path)
        try:
            samples += read_samples_csv(src.text, float(target.clock_mhz))
        except CalibrationInputError as e:
            raise UsageError(e.message, Loc(e.line, e.col), source=src,
                             hint=e.hint or "columns: kernel,pipe,measured_cycles (or measured_us),<features...> (docs/npu.md)") from None
    if not samples:
        raise UsageError("no runs in " + ", ".join(results), hint="each CSV row is one pipe of one run (docs/npu.md)")
    report = calibrate(samples, target, pipes)
    if not report.values():
        raise UsageError("no parameter could be fitted: no run has a non-zero feature the model prices",
                         hint="the CSV feature columns must be named as in the model's parameters (--params)")
    write_output_file(output, override_text(report, results))
    if as_json:
        click.echo(json.dumps(report.to_json() | {"output": output}, indent=2))
    else:
        click.echo(report.format())
        click.echo(f"wrote {output}: use it with --target-file {output}")


def _calibrate_dataset(dataset: str, target_name: str | None, output: str, as_json: bool) -> None:
    """`--dataset`: profile the points, fit, write the override (facts marked calibrated,
    each with the points it came from)."""
    from .timing.dataset import DatasetError, load_dataset, profile_point
    from .timing.fit_dataset import calibrate_dataset, dataset_override_text, prior_target

    check_output_path(output, "-o", suffix=".toml")
    try:
        points = load_dataset(dataset)
    except DatasetError as e:
        raise UsageError(str(e), hint="--dataset published, or a TOML file of [[point]] tables (docs/timing.md)") from None
    target = prior_target(target_name or (load_target(None).name))
    try:
        cal, _, _ = calibrate_dataset(points, target, profile_point)
    except DatasetError as e:
        raise UsageError(str(e), hint="the dataset's `ir` points need the source tree's examples/ folder") from None
    write_output_file(output, dataset_override_text(cal, dataset))
    if as_json:
        click.echo(json.dumps(cal.to_json() | {"output": output}, indent=2))
    else:
        click.echo(cal.format())
        click.echo(f"wrote {output}: use it with --target-file {output}")


def register(group: click.Group) -> None:
    group.add_command(calibrate_cmd)
