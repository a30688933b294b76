"""Patterns `row-gather` and (in `row_scatter_add.py`) `row-scatter-add`: rows of a GM tensor
picked by an index tensor, one DMA per row.

    for t in 0..2 {                                   for (int32_t t = 0; t < 2; ++t) {
      for h in 0..1024 {                      ->        DataCopy(out_ubLocal[t * 1024],
        out_ub[t, h] = T[ids_ub[t], h0 * 1024 + h]        TGm[h0 * 1024 + ids_ubLocal.GetValue(t) * 4096], 1024);
      }                                               }
    }

What `tile` leaves of an embedding lookup (`out[t, h] = T[ids[t], h]`, examples/embedding.ir):
the table stays in GM (a tensor read only through an index is not staged, passes/stage.py)
and each gathered row is a contiguous run of GM. The scalar unit reads the index (from the
staged `ids_ub`, after the MTE2 -> S flag `_scalar_sync` inserts for every scalar read of a
VECIN buffer) and issues one MTE2 `DataCopy` at that run-time GM offset into the UB target
(`DataCopyPad` when the row is not a whole number of 32 B blocks).

Match (each failed condition is the reason `--explain` shows):
- the nest is `for h { D[.., h] = T[.., h] }` or `for t { for h { ... } }` with one plain
  assignment whose value is exactly a read of `T` (no arithmetic, no conversion);
- `T` is a GM tensor read through at least one index tensor (`gathers.py`), `D` a UB local;
- `h` appears in the last index of both, with coefficient 1, and nowhere else (nor in the
  index read); the loop over `h` has constant bounds.
Hazards: the DMAs write `D` on MTE2, so they first wait for MTE3 (the previous tile's
copy-out of `D`) and V (vector code that read or wrote it), and afterwards V and MTE3 wait
for them (the queues order V only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import ir
from ...affine import to_affine
from ...intexpr import subst_expr
from ..cexpr import CTYPE
from ..plan import Line, NestChoice
from ._vector import vector_site
from .base import Ctx, Match, Reason

BLOCK_BYTES = 32
ATOMIC_TYPES = ("f32", "f16", "i32")  # SetAtomicAdd: the types a scatter-add may accumulate in GM


@dataclass(frozen=True)
class RowGather:
    rows: ir.For | None  # the loop over gathered rows (`t`), or None when the nest is the row loop alone
    cols: ir.For  # the loop along a row (`h`)
    stmt: ir.Assign
    gm: ir.Access  # the GM side: the gathered source, or the scatter-add target
    lo: int
    trip: int


def recognise(lw: Any, s: ir.For) -> RowGather | str:
    """The nest `s` as a row gather or a scatter-add of rows, or why it is neither."""
    rows, cols = None, s
    if len(s.body) == 1 and isinstance(s.body[0], ir.For):
        rows, cols = s, s.body[0]
    if len(cols.body) != 1 or not isinstance(cols.body[0], ir.Assign):
        return "not one assignment in an innermost loop"
    st = cols.body[0]
    tgt, src = st.target, st.value
    if st.op not in ("=", "+=") or not isinstance(tgt, ir.Access) or not isinstance(src, ir.Access):
        return "not a row copy `D[.., h] = T[.., h]` or a row scatter-add `D[.., h] += T[.., h]`"
    gm, ub = (src, tgt) if st.op == "=" else (tgt, src)
    if not any(isinstance(i, ir.Access) for i in gm.indices):
        return f"`{gm.tensor}` is not indexed through an index tensor"
    ginfo, uinfo = lw.low.info.get(gm.tensor), lw.low.info.get(ub.tensor)
    if ginfo is None or ginfo.kind != "gm":
        return f"`{gm.tensor}` is not in GM"
    if uinfo is None or uinfo.kind != "local" or uinfo.scope != "ub":
        return f"`{ub.tensor}` is not a UB local (tile stages it)"
    if ginfo.dtype != uinfo.dtype:
        return "the row changes dtype"
    if st.op == "+=" and ginfo.dtype not in ATOMIC_TYPES:
        return f"no atomic add of {ginfo.dtype} rows"
    sizes = lw.low.sizes
    a, b = to_affine(cols.lo, sizes), to_affine(cols.hi, sizes)
    if a is None or b is None or not a.is_const() or not b.is_const() or b.const <= a.const:
        return f"the loop over `{cols.var}` has no constant trip count"
    h = cols.var
    for acc in (src, tgt):
        *outer, last = acc.indices
        la = None if isinstance(last, ir.Access) else to_affine(last, sizes)
        if la is None or la.coeff(h) != 1:
            return f"`{h}` is not the unit-stride last index of `{acc.tensor}`"
        for e in outer:
            if h in {x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)}:
                return f"`{h}` indexes another dimension of `{acc.tensor}`"
    return RowGather(rows, cols, st, gm, a.const, b.const - a.const)


def emit(lw: Any, g: RowGather, depth: int) -> list[Line]:
    """One DMA per row inside the C++ loop over rows, fenced by the flags the module
    docstring lists; records the nest's choice."""
    h = g.cols.var
    at_lo = {h: ir.IntLit(g.lo)}
    tgt, val = g.stmt.target, g.stmt.value
    assert isinstance(tgt, ir.Access) and isinstance(val, ir.Access)
    scatter = g.stmt.op == "+="
    ub = val if scatter else tgt
    out: list[Line] = []
    for n in sorted(ir.names_used((g.stmt,)) - {tgt.tensor}):
        if n in lw.buffers:
            lw.ensure_ready(n, out, depth)
    if not scatter:
        lw.ensure_alloc(tgt.tensor, out, depth)
    uinfo, ginfo = lw.low.info[ub.tensor], lw.low.info[g.gm.tensor]
    es = ginfo.esize
    u = f"{uinfo.cname}[{lw.offset(ub.tensor, tuple(subst_expr(e, at_lo) for e in ub.indices))}]"
    m = f"{ginfo.cname}[{lw.offset(g.gm.tensor, tuple(subst_expr(e, at_lo) for e in g.gm.indices))}]"
    dst, src = (m, u) if scatter else (u, m)
    if (g.trip * es) % BLOCK_BYTES == 0:
        call, api = f"DataCopy({dst}, {src}, {g.trip});", "DataCopy"
    elif scatter:
        call, api = f"DataCopyPad({dst}, {src}, DataCopyExtParams(1, {g.trip * es}, 0, 0, 0));", "DataCopyPad"
    else:
        call, api = (f"DataCopyPad({dst}, {src}, DataCopyExtParams(1, {g.trip * es}, 0, 0, 0), "
                     f"DataCopyPadExtParams<{CTYPE[uinfo.dtype]}>(false, 0, 0, 0));"), "DataCopyPad"
    nest = g.rows or g.cols
    name = nest.label or nest.var
    where = f"{lw.low.where(nest)} `{name}`"
    pipe = "MTE3" if scatter else "MTE2"
    # before: the DMA's pipe waits for what last wrote (scatter: read) its UB rows; after: they wait for it
    before = ("V", "MTE2") if scatter else ("MTE3", "V")
    after = ("V", "MTE2", "S") if scatter else ("V", "MTE3")
    out += [Line(f"{op}<HardEvent::{p}_{pipe}>(0);", depth, where) for p in before for op in ("SetFlag", "WaitFlag")]
    body = [Line(call, depth + (g.rows is not None), where)]
    if scatter:  # accumulate in GM: the rows of one core's MTE3 queue land in program order
        out.append(Line(f"SetAtomicAdd<{CTYPE[ginfo.dtype]}>();", depth, where))
    if g.rows is not None:
        v = lw.low.names(g.rows.var)
        out.append(Line(f"for (int32_t {v} = {lw.ex.index(g.rows.lo)}; {v} < {lw.ex.index(g.rows.hi)}; ++{v}) {{",
                        depth, where))
        out += body
        out.append(Line("}", depth, where))
    else:
        out += body
    if scatter:
        out.append(Line("SetAtomicNone();", depth, where))
    out += [Line(f"{op}<HardEvent::{pipe}_{p}>(0);", depth, where) for p in after for op in ("SetFlag", "WaitFlag")]
    lw.low.nests.append(NestChoice(where, (api,), "", lw.ph.index, name))
    return out


