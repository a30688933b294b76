"""The `ascx` command line.

Core commands live here (`parse`, `run`); other modules add theirs through a
`register(group)` function listed in `_COMMAND_MODULES`, so each capability keeps its CLI
next to its code.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import TYPE_CHECKING, Any, Iterator

import click

from . import __version__
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
from .diagnostics import SemanticError, did_you_mean

if TYPE_CHECKING:
    import numpy as np

_COMMAND_MODULES = (
    "transformer.cli_passes",  # transform, verify, passes
    "transformer.cli_check",  # check, targets
    "transformer.cli_emit",  # emulator
    "transformer.cli_calibrate",  # calibrate
    "transformer.cli_tune",  # tune, explain, db
    "transformer.cli_profile",  # profile
)


class _Group(click.Group):
    """The `ascx` group: command-line usage errors found by click (bad option value,
    unknown option, missing argument) read like every other error, `ascx: error: ...`
    and a hint with the usage, exit 2."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _usage_errors():
            return super().invoke(ctx)


class _UsageError(click.UsageError):
    def show(self, file: Any = None) -> None:
        msg = self.format_message().strip()
        msg = (msg[0].lower() + msg[1:] if msg[:2].istitle() else msg).rstrip(".")
        hint = ""
        if self.ctx is not None:
            usage = self.ctx.get_usage().strip()
            usage = usage[0].lower() + usage[1:] if usage.startswith("Usage:") else usage
            hint = f"\nhint: {usage}; see `{self.ctx.command_path} --help`"
        click.echo(f"ascx: error: {msg}{hint}", file=file, err=file is None)


@contextlib.contextmanager
def _usage_errors() -> Iterator[None]:
    try:
        yield
    except click.UsageError as e:
        if isinstance(e, (_UsageError, getattr(click.exceptions, "NoArgsIsHelpError", _UsageError))):
            raise  # ours already, or `ascx` alone (the help text)
        raise _UsageError(e.format_message(), e.ctx) from None


@click.group(name="ascx", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ascx")
def main() -> None:
    """ascx: transform loop-nest kernels for Ascend NPUs, prove they fit, emit Ascend C."""


@main.command("parse")
@click.argument("file")
@size_option
@target_option
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@handle_errors
def parse_cmd(file: str, sizes: tuple[str, ...], target_name: str | None, quiet: bool) -> None:
    """Validate FILE (`-` for stdin) and print its canonical text. Every `local` must live
    in a memory scope the target has."""
    from .printer import print_kernel

    kernel = load_kernel(file, sizes)
    target = load_target(target_name)
    for t in kernel.buffers:
        if t.kind == "local" and t.scope not in target.scopes:
            raise SemanticError(f"target {target.name} has no scope `@{t.scope}` for local `{t.name}`", t.loc,
                                hint=did_you_mean(str(t.scope), target.scopes))
    if not quiet:
        click.echo(print_kernel(kernel), nl=False)


@main.command("run")
@click.argument("file")
@size_option
@click.option("--inputs", "inputs_path", metavar="IN.npz", help="Input arrays keyed by input name.")
@click.option("--seed", type=int, default=None, callback=non_negative, help="Seed for inputs not given in --inputs (default: fresh).")
@click.option("--save-inputs", metavar="PATH", help="Write the inputs used (given and drawn) to an .npz.")
@click.option("-o", "--output", metavar="OUT.npz", help="Write outputs keyed by output name.")
@handle_errors
def run_cmd(file: str, sizes: tuple[str, ...], inputs_path: str | None, seed: int | None,
            save_inputs: str | None, output: str | None) -> None:
    """Interpret FILE with the numpy reference interpreter."""
    import numpy as np

    from .interp import load_inputs, random_inputs, run

    for path, option in ((save_inputs, "--save-inputs"), (output, "-o")):
        if path:
            check_output_path(path, option, inputs=(file, inputs_path), suffix=".npz")
    kernel = load_kernel(file, sizes)
    given = load_inputs(kernel, inputs_path) if inputs_path else {}
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    drawn = random_inputs(kernel, np.random.default_rng(seed))
    inputs = {name: given.get(name, drawn[name]) for name in drawn}
    missing = [n for n in drawn if n not in given]
    if missing and inputs_path:
        click.echo(f"note: drew {', '.join(missing)} at random (seed {seed})", err=True)
    if save_inputs:
        _save_npz(save_inputs, inputs)
    outputs = run(kernel, inputs)
    if output:
        _save_npz(output, outputs)
    else:
        for name, arr in outputs.items():
            a = np.asarray(arr, dtype=np.float64)
            click.echo(f"{name}: {arr.dtype}{list(arr.shape)} min={a.min():.6g} max={a.max():.6g} mean={a.mean():.6g}")


def _save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    write_output_file(path, buf.getvalue())


# Start-up: nothing heavy (numpy, networkx, z3, jinja2, xml, lark) is imported at module
# level here or in the command modules; each command imports what it uses when it runs,
# so `ascx --help` and `ascx parse` start fast (tests/test_startup.py keeps it so).


def _register_extensions() -> None:
    for name in _COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue  # capability not present in this build
            raise
        mod.register(main)


_register_extensions()

if __name__ == "__main__":  # `python -m transformer.cli`
    sys.exit(main())
