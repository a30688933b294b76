"""Small IR rewriting helpers shared by the loop passes (substitution, renaming, fresh
names, describing loops). Not a pass: the registry skips modules starting with `_`."""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.printer import format_expr


def subst_expr(e: ir.Expr, m: Mapping[str, ir.Expr]) -> ir.Expr:
    """Replace every `Name(v)` with `m[v]` (loop variables only; tensors keep their names)."""
    if isinstance(e, ir.Name):
        return m.get(e.name, e)
    if isinstance(e, ir.Access):
        return dataclasses.replace(e, indices=tuple(subst_expr(i, m) for i in e.indices))
    if isinstance(e, ir.Unary):
        return dataclasses.replace(e, operand=subst_expr(e.operand, m))
    if isinstance(e, ir.Binary):
        return dataclasses.replace(e, lhs=subst_expr(e.lhs, m), rhs=subst_expr(e.rhs, m))
    if isinstance(e, ir.Call):
        return dataclasses.replace(e, args=tuple(subst_expr(a, m) for a in e.args))
    return e


def _subst_region(r: ir.Region, m: Mapping[str, ir.Expr]) -> ir.Region:
    dims = tuple(ir.Slice(subst_expr(d.lo, m), subst_expr(d.hi, m)) if isinstance(d, ir.Slice)
                 else subst_expr(d, m) for d in r.dims)
    return dataclasses.replace(r, dims=dims)


def subst_stmt(s: ir.Stmt, m: Mapping[str, ir.Expr]) -> ir.Stmt:
    if isinstance(s, ir.Assign):
        tgt = s.target if isinstance(s.target, ir.Name) else subst_expr(s.target, m)
        return dataclasses.replace(s, target=tgt, value=subst_expr(s.value, m))
    if isinstance(s, ir.Copy):
        return dataclasses.replace(s, dst=_subst_region(s.dst, m), src=_subst_region(s.src, m))
    inner = {k: v for k, v in m.items() if k != s.var}
    return dataclasses.replace(s, lo=subst_expr(s.lo, m), hi=subst_expr(s.hi, m),
                               body=tuple(subst_stmt(b, inner) for b in s.body))


def map_loops(s: ir.Stmt, f: Callable[[ir.For], ir.For]) -> ir.Stmt:
    """Apply `f` to every loop in `s` (innermost first)."""
    if not isinstance(s, ir.For):
        return s
    return f(dataclasses.replace(s, body=tuple(map_loops(b, f) for b in s.body)))


def used_names(k: ir.Kernel) -> set[str]:
    """Every declared name, loop variable and label of a kernel."""
    names = {k.name} | {s.name for s in k.sizes} | {c.name for c in k.consts} | {t.name for t in k.tensors()}
    for loop in ir.iter_loops(k.body):
        names.add(loop.var)
        if loop.label:
            names.add(loop.label)
    return names


def fresh(base: str, taken: set[str]) -> str:
    """`base`, or `base2`, `base3`, ... : the first not in `taken` (which is updated)."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def same_bound(a: ir.Expr, b: ir.Expr) -> bool:
    """Bounds equal as affine forms over sizes and loop variables (sizes kept symbolic,
    so the equality holds at every `--size`)."""
    fa, fb = to_affine(a, {}), to_affine(b, {})
    if fa is None or fb is None:
        return a == b
    return fa == fb


def const_trip(loop: ir.For, sizes: Mapping[str, int]) -> tuple[int, int] | None:
    """(lo, trip count) when both are compile-time constants at the kernel's sizes."""
    lo, hi = to_affine(loop.lo, sizes), to_affine(loop.hi, sizes)
    if lo is None or hi is None or not lo.is_const() or not hi.is_const():
        return None
    return lo.const, max(hi.const - lo.const, 0)


def loop_header(loop: ir.For) -> str:
    label = f"{loop.label}: " if loop.label else ""
    return f"{label}for {loop.var} in {format_expr(loop.lo)}..{format_expr(loop.hi)}"


def add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """`a + b` with literal zeros dropped and literals folded."""
    if isinstance(b, ir.IntLit) and b.value == 0:
        return a
    if isinstance(a, ir.IntLit) and a.value == 0:
        return b
    if isinstance(a, ir.IntLit) and isinstance(b, ir.IntLit):
        return ir.IntLit(a.value + b.value)
    return ir.Binary("+", a, b)


def mul(c: int, e: ir.Expr) -> ir.Expr:
    if c == 1:
        return e
    if isinstance(e, ir.IntLit):
        return ir.IntLit(c * e.value)
    return ir.Binary("*", ir.IntLit(c), e)
