"""Pattern `vecmat`: a row times a matrix tile, `for d { for j { ACC[.., d] += P[.., j] * W(j, d) } }`,
as whole-tile vector code (the P·V of decode attention: one query row's probabilities times a
staged K/V block, `acc[g, d] += s[g, j] * f32(V_ub[j, d])`).

Why: the `interchanged` form of this nest is a C++ loop over `j` around three instructions
over `d` (Cast one row of W, Muls by the scalar `P[j]` read by the scalar unit, Add): 3 J
small instructions and J scalar reads per row; at J = 64, D = 128 it prices ~3,200 cycles (this form 484).
Here the whole J x D tile is one instruction per step:

    w[j, d] = W(j, d)                 compiled over the tile (a Cast of the f16 block), f32
    pb[j, 0..8] = P[j]                Brcb: each P[j] fills one 32 B block
    w2[j, d] = w[j, d] * pb[j]        Mul in the mask/repeat form, one repeat per row j, the
                                      second source's block stride 0 (the same block of 8)
    w[0:h] = w2[0:h] + w2[rows-h:]    Add tree over the rows, halving (log2 J count-form Adds),
                                      ping-ponging between w and w2 (an odd middle row copied)
    ACC[.., 0:D] += w[0, 0:D]         Add

No instruction writes the slot it reads (an in-place instruction reads and writes one UB bank
per beat: 2 beats a repeat on `ascx-pipe-4`, docs/timing.md "UB banks"). The sum over `j` is reassociated (a tree, as every vector reduction is), in f32.

Preconditions: a perfect 2-D nest (`d` outer, `j` inner) around one `ACC += A * B`, ACC an f32
UB local indexed by `d` and not by `j`, read nowhere else in the statement; one factor `P`
an f32 UB local read contiguously in `j` (not depending on `d`), the other `W` depending on
both and contiguous over the [j, d] tile; J a multiple of 8 (Brcb takes 8 elements a repeat)
and at most the repeat limit, D a multiple of 8 (whole 32 B blocks per row)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import ir
from ...intexpr import affine_extent
from ..instr import Placed, Repeat, VecOp, render
from ..itable import MAX_REPEAT
from ._vector import price_items, vector_site
from .base import Ctx, Match, Reason, outcome

if TYPE_CHECKING:
    from ..desc import NestDesc
    from ..lower import PhaseEmitter

LANES = 64  # f32 elements of one 256 B repeat


def _mentions(e: ir.Expr, var: str) -> bool:
    return any(isinstance(x, ir.Name) and x.name == var for x in ir.sub_exprs(e))


def select_vecmat(pe: "PhaseEmitter", outer: ir.For, inner: ir.For, depth: int) -> "tuple[object, list[Placed]] | str":
    """(the selection, its items) of the nest `outer { inner { ACC += P * W } }`, or why not."""
    from ..temporaries import fits, over_capacity
    from ..vector import NoMatch, Vec, _Sel

    body = inner.body
    if len(body) != 1 or not isinstance(body[0], ir.Assign):
        return "the inner loop's body is not one statement"
    st = body[0]
    tgt, d, j = st.target, outer.var, inner.var
    if st.op != "+=" or not isinstance(tgt, ir.Access) or not isinstance(st.value, ir.Binary) or st.value.op != "*":
        return "the statement is not `ACC[..] += A * B`"
    if any(_mentions(i, j) for i in tgt.indices) or not any(_mentions(i, d) for i in tgt.indices):
        return f"the accumulator is not indexed by `{d}` alone of the two loops"
    low = pe.low
    if low.decls[tgt.tensor].dtype != "f32":
        return "the accumulator is not f32"
    if any(isinstance(x, ir.Access) and x.tensor == tgt.tensor for x in ir.sub_exprs(st.value)):
        return f"the product reads the accumulator `{tgt.tensor}`"
    a, b = st.value.lhs, st.value.rhs
    if _mentions(a, d) and not _mentions(b, d):
        a, b = b, a
    P, W = a, b
    if _mentions(P, d) or not _mentions(P, j) or not (_mentions(W, d) and _mentions(W, j)):
        return f"no factor is a row over `{j}` times a factor over both `{j}` and `{d}`"
    if not isinstance(P, ir.Access) or low.decls[P.tensor].dtype != "f32":
        return f"the row factor is not an f32 local read over `{j}`"
    J = affine_extent(inner.lo, inner.hi, low.sizes)
    D = affine_extent(outer.lo, outer.hi, low.sizes)
    if not J or not D or J <= 0 or D <= 0:
        return "the loop bounds are not constant"
    if J % 8 or J > MAX_REPEAT or D % 8 or D // 8 > MAX_REPEAT:
        return (f"{J} x {D} tile: the rows need a multiple of 8 (Brcb, at most {MAX_REPEAT}) and the columns "
                "whole 32 B blocks")
    where = low.where(st)
    try:
        acc = _Sel(pe, [outer], D, depth).access_ref(tgt, write=True)
        prow = _Sel(pe, [inner], J, depth)
        p = prow.access_ref(P)
        if prow.items:
            return f"the row factor `{P.tensor}` is not contiguous and 32 B aligned in `{j}`"
        sel = _Sel(pe, [inner, outer], J * D, depth)
        sel.inner_n = D
        sel.origin = where
        w = sel.alloc("f32", "matrix-vector work area")
        v = sel.as_type(sel.compile(W, dest=w), "f32", w)
        if not isinstance(v, Vec):
            return "the tile factor does not vary over the tile"
        if v.op != w.op:
            sel.copy_into(w, v)
        pb = sel.alloc("f32", "matrix-vector work area")
    except NoMatch as e:
        return str(e)
    if "Gather" in sel.instrs:
        return f"the tile factor is not contiguous over the [{j}, {d}] tile (a Gather per block)"
    w2 = sel.alloc("f32", "matrix-vector work area")
    sel.emit(VecOp("Brcb", pb.op, (p.op,), None, 0, Repeat(0, J // 8, (1,), (8,))))
    for c0 in range(0, D, LANES):
        sel.emit(VecOp("Mul", w2.op.at(c0), (w.op.at(c0), pb.op), None, 0,
                       Repeat(min(LANES, D - c0), J, (1, 1, 0), (D // 8, D // 8, 1))))
    rows = J
    src, dst = w2, w
    while rows > 1:
        h = rows // 2
        sel.emit(VecOp("Add", dst.op, (src.op, src.op.at((rows - h) * D)), None, h * D))
        if rows - h > h:
            sel.emit(VecOp("Adds", dst.op.at(h * D), (src.op.at(h * D),), "float(0.0f)", (rows - 2 * h) * D))
        rows -= h
        src, dst = dst, src
    sel.emit(VecOp("Add", acc.op, (acc.op, src.op), None, D))
    if not fits(pe, sel.need, sel.instrs):
        return over_capacity(pe, sel.need, sel.instrs)
    return sel, list(sel.items)


class Vecmat:
    name = "vecmat"
    site = "nest"
    summary = "for d { for j { ACC[.., d] += P[.., j] * W(j, d) } }: the [j, d] tile times Brcb(P), an Add tree over j"

    def match(self, desc: "NestDesc", ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        if desc.depth != 2 or not desc.only_assigns:
            return Reason(self.name, "not a perfect 2-D nest of assignments")
        inner = ctx.loop.body[0]
        assert isinstance(inner, ir.For)
        return outcome(self.name, select_vecmat(ctx.pe, ctx.loop, inner, ctx.depth))  # type: ignore[arg-type]

    def price(self, m: Match, ctx: Ctx) -> float:
        return price_items(ctx, m.data[1])

    def emit(self, m: Match, ctx: Ctx) -> object:
        sel, items = m.data
        pe, outer = ctx.pe, ctx.loop
        inner = outer.body[0]
        assert pe is not None and isinstance(inner, ir.For)
        low = pe.low
        pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, sel.need)
        low.nests.append(sel.choice(f"{low.where(outer)} `{outer.label or outer.var}` (the [{inner.var}, "
                                    f"{outer.var}] tile times a row: Brcb, Mul, an Add tree over `{inner.var}`)"))
        return render(items, ctx.depth)


PATTERN = Vecmat()
