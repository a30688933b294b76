"""`tile`: split loops into tile/point loops and stage each tile into on-chip buffers.

    tile{qk.i=64,qk.j=128}     explicit tile sizes, keyed by loop name
    tile                       sizes chosen by `choose_tiles` (documented policy below)

`tile` is a composition of primitives, each also a pass of its own (or, for sinking, a
documented step), in this order for every nest (top-level loop) that holds a requested loop:

0. **`fission`** (`passes/fission.py`): the epilogue of a cube matmul nest (`O = f16(acc /
   sm)` after the K loop of P·V) becomes a nest `<label>_epi` of its own (the matmul goes to
   the cube, the epilogue to the vector cores); tile sizes requested for the matmul nest's
   loops apply to the epilogue's loops of the same variables (`_mirror_epilogue_tiles`).
   Before step 1, rows longer than a scope get their row temps recomputed (`_rows.py`).
1. **`split`** (`passes/split.py`): every requested loop `for i in lo..hi` with tile `T`
   becomes a tile loop `i0` over `ceil(N/T)` tiles and a point loop `i` over
   `min(T, N - i0*T)` (`0..T` when T divides N); `i` becomes `lo + i0*T + i`. Trip counts are
   concrete for fixed sizes, so **a tiled kernel is specialised to its sizes**; over a ranged
   size they are run-time expressions (`(N + T - 1) / T`) and the result serves the range.
2. **Sinking** (`passes/_sink.py`, a step, not a pass: it needs `split`'s record of which
   loops are tile and point loops): point loops move below the tile loops and block loops
   nested in them (a perfect band `i0{i{j0{j}}}` becomes `i0{j0{i{j}}}`; a point loop whose
   body holds a block loop is distributed around it), when `Check_point_loop_private` holds.
3. **`stage`** (`passes/stage.py`, the footprints from `transformer/regions.py`): every GM
   tensor (input, output, temp) accessed in the nest gets a `local` buffer holding its
   footprint at the outermost block loop that (a) encloses all its accesses and (b) whose
   inner block loops do not move the footprint (so `Q` is staged once per query tile and
   `K` once per K/V block); copies move the tile in and out; a temp used only inside the
   nest is contracted away. Scopes: vector work in `ub`; in a matmul-like nest the
   operands go GM -> `l1` -> `l0a` / `l0b` and the accumulator lives in `l0c`; a tensor
   written only from the `l0c` accumulator stays in GM (the FIX pipe writes it). The locals
   of a nest must fit the scope budgets (the target table), else the request is refused.
   What `tile` cannot stage stays in GM with the reason in the trace, where `stage` refuses.

It requires: 1) every requested loop exists and has bounds that evaluate to integers;
2) 1 <= T <= extent; 3) the requested loops of one nest are nested in one another, or
siblings (a name `label.var` may designate several sibling loops over one row: `_rows.py`).

Rewrite (add, `tile{ew.i=64,ew.j=256}`):

    ew: for i in 0..M {                      ew: for i0 in 0..4 {
      for j in 0..N {                          for j0 in 0..4 {
        C[i, j] = A[i, j] + B[i, j]    ->        copy A_ub[0:64, 0:256] <- A[i0 * 64:i0 * 64 + 64, j0 * 256:j0 * 256 + 256]
      }                                          copy B_ub[...] <- B[...]
    }                                            for i in 0..64 {
                                                   for j in 0..256 { C_ub[i, j] = A_ub[i, j] + B_ub[i, j] }
                                                 }
                                                 copy C[i0 * 64:i0 * 64 + 64, j0 * 256:j0 * 256 + 256] <- C_ub[0:64, 0:256]
                                               }
                                             }

Policy of `tile` without parameters (`choose_tiles`): a batched matmul (`for b { <a matmul>
}`, `transformer/lower/gemm.py`) is marked `@gemm` with `gemm`'s blocks (staged 3-D operand
tiles would not reach `Mmad`; `passes/gemm.py`, `cube_batched_matmuls`). For each other nest, the band of its outer
loop and, if perfectly nested, the next one. The Z3 capacity solver
(`transformer.capacity.solver_tiles`) picks the largest tiles (cube-legal multiples of 16
preferred) for which the kernel `double_buffer` would then make — its staged buffers twice
and the lowering's vector temporaries — fits every scope (so it vectorises), keeping at least two tiles on the band's outer loop (something to prefetch)
and, when the lowering spreads that loop over the cores, at least one tile per core (dropped
when nothing fits under it); sizes that leave a tail are tried where they cut the number of
tiles (`tile_candidates`: 4097 gets 1024-wide tiles and a tail, 4096 only divisors); an inner
loop chosen at its whole extent is left untiled (so `double_buffer` pipelines the outer one);
a spread band's outer size is then set for the cores by a cost model (`_balance.py`);
a nest where nothing fits has its rows tiled too when they are too long (`_rows.py`: the
sibling loops over a row, else the first group of loops one name designates that fits and
stages everything — the keys of fused attention, a group norm's channels), or is
refused with what a row needs (any sizes the hint names are checked by applying them:
`_refusals.checked_suggestion`), or (not a nest over rows) left untiled with the reason in
the trace. Without the solver, the fallback is the largest
power-of-two tiles (at most 256 and at most the extent) under the same budgets, trying the
same cap for all loops of the band and halving it until it fits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.diagnostics import CapacityExceeded, NotApplicable
from transformer.targets import Target
from transformer.regions import WrittenBefore

from . import _rewrite as R
from ._balance import balance_cores
from ._rows import recompute_row_temps, row_loop_groups, row_loops
from ._refusals import order_hint, row_refusal
from ._sink import holds_block_loop, sink_point_loops
from .base import Pass, PassError, TraceEntry, loop_names, preferred_loop_names, register
from .fission import EPILOGUE_SUFFIX, split_epilogues
from .params import Int, Loop, Map, Params
from .split import Strips, global_names, ranged_whole, resolve_requests, strip_mine
from .stage import finish, stage_nest

Path = tuple[int, ...]

__all__ = ["Tile", "choose_tiles", "long_row_tiles", "tile_footprint", "tile_kernel"]


# --------------------------------------------------------------------------------------
# the pass


@register
@dataclass(frozen=True)
class Tile(Pass):
    """Split loops into tile/point loops and stage tiles into on-chip `local` buffers."""

    name: ClassVar[str] = "tile"
    summary: ClassVar[str] = "split loops into tiles and stage each tile into on-chip buffers (copy in/out)"
    params: ClassVar[Params] = Map("tiles", Loop(), Int(None), example="qk.i=64,qk.j=128",
                                   note="LOOP=SIZE, SIZE in 1..extent; none: the capacity solver chooses")
    tiles: tuple[tuple[str, int], ...] = ()
    keeps_ranges: ClassVar[bool] = True

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        tiles = self.tiles
        kernel = split_epilogues(kernel, trace)
        if not tiles:
            from .gemm import cube_batched_matmuls

            cubed = len(trace.changes)
            kernel = cube_batched_matmuls(kernel, target, trace)
            cubed = len(trace.changes) > cubed
            notes: list[str] = []
            # tiles are constants: chosen at the sizes' values (a ranged kernel's defaults)
            chosen = choose_tiles(kernel.specialised(), target, notes)
            tiles = tuple(chosen.items()) + ranged_whole(kernel, chosen, _default_bands(kernel.specialised()))
            trace.decisions.append("no sizes given: chose " + (", ".join(f"{k}={v}" for k, v in tiles)
                                                                or ("nothing for the other nests" if cubed else "nothing"))
                                   + " (largest tiles the capacity solver proves fit, with room for 2 stages;"
                                   + " the tile count for the cores by a cost model)"
                                   + "".join(f"; {n}" for n in notes))
        return tile_kernel(kernel, tiles, target, trace, explain=True)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        sizes = kernel.known_sizes()
        for band in _default_bands(kernel):
            name0, loop0 = band[0]
            ext = R.loop_extent(loop0, sizes) or 0
            for t in [p for p in (4, 8, 16, 32, 64, 128, 256) if p <= ext][-3:]:
                cand = [Tile(((name0, t),))]
                if len(band) > 1:
                    e1 = R.loop_extent(band[1][1], sizes) or 0
                    if e1 >= t:
                        cand.append(Tile(((name0, t), (band[1][0], t))))
                for p in cand:
                    try:
                        tile_kernel(kernel, p.tiles, target, TraceEntry(p.to_text()))
                    except PassError:
                        continue
                    out.append(p)
        return out


# --------------------------------------------------------------------------------------
# choosing tiles (the seam for the capacity solver)


def _floor_pow2(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _default_bands(kernel: ir.Kernel) -> list[list[tuple[str, ir.For]]]:
    """For each top-level nest: its outer loop and, when perfectly nested, the next loop,
    with a name that designates each; loops without integer bounds are left out."""
    by_id = preferred_loop_names(kernel)
    sizes = kernel.known_sizes()
    bands = []
    for s in kernel.body:
        if not isinstance(s, ir.For) or s.annotation("gemm") is not None:  # the cube runs it (passes/gemm.py)
            continue
        band: list[tuple[str, ir.For]] = []
        cur: ir.Stmt = s
        while isinstance(cur, ir.For) and len(band) < 2:
            ext = R.loop_extent(cur, sizes)
            if ext is None or id(cur) not in by_id:
                break
            if ext < 2:  # nothing to tile here: look one level in
                if band or len(cur.body) != 1:
                    break
                cur = cur.body[0]
                continue
            band.append((by_id[id(cur)], cur))
            if len(cur.body) != 1:
                break
            cur = cur.body[0]
        if band:
            bands.append(band)
    return bands


def choose_tiles(kernel: ir.Kernel, target: Target | None = None, notes: list[str] | None = None) -> dict[str, int]:
    """Tile sizes for `tile` without parameters (see the module docstring for the policy).

    This is the one place to plug the capacity solver in: `solver_tiles` searches sizes
    through `tile_footprint` (what the emitted kernel allocates for given sizes) and
    returns `{loop name: tile size}`; `tile` does the rest."""
    sizes = kernel.known_sizes()
    bands = _default_bands(kernel)
    loops = {n: R.loop_extent(lp, sizes) or 1 for band in bands for n, lp in band}
    try:
        from transformer.capacity import CapacityError, solver_tiles
        from transformer.capacity.tiles import tile_candidates
    except ImportError:  # capacity solver not installed: the power-of-two policy below
        pass
    else:
        # The outer loop of each band keeps at least two tiles, so `double_buffer` has a
        # next tile to load while this one computes (and `multicore` has work to split).
        # When the lowering spreads that loop over the cores, it keeps a tile per core too
        # (37 rows on 48 cores: 1-row tiles, not 16-row tiles on 3 cores).
        # When nothing fits under that cap (cube operands need 16 rows), the cap is dropped.
        candidates = {n: tile_candidates(e) for n, e in loops.items()}
        workers = _spread_cores(kernel, bands, target)
        uncapped = dict(candidates)
        for band in bands:
            n = band[0][0]
            if loops[n] >= 2:  # (tail-leaving sizes up to the cap: 100 rows -> .., 32, 48)
                uncapped[n] = _capped_candidates(loops[n], loops[n] // 2)
                candidates[n] = _capped_candidates(loops[n], loops[n] // max(2, workers.get(n, 1)))
        # bands are per top-level nest: the solver solves them separately
        nests = {n: i for i, band in enumerate(bands) for n, _ in band}
        from transformer.printer import print_kernel

        # an inner loop of a band tiled by its whole extent is left untiled (a one-trip tile loop would
        # hide the outer one from `double_buffer`), unless it holds a block loop (GQA: `_sink.py`)
        whole = {n: loops[n] for band in bands for n, lp in band[1:] if R.loop_extent(lp, sizes)
                 and not holds_block_loop(lp, sizes)}
        try:
            chosen = solver_tiles(kernel, loops, target, candidates=candidates, partial=True,
                                  footprint=tile_footprint(kernel, target, whole), nests=nests,
                                  cache_key=print_kernel(kernel))
        except CapacityError:
            pass
        else:
            left = {n for band in bands if not any(n in chosen for n, _ in band) for n, _ in band}
            if left and any(candidates[n] != uncapped[n] for n in left):
                try:
                    chosen.update(solver_tiles(kernel, {n: loops[n] for n in left}, target, candidates=uncapped,
                                               partial=True, footprint=tile_footprint(kernel, target, whole),
                                               nests=nests, cache_key=print_kernel(kernel)))
                except CapacityError:
                    pass
            chosen = balance_cores(kernel, bands, chosen, workers, candidates, target,
                                   tile_footprint(kernel, target, whole), notes)
            chosen = _drop_whole(chosen, whole)
            for band in bands:
                if not any(n in chosen for n, _ in band):
                    chosen.update(long_row_tiles(kernel, band, target, notes))
            return chosen
    chosen = {}
    for band in _default_bands(kernel):
        cap = 256
        while cap >= 1:
            req = []
            for n, loop in band:
                ext = R.loop_extent(loop, sizes) or 1
                req.append((n, min(cap, _floor_pow2(ext))))
            try:
                tile_kernel(kernel, tuple(req), target, TraceEntry("tile"), reserve=2)
            except PassError:
                cap //= 2
                continue
            chosen.update(req)
            break
    return chosen


def _capped_candidates(extent: int, cap: int) -> tuple[int, ...]:
    """`tile_candidates` of a loop of `extent` among the default sizes up to `cap`."""
    from transformer.capacity.search import DEFAULT_CANDIDATES
    from transformer.capacity.tiles import SMALL, tile_candidates

    return tile_candidates(extent, [c for c in SMALL + DEFAULT_CANDIDATES if c <= cap]) or (1,)


def _spread_cores(kernel: ir.Kernel, bands: list[list[tuple[str, ir.For]]], target: Target | None) -> dict[str, int]:
    """{outer loop of a band: the cores the lowering would spread it over} for the bands
    whose outer loop is a top-level statement (`transformer.lower.spread`, automatic split)."""
    from transformer.diagnostics import AscxError
    from transformer.lower.spread import kernel_spread
    from transformer.targets import resolve_target

    try:
        spread = kernel_spread(kernel, resolve_target(target), collapse=False)
    except AscxError:  # an estimate only: no spread known, no cap
        return {}
    index = {id(s): i for i, s in enumerate(kernel.body)}
    return {band[0][0]: spread[index[id(band[0][1])]].cores for band in bands
            if id(band[0][1]) in index and index[id(band[0][1])] in spread}


ROW_TILE_CANDIDATES = tuple(2 ** k for k in range(4, 21))  # elements of a tile of a long row


def long_row_tiles(kernel: ir.Kernel, band: list[tuple[str, ir.For]], target: Target | None = None,
                   notes: list[str] | None = None) -> dict[str, int]:
    """Tiles for a nest where no tile of its band fits: {} when even one row is not the
    problem (one row fits: e.g. no cube-legal tile of a matmul); else one row per tile of
    the band's loop and the largest tiles of the loops over the row that the capacity
    solver proves fit with room for two stages (`_rows.row_loops`); else the refusal
    `CapacityExceeded` saying what one row needs and what would work — for a nest over rows
    (loops over one extent in the row loop); another nest is left untiled with the reason
    in `notes`."""
    from transformer.capacity.tiles import SMALL, solver_tiles, tile_candidates

    name0, loop0 = band[0]
    sizes = kernel.known_sizes()
    rows = row_loops(kernel, loop0, name0, sizes) if len(band) == 1 else None

    def row_tiles(rname: str, ext: int, small: tuple[int, ...] = ()) -> dict[str, int]:
        cands = {name0: (1,), rname: tile_candidates(ext, [c for c in small + ROW_TILE_CANDIDATES if c <= ext])}
        got = solver_tiles(kernel, {name0: R.loop_extent(loop0, sizes) or 1, rname: ext}, target,
                           candidates=cands, partial=True, footprint=tile_footprint(kernel, target),
                           nests={name0: 0, rname: 0})
        return got if got.get(rname) else {}

    if rows is not None and (got := row_tiles(*rows)):
        return got
    try:
        tile_kernel(kernel, ((name0, 1),), target, TraceEntry("tile"), reserve=2)
        return {}  # one row fits, twice: the row is not the problem
    except CapacityExceeded as e:
        err = e
    except PassError:
        return {}
    # one row does not fit with room for two stages: tile a group of loops over it (the keys
    # of fused attention, the channels of a group norm: short loops get small tiles too),
    # the longest loops first
    for group in row_loop_groups(kernel, loop0, sizes):
        if group != rows and (got := row_tiles(*group, SMALL)) and _all_staged(kernel, got, target):
            return got
    if rows is None:
        try:
            tile_kernel(kernel, ((name0, 1),), target, TraceEntry("tile"))
            return {}
        except CapacityExceeded as e:
            err = e
        except PassError:
            return {}
    refusal = row_refusal(kernel, band, err, rows, target, tile_kernel)
    inner = [s for s in loop0.body if isinstance(s, ir.For)]
    if rows is not None or (len(band) == 1 and inner and len({R.loop_extent(lp, sizes) for lp in inner}) == 1):
        raise refusal  # a nest over rows: refuse rather than leave it in GM
    if notes is not None:  # another shape (a matmul, attention before `online_softmax`): say why
        notes.append(f"`{loop0.label or name0}` left in GM: {refusal.what} ({refusal.hint})")
    return {}


def _all_staged(kernel: ir.Kernel, req: Mapping[str, int], target: Target | None) -> bool:
    """Whether `tile` with `req` stages every array the tiled nests compute on (no
    arithmetic left on GM: tiling one loop over a row while a sibling keeps the whole row
    fits only because that sibling's tensors stay in GM)."""
    out = tile_kernel(kernel, tuple(req.items()), target, TraceEntry("tile"))
    before = {id(s) for s in kernel.body}
    gm = {d.name for d in out.tensors() if d.kind != "local" and d.rank > 0}
    for s in ir.iter_stmts(tuple(x for x in out.body if id(x) not in before)):
        if isinstance(s, ir.Assign) and any(a.tensor in gm for a, _ in R.stmt_accesses(s)):
            return False
    return True


def _drop_whole(req: Mapping[str, int], whole: Mapping[str, int]) -> dict[str, int]:
    """`req` without the loops of `whole` ({loop: extent}) requested at their whole extent."""
    return {n: v for n, v in req.items() if whole.get(n) != v}


def tile_footprint(kernel: ir.Kernel, target: Target | None = None,
                   whole: Mapping[str, int] | None = None) -> Any:
    """The footprint function `solver_tiles` searches with: `{loop: size}` -> the buffers
    (and API temp need) of the kernel `tile` then `double_buffer` would emit — every
    staged local with its stages and the lowering's vector temporaries — or None when
    `tile` refuses the sizes.  `reserve=2` refuses sizes whose single-stage buffers exceed
    half a scope, so there is room for `double_buffer` whichever pipeline follows.
    `whole` ({loop: extent}): loops requested at their whole extent are not tiled (as
    `choose_tiles` then requests them)."""
    from transformer.capacity.tiles import kernel_footprint
    from transformer.check import check_kernel

    from .double_buffer import DoubleBuffer

    piped = [True]  # whether the last dry run found a loop to pipeline

    before = {id(s) for s in kernel.body}

    def dry_run(k: ir.Kernel, req: Mapping[str, int]) -> ir.Kernel:
        out = tile_kernel(k, tuple(_drop_whole(req, whole or {}).items()), target, TraceEntry("tile"), reserve=2)
        # only the nests tile changed: checked, pipelined and lowered on their own (the
        # lowering plans each top-level nest alone), so a dry run costs its nest
        out = dataclasses.replace(out, body=tuple(s for s in out.body if id(s) not in before))
        if check_kernel(out):
            raise PassError("tile", "tile produced an invalid kernel")
        try:
            out = DoubleBuffer().run(out, target, TraceEntry("double_buffer"))
            piped[0] = True
        except PassError:  # nothing to pipeline (or unsafe): the tiles stay single-staged
            piped[0] = False
        return out

    def footprint(req: Mapping[str, int]) -> Any:
        got = plain(req)
        if got is None:
            return None
        # preferred: sizes for which `double_buffer` has a loop to pipeline
        return (*got, piped[0])

    plain = kernel_footprint(dry_run, kernel, target)
    return footprint


# --------------------------------------------------------------------------------------
# the composition


def Check_tiled_loops_nested(nest_loops: list[tuple[str, Path, ir.For]]) -> None:
    """Condition: any two requested loops of one nest are nested in one another, or are
    siblings (children of one loop: the loops over one long row, staged per tile each)."""
    ordered = sorted(nest_loops, key=lambda x: len(x[1]))
    for k, (na, pa, _) in enumerate(ordered):
        for nb, pb, lb in ordered[k + 1:]:
            if (pb[:len(pa)] == pa and len(pa) < len(pb)) or pa[:-1] == pb[:-1]:
                continue
            raise NotApplicable("tile", f"loops `{na}` and `{nb}` are neither nested in one another nor siblings; "
                                "tile them in separate `tile` passes", lb.loc, loops=(na, nb))


def _mirror_epilogue_tiles(kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """Tile sizes requested for loops of a split matmul nest `L` also apply to the loops of
    the same variables in its epilogue `L_epi`, unless the epilogue's loops are named."""
    names = loop_names(kernel)
    refs = {}
    for n, _ in tiles:
        if n in names:
            refs[n] = names[n]
    requested = {id(r.loop) for r in refs.values()}
    out = list(tiles)
    for n, size in tiles:
        ref = refs.get(n)
        if ref is None:
            continue
        nest = kernel.body[ref.path[0]]
        if not (isinstance(nest, ir.For) and nest.label):
            continue
        epi = f"{nest.label}{EPILOGUE_SUFFIX}"
        twin = names.get(f"{epi}.{ref.loop.var}")
        if twin is not None and id(twin.loop) not in requested and twin.path[0] == ref.path[0] + 1:
            out.append((twin.name, size))
            requested.add(id(twin.loop))
    return tuple(out)


def tile_kernel(kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...], target: Target | None, trace: TraceEntry,
                *, reserve: int = 1, explain: bool = False) -> ir.Kernel:
    """Apply `tile` with explicit sizes: `fission` (step 0), then per nest `split` (1),
    sinking (2) and `stage` (3). The staged buffers of each nest, times `reserve`, must fit
    the scope budgets (`reserve=0`: not checked). `explain`: a capacity refusal says when
    tiling another loop of the nest first would make it fit (`_refusals.order_hint`)."""
    sizes = kernel.known_sizes()
    kernel = split_epilogues(kernel, trace)
    tiles = _mirror_epilogue_tiles(kernel, tiles)
    kernel = recompute_row_temps(kernel, tiles, trace)
    req, by_nest = resolve_requests(kernel, tiles, "tile")
    for lst in by_nest.values():
        Check_tiled_loops_nested(lst)

    taken = R.used_names(kernel)
    body = list(kernel.body)
    new_locals: list[ir.TensorDecl] = []
    drop: set[str] = set()
    names = global_names(kernel)
    prologues: dict[int, list[ir.Stmt]] = {}
    for top in sorted(by_nest):
        nest = body[top]
        st = Strips()
        nest_names = names | {lp.var for lp in ir.iter_loops((nest,))} | {d.name for d in new_locals}
        nest = strip_mine(nest, req, sizes, nest_names, st, trace, kernel.size_ranges())
        taken |= st.tile_vars
        (nest,) = sink_point_loops(nest, st, sizes, trace)
        others = tuple(s for i, s in enumerate(body) if i != top)
        pro = prologues.setdefault(top, [])
        try:
            nest, locs, dead = stage_nest(kernel, nest, st, sizes, taken, others, target, trace, reserve,
                                          WrittenBefore(kernel.body[:top], kernel.body[top], kernel, sizes),
                                          prologue=pro)
        except CapacityExceeded as e:
            if explain:
                order_hint(e, kernel, tiles, top, target, reserve, tile_kernel)
            raise
        body[top] = nest
        new_locals += locs
        drop |= dead
    # row-invariant inputs staged once go right before their nest (lowering runs them on
    # every core before its share of the tile loop: `transformer/lower/spread.py`)
    body = [x for i, s in enumerate(body) for x in (*prologues.get(i, ()), s)]
    return finish(kernel, body, new_locals, drop, trace)
