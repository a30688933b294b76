"""Pattern `window`: a sliding-window reduction over UB tiles (depthwise convolution,
pooling) as one `Gather` per window offset and one vector instruction over the whole output
plane of a channel.

    for c in 0..2 {                                        (the channel loops: C++ loops)
      for y in 0..Ho {
        for x in 0..Wo {
          acc_ub[c, y, x] = 0.0                            Duplicate(acc[c], 0, Ho*Wo)
          for r in 0..3 { for s in 0..3 {                  for r, s: Gather(G, X_ub, off, base(c, r, s), Ho*Wo)
            acc_ub[c, y, x] += f32(X_ub[c, y + r, x + s])           Axpy(acc[c], G, Wt_ub(c, r, s), Ho*Wo)
                               * f32(Wt_ub[c, r, s])
          } }
          Y_ub[c, y, x] = f16(acc_ub[c, y, x])             Cast(Y[c], acc[c], CAST_RINT, Ho*Wo)
        }
      }
    }

What `tile` leaves of examples/dwconv3x3.ir (`X[.., y + r, x + s]`) and examples/maxpool.ir
(`X[.., 2 * y + r, 2 * x + s]`, `max=`): the input tile with its halo staged in UB. A
shifted window read is not a vector operand (its rows start off a 32 B boundary and, for
a stride, its elements are not contiguous), so each window offset (r, s) is **gathered**
into a contiguous plane `G[y * Wo + x] = X_ub[.., a*y + r, b*x + s]`: the byte offsets
`(a*y*pitch + b*x) * bytes` are one table for every offset and channel (`gather.offset_table`,
built once per nest by vector instructions), the offset and the channel move only the
Gather's base address. Then the update is one count-form instruction over the plane:
`Axpy` (acc f32 += X f16 * w f16: the product of two f16 values is exact in f32, so one
rounding of the sum, as the interpreter's), `Max` / `Min` (pooling) or `Add`. Each element
still accumulates its window in the IR's (r, s) order: the result is the scalar nest's.

A guarded window read (same padding: `select(y + r >= 1, .. X_ub[.., y + r - 1, x + s - 1] ..,
0.0)`, docs/ir.md "Guarded reads") whose guards say exactly "inside the plane", at most one
element past an edge: each channel's plane is first copied into a scratch plane bordered by
the guard's value (`Duplicate`, then a mask / repeat `Copy` two rows down; one column more
than the plane), so every read one past an edge reads that value (the element before column
0 is the previous row's last) and the Gathers need no mask. Max / min pooling skips the
offset its initial value already read (idempotent).

Match (each failed condition is the reason `--explain` shows): loops with constant bounds;
the innermost two (`y`, `x`, from 0) hold `T[.., y, x] = init`, a two-deep loop nest
`for r { for s { T[.., y, x] op= v } }` and optionally `Y[.., y, x] = cast(T[.., y, x])`;
`T`, `Y`, the window tensor `X` and the weight are UB locals; `X` is read at
`a*y + .., b*x + ..` (a, b > 0) in its last two dimensions and `y`, `x` appear nowhere
else; `T` / `Y` hold a channel's plane contiguously (last two dimensions Ho x Wo) at 32 B
aligned channel offsets and `Wo` is a multiple of 8 (the offset table's rows start
aligned); the table and one gathered plane fit UB next to the phase's locals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import ir
from ...affine import to_affine
from ...intexpr import subst_expr
from ..cexpr import CTYPE
from ..gather import GATHER_TYPES, NoGather, gather, offset_table
from ..instr import Loop, Operand, Placed, Repeat, VecOp, names_of, render, row_chunks
from ..plan import Line, NestChoice
from ..temporaries import fits, over_capacity
from ._vector import price_items, vector_site
from ._window_guard import guard_is_bounds, unguard
from .base import Ctx, Match, Reason

_OPS = {"max=": "Max", "min=": "Min", "+=": "Add"}
_CASTS = {"f32", "f16", "bf16", "i32"}


@dataclass(frozen=True)
class Window:
    chans: tuple[ir.For, ...]  # the loops over channels (and images): C++ loops around the planes
    y: ir.For
    x: ir.For
    r: ir.For
    s: ir.For
    ho: int
    wo: int
    acc: ir.Access  # T[.., y, x]
    init: ir.Assign
    upd: ir.Assign
    store: ir.Assign | None
    src: ir.Access  # the window read X[.., a*y + .., b*x + ..]
    a: int
    b: int
    weight: ir.Access | None  # the scalar factor of an Axpy update, else None
    api: str  # Axpy, Max, Min, Add
    pad: str | None = None  # a guarded read (`select(in image, X[..], v)`): v as C++, else None


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)}


def _uncast(e: ir.Expr) -> tuple[ir.Expr, str]:
    if isinstance(e, ir.Call) and e.func in _CASTS and len(e.args) == 1:
        return e.args[0], e.func
    return e, ""


def _chain(s: ir.For) -> list[ir.For]:
    loops = [s]
    while len(loops[-1].body) == 1 and isinstance(loops[-1].body[0], ir.For):
        loops.append(loops[-1].body[0])
    return loops


def _red_nest(st: ir.Stmt) -> tuple[ir.For, ir.For, ir.Assign] | None:
    if isinstance(st, ir.For) and len(st.body) == 1 and isinstance(st.body[0], ir.For):
        inner = st.body[0]
        if len(inner.body) == 1 and isinstance(inner.body[0], ir.Assign):
            return st, inner, inner.body[0]
    return None


def shape(s: ir.For) -> bool:
    """Whether `s` has the loop structure of a window nest (the lowering tries the nest
    site's patterns there; `recognise` says the rest)."""
    loops = _chain(s)
    if len(loops) < 2:
        return False
    body = loops[-1].body
    return (len(body) in (2, 3) and isinstance(body[0], ir.Assign) and _red_nest(body[1]) is not None
            and all(isinstance(b, ir.Assign) for b in body[2:]))


def _const_trip(lp: ir.For, sizes: Any, from_zero: bool = False) -> int | None:
    a, b = to_affine(lp.lo, sizes), to_affine(lp.hi, sizes)
    if a is None or b is None or not a.is_const() or not b.is_const() or b.const <= a.const:
        return None
    if from_zero and a.const != 0:
        return None
    return b.const - a.const


def _ub(lw: Any, name: str) -> bool:
    info = lw.low.info.get(name)
    return info is not None and info.kind == "local" and info.scope == "ub"


def _plane(lw: Any, acc: ir.Access, y: str, x: str, inner: set[str]) -> str:
    """Why `acc` is not `T[.., y, x]` over rows that start 32 B aligned, in a plane per
    channel that starts 32 B aligned ("" if it is)."""
    t = acc.tensor
    if not _ub(lw, t):
        return f"`{t}` is not a UB local (tile stages it)"
    if len(acc.indices) < 2 or acc.indices[-2] != ir.Name(y) or acc.indices[-1] != ir.Name(x):
        return f"`{t}` is not indexed `[.., {y}, {x}]`"
    if any(_names(i) & ({y, x} | inner) for i in acc.indices[:-2]):
        return f"`{t}` is indexed by `{y}`, `{x}` or a window loop outside its last two dimensions"
    info = lw.low.info[t]
    if info.strides[-1] != 1 or (info.strides[-2] * info.esize) % 32:
        return f"the rows of `{t}` do not start 32 B aligned (row pitch {info.strides[-2]} x {info.esize} B)"
    for i, st in zip(acc.indices[:-2], info.strides[:-2]):
        a = to_affine(i, lw.low.sizes)
        if a is None:
            return f"`{t}`: index `{i}` is not affine"
        if any((c * st * info.esize) % 32 for c in (a.const, *(a.coeff(v) for v in _names(i)))):
            return f"`{t}`: a channel's plane does not start 32 B aligned"
    return ""


def recognise(lw: Any, s: ir.For) -> Window | str:
    """The nest `s` as a window reduction, or why it is not one."""
    sizes = lw.low.sizes
    loops = _chain(s)
    if not shape(s):
        return "not `for y { for x { T = init; for r { for s { T op= .. } } [; Y = cast(T)] } }`"
    *chans, ly, lx = loops
    for lp in chans:
        if _const_trip(lp, sizes) is None:
            return f"the loop over `{lp.var}` has no constant trip count"
    ho, wo = _const_trip(ly, sizes, True), _const_trip(lx, sizes, True)
    if ho is None or wo is None:
        return f"the loops over `{ly.var}`, `{lx.var}` do not run from 0 to a constant"
    body = lx.body
    init = body[0]
    assert isinstance(init, ir.Assign)
    red = _red_nest(body[1])
    assert red is not None
    lr, ls, upd = red
    if _const_trip(lr, sizes, True) is None or _const_trip(ls, sizes, True) is None:
        return f"the window loops `{lr.var}`, `{ls.var}` do not run from 0 to a constant"
    store = body[2] if len(body) == 3 else None
    acc = upd.target
    if not isinstance(acc, ir.Access) or upd.op not in ("+=", "max=", "min="):
        return "the window statement is not `T[..] += / max= / min= ..`"
    if init.op != "=" or init.target != acc:
        return f"the first statement does not initialise `{acc}`"
    inner = {lr.var, ls.var}
    why = _plane(lw, acc, ly.var, lx.var, inner)
    if why:
        return why
    tdt = lw.low.info[acc.tensor].dtype
    conds: list[ir.Expr] = []
    pad_v: ir.Expr | None = None
    # the update's value: a window read (pooling), or a window read times a scalar weight
    val, cast = _uncast(upd.value)
    weight: ir.Access | None = None
    if isinstance(val, ir.Binary) and val.op == "*" and upd.op == "+=":
        (p, pc), (q, qc) = _uncast(val.lhs), _uncast(val.rhs)
        p, p_conds, p_v = unguard(p)
        q, q_conds, q_v = unguard(q)
        if p_conds and not q_conds:
            conds, pad_v = p_conds, p_v
        elif q_conds and not p_conds:
            conds, pad_v = q_conds, q_v
        if p_conds or q_conds:
            p, pc = _uncast(p) if not pc else (p, pc)
            q, qc = _uncast(q) if not qc else (q, qc)
        cands = [(p, q, pc, qc), (q, p, qc, pc)]
        got = [(w, wt, wc, xc) for w, wt, wc, xc in cands
               if isinstance(w, ir.Access) and isinstance(wt, ir.Access) and not (_names(wt) & {ly.var, lx.var})]
        if not got or cast:
            return "the product is not a window read times a weight that does not depend on `y`, `x`"
        src, weight, xc, wc = got[0][0], got[0][1], got[0][2], got[0][3]
        if not _ub(lw, weight.tensor):
            return f"the weight `{weight.tensor}` is not a UB local (tile stages it)"
        xdt, wdt = lw.low.info[src.tensor].dtype if src.tensor in lw.low.info else "", lw.low.info[weight.tensor].dtype
        if not (tdt == "f32" and xdt == "f16" and wdt == "f16" and xc == "f32" and wc == "f32"):
            return ("no Axpy for this product: the pattern takes f32 += f32(f16 window) * f32(f16 weight) "
                    "(exact products, one rounding of the sum)")
        api = "Axpy"
    else:
        val, conds, pad_v = unguard(val)
        if not isinstance(val, ir.Access) or cast:
            return "the window statement's value is not a window read (pooling) or a window read times a weight"
        src, api = val, _OPS[upd.op]
    if not _ub(lw, src.tensor):
        return f"`{src.tensor}` is not a UB local (tile stages it)"
    xinfo = lw.low.info[src.tensor]
    if api != "Axpy" and xinfo.dtype != tdt:
        return f"the window read is {xinfo.dtype}, `{acc.tensor}` {tdt}: no {api} across dtypes"
    if xinfo.dtype not in GATHER_TYPES:
        return f"no Gather of {xinfo.dtype}"
    if len(src.indices) < 2 or any(_names(i) & {ly.var, lx.var} for i in src.indices[:-2]):
        return f"`{src.tensor}` is indexed by `{ly.var}` or `{lx.var}` outside its last two dimensions"
    fy, fx = to_affine(src.indices[-2], sizes), to_affine(src.indices[-1], sizes)
    if fy is None or fx is None:
        return f"the window read `{src}` is not affine"
    a, b = fy.coeff(ly.var), fx.coeff(lx.var)
    if a <= 0 or b <= 0 or fy.coeff(lx.var) or fx.coeff(ly.var):
        return f"`{src}` is not read at `a * {ly.var} + ..`, `b * {lx.var} + ..` with a, b > 0"
    if src.tensor in (acc.tensor,) or (store is not None and src.tensor == store.target.tensor):  # type: ignore[union-attr]
        return f"`{src.tensor}` is both read through the window and written"
    # the initial value: a literal, or the window read at another offset (max-pool: X[2y, 2x])
    iv = init.value
    if isinstance(iv, ir.Access):
        fy0, fx0 = (to_affine(iv.indices[-2], sizes), to_affine(iv.indices[-1], sizes)) if len(iv.indices) >= 2 \
            else (None, None)
        if (iv.tensor != src.tensor or fy0 is None or fx0 is None or fy0.coeff(ly.var) != a or fx0.coeff(lx.var) != b
                or any(_names(i) & ({ly.var, lx.var} | inner) for i in iv.indices[:-2])
                or (_names(iv.indices[-2]) | _names(iv.indices[-1])) & inner):
            return f"the initial value `{iv}` is not a read of the window `{src.tensor}` with its strides"
    elif not isinstance(iv, (ir.FloatLit, ir.IntLit)):
        return f"the initial value `{iv}` is neither a literal nor a window read"
    if store is not None:
        sv, scast = _uncast(store.value)
        if sv != acc or not isinstance(store.target, ir.Access):
            return f"the last statement does not store `{acc}`"
        why = _plane(lw, store.target, ly.var, lx.var, inner)
        if why:
            return why
        ydt = lw.low.info[store.target.tensor].dtype
        if not (tdt == "f32" and ydt == "f16" and scast == "f16"):
            return f"the store `{store}` is not an f32 -> f16 conversion (the one Cast this pattern emits)"
    pad = None
    if conds:
        ext = list(xinfo.shape[-2:])
        R, S = _const_trip(lr, sizes, True), _const_trip(ls, sizes, True)
        for idx, v, lv, nv, nl, e, which in ((src.indices[-2], ly.var, lr.var, ho, R, ext[0], "row"),
                                             (src.indices[-1], lx.var, ls.var, wo, S, ext[1], "column")):
            why = guard_is_bounds(conds, idx, v, lv, nv, nl, e, sizes, which)  # type: ignore[arg-type]
            if why:
                return why
        if any(set(_names(c)) & {lp.var for lp in chans} for c in conds):
            return "the guard depends on a channel loop"
        ct = CTYPE[xinfo.dtype]
        pad = f"{ct}({pad_v.value})"  # type: ignore[union-attr]
    return Window(tuple(chans), ly, lx, lr, ls, ho, wo, acc, init, upd, store, src, a, b, weight, api, pad)


def _zero(e: ir.Expr, names: set[str]) -> ir.Expr:
    return subst_expr(e, {n: ir.IntLit(0) for n in names})


def _plan(lw: Any, w: Window) -> tuple[list[Placed], int]:
    """The typed instructions of the nest and the bytes of scratch they use. The planes are
    computed in the row pitch `pt` of `T` (its rows padded to 32 B): the padding columns
    gather a real element (column 0's) and are never stored."""
    low = lw.low
    tmp = lw.ph.tmp_name
    tinfo, xinfo = low.info[w.acc.tensor], low.info[w.src.tensor]
    pt = tinfo.strides[-2]
    n = w.ho * pt
    es = xinfo.esize
    ct = CTYPE[xinfo.dtype]
    table_bytes = _round32(n * 4)
    need = table_bytes + _round32(n * es)
    where = f"{low.where(w.y)}"
    off = Operand(f"{tmp}.ReinterpretCast<int32_t>()", "i32")
    offs = Operand(f"{tmp}.ReinterpretCast<uint32_t>()", "u32")
    g = Operand(f"{tmp}.ReinterpretCast<{ct}>()", xinfo.dtype, str(table_bytes // es))
    yx = {w.y.var, w.x.var}
    body: list[Placed] = []
    src_cpp, pitch = xinfo.cname, xinfo.strides[-2]
    if w.pad is not None:
        # a guarded read: per channel the plane is copied into a padded one of its own, rows
        # [spare, halo, the H rows, halo] with the columns from 0 and at least one more column,
        # everything else the guard's value v; a read one past an edge then reads a v (the
        # column before column 0 is the previous row's last one), so the Gathers need no guard
        hx, wx = xinfo.shape[-2], xinfo.shape[-1]
        per = 32 // es
        pitch = -(-(wx + 1) // per) * per
        p_elems = (hx + 3) * pitch
        p_off = table_bytes + _round32(n * es)
        need += _round32(p_elems * es)
        plane = Operand(f"{tmp}.ReinterpretCast<{ct}>()", xinfo.dtype, str(p_off // es))
        src_cpp = plane.cpp()
        src0 = tuple(_zero(i, yx | {w.r.var, w.s.var}) for i in w.src.indices[:-2]) + (ir.IntLit(0), ir.IntLit(0))
        xs = Operand(xinfo.cname, xinfo.dtype, lw.offset(w.src.tensor, src0))
        body.append(Placed(VecOp("Duplicate", plane, (), w.pad, p_elems), where))
        rep = 256 // es
        for k in range(0, wx, rep):
            for r0, times in row_chunks(hx):
                body.append(Placed(VecOp("Copy", plane.at((2 + r0) * pitch + k), (xs.at(r0 * xinfo.strides[-2] + k),), None, 0,
                                         Repeat(min(rep, wx - k), times, (1, 1), (pitch * es // 32, xinfo.strides[-2] * es // 32))),
                                   where))
    items = [Placed(it, where) for it in
             offset_table(off, w.ho, pt, pitch * w.a, xinfo.strides[-1] * w.b, es, None if pt == w.wo else w.wo)]

    def base(acc: ir.Access, at: dict[str, int] | None = None) -> str:
        idx = tuple(_zero(subst_expr(i, {k: ir.IntLit(v) for k, v in (at or {}).items()}), yx) for i in acc.indices)
        if w.pad is None:
            return f"({lw.offset(acc.tensor, idx)}) * {es}"
        # in the padded plane: row + 2, column as is (the channel is the plane's)
        ry, rx = to_affine(idx[-2], low.sizes), to_affine(idx[-1], low.sizes)
        assert ry is not None and rx is not None
        return f"(({_cpp(ry, low)} + 2) * {pitch} + {_cpp(rx, low)}) * {es}"

    t = _plane_of(lw, w.acc, yx)
    iv = w.init.value
    if isinstance(iv, ir.Access):
        body.append(Placed(gather(t, src_cpp, xinfo.dtype, offs, base(iv), n), where))
    else:
        body.append(Placed(VecOp("Duplicate", t, (), f"{CTYPE[t.dtype]}({iv.value})", n), where))  # type: ignore[union-attr]
    skip = _init_offset(w, low.sizes) if w.api in ("Max", "Min") else None
    if skip is not None:
        # max / min are idempotent: the offset the initial value already read adds nothing,
        # so the window is unrolled without it (one Gather and one instruction fewer)
        for r in range(_trip(w.r, low.sizes)):
            for sv in range(_trip(w.s, low.sizes)):
                if (r, sv) != skip:
                    body.append(Placed(gather(g, src_cpp, xinfo.dtype, offs, base(w.src, {w.r.var: r, w.s.var: sv}), n), where))
                    body.append(Placed(VecOp(w.api, t, (t, g), None, n), where))
    else:
        upd: list[Placed] = [Placed(gather(g, src_cpp, xinfo.dtype, offs, base(w.src), n), where)]
        if w.api == "Axpy":
            assert w.weight is not None
            winfo = low.info[w.weight.tensor]
            wv = f"{winfo.cname}.GetValue({lw.offset(w.weight.tensor, w.weight.indices)})"
            upd.append(Placed(VecOp("Axpy", t, (g,), wv, n), where))
        else:
            upd.append(Placed(VecOp(w.api, t, (t, g), None, n), where))
        for lp in (w.s, w.r):
            upd = [Placed(Loop(low.names(lp.var), lw.ex.index(lp.lo), lw.ex.index(lp.hi), tuple(upd)), where)]
        body += upd
    return items + _finish(lw, w, body, t, pt, where), need


def _finish(lw: Any, w: Window, body: list[Placed], t: Operand, pt: int, where: str) -> list[Placed]:
    """The store `Y = f16(T)` after the window, and the channel loops around it all."""
    low = lw.low
    if w.store is not None:
        assert isinstance(w.store.target, ir.Access)
        body = body + [Placed(op, where) for op in _cast_rows(_plane_of(lw, w.store.target, {w.y.var, w.x.var}),
                                                              low.info[w.store.target.tensor].strides[-2],
                                                              t, pt, w.ho, w.wo, "CAST_RINT")]
    for lp in reversed(w.chans):
        body = [Placed(Loop(low.names(lp.var), lw.ex.index(lp.lo), lw.ex.index(lp.hi), tuple(body)), where)]
    return body


def _cpp(a: Any, low: Any) -> str:
    from ..cexpr import affine_cpp

    return f"({affine_cpp(a, low.names)})"


def _plane_of(lw: Any, acc: ir.Access, yx: set[str]) -> Operand:
    info = lw.low.info[acc.tensor]
    return Operand(info.cname, info.dtype, lw.offset(acc.tensor, tuple(_zero(i, yx) for i in acc.indices)))


def _round32(n: int) -> int:
    return -(-n // 32) * 32


def _trip(lp: ir.For, sizes: Any) -> int:
    n = _const_trip(lp, sizes, True)
    assert n is not None
    return n


def _init_offset(w: Window, sizes: Any) -> tuple[int, int] | None:
    """The window offset (r, s) whose read is exactly the initial value (`Y = X[2y, 2x]`
    then `Y max= X[2y + r, 2x + s]`: (0, 0)), or None."""
    iv = w.init.value
    if not isinstance(iv, ir.Access) or iv.tensor != w.src.tensor or len(iv.indices) != len(w.src.indices):
        return None
    for r in range(_trip(w.r, sizes)):
        for sv in range(_trip(w.s, sizes)):
            m = {w.r.var: ir.IntLit(r), w.s.var: ir.IntLit(sv)}
            got = [to_affine(subst_expr(i, m), sizes) for i in w.src.indices]
            want = [to_affine(i, sizes) for i in iv.indices]
            if all(g is not None and h is not None and g == h for g, h in zip(got, want)):
                return (r, sv)
    return None


def _cast_rows(dst: Operand, pd: int, src: Operand, ps: int, ho: int, wo: int, mode: str) -> list[VecOp]:
    """`dst = cast(src)` over ho rows of wo elements, rows `pd` / `ps` elements apart (f32 ->
    f16 `CAST_RINT`, or f16 -> f32 `CAST_NONE`): one count-form Cast when the pitches agree,
    else mask/repeat Casts (a repeat per row, 64 columns per call: a repeat covers 256 B of
    the f32 side)."""
    if pd == ps:
        return [VecOp("Cast", dst, (src,), None, ho * ps, round=mode)]
    out = []
    blk_d, blk_s = ir.DTYPE_BYTES[dst.dtype], ir.DTYPE_BYTES[src.dtype]
    for k in range(0, wo, 64):
        for r0, times in row_chunks(ho):
            out.append(VecOp("Cast", dst.at(r0 * pd + k), (src.at(r0 * ps + k),), None, 0,
                             Repeat(min(64, wo - k), times, (1, 1), (pd * blk_d // 32, ps * blk_s // 32)), round=mode))
    return out


class WindowPattern:
    name = "window"
    site = "nest"
    summary = ("a sliding-window reduction over UB tiles (depthwise conv, pooling): per window offset a Gather "
               "of the shifted plane and one Axpy / Max / Min / Add over it")

    def match(self, desc: object, ctx: Ctx) -> Match | Reason:
        why = vector_site(ctx)
        if why:
            return Reason(self.name, why)
        got = recognise(ctx.pe, ctx.loop)
        if isinstance(got, str):
            return Reason(self.name, got)
        try:
            items, need = _plan(ctx.pe, got)
        except NoGather as e:
            return Reason(self.name, str(e))
        if not fits(ctx.pe, need):
            return Reason(self.name, over_capacity(ctx.pe, need))
        return Match(self.name, (got, items, need))

    def price(self, m: Match, ctx: Ctx) -> float:
        return price_items(ctx, m.data[1])

    def emit(self, m: Match, ctx: Ctx) -> object:
        w, items, need = m.data
        lw = ctx.pe
        out: list[Line] = []
        written = {w.acc.tensor} | ({w.store.target.tensor} if w.store is not None else set())  # type: ignore[union-attr]
        for name in sorted(ir.names_used((ctx.loop,)) - written):
            if name in lw.buffers:
                lw.ensure_ready(name, out, ctx.depth)
        for name in sorted(written):
            lw.ensure_alloc(name, out, ctx.depth)
        lw.no_vector_need = None
        lw.ph.tmp_bytes = max(lw.ph.tmp_bytes, need)
        nest = ctx.loop
        label = nest.label or nest.var
        where = f"{lw.low.where(nest)} `{label}`"
        # the scratch as the capacity model reads it (transformer/capacity: f32 elements x slots)
        lw.low.nests.append(NestChoice(where, tuple(names_of(items)), "", lw.ph.index, label, need, need // 4, 1,
                                       ("the window's byte-offset table", "a gathered window plane"),
                                       temp_shape=(need // 4,), plan=tuple(items)))
        return out + [Line(l.text, l.depth, where) for l in render(items, ctx.depth)]


PATTERN = WindowPattern()
