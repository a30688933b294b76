"""Preconditions and prices the vector-nest patterns share (not a pattern itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Ctx, Match

if TYPE_CHECKING:
    from ..instr import Placed


def vector_site(ctx: Ctx) -> str:
    """Why no vector pattern applies at this loop ("" when one may)."""
    pe = ctx.pe
    if not pe.low.select:
        return "instruction selection is disabled (--scalar)"
    if pe.ph.core != "vec":
        return "the phase runs on the cube core"
    if not ctx.extra.get("vector", False):
        return ctx.extra.get("why_not_vector", "the loop is split over the workers here")
    return ""


def price_items(ctx: Ctx, items: "list[Placed] | tuple[Placed, ...]") -> float:
    """Cycles of `items` on the target's timing facts (`price.Pricer`)."""
    from ..price import Pricer

    return Pricer(ctx.pe.low.target).items(items)


class ItemsPriced:
    """Base of the patterns whose match data carries the typed instructions (`.items`):
    priced by them; `emit` hands the data back (the `inner` site's patterns: the caller
    places them)."""

    def price(self, m: Match, ctx: Ctx) -> float:
        return price_items(ctx, m.data.items)

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data
