"""The driver: load -> passes -> capacity -> lower -> emit -> build -> run, one function a step.

Layer 5 of `docs/architecture.md`: it is what the CLI commands (`transformer/cli*.py`) and
the public Python API (`transformer/api.py`) call, so that neither holds the steps itself
and no CLI module needs another's. Every step takes a resolved `Target` (see
`resolve_target`, the one place a target name becomes a table) and attaches the kernel's
`Source` to the located errors it lets through, so they render with the line and caret.

    loaded = load("examples/softmax.ir", {"N": 256})      # Loaded(kernel, source)
    target = resolve_target("ascend910b2")
    out, trace = transform(loaded.kernel, "fuse,tile", target, source=loaded.source)
    capacity_gate(out, target, source=loaded.source)       # raises KernelCapacityError
    emitted = emit(out, target, source_name=loaded.source.path)
    report = verify(loaded.kernel, out, trials=3, seed=0)  # interpreter before/after
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from . import ir
from .diagnostics import AscxError, PassError, PipelineError, SemanticError, Source, UsageError, did_you_mean
from . import targets
from .targets import Target, list_targets

if TYPE_CHECKING:  # annotations only: the passes and codegen are imported when used
    from passes.base import Pass, TraceEntry

    from .capacity.result import CapacityResult
    from .codegen import Emitted

# --------------------------------------------------------------------------------------
# load


@dataclass(frozen=True)
class Loaded:
    """A kernel and the text it was read from (errors found later render against it)."""

    kernel: ir.Kernel
    source: Source


def load(path: str, sizes: Mapping[str, int] | None = None, *, size_text: Sequence[str] = ()) -> Loaded:
    """Parse `path` (`-` is stdin) and apply size overrides, re-checking the result.

    `size_text` is how the overrides were spelled (`N=256`), quoted in the error when the
    overridden kernel is invalid."""
    from .parser import read_source

    return load_text(read_source(path), sizes, size_text=size_text)


def load_text(source: Source, sizes: Mapping[str, int] | None = None, *, size_text: Sequence[str] = ()) -> Loaded:
    """Like `load`, from a `Source` (a text and the name to report it under)."""
    from .check import check_kernel
    from .parser import parse

    src = source
    kernel = parse(src.text, src.path)
    if sizes:
        known = [s.name for s in kernel.sizes]
        for name in sizes:
            if name not in known:
                raise UsageError(f"--size {name}: kernel `{kernel.name}` has no size `{name}`",
                                 hint=did_you_mean(name, known) or ("sizes: " + ", ".join(known) if known else "it declares no sizes"))
        for d in kernel.sizes:
            if d.name in sizes and d.expr is not None:
                from .printer import format_expr

                raise UsageError(f"--size {d.name}: `{d.name}` is derived (`size {d.name} = {format_expr(d.expr)}`)",
                                 hint="set the sizes it is computed from; its value follows them")
        kernel = kernel.with_sizes(dict(sizes))
        errors = check_kernel(kernel)
        if not errors:  # loop bounds a pass derived at other sizes: refuse, never emit wrong counts
            from .bounds import check_bounds

            errors = check_bounds(kernel)
        # `--size` specialises: an overridden size serves its value only (its range is dropped)
        kernel = kernel.specialised(set(sizes))
        if errors:
            e = errors[0]
            spelled = size_text or [f"{k}={v}" for k, v in sizes.items()]
            raise SemanticError(f"with {' '.join('--size ' + s for s in spelled)}: {e.message}", e.loc,
                                hint=e.hint, source=src)
    return Loaded(kernel, src)


# --------------------------------------------------------------------------------------
# target


def resolve_target(target: "str | Target | None") -> Target:
    """The one place a target name becomes a `Target` (None: the default target). An
    unknown name is a `UsageError` naming the closest known target."""
    try:
        return targets.resolve_target(target)
    except LookupError:
        known = list_targets()
        raise UsageError(f"--target {target}: unknown target",
                         hint=did_you_mean(str(target).lower(), known) or ("targets: " + ", ".join(known))) from None


# --------------------------------------------------------------------------------------
# passes


def parse_pipeline(pipeline: str) -> "list[Pass]":
    """Pipeline text -> pass instances; errors render against the pipeline text."""
    from passes.base import parse_pipeline as parse

    try:
        return parse(pipeline)
    except PipelineError as e:
        raise e.with_source(Source("--passes", pipeline)) from None


def transform(kernel: ir.Kernel, pipeline: "str | Sequence[Pass]", target: Target, *,
              source: Source | None = None, strict: bool = False) -> "tuple[ir.Kernel, list[TraceEntry]]":
    """Run `pipeline` on `kernel`: the transformed kernel and what each pass did. A pass
    refusal (`PassError`) carries `source` so its location renders with the caret. A pass
    with nothing to do is a no-op (`TraceEntry.noop`), an error (`NothingToDo`) if `strict`."""
    from passes.base import run_pipeline

    ps = parse_pipeline(pipeline) if isinstance(pipeline, str) else list(pipeline)
    try:
        return run_pipeline(kernel, ps, target, strict=strict)
    except PassError as e:
        raise e.with_source(source) from None


# --------------------------------------------------------------------------------------
# capacity


def capacity_gate(kernel: ir.Kernel, target: Target, *, source: Source | None = None,
                  timeout_ms: int | None = None) -> "CapacityResult":
    """The sat `CapacityResult`, else `KernelCapacityError` (unsat or unknown) located at
    the first named buffer's declaration in `source`."""
    from .capacity.from_kernel import KernelCapacityError
    from .capacity.from_kernel import capacity_gate as gate
    from .capacity.solve import DEFAULT_TIMEOUT_MS

    try:
        return gate(kernel, target, timeout_ms=timeout_ms or DEFAULT_TIMEOUT_MS)
    except KernelCapacityError as e:
        if e.loc is not None:
            e.with_source(source)
        raise


