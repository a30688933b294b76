"""Tile sizes for speed (issue 14 item 5): at the issue's sizes, `tile` without parameters
chooses tiles whose DataCopies move at least 16 KiB (or the largest tile that fits when UB
does not allow that), start at 512 B-aligned GM addresses, and leave room for double
buffering (every buffer staged per tile gets two stages and the kernel still fits; a
row-invariant input staged once before its nest — layernorm's gamma/beta — has one)."""

from __future__ import annotations

import math

import pytest

from passes_testutil import example
from passes.base import TraceEntry, run_pipeline
from passes.tile import tile_kernel
from transformer import ir
from transformer.affine import to_affine
from transformer.capacity import check_kernel_capacity
from transformer.diagnostics import PassError
from transformer.loops import buffer_stages

CASES = [
    ("add", {"M": 4096, "N": 4096}, "tile,double_buffer"),
    ("softmax", {"R": 8192, "C": 8192}, "fuse,tile,double_buffer"),
    ("layernorm", {"N": 8192, "H": 8192}, "fuse,tile,double_buffer"),
    ("rmsnorm", {"N": 8192, "H": 8192}, "fuse,tile,double_buffer"),
    ("softmax", {"R": 256, "C": 65536}, "fuse,tile,double_buffer"),
]
BIG = 16 * 1024
GM_ALIGN = 512


def _gm_copies(k: ir.Kernel) -> list[tuple[ir.Region, ir.Region]]:
    """(GM region, local region) of every copy between GM and a local."""
    gm = {t.name for t in (*k.inputs, *k.outputs)} | {t.name for t in k.buffers if t.kind == "temp"}
    out = []
    for s in ir.iter_stmts(k.body):
        if isinstance(s, ir.Copy):
            if s.src.tensor in gm:
                out.append((s.src, s.dst))
            elif s.dst.tensor in gm:
                out.append((s.dst, s.src))
    return out


def _elems(r: ir.Region, sizes: dict[str, int]) -> int:
    n = 1
    for d in r.dims:
        if isinstance(d, ir.Slice):
            lo, hi = to_affine(d.lo, sizes), to_affine(d.hi, sizes)
            assert lo is not None and hi is not None and (hi - lo).is_const()
            n *= (hi - lo).const
    return n


def _offset_aligned(k: ir.Kernel, r: ir.Region, sizes: dict[str, int]) -> bool:
    """Whether the region's first element is at a multiple of 512 B for every value of the
    loop variables: every coefficient of the (affine) byte offset is a multiple of 512."""
    decl = k.tensor(r.tensor)
    assert decl is not None
    shape = [to_affine(d, sizes).const for d in decl.shape]  # type: ignore[union-attr]
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    off = None
    for d, stride in zip(r.dims, strides):
        lo = to_affine(d.lo if isinstance(d, ir.Slice) else d, sizes)
        assert lo is not None
        term = lo.scale(stride * ir.DTYPE_BYTES[decl.dtype])
        off = term if off is None else off + term
    assert off is not None
    return off.const % GM_ALIGN == 0 and all(c % GM_ALIGN == 0 for _, c in off.coeffs)


def _min_copy_bytes(k: ir.Kernel) -> int:
    vals = k.size_values()
    out = []
    for gm, _ in _gm_copies(k):
        decl = k.tensor(gm.tensor)
        assert decl is not None
        if decl.kind != "temp":
            out.append(_elems(gm, vals) * ir.DTYPE_BYTES[decl.dtype])
    return min(out)


def _bigger_fits(k: ir.Kernel, tiles: dict[str, int], now: int) -> bool:
    """Whether doubling one chosen tile would give larger copies than `now` bytes and
    still fit with two stages."""
    from passes.double_buffer import DoubleBuffer

    for name in tiles:
        req = dict(tiles)
        req[name] *= 2
        try:
            out = tile_kernel(k, tuple(req.items()), None, TraceEntry("tile"), reserve=2)
            out = DoubleBuffer().run(out, None, TraceEntry("double_buffer"))
        except PassError:
            continue
        if _min_copy_bytes(out) > now and check_kernel_capacity(out, "ascend910b2").status == "sat":
            return True
    return False


@pytest.mark.parametrize("name,sizes,pipeline", CASES, ids=[f"{c[0]}-{'x'.join(map(str, c[1].values()))}" for c in CASES])
def test_chosen_tiles_make_large_aligned_double_buffered_copies(name: str, sizes: dict[str, int], pipeline: str) -> None:
    k = example(name, sizes)
    out, trace = run_pipeline(k, pipeline)
    tile_trace = trace[-2]
    chosen_text = next(d for d in tile_trace.decisions if d.startswith("no sizes given: chose "))
    tiles = dict((kv.split("=")[0], int(kv.split("=")[1]))
                 for kv in chosen_text.removeprefix("no sizes given: chose ").split(" (")[0].split(", "))
    assert tiles, chosen_text
    vals = out.size_values()
    copies = _gm_copies(out)
    assert copies
    small = []
    for gm, _ in copies:
        decl = out.tensor(gm.tensor)
        assert decl is not None
        if decl.kind == "temp":
            continue  # per-row statistics, not a stream
        nbytes = _elems(gm, vals) * ir.DTYPE_BYTES[decl.dtype]
        if nbytes < BIG:
            small.append((gm.tensor, nbytes))
        assert _offset_aligned(out, gm, vals), f"{gm.tensor}: GM offset not {GM_ALIGN} B aligned"
    # room for double buffering: every buffer a copy fills or drains per tile has two
    # stages; a row-invariant input copied once before its nest (a top-level copy) has one
    stages = buffer_stages(out)
    once = {s.dst.tensor for s in out.body if isinstance(s, ir.Copy)}
    for _, loc in copies:
        assert stages.get(loc.tensor, 1) == (1 if loc.tensor in once else 2), f"{loc.tensor}: stages"
    assert all(out.tensor(t).rank == 1 and out.tensor(t).kind == "local" for t in once)  # type: ignore[union-attr]
    # ... and the kernel fits
    assert check_kernel_capacity(out, "ascend910b2").status == "sat"
    if small:
        # smaller copies only where UB does not allow 16 KiB: no tile can be doubled
        fused = run_pipeline(k, pipeline.rsplit(",tile", 1)[0])[0] if pipeline.startswith("fuse") else k
        assert not _bigger_fits(fused, tiles, min(b for _, b in small)), (small, tiles)
