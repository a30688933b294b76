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
        params: ClassVar[Params] = Names("loops", Loop(), minimum=2)  # passes/params.py
        loops: tuple[str, ...] = ()

        def run(self, kernel, target, trace): ...  # the rewrite; raises PassError when illegal
        def space(self_or_cls, kernel, target): ... # the legal concrete instances here

Pipeline text, MLIR-style: `fuse,tile{qk.i=64,qk.j=128},interchange{qk.j,qk.k},unroll{qk.k=4}`.
Each `{...}` item is `key=value` or a bare `key`; `from_args` receives them as `Arg`s
(`(key, value_or_None)` pairs with their columns) in order and hands them to the pass's
parameter schema (`params`), which also prints (`to_text`) and documents (`params_doc`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Iterable, Sequence

from transformer import ir
from transformer.check import check_kernel
from transformer.targets import Target, resolve_target

from .params import Arg, Keywords, Params
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
    note: str | None = None  # something the user should know although the pass did its work

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

    # ---- parameters: declared once, as a schema (passes/params.py) ------------------
    # `params` is the pass's schema (`Entry(...)`, `Map(...)`, `Names(...)`, `Keywords(...)`,
    # `NoParams()`); without one, `Keywords` over the dataclass fields. Parsing, printing,
    # `params_doc` and `check_params` all come from it.
    params: ClassVar["Params | None"] = None
    params_doc: ClassVar[str] = ""
    # Whether the pass serves every value of the ranged sizes (`size M = 256 in 1..4096`):
    # it reads sizes through `Kernel.known_sizes()` (a ranged size stays a symbol: trip
    # counts and tails become expressions of it), and `apply` re-proves its result over the
    # ranges (`check_kernel`: `bounds.check_ranged_bounds`). `run_pipeline` fixes the
    # ranges at their values before the first pass that does not.
    keeps_ranges: ClassVar[bool] = False

    @classmethod
    def schema(cls) -> "Params":
        own = cls.__dict__.get("_schema")
        if own is None:
            own = cls.params if cls.params is not None else Keywords.from_dataclass(cls)
            cls._schema = own  # type: ignore[attr-defined]
        return own

    @classmethod
    def from_args(cls, args: Args) -> "Pass":
        """Pipeline text items -> instance, by the schema."""
        return cls(**cls.schema().parse(cls.name, args))

    def to_text(self) -> str:
        """Canonical pipeline text of this instance; `parse_pipeline(p.to_text())` rebuilds it."""
        return self.schema().text(self)

    def check_params(self, kernel: ir.Kernel | None = None) -> list[str]:
        """Problems with this instance's values by the schema's kinds (and, given `kernel`,
        loops or tensors it names that the kernel lacks); empty when it is fine."""
        return self.schema().check(self, kernel)

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
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list["Pass"]:
        """Concrete instances that are legal on `kernel` (the agent's action space)."""
        return []


# --------------------------------------------------------------------------------------
# registry


REGISTRY: dict[str, type[Pass]] = {}
_discovered = False


def register(cls: type[Pass]) -> type[Pass]:
    """Class decorator: make a pass available by its `name`."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    if cls.params is not None or not cls.params_doc:
        cls.params_doc = cls.schema().doc()  # the `ascx passes` column, from the schema
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


def split_pipeline(text: str) -> list[tuple[str, list[Arg]]]:
    """`a,b{x=1,y},c` -> [("a", []), ("b", [("x","1"), ("y", None)]), ("c", [])]. Each item
    is an `Arg` (a `(key, value)` pair) that also knows its key's and value's columns in
    `text`, so a parameter error can point at them."""
    out: list[tuple[str, list[Arg]]] = []
    if not text.strip():
        raise PipelineError("empty pipeline", hint="e.g. `fuse,tile{qk.i=64}`")
    pos = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    while pos < end:
        m = _ITEM.match(text, pos)
        if not m or m.end() == pos:
            raise PipelineError(f"cannot read the pipeline at column {pos + 1}: `{text[pos:pos + 20]}`",
                                ir.Loc(1, pos + 1), hint="write `pass` or `pass{key=value,...}` separated by commas")
        name, body = m.group(1), m.group(3)
        args: list[Arg] = []
        if body is not None and body.strip():
            at = m.start(3)  # 0-based offset of the current item in `text`
            for raw in body.split(","):
                item = raw.strip()
                col = at + len(raw) - len(raw.lstrip()) + 1
                if not item:
                    raise PipelineError(f"empty parameter in `{name}{{{body}}}`", ir.Loc(1, col))
                if "=" in item:
                    k, v = item.split("=", 1)
                    vcol = col + len(k) + 1 + len(v) - len(v.lstrip())
                    args.append(Arg(k.strip(), v.strip(), col, vcol))
                else:
                    args.append(Arg(item, None, col))
                at += len(raw) + 1
        out.append((name, args))
        pos = m.end()
        if pos < end:
            if text[pos] == "{":
                raise PipelineError(f"unclosed or nested `{{` at column {pos + 1} of the pipeline", ir.Loc(1, pos + 1),
                                    hint="parameters are `pass{key=value,...}`, closed by `}`")
            if text[pos] != ",":
                raise PipelineError(f"expected `,` at column {pos + 1} of the pipeline, found `{text[pos]}`",
                                    ir.Loc(1, pos + 1))
            pos += 1
            if pos >= end:
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
        if kernel.size_ranges() and not p.keeps_ranges:
            kernel = _specialise(kernel, trace, p)
        kernel = p.apply(kernel, target, trace, strict=strict)
    return kernel, trace


def _specialise(kernel: ir.Kernel, trace: list[TraceEntry], before: Pass) -> ir.Kernel:
    """Fix the ranged sizes at their values before a pass that does not keep ranges
    (`Pass.keeps_ranges`): it derives trip counts and tiles from size values (`unroll`
    needs a constant trip count), so the result serves those values only, and says so
    (docs/ir.md, "Sizes with ranges")."""
    fixed = ", ".join(f"{s.name} = {s.value}" for s in kernel.sizes if s.ranged or s.multiple)
    note = (f"the passes specialise the ranged sizes to their values ({fixed}) before `{before.name}`, which "
            "does not keep ranges: the result serves only those; a kernel without passes, or with only passes "
            "that keep ranges (" + ", ".join(sorted(n for n, c in registry().items() if c.keeps_ranges))
            + "), keeps its ranges")
    trace.append(TraceEntry("specialise", changes=[f"fixed {fixed}"], note=note))
    return kernel.specialised()