def price(g: RowGather, ctx: Ctx) -> float:
    """Cycles of the DMAs on the target's timing facts: per row a start-up, its bytes at the
    pipe's rate, and the scalar read of the index (`timing_*`, transformer/targets/_timing.py)."""
    t = ctx.pe.low.target

    def fact(name: str) -> float:
        return float(t.value(name))

    es = ctx.pe.low.info[g.gm.tensor].esize
    rows = 1
    if g.rows is not None:
        a, b = to_affine(g.rows.lo, ctx.pe.low.sizes), to_affine(g.rows.hi, ctx.pe.low.sizes)
        rows = max(1, (b - a).const) if a is not None and b is not None and (b - a).is_const() else 1
    if g.stmt.op == "+=":
        per = fact("timing_mte3_instr_cycles") + g.trip * es * fact("timing_mte3_byte_cycles")
    else:
        per = fact("timing_mte2_instr_cycles") + g.trip * es * fact("timing_mte2_ub_byte_cycles")
    return rows * (per + fact("timing_s_local_access_cycles"))


class RowGatherPattern:
    name = "row-gather"
    site = "nest"
    op = "="
    summary = "rows of a GM tensor picked by an index tensor into UB (`D_ub[t, h] = T[ids[t], h]`): one DataCopy per row"

    def match(self, desc: object, ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        got = recognise(ctx.pe, ctx.loop)
        if isinstance(got, str):
            return Reason(self.name, got)
        if got.stmt.op != self.op:
            return Reason(self.name, f"the statement is `{got.stmt.op}`, not `{self.op}`")
        return Match(self.name, got)

    def price(self, m: Match, ctx: Ctx) -> float:
        return price(m.data, ctx)

    def emit(self, m: Match, ctx: Ctx) -> object:
        return emit(ctx.pe, m.data, ctx.depth)


PATTERN = RowGatherPattern()

