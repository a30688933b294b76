"""Tile counts for the cores: the last step of `tile`'s size policy (`choose_tiles`).

Why: the capacity solver picks the largest tiles that fit, and the lowering deals the tiles
of a band's outer loop to the cores in contiguous shares.  The core with the most tiles sets
the kernel's time, so a count that is not a multiple of the cores wastes them: 64 tiles of 4
rows on 48 cores give 16 cores two tiles (8 rows) while the mean is 5.3 rows; 43 tiles of 6
rows (a tail of 4) give every core at most one tile (6 rows).  Small tiles have a price too:
each tile pays its DataCopy start-ups and instruction heads.  So the outer tile size is
chosen by a small cost model of the critical core (not by a rule):

    cost(T) = (share(T) x k + 1) x (T x row / k + overhead)

    share(T)  = ceil(tiles / cores), tiles = ceil(E / T), cores = min(tiles, aiv_cores): the
                tiles of the outer loop the critical core runs (the lowering's contiguous
                split, `spread.worker_bounds`);
    k         = tiles of the band's inner loop per outer tile (1 when the row is whole);
    row       = max(GM bytes read per outer iteration x MTE2 cycles per byte, bytes written
                x MTE3 cycles per byte, the nest's statements x the f32 repeats of a row x
                the vector cycles per repeat): the pipes of double-buffered tiles overlap, the
                busiest sets the pace; row-invariant inputs (staged once) are left out;
    overhead  = per tile: max(loads x MTE2 start-up, stores x MTE3 start-up) + a burst per row
                when the row is cut (strided copies) + the nest's statements x the vector
                instruction head + one flag round trip;
    + 1       = the pipeline's fill and drain (the first load and the last store do not
                overlap anything), which favours more, smaller tiles per core;
    plus the block dispatch of the core;

and never less than the kernel's GM bytes over the HBM bandwidth (all cores share it): a
kernel that HBM bounds gains nothing from a better count, so it keeps the solver's tiles
(a size is changed only when it is strictly cheaper).

Every number is a fact of the target table (`transformer/targets/_timing.py`: the timing
model's per-instruction, per-byte, per-burst, per-repeat and dispatch costs;
`hbm_bandwidth_gbps`, `clock_mhz`). transfers >= 16 KiB come out of the start-up term (a
100-cycle DataCopy start-up is a quarter of a 16 KiB load).  Candidates: the sizes the solver
could pick up to its choice, and `ceil(E / (j x cores))` for j = 1..8 (one, two, ... tiles
per core, a tail allowed), never fewer than two tiles.  They are tried cheapest first; one
cheaper than the solver's choice is taken only when a dry run proves it fits (the same
footprint and `check` as the solver, so `ascx check` accepts it); the inner sizes (long
contiguous runs, chosen by the solver) stay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from transformer import ir
from transformer.targets import Target, resolve_target

from transformer.timing.params import hbm_bytes_per_cycle

from . import _rewrite as R

GM_KINDS = ("input", "output", "temp")
PER_CORE = 8  # candidate tile counts: one .. PER_CORE tiles per core


@dataclass(frozen=True)
class Traffic:
    """GM traffic of one iteration of a band's outer loop (one row of tiles)."""

    read: int  # bytes loaded
    written: int  # bytes stored
    loads: int  # tensors loaded per tile (DataCopy GM -> UB)
    stores: int  # tensors stored per tile
    statements: int  # assignments in the nest (vector instructions per tile, at least)
    elems: int = 0  # elements of the widest tensor row


