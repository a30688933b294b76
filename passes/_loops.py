"""Helpers shared by the tiling passes (`tile`, `double_buffer`, `layout`, `online_softmax`).

Small, pure functions over the IR: building and simplifying integer index expressions,
substituting loop variables, collecting accesses, fresh names, and the default on-chip
budgets. Not a pass (the leading underscore keeps it out of the registry).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Mapping

from transformer import ir
from transformer.affine import Affine, to_affine

# --------------------------------------------------------------------------------------
# integer expressions


def lit(v: int) -> ir.Expr:
    """An integer literal; negative values become `-(n)` (literals are non-negative)."""
    return ir.IntLit(v) if v >= 0 else ir.Unary("-", ir.IntLit(-v))


def name(n: str) -> ir.Name:
    return ir.Name(n)


def add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("+", a, b))


def sub(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("-", a, b))


def mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return simp(ir.Binary("*", a, b))


def imin(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Call("min", (a, b))


def simp(e: ir.Expr) -> ir.Expr:
    """Fold constants and drop `+ 0`, `* 1`, `* 0` in an integer expression, keeping the
    remaining terms in their written order (so `i0 * 64 + i` stays readable)."""
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        a, b = simp(e.lhs), simp(e.rhs)
        ca, cb = const_value(a), const_value(b)
        if ca is not None and cb is not None:
            return lit(ca + cb if e.op == "+" else ca - cb if e.op == "-" else ca * cb)
        if e.op == "+":
            if ca == 0:
                return b
            if cb == 0:
                return a
            if cb is not None and cb < 0:
                return simp(ir.Binary("-", a, lit(-cb)))
            # (x + c1) + c2 -> x + (c1 + c2)
            if cb is not None and isinstance(a, ir.Binary) and a.op in ("+", "-") and const_value(a.rhs) is not None:
                c1 = const_value(a.rhs) if a.op == "+" else -const_value(a.rhs)  # type: ignore[operator]
                return simp(ir.Binary("+", a.lhs, lit(c1 + cb)))
        if e.op == "-":
            if cb == 0:
                return a
            if cb is not None and cb < 0:
                return simp(ir.Binary("+", a, lit(-cb)))
            if cb is not None and isinstance(a, ir.Binary) and a.op in ("+", "-") and const_value(a.rhs) is not None:
                c1 = const_value(a.rhs) if a.op == "+" else -const_value(a.rhs)  # type: ignore[operator]
                return simp(ir.Binary("+", a.lhs, lit(c1 - cb)))
            if a == b:
                return lit(0)
        if e.op == "*":
            if ca == 0 or cb == 0:
                return lit(0)
            if ca == 1:
                return b
            if cb == 1:
                return a
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
    if isinstance(e, ir.IntLit):
        return e.value
    if isinstance(e, ir.Unary) and e.op == "-" and isinstance(e.operand, ir.IntLit):
        return -e.operand.value
    return None


def affine(e: ir.Expr, sizes: Mapping[str, int]) -> Affine | None:
    """Linear form with sizes substituted (None for min/max and non-affine)."""
    return to_affine(e, sizes)


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
    """Value of an expression of sizes and literals (None if it mentions anything else)."""
    from transformer.affine import eval_int

    try:
        return eval_int(e, sizes)
    except (KeyError, ValueError):
        return None


# --------------------------------------------------------------------------------------
# substitution and traversal


def subst_expr(e: ir.Expr, m: Mapping[str, ir.Expr]) -> ir.Expr:
    """Replace `Name`s (loop variables) by expressions."""
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


def map_exprs(s: ir.Stmt, f: Callable[[ir.Expr], ir.Expr], region_f: Callable[[ir.Region], ir.Region] | None = None) -> ir.Stmt:
    """Apply `f` to every top-level expression of `s` and of the statements nested in it."""
    if isinstance(s, ir.Assign):
        return dataclasses.replace(s, target=f(s.target), value=f(s.value))  # type: ignore[arg-type]
    if isinstance(s, ir.Copy):
        rf = region_f or (lambda r: dataclasses.replace(
            r, dims=tuple(ir.Slice(f(d.lo), f(d.hi)) if isinstance(d, ir.Slice) else f(d) for d in r.dims)))
        return dataclasses.replace(s, dst=rf(s.dst), src=rf(s.src))
    if isinstance(s, ir.For):
        return dataclasses.replace(s, lo=f(s.lo), hi=f(s.hi), body=tuple(map_exprs(b, f, region_f) for b in s.body))
    raise TypeError(s)


def subst_stmt(s: ir.Stmt, m: Mapping[str, ir.Expr]) -> ir.Stmt:
    """Substitute loop variables everywhere in `s`, simplifying indices and bounds."""

    def f(e: ir.Expr) -> ir.Expr:
        return _simp_indices(subst_expr(e, m))

    return map_exprs(s, f)


def _simp_indices(e: ir.Expr) -> ir.Expr:
    if isinstance(e, ir.Access):
        return dataclasses.replace(e, indices=tuple(simp(i) for i in e.indices))
    if isinstance(e, ir.Unary):
        return dataclasses.replace(e, operand=_simp_indices(e.operand))
    if isinstance(e, ir.Binary):
        return dataclasses.replace(e, lhs=_simp_indices(e.lhs), rhs=_simp_indices(e.rhs))
    if isinstance(e, ir.Call):
        if e.func in ("min", "max"):
            return simp(e)
        return dataclasses.replace(e, args=tuple(_simp_indices(a) for a in e.args))
    return simp(e) if isinstance(e, (ir.Name, ir.IntLit)) else e


def accesses(e: ir.Expr) -> Iterator[ir.Access]:
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
            for x in ir.sub_exprs(s.value):
                if isinstance(x, ir.Name):
                    out.add(x.name)
    return out


def used_names(kernel: ir.Kernel) -> set[str]:
    """Every name declared or bound in the kernel (tensors, sizes, consts, loop vars, labels)."""
    out = {t.name for t in kernel.tensors()} | {s.name for s in kernel.sizes} | {c.name for c in kernel.consts}
    for loop in ir.iter_loops(kernel.body):
        out.add(loop.var)
        if loop.label:
            out.add(loop.label)
    return out


def fresh(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... whichever is not in `taken`; adds it to `taken`."""
    n, k = base, 0
    while n in taken:
        k += 1
        n = f"{base}_{k}"
    taken.add(n)
    return n


