"""IR rewrite helpers shared by every pass: expression and statement mapping, substitution
of loop variables, accesses, fresh names, trip counts; plus, re-exported, the integer index
expressions of `transformer/intexpr.py` (so a pass reads `R.add`, `R.loop_extent`). Small, pure functions over the immutable IR. Not a pass: the registry
skips modules starting with `_`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator, Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.intexpr import (  # noqa: F401  (re-exported: passes build index expressions with them)
    add, const_trip, const_value, eval_const, expr_of_affine, imin, lit, loop_extent, map_children, mentions, mul, names_in, simp,
    sub, subst_expr, tail_max_extent,
)
from transformer.printer import format_expr
from transformer.walk import uses

# --------------------------------------------------------------------------------------
# mapping and substitution


def map_expr(e: ir.Expr, f: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
    """Bottom-up rewrite: `f` applied to every node of `e`, children first (so `f` sees an
    access whose indices are already rewritten)."""
    return f(map_children(e, lambda c: map_expr(c, f)))


def map_region(r: ir.Region, f: Callable[[ir.Expr], ir.Expr]) -> ir.Region:
    """`r` with `f` applied to every index and slice bound."""
    return dataclasses.replace(r, dims=tuple(ir.Slice(f(d.lo), f(d.hi)) if isinstance(d, ir.Slice) else f(d)
                                             for d in r.dims))


def map_stmt_exprs(s: ir.Stmt, f: Callable[[ir.Expr], ir.Expr]) -> ir.Stmt:
    """Apply `f` to every top-level expression of `s` and of the statements nested in it:
    assignment targets and values, copy regions, loop bounds."""
    if isinstance(s, ir.Assign):
        return dataclasses.replace(s, target=f(s.target), value=f(s.value))  # type: ignore[arg-type]
    if isinstance(s, ir.Copy):
        return dataclasses.replace(s, dst=map_region(s.dst, f), src=map_region(s.src, f))
    if isinstance(s, ir.For):
        return dataclasses.replace(s, lo=f(s.lo), hi=f(s.hi), body=tuple(map_stmt_exprs(b, f) for b in s.body))
    raise TypeError(s)


def map_loops(s: ir.Stmt, f: Callable[[ir.For], ir.For]) -> ir.Stmt:
    """Apply `f` to every loop in `s` (innermost first)."""
    if not isinstance(s, ir.For):
        return s
    return f(dataclasses.replace(s, body=tuple(map_loops(b, f) for b in s.body)))


def subst_stmt(s: ir.Stmt, m: Mapping[str, ir.Expr], *, simplify: bool = False) -> ir.Stmt:
    """Substitute loop variables everywhere in `s`: bounds, indices, values, copy regions
    (a scalar assignment target is a tensor, never substituted; a loop rebinding a
    variable hides it from its body). With `simplify`, access indices and `min`/`max`
    calls are then simplified (`simp`)."""

    def f(e: ir.Expr) -> ir.Expr:
        e = subst_expr(e, m)
        return _simp_indices(e) if simplify else e

    if isinstance(s, ir.Assign):
        target = s.target if isinstance(s.target, ir.Name) else f(s.target)
        return dataclasses.replace(s, target=target, value=f(s.value))
    if isinstance(s, ir.Copy):
        return dataclasses.replace(s, dst=map_region(s.dst, f), src=map_region(s.src, f))
    inner = {k: v for k, v in m.items() if k != s.var}
    return dataclasses.replace(s, lo=f(s.lo), hi=f(s.hi),
                               body=tuple(subst_stmt(b, inner, simplify=simplify) for b in s.body))


def _simp_indices(e: ir.Expr) -> ir.Expr:
    """`e` with its access indices and `min`/`max` calls simplified (`simp`)."""
    if isinstance(e, ir.Access):
        return dataclasses.replace(e, indices=tuple(simp(i) for i in e.indices))
    if isinstance(e, ir.Call) and e.func in ("min", "max"):
        return simp(e)
    return map_children(e, _simp_indices)


# --------------------------------------------------------------------------------------
# what statements touch


def accesses(e: ir.Expr) -> Iterator[ir.Access]:
    """Every access in `e`, pre-order."""
    for x in ir.sub_exprs(e):
        if isinstance(x, ir.Access):
            yield x


def stmt_accesses(s: ir.Stmt) -> Iterator[tuple[ir.Access, bool]]:
    """(access, is_write) of the subscripted accesses of an assignment (not nested), in
    evaluation order: `transformer.walk.uses` (the one access walker), as access nodes. A
    reduction's target counts as both a read and a write (yielded twice)."""
    if isinstance(s, ir.Assign):
        for u in uses(s):
            yield u.node, u.write  # type: ignore[misc]


def writer_of(loop: ir.For, tensor: str) -> ir.Stmt | None:
    """The first statement in the body of `loop` that writes `tensor` (an assignment to it,
    any op, or a copy into it), or None."""
    for s in ir.iter_stmts(loop.body):
        if isinstance(s, ir.Assign):
            t = s.target
            if (t.tensor if isinstance(t, ir.Access) else t.name) == tensor:
                return s
        elif isinstance(s, ir.Copy) and s.dst.tensor == tensor:
            return s
    return None


# --------------------------------------------------------------------------------------
# names


def used_names(kernel: ir.Kernel) -> set[str]:
    """Every name declared or bound in the kernel: tensors, sizes, consts, loop variables
    and labels (the kernel's own name is not among them)."""
    out = {t.name for t in kernel.tensors()} | {s.name for s in kernel.sizes} | {c.name for c in kernel.consts}
    for loop in ir.iter_loops(kernel.body):
        out.add(loop.var)
        if loop.label:
            out.add(loop.label)
    return out


def fresh(base: str, taken: set[str], *, sep: str = "_", first: int = 1) -> str:
    """`base` if it is not in `taken`, else `base{sep}{n}` for the first n = first,
    first + 1, ... not in `taken` (`x_1`, `x_2` by default; `sep="", first=2` gives
    `x2`, `x3`). Adds the name to `taken`. The base is made a legal name first: runs of
    `_` collapse (`x_` + `_ub` would contain `__`, which C++ reserves) and a base built from
    a long name is cut to leave room for the suffix (names are at most 128 characters)."""
    import re

    from transformer.check import MAX_NAME_LENGTH

    base = re.sub(r"__+", "_", base)[:MAX_NAME_LENGTH - 8]
    name, n = base, first
    while name in taken:
        name = f"{base}{sep}{n}"
        n += 1
    taken.add(name)
    return name


# --------------------------------------------------------------------------------------
# loops


def same_bound(a: ir.Expr, b: ir.Expr) -> bool:
    """Bounds equal as affine forms over sizes and loop variables (sizes kept symbolic,
    so the equality holds at every `--size`)."""
    fa, fb = to_affine(a, {}), to_affine(b, {})
    if fa is None or fb is None:
        return a == b
    return fa == fb


def loop_header(loop: ir.For) -> str:
    """`label: for v in lo..hi`, for messages."""
    label = f"{loop.label}: " if loop.label else ""
    return f"{label}for {loop.var} in {format_expr(loop.lo)}..{format_expr(loop.hi)}"
