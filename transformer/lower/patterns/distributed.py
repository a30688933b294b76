"""Pattern `distributed`: `for d { S1; for j { S2 }; S3 }` with every written element
indexed by `d` distributed over its statements, each vectorised over `d`; each inner loop
takes the cheapest `inner` pattern that matches (`axpy`, `dot`, `contract`). P·V and QKᵀ
of attention, conv2d's channel sum (`vector.match_distributed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from ._vector import ItemsPriced, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc


class Distributed(ItemsPriced):
    name = "distributed"
    site = "nest"
    summary = "for d { S1; for j { S2 }; S3 }: distributed over its statements, each vectorised over d"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth != 1 or desc.only_assigns:
            return Reason(self.name, "the loop body holds no inner loop beside other statements" if desc.depth == 1
                          else "a perfect nest (collapsed-2d, interchanged)")
        from ..vector import match_distributed
        from .select import select

        pe, loop = ctx.pe, ctx.loop
        tried: list[tuple[str, tuple[tuple[str, float | None, str], ...]]] = []

        def inner(x: ir.For, any_deep: bool) -> "tuple[object, bool, str] | str":
            got = select("inner", Ctx(pe, x, ctx.depth, {"outer": loop, "any_deep": any_deep}))
            tried.append((x.var, got.tried()))
            if got.chosen is None:
                return "; ".join(f"{r.pattern}: {r.text}" for r in got.refusals)
            m = got.chosen
            return m.data, m.pattern == "axpy", m.pattern

        got = match_distributed(pe, loop, ctx.depth, inner)  # type: ignore[arg-type]
        if not isinstance(got, str):
            got.inner_tried = tried
        return outcome(self.name, got)

    def emit(self, m: Match, ctx: Ctx) -> object:
        from ..vector import commit_distributed

        return commit_distributed(ctx.pe, ctx.loop, m.data, ctx.depth)


PATTERN = Distributed()
