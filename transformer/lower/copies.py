"""`copy dst <- src` as DMA instructions (or a scalar loop when no DMA form applies).

Rules (ascend-facts.md, "Alignment and limits"):
- `DataCopy(dst, src, count)`: `count * sizeof(T)` a multiple of 32 B, local address 32 B
  aligned; one call when both sides are contiguous.
- `DataCopy(dst, src, DataCopyParams{rows, len/32, srcGap/32, dstGap/32})`: 2-D regions
  whose row length and gaps are whole 32 B blocks; rows <= 4095.
- `DataCopyPad(..., DataCopyExtParams{rows, lenBytes, gmGapBytes, ubGapBlocks})`: byte-exact
  rows (ragged tails); the UB side of each row occupies `lenBytes` rounded up to 32 B, which
  is why local rows are padded to 32 B (`padded_strides`).
- Regions of more than two dimensions loop over the outer ones in C++.
- UB -> UB copies that no `DataCopy` form fits (rows not whole 32 B blocks, or a tile tail
  of run-time extents): the vector `Copy` (16/32-bit types) in its mask/repeat form, one
  repeat per row (repeat strides: the row strides in 32 B blocks) and a mask of the row's
  elements in each 256 B column chunk (run-time masks for a tail), or, for one row, whole
  256 B repeats plus one masked repeat (`_ub_copy`).
- GM -> L1 tile tails whose rows are whole 32 B blocks: `DataCopy` with a run-time count or
  `DataCopyParams` (DataCopyPad has no path into L1: GM->VECIN/VECOUT only).
- Cube-side copies in the generic path (row-major L1/L0 buffers) and anything else are
  scalar loops (`GetValue`/`SetValue`), with a warning naming the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ir
from .plan import Line

if TYPE_CHECKING:
    from .lower import PhaseEmitter

MAX_BLOCKS = 4095


def _ceil32(x: int) -> int:
    return -(-x // 32) * 32


def _aligned(a, esize: int) -> bool:  # type: ignore[no-untyped-def]
    if a is None:
        return False
    return all((k * esize) % 32 == 0 for _, k in a.coeffs) and (a.const * esize) % 32 == 0


def merge_dims(dims: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Merge adjacent (extent, src stride, dst stride) dims that are contiguous on both sides."""
    out: list[tuple[int, int, int]] = []
    for d in dims:
        if out:
            e0, s0, t0 = out[-1]
            e1, s1, t1 = d
            if s0 == s1 * e1 and t0 == t1 * e1:
                out[-1] = (e0 * e1, s1, t1)
                continue
        out.append(d)
    return out


def emit_copy(pe: "PhaseEmitter", c: ir.Copy, depth: int) -> list[Line]:
    low = pe.low
    dinfo, sinfo = low.info[c.dst.tensor], low.info[c.src.tensor]
    dstart, da, ddims = pe.region(c.dst)
    sstart, sa, sdims = pe.region(c.src)
    es = dinfo.esize
    origin = low.where(c)
    consts = all(d[1] is not None for d in ddims) and all(d[1] is not None for d in sdims) and len(ddims) == len(sdims)
    kinds = (sinfo.kind, dinfo.kind)
    if consts and sinfo.dtype == dinfo.dtype:
        dims = [(d[1], s[2], d[2]) for d, s in zip(ddims, sdims)]  # (ext, src stride, dst stride)
        # drop unit extents but the innermost: it is the row length (one column of a tile is
        # a ragged-row DataCopyPad of one element per row, not a scalar loop)
        dims = [d for d in dims[:-1] if d[0] != 1] + [dims[-1]]
        dims = merge_dims(dims)  # type: ignore[arg-type]
        out = _dma(pe, c, dinfo, sinfo, dstart, da, sstart, sa, dims, es, depth, origin)
        if out is None and _ub_to_ub(dinfo, sinfo) and len(dims) <= 2 and dims[-1][1] == dims[-1][2] == 1:
            L = dims[-1][0]
            rows, ss, ds = dims[0] if len(dims) == 2 else (1, L, L)
            out = _ub_copy(pe, c, dinfo, dstart, da, sstart, sa, (str(L), L), (str(rows), rows), ss, ds, depth, origin)
        if out is not None:
            return out
    elif len(ddims) == len(sdims) and sinfo.dtype == dinfo.dtype:
        out = _dma_tail(pe, c, dinfo, sinfo, dstart, da, ddims, sstart, sa, sdims, depth, origin)
        if out is not None:
            return out
    why = _why_scalar(c, dinfo, sinfo, consts)
    if kinds != ("local", "local") or sinfo.scope == "ub":
        low.warn(c, f"copy into `{c.dst.tensor}` is a scalar loop ({why})")
    else:
        low.warn(c, f"copy into `{c.dst.tensor}` is a scalar loop ({why}; generic row-major cube buffers)")
    choice = _choice(low, c, ("GetValue", "SetValue"), why)
    low.nests.append(choice)
    return _scalar_copy(pe, c, dinfo, sinfo, dstart, ddims, sstart, sdims, depth, choice.where)


