"""User-facing errors: `FILE:LINE:COL: error: message`, the source line, a caret, a hint.

Every error a user can cause is an `AscxError` (or a subclass naming its kind). It has a
one-line form (`str(err)` / `err.short()`) for machines and logs, and a detailed form
(`err.render()`) for humans. The CLI catches `AscxError` and prints `render()`, so no
Python traceback ever reaches a user for bad input.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable

from .ir import Loc


@dataclass
class Source:
    """A source text and the name to report it under (a path, or `<stdin>`)."""

    path: str
    text: str

    def line(self, n: int) -> str:
        lines = self.text.splitlines()
        if 1 <= n <= len(lines):
            return lines[n - 1]
        return ""


class AscxError(Exception):
    """Base of every user-facing error.

    Attributes: `message` (one sentence, no location), `loc` (where, if known), `hint`
    (what would be accepted, if anything helps), `source` (for rendering the line).
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        loc: Loc | None = None,
        *,
        hint: str | None = None,
        source: Source | None = None,
        notes: Iterable[tuple[Loc | None, str]] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.hint = hint
        self.source = source
        self.notes = list(notes)

    def with_source(self, source: Source | None) -> "AscxError":
        if self.source is None:
            self.source = source
        return self

    @property
    def path(self) -> str:
        return self.source.path if self.source else ("<input>" if self.loc else "ascx")

    def short(self) -> str:
        where = self.path
        if self.loc is not None:
            where += f":{self.loc.line}:{self.loc.col}"
        return f"{where}: error: {self.message}"

    def __str__(self) -> str:
        return self.short()

    def render(self) -> str:
        out = [self.short()]
        out.extend(_snippet(self.source, self.loc))
        for loc, text in self.notes:
            where = self.path + (f":{loc.line}:{loc.col}" if loc else "")
            out.append(f"{where}: note: {text}")
            out.extend(_snippet(self.source, loc))
        if self.hint:
            out.append(f"hint: {self.hint}")
        return "\n".join(out)


def _snippet(source: Source | None, loc: Loc | None) -> list[str]:
    if source is None or loc is None:
        return []
    text = source.line(loc.line)
    if not text and loc.line > len(source.text.splitlines()):
        return []
    # Expand tabs consistently so the caret lines up.
    prefix = text[: max(loc.col - 1, 0)].expandtabs(4)
    return [f"  {text.expandtabs(4)}", "  " + " " * len(prefix) + "^"]


class ParseError(AscxError):
    """Syntax error."""


class SemanticError(AscxError):
    """Well-formed text that does not mean anything: unknown name, wrong rank, ..."""


class InterpError(AscxError):
    """The reference interpreter met a read of an unwritten element, an out-of-bounds
    index, or similar, at a statement's location."""


class UsageError(AscxError):
    """Bad command-line input that is not a source-file problem (bad --size, bad .npz)."""


class ResourceError(AscxError):
    """A limit was reached: the command's time limit (`profile --timeout`) or what the host
    can give (memory for GM tensors). Not bad input and not a bug: the hint says how to
    raise the limit. Exit 2, like usage errors."""


class PassError(AscxError):
    """A pass request that cannot be honoured. The common base of every pass refusal
    (`except PassError` catches them all); a subclass names the reason and carries its
    facts as fields, so a program (the tuner) never matches message text:

    - `UnknownLoop`: a loop name designates no loop, or several (`name`, `candidates`);
    - `BadParameter`: a parameter value out of its range (`param`, `value`, `accepted`);
    - `NotApplicable`: the kernel has no place where the pass applies as asked;
    - `DependenceViolation`: the rewrite would reverse a dependence (`dependence`);
    - `CapacityExceeded`: the buffers would not fit a scope (`scope`, `need_bytes`,
      `budget_bytes`);
    - `InvalidResult`: the pass produced a kernel that breaks an IR invariant (a bug in the
      pass, not in the input: `invariant`).

    Every refusal has `pass_name` and `loops` (the names of the loops involved). The message
    names the pass; `notes` carry the locations of the accesses that forbid it; `hint` lists
    legal alternatives. Lives here, below `passes/`, because loop addressing
    (`transformer/loops.py`) raises it too."""

    reason = "refused"

    def __init__(self, pass_name: str, message: str, loc: Loc | None = None, *,
                 loops: Iterable[str] = (), **kw: Any) -> None:
        super().__init__(f"{pass_name}: {message}", loc, **kw)
        self.pass_name = pass_name
        self.loops = tuple(loops)


