"""`stage`: copy the region of a GM tensor that one iteration of a loop touches into an
on-chip `local` buffer, and rewrite the accesses to it.

    stage{A=ew.i0}            stage `A` per iteration of loop `ew.i0`
    stage{A=ew.i0,C=ew.i0}    several tensors (each at its loop)

For every named tensor `X` and loop `L`: the footprint of `X`'s accesses over the loops
inside `L` must be a box (`transformer/regions.py`: indices affine with non-negative
coefficients in those loops); a local of the box's largest shape is declared, accesses are
rewritten to it (indices minus the box's corner), and `copy` statements move the tile in
at the start of `L`'s body (when some element is read before the body writes it) and out
at its end (when it is written and is an output, or a temp used elsewhere). A temp used
only inside the nest is contracted away (its local replaces it). Scope: `ub`; in a
matmul-like nest (`acc += a * b`, `acc` only initialised, accumulated and read by a cast)
whose three tensors are all staged, the operands go GM -> `l1` -> `l0a` / `l0b` and the
accumulator lives in `l0c`. The locals must fit their scopes (the target table).

This is step 3 of `tile`, which picks the loop for every tensor itself (the outermost
block loop enclosing all its accesses whose inner block loops do not move the footprint,
so `Q` is staged once per query tile and `K` once per K/V block) and leaves in GM what it
cannot stage, with the reason in the trace; `stage` stages exactly what it is asked or
refuses. Staging keeps every access's element and order, so it is legal whenever it
applies (no dependence test); a tile that is read before the nest writes it is copied in.

A read guarded by `select` (docs/ir.md, "Guarded reads") whose unguarded footprint leaves the
tensor is staged with its footprint cut to the tensor when that covers each such dimension
whole (`clamp_to_tensor`: corner 0, so the guards keep their meaning); otherwise it stays in GM.

It requires: 1) the tensor is a GM tensor (input, output, temp) of rank >= 1 the loop's
nest reads or writes by subscript, not copied or assigned whole; 2) the loop encloses all
its accesses in that nest; 3) the footprint is a box; 4) an output is written over its
whole footprint or read before (so the copy-out writes back only what the nest wrote);
5) a temp that is read before the nest writes it was written by earlier statements
everywhere the nest touches it (`regions.WrittenBefore`: by region, not by name);
6) the locals fit (`CapacityExceeded` names the scope and the bytes).

Rewrite (`split{ew.i=4},stage{A=ew}` on `C[i] = A[i] * 2.0`, M = 8):

    ew: for i0 in 0..2 {                   ew: for i0 in 0..2 {
      for i in 0..4 {                        copy A_ub[0:4] <- A[i0 * 4:i0 * 4 + 4]
        C[i0 * 4 + i] = A[i0 * 4 + i] * 2.0  for i in 0..4 { C[i0 * 4 + i] = A_ub[i] * 2.0 }
      }                               ->   }
    }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.diagnostics import CapacityExceeded, NotApplicable
from transformer.printer import format_expr
from transformer.regions import (AccessSite, Box, WrittenBefore, box_of, collect, common_path, contains, kept_dims,
                                 merge, reads_covered, union)
from transformer.targets import Target

from . import _rewrite as R
from ._budgets import scope_budget, tensor_bytes
from ._invariant import invariant_box
from ._guarded import clamp_to_tensor, leaving_dims
from ._row_groups import picked_apart as _picked_apart, row_groups as _row_groups
from ._roles import fixpipe_written, matmul_roles, strip_casts  # noqa: F401  (strip_casts: fission imports it here)
from ._sink import is_block_loop
from .base import Pass, PassError, TraceEntry, preferred_loop_names, register, resolve_loop
from .params import Loop, Map, Params, Tensor
from .split import Strips

Path = tuple[int, ...]
SPACE_MAX = 12  # instances `space()` offers at most


@register
@dataclass(frozen=True)
class Stage(Pass):
    """Copy the footprint of a GM tensor per iteration of a loop into an on-chip local."""

    name: ClassVar[str] = "stage"
    summary: ClassVar[str] = "copy what one iteration of a loop touches of a GM tensor into an on-chip buffer"
    params: ClassVar[Params] = Map("at", Tensor(), Loop(), minimum=1, example="A=ew.i0",
                                   note="TENSOR=LOOP: stage TENSOR per iteration of LOOP")
    at: tuple[tuple[str, str], ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        by_nest: dict[int, dict[str, Path]] = {}
        for x, loop in self.at:
            ref = resolve_loop(kernel, loop, self.name)
            top = kernel.body[ref.path[0]]
            if isinstance(top, ir.For) and top.annotation("gemm") is not None:
                raise NotApplicable(self.name, f"loop `{loop}` is in the `@gemm` nest `{top.label or top.var}`, whose "
                                    "buffers the cube kernel allocates itself", ref.loop.loc, loops=(loop,))
            by_nest.setdefault(ref.path[0], {})[x] = ref.path[1:]
        return stage_kernel(kernel, by_nest, target, trace, self.name)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """Each GM tensor of each nest (outside `@gemm` nests), at the innermost named loop
        enclosing all its accesses and at the nest's outer loop, when that stages."""
        out: list[Pass] = []
        names = preferred_loop_names(kernel)
        for nest in kernel.body:
            if not isinstance(nest, ir.For) or nest.annotation("gemm") is not None:
                continue
            accs, in_copies, loops = collect(nest)
            for x in sorted(accs):
                decl = kernel.tensor(x)
                if decl is None or decl.kind == "local" or decl.rank == 0 or x in in_copies:
                    continue
                common = common_path(accs[x])
                levels = [p for p in (common[:k] for k in range(len(common), -1, -1)) if id(loops[p]) in names]
                for level in dict.fromkeys(levels[:1] + levels[-1:]):
                    p = cls(((x, names[id(loops[level])]),))
                    try:
                        p.run(kernel, target, TraceEntry(p.to_text()))
                    except PassError:
                        continue
                    out.append(p)
                    if len(out) >= SPACE_MAX:
                        return out
        return out


