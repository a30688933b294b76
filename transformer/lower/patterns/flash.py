"""Pattern `flash` (the kernel): an attention kernel marked `@flash` (by the
`flash_attention` pass) as one FlashAttention mix kernel — QKᵀ and P·V on the cube, the
online softmax on the vector cores, pipelined (`flash.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class Flash:
    name = "flash"
    site = "kernel"
    summary = "a @flash attention kernel as one FlashAttention mix kernel (cube matmuls, vector online softmax)"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        from ..flash import flash_fits, match_flash, with_annotation

        ann = ctx.loop.annotation("flash")
        if ann is None:
            return Reason(self.name, "not marked @flash (the flash_attention pass marks an attention kernel)")
        low = ctx.low
        assert low is not None
        fa = match_flash(low.kernel)
        if isinstance(fa, str):
            return Reason(self.name, str(fa))
        fa = with_annotation(fa, ann)
        wide = low.wide_tensors(low.kernel.body)
        if wide:
            return Reason(self.name, wide)
        why = flash_fits(fa)
        if why is not None:
            return Reason(self.name, why)
        return Match(self.name, fa)

    def price(self, m: Match, ctx: Ctx) -> float:
        return 0.0  # asked for by its pass: the only kernel-site pattern

    def emit(self, m: Match, ctx: Ctx) -> object:
        return m.data  # the caller lowers the kernel as one mix phase (flash.py)


PATTERN = Flash()
