"""The selector: every registered pattern of a site is tried on the nest's descriptor; each
refusal is kept with its reason; among the matches the cheapest (its `price`, cycles on the
target's timing facts) is chosen, ties broken by the pattern's name (never by list order)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..desc import NestDesc, describe
from .base import Ctx, Match, Reason


@dataclass
class Selection:
    """What the selector did at one site for one nest."""

    site: str
    desc: NestDesc
    chosen: Match | None
    matches: list[Match] = field(default_factory=list)
    refusals: list[Reason] = field(default_factory=list)

    def tried(self) -> tuple[tuple[str, float | None, str], ...]:
        """(pattern, price or None when it refused, reason or "") in registry order."""
        out = [(m.pattern, m.cost, "") for m in self.matches] + [(r.pattern, None, r.text) for r in self.refusals]
        order = {p.name: i for i, p in enumerate(patterns_at(self.site))}
        return tuple(sorted(out, key=lambda t: order.get(t[0], 0)))

    def fallback_reason(self) -> str:
        """The reason a scalar fallback reports (`Reason.explains_fallback`), or ""."""
        return next((r.text for r in self.refusals if r.explains_fallback), "")


def patterns_at(site: str) -> list:  # type: ignore[type-arg]
    from . import REGISTRY

    return [p for p in REGISTRY if p.site == site]


def select(site: str, ctx: Ctx, desc: NestDesc | None = None) -> Selection:
    """Try every pattern of `site` on `ctx.loop`; the cheapest match (by name on ties)."""
    low = ctx.low
    assert low is not None
    d = desc if desc is not None else describe(ctx.loop, low.sizes, low.info, low.decls)
    matches: list[Match] = []
    refusals: list[Reason] = []
    by_name = {}
    for p in patterns_at(site):
        got = p.match(d, ctx)
        if isinstance(got, Reason):
            refusals.append(got)
            continue
        got.cost = p.price(got, ctx)
        matches.append(got)
        by_name[p.name] = p
    chosen = min(matches, key=lambda m: (m.cost, m.pattern)) if matches else None
    return Selection(site, d, chosen, matches, refusals)


def emit_chosen(sel: Selection, ctx: Ctx) -> object:
    """The chosen pattern's `emit` (the caller checks `sel.chosen`)."""
    from . import BY_NAME

    assert sel.chosen is not None
    return BY_NAME[sel.chosen.pattern].emit(sel.chosen, ctx)


__all__ = ["Selection", "emit_chosen", "patterns_at", "select"]