def stage_kernel(kernel: ir.Kernel, by_nest: Mapping[int, Mapping[str, Path]], target: Target | None, trace: TraceEntry,
                 pass_name: str = "stage") -> ir.Kernel:
    """Stage `by_nest[top][tensor] = loop path inside nest top` (`Stage.run`)."""
    sizes = kernel.known_sizes()
    taken = R.used_names(kernel)
    body = list(kernel.body)
    new_locals: list[ir.TensorDecl] = []
    drop: set[str] = set()
    for top in sorted(by_nest):
        others = tuple(s for i, s in enumerate(body) if i != top)
        nest, locs, dead = stage_nest(kernel, body[top], None, sizes, taken, others, target, trace, 1,
                                      WrittenBefore(kernel.body[:top], kernel.body[top], kernel, sizes),
                                      at=by_nest[top], pass_name=pass_name)
        body[top] = nest
        new_locals += locs
        drop |= dead
    return finish(kernel, body, new_locals, drop, trace)


def finish(kernel: ir.Kernel, body: list[ir.Stmt], new_locals: list[ir.TensorDecl], drop: set[str],
           trace: TraceEntry) -> ir.Kernel:
    """The kernel with the staged `body`, the new locals declared and the contracted temps gone."""
    buffers = tuple(b for b in kernel.buffers if b.name not in drop) + tuple(new_locals)
    if drop:
        trace.changes.append("contracted temps " + ", ".join(f"`{d}`" for d in sorted(drop)) + " into their locals")
    return dataclasses.replace(kernel, body=tuple(body), buffers=buffers)


# --------------------------------------------------------------------------------------
# where each tensor is staged


