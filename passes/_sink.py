"""Sinking: step 2 of `tile`, moving the point loops `split` made below the block loops.

After `split`, a perfect band `i0{i{j0{j}}}` has point loop `i` between the tile loops;
staging wants the tile loops outside (`i0{j0{i{j}}}`), so that one level holds a whole
tile. `sink_point_loops` does this bottom-up: a point loop whose body holds block loops is
*distributed* around them and moved inside each (`i{A; for jb{B}; C}` ->
`i{A}; for jb{i{B}}; i{C}`). A *block loop* is a tile loop `split` made, or a loop whose
variable appears in indices only as `c*jb` with `c > 1` (e.g. the K/V block loop that
`online_softmax` makes).

Legality (`Check_point_loop_private`): every tensor the point loop writes has a dimension
indexed `v + e` the same way by every access, so iterations with different `v` touch
disjoint elements and no dependence is carried by `v`: distributing and moving it inward
keeps every dependence. When it does not hold, the point loop stays where it is (always
correct, less reuse) and the trace says why.

Why a step of `tile` and not a pass: sinking is only meaningful for loops `split` has just
made, and it needs `split`'s record of which loops are tile and point loops (`Strips`),
which the IR does not carry. On a kernel written by hand the same reordering is
`interchange` (a perfect band, checked against the dependence analysis), which is a pass.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from transformer import ir
from transformer.affine import to_affine

from . import _rewrite as R
from .base import TraceEntry
from .split import Strips


def is_block_loop(loop: ir.For, st: Strips | None, sizes: Mapping[str, int]) -> bool:
    """A tile loop made by `split` (in `st`), or a loop whose variable appears in indices only with
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


def holds_block_loop(loop: ir.For, sizes: Mapping[str, int]) -> bool:
    """Whether a loop nested in `loop` walks over blocks (the K/V block loop of
    `online_softmax`): `tile` keeps such a loop tiled even at its whole extent, so that its
    point loop sinks below the block loop (the G query rows of one KV head share each block)."""
    return any(is_block_loop(lp, None, sizes) for lp in ir.iter_loops(loop.body))


def sink_point_loops(s: ir.Stmt, st: Strips, sizes: Mapping[str, int], trace: TraceEntry) -> tuple[ir.Stmt, ...]:
    """Bottom-up: move every point loop below the block loops in its body. Returns the
    statements that replace `s` (several when a point loop was distributed)."""
    if not isinstance(s, ir.For):
        return (s,)
    body = tuple(x for b in s.body for x in sink_point_loops(b, st, sizes, trace))
    s = dataclasses.replace(s, body=body)
    if (s.var in st.point_vars or _parts_a_row(s, st)) and not s.label and not s.annotations:
        return _sink(s, st, sizes, trace)
    return (s,)


def _parts_a_row(s: ir.For, st: Strips) -> bool:
    """Whether `s` holds, directly in its body, a tile loop of a row whose other tile loops
    lie outside `s` (fused attention's `for d { ACC = 0; for j0 {..}; ...ACC... }` beside
    the loops over `j`): `s` is then moved inside like a point loop (when legal), so that
    every loop over the row is a block loop at one level and stages its tiles there."""
    inside = {lp.var for lp in ir.iter_loops(s.body)}
    direct = {b.var for b in s.body if isinstance(b, ir.For)}
    return any(direct & g and g - inside for g in st.row_groups())


def _sink(p: ir.For, st: Strips, sizes: Mapping[str, int], trace: TraceEntry) -> tuple[ir.Stmt, ...]:
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