# --------------------------------------------------------------------------------------
# emit, build, run


def emit(kernel: ir.Kernel, target: Target, *, select: bool = True, source_name: str = "",
         pipeline: str = "", runtime_sizes: bool = True) -> "Emitted":
    """Lower and render Ascend C (`Emitted`: kernel source, harness, warnings, plan); a
    ranged kernel reads its sizes at run time where it can (`codegen.emit_ascendc`)."""
    from .codegen import emit_ascendc

    emitted = emit_ascendc(kernel, target, select=select, source_name=source_name, pipeline=pipeline,
                           runtime_sizes=runtime_sizes)
    if kernel.size_ranges() and not (emitted.plan and emitted.plan.runtime_sizes):
        fixed = ", ".join(f"{s.name} = {s.value}" for s in kernel.sizes if s.ranged)
        emitted.warnings.append(f"the emitted kernel is specialised to the ranged sizes' values ({fixed}): "
                                "it serves only those")
    return emitted


# --------------------------------------------------------------------------------------
# verify: interpreter (or emitted code on the emulator) before/after


@dataclass
class OutputReport:
    """One output of a verification: the worst error over the trials, and its tolerance."""

    name: str
    dtype: str
    max_abs: float = 0.0
    max_rel: float = 0.0
    ok: bool = True
    rtol: float = 0.0
    atol: float = 0.0


