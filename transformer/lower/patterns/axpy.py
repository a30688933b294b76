"""Pattern `axpy` (inner loops of a `distributed` nest): the inner loop `j` kept as a C++
loop around vector instructions over the outer `d` (`acc[d] += p[j] * V[j, d]`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from ._vector import price_items
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Axpy:
    name = "axpy"
    site = "inner"
    summary = "an inner loop of a distributed nest as a C++ loop around vector instructions over the outer loop"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        if any(isinstance(y, ir.For) for y in ctx.loop.body):
            return Reason(self.name, "a reduction over a nest of loops")
        from ..vector import axpy

        got = axpy(ctx.pe, ctx.extra["outer"], ctx.loop, ctx.depth)
        return outcome(self.name, got)

    def price(self, m: Match, ctx: Ctx) -> float:
        from ...intexpr import affine_extent

        x = ctx.loop
        trips = affine_extent(x.lo, x.hi, ctx.pe.low.sizes) or 1
        return trips * price_items(ctx, m.data.items)

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data


PATTERN = Axpy()
