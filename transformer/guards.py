"""Guarded reads: a tensor read in an arm of `select(cond, a, b)` is made only where that arm
is chosen (docs/ir.md, "Guarded reads").

Layer 1 (the IR). `select(i >= 1, X[i - 1], 0.0)` reads `X[-1]` never: the interpreter clamps
the index of an arm's read where the arm is not chosen and checks it only where it is;
emitted scalar code is a C++ conditional (`c ? a : b`, the unchosen arm never runs); the
static bounds proof (`bounds.py`) assumes the arm's condition; `stage` leaves a guarded
read in GM when its footprint may leave the tensor (a copy of the box would read outside it:
`bounds.may_leave`). This module finds the guarded reads.
"""

from __future__ import annotations

from typing import Iterator

from . import ir

Guard = tuple[ir.Expr, bool]  # a condition, and whether the read needs it true (a) or false (b)


def guarded_accesses(e: ir.Expr, guards: tuple[Guard, ...] = ()) -> Iterator[tuple[ir.Access, tuple[Guard, ...]]]:
    """Every access in `e` with the `select` conditions it is under (outermost first)."""
    if isinstance(e, ir.Call) and e.func == "select" and len(e.args) == 3:
        c, a, b = e.args
        yield from guarded_accesses(c, guards)
        yield from guarded_accesses(a, guards + ((c, True),))
        yield from guarded_accesses(b, guards + ((c, False),))
    elif isinstance(e, ir.Access):
        yield e, guards
        for i in e.indices:
            yield from guarded_accesses(i, guards)
    elif isinstance(e, ir.Unary):
        yield from guarded_accesses(e.operand, guards)
    elif isinstance(e, ir.Binary):
        yield from guarded_accesses(e.lhs, guards)
        yield from guarded_accesses(e.rhs, guards)
    elif isinstance(e, ir.Call):
        for x in e.args:
            yield from guarded_accesses(x, guards)


def guarded_reads(s: ir.Stmt) -> set[int]:
    """The ids of the access nodes of assignment `s` that are under some `select` arm."""
    if not isinstance(s, ir.Assign):
        return set()
    return {id(a) for a, g in guarded_accesses(s.value) if g}

