"""Pattern `collapsed-reduction`: a perfect 2-D nest whose statements each reduce (`+=`,
`max=`, `min=`) over both loops into one element, its operands contiguous over both loops:
one vector instruction sequence over all the nest's elements and one reduction of them
(`vector.match_straight(total=True)`).

Why: group norm's statistics `mu += f32(X_ub[cc, y, x])` over a channel's H x W plane went
one 64-element row at a time (`vector-1d` on `x`: a ReduceSum and a scalar add per row);
`collapsed-2d` refuses reductions (a row reduction over the outer loop would need one
result per row). Here the target depends on neither loop, so the rows are one vector."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._vector import ItemsPriced, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class CollapsedReduction(ItemsPriced):
    name = "collapsed-reduction"
    site = "nest"
    summary = ("a perfect 2-D nest reducing into one element, contiguous over both loops: one vector "
               "over all its elements, one reduction")

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth != 2 or not desc.only_assigns:
            return Reason(self.name, "not a perfect 2-D nest of assignments")
        from ..vector import match_straight

        return outcome(self.name, match_straight(ctx.pe, ctx.loop, ctx.depth, total=True))

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..vector import commit_straight

        return commit_straight(ctx.pe, ctx.loop, m.data)


PATTERN = CollapsedReduction()
