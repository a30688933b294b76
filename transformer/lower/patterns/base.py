"""What an instruction-selection pattern is: a name, a site, `match(desc, ctx) -> Match |
Reason`, `emit(match, ctx)` and a price.

Why: the lowering used to choose a nest's instructions by the order of calls across four
dispatch sites, and a recogniser that bailed out said nothing. Here every pattern at a site
is tried; each refusal is a `Reason` (a sentence in the user's terms, shown by `ascx emit
--explain` and `ascx patterns`), and among the matches the cheapest on the target's timing
facts (`price.py`) is emitted, ties broken by name (`select.py`). As MLIR's
`RewritePatternSet` and TVM's tensor intrinsics do, a new shape is one more pattern file in
this package, not one more branch in a long function.

Sites (where in the lowering a choice is made; a site with no match keeps the lowering
below it: per-nest code for `kernel` and `phase`, scalar code for `nest`):
- `nest`: a loop nest of a vector or cube phase (`PhaseEmitter.for_`);
- `rows`: a row loop whose nests were lowered row by row (`PhaseEmitter.row_loop`): the
  per-row plan against a whole-tile plan;
- `inner`: an inner loop of a nest distributed over its statements (`distributed`);
- `phase`: a phase's nest marked by a pass for a whole-phase cube kernel (`@gemm`, `@conv`;
  `Lowering.split_phases`);
- `kernel`: the whole kernel as one mix kernel (`@flash`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..desc import NestDesc
    from ..lower import Lowering, PhaseEmitter
    from ... import ir

SITES = ("kernel", "phase", "nest", "rows", "inner")


@dataclass(frozen=True)
class Reason:
    """Why `pattern` does not apply: a sentence a user can act on."""

    pattern: str
    text: str
    # the scalar fallback reports this text as its cause (the 1-D selection's own refusal:
    # the message `emit` has always given); every refusal is listed by `--explain`
    explains_fallback: bool = False


@dataclass
class Match:
    """What `pattern` would emit (its own `data`), and its price in cycles once priced."""

    pattern: str
    data: Any
    cost: float | None = None


@dataclass
class Ctx:
    """Where a selection happens: the phase emitter, the nest's root loop, the C++ depth and
    whatever the site passes along (`extra`: the per-row plan at the `rows` site, the
    enclosing loop at the `inner` site)."""

    pe: "PhaseEmitter | None"  # None at the `phase` and `kernel` sites (before any phase is emitted)
    loop: "ir.For"
    depth: int
    extra: dict[str, Any] = field(default_factory=dict)
    low: "Lowering | None" = None  # the lowering (default: the phase emitter's)

    def __post_init__(self) -> None:
        if self.low is None and self.pe is not None:
            self.low = self.pe.low


def outcome(pattern: str, got: Any, explains_fallback: bool = False) -> "Match | Reason":
    """A recogniser's result as the selector's: a string is the reason it refused, anything
    else what it matched."""
    if isinstance(got, str):
        return Reason(pattern, got, explains_fallback)
    return Match(pattern, got)


class Pattern(Protocol):
    """One instruction-selection case. `match` must not change the emitter's state except
    to record what a capacity refusal needs (`PhaseEmitter.no_vector_need`); `emit` commits
    (plan records, temporaries) and returns the C++ lines."""

    name: str
    site: str
    summary: str  # one line for `ascx patterns`

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason: ...

    def emit(self, m: Match, ctx: Ctx) -> Any: ...

    def price(self, m: Match, ctx: Ctx) -> float: ...


__all__ = ["Ctx", "Match", "Pattern", "Reason", "SITES", "outcome"]


@dataclass(frozen=True)
class MarkedPhase:
    """A `phase` pattern for a nest a pass marked for a whole-phase cube kernel (`@gemm`,
    `@conv`): it matches when the nest carries its pass's blocking (`module.blocks_of`) and
    the module's structural matcher (`module.<matcher>`) accepts the nest. It is the only
    whole-phase pattern such a nest matches (price 0: asked for by its pass); `emit` hands
    back (matched nest, blocks), which the caller records and lowers with that module."""

    name: str
    module: str  # the lowering module under transformer/lower (`gemm`, `conv`)
    matcher: str  # its structural matcher (`match_gemm`, `match_conv`)
    marker: str  # the refusal for an unmarked nest
    summary: str
    site: str = "phase"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        import importlib

        from ... import ir

        mod = importlib.import_module(f"..{self.module}", __package__)
        nest = ctx.loop
        bl = mod.blocks_of(nest) if isinstance(nest, ir.For) else None
        if bl is None:
            return Reason(self.name, self.marker)
        assert ctx.low is not None
        got = getattr(mod, self.matcher)(ctx.low.kernel, nest)
        if isinstance(got, str):
            return Reason(self.name, got)
        return Match(self.name, (got, bl))

    def price(self, m: Match, ctx: Ctx) -> float:
        return 0.0

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data
