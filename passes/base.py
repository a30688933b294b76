"""The pass contract: frozen dataclasses with a `name`, typed parameters, `apply`, `space`.

A pass maps a valid `Kernel` to a valid `Kernel` that computes the same outputs. Inside
`apply` the order is always: resolve names -> check legality -> rewrite -> check the IR
invariants (done here, in `Pass.apply`, around the subclass's `run`).

A pass class:

    @register
    @dataclass(frozen=True)
    class Interchange(Pass):
        '''Swap two loops of a perfect nest. ...'''
        name: ClassVar[str] = "interchange"
        summary: ClassVar[str] = "reorder the loops of a perfect nest"
        loops: tuple[str, ...] = ()

        @classmethod
        def from_args(cls, args): ...          # pipeline text -> instance (default: keywords)
        def run(self, kernel, target, trace): ...  # the rewrite; raises PassError when illegal
        def space(self_or_cls, kernel, target): ... # the legal concrete instances here

Pipeline text, MLIR-style: `fuse,tile{qk.i=64,qk.j=128},interchange{qk.j,qk.k},unroll{qk.k=4}`.
Each `{...}` item is `key=value` or a bare `key`; `from_args` receives them as
`(key, value_or_None)` pairs in order.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Sequence

from transformer import ir
from transformer.check import check_kernel
from transformer.targets import Target, resolve_target
from transformer.diagnostics import (  # noqa: F401  (the refusal classes are re-exported for passes)
    AscxError,
    BadParameter,
    CapacityExceeded,
    DependenceViolation,
    InvalidResult,
    NotApplicable,
    NothingToDo,
    PassError,
    PipelineError,
    UnknownLoop,
    did_you_mean,
)
# Loop addressing is an IR concept (transformer/loops.py); re-exported here so passes and
# plugins that import it from `passes.base` keep working.
from transformer.loops import (  # noqa: F401  (re-exports)
    LoopRef,
    all_loops,
    get_at,
    loop_names,
    name_of_loop,
    preferred_loop_names,
    replace_at,
    resolve_loop,
)

# --------------------------------------------------------------------------------------
# trace (the errors, PassError and PipelineError, live in transformer/diagnostics.py)




@dataclass
class TraceEntry:
    """What one pass did and why: shown by `ascx transform --explain`."""

    pass_text: str
    changes: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    noop: str | None = None  # the pass had nothing to do: why (shown as a note)

    def render(self) -> str:
        lines = [f"{self.pass_text}:"]
        lines += [f"  - {c}" for c in self.changes] or [f"  - no change: {self.noop}" if self.noop else "  - no change"]
        lines += [f"  * {d}" for d in self.decisions]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------
# the base class


Args = Sequence[tuple[str, "str | None"]]


@dataclass(frozen=True)
class Pass:
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    # ---- construction from pipeline text ----------------------------------------------
    @classmethod
    def from_args(cls, args: Args) -> "Pass":
        """Default: every item is `field=value` for a dataclass field of type int, str or
        bool. Passes with loop-keyed parameters (`tile{qk.i=64}`) override this."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in args:
            if key not in fields:
                raise PipelineError(
                    f"pass `{cls.name}` has no parameter `{key}`",
                    hint=("accepted: " + ", ".join(fields)) if fields else f"`{cls.name}` takes no parameters",
                )
            kwargs[key] = _convert(cls.name, key, value, fields[key].type)
        return cls(**kwargs)

    def to_text(self) -> str:
        """Pipeline text of this instance; `parse_pipeline(p.to_text())` rebuilds it."""
        items = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v == f.default:
                continue
            items.append(f"{f.name}={_format_value(v)}")
        return self.name + ("{" + ",".join(items) + "}" if items else "")

    # ---- the work ---------------------------------------------------------------------
    def apply(self, kernel: ir.Kernel, target: "Target | str | None" = None,
              trace: list[TraceEntry] | None = None, *, strict: bool = False) -> ir.Kernel:
        """Run the pass and check the IR invariants on its result (`InvalidResult` when one is
        broken: a bug of the pass, named with the broken invariant). A pass with nothing to
        do (it raises `NothingToDo`, or returns the kernel unchanged) is a no-op whose reason
        is noted in the trace; with `strict` it is an error."""
        entry = TraceEntry(self.to_text())
        try:
            out = self.run(kernel, resolve_target(target), entry)
        except NothingToDo as e:
            if strict:
                raise
            msg = e.message.removeprefix(f"{self.name}: ")
            out, entry.noop = kernel, msg + (f"; {e.hint}" if e.hint else "")
        else:
            if out == kernel and not entry.changes:
                why = "; ".join(entry.decisions) or "it found nothing to change"
                if strict:
                    raise NothingToDo(self.name, f"nothing to do: {why}")
                entry.noop = why
        errors = check_kernel(out)
        if errors:
            from transformer.printer import print_kernel

            raise InvalidResult(self.to_text(), errors[0].message, print_kernel(out), loc=errors[0].loc)
        if trace is not None:
            trace.append(entry)
        return out

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        raise NotImplementedError(f"pass {self.name} has no run()")

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Any = None) -> list["Pass"]:
        """Concrete instances that are legal on `kernel` (the agent's action space)."""
        return []


