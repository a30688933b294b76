"""IR rewrite helpers shared by every pass: integer index expressions, expression and
statement mapping, substitution of loop variables, accesses, fresh names, loop extents
and trip counts. Small, pure functions over the immutable IR. Not a pass: the registry
skips modules starting with `_`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator, Mapping

from transformer import ir
from transformer.affine import Affine, eval_int, to_affine
from transformer.printer import format_expr

# --------------------------------------------------------------------------------------
# integer expressions


def lit(v: int) -> ir.Expr:
    """An integer literal; negative values become `-(n)` (literals are non-negative)."""
    return ir.IntLit(v) if v >= 0 else ir.Unary("-", ir.IntLit(-v))


def add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("+", a, b))


def sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("-", a, b))


def mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("*", a, b))


def imin(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Call("min", (a, b))


def simp(e: ir.Expr) -> ir.Expr:
    """Fold constants and drop `+ 0`, `- 0`, `* 1`, `* 0` in an integer expression, keeping
    the remaining terms in their written order (so `i0 * 64 + i` stays readable)."""
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        a, b = simp(e.lhs), simp(e.rhs)
        ca, cb = const_value(a), const_value(b)
        if ca is not None and cb is not None:
            return lit(ca + cb if e.op == "+" else ca - cb if e.op == "-" else ca * cb)
        if e.op == "*":
            if ca == 0 or cb == 0:
                return lit(0)
            if ca == 1:
                return b
            if cb == 1:
                return a
            return ir.Binary(e.op, a, b)
        if e.op == "+" and ca == 0:
            return b
        if cb is not None:
            if cb == 0:
                return a
            if cb < 0:  # x + -c -> x - c, x - -c -> x + c
                return simp(ir.Binary("-" if e.op == "+" else "+", a, lit(-cb)))
            # (x +- c1) +- c2 -> x + (+-c1 +- c2)
            if isinstance(a, ir.Binary) and a.op in ("+", "-") and const_value(a.rhs) is not None:
                c1 = const_value(a.rhs) if a.op == "+" else -const_value(a.rhs)  # type: ignore[operator]
                return simp(ir.Binary("+", a.lhs, lit(c1 + cb if e.op == "+" else c1 - cb)))
        if e.op == "-" and a == b:
            return lit(0)
        return ir.Binary(e.op, a, b)
    if isinstance(e, ir.Unary) and e.op == "-":
        c = const_value(e.operand)
        if c is not None:
            return lit(-c)
        return ir.Unary("-", simp(e.operand))
    if isinstance(e, ir.Call) and e.func in ("min", "max"):
        args = tuple(simp(a) for a in e.args)
        cs = [const_value(a) for a in args]
        if all(c is not None for c in cs):
            return lit(min(cs) if e.func == "min" else max(cs))  # type: ignore[type-var]
        return ir.Call(e.func, args)
    return e


def const_value(e: ir.Expr) -> int | None:
    """The value of an integer literal or a negated one, else None."""
    if isinstance(e, ir.IntLit):
        return e.value
    if isinstance(e, ir.Unary) and e.op == "-" and isinstance(e.operand, ir.IntLit):
        return -e.operand.value
    return None


def expr_of_affine(a: Affine, order: list[str] | None = None) -> ir.Expr:
    """IR expression of an `Affine`, terms in `order` (then by name), constant last."""
    coeffs = dict(a.coeffs)
    names = [n for n in (order or []) if n in coeffs] + sorted(n for n in coeffs if n not in (order or []))
    out: ir.Expr | None = None
    for n in names:
        c = coeffs[n]
        term: ir.Expr = ir.Name(n) if abs(c) == 1 else ir.Binary("*", ir.Name(n), lit(abs(c)))
        if out is None:
            out = term if c > 0 else ir.Unary("-", term)
        else:
            out = ir.Binary("+" if c > 0 else "-", out, term)
    if out is None:
        return lit(a.const)
    if a.const > 0:
        out = ir.Binary("+", out, lit(a.const))
    elif a.const < 0:
        out = ir.Binary("-", out, lit(-a.const))
    return out


def eval_const(e: ir.Expr, sizes: Mapping[str, int]) -> int | None:
    """Value of an expression of sizes and literals, min/max allowed (None if it mentions
    anything else)."""
    try:
        return eval_int(e, sizes)
    except (KeyError, ValueError):
        return None


# --------------------------------------------------------------------------------------
# mapping and substitution


def map_children(e: ir.Expr, f: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
    """`e` with `f` applied to each of its direct sub-expressions (access indices, operands,
    call arguments); leaves are returned as they are."""
    if isinstance(e, ir.Access):
        return dataclasses.replace(e, indices=tuple(f(i) for i in e.indices))
    if isinstance(e, ir.Unary):
        return dataclasses.replace(e, operand=f(e.operand))
    if isinstance(e, ir.Binary):
        return dataclasses.replace(e, lhs=f(e.lhs), rhs=f(e.rhs))
    if isinstance(e, ir.Call):
        return dataclasses.replace(e, args=tuple(f(a) for a in e.args))
    return e


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


def subst_expr(e: ir.Expr, m: Mapping[str, ir.Expr]) -> ir.Expr:
    """Replace every `Name(v)` with `m[v]` (loop variables only; tensors keep their names)."""
    if isinstance(e, ir.Name):
        return m.get(e.name, e)
    return map_children(e, lambda c: subst_expr(c, m))


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


def names_in(e: ir.Expr) -> list[str]:
    """The names (loop variables, sizes, scalars) `e` mentions, pre-order, with repeats."""
    return [x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)]


def mentions(e: ir.Expr, names: set[str] | frozenset[str]) -> str | None:
    """The first name of `names` that `e` mentions, or None."""
    return next((n for n in names_in(e) if n in names), None)


def accesses(e: ir.Expr) -> Iterator[ir.Access]:
    """Every access in `e`, pre-order."""
    for x in ir.sub_exprs(e):
        if isinstance(x, ir.Access):
            yield x


def stmt_accesses(s: ir.Stmt) -> Iterator[tuple[ir.Access, bool]]:
    """(access, is_write) of an assignment (not nested). A reduction's target counts as
    both a read and a write (yielded twice)."""
    if isinstance(s, ir.Assign):
        if isinstance(s.target, ir.Access):
            yield s.target, True
            if s.op != "=":
                yield s.target, False
        for a in accesses(s.value):
            yield a, False
        if isinstance(s.target, ir.Access):
            for i in s.target.indices:
                for a in accesses(i):
                    yield a, False


def tensors_in(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """Names of every tensor accessed (or copied) in `stmts`."""
    out: set[str] = set()
    for s in ir.iter_stmts(stmts):
        if isinstance(s, ir.Copy):
            out.add(s.dst.tensor)
            out.add(s.src.tensor)
        elif isinstance(s, ir.Assign):
            tgt = s.target
            out.add(tgt.tensor if isinstance(tgt, ir.Access) else tgt.name)
            for a in accesses(s.value):
                out.add(a.tensor)
            out.update(names_in(s.value))
    return out


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


def loop_extent(loop: ir.For, sizes: Mapping[str, int]) -> int | None:
    """Concrete trip count of a loop whose bounds are sizes and literals (min/max allowed),
    else None."""
    lo, hi = eval_const(loop.lo, sizes), eval_const(loop.hi, sizes)
    if lo is None or hi is None:
        return None
    return max(hi - lo, 0)


def tail_max_extent(loop: ir.For, sizes: Mapping[str, int]) -> int | None:
    """Largest trip count of a tail loop `for v in lo..min(T, ...)` (lo constant): T - lo,
    T the smallest constant argument of the `min`; else None."""
    lo = eval_const(loop.lo, sizes)
    if lo is None or not (isinstance(loop.hi, ir.Call) and loop.hi.func == "min"):
        return None
    cs = [c for c in (eval_const(a, sizes) for a in loop.hi.args) if c is not None]
    return min(cs) - lo if cs else None


def const_trip(loop: ir.For, sizes: Mapping[str, int]) -> tuple[int, int] | None:
    """(lo, trip count) when both bounds are affine and constant at the kernel's sizes
    (unlike `loop_extent`, min/max bounds do not count as constant)."""
    lo, hi = to_affine(loop.lo, sizes), to_affine(loop.hi, sizes)
    if lo is None or hi is None or not lo.is_const() or not hi.is_const():
        return None
    return lo.const, max(hi.const - lo.const, 0)


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
