"""Contractions for the interpreter: `T[f] += a * b` summed over loop variables, on BLAS.

A vectorised reduction `acc[i, j] += f32(A[i, k]) * f32(B[k, j])` would otherwise
broadcast its value over every (i, j, k) and sum it: memory and time in M*N*K elements
streamed through numpy, ~100x slower than `A @ B`. When the statement is a *contraction*
it runs as one `np.matmul` (BLAS `sgemm`, batched over variables both factors share and
the target keeps) on the factors, each loaded once.

The rule (docs/ir.md, "Meaning"): the IR fixes the accumulation dtype and the rounding of
stores, not the order of a sum (the cube reassociates too). So an **f32** `+=` whose value
is a product computed in f32 may be summed in any order and with fused multiply-adds, as
BLAS does. Products computed in f16/bf16 (`a_f16 * b_f16`) keep their rounding: such a
product is one factor, evaluated as written. f16/bf16 accumulators never come here (the
interpreter runs their reduction loops in order), nor do sums that are not products of two
operands over the summed variables (`np.sum` over the chunked broadcast, as before).

Which statements qualify is decided on *variable sets* (`blas_form`), the same way for the
chunk-size estimate before a loop runs and for the statement when it runs, so a loop is
never cut into chunks sized for a contraction that then runs broadcast.
"""

from __future__ import annotations

from typing import Hashable, Sequence, TypeVar

import numpy as np

from . import intexpr, ir
from .check import expr_type
from .dtypes import Ty

H = TypeVar("H", bound=Hashable)

F32 = Ty("f32")


def contraction_factors(s: ir.Assign, kernel: ir.Kernel, loop_vars: tuple[str, ...]) -> tuple[ir.Expr, ...] | None:
    """The factors of `s` when it is `T[...] += e1 * e2 * ...` with T f32 and every
    multiplication of the product computed in f32 (a factor is a maximal sub-expression
    that is not such a multiplication); None otherwise, or with fewer than two factors."""
    if s.op != "+=":
        return None
    tgt = s.target
    decl = kernel.tensor(tgt.tensor if isinstance(tgt, ir.Access) else tgt.name)
    if decl is None or decl.dtype != "f32":
        return None
    factors: list[ir.Expr] = []

    def flatten(e: ir.Expr) -> None:
        if isinstance(e, ir.Binary) and e.op == "*" and expr_type(e, kernel, loop_vars) == F32:
            flatten(e.lhs)
            flatten(e.rhs)
        else:
            factors.append(e)

    flatten(s.value)
    return tuple(factors) if len(factors) >= 2 else None


def names_in(e: ir.Expr) -> frozenset[str]:
    """Every name an expression mentions (loop variables among them), as a set
    (`intexpr.names_in`, the one walker of an expression's names)."""
    return frozenset(intexpr.names_in(e))


def target_names(s: ir.Assign) -> frozenset[str]:
    tgt = s.target
    if isinstance(tgt, ir.Access):
        return frozenset().union(*(names_in(i) for i in tgt.indices)) if tgt.indices else frozenset()
    return frozenset()


MAX_FACTORS = 6
"""Array factors beyond this never take the BLAS path (the operand search is exponential)."""


def operands(factor_sets: Sequence[frozenset[H]], reduced: frozenset[H]) -> list[tuple[frozenset[H], list[int]]] | None:
    """Split the factors (given by their sets of vectorised axes) into the two operands of a
    matrix product summing over `reduced`: every summed axis in both operands, and each
    operand as large as its largest factor (the others multiply into it elementwise, at no
    extra memory). Scalar factors join the smaller operand. Returns the two (axis set,
    factor indices) in first-appearance order, or None when there is no such split."""
    arrays = [i for i, fs in enumerate(factor_sets) if fs]
    scalars = [i for i, fs in enumerate(factor_sets) if not fs]
    if not reduced or not 2 <= len(arrays) <= MAX_FACTORS:
        return None
    first, rest = arrays[0], arrays[1:]
    for mask in range(1, 2 ** len(rest)):
        groups = []
        for members in ([first] + [r for b, r in enumerate(rest) if not mask >> b & 1],
                        [r for b, r in enumerate(rest) if mask >> b & 1]):
            union = frozenset().union(*(factor_sets[i] for i in members))
            if not any(factor_sets[i] == union for i in members):
                break
            groups.append((union, members))
        else:
            if reduced <= groups[0][0] & groups[1][0]:
                if scalars:
                    min(groups, key=lambda g: len(g[0]))[1].extend(scalars)
                return [(u, sorted(m)) for u, m in groups]
    return None


def blas_form(factor_sets: Sequence[frozenset[H]], reduced: frozenset[H]) -> bool:
    """Does the sum over `reduced` of the product of factors with these axis sets run as
    one (batched) matrix product (`operands`)? Dropping an axis from every set (a loop of
    one iteration) keeps a yes a yes, so the chunk estimate made on loop variables holds
    for the shapes the statement then has."""
    return operands(factor_sets, reduced) is not None


def contract(values: Sequence[np.ndarray], full: tuple[int, ...], reduced: frozenset[int]) -> np.ndarray | None:
    """Sum over the `reduced` axes of the product of f32 `values` (each broadcastable to
    `full`), as `np.matmul`. The result has `full`'s rank, size 1 on the reduced axes and
    on axes no factor has. None when the shapes have no BLAS form (`blas_form`)."""
    ndim = len(full)
    arrays: list[np.ndarray] = []
    sets: list[frozenset[int]] = []
    for v in values:
        a = np.asarray(v, dtype=np.float32)
        shp = (1,) * (ndim - a.ndim) + a.shape
        axes = tuple(i for i in range(ndim) if shp[i] > 1)
        arrays.append(a.reshape([shp[i] for i in axes]))
        sets.append(frozenset(axes))
    groups = operands(sets, reduced)
    if groups is None:
        return None
    ops = []
    for axes_set, members in groups:
        axes = sorted(axes_set)
        shape = [full[i] for i in axes]
        acc = None
        for m in members:
            a = arrays[m].reshape([full[i] if i in sets[m] else 1 for i in axes])
            acc = np.broadcast_to(a, shape) if acc is None else acc * a
        ops.append((axes, np.asarray(acc, dtype=np.float32)))
    (xa, x), (ya, y) = ops
    red = sorted(reduced)
    batch = [i for i in xa if i in ya and i not in reduced]
    fx = [i for i in xa if i not in ya]
    fy = [i for i in ya if i not in xa]
    size = lambda axes: int(np.prod([full[i] for i in axes], dtype=np.int64))  # noqa: E731
    xm = np.transpose(x, [xa.index(i) for i in batch + fx + red]).reshape(size(batch), size(fx), size(red))
    ym = np.transpose(y, [ya.index(i) for i in batch + red + fy]).reshape(size(batch), size(red), size(fy))
    z = np.matmul(xm, ym)  # (batch, fx, fy): BLAS sgemm per batch element
    kept = batch + fx + fy
    z = z.reshape([full[i] for i in kept]).transpose(np.argsort(kept))
    return z.reshape([full[i] if i in kept else 1 for i in range(ndim)])
