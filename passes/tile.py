"""`tile`: split loops into tile/point loops and stage each tile into on-chip buffers.

    tile{qk.i=64,qk.j=128}     explicit tile sizes, keyed by loop name
    tile                       sizes chosen by `choose_tiles` (documented policy below)

What it does, in three steps, for every nest (top-level loop) that holds a requested loop:

1. **Split.** `for i in lo..hi` with tile `T` and concrete extent `N = hi - lo` becomes

       for i0 in 0..ceil(N/T) {                  # tile loop (keeps the label, annotations)
         for i in 0..min(T, N - i0*T) { ... }    # point loop (`0..T` when T divides N)
       }

   and `i` in the body is replaced by `lo + i0*T + i`. Trip counts are concrete integers
   computed from the kernel's `size`s (the IR has no division), so **a tiled kernel is
   specialised to its sizes**: change the sizes before tiling, not after.
2. **Sink point loops** below the tile loops and block loops nested in them, so that the
   tile loops form the outside of the nest: a perfect band `i0{i{j0{j}}}` becomes
   `i0{j0{i{j}}}`; a point loop whose body holds a block loop is *distributed* around it
   (`i{A; for jb{B}; C}` -> `i{A}; for jb{i{B}}; i{C}`). A *block loop* is a tile loop or a
   loop whose variable appears in indices only as `c*jb` with `c > 1` (e.g. the K/V block
   loop that `online_softmax` makes). Sinking is done only when `Check_point_loop_private`
   holds; otherwise the point loop stays where it is (always correct, less reuse).
3. **Stage.** Every GM tensor (input, output, temp) accessed in the nest gets a `local`
   buffer holding its footprint at the outermost block loop that (a) encloses all its
   accesses and (b) whose inner block loops do not move the footprint (so `Q` is staged
   once per query tile and `K` once per K/V block). Accesses are rewritten to the local;
   `copy` statements move the tile in (before the body, when some element is read before
   the body writes it) and out (after the body, when it is written and is an output or a
   temp used elsewhere). A temp used only inside the nest is contracted away (its local
   replaces it). Scopes: vector work in `ub`; in a matmul-like nest (`acc += a * b`, with
   `acc` only initialised, accumulated and read by a cast) the operands go GM -> `l1` ->
   `l0a` / `l0b` and the accumulator lives in `l0c`; a tensor written only from the `l0c`
   accumulator stays in GM (the FIX pipe writes it). The locals of a nest must fit the
   scope budgets (the target table), else the request is refused.
0. **Split off the epilogue of a cube matmul** (before 1): a nest whose innermost band body
   is `acc = 0; for k { acc += f32(a) * f32(b) }` followed by statements reading `acc`
   other than by a cast (`O = f16(acc / sm)`, the normalisation of P·V; a plain
   `C = f16(acc)` stays: the FIX pipe writes it), with `a` and `b` in cube operand types
   (f16, bf16: `round_operand` makes P f16), is distributed into the matmul nest (keeps
   the label; goes to the cube) and an epilogue nest `<label>_epi` (vector work), `acc`
   staying a temp between them. Done only when no dependence runs from an epilogue
   instance back to a later matmul instance (`Check_epilogue_split`); tile sizes requested
   for the matmul nest's loops apply to the epilogue's loops of the same variables.

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

Policy of `tile` without parameters (`choose_tiles`): for each nest, the band of its outer
loop and, if perfectly nested, the next one. The Z3 capacity solver
(`transformer.capacity.solver_tiles`) picks the largest tiles (cube-legal multiples of 16
preferred) for which the kernel `double_buffer` would then make — its staged buffers twice
and the lowering's vector temporaries — fits every scope (so it vectorises), keeping at least two tiles on the band's outer loop (something to prefetch);
a nest where nothing fits has its rows tiled too when they are too long (`_rows.py`), or is
refused with what a row needs, or (not a nest over rows) left untiled with the reason in
the trace. Without the solver, the fallback is the largest
power-of-two tiles (at most 256 and at most the extent) under the same budgets, trying the
same cap for all loops of the band and halving it until it fits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.diagnostics import BadParameter, CapacityExceeded, NotApplicable
from transformer.affine import to_affine
from transformer.regions import (AccessSite, Box, box_of, collect, common_path, contains, kept_dims, merge,
                                 reads_covered, union)

from . import _rewrite as R
from ._budgets import scope_budget, tensor_bytes
from ._rows import recompute_row_temps, resolve_tiled, row_loops
from .base import (Args, Pass, PassError, PipelineError, TraceEntry, loop_names, preferred_loop_names, register,
                   resolve_loop)

Path = tuple[int, ...]


# --------------------------------------------------------------------------------------
# the pass


@register
@dataclass(frozen=True)
class Tile(Pass):
    """Split loops into tile/point loops and stage tiles into on-chip `local` buffers."""

    name: ClassVar[str] = "tile"
    summary: ClassVar[str] = "split loops into tiles and stage each tile into on-chip buffers (copy in/out)"
    params_doc: ClassVar[str] = "{LOOP=SIZE,...} e.g. {qk.i=64,qk.j=128}; none: the capacity solver chooses"
    tiles: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_args(cls, args: Args) -> "Tile":
        tiles = []
        for key, value in args:
            if value is None:
                raise PipelineError(f"`tile` parameter `{key}` needs a tile size", hint=f"write `{key}=64`")
            try:
                size = int(value)
            except ValueError:
                raise PipelineError(f"`tile` size for `{key}` must be an integer, got `{value}`") from None
            tiles.append((key, size))
        return cls(tuple(tiles))

    def to_text(self) -> str:
        if not self.tiles:
            return "tile"
        return "tile{" + ",".join(f"{k}={v}" for k, v in self.tiles) + "}"

    def run(self, kernel: ir.Kernel, target: Any, trace: TraceEntry) -> ir.Kernel:
        tiles = self.tiles
        kernel = split_epilogues(kernel, trace)
        if not tiles:
            notes: list[str] = []
            chosen = choose_tiles(kernel, target, notes)
            tiles = tuple(chosen.items())
            trace.decisions.append("no sizes given: chose " + (", ".join(f"{k}={v}" for k, v in tiles) or "nothing")
                                   + " (largest tiles the capacity solver proves fit, with room for 2 stages)"
                                   + "".join(f"; {n}" for n in notes))
        return tile_kernel(kernel, tiles, target, trace)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Any = None) -> list[Pass]:
        out: list[Pass] = []
        sizes = kernel.size_values()
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
    sizes = kernel.size_values()
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


def choose_tiles(kernel: ir.Kernel, target: Any = None, notes: list[str] | None = None) -> dict[str, int]:
    """Tile sizes for `tile` without parameters (see the module docstring for the policy).

    This is the one place to plug the capacity solver in: `solver_tiles` searches sizes
    through `tile_footprint` (what the emitted kernel allocates for given sizes) and
    returns `{loop name: tile size}`; `tile` does the rest."""
    sizes = kernel.size_values()
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
        candidates = {n: tile_candidates(e) for n, e in loops.items()}
        for band in bands:
            n = band[0][0]
            if loops[n] >= 2:
                candidates[n] = tuple(c for c in candidates[n] if c <= loops[n] // 2) or (1,)
        # bands are per top-level nest: the solver solves them separately
        nests = {n: i for i, band in enumerate(bands) for n, _ in band}
        from transformer.printer import print_kernel

        try:
            chosen = solver_tiles(kernel, loops, target, candidates=candidates, partial=True,
                                  footprint=tile_footprint(kernel, target), nests=nests,
                                  cache_key=print_kernel(kernel))
        except CapacityError:
            pass
        else:
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


ROW_TILE_CANDIDATES = tuple(2 ** k for k in range(4, 21))  # elements of a tile of a long row


def long_row_tiles(kernel: ir.Kernel, band: list[tuple[str, ir.For]], target: Any = None,
                   notes: list[str] | None = None) -> dict[str, int]:
    """Tiles for a nest where no tile of its band fits: {} when even one row is not the
    problem (one row fits: e.g. no cube-legal tile of a matmul); else one row per tile of
    the band's loop and the largest tiles of the loops over the row that the capacity
    solver proves fit with room for two stages (`_rows.row_loops`); else the refusal
    `CapacityExceeded` saying what one row needs and what would work — for a nest over rows
    (loops over one extent in the row loop); another nest is left untiled with the reason
    in `notes`."""
    from transformer.capacity.tiles import solver_tiles, tile_candidates

    name0, loop0 = band[0]
    sizes = kernel.size_values()
    rows = row_loops(kernel, loop0, name0, sizes) if len(band) == 1 else None
    if rows is not None:
        rname, ext = rows
        cands = {name0: (1,), rname: tile_candidates(ext, [c for c in ROW_TILE_CANDIDATES if c <= ext])}
        got = solver_tiles(kernel, {name0: R.loop_extent(loop0, sizes) or 1, rname: ext}, target,
                           candidates=cands, partial=True, footprint=tile_footprint(kernel, target),
                           nests={name0: 0, rname: 0})
        if got.get(rname):
            return got
    try:
        tile_kernel(kernel, ((name0, 1),), target, TraceEntry("tile"), reserve=2 if rows else 1)
        return {}
    except CapacityExceeded as e:
        err = e
    except PassError:
        return {}
    refusal = _row_refusal(kernel, band, err, rows, target)
    inner = [s for s in loop0.body if isinstance(s, ir.For)]
    if rows is not None or (len(band) == 1 and inner and len({R.loop_extent(lp, sizes) for lp in inner}) == 1):
        raise refusal  # a nest over rows: refuse rather than leave it in GM
    if notes is not None:  # another shape (a matmul, attention before `online_softmax`): say why
        notes.append(f"`{loop0.label or name0}` left in GM: {refusal.what} ({refusal.hint})")
    return {}


def _row_refusal(kernel: ir.Kernel, band: list[tuple[str, ir.For]], err: CapacityExceeded,
                 rows: tuple[str, int] | None, target: Any) -> CapacityExceeded:
    """`tile` cannot stage the nest: say what one row needs (the largest local of a
    one-row tile, and all of them), what the scope holds (the target table), and what would
    work."""
    name0, loop0 = band[0]
    sizes = kernel.size_values()
    one = tile_kernel(kernel, ((name0, 1),), target, TraceEntry("tile"), reserve=0)
    new = [d for d in one.buffers if d.kind == "local" and d.scope == err.scope]
    usable = scope_budget(target, err.scope)
    scope = err.scope.upper()
    twice = " (twice that, to leave room for double buffering)" if rows is not None else ""
    big = max(new, key=lambda d: tensor_bytes(d, sizes)) if new else None
    if big is not None and tensor_bytes(big, sizes) > usable:
        n = 1
        for d in big.shape:
            n *= R.eval_const(d, sizes) or 1
        what = (f"a row of {n} {big.dtype} (`{big.name}`) needs {_kib(tensor_bytes(big, sizes))}, "
                f"{scope} has {_kib(usable)} usable")
    elif new:
        what = (f"one row needs {_kib(sum(tensor_bytes(d, sizes) for d in new))} of {scope} ("
                + ", ".join(f"`{d.name}` {_kib(tensor_bytes(d, sizes))}" for d in new)
                + f"){twice}, {scope} has {_kib(usable)} usable")
    else:
        what = f"one row needs {_kib(err.need_bytes)} of {scope}, which has {_kib(usable)} usable"
    label = loop0.label or name0
    names = preferred_loop_names(kernel)
    inner = [s for s in loop0.body if isinstance(s, ir.For)]
    if rows is not None:
        hint = (f"even the smallest tiles of the loops over the row do not fit; stage fewer tensors per nest "
                f"(run `tile` before `fuse`), or tile explicitly: `tile{{{name0}=1,{rows[0]}=16}}`")
    elif inner and all(id(lp) in names for lp in inner):
        ask = ",".join([f"{name0}=1"] + sorted({f"{names[id(lp)]}=1024" for lp in inner}))
        hint = f"tile the loops over the row explicitly: `tile{{{ask}}}`"
    else:
        hint = ("tile the loops over the row explicitly (`tile{LOOP=1,ROW_LOOP=1024}`; sibling loops over one row "
                f"with one variable are named together as `{label}.VAR`), or label the nest's loops so they can be named")
    out = CapacityExceeded("tile", f"cannot stage `{label}`: {what}; its loops over the row cannot be tiled "
                           "automatically, and `tile` does not leave a nest running from GM silently",
                           loop0.loc, hint=hint, scope=err.scope, need_bytes=err.need_bytes,
                           budget_bytes=usable, loops=(name0,))
    out.what = what  # type: ignore[attr-defined]
    return out


def _kib(n: int) -> str:
    return f"{n / 1024:g} KiB" if n >= 1024 else f"{n} B"


def tile_footprint(kernel: ir.Kernel, target: Any = None) -> Any:
    """The footprint function `solver_tiles` searches with: `{loop: size}` -> the buffers
    (and API temp need) of the kernel `tile` then `double_buffer` would emit — every
    staged local with its stages and the lowering's vector temporaries — or None when
    `tile` refuses the sizes.  `reserve=2` refuses sizes whose single-stage buffers exceed
    half a scope, so there is room for `double_buffer` whichever pipeline follows."""
    from transformer.capacity.tiles import kernel_footprint
    from transformer.check import check_kernel

    from .double_buffer import DoubleBuffer

    piped = [True]  # whether the last dry run found a loop to pipeline

    before = {id(s) for s in kernel.body}

    def dry_run(k: ir.Kernel, req: Mapping[str, int]) -> ir.Kernel:
        out = tile_kernel(k, tuple(req.items()), target, TraceEntry("tile"), reserve=2)
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
# legality checks


def Check_tile_size(loop_name: str, loop: ir.For, size: int, extent: int) -> None:
    """Condition: 1 <= size <= extent (a tile of the whole loop is allowed); the loop runs."""
    if extent <= 0:
        raise NotApplicable("tile", f"`{R.loop_header(loop)}` never runs (trip count 0): nothing to tile", loop.var_loc or loop.loc, loops=(loop_name,))
    if size < 1 or size > extent:
        legal = [p for p in (8, 16, 32, 64, 128, 256, 512) if p <= extent]
        why = "must be at least 1" if size < 1 else f"is larger than the loop's extent {extent}"
        raise BadParameter("tile", f"tile size {size} for loop `{loop_name}` {why}", loop.loc,
                        hint="accepted: 1.." + str(extent) + (" e.g. " + ", ".join(map(str, legal)) if legal else ""), param=loop_name, value=size, accepted=legal, loops=(loop_name,))


def Check_constant_bounds(loop_name: str, loop: ir.For, sizes: Mapping[str, int]) -> int:
    """Condition: lo and hi of the loop evaluate to integers from sizes and literals (the
    number of tiles must be a concrete integer: the IR has no division)."""
    ext = R.loop_extent(loop, sizes)
    if ext is None:
        raise NotApplicable("tile", f"loop `{loop_name}` has bounds that depend on other loops; only loops with "
                        "bounds made of sizes and integers can be tiled", loop.loc,
                        hint="tile the enclosing loops, or a loop with constant bounds", loops=(loop_name,))
    return ext


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


def Check_point_loop_private(loop: ir.For, sizes: Mapping[str, int]) -> str | None:
    """Condition for distributing / interchanging point loop `v` (returns the offending
    tensor, or None when legal): for every tensor X written in the loop's body there is a
    dimension d such that every access to X in the body has the same index in dimension d,
    of the form `v + e` with e free of `v` and of loops inside the body. Then iterations
    with different `v` touch disjoint elements of every written tensor, no dependence is
    carried by `v`, and `v` may be distributed and moved inward freely."""
    inner = {lp.var for lp in ir.iter_loops(loop.body)}
    acc: dict[str, list[ir.Access]] = {}
    written: set[str] = set()
    for s in ir.iter_stmts(loop.body):
        if isinstance(s, ir.Copy):
            return s.dst.tensor
        if isinstance(s, ir.Assign):
            if not isinstance(s.target, ir.Access):
                written.add(s.target.name)
            for a, w in R.stmt_accesses(s):
                acc.setdefault(a.tensor, []).append(a)
                if w:
                    written.add(a.tensor)
    for x in sorted(written):
        lst = acc.get(x, [])
        if not lst:
            return x
        ok = False
        for d in range(len(lst[0].indices)):
            forms = [to_affine(a.indices[d], sizes) for a in lst]
            f0 = forms[0]
            if f0 is None or f0.coeff(loop.var) != 1 or any(f != f0 for f in forms):
                continue
            if any(f0.coeff(w) for w in inner):
                continue
            ok = True
            break
        if not ok:
            return x
    return None


# --------------------------------------------------------------------------------------
# step 0: the epilogue of a cube matmul becomes its own nest

CUBE_OPERAND_DTYPES = ("f16", "bf16")
EPILOGUE_SUFFIX = "_epi"


def _band(nest: ir.For) -> list[ir.For]:
    """`nest` and the loops perfectly nested in it, outermost first."""
    band = [nest]
    while len(band[-1].body) == 1 and isinstance(band[-1].body[0], ir.For):
        band.append(band[-1].body[0])
    return band


def _cube_matmul_head(kernel: ir.Kernel, head: tuple[ir.Stmt, ...]) -> str | None:
    """The accumulator when `head` is `[acc = literal;] loops of acc += f32(a) * f32(b)`
    with `a`, `b` in cube operand types and `acc` an f32 temp; else None."""
    acc: set[str] = set()
    prod = False
    for st in ir.iter_stmts(head):
        if isinstance(st, ir.Copy):
            return None
        if not isinstance(st, ir.Assign):
            continue
        if not isinstance(st.target, ir.Access):
            return None
        acc.add(st.target.tensor)
        if st.op == "=" and isinstance(st.value, (ir.FloatLit, ir.IntLit)):
            continue
        v = st.value
        if not (st.op == "+=" and isinstance(v, ir.Binary) and v.op == "*"):
            return None
        ops = [_strip_casts(v.lhs), _strip_casts(v.rhs)]
        for o in ops:
            d = kernel.tensor(o.tensor) if isinstance(o, ir.Access) else None
            if d is None or d.dtype not in CUBE_OPERAND_DTYPES or o.tensor == st.target.tensor:  # type: ignore[union-attr]
                return None
        prod = True
    if len(acc) != 1 or not prod:
        return None
    (name,) = acc
    d = kernel.tensor(name)
    return name if d is not None and d.kind == "temp" and d.dtype == "f32" and d.rank >= 1 else None


def _is_cast_store(st: ir.Assign, acc: str) -> bool:
    """`X[..] = cast(acc[..])` (what the FIX pipe writes from L0C), or a statement not reading `acc`."""
    if acc not in ir.names_used((st,)):
        return True
    v = _strip_casts(st.value)
    return st.op == "=" and isinstance(v, ir.Access) and v.tensor == acc and v != st.value


def Check_epilogue_split(kernel: ir.Kernel, top: int, depth: int, n_head: int) -> bool:
    """Condition for distributing the body of the band loop at `depth` of nest `top` into
    its first `n_head` statements (head) and the rest (tail), through every band loop: no
    conflicting pair (head access a, tail access b, one a write) has instances whose
    iteration vector over the band loops puts b's iteration lexicographically before
    a's. The original runs tail(x) before head(y) exactly when x < y; the split runs every
    head instance before every tail instance."""
    from transformer.deps import _dir, accesses, raw_vectors, statements

    sizes = kernel.size_values()
    stmts = [st for st in statements(kernel) if st.path[0] == top]
    head = [st for st in stmts if st.path[depth + 1] < n_head]
    tail = [st for st in stmts if st.path[depth + 1] >= n_head]
    pairs = [(k, k) for k in range(depth + 1)]
    acc_t = [b for st in tail for b in accesses(kernel, st)]
    for st in head:
        for a in accesses(kernel, st):
            for b in acc_t:
                if a.tensor != b.tensor or not (a.write or b.write):
                    continue
                for vec in raw_vectors(a, b, pairs, sizes):
                    first = next((_dir(c) for c in vec if _dir(c) != "="), "=")
                    if first in (">", "*"):
                        return False
    return True


def split_epilogues(kernel: ir.Kernel, trace: TraceEntry, keep: Any = None) -> ir.Kernel:
    """Step 0 (module docstring): split every top-level cube matmul nest with an epilogue
    (except the nests `keep(nest)` is true for: `gemm` keeps those its Fixpipe stores)."""
    body = list(kernel.body)
    taken: set[str] | None = None
    top = 0
    while top < len(body):
        nest = body[top]
        top += 1
        if not isinstance(nest, ir.For) or (keep is not None and keep(nest)):
            continue
        band = _band(nest)
        inner = band[-1].body
        n_head = max((i + 1 for i, x in enumerate(inner) if isinstance(x, ir.For)), default=0)
        tail = inner[n_head:]
        if not n_head or not tail or not all(isinstance(x, ir.Assign) for x in tail):
            continue
        acc = _cube_matmul_head(kernel, inner[:n_head])
        if acc is None or not any(acc in ir.names_used((x,)) for x in tail):
            continue
        if any(isinstance(x, ir.Assign) and isinstance(x.target, ir.Access) and x.target.tensor == acc for x in tail):
            continue
        if all(_is_cast_store(x, acc) for x in tail):
            continue  # `C = f16(acc)`: a matmul with its store (FIX pipe), nothing to split
        if not Check_epilogue_split(kernel, top - 1, len(band) - 1, n_head):
            trace.decisions.append(f"kept the epilogue of `{nest.label or nest.var}` in the matmul nest: a dependence "
                                   "runs from it back to a later matmul iteration")
            continue
        if taken is None:
            taken = R.used_names(kernel)
        label = R.fresh((nest.label or nest.var) + EPILOGUE_SUFFIX, taken)

        def rebuild(k: int, stmts: tuple[ir.Stmt, ...]) -> ir.Stmt:
            lp = band[k]
            if k == len(band) - 1:
                return dataclasses.replace(lp, body=stmts)
            return dataclasses.replace(lp, body=(rebuild(k + 1, stmts),))

        mm = rebuild(0, inner[:n_head])
        epi = dataclasses.replace(rebuild(0, tail), label=label, loc=None)
        body[top - 1:top] = [mm, epi]
        top += 1
        trace.changes.append(f"split the epilogue of the matmul nest `{nest.label or nest.var}` (reads of `{acc}` after "
                             f"its K loop) into nest `{label}`: the matmul goes to the cube, the epilogue to the "
                             f"vector cores, `{acc}` stays a temp between them")
    if taken is None:
        return kernel
    return dataclasses.replace(kernel, body=tuple(body))


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


# --------------------------------------------------------------------------------------
# the rewrite


@dataclass
class _NestState:
    tile_vars: set[str]
    point_vars: set[str]
    point_size: dict[str, int]


def tile_kernel(kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...], target: Any, trace: TraceEntry,
                *, reserve: int = 1) -> ir.Kernel:
    """Apply `tile` with explicit sizes (resolve, check, rewrite, stage). The staged buffers
    of each nest, times `reserve`, must fit the scope budgets (`reserve=0`: not checked)."""
    sizes = kernel.size_values()
    kernel = split_epilogues(kernel, trace)
    tiles = _mirror_epilogue_tiles(kernel, tiles)
    kernel = recompute_row_temps(kernel, tiles, trace)
    req: dict[int, tuple[str, int, ir.For]] = {}
    by_nest: dict[int, list[tuple[str, Path, ir.For]]] = {}
    for name, size in tiles:
        refs = resolve_tiled(kernel, name)
        for k, ref in enumerate(refs):
            ext = Check_constant_bounds(name, ref.loop, sizes)
            Check_tile_size(name, ref.loop, size, ext)
            if id(ref.loop) in req:
                raise BadParameter("tile", f"loop `{name}` is named twice", ref.loop.loc, param=name, value=size,
                                   loops=(name,))
            top_loop = kernel.body[ref.path[0]]
            if isinstance(top_loop, ir.For) and top_loop.annotation("gemm") is not None:
                raise NotApplicable("tile", f"loop `{name}` is in the `@gemm` nest `{top_loop.label or top_loop.var}`, "
                                    "which the cube kernel blocks itself", ref.loop.loc, loops=(name,))
            req[id(ref.loop)] = (name, size, ref.loop)
            if k == 0:  # siblings named together count once for the nesting check
                by_nest.setdefault(ref.path[0], []).append((name, ref.path, ref.loop))
    for lst in by_nest.values():
        Check_tiled_loops_nested(lst)

    taken = R.used_names(kernel)
    body = list(kernel.body)
    new_locals: list[ir.TensorDecl] = []
    drop: set[str] = set()
    global_names = {t.name for t in kernel.tensors()} | {x.name for x in kernel.sizes} | {c.name for c in kernel.consts}
    global_names |= {lp.label for lp in ir.iter_loops(kernel.body) if lp.label}
    for top in sorted(by_nest):
        nest = body[top]
        st = _NestState(set(), set(), {})
        nest_names = global_names | {lp.var for lp in ir.iter_loops((nest,))} | {d.name for d in new_locals}
        nest = _strip(nest, req, sizes, nest_names, st, trace)
        taken |= st.tile_vars
        (nest,) = _sink_all(nest, st, sizes, trace)
        others = tuple(s for i, s in enumerate(body) if i != top)
        written_before = {x.target.tensor if isinstance(x.target, ir.Access) else x.target.name
                          for x in ir.iter_stmts(tuple(body[:top])) if isinstance(x, ir.Assign)}
        written_before |= {x.dst.tensor for x in ir.iter_stmts(tuple(body[:top])) if isinstance(x, ir.Copy)}
        nest, locs, dead = _stage(kernel, nest, st, sizes, taken, others, target, trace, reserve, written_before)
        body[top] = nest
        new_locals += locs
        drop |= dead
    buffers = tuple(b for b in kernel.buffers if b.name not in drop) + tuple(new_locals)
    if drop:
        trace.changes.append("contracted temps " + ", ".join(f"`{d}`" for d in sorted(drop)) + " into their locals")
    return dataclasses.replace(kernel, body=tuple(body), buffers=buffers)


def _strip(s: ir.Stmt, req: Mapping[int, tuple[str, int, ir.For]], sizes: Mapping[str, int], taken: set[str],
           st: _NestState, trace: TraceEntry) -> ir.Stmt:
    """Split every requested loop in `s` into a tile loop and a point loop."""
    if not isinstance(s, ir.For):
        return s
    new_body = tuple(_strip(b, req, sizes, taken, st, trace) for b in s.body)
    if id(s) not in req:
        return dataclasses.replace(s, body=new_body)
    lname, T, _ = req[id(s)]
    N = R.loop_extent(s, sizes)
    assert N is not None
    ntiles = -(-N // T)
    v0 = R.fresh(f"{s.var}0", taken)
    offset = R.add(R.simp(s.lo), R.mul(ir.Name(v0), R.lit(T)))
    inner_hi = R.lit(T) if N % T == 0 else R.imin(R.lit(T), R.sub(R.sub(s.hi, s.lo), R.mul(ir.Name(v0), R.lit(T))))
    m = {s.var: R.add(offset, ir.Name(s.var))}
    point = ir.For(s.var, R.lit(0), inner_hi, tuple(R.subst_stmt(b, m, simplify=True) for b in new_body))
    st.tile_vars.add(v0)
    st.point_vars.add(s.var)
    st.point_size[s.var] = T
    tail = "" if N % T == 0 else f", tail of {N % T}"
    trace.changes.append(f"split `{lname}` ({N} iterations) into {ntiles} tiles of {T} (`{v0}` x `{s.var}`{tail})")
    return ir.For(v0, R.lit(0), R.lit(ntiles), (point,), label=s.label, annotations=s.annotations, loc=s.loc)


def is_block_loop(loop: ir.For, st: _NestState | None, sizes: Mapping[str, int]) -> bool:
    """A tile loop made by this pass, or a loop whose variable appears in indices only with
    a coefficient c > 1 (`jb*64 + j`), i.e. a loop that walks over blocks."""
    if st is not None and loop.var in st.tile_vars:
        return True
    seen = False
    for s in ir.iter_stmts(loop.body):
        if isinstance(s, ir.Copy):
            exprs = list(ir.region_exprs(s.dst)) + list(ir.region_exprs(s.src))
        elif isinstance(s, ir.Assign):
            exprs = [i for a, _ in R.stmt_accesses(s) for i in a.indices]
        else:
            exprs = [s.lo, s.hi]
        for e in exprs:
            if loop.var not in R.names_in(e):
                continue
            a = to_affine(e, sizes)
            if a is None:
                if isinstance(s, ir.For):
                    continue
                return False
            if abs(a.coeff(loop.var)) <= 1:
                return False
            seen = True
    return seen


def _sink_all(s: ir.Stmt, st: _NestState, sizes: Mapping[str, int], trace: TraceEntry) -> tuple[ir.Stmt, ...]:
    """Bottom-up: move every point loop below the block loops in its body. Returns the
    statements that replace `s` (several when a point loop was distributed)."""
    if not isinstance(s, ir.For):
        return (s,)
    body = tuple(x for b in s.body for x in _sink_all(b, st, sizes, trace))
    s = dataclasses.replace(s, body=body)
    if s.var in st.point_vars and not s.label and not s.annotations:
        return _sink(s, st, sizes, trace)
    return (s,)


def _sink(p: ir.For, st: _NestState, sizes: Mapping[str, int], trace: TraceEntry) -> tuple[ir.Stmt, ...]:
    """Distribute point loop `p` around the block loops of its body and move it inside them."""
    blocks = [b for b in p.body if isinstance(b, ir.For) and is_block_loop(b, st, sizes)]
    if not blocks:
        return (p,)
    if any(p.var in R.names_in(e) for b in blocks for e in (b.lo, b.hi)):
        return (p,)
    bad = Check_point_loop_private(p, sizes)
    if bad is not None:
        trace.decisions.append(f"kept point loop `{p.var}` outside block loop `{blocks[0].var}`: `{bad}` is not "
                               f"private to one `{p.var}` iteration")
        return (p,)
    out: list[ir.Stmt] = []
    group: list[ir.Stmt] = []
    for b in p.body:
        if isinstance(b, ir.For) and is_block_loop(b, st, sizes):
            if group:
                out.append(dataclasses.replace(p, body=tuple(group)))
                group = []
            inner = _sink(dataclasses.replace(p, body=b.body), st, sizes, trace)
            out.append(dataclasses.replace(b, body=inner))
        else:
            group.append(b)
    if group:
        out.append(dataclasses.replace(p, body=tuple(group)))
    trace.decisions.append(f"moved point loop `{p.var}` inside block loop(s) "
                           + ", ".join(f"`{b.var}`" for b in blocks)
                           + ("" if len(out) == 1 else f" (distributed into {len(out)} loops)"))
    return tuple(out)


# --------------------------------------------------------------------------------------
# staging


def _strip_casts(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Call) and e.func in ir.DTYPES and len(e.args) == 1:
        e = e.args[0]
    return e


def _matmul_roles(nest: ir.For, accs: Mapping[str, list[AccessSite]], allowed: set[str]) -> dict[str, str]:
    """tensor -> `l0a` / `l0b` / `l0c` for a matmul-like nest (see the module docstring)."""
    roles: dict[str, str] = {}
    for s in ir.iter_stmts(nest.body):
        if not (isinstance(s, ir.Assign) and s.op == "+=" and isinstance(s.target, ir.Access)):
            continue
        v = s.value
        if not (isinstance(v, ir.Binary) and v.op == "*"):
            continue
        a, b = _strip_casts(v.lhs), _strip_casts(v.rhs)
        if not (isinstance(a, ir.Access) and isinstance(b, ir.Access)) or a.tensor == b.tensor:
            continue
        c = s.target.tensor
        if c in (a.tensor, b.tensor):
            continue
        roles.setdefault(a.tensor, "l0a")
        roles.setdefault(b.tensor, "l0b")
        roles.setdefault(c, "l0c")
    # validate: the accumulator is only initialised with a literal, accumulated, or read by a cast
    for t, r in list(roles.items()):
        for acc in accs.get(t, []):
            s = acc.stmt
            ok = False
            if r == "l0c":
                if acc.write and s.op == "=" and isinstance(s.value, (ir.FloatLit, ir.IntLit)):
                    ok = True
                elif s.op == "+=" and isinstance(s.value, ir.Binary) and s.value.op == "*" and \
                        isinstance(s.target, ir.Access) and s.target.tensor == t:
                    ok = True
                elif not acc.write and s.op == "=" and _strip_casts(s.value) == acc.access and s.value != acc.access:
                    ok = True
            else:
                v = s.value
                ok = (not acc.write and s.op == "+=" and isinstance(v, ir.Binary) and v.op == "*"
                      and (_strip_casts(v.lhs) == acc.access if r == "l0a" else _strip_casts(v.rhs) == acc.access))
            if not ok:
                roles.pop(t, None)
                break
    roles = {t: r for t, r in roles.items() if t in allowed}
    # a matmul statement goes to the cube only when all three of its tensors do
    changed = True
    while changed:
        changed = False
        for s in ir.iter_stmts(nest.body):
            if isinstance(s, ir.Assign) and s.op == "+=" and isinstance(s.target, ir.Access) \
                    and isinstance(s.value, ir.Binary) and s.value.op == "*":
                a, b = _strip_casts(s.value.lhs), _strip_casts(s.value.rhs)
                if not (isinstance(a, ir.Access) and isinstance(b, ir.Access)):
                    continue
                trio = (roles.get(a.tensor) == "l0a", roles.get(b.tensor) == "l0b", roles.get(s.target.tensor) == "l0c")
                if any(trio) and not all(trio):
                    for t in (a.tensor, b.tensor, s.target.tensor):
                        if t in roles:
                            roles.pop(t)
                            changed = True
    return roles


def _fixpipe_written(nest: ir.For, accs: Mapping[str, list[AccessSite]], roles: Mapping[str, str]) -> set[str]:
    """Tensors written only by `Y = cast(acc)` from an `l0c` accumulator and never read."""
    out = set()
    for t, lst in accs.items():
        if t in roles:
            continue
        ok = bool(lst)
        for a in lst:
            v = _strip_casts(a.stmt.value)
            if not (a.write and a.plain and isinstance(v, ir.Access) and roles.get(v.tensor) == "l0c"):
                ok = False
        if ok:
            out.add(t)
    return out


@dataclass
class _Plan:
    tensor: str
    level: Path
    box: Box
    locals_: list[tuple[str, str]]  # (local name, scope): first is the GM-facing one, last the compute one
    copy_in: bool
    copy_out: bool
    dtype: str


def _stage(kernel: ir.Kernel, nest: ir.Stmt, st: _NestState, sizes: Mapping[str, int], taken: set[str],
           others: tuple[ir.Stmt, ...], target: Any, trace: TraceEntry,
           reserve: int = 1, written_before: set[str] | None = None) -> tuple[ir.Stmt, list[ir.TensorDecl], set[str]]:
    assert isinstance(nest, ir.For)
    accs, in_copies, loops = collect(nest)
    block_paths = {p for p, lp in loops.items() if is_block_loop(lp, st, sizes)}
    used_outside = ir.names_used(others)
    plans: list[_Plan] = []
    new_decls: list[ir.TensorDecl] = []
    dead: set[str] = set()
    label = nest.label or nest.var
    found: dict[str, list[tuple[Path, Box, bool, bool]]] = {}
    for x in sorted(accs):
        decl = kernel.tensor(x)
        if decl is None or decl.kind == "local" or decl.rank == 0 or x in in_copies:
            continue
        groups = _row_groups(accs[x], st, loops)
        if len(groups) > 1:
            trace.decisions.append(f"`{x}` is staged per tile of each of the {len(groups)} loops over the row that "
                                   "access it (no tile of the row holds it whole)")
        places: list[tuple[Path, Box, bool, bool]] = []
        earlier: set[str] = set()  # `x` when an earlier group writes it
        for g in groups:
            got = _place(x, decl, g, label, block_paths, loops, sizes, st, trace, used_outside, len(groups) > 1,
                         None if written_before is None else written_before | earlier)
            if got is None:
                break
            places.append(got)
            if any(a.write for a in g):
                earlier.add(x)
        else:
            found[x] = places
    roles = _matmul_roles(nest, accs, set(found))
    for x in sorted(_fixpipe_written(nest, accs, roles) & set(found)):
        trace.decisions.append(f"`{x}` stays in GM: written only from the l0c accumulator (FIX pipe)")
        del found[x]
    for x, places in found.items():
        decl = kernel.tensor(x)
        assert decl is not None
        scope = roles.get(x, "ub")
        by_shape: dict[tuple[int, ...], list[tuple[str, str]]] = {}  # sibling loops share a local of one shape
        for level, box, copy_in, copy_out in places:
            dims = tuple(mx for (_, _, mx, _), k in zip(box.dims, kept_dims(box)) if k)
            locs = by_shape.get(dims)
            if locs is None:
                if scope in ("l0a", "l0b"):
                    locs = [(R.fresh(f"{x}_l1", taken), "l1"), (R.fresh(f"{x}_{scope}", taken), scope)]
                else:
                    locs = [(R.fresh(f"{x}_{scope}", taken), scope)]
                by_shape[dims] = locs
                for n, sc in locs:
                    new_decls.append(ir.TensorDecl(n, decl.dtype, tuple(R.lit(d) for d in dims), "local", scope=sc))
            plans.append(_Plan(x, level, box, locs, copy_in, copy_out, decl.dtype))
            where = f"`{loops[level].var}`" if level else f"`{nest.var}`"
            trace.changes.append(f"staged `{x}` in " + " -> ".join(f"`{n}` @{sc}" for n, sc in locs)
                                 + f" per iteration of {where}" + (" (copy in)" if copy_in else "")
                                 + (" (copy out)" if copy_out else ""))
        if decl.kind == "temp" and x not in used_outside and len(places) == 1:
            dead.add(x)
    if reserve:
        _check_capacity(label, new_decls, sizes, target, nest.loc, reserve)
    nest = _rewrite(nest, (), plans, sizes)
    return nest, new_decls, dead


def _row_groups(lst: list[AccessSite], st: _NestState, loops: Mapping[Path, ir.For]) -> list[list[AccessSite]]:
    """The accesses of one tensor split by the sibling tile loops (made by this pass) they
    lie in, when they lie in two or more such loops directly below their common enclosing
    loop and each loop's variable moves the footprint (the loops over a long row: the
    tensor is staged per tile of each of them); else all accesses as one group."""
    common = common_path(lst)
    by_child: dict[Path, list[AccessSite]] = {}
    for a in lst:
        child = a.stmt_path[:len(common) + 1]
        lp = loops.get(child)
        if lp is None or lp.var not in st.tile_vars or len(a.stmt_path) <= len(child):
            return [lst]
        if not any(lp.var in R.names_in(i) for i in a.access.indices):
            return [lst]
        by_child.setdefault(child, []).append(a)
    return list(by_child.values()) if len(by_child) > 1 else [lst]


def _place(x: str, decl: ir.TensorDecl, lst: list[AccessSite], label: str, block_paths: set[Path],
           loops: Mapping[Path, ir.For], sizes: Mapping[str, int], st: _NestState, trace: TraceEntry,
           used_outside: set[str], several: bool, written_before: set[str] | None
           ) -> tuple[Path, Box, bool, bool] | None:
    """Where accesses `lst` of `x` are staged: (level, box, copy in, copy out), or None
    (`x` stays in GM; the reason goes to the trace). `several`: `lst` is one of several
    groups of `x` (`_row_groups`), so a written temp is copied out for the other groups."""
    # deepest block loop enclosing every access
    common = common_path(lst)
    cands = [common[:k] for k in range(len(common), -1, -1) if common[:k] in block_paths]
    if not cands:
        trace.decisions.append(f"`{x}` stays in GM: no tile loop of `{label}` encloses all its accesses")
        return None
    level = cands[0]
    # hoist while the footprint does not move with the loops we leave
    mentioned = {n for a in lst for i in a.access.indices for n in R.names_in(i)}
    for outer in cands[1:]:
        between = [loops[level[:k]].var for k in range(len(outer) + 1, len(level) + 1)]
        if any(v in mentioned for v in between):
            break
        level = outer
    boxes = [box_of(a, level, sizes) for a in lst]
    if any(b is None for b in boxes):
        trace.decisions.append(f"`{x}` stays in GM: its footprint in `{label}` is not a box")
        return None
    box = merge(boxes, sizes)  # type: ignore[arg-type]
    if box is None:
        trace.decisions.append(f"`{x}` stays in GM: its accesses do not share one box")
        return None
    written = any(a.write for a in lst)
    covered, dense = reads_covered(x, lst, level, sizes, loops)
    copy_in = not covered
    copy_out = written and (decl.kind == "output" or x in used_outside or several)
    if copy_out and not copy_in and not any(contains(w, box, sizes) for w in union(dense, sizes)):
        if decl.kind == "output":
            trace.decisions.append(f"`{x}` stays in GM: the nest does not write its whole footprint")
            return None
        copy_in = True
    if copy_in and decl.kind == "temp" and written_before is not None and x not in written_before:
        # the analysis could not prove the tile written before it is read, and nothing
        # before this nest writes the temp: leave it in GM rather than copy in garbage
        trace.decisions.append(f"`{x}` stays in GM: cannot show the nest writes its tile before reading it")
        return None
    return level, box, copy_in, copy_out


def _rewrite(s: ir.For, path: Path, plans: list[_Plan], sizes: Mapping[str, int]) -> ir.For:
    here = [p for p in plans if p.level == path]
    body = tuple(_rewrite(b, path + (i,), plans, sizes) if isinstance(b, ir.For) else b for i, b in enumerate(s.body))
    for p in here:
        body = tuple(_rewrite_accesses(b, p, sizes) for b in body)
    pre: list[ir.Stmt] = []
    post: list[ir.Stmt] = []
    for p in here:
        keep = kept_dims(p.box)
        gm_dims: list[Any] = []
        loc_dims: list[Any] = []
        for (lo, ext, mx, _), k in zip(p.box.dims, keep):
            if k:
                gm_dims.append(ir.Slice(lo, R.add(lo, ext)))
                loc_dims.append(ir.Slice(R.lit(0), ext))
            else:
                gm_dims.append(lo)
        if not loc_dims:
            loc_dims = [ir.Slice(R.lit(0), R.lit(1))]
        gm = ir.Region(p.tensor, tuple(gm_dims))
        chain = [ir.Region(n, tuple(loc_dims)) for n, _ in p.locals_]
        if p.copy_in:
            pre.append(ir.Copy(chain[0], gm))
            for a, b in zip(chain, chain[1:]):
                pre.append(ir.Copy(b, a))
        if p.copy_out:
            post.append(ir.Copy(gm, chain[-1]))
    return dataclasses.replace(s, body=tuple(pre) + body + tuple(post))


def _rewrite_accesses(s: ir.Stmt, p: _Plan, sizes: Mapping[str, int]) -> ir.Stmt:
    keep = kept_dims(p.box)
    los = [to_affine(lo, sizes) for (lo, _, _, _) in p.box.dims]
    local = p.locals_[-1][0]

    def to_local(e: ir.Expr) -> ir.Expr:
        """An access to the staged tensor (indices already rewritten) -> the local."""
        if not (isinstance(e, ir.Access) and e.tensor == p.tensor):
            return e
        new = []
        for i, k, lo in zip(e.indices, keep, los):
            if not k:
                continue
            a = to_affine(i, sizes)
            assert a is not None and lo is not None
            new.append(R.expr_of_affine(a - lo, R.names_in(i)))
        if not new:
            new = [R.lit(0)]
        return ir.Access(local, tuple(new), e.loc)

    return R.map_stmt_exprs(s, lambda e: R.map_expr(e, to_local))


def _check_capacity(label: str, decls: list[ir.TensorDecl], sizes: Mapping[str, int], target: Any,
                    loc: ir.Loc | None, reserve: int = 1) -> None:
    """Condition: for every scope, the bytes of the nest's staged buffers (times `reserve`,
    2 when the tiles are chosen to leave room for double buffering) fit the usable
    capacity of that scope (the target table)."""
    per: dict[str, list[ir.TensorDecl]] = {}
    for d in decls:
        per.setdefault(str(d.scope), []).append(d)
    for scope, ds in per.items():
        total = sum(tensor_bytes(d, sizes) for d in ds)
        budget = scope_budget(target, scope) // reserve
        if total > budget:
            parts = ", ".join(f"`{d.name}` {tensor_bytes(d, sizes)} B" for d in ds)
            raise CapacityExceeded("tile", f"the tiles of `{label}` need {total} bytes of {scope} "
                            f"({parts}), more than the {budget} bytes usable", loc,
                            hint="use smaller tiles, or tile more loops of the nest", scope=scope, need_bytes=total, budget_bytes=budget, loops=(label,))
