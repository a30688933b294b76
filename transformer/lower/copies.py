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
- Cube-side copies in the generic path (row-major L1/L0 buffers) and anything else are
  scalar loops (`GetValue`/`SetValue`), with a warning.
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
        if out is not None:
            return out
    elif len(ddims) == len(sdims) and sinfo.dtype == dinfo.dtype:
        out = _dma_tail(pe, c, dinfo, sinfo, dstart, da, ddims, sstart, sa, sdims, depth, origin)
        if out is not None:
            return out
    why = "regions not rectangular with constant extents" if not consts else \
        f"no DMA form for {sinfo.scope if sinfo.kind == 'local' else 'GM'} -> {dinfo.scope if dinfo.kind == 'local' else 'GM'}"
    if kinds != ("local", "local") or sinfo.scope == "ub":
        low.warn(c, f"copy into `{c.dst.tensor}` is a scalar loop ({why})")
    else:
        low.warn(c, f"copy into `{c.dst.tensor}` is a scalar loop ({why}; generic row-major cube buffers)")
    choice = _choice(low, c, ("GetValue", "SetValue"), why)
    low.nests.append(choice)
    return _scalar_copy(pe, c, dinfo, sinfo, dstart, ddims, sstart, sdims, depth, choice.where)


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
    if not (gm_to_ub or ub_to_gm):
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
    a, lstride = (da, dstride) if gm_to_ub else (sa, sstride)
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
