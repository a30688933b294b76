"""Integer index expressions over the IR: building them (`lit`, `add`, `mul`, `imin`, each
simplified by `simp` so `i0 * 64 + i` stays readable), reading them (`const_value`,
`eval_const`, `names_in`, `mentions`), substituting loop variables (`subst_expr`), and the
trip counts of loops (`loop_extent`, `tail_max_extent`, `const_trip`, `affine_extent`).

Layer 1 (the IR): the region analysis (`regions.py`), the capacity model and every pass
build and read index expressions with these; `passes/_rewrite.py` re-exports them next to
the statement rewriters passes use.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

from . import ir
from .affine import Affine, eval_int, to_affine


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


def subst_expr(e: ir.Expr, m: Mapping[str, ir.Expr]) -> ir.Expr:
    """Replace every `Name(v)` with `m[v]` (loop variables only; tensors keep their names)."""
    if isinstance(e, ir.Name):
        return m.get(e.name, e)
    return map_children(e, lambda c: subst_expr(c, m))


def names_in(e: ir.Expr) -> list[str]:
    """The names (loop variables, sizes, scalars) `e` mentions, pre-order, with repeats."""
    return [x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)]


def mentions(e: ir.Expr, names: set[str] | frozenset[str]) -> str | None:
    """The first name of `names` that `e` mentions, or None."""
    return next((n for n in names_in(e) if n in names), None)


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


def affine_extent(lo: ir.Expr, hi: ir.Expr, env: Mapping[str, int]) -> int | None:
    """`hi - lo` when it is a constant as an affine form at `env` (loop variables may
    cancel: `i0 * 4 + 4 - i0 * 4` is 4), else None: the trip count of a loop or the extent
    of a slice whose bounds move together."""
    a, b = to_affine(lo, env), to_affine(hi, env)
    if a is None or b is None or not (b - a).is_const():
        return None
    return (b - a).const


def const_trip(loop: ir.For, sizes: Mapping[str, int]) -> tuple[int, int] | None:
    """(lo, trip count) when both bounds are affine and constant at the kernel's sizes
    (unlike `loop_extent`, min/max bounds do not count as constant)."""
    lo, hi = to_affine(loop.lo, sizes), to_affine(loop.hi, sizes)
    if lo is None or hi is None or not lo.is_const() or not hi.is_const():
        return None
    return lo.const, max(hi.const - lo.const, 0)



def loop_var_bounds(kernel: ir.Kernel) -> dict[str, tuple[int, int]]:
    """A closed interval holding every value each loop variable takes (the union over the
    loops of that name), by interval arithmetic over the bounds (`min`/`max` allowed);
    a variable whose bounds cannot be bounded is absent. Used to prove an index value fits
    a 32-bit vector lane."""
    sizes = kernel.size_values()
    out: dict[str, tuple[int, int]] = {}

    def interval(e: ir.Expr) -> tuple[int, int] | None:
        if isinstance(e, ir.Call) and e.func in ("min", "max") and len(e.args) == 2:
            a, b = interval(e.args[0]), interval(e.args[1])
            if a is None or b is None:
                return None
            f = min if e.func == "min" else max
            return f(a[0], b[0]), f(a[1], b[1])
        af = to_affine(e, sizes)
        if af is None:
            return None
        lo = hi = af.const
        for v, c in af.coeffs:
            if v not in out:
                return None
            x0, x1 = out[v]
            lo, hi = lo + min(c * x0, c * x1), hi + max(c * x0, c * x1)
        return lo, hi

    for s in ir.iter_stmts(kernel.body):
        if isinstance(s, ir.For):
            lo, hi = interval(s.lo), interval(s.hi)
            if lo is None or hi is None:
                continue
            iv = (lo[0], max(lo[0], hi[1] - 1))
            old = out.get(s.var)
            out[s.var] = iv if old is None else (min(old[0], iv[0]), max(old[1], iv[1]))
    return out
