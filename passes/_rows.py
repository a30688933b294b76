"""Rows longer than a scope: what `tile` does when one row of a nest does not fit on chip.

A row softmax, layernorm or rmsnorm after `fuse` is one row loop holding several sibling
loops over the row (`for r { mx = -inf; for c {..}; sm = 0.0; for c {..}; for c {..} }`).
Staging whole rows is the fast plan while a row fits UB; when it does not (65536 f32 are
256 KiB), `tile` tiles the row loops too: each sibling loop over the row becomes a loop over
column tiles that stages its own tiles, so the row is streamed from GM once per sibling loop
(two passes for rmsnorm and, with the recompute below, three for softmax and layernorm). The
row statistics (`mx`, `sm`, `mu`, ...) stay scalars between the passes.

Why passes over GM rather than online statistics: the passes keep the kernel's arithmetic
exactly as written (same reductions, same order inside a tile), so the result verifies
within the kernel's own tolerance and needs no new pattern per operator; the price is one
more read of the row per statistic. On the 910B the re-reads of a row just read come from
L2 (192 MiB), so HBM traffic stays the compulsory read + write and the per-core copy rate,
not HBM, pays for the extra reads (docs/passes-tiling.md has the numbers).

Pieces (used by `tile.py`):

* `resolve_tiled` — a loop name for `tile` may designate several *sibling* loops with the
  same variable under one label (`rmax.c` in fused softmax names its three loops over `c`):
  they are tiled alike.
* `recompute_row_temps` — a temp row written by one sibling loop (`e[c] = exp(X[r, c] -
  mx)`) and read by a later one (`Y[r, c] = e[c] / sm`) would need the whole row on chip
  (or a round trip through GM); when the value can be recomputed from what it was computed
  from (nothing it reads changes in between: `Check_recompute`), the later reads are
  replaced by the expression, and the temp becomes local to one loop.
* `row_loops` — for a nest whose row does not fit, the name of its loops over the row.
* `row_loop_groups` — every group of loops one name can tile together below a nest's band
  (the loops over the keys of fused attention, two levels deep in the weighted sum
  included), longest first: what `tile` without sizes tries when no row loop fits.
* `row_need` — what one row of a nest needs on chip, for the refusal that says why a nest
  cannot be staged ("a row of 65536 f32 needs 256 KiB, UB has 192 KiB usable").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.loops import LoopRef, all_loops, resolve_loop
from transformer.walk import names_written

from . import _rewrite as R
from .base import TraceEntry, UnknownLoop

Path = tuple[int, ...]


# --------------------------------------------------------------------------------------
# names: one name, several sibling loops


def sibling_loops(kernel: ir.Kernel, name: str) -> list[LoopRef]:
    """The loops `label.var` designates when it matches several loops of variable `var`
    under the loop labelled `label`, all with the same bounds and none nested in another
    (the loops over one row: siblings, or, as the weighted sum `for d { for j {..} }` of
    fused attention, one nested a level deeper than the others); else []."""
    label, _, var = name.rpartition(".")
    if not label:
        return []
    out: list[LoopRef] = []
    for path, lp, outer in all_loops(kernel):
        if lp.var == var and any(o.label == label for o in outer):
            out.append(LoopRef(path, lp, name))
    if len(out) < 2:
        return []
    first = out[0].loop
    if any(not (R.same_bound(r.loop.lo, first.lo) and R.same_bound(r.loop.hi, first.hi)) for r in out):
        return []
    if any(a.path[0] != b.path[0] or (a is not b and b.path[:len(a.path)] == a.path) for a in out for b in out):
        return []  # all in one nest, none inside another
    return out


def resolve_tiled(kernel: ir.Kernel, name: str, pass_name: str = "tile") -> list[LoopRef]:
    """The loops a `tile` (or `split`) parameter names: one loop (`resolve_loop`), or the
    sibling loops over one row that `label.var` names together (`sibling_loops`)."""
    try:
        return [resolve_loop(kernel, name, pass_name)]
    except UnknownLoop:
        sib = sibling_loops(kernel, name)
        if sib:
            return sib
        raise


# --------------------------------------------------------------------------------------
# recompute a row temp instead of keeping the row


def _reads_of(stmts: tuple[ir.Stmt, ...], t: str) -> list[ir.Access]:
    out = []
    for s in ir.iter_stmts(stmts):
        for a, w in R.stmt_accesses(s):
            if a.tensor == t and not w:
                out.append(a)
    return out


def _same_index(a: tuple[ir.Expr, ...], b: tuple[ir.Expr, ...]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        ax, ay = to_affine(x, {}), to_affine(y, {})
        if ax is None or ay is None or ax != ay:
            return False
    return True


@dataclass(frozen=True)
class Recompute:
    """Temp `tensor`, written by `stmt` in sibling `writer`, is read by sibling `readers`."""

    tensor: str
    stmt: ir.Assign
    writer: int
    readers: tuple[int, ...]


def Check_recompute(kernel: ir.Kernel, body: tuple[ir.Stmt, ...], sibs: list[int], t: str,
                    others: tuple[ir.Stmt, ...]) -> Recompute | None:
    """Condition for replacing reads of temp `t` in later sibling loops by the expression
    that wrote it (returns what to rewrite, or None): `t` is used only in this nest; it is
    written by exactly one plain statement `t[idx] = E` directly in the body of sibling
    loop Li; every other access is a read, either later in Li at `idx` or in a later
    sibling Lj at `idx` with Li's variable renamed to Lj's; E reads neither `t` nor
    anything written in Li, in the statements between Li and the last reader, or in the
    readers. Then every read sees the value E had when it was stored, and E evaluated at
    the read gives that value (the siblings have the same bounds)."""
    decl = kernel.tensor(t)
    if decl is None or decl.kind != "temp" or decl.rank == 0 or t in ir.names_used(others):
        return None
    writes = [(k, s) for k in sibs for s in ir.iter_stmts(body[k].body)  # type: ignore[union-attr]
              if isinstance(s, ir.Assign) and isinstance(s.target, ir.Access) and s.target.tensor == t]
    outside = [i for i, s in enumerate(body) if i not in sibs and t in ir.names_used((s,))]
    if len(writes) != 1 or outside:
        return None
    wk, st = writes[0]
    li = body[wk]
    assert isinstance(li, ir.For) and isinstance(st.target, ir.Access)
    if st.op != "=" or st not in li.body or t in ir.names_used((ir.Assign(ir.Name("_"), "=", st.value),)):
        return None
    idx = st.target.indices
    if not any(li.var in R.names_in(i) for i in idx):
        return None
    readers = []
    for k in sibs:
        if k == wk:
            continue
        lj = body[k]
        assert isinstance(lj, ir.For)
        reads = _reads_of(lj.body, t)
        if not reads:
            continue
        if k < wk:
            return None
        want = tuple(R.subst_expr(i, {li.var: ir.Name(lj.var)}) for i in idx)
        if any(not _same_index(a.indices, want) for a in reads):
            return None
        readers.append(k)
    if not readers:
        return None
    if any(not _same_index(a.indices, idx) for a in _reads_of(li.body, t)):
        return None
    reads_e = set(R.names_in(st.value)) | {a.tensor for a in R.accesses(st.value)}
    span = body[wk:max(readers) + 1]
    if reads_e & names_written(span):
        return None
    return Recompute(t, st, wk, tuple(readers))


def _cast_to(kernel: ir.Kernel, e: ir.Expr, dtype: str, loop_vars: tuple[str, ...]) -> ir.Expr:
    """`e` as the value a store to a `dtype` element would keep: `e` itself when it already
    has that type, else `dtype(e)` (the interpreter rounds stores the same way)."""
    from transformer.check import expr_type
    from transformer.dtypes import concrete

    try:
        if concrete(expr_type(e, kernel, loop_vars)) == dtype:
            return e
    except Exception:  # noqa: BLE001 - an untyped expression: keep the explicit cast
        pass
    return ir.Call(dtype, (e,))


def recompute_row_temps(kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...], trace: TraceEntry) -> ir.Kernel:
    """For every name in `tiles` that designates sibling loops (`resolve_tiled`), replace
    reads of row temps in later siblings by their recomputation (`Check_recompute`)."""
    sizes = kernel.known_sizes()
    for name, _ in tiles:
        refs = resolve_tiled(kernel, name)
        if len(refs) < 2 or any(r.path[:-1] != refs[0].path[:-1] for r in refs):
            continue  # (recomputation is for siblings: one loop body holds them all)
        parent = refs[0].path[:-1]
        top = parent[0] if parent else refs[0].path[0]
        others = tuple(s for i, s in enumerate(kernel.body) if i != top)
        holder: ir.For | None = None
        if parent:
            from transformer.loops import get_at

            got = get_at(kernel.body, parent)
            assert isinstance(got, ir.For)
            holder = got
            body = got.body
        else:
            body = kernel.body
        sibs = [r.path[-1] for r in refs]
        enclosing = tuple(lp.var for p, lp, _ in all_loops(kernel) if parent[:len(p)] == p)
        changed = False
        for t in sorted({x for k in sibs for x in ir.names_used((body[k],))}):
            rc = Check_recompute(kernel, body, sibs, t, others)
            if rc is None:
                continue
            li = body[rc.writer]
            assert isinstance(li, ir.For) and isinstance(rc.stmt.target, ir.Access)
            decl = kernel.tensor(t)
            assert decl is not None
            new = list(body)
            for k in rc.readers:
                lj = body[k]
                assert isinstance(lj, ir.For)
                val = _cast_to(kernel, R.subst_expr(rc.stmt.value, {li.var: ir.Name(lj.var)}), decl.dtype,
                               enclosing + (lj.var,))

                def repl(e: ir.Expr, t: str = t, val: ir.Expr = val) -> ir.Expr:
                    return val if isinstance(e, ir.Access) and e.tensor == t else e

                new[k] = _map_body(lj, repl)
            body = tuple(new)
            changed = True
            row = R.loop_extent(li, sizes)
            trace.changes.append(f"recomputed `{t}` where later loops over `{li.var}` read it, instead of keeping a "
                                 f"row of it ({row} x {decl.dtype}) between the loops: its loop over the row streams "
                                 "in tiles")
        if not changed:
            continue
        if holder is None:
            kernel = dataclasses.replace(kernel, body=body)
        else:
            from transformer.loops import replace_at

            kernel = dataclasses.replace(kernel, body=replace_at(kernel.body, parent,
                                                                 [dataclasses.replace(holder, body=body)]))
    return kernel


def _map_body(lp: ir.For, f: "Callable[[ir.Expr], ir.Expr]") -> ir.For:
    """`lp` with `f` applied bottom-up to every expression of its body."""
    return dataclasses.replace(lp, body=tuple(R.map_stmt_exprs(s, lambda e: R.map_expr(e, f)) for s in lp.body))


# --------------------------------------------------------------------------------------
# which loops walk the row


def row_loops(kernel: ir.Kernel, nest: ir.For, band_name: str, sizes: Mapping[str, int]) -> tuple[str, int] | None:
    """For a nest `for r { ... }` (its band loop named `band_name`) whose body holds loops
    over the row: a name for those loops (`label.var`, or the loop's own name) and their
    extent; None when the body holds no loop or loops of different variables/extents."""
    from transformer.loops import preferred_loop_names

    band = [nest]
    while len(band[-1].body) == 1 and isinstance(band[-1].body[0], ir.For):
        band.append(band[-1].body[0])
    inner = [s for s in band[-1].body if isinstance(s, ir.For)]
    if not inner or len({lp.var for lp in inner}) != 1:
        return None
    ext = R.loop_extent(inner[0], sizes)
    if ext is None or ext < 2 or any(R.loop_extent(lp, sizes) != ext for lp in inner):
        return None
    if len(inner) == 1:
        name = preferred_loop_names(kernel).get(id(inner[0]))
        return (name, ext) if name else None
    label = nest.label
    if not label:
        return None
    name = f"{label}.{inner[0].var}"
    refs = sibling_loops(kernel, name)
    if {id(r.loop) for r in refs} != {id(lp) for lp in inner}:
        return None
    return name, ext


def row_loop_groups(kernel: ir.Kernel, nest: ir.For, sizes: Mapping[str, int]) -> list[tuple[str, int]]:
    """(name, extent) of every group of loops below the perfect band of `nest` that one
    name designates (one loop by its own name, or several of one variable and extent by
    `label.var`: `sibling_loops`), longest first: the candidates for the loops over a row
    when `row_loops` finds none (fused attention: `for i { ..for j..; ..for j..; for d {
    ..for j.. } }` has its keys `qk.j` and the head dims `d`, `k`)."""
    from transformer.loops import preferred_loop_names

    band = [nest]
    while len(band[-1].body) == 1 and isinstance(band[-1].body[0], ir.For):
        band.append(band[-1].body[0])
    by_var: dict[str, list[ir.For]] = {}
    for lp in ir.iter_loops(band[-1].body):
        by_var.setdefault(lp.var, []).append(lp)
    names = preferred_loop_names(kernel)
    out: list[tuple[str, int]] = []
    for var, lps in by_var.items():
        exts = {R.loop_extent(lp, sizes) for lp in lps}
        ext = exts.pop() if len(exts) == 1 else None
        if ext is None or ext < 2:
            continue
        if len(lps) == 1:
            name = names.get(id(lps[0]))
        elif nest.label and {id(r.loop) for r in sibling_loops(kernel, f"{nest.label}.{var}")} == {id(lp) for lp in lps}:
            name = f"{nest.label}.{var}"
        else:
            name = None
        if name:
            out.append((name, ext))
    return sorted(out, key=lambda x: -x[1])