def traffic(kernel: ir.Kernel, loop: ir.For, extent: int) -> Traffic:
    """The GM bytes one iteration of `loop` (of `extent` iterations) reads and writes: every
    GM tensor the nest touches whose first dimension is `extent` (others are row-invariant:
    `tile` stages them once), its bytes / extent."""
    sizes = kernel.known_sizes()
    decls = {t.name: t for t in kernel.tensors()}
    read: set[str] = set()
    written: set[str] = set()
    statements = 0
    for s in ir.iter_stmts((loop,)):
        if isinstance(s, ir.Assign):
            statements += 1
            if isinstance(s.target, ir.Access):
                written.add(s.target.tensor)
                if s.op != "=":
                    read.add(s.target.tensor)
            read |= {e.tensor for e in ir.sub_exprs(s.value) if isinstance(e, ir.Access)}

    widest = [0]

    def row_bytes(names: set[str]) -> tuple[int, int]:
        total, count = 0, 0
        for n in names:
            d = decls[n]
            if d.kind not in GM_KINDS or not d.shape or R.eval_const(d.shape[0], sizes) != extent:
                continue
            elems = math.prod(R.eval_const(x, sizes) or 1 for x in d.shape) // extent
            widest[0] = max(widest[0], elems)
            total += elems * ir.DTYPE_BYTES[d.dtype]
            count += 1
        return total, count

    r, nr = row_bytes(read)
    w, nw = row_bytes(written)
    return Traffic(r, w, nr, nw, statements, widest[0])


