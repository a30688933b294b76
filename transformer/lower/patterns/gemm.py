"""Pattern `gemm` (phases): a `@gemm` matmul nest (marked by the `gemm` pass; a batch loop
around it allowed) as a blocked cube kernel over every AIC (`gemm.py`: L1/L0 blocks, C
tiles round-robin). The nest is matched structurally (`gemm.match_gemm`), not by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class Gemm:
    name = "gemm"
    site = "phase"
    summary = "a @gemm matmul nest (optionally batched) as a blocked cube kernel over every AIC"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        from ..gemm import blocks_of, match_gemm

        nest = ctx.loop
        bl = blocks_of(nest) if isinstance(nest, ir.For) else None
        if bl is None:
            return Reason(self.name, "not marked @gemm (the gemm pass marks a matmul nest)")
        g = match_gemm(ctx.low.kernel, nest)  # type: ignore[union-attr]
        if isinstance(g, str):
            return Reason(self.name, g)
        return Match(self.name, (g, bl))

    def price(self, m: Match, ctx: Ctx) -> float:
        return 0.0  # asked for by its pass: the only whole-phase pattern a @gemm nest matches

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data  # the caller records it (Lowering.gemms) and lowers the phase with gemm.py


PATTERN = Gemm()