def _ub_to_ub(dinfo, sinfo) -> bool:  # type: ignore[no-untyped-def]
    return sinfo.kind == dinfo.kind == "local" and sinfo.scope == dinfo.scope == "ub"


def _why_scalar(c, dinfo, sinfo, consts: bool) -> str:  # type: ignore[no-untyped-def]
    """Why a copy stays a scalar loop (listed by `ascx emit --explain`)."""
    side = lambda i: i.scope if i.kind == "local" else "GM"  # noqa: E731
    path = f"{side(sinfo)} -> {side(dinfo)}"
    if sinfo.dtype != dinfo.dtype:
        return f"a {path} copy that converts {sinfo.dtype} to {dinfo.dtype}"
    if _ub_to_ub(dinfo, sinfo):
        if dinfo.esize not in (2, 4):
            return f"a UB -> UB copy of {dinfo.dtype} that DataCopy cannot take (rows not whole 32 B) and Copy cannot (16/32-bit types)"
        return "a UB -> UB copy whose rows or starts are not 32 B aligned, or of more than two dimensions or 255 rows"
    if sinfo.kind == "gm" and dinfo.kind == "local" and dinfo.scope == "l1" and not consts:
        return "a GM -> L1 tile tail whose rows are not whole 32 B blocks (DataCopyPad has no path into L1)"
    if not consts:
        return f"run-time extents (a tile tail) with no DMA form for {path}"
    return f"no DMA form for {path}"


