"""Pattern `collapsed-2d`: a perfect 2-D nest whose operands are contiguous over both loops
as one vector over all its elements (`vector.match_straight` with two loops)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._vector import ItemsPriced, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Collapsed2D(ItemsPriced):
    name = "collapsed-2d"
    site = "nest"
    summary = "a perfect 2-D nest of assignments, contiguous over both loops: one vector over all its elements"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth < 2:
            return Reason(self.name, "one loop, not a 2-D nest" if desc.only_assigns else "not a perfect 2-D nest")
        if desc.depth > 2 or not desc.only_assigns:
            return Reason(self.name, "the inner loop's body holds loops or copies")
        from ..vector import match_straight

        got = match_straight(ctx.pe, ctx.loop, ctx.depth)
        return outcome(self.name, got)

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..vector import commit_straight

        return commit_straight(ctx.pe, ctx.loop, m.data)


PATTERN = Collapsed2D()
