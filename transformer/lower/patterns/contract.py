"""Pattern `contract` (inner loops of a `distributed` nest that holds a reduction over a
nest of loops): the reduction as a 2-D tile `[d, k*]` summed by WholeReduceSum
(`contract.py`: conv2d's channel sum after `layout{X=NHWC}`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._vector import ItemsPriced
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Contract(ItemsPriced):
    name = "contract"
    site = "inner"
    summary = "a reduction over a nest of loops inside a distributed loop as a 2-D tile and WholeReduceSum"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        if not ctx.extra.get("any_deep"):
            return Reason(self.name, "the distributed loop holds no reduction over a nest of loops")
        from ..contract import contract
        from ..vector import _Sel

        got = contract(ctx.pe, ctx.extra["outer"], ctx.loop, ctx.depth, _Sel)
        return outcome(self.name, got)


PATTERN = Contract()