@dataclass
class VerifyReport:
    """The outcome of `verify`: per-output reports, or the error the transformed kernel hit."""

    file: str
    pipeline: str
    seed: int
    trials: int
    outputs: list[OutputReport] = field(default_factory=list)
    error: str | None = None  # the transformed kernel failed to run
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and all(o.ok for o in self.outputs)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def verify_kernels(original: ir.Kernel, transformed: ir.Kernel, *, trials: int, seed: int,
                   file: str = "", pipeline: str = "") -> VerifyReport:
    """Interpret both kernels on `trials` random input sets drawn from `seed` and compare
    every output with its dtype's tolerance. Errors of the original propagate (bad
    input); errors of the transformed kernel are a verification failure."""
    import numpy as np

    from .interp import compare_outputs, random_inputs, run

    t0 = time.perf_counter()
    rep = VerifyReport(file, pipeline, seed, trials)
    by_name: dict[str, OutputReport] = {}
    for t in range(trials):
        rng = np.random.default_rng([seed, t])
        inputs = random_inputs(original, rng)
        expected = run(original, inputs)
        try:
            actual = run(transformed, inputs)
        except AscxError as e:
            rep.error = f"the transformed kernel failed in the interpreter: {e.short()}"
            break
        for d in compare_outputs(original, expected, actual):
            o = by_name.setdefault(d.name, OutputReport(d.name, getattr(d, "dtype", ""), rtol=d.rtol, atol=d.atol))
            o.max_abs = max(o.max_abs, float(d.max_abs))
            o.max_rel = max(o.max_rel, float(d.max_rel))
            o.ok = o.ok and bool(d.ok)
    rep.outputs = list(by_name.values())
    rep.seconds = time.perf_counter() - t0
    return rep


def verify_emitted_kernel(original: ir.Kernel, transformed: ir.Kernel, target: Target, *, trials: int, seed: int,
                          file: str = "", pipeline: str = "", keep_dir: str | None = None,
                          toolchain: Any = None, emitted: "Emitted | None" = None) -> VerifyReport:
    """Like `verify_kernels`, but the transformed kernel runs as emitted Ascend C compiled
    against the emulator (or, with a CANN `toolchain`, built with CANN and run on its NPU).
    A kernel that stops on the emulator or device is a verification failure; emitted code
    that does not compile with g++ raises `EmittedCodeError` (a bug of ascx). `emitted`: one
    run-time-size kernel built for every shape, run at the sizes of `original`."""
    from .codegen import EmulatorRunError, verify_emitted

    t0 = time.perf_counter()
    rep = VerifyReport(file, pipeline, seed, trials)
    try:
        if toolchain is not None:
            from .npu import NpuRunError, verify_on_npu

            try:
                diffs = verify_on_npu(transformed, target, toolchain, trials=trials, seed=seed, reference=original,
                                      keep_dir=keep_dir)
            except NpuRunError as e:
                raise EmulatorRunError(e.message, hint=e.hint) from None
        else:
            diffs = verify_emitted(transformed, target, trials=trials, seed=seed, reference=original, keep_dir=keep_dir,
                                   emitted=emitted, at_sizes=emitted is not None)
    except EmulatorRunError as e:
        where = f"NPU device {toolchain.device}" if toolchain is not None else "the emulator"
        rep.error = f"the emitted kernel failed on {where}: {e.short()}"
    else:
        rep.outputs = [OutputReport(d.name, d.dtype, d.max_abs, d.max_rel, d.ok, d.rtol, d.atol) for d in diffs]
    rep.seconds = time.perf_counter() - t0
    return rep


def verify(original: ir.Kernel, transformed: ir.Kernel, *, trials: int = 3, seed: int | None = None,
           emitted: bool = False, target: Target | None = None, file: str = "", pipeline: str = "",
           keep_dir: str | None = None, toolchain: Any = None) -> VerifyReport:
    """Compare `transformed` with `original` on fresh random inputs (a fresh seed when
    None, recorded in the report): interpreted, or with `emitted` as Ascend C on the
    emulator (on an NPU with a CANN `toolchain`, `transformer.npu.detect_cann`)."""
    if seed is None:
        import numpy as np

        seed = int(np.random.SeedSequence().entropy % (2**63))
    if emitted:
        return verify_emitted_kernel(original, transformed, resolve_target(target), trials=trials, seed=seed,
                                     file=file, pipeline=pipeline, keep_dir=keep_dir, toolchain=toolchain)
    return verify_kernels(original, transformed, trials=trials, seed=seed, file=file, pipeline=pipeline)
