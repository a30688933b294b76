"""Reductions over an axis that is not the vectorised one, as whole-tile vector code.

Inside `for d { .. }` (the loop the `distributed` pattern, `vector.match_distributed`, vectorises, `d` unit-stride in the
result), a perfect nest of reduction loops
`for k1 { for k2 { .. { T[.., d] += e } } }` sums `e` over every `k` into the element `d`.
conv2d's channel sum after `layout{X=NHWC}` is one: `acc[n, f, y, x] += f32(X[n, y + r,
x + s, c]) * f32(Wt[f, c, r, s])` over `c, r, s`, with `c` the contiguous axis of `X` and `x`
at a stride of C elements — no vector instruction reads it along `x`.

The selection makes one reduction axis `k*` (constant extent K of at most 64: an f32 row
that one repeat reduces; rows padded to Kp = a multiple of 8, whole 32 B blocks, the padding
gathering column 0's element and never reduced) the *column* of a 2-D tile `[d, k*]`, and
keeps the other reduction loops as C++ loops around it:

    W[d, k] = 0                                  Duplicate (count n_d * Kp)
    for k1 { .. {                                the other reduction loops, in their order
        W[d, k] += e(d, k)                       e over the tile (vector._Sel, 2-D; strided
    } }                                          or broadcast operands through Gather)
    sums[d] = sum_k W[d, k]                      WholeReduceSum, one repeat per row
    T[.., d] += sums[d]                          Add

`e`'s operands that depend on `d` and `k*` are read as the 2-D tile (contiguous when `d`
steps by exactly K elements and `k*` by one, else gathered: gather.py); operands that depend
on `k*` only (the filter row `Wt[f, c, r, s]`) are gathered broadcast over the rows. The
offset tables are built once, before the loops. The sum is reassociated (as every vector
reduction is) and accumulated in f32: `T` must be f32 and `e` must not read `T`.

Choice of `k*`: the reduction loop with the largest admissible extent (the innermost on ties).
The `contract` pattern (patterns/contract.py) is this form for a reduction over a nest of several loops, and for
one-loop reductions in the same loop body; a row loop of one-loop row reductions (softmax's
max and sum over short rows) is `rows2d.py`'s whole-tile form, which shares the
`WholeReduce*` call layout (`instr.whole_reduce`). Not handled: a tile tail in `d` (run-time
row count), K > 64.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import ir
from ..intexpr import affine_extent
from .instr import Loop, Placed, VecOp, row_chunks, whole_reduce

if TYPE_CHECKING:
    from .lower import PhaseEmitter
    from .vector import _Sel

MAX_COLUMNS = 64  # f32 elements of one 256 B repeat: WholeReduceSum reduces one repeat per row
ROWS_PER_CALL = 248  # at most 255 repeats; a multiple of 8 so the next call's sums start 32 B aligned


def perfect_nest(x: ir.For) -> tuple[list[ir.For], ir.Assign] | None:
    """(loops, statement) of `for k1 { for k2 { .. { stmt } } }`, else None."""
    loops = [x]
    while len(loops[-1].body) == 1 and isinstance(loops[-1].body[0], ir.For):
        loops.append(loops[-1].body[0])
    body = loops[-1].body
    if len(body) != 1 or not isinstance(body[0], ir.Assign):
        return None
    return loops, body[0]


def _mentions(e: ir.Expr, names: set[str]) -> bool:
    return any(isinstance(x, ir.Name) and x.name in names for x in ir.sub_exprs(e))


def contract(pe: "PhaseEmitter", outer: ir.For, nest: ir.For, depth: int, sel: Any) -> "_Sel | str":
    """The selection (items and temporaries) of the reduction nest `nest` inside the loop
    `outer` (`d`), or why the shape does not apply (pattern `contract`). `sel` is `vector._Sel` (passed in:
    vector.py calls this module, so it does not import vector.py back)."""
    _Sel, NoMatch, Vec = sel, sel.NoMatch, sel.Vec
    low = pe.low
    got = perfect_nest(nest)
    n_d = affine_extent(outer.lo, outer.hi, low.sizes)
    if got is None:
        return f"the loops under `{nest.var}` are not a perfect nest around one statement"
    if not n_d or n_d <= 0:
        return f"the bounds of `{outer.var}` are not constant"
    loops, st = got
    tgt = st.target
    kvars = {lp.var for lp in loops}
    if st.op != "+=" or not isinstance(tgt, ir.Access) or any(_mentions(i, kvars) for i in tgt.indices):
        return "the statement is not `T[..] += e` into an element independent of the reduction loops"
    if not any(_mentions(i, {outer.var}) for i in tgt.indices) or low.decls[tgt.tensor].dtype != "f32":
        return f"the accumulator is not f32 or not indexed by `{outer.var}`"
    if any(isinstance(x, ir.Access) and x.tensor == tgt.tensor for x in ir.sub_exprs(st.value)):
        return f"`e` reads the accumulator `{tgt.tensor}`: not a pure sum (the order of the additions is observable)"
    if any(_mentions(b, kvars | {outer.var}) for lp in loops for b in (lp.lo, lp.hi)):
        return "a reduction loop's bounds depend on another loop (the loops are reordered)"
    cands = []
    for pos, lp in enumerate(loops):
        k = affine_extent(lp.lo, lp.hi, low.sizes)
        if k and 0 < k <= MAX_COLUMNS:
            cands.append((k, pos, lp))
    if not cands:
        return f"no reduction loop has a constant extent of at most {MAX_COLUMNS} (one f32 repeat per row)"
    K, _, star = max(cands, key=lambda t: (t[0], t[1]))
    Kp = -(-K // 8) * 8  # rows of whole 32 B blocks of f32
    others = [lp for lp in loops if lp is not star]
    where = low.where(st)
    try:
        dsel = _Sel(pe, [outer], n_d, depth)
        dsel.origin = where
        t = dsel.access_ref(tgt, write=True)
        ksel = _Sel(pe, [outer, star], n_d * Kp, depth + len(others))
        ksel.inner_n = Kp
        ksel.valid_inner = K
        ksel.origin = where
        ksel.table_sink = []
        acc = ksel.alloc("f32", "reduction work areas")
        sums = ksel.alloc("f32", "reduction work areas")
        ksel.vop("Duplicate", acc, scalar="0.0f")
        pre = list(ksel.items)
        ksel.items = []
        v = ksel.as_type(ksel.compile(st.value), "f32")
        if not isinstance(v, Vec):
            return "`e` does not depend on the tile: not this shape"
        ksel.vop("Add", acc, acc, v)
        ksel.release(v)
    except NoMatch as e:
        return str(e)
    body: tuple[Placed, ...] = tuple(ksel.items)
    for lp in reversed(others):
        body = (Placed(Loop(low.names(lp.var), pe.ex.index(lp.lo), pe.ex.index(lp.hi), body), low.where(lp)),)
    items = list(ksel.table_sink) + pre + list(body)
    items.extend(Placed(op, where) for op in whole_reduce("WholeReduceSum", sums.op, acc.op, K,
                                                          row_chunks(n_d, per_call=ROWS_PER_CALL), Kp, Kp * 4 // 32))
    items.append(Placed(VecOp("Add", t.op, (t.op, sums.op), None, n_d), where))
    ksel.items = items
    ksel.purposes = list(dict.fromkeys(ksel.purposes))
    return ksel
