"""Pattern `interchanged`: `for d { for j { T[.., d] op= e } }` with `d` the unit-stride
axis, as a C++ loop over `j` around vector instructions over `d` (the axpy form of a
matrix-vector product; `vector.match_interchanged`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._vector import price_items, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Interchanged:
    name = "interchanged"
    site = "nest"
    summary = "for d { for j { T[.., d] op= e } }: a C++ loop over j around vector instructions over d"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth != 2 or not desc.only_assigns:
            return Reason(self.name, "one loop, not a 2-D nest" if desc.depth == 1 and desc.only_assigns
                          else "not a perfect 2-D nest of assignments")
        from ..vector import match_interchanged

        got = match_interchanged(ctx.pe, [ctx.loop, ctx.loop.body[0]], ctx.depth)  # type: ignore[list-item]
        return outcome(self.name, got)

    def price(self, m: Match, ctx: Ctx) -> float:
        return price_items(ctx, [m.data[1]])

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..vector import commit_interchanged

        sel, loop = m.data
        return commit_interchanged(ctx.pe, [ctx.loop, ctx.loop.body[0]], sel, loop, ctx.depth)  # type: ignore[list-item]


PATTERN = Interchanged()