class UnknownLoop(PassError):
    """A loop name that designates no loop (`candidates` empty) or several loops."""

    reason = "unknown loop"

    def __init__(self, pass_name: str, message: str, loc: Loc | None = None, *, name: str,
                 candidates: Iterable[str] = (), **kw: Any) -> None:
        super().__init__(pass_name, message, loc, loops=(name,), **kw)
        self.name = name
        self.candidates = tuple(candidates)


class BadParameter(PassError):
    """A parameter value outside what the pass accepts here."""

    reason = "bad parameter"

    def __init__(self, pass_name: str, message: str, loc: Loc | None = None, *, param: str,
                 value: Any = None, accepted: Iterable[Any] = (), **kw: Any) -> None:
        super().__init__(pass_name, message, loc, **kw)
        self.param = param
        self.value = value
        self.accepted = tuple(accepted)


class NotApplicable(PassError):
    """The kernel has no place where the pass applies as requested (not a perfect nest,
    nothing staged, a loop that never runs, already split, ...)."""

    reason = "not applicable"


class NothingToDo(NotApplicable):
    """The pass, asked without naming its target, found nothing to transform: the message
    says what it looked for and why nothing matched. `Pass.apply` turns it into a no-op
    with a note (`TraceEntry.noop`); under `--strict` it is this error (exit 2), as MLIR
    treats patterns that do not match."""

    reason = "nothing to do"


class DependenceViolation(PassError):
    """The rewrite would reverse (or break) a dependence; `dependence` is the analysis'
    object for it (`transformer/deps.py`), `None` when the obstacle is a whole-loop fact."""

    reason = "dependence"

    def __init__(self, pass_name: str, message: str, loc: Loc | None = None, *,
                 dependence: Any = None, **kw: Any) -> None:
        super().__init__(pass_name, message, loc, **kw)
        self.dependence = dependence


class CapacityExceeded(PassError):
    """The buffers the pass would create do not fit one scope's usable bytes."""

    reason = "capacity"

    def __init__(self, pass_name: str, message: str, loc: Loc | None = None, *, scope: str,
                 need_bytes: int, budget_bytes: int, **kw: Any) -> None:
        super().__init__(pass_name, message, loc, **kw)
        self.scope = scope
        self.need_bytes = need_bytes
        self.budget_bytes = budget_bytes


class InvalidResult(PassError):
    """A pass produced a kernel that breaks an IR invariant: a bug in the pass. `invariant`
    is the first broken invariant (the checker's one-line message), `kernel_text` the result."""

    reason = "invalid result"

    def __init__(self, pass_name: str, invariant: str, kernel_text: str = "", **kw: Any) -> None:
        super().__init__(pass_name, f"produced an invalid kernel: {invariant}", **kw)
        self.invariant = invariant
        self.kernel_text = kernel_text


class PipelineError(AscxError):
    """Malformed pipeline text, unknown pass, unknown parameter or bad value."""


class BadPipelineParameter(BadParameter, PipelineError):
    """A `{...}` item of the pipeline text that is not a value of the parameter's kind
    (`passes/params.py`): a `BadParameter` (fields `param`, `value`, `accepted` for
    programs) and a `PipelineError` (bad input, located at its column in the pipeline)."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, or listing them when there are few."""
    cands = sorted(set(candidates))
    close = difflib.get_close_matches(name, cands, n=1, cutoff=0.6)
    if close:
        return f"did you mean `{close[0]}`?"
    if cands and len(cands) <= 12:
        return "expected one of: " + ", ".join(f"`{c}`" for c in cands)
    return None