def stage_nest(kernel: ir.Kernel, nest: ir.Stmt, st: Strips | None, sizes: Mapping[str, int], taken: set[str],
               others: tuple[ir.Stmt, ...], target: Target | None, trace: TraceEntry, reserve: int = 1,
               written_before: WrittenBefore | None = None, *, at: Mapping[str, Path] | None = None,
               pass_name: str = "tile", prologue: list[ir.Stmt] | None = None
               ) -> tuple[ir.Stmt, list[ir.TensorDecl], set[str]]:
    """Stage the GM tensors of top-level `nest` (module docstring): the rewritten nest, the
    locals it declares, and the temps they replace. Without `at` (`tile`), every tensor is
    staged at the level the policy picks among the block loops (`st`: what `split` made),
    or left in GM with the reason in the trace; with `at` (`stage`), exactly the tensors of
    `at`, each per iteration of the loop at its path, or `NotApplicable`. `written_before`:
    the tensors the statements before the nest write where the nest touches them
    (`regions.WrittenBefore`; None: unknown). The locals, times `reserve`, must fit
    their scopes (0: not checked). `prologue` (`tile`): when given, a row-invariant input
    (`_invariant.invariant_box`) is staged once before the nest instead of per tile, its copy appended
    to `prologue` (the caller puts it before the nest); such a local has one stage."""
    assert isinstance(nest, ir.For)
    accs, in_copies, loops = collect(nest)
    block_paths = {p for p, lp in loops.items() if is_block_loop(lp, st, sizes)}
    label = nest.label or nest.var
    if at is not None:
        for x in at:
            decl = kernel.tensor(x)
            why = ("is not accessed there" if x not in accs else "is a local already" if decl is None
                   or decl.kind == "local" else "is a scalar (rank 0)" if decl.rank == 0
                   else "is copied or assigned whole there" if x in in_copies else None)
            if why is not None:
                raise NotApplicable(pass_name, f"cannot stage `{x}` in nest `{label}`: it {why}", nest.loc,
                                    hint="stage a GM tensor (input, output or temp) the nest reads or writes",
                                    loops=(label,))
    used_outside = ir.names_used(others)
    plans: list[_Plan] = []
    new_decls: list[ir.TensorDecl] = []
    dead: set[str] = set()
    found: dict[str, list[tuple[Path, Box, bool, bool]]] = {}
    for x in sorted(accs):
        decl = kernel.tensor(x)
        if decl is None or decl.kind == "local" or decl.rank == 0 or x in in_copies or (at is not None and x not in at):
            continue
        groups = _row_groups(accs[x], st, loops) if st is not None else [accs[x]]
        if len(groups) == 1 and st is not None and at is None:
            groups, picked = _picked_apart(accs[x], st, loops)
            if picked:
                trace.decisions.append(f"`{x}`'s {len(picked)} read(s) through an index tensor outside the loops over "
                                       "the row (" + ", ".join(f"`{format_expr(a.access)}`" for a in picked)
                                       + ") stay in GM: one element each, read by the scalar unit; the loops over "
                                       "the row stage it per tile")
        if len(groups) > 1 and _whole_row_fits(x, decl, accs[x], label, block_paths, loops, sizes, used_outside,
                                               written_before, target):
            groups = [accs[x]]
            trace.decisions.append(f"`{x}` is staged whole across the loops over the row that access it (a temp "
                                   "of this nest whose row fits a quarter of UB: no round trip through GM)")
        if len(groups) > 1:
            trace.decisions.append(f"`{x}` is staged per tile of each of the {len(groups)} loops over the row that "
                                   "access it (no tile of the row holds it whole)")
        places: list[tuple[Path, Box, bool, bool]] = []
        earlier: set[str] = set()  # `x` when an earlier group writes it
        for g in groups:
            got = _place(x, decl, g, label, block_paths, loops, sizes, used_outside, len(groups) > 1,
                         None if written_before is None else written_before | earlier, None if at is None else at[x])
            if isinstance(got, str):
                if at is not None:
                    where = loops[at[x]].label or loops[at[x]].var
                    raise NotApplicable(pass_name, f"cannot stage `{x}` per iteration of `{where}`: {got}", nest.loc,
                                        hint="stage it at a loop that encloses all its accesses and moves its "
                                        "footprint as a box", loops=(where,))
                trace.decisions.append(f"`{x}` stays in GM: {got}")
                break
            places.append(got)
            if any(a.write for a in g):
                earlier.add(x)
        else:
            found[x] = places
    roles = matmul_roles(nest, accs, set(found))
    for x in sorted(fixpipe_written(nest, accs, roles) & set(found)):
        if at is not None:
            raise NotApplicable(pass_name, f"cannot stage `{x}`: it is written only from the l0c accumulator, which "
                                "the FIX pipe stores to GM", nest.loc, loops=(label,))
        trace.decisions.append(f"`{x}` stays in GM: written only from the l0c accumulator (FIX pipe)")
        del found[x]
    once: set[str] = set()  # locals staged once before the nest (the prologue)
    for x, places in found.items():
        decl = kernel.tensor(x)
        assert decl is not None
        scope = roles.get(x, "ub")
        if prologue is not None and scope == "ub":
            inv = invariant_box(decl, accs[x], places, nest, sizes)
            if inv is not None:
                n = R.fresh(f"{x}_{scope}", taken)
                dims = tuple(mx for (_, _, mx, _), k in zip(inv.dims, kept_dims(inv)) if k)
                new_decls.append(ir.TensorDecl(n, decl.dtype, tuple(R.lit(d) for d in dims), "local", scope=scope))
                plans.append(_Plan(x, (), inv, [(n, scope)], True, False, decl.dtype, once=True))
                prologue.extend(_copies(plans[-1])[0])
                once.add(n)
                trace.changes.append(f"staged `{x}` in `{n}` @{scope} once, before `{label}` (it does not change "
                                     f"from tile to tile: one copy per core, one stage)")
                continue
        if prologue is not None and _one_element(decl, places) and x not in used_outside:
            # a temp of which each tile holds one element (`var[n]` over one-row tiles):
            # a scalar (a register of each core), not a one-element UB buffer the scalar
            # unit reads and writes through GetValue/SetValue
            new_decls.append(ir.TensorDecl(x, decl.dtype, (), "temp"))
            plans.append(_Plan(x, places[0][0], places[0][1], [(x, "scalar")], False, False, decl.dtype))
            dead.add(x)
            trace.changes.append(f"kept `{x}` as a scalar: each tile of `{label}` uses one element of it")
            continue
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
        _check_capacity(label, [d for d in new_decls if d.kind == "local"], sizes, target, nest.loc, reserve,
                        pass_name, once)
    nest = _rewrite(nest, (), plans, sizes)
    return nest, new_decls, dead


