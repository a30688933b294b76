"""Pattern `cube-mmad`: a nest of a cube phase that `cube.select_cube` mapped to Mmad, its
accumulator's init or its Fixpipe store (the phase-level cube selection decides; this
pattern emits what it decided)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Ctx, Match, Reason

if TYPE_CHECKING:
    from ..desc import NestDesc


class CubeMmad:
    name = "cube-mmad"
    site = "nest"
    summary = "a matmul nest, its accumulator init or store on the cube core (Mmad, Fixpipe), as cube.py selected"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        cube = ctx.pe.cube
        if cube is None and ctx.pe.ph.core == "cube":
            return Reason(self.name, "the cube selection did not take this phase (its warning says why)")
        if cube is None:
            return Reason(self.name, "not a cube phase")
        if not cube.handles(ctx.loop):
            return Reason(self.name, "the cube selection did not map this loop to Mmad, an accumulator init or a store")
        return Match(self.name, None)

    def price(self, m: Match, ctx: Ctx) -> float:
        return 0.0  # the only pattern of a cube phase's nests

    def emit(self, m: Match, ctx: Ctx) -> object:
        return ctx.pe.cube.emit(ctx.pe, ctx.loop, ctx.depth, ctx.extra["loop_vars"])


PATTERN = CubeMmad()
