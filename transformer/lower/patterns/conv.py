"""Pattern `conv` (phases): a `@conv` convolution nest (marked by the `conv_gemm` pass) as an
implicit GEMM on the cube over every AIC (`conv.py`: img2col gathered during GM -> L1). The
nest is matched structurally (`conv.match_conv`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class Conv:
    name = "conv"
    site = "phase"
    summary = "a @conv convolution nest as an implicit GEMM on the cube over every AIC"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        from ..conv import blocks_of, match_conv

        nest = ctx.loop
        bl = blocks_of(nest) if isinstance(nest, ir.For) else None
        if bl is None:
            return Reason(self.name, "not marked @conv (the conv_gemm pass marks a convolution nest)")
        cv = match_conv(ctx.low.kernel, nest)  # type: ignore[union-attr]
        if isinstance(cv, str):
            return Reason(self.name, cv)
        return Match(self.name, (cv, bl))

    def price(self, m: Match, ctx: Ctx) -> float:
        return 0.0  # asked for by its pass: the only whole-phase pattern a @conv nest matches

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data  # the caller records it (Lowering.convs) and lowers the phase with conv.py


PATTERN = Conv()
