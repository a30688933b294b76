"""Pattern `rows2d` (row loops): the rows of a row loop as one 2-D tile (or groups of rows),
per-row statistics as row vectors, in a few mask/repeat instructions (`rows2d.py`: softmax
and layernorm rows). Chosen when cheaper than the per-row plan (`row-context`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class Rows2D:
    name = "rows2d"
    site = "rows"
    summary = "a row loop's rows as one 2-D tile, per-row statistics as row vectors (mask/repeat form)"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        if not ctx.extra.get("same_queues", True):
            return Reason(self.name, "the row body acquires a queue (a staged load inside the row loop)")
        from ..rows2d import match_tile

        got = match_tile(ctx.pe, ctx.loop, ctx.depth, ctx.extra["tmp_before"])
        if isinstance(got, str):
            return Reason(self.name, got)
        return Match(self.name, got)

    def price(self, m: Match, ctx: Ctx) -> float:
        return m.data.cost

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..rows2d import commit_tile, per_row_cost

        row_cost = per_row_cost(ctx.pe, ctx.loop, ctx.extra["per_row"], ctx.extra["pre"])
        return commit_tile(ctx.pe, ctx.loop, m.data, row_cost, ctx.depth)


PATTERN = Rows2D()
