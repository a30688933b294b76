"""Pattern `row-context` (row loops): the row loop kept as a C++ loop, its nests lowered row
by row sharing a row context (`vector.RowCtx`: casts and subexpressions computed once per
row, row-independent ones hoisted before the loop). Always applies: the per-row lowering
is done before the row-site choice, which prices it against `rows2d`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class RowContext:
    name = "row-context"
    site = "rows"
    summary = "a row loop as a C++ loop, its nests per row with casts and subexpressions shared per row"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        return Match(self.name, None)

    def price(self, m: Match, ctx: Ctx) -> float:
        from ..rows2d import per_row_cost

        return per_row_cost(ctx.pe, ctx.loop, ctx.extra["per_row"], ctx.extra["pre"])

    def emit(self, m: Match, ctx: Ctx) -> object:
        return None  # the caller keeps its per-row lines


PATTERN = RowContext()