def _one_element(decl: ir.TensorDecl, places: list[tuple[Path, Box, bool, bool]]) -> bool:
    """Whether temp `decl` is staged at one place whose tile is one element, written in the
    tile before it is read and not copied out (a scalar holds it)."""
    if decl.kind != "temp" or len(places) != 1:
        return False
    _, box, copy_in, copy_out = places[0]
    return not copy_in and not copy_out and all(mx == 1 for _, _, mx, _ in box.dims)


def _whole_row_fits(x: str, decl: ir.TensorDecl, lst: list[AccessSite], label: str, block_paths: set[Path],
                    loops: Mapping[Path, ir.For], sizes: Mapping[str, int], used_outside: set[str],
                    written_before: WrittenBefore | None, target: Target | None) -> bool:
    """Whether temp `x`, accessed in several loops over a row (`_row_groups`), is better
    staged as one tile over all of them: a temp only this nest uses (nothing else reads the
    row: fused attention's scores `s`), written before it is read, of at most a quarter of
    UB. Then the row stays on chip between the loops instead of going to GM and back per
    tile (and the GM temp, shared by every row, no longer keeps the rows off the cores)."""
    if decl.kind != "temp" or x in used_outside:
        return False
    got = _place(x, decl, lst, label, block_paths, loops, sizes, used_outside, False, written_before)
    if isinstance(got, str) or got[2]:  # (a copy-in: not written before it is read)
        return False
    n = ir.DTYPE_BYTES[decl.dtype]
    for _, _, mx, _ in got[1].dims:
        n *= mx
    return n <= scope_budget(target, "ub") // 4


