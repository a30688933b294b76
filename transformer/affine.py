"""Affine expressions over loop variables and sizes.

Indices and loop bounds in the IR are affine in loop variables, sizes and integer
literals (after tiling, loop bounds may also use `min`/`max`), or quasi-affine: they may
also take a floor division `e / c` or a remainder `e % c` by a positive constant `c`. This
module decides that (`non_affine_part`) and turns such expressions into a linear form
(`Affine`) that the checker, the interpreter and dependence analysis all use. A division
of constants folds (`D / 2` is 32), and so does one whose every coefficient the divisor
divides (`(2 * k + 1) / 2` is `k`); a quasi-affine expression that stays (`i % 2`) has no
linear form (`to_affine` gives None): every consumer already treats that conservatively,
and dependence analysis decides it exactly with Z3 (floor division and modulo by a
constant are Presburger).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from . import ir


@dataclass(frozen=True)
class Affine:
    """`const + sum(coeffs[v] * v)`; `coeffs` never holds zero coefficients."""

    coeffs: tuple[tuple[str, int], ...]
    const: int

    @staticmethod
    def make(coeffs: Mapping[str, int], const: int) -> "Affine":
        return Affine(tuple(sorted((k, v) for k, v in coeffs.items() if v != 0)), const)

    def coeff(self, var: str) -> int:
        for k, v in self.coeffs:
            if k == var:
                return v
        return 0

    @property
    def vars(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.coeffs)

    def __add__(self, o: "Affine") -> "Affine":
        d = dict(self.coeffs)
        for k, v in o.coeffs:
            d[k] = d.get(k, 0) + v
        return Affine.make(d, self.const + o.const)

    def scale(self, c: int) -> "Affine":
        return Affine.make({k: v * c for k, v in self.coeffs}, self.const * c)

    def __sub__(self, o: "Affine") -> "Affine":
        return self + o.scale(-1)

    def is_const(self) -> bool:
        return not self.coeffs


def non_affine_part(
    e: ir.Expr, loop_vars: set[str] | frozenset[str], sizes: set[str] | frozenset[str],
    *, allow_minmax: bool = False,
) -> ir.Expr | None:
    """Return the first sub-expression that breaks affinity, or None if `e` is affine.

    Affine: integer literals, sizes, loop variables, `+`, `-`, unary `-`, and `*` where
    one side mentions no loop variable (sizes are compile-time constants). With
    `allow_minmax`, `min(a, b)` and `max(a, b)` of affine operands are accepted too
    (tiled loop bounds).
    """
    if isinstance(e, ir.IntLit):
        return None
    if isinstance(e, ir.Name):
        return None if (e.name in loop_vars or e.name in sizes) else e
    if isinstance(e, ir.Unary):
        return non_affine_part(e.operand, loop_vars, sizes, allow_minmax=allow_minmax)
    if isinstance(e, ir.Binary):
        if e.op in ("+", "-"):
            return non_affine_part(e.lhs, loop_vars, sizes, allow_minmax=allow_minmax) or \
                non_affine_part(e.rhs, loop_vars, sizes, allow_minmax=allow_minmax)
        if e.op == "*":
            bad = non_affine_part(e.lhs, loop_vars, sizes, allow_minmax=allow_minmax) or \
                non_affine_part(e.rhs, loop_vars, sizes, allow_minmax=allow_minmax)
            if bad is not None:
                return bad
            if _mentions(e.lhs, loop_vars) and _mentions(e.rhs, loop_vars):
                return e
            return None
        if e.op in QUASI_OPS:  # quasi-affine: the divisor a constant of sizes and literals
            bad = non_affine_part(e.lhs, loop_vars, sizes, allow_minmax=allow_minmax) or \
                non_affine_part(e.rhs, loop_vars, sizes, allow_minmax=allow_minmax)
            if bad is not None:
                return bad
            return e if _mentions(e.rhs, loop_vars) else None
        return e
    if isinstance(e, ir.Call) and allow_minmax and e.func in ("min", "max") and len(e.args) == 2:
        for a in e.args:
            bad = non_affine_part(a, loop_vars, sizes, allow_minmax=True)
            if bad is not None:
                return bad
        return None
    return e


def _mentions(e: ir.Expr, names: set[str] | frozenset[str]) -> bool:
    return any(isinstance(s, ir.Name) and s.name in names for s in ir.sub_exprs(e))


def to_affine(e: ir.Expr, sizes: Mapping[str, int]) -> Affine | None:
    """Linear form of `e` with sizes substituted by their values; loop variables stay
    symbolic. Returns None for `min`/`max` and anything non-affine."""
    if isinstance(e, ir.IntLit):
        return Affine((), e.value)
    if isinstance(e, ir.Name):
        if e.name in sizes:
            return Affine((), sizes[e.name])
        return Affine(((e.name, 1),), 0)
    if isinstance(e, ir.Unary) and e.op == "-":
        a = to_affine(e.operand, sizes)
        return None if a is None else a.scale(-1)
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        a = to_affine(e.lhs, sizes)
        b = to_affine(e.rhs, sizes)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if a.is_const():
            return b.scale(a.const)
        if b.is_const():
            return a.scale(b.const)
        return None
    if isinstance(e, ir.Binary) and e.op in QUASI_OPS:
        a = to_affine(e.lhs, sizes)
        b = to_affine(e.rhs, sizes)
        if a is None or b is None or not b.is_const() or b.const <= 0:
            return None
        c = b.const
        if a.is_const():
            return Affine((), a.const // c if e.op == "/" else a.const % c)
        if all(k % c == 0 for _, k in a.coeffs):  # (c * k + b) / c = k + b / c; (c * k + b) % c = b % c
            if e.op == "%":
                return Affine((), a.const % c)
            return Affine.make({v: k // c for v, k in a.coeffs}, a.const // c)
        return None  # floor division / modulo of a variable: quasi-affine, not linear
    return None


QUASI_OPS = ("/", "%")
"""Operators of quasi-affine index arithmetic: floor division and the remainder (in 0..c-1)
by a positive constant `c` (an integer literal, a size, or an expression of them), as MLIR's
affine `floordiv` / `mod` and isl define them."""


def is_quasi_affine(e: ir.Expr) -> bool:
    """Whether `e` divides or takes a remainder anywhere (`i / 2`, `c % CG`)."""
    return any(isinstance(s, ir.Binary) and s.op in QUASI_OPS for s in ir.sub_exprs(e))


eval_int = ir.eval_int_expr
"""Evaluate an integer index/bound expression with every name bound in `env` (sizes and
loop variables): `ir.eval_int_expr` (min/max and the quasi-affine `/`, `%` included)."""