def _ub_copy(pe, c, dinfo, dstart, da, sstart, sa, length, rows, sstride, dstride, depth, origin):  # type: ignore[no-untyped-def]
    """A UB -> UB copy of `rows` rows of `length` elements (each a (C++ expression, largest
    value) pair; element row strides `sstride` / `dstride`) as vector `Copy` calls in the
    mask/repeat form: one repeat per row, a mask of at most 256 B of the row per call (a
    C++ loop over the 256 B column chunks when there are several, the last chunk's mask
    computed at run time for a tail), or, for a single row, whole 256 B repeats plus one
    masked repeat. Every element outside the region is left alone (no 32 B round-up, as a
    DataCopy of whole blocks would write). None when `Copy` does not apply: not a 16/32-bit
    type, a start or row stride not 32 B aligned, more than 255 rows or a stride beyond the
    uint16 repeat stride."""
    low = pe.low
    es = dinfo.esize
    (L, lmax), (R, rmax) = length, rows
    if es not in (2, 4) or not (_aligned(da, es) and _aligned(sa, es)) or rmax > 255 or lmax <= 0:
        return None
    per = 256 // es
    if rmax > 1 and ((sstride * es) % 32 or (dstride * es) % 32 or max(sstride, dstride) * es // 32 > 65535):
        return None
    dref = lambda off: f"{dinfo.cname}[{dstart} + {off}]" if dstart != "0" else f"{dinfo.cname}[{off}]"  # noqa: E731
    sref = lambda off: f"{low.info[c.src.tensor].cname}[{sstart} + {off}]" if sstart != "0" else f"{low.info[c.src.tensor].cname}[{off}]"  # noqa: E731
    d = depth
    out: list[Line] = []
    if rmax == 1:  # one row: whole 256 B repeats, then the masked rest
        if -(-lmax // per) > 255:
            return None
        p8 = "CopyRepeatParams(1, 1, 8, 8)"
        out += [Line(f"{{ const int32_t ascx_n = {L}, ascx_f = ascx_n / {per};", d, origin),
                Line(f"  if (ascx_f > 0) {{ Copy({dref(0)}, {sref(0)}, {per}, ascx_f, {p8}); }}", d, origin),
                Line(f"  if (ascx_n > ascx_f * {per}) {{ Copy({dref(f'ascx_f * {per}')}, {sref(f'ascx_f * {per}')}, "
                     f"ascx_n - ascx_f * {per}, 1, {p8}); }} }}", d, origin)]
    else:
        rp = f"CopyRepeatParams(1, 1, {dstride * es // 32}, {sstride * es // 32})"
        chunks = -(-lmax // per)
        if chunks == 1:
            out.append(Line(f"Copy({dref(0)}, {sref(0)}, {L}, {R}, {rp});", d, origin))
        else:
            out += [Line(f"for (int32_t ascx_k = 0; ascx_k < {chunks}; ++ascx_k) {{", d, origin),
                    Line(f"const int32_t ascx_m = ascx_min<int32_t>({per}, ({L}) - ascx_k * {per});", d + 1, origin),
                    Line(f"if (ascx_m > 0) {{ Copy({dref(f'ascx_k * {per}')}, {sref(f'ascx_k * {per}')}, ascx_m, {R}, {rp}); }}", d + 1, origin),
                    Line("}", d, origin)]
    low.nests.append(_choice(low, c, ("Copy",)))
    return out


def _choice(low, c, instrs, why=""):  # type: ignore[no-untyped-def]
    from .plan import NestChoice

    return NestChoice(f"{low.where(c)} copy `{c.dst.tensor} <- {c.src.tensor}`", tuple(instrs), why)


def _scalar_copy(pe, c, dinfo, sinfo, dstart, ddims, sstart, sdims, depth, origin):  # type: ignore[no-untyped-def]
    out: list[Line] = []
    d = depth
    # The scalar unit reads / writes local memory that other pipes write / read: order it
    # after them (a queue's flags name the DMA pipes, not S; `ascx profile` reports the race).
    scopes = {i.scope for i in (dinfo, sinfo) if i.kind == "local"}
    if scopes == {"ub"}:
        out += [Line("SetFlag<HardEvent::V_S>(0);", d, origin), Line("WaitFlag<HardEvent::V_S>(0);", d, origin)]
    elif scopes:
        out.append(Line("PipeBarrier<PIPE_ALL>();", d, origin))
    doff, soff = [dstart], [sstart]
    for k, (dd, sd) in enumerate(zip(ddims, sdims)):
        v = f"ascx_c{k}"  # fixed counter names (RESERVED), distinct within one nest
        out.append(Line(f"for (int32_t {v} = 0; {v} < {dd[0]}; ++{v}) {{", d, origin))
        d += 1
        doff.append(v if dd[2] == 1 else f"{v} * {dd[2]}")
        soff.append(v if sd[2] == 1 else f"{v} * {sd[2]}")
    dx = " + ".join(x for x in doff if x != "0") or "0"
    sx = " + ".join(x for x in soff if x != "0") or "0"
    out.append(Line(f"{dinfo.cname}.SetValue({dx}, {sinfo.cname}.GetValue({sx}));", d, origin))
    for _ in ddims:
        d -= 1
        out.append(Line("}", d, origin))
    return out


def _dma(pe, c, dinfo, sinfo, dstart, da, sstart, sa, dims, es, depth, origin):  # type: ignore[no-untyped-def]
    low = pe.low
    if dims[-1][1] != 1 or dims[-1][2] != 1:
        return None
    L = dims[-1][0]
    rows_dim = dims[-2] if len(dims) >= 2 else (1, L, L)
    outer = dims[:-2]
    gm_to_ub = sinfo.kind == "gm" and dinfo.kind == "local" and dinfo.scope == "ub"
    ub_to_gm = sinfo.kind == "local" and sinfo.scope == "ub" and dinfo.kind == "gm"
    ub_to_ub = sinfo.kind == "local" and dinfo.kind == "local" and sinfo.scope == dinfo.scope == "ub"
    gm_to_l1 = sinfo.kind == "gm" and dinfo.kind == "local" and dinfo.scope == "l1"
    if not (gm_to_ub or ub_to_gm or ub_to_ub or gm_to_l1):
        return None
    rows, sstride, dstride = rows_dim
    # local sides must start 32 B aligned, and so must every row and outer step
    local_sides = []
    if dinfo.kind == "local":
        local_sides.append((da, dstride, [o[2] for o in outer]))
    if sinfo.kind == "local":
        local_sides.append((sa, sstride, [o[1] for o in outer]))
    for a, rs, os_ in local_sides:
        if not _aligned(a, es):
            return None
        if rows > 1 and (rs * es) % 32:
            return None
        if any((o * es) % 32 for o in os_):
            return None
    if rows > MAX_BLOCKS:
        return None
    T = dinfo.dtype
    ct = {"f16": "half", "bf16": "bfloat16_t", "f32": "float", "i8": "int8_t", "i32": "int32_t"}[T]
    lb = L * es
    instr: str
    if lb % 32 == 0 and (rows == 1 or (sstride == L and dstride == L)):
        call = f"DataCopy({{d}}, {{s}}, {rows * L});"
        instr = "DataCopy"
    elif lb % 32 == 0 and ((sstride - L) * es) % 32 == 0 and ((dstride - L) * es) % 32 == 0 and \
            (sstride - L) * es // 32 < 65536 and (dstride - L) * es // 32 < 65536:
        call = f"DataCopy({{d}}, {{s}}, DataCopyParams({rows}, {lb // 32}, {(sstride - L) * es // 32}, {(dstride - L) * es // 32}));"
        instr = "DataCopy(DataCopyParams)"
    elif gm_to_ub:
        if rows > 1 and dstride * es < _ceil32(lb):
            return None
        ub_gap = (dstride * es - _ceil32(lb)) // 32 if rows > 1 else 0
        call = (f"DataCopyPad({{d}}, {{s}}, DataCopyExtParams({rows}, {lb}, {(sstride - L) * es}, {ub_gap}, 0), "
                f"DataCopyPadExtParams<{ct}>(false, 0, 0, 0));")
        instr = "DataCopyPad"
    elif ub_to_gm:
        if rows > 1 and sstride * es < _ceil32(lb):
            return None
        ub_gap = (sstride * es - _ceil32(lb)) // 32 if rows > 1 else 0
        call = f"DataCopyPad({{d}}, {{s}}, DataCopyExtParams({rows}, {lb}, {ub_gap}, {(dstride - L) * es}, 0));"
        instr = "DataCopyPad"
    else:
        return None
    out: list[Line] = []
    d = depth
    doff, soff = [dstart], [sstart]
    for k, (e, ss, ds) in enumerate(outer):
        v = f"ascx_c{k}"  # fixed counter names (RESERVED), distinct within one nest
        out.append(Line(f"for (int32_t {v} = 0; {v} < {e}; ++{v}) {{", d, origin))
        d += 1
        doff.append(f"{v} * {ds}")
        soff.append(f"{v} * {ss}")
    dexpr = " + ".join(x for x in doff if x != "0") or "0"
    sexpr = " + ".join(x for x in soff if x != "0") or "0"
    dref = dinfo.cname if dexpr == "0" else f"{dinfo.cname}[{dexpr}]"
    sref = sinfo.cname if sexpr == "0" else f"{sinfo.cname}[{sexpr}]"
    out.append(Line(call.format(d=dref, s=sref), d, origin))
    for _ in outer:
        d -= 1
        out.append(Line("}", d, origin))
    low.nests.append(_choice(low, c, (instr,)))
    return out


def _dma_tail(pe, c, dinfo, sinfo, dstart, da, ddims, sstart, sa, sdims, depth, origin):  # type: ignore[no-untyped-def]
    """A GM <-> UB copy of a tile tail (`tile` with `N % T != 0`: extents `min(T, N - i0*T)`,
    known at run time, at most T) as one DMA instruction with run-time lengths: `DataCopy`
    with a computed count when the rows are whole 32 B blocks (a contiguous copy: a row
    tail of full-width rows), else `DataCopyPad` with run-time `DataCopyExtParams` (rows,
    row bytes, GM gap in bytes, UB gap in 32 B blocks: the UB row stride minus the row
    rounded up to 32 B). At most two dimensions of run-time or non-unit extent (a tail
    tile is a rectangle of rows); the UB rows must hold the largest row, 32 B aligned."""
    from ..regions import max_slice_extent

    low = pe.low
    gm_to_ub = sinfo.kind == "gm" and dinfo.kind == "local" and dinfo.scope == "ub"
    ub_to_gm = sinfo.kind == "local" and sinfo.scope == "ub" and dinfo.kind == "gm"
    gm_to_l1 = sinfo.kind == "gm" and dinfo.kind == "local" and dinfo.scope == "l1"
    ub_to_ub = _ub_to_ub(dinfo, sinfo)
    if not (gm_to_ub or ub_to_gm or gm_to_l1 or ub_to_ub):
        return None
    dsl = [d for d in c.dst.dims if isinstance(d, ir.Slice)]
    ssl = [d for d in c.src.dims if isinstance(d, ir.Slice)]
    if len(dsl) != len(ddims) or len(ssl) != len(sdims):
        return None
    dims = []  # (extent C++, largest extent, src stride, dst stride)
    for dd, sd, dx, sx in zip(ddims, sdims, dsl, ssl):
        # both sides have the same extents (a copy's regions have one shape); take it from
        # the side whose largest value is known (the local side: `0:min(T, ..)`)
        dm, sm = max_slice_extent(dx, low.sizes), max_slice_extent(sx, low.sizes)
        if dm is None and sm is None or (dm is not None and sm is not None and dm != sm):
            return None
        dims.append((dd[0], dm, sd[2], dd[2]) if dm is not None else (sd[0], sm, sd[2], dd[2]))
    dims = [d for d in dims[:-1] if not (d[0] == "1" and d[1] == 1)] + [dims[-1]]
    if len(dims) > 2 or dims[-1][2] != 1 or dims[-1][3] != 1:
        return None
    L, lmax = dims[-1][0], dims[-1][1]
    rows, rmax, sstride, dstride = dims[0] if len(dims) == 2 else ("1", 1, lmax, lmax)
    es = dinfo.esize
    if ub_to_ub:
        return _ub_copy(pe, c, dinfo, dstart, da, sstart, sa, (L, lmax), (rows, rmax), sstride, dstride, depth, origin)
    a, lstride = (da, dstride) if gm_to_ub or gm_to_l1 else (sa, sstride)
    if not _aligned(a, es) or rmax > MAX_BLOCKS:
        return None
    if rmax > 1 and ((lstride * es) % 32 or lstride * es < _ceil32(lmax * es)):
        return None
    ct = {"f16": "half", "bf16": "bfloat16_t", "f32": "float", "i8": "int8_t", "i32": "int32_t"}[dinfo.dtype]
    const_len = dims[-1][0] == str(lmax)
    if const_len and (lmax * es) % 32 == 0 and (rmax == 1 or sstride == dstride == lmax):
        call, instr = f"DataCopy({{d}}, {{s}}, ({rows}) * {lmax});", "DataCopy"
    elif const_len and (lmax * es) % 32 == 0 and ((sstride - lmax) * es) % 32 == 0 and ((dstride - lmax) * es) % 32 == 0 \
            and max(sstride - lmax, dstride - lmax) * es // 32 < 65536:
        call = f"DataCopy({{d}}, {{s}}, DataCopyParams({rows}, {lmax * es // 32}, {(sstride - lmax) * es // 32}, {(dstride - lmax) * es // 32}));"
        instr = "DataCopy(DataCopyParams)"
    elif gm_to_l1:  # no DataCopyPad path into L1
        return None
    else:
        lb = f"({L}) * {es}"
        ub_gap = f"({lstride * es} - ({lb} + 31) / 32 * 32) / 32" if rmax > 1 else "0"
        gm_gap = f"({(dstride if ub_to_gm else sstride)} - ({L})) * {es}" if rmax > 1 else "0"
        if gm_to_ub:
            call = (f"DataCopyPad({{d}}, {{s}}, DataCopyExtParams({rows}, {lb}, {gm_gap}, {ub_gap}, 0), "
                    f"DataCopyPadExtParams<{ct}>(false, 0, 0, 0));")
        else:
            call = f"DataCopyPad({{d}}, {{s}}, DataCopyExtParams({rows}, {lb}, {ub_gap}, {gm_gap}, 0));"
        instr = "DataCopyPad"
    dref = dinfo.cname if dstart == "0" else f"{dinfo.cname}[{dstart}]"
    sref = sinfo.cname if sstart == "0" else f"{sinfo.cname}[{sstart}]"
    low.nests.append(_choice(low, c, (instr,)))
    return [Line(call.format(d=dref, s=sref), depth, origin)]