def _place(x: str, decl: ir.TensorDecl, lst: list[AccessSite], label: str, block_paths: set[Path],
           loops: Mapping[Path, ir.For], sizes: Mapping[str, int], used_outside: set[str], several: bool,
           written_before: WrittenBefore | None, forced: Path | None = None) -> tuple[Path, Box, bool, bool] | str:
    """Where accesses `lst` of `x` are staged: (level, box, copy in, copy out), or why `x`
    stays in GM. `several`: `lst` is one of several groups of `x` (`_row_groups`), so a
    written temp is copied out for the other groups. `forced`: the level (`stage`), else the
    policy: the deepest block loop enclosing every access, hoisted while the footprint does
    not move with the loops left."""
    common = common_path(lst)
    if forced is not None:
        if common[:len(forced)] != forced:
            return "some of its accesses are outside that loop"
        cands = [forced]
    else:
        cands = [common[:k] for k in range(len(common), -1, -1) if common[:k] in block_paths]
    if not cands:
        return f"no tile loop of `{label}` encloses all its accesses"
    level = cands[0]
    # hoist while the footprint does not move with the loops we leave
    mentioned = {n for a in lst for i in a.access.indices for n in R.names_in(i)}
    for outer in cands[1:]:  # (none when forced)
        between = [loops[level[:k]].var for k in range(len(outer) + 1, len(level) + 1)]
        if any(v in mentioned for v in between):
            break
        level = outer
    from transformer.bounds import may_leave
    from transformer.guards import guarded_reads

    clamp: dict[int, str] = {}
    for a in lst:
        if id(a.access) in guarded_reads(a.stmt):
            why = may_leave(a.access, tuple(lp for _, lp in a.loops), decl.shape, sizes)
            if why is not None:  # its box would be copied from outside the tensor: cut to it, below
                clamp[id(a)] = why
    gathered = [a for a in lst if any(isinstance(i, ir.Access) for i in a.access.indices)]
    if gathered and len(gathered) == len(lst):
        # only gathered: the rows it needs are known at run time (a DataCopy per row from GM);
        # staging the whole dimension is worth it only next to affine accesses that cover it
        return f"it is read only through an index tensor in `{label}` (gathered from GM)"
    boxes = [box_of(a, level, sizes, decl.shape) for a in lst]
    for i, a in enumerate(lst):
        if id(a) in clamp and boxes[i] is not None:
            boxes[i] = clamp_to_tensor(boxes[i], decl.shape, sizes, leaving_dims(a, decl.shape, sizes))  # type: ignore[arg-type]
            if boxes[i] is None:
                return f"a read of it guarded by `select` may leave it unguarded ({clamp[id(a)]})"
    if any(b is None for b in boxes):
        if any(isinstance(i, ir.Access) for a in lst if a.write for i in a.access.indices):
            return f"it is written through an index tensor in `{label}` (a scatter stays in GM)"
        return f"its footprint in `{label}` is not a box"
    box = merge(boxes, sizes)  # type: ignore[arg-type]
    if box is None:
        return "its accesses do not share one box"
    written = any(a.write for a in lst)
    covered, dense = reads_covered(x, lst, level, sizes, loops)
    copy_in = not covered
    copy_out = written and (decl.kind == "output" or x in used_outside or several)
    if copy_out and not copy_in and not any(contains(w, box, sizes) for w in union(dense, sizes)):
        if decl.kind == "output":
            return "the nest does not write its whole footprint"
        copy_in = True
    if copy_in and decl.kind == "temp" and written_before is not None and x not in written_before:
        # the analysis could not prove the tile written before it is read, and the statements
        # before this nest do not write the temp where the nest touches it: leave it in GM
        # rather than copy in elements nobody wrote
        return ("cannot show the nest writes its tile before reading it, and the statements before the nest do "
                "not write all of it")
    return level, box, copy_in, copy_out