def loop_extent(loop: ir.For, sizes: Mapping[str, int]) -> int | None:
    """Concrete trip count of a loop whose bounds are sizes and literals, else None."""
    lo, hi = eval_const(loop.lo, sizes), eval_const(loop.hi, sizes)
    if lo is None or hi is None:
        return None
    return max(hi - lo, 0)


# --------------------------------------------------------------------------------------
# budgets

# Usable bytes per scope on the Atlas A2 / 910B when no target table is given.
DEFAULT_BUDGETS: dict[str, int] = {
    "ub": 192 * 1024,
    "l1": 512 * 1024,
    "l0a": 64 * 1024,
    "l0b": 64 * 1024,
    "l0c": 128 * 1024,
}


def scope_budget(target: Any, scope: str) -> int:
    """Usable bytes of `scope`: from the target table when one is given (a `Target` or a
    target name), else the 910B numbers in `DEFAULT_BUDGETS`."""
    if target is not None:
        try:
            if isinstance(target, str):
                from transformer.targets import get_target

                target = get_target(target)
            return int(target.scope(scope).usable_bytes)
        except Exception:  # unknown scope on this target: fall back
            pass
    return DEFAULT_BUDGETS.get(scope, 0)


def tensor_bytes(t: ir.TensorDecl, sizes: Mapping[str, int]) -> int:
    n = 1
    for d in t.shape:
        v = eval_const(d, sizes)
        n *= v if v is not None else 0
    return n * ir.DTYPE_BYTES[t.dtype]