def tile_cost(size: int, extent: int, cores: int, inner: int, t: Traffic, target: Target) -> float:
    """Cycles of the critical core for outer tiles of `size` rows (module docstring);
    `inner`: tiles of the band's inner loop per outer tile."""
    v = target.value
    tiles = -(-extent // size)
    share = -(-tiles // max(1, min(tiles, cores)))
    # each statement a vector instruction over the row, in f32 (256 B per repeat)
    vector = t.statements * -(-t.elems * 4 // 256) * v("timing_v_repeat_cycles")
    row = max(t.read * v("timing_mte2_ub_byte_cycles"), t.written * v("timing_mte3_byte_cycles"), vector)
    bursts = size * max(v("timing_mte2_block_cycles"), v("timing_mte3_block_cycles")) if inner > 1 else 0
    overhead = (max(t.loads * v("timing_mte2_instr_cycles"), t.stores * v("timing_mte3_instr_cycles"))
                + bursts + t.statements * v("timing_v_instr_cycles") + v("timing_sync_latency_cycles"))
    cores_time = v("timing_block_dispatch_cycles") + (share * inner + 1) * (size * row / inner + overhead)
    hbm = extent * (t.read + t.written) / hbm_bytes_per_cycle(target)
    return max(cores_time, hbm)


def size_candidates(extent: int, cores: int, solver: tuple[int, ...], chosen: int) -> list[int]:
    """Outer tile sizes to price: the solver's candidates up to its choice, and the sizes
    giving 1 .. PER_CORE tiles per core; at least two tiles."""
    out = {c for c in solver if c <= chosen}
    out |= {-(-extent // (j * cores)) for j in range(1, PER_CORE + 1)}
    return sorted(c for c in out if 1 <= c <= extent // 2 or c == chosen)


def balance(kernel: ir.Kernel, bands: list[list[tuple[str, ir.For]]], chosen: dict[str, int],
            cores: Mapping[str, int], solver: Mapping[str, tuple[int, ...]], target: Target | str | None,
            fits: Callable[[Mapping[str, int]], bool], notes: list[str] | None = None) -> dict[str, int]:
    """`chosen` with the outer size of each band spread over several cores replaced by the
    cheapest (`tile_cost`) that `fits` (a dry run proven by `check`)."""
    tgt = resolve_target(target)
    sizes = kernel.known_sizes()
    out = dict(chosen)
    for band in bands:
        n0, loop0 = band[0]
        w = cores.get(n0, 1)
        if w <= 1 or n0 not in out:
            continue
        extent = R.loop_extent(loop0, sizes) or 1
        inner = 1
        if len(band) > 1 and band[1][0] in out:
            e1 = R.loop_extent(band[1][1], sizes) or 1
            inner = -(-e1 // out[band[1][0]])
        t = traffic(kernel, loop0, extent)
        if t.read + t.written == 0:
            continue
        cost: Any = lambda s: tile_cost(s, extent, w, inner, t, tgt)  # noqa: E731
        here = out[n0]
        best = here
        for s in sorted(size_candidates(extent, w, solver.get(n0, ()), here), key=lambda s: (cost(s), -s)):
            if cost(s) >= cost(here) or s == here:
                break
            if fits({**out, n0: s}):
                best = s
                break
        if best != here:
            tiles = -(-extent // best)
            if notes is not None:
                notes.append(f"`{n0}`={best} instead of {here} for the cores: {tiles} tiles on {w} cores, "
                             f"the busiest core runs {-(-tiles // min(tiles, w))} (cost model, docs/passes-tiling.md)")
            out[n0] = best
    return out


def balance_cores(kernel: ir.Kernel, bands: list[list[tuple[str, ir.For]]], chosen: dict[str, int],
                  cores: Mapping[str, int], solver: Mapping[str, tuple[int, ...]], target: Target | str | None,
                  footprint: Callable[[Mapping[str, int]], Any], notes: list[str] | None = None) -> dict[str, int]:
    """`balance` with `fits` from `tile`'s footprint function (`tile.tile_footprint`): the
    dry run's buffers are proven sat by `check` and `double_buffer` still has a loop to
    pipeline."""
    from transformer.capacity import check

    tgt = resolve_target(target)

    def fits(req: Mapping[str, int]) -> bool:
        fp = footprint(req)
        return fp is not None and bool(fp[2]) and check(fp[0], tgt, hints=False, api_temp=fp[1]).status == "sat"

    return group_rows_for_cores(kernel, bands, balance(kernel, bands, chosen, cores, solver, tgt, fits, notes),
                                tgt, fits, notes)


def group_rows_for_cores(kernel: ir.Kernel, bands: list[list[tuple[str, ir.For]]], chosen: dict[str, int],
                         target: Target, fits: Callable[[Mapping[str, int]], bool],
                         notes: list[str] | None = None) -> dict[str, int]:
    """Rows two loops deep whose inner loop holds the K/V block loop (grouped-query decode
    attention after `online_softmax`: KV head `h` x query row `g` of its group). A tile of the
    whole group shares each staged K/V block among its G rows, but the cores then get only the
    KV heads (8 of 48 at LLaMA-2 70B's 64 / 8 heads); when the heads are fewer than the cores,
    the group is cut into the largest tiles that still give every query row a core (up to
    the core count): the lowering collapses the head loop with the group's tile loop
    (`transformer/lower/spread.py`), each core streaming its rows' keys. A 1-wide tile of the
    head loop is dropped (its 1-trip point loop would stop that collapse). The trade: every
    core casts its own copy of a K/V block instead of one core per group (32 x 4096 x 128
    decode: 326 us on 8 cores -> 81 us on 32, docs/performance.md); HBM traffic stays the
    compulsory one (the re-reads of a block come from L2)."""
    from ._sink import holds_block_loop

    sizes = kernel.known_sizes()
    cores = int(target.aiv_cores or target.cores)
    out = dict(chosen)
    for band in bands:
        if len(band) != 2 or not holds_block_loop(band[1][1], sizes):
            continue
        (n0, l0), (n1, l1) = band
        e0, e1 = R.loop_extent(l0, sizes) or 1, R.loop_extent(l1, sizes) or 1
        t1 = out.get(n1, e1)
        if e0 >= cores or t1 <= 1:
            continue
        want = min(cores, e0 * e1)
        size = max((t for t in range(1, t1 + 1) if e0 * math.ceil(e1 / t) >= want), default=1)
        if size >= t1:
            continue
        req = {k: v for k, v in out.items() if not (k == n0 and v == 1)}
        req[n1] = size
        if fits(req):
            if notes is not None:
                notes.append(f"`{n1}` in tiles of {size} (not {t1}): {e0} x {math.ceil(e1 / size)} row tiles for "
                             f"{cores} cores, each streaming its own K/V blocks")
            out = req
    return out


__all__ = ["Traffic", "balance", "balance_cores", "group_rows_for_cores", "size_candidates", "tile_cost", "traffic"]