def _convert(pass_name: str, key: str, value: str | None, ty: Any) -> Any:
    tyname = ty if isinstance(ty, str) else getattr(ty, "__name__", str(ty))
    if value is None:
        if "bool" in tyname:
            return True
        raise PipelineError(f"`{pass_name}` parameter `{key}` needs a value", hint=f"write `{key}=...`")
    if "int" in tyname and "str" not in tyname:
        try:
            return int(value)
        except ValueError:
            raise PipelineError(f"`{pass_name}` parameter `{key}` must be an integer, got `{value}`") from None
    if "bool" in tyname:
        if value.lower() in ("1", "true", "yes"):
            return True
        if value.lower() in ("0", "false", "no"):
            return False
        raise PipelineError(f"`{pass_name}` parameter `{key}` must be true or false, got `{value}`")
    return value


def _format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


# --------------------------------------------------------------------------------------
# registry


REGISTRY: dict[str, type[Pass]] = {}
_discovered = False


def register(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make a pass available by its `name`."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    REGISTRY[cls.name] = cls
    return cls


def registry() -> dict[str, type[Pass]]:
    """All passes: every module in the `passes` package, then the `ascx.passes`
    entry-point group (each entry point names a Pass subclass or a module that
    registers passes when imported)."""
    global _discovered
    if not _discovered:
        _discovered = True
        import importlib
        import pkgutil

        import passes as pkg

        for m in pkgutil.iter_modules(pkg.__path__):
            if m.name not in ("base",) and not m.name.startswith("_"):
                importlib.import_module(f"passes.{m.name}")
        from importlib.metadata import entry_points

        for ep in entry_points(group="ascx.passes"):
            obj = ep.load()
            if isinstance(obj, type) and issubclass(obj, Pass):
                register(obj)
    return REGISTRY


def get_pass(name: str) -> type[Pass]:
    reg = registry()
    if name not in reg:
        raise PipelineError(f"unknown pass `{name}`", hint=did_you_mean(name, reg) or "see `ascx passes`")
    return reg[name]


# --------------------------------------------------------------------------------------
# pipeline text

_ITEM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\{([^{}]*)\})?\s*")


def split_pipeline(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """`a,b{x=1,y},c` -> [("a", []), ("b", [("x","1"), ("y", None)]), ("c", [])]."""
    out: list[tuple[str, list[tuple[str, str | None]]]] = []
    pos = 0
    text = text.strip()
    if not text:
        raise PipelineError("empty pipeline", hint="e.g. `fuse,tile{qk.i=64}`")
    while pos < len(text):
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise PipelineError(f"cannot read the pipeline at column {pos + 1}: `{text[pos:pos + 20]}`",
                                ir.Loc(1, pos + 1), hint="write `pass` or `pass{key=value,...}` separated by commas")
        name, body = m.group(1), m.group(3)
        args: list[tuple[str, str | None]] = []
        if body is not None and body.strip():
            for item in body.split(","):
                item = item.strip()
                if not item:
                    raise PipelineError(f"empty parameter in `{name}{{{body}}}`")
                if "=" in item:
                    k, v = item.split("=", 1)
                    args.append((k.strip(), v.strip()))
                else:
                    args.append((item, None))
        out.append((name, args))
        pos = m.end()
        if pos < len(text):
            if text[pos] == "{":
                raise PipelineError(f"unclosed or nested `{{` at column {pos + 1} of the pipeline", ir.Loc(1, pos + 1),
                                    hint="parameters are `pass{key=value,...}`, closed by `}`")
            if text[pos] != ",":
                raise PipelineError(f"expected `,` at column {pos + 1} of the pipeline, found `{text[pos]}`",
                                    ir.Loc(1, pos + 1))
            pos += 1
            if pos >= len(text):
                raise PipelineError("pipeline ends with `,`", ir.Loc(1, pos))
    return out


def parse_pipeline(text: str) -> list[Pass]:
    return [get_pass(name).from_args(args) for name, args in split_pipeline(text)]


def format_pipeline(ps: Iterable[Pass]) -> str:
    return ",".join(p.to_text() for p in ps)


def run_pipeline(kernel: ir.Kernel, pipeline: str | Sequence[Pass],
                 target: "Target | str | None" = None, *, strict: bool = False) -> tuple[ir.Kernel, list[TraceEntry]]:
    """Run the passes in order; `target` is resolved once here (None: the default target),
    so every pass's `run` receives a `Target`. A pass with nothing to do is a no-op (its
    `TraceEntry.noop` says why), or with `strict` a `NothingToDo` error."""
    ps = parse_pipeline(pipeline) if isinstance(pipeline, str) else list(pipeline)
    target = resolve_target(target)
    trace: list[TraceEntry] = []
    for p in ps:
        kernel = p.apply(kernel, target, trace, strict=strict)
    return kernel, trace