# --------------------------------------------------------------------------------------
# the rewrite


@dataclass
class _Plan:
    tensor: str
    level: Path
    box: Box
    locals_: list[tuple[str, str]]  # (local name, scope): first is the GM-facing one, last the compute one
    copy_in: bool
    copy_out: bool
    dtype: str
    once: bool = False  # staged once before the nest (its copy is in the prologue)


def _copies(p: _Plan) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
    """The copies in (before the body) and out (after it) of plan `p`."""
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
    pre: list[ir.Stmt] = [ir.Copy(chain[0], gm), *(ir.Copy(b, a) for a, b in zip(chain, chain[1:]))] if p.copy_in else []
    return pre, [ir.Copy(gm, chain[-1])] if p.copy_out else []


def _rewrite(s: ir.For, path: Path, plans: list[_Plan], sizes: Mapping[str, int]) -> ir.For:
    here = [p for p in plans if p.level == path]
    body = tuple(_rewrite(b, path + (i,), plans, sizes) if isinstance(b, ir.For) else b for i, b in enumerate(s.body))
    for p in here:
        body = tuple(_rewrite_accesses(b, p, sizes) for b in body)
    pre: list[ir.Stmt] = []
    post: list[ir.Stmt] = []
    for p in here:
        if p.once:  # copied by the prologue, before the nest
            continue
        a, b = _copies(p)
        pre += a
        post += b
    return dataclasses.replace(s, body=tuple(pre) + body + tuple(post))


def _rewrite_accesses(s: ir.Stmt, p: _Plan, sizes: Mapping[str, int]) -> ir.Stmt:
    keep = kept_dims(p.box)
    los = [to_affine(lo, sizes) for (lo, _, _, _) in p.box.dims]
    local = p.locals_[-1][0]

    def to_local(e: ir.Expr) -> ir.Expr:
        """An access to the staged tensor (indices already rewritten) -> the local."""
        if not (isinstance(e, ir.Access) and e.tensor == p.tensor):
            return e
        if p.locals_[-1][1] == "scalar":  # a one-element tile kept as a scalar temp
            return ir.Name(local, e.loc)
        new = []
        for i, k, lo in zip(e.indices, keep, los):
            if not k:
                continue
            if isinstance(i, ir.Access):  # a gathered dimension, staged whole (`regions.box_of`)
                new.append(i)
                continue
            a = to_affine(i, sizes)
            assert a is not None and lo is not None
            new.append(R.expr_of_affine(a - lo, R.names_in(i)))
        if not new:
            new = [R.lit(0)]
        return ir.Access(local, tuple(new), e.loc)

    return R.map_stmt_exprs(s, lambda e: R.map_expr(e, to_local))


def _check_capacity(label: str, decls: list[ir.TensorDecl], sizes: Mapping[str, int], target: Target | None,
                    loc: ir.Loc | None, reserve: int = 1, pass_name: str = "tile", once: set[str] = frozenset()) -> None:
    """Condition: for every scope, the bytes of the nest's staged buffers (times `reserve`,
    2 when the tiles are chosen to leave room for double buffering; a buffer staged `once`
    before the nest counts one stage) fit the usable capacity of that scope (the target
    table)."""
    per: dict[str, list[ir.TensorDecl]] = {}
    for d in decls:
        per.setdefault(str(d.scope), []).append(d)
    for scope, ds in per.items():
        total = sum(tensor_bytes(d, sizes) * (1 if d.name in once else reserve) for d in ds)
        budget = scope_budget(target, scope)
        if total > budget:
            parts = ", ".join(f"`{d.name}` {tensor_bytes(d, sizes)} B"
                              + ("" if d.name in once or reserve == 1 else f" x {reserve}") for d in ds)
            raise CapacityExceeded(pass_name, f"the tiles of `{label}` need {total} bytes of {scope} "
                            f"({parts}), more than the {budget} bytes usable", loc,
                            hint="use smaller tiles, or tile more loops of the nest", scope=scope, need_bytes=total, budget_bytes=budget, loops=(label,))
