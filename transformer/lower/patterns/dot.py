"""Pattern `dot` (inner loops of a `distributed` nest): `for k { T[.., d] += x(k) * y(d, k) }`
(QKᵀ: a score per key `d`) as whole-tile code — Mul in repeat form, column folds,
WholeReduceSum per row — with no scalar round trip per score (`vector.match_dot`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from ._vector import ItemsPriced
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Dot(ItemsPriced):
    name = "dot"
    site = "inner"
    summary = "a dot product per element of the outer loop (for k { T[d] += x(k) * y(d, k) }) as whole-tile code"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        if any(isinstance(y, ir.For) for y in ctx.loop.body):
            return Reason(self.name, "a reduction over a nest of loops (contract)")
        from ..vector import match_dot

        got = match_dot(ctx.pe, ctx.extra["outer"], ctx.loop, ctx.depth)
        return outcome(self.name, got)


PATTERN = Dot()
