"""The IR's dtypes -- names, float/int classes, bytes per element -- and its typing rules
(ir.md, "Meaning"): promotion and weak literals.

An expression's type is a `Ty`: a dtype name plus a `weak` flag. Literals, sizes and loop
variables used as values are weak: they take the type of the other operand. A float
literal alone is f32, an integer alone i32. Comparisons are `bool`.

The checker uses these rules to reject ill-typed programs; the interpreter uses the same
function so that the two can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

DTYPES: tuple[str, ...] = ("f16", "bf16", "f32", "i8", "i32")
"""Storage dtypes a tensor may have. `bool` exists only as the type of comparisons."""

FLOAT_DTYPES = frozenset({"f16", "bf16", "f32"})
INT_DTYPES = frozenset({"i8", "i32"})

DTYPE_BYTES: dict[str, int] = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "i32": 4}
"""Bytes per element: the one table (ir.py, the capacity model and the lowering read it)."""


@dataclass(frozen=True)
class Ty:
    dtype: str  # f16 | bf16 | f32 | i8 | i32 | bool
    weak: bool = False

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_DTYPES

    @property
    def is_int(self) -> bool:
        return self.dtype in INT_DTYPES


WEAK_INT = Ty("i32", weak=True)
WEAK_FLOAT = Ty("f32", weak=True)
BOOL = Ty("bool")


def _strong_promote(a: str, b: str) -> str:
    """Promotion of two strong dtypes: the smallest type holding both, f16+bf16 -> f32."""
    if a == b:
        return a
    if a in INT_DTYPES and b in INT_DTYPES:
        return "i32"
    if a in INT_DTYPES:
        return b
    if b in INT_DTYPES:
        return a
    return "f32"  # f16/bf16 with f32, or f16 with bf16


def promote(a: Ty, b: Ty) -> Ty:
    """The type in which `a op b` is computed."""
    if a.weak and b.weak:
        if a.is_float or b.is_float:
            return WEAK_FLOAT
        return WEAK_INT
    if a.weak:
        a, b = b, a
    # now a is strong
    if b.weak:
        if b.is_float and a.is_int:
            return Ty("f32")  # x_i32 * 0.5 must not truncate 0.5
        return Ty(a.dtype)
    return Ty(_strong_promote(a.dtype, b.dtype))


def float_of(t: Ty) -> Ty:
    """Type for a float-only intrinsic (exp, log, ...) applied to `t`."""
    if t.is_float:
        return t
    return Ty("f32")


def concrete(t: Ty) -> str:
    """The dtype a (possibly weak) type is materialised in."""
    return t.dtype
