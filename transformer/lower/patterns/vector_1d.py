"""Pattern `vector-1d`: an innermost loop of assignments as one instruction sequence per
statement over the loop (`vector.match_straight`: the count-form instruction table)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._vector import ItemsPriced, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Vector1D(ItemsPriced):
    name = "vector-1d"
    site = "nest"
    summary = "an innermost loop of assignments: one vector instruction sequence per statement (count form)"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth != 1:
            return Reason(self.name, "a nest of two or more loops (collapsed-2d, interchanged)")
        if not desc.only_assigns:
            return Reason(self.name, "the loop body holds loops (distributed)")
        from ..vector import match_straight

        got = match_straight(ctx.pe, ctx.loop, ctx.depth)
        return outcome(self.name, got, explains_fallback=True)

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..vector import commit_straight

        return commit_straight(ctx.pe, ctx.loop, m.data)


PATTERN = Vector1D()
