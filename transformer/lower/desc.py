"""A nest descriptor: one loop nest normalised once, for every instruction-selection pattern.

Why: each nest-shape recogniser used to re-derive the same facts from the IR (the trip
count, whether the nest is perfect, the strides of each access). `describe` computes them
once per nest; the patterns (`patterns/`) read `NestDesc` and the selector records why each
one refused in the same terms.

A descriptor holds
- the loops of the nest's perfect prefix, outermost first (`LoopDesc`: variable, bounds,
  largest trip count, and the C++-free fact whether it is a tile tail `lo..min(T, ..)`);
- per tensor access of the assignments directly in the innermost body of that prefix (an
  inner loop of an imperfect nest is described on its own) (`OperandDesc`): the tensor, read or write, dtype,
  scope (`gm`, `ub`, `l1`, ... for locals, `scalar` for rank-0 temps), the affine element
  offset (`base`: the flat offset with every loop variable at 0, None when an index is not
  affine), the element stride per loop variable, and its form over the innermost two loops:

  | form | meaning (inner loop `j`, outer loop `i`) |
  |---|---|
  | `contiguous` | stride 1 in `j` and, in a 2-D nest, stride = trip(`j`) in `i` (one dense block) |
  | `block-strided` | stride 1 in `j`, another non-zero stride in `i` (rows with a pitch) |
  | `column-broadcast` | stride 1 in `j`, stride 0 in `i` (one row read by every row) |
  | `row-broadcast` | stride 0 in `j`, non-zero in `i` (one value per row) |
  | `invariant` | stride 0 in every loop (a scalar for the whole nest) |
  | `gather` | a non-affine index, or a stride other than 0 and 1 in `j` |

It describes; it decides nothing (a pattern's preconditions do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .. import ir
from ..affine import Affine, to_affine
from ..intexpr import affine_extent, eval_const, tail_max_extent

FORMS = ("contiguous", "block-strided", "column-broadcast", "row-broadcast", "invariant", "gather")


@dataclass(frozen=True)
class LoopDesc:
    var: str
    label: str
    lo: Affine | None
    hi: Affine | None
    trip: int | None  # largest trip count (a tail's bound), None when not constant
    tail: bool  # `lo..min(T, ..)`: the trip count varies at run time (at most `trip`)


@dataclass(frozen=True)
class OperandDesc:
    tensor: str
    write: bool
    dtype: str
    scope: str  # gm | ub | l1 | ... for a local's memory | scalar (rank 0)
    base: Affine | None  # flat element offset with the nest's loop variables at 0
    strides: tuple[tuple[str, int], ...]  # element stride per loop variable, outermost first
    form: str  # one of FORMS

    def stride(self, var: str) -> int:
        return dict(self.strides).get(var, 0)


@dataclass(frozen=True)
class NestDesc:
    loops: tuple[LoopDesc, ...]  # the perfect prefix of the nest, outermost first
    operands: tuple[OperandDesc, ...]  # accesses of the innermost body, in source order
    leaves: int  # statements in the innermost body
    only_assigns: bool  # the innermost body holds assignments only (no loops, no copies)

    @property
    def depth(self) -> int:
        return len(self.loops)

    @property
    def trips(self) -> tuple[int | None, ...]:
        return tuple(lp.trip for lp in self.loops)

    def forms(self) -> dict[str, str]:
        """`tensor` (`tensor'` for a write) -> form, for messages and tests."""
        return {o.tensor + ("'" if o.write else ""): o.form for o in self.operands}

    def summary(self) -> str:
        """One line: loops with trips and each operand's form (`ascx patterns`)."""
        loops = " x ".join(f"{lp.var}:{'<=' if lp.tail else ''}{lp.trip if lp.trip is not None else '?'}"
                           for lp in self.loops)
        ops = ", ".join(f"{o.tensor}{'=' if o.write else ''} {o.form} ({o.scope} {o.dtype})" for o in self.operands)
        return f"loops {loops}; operands {ops or 'none'}"


def perfect_prefix(loop: ir.For) -> list[ir.For]:
    """`loop` and each loop that is alone in its parent's body."""
    loops = [loop]
    while len(loops[-1].body) == 1 and isinstance(loops[-1].body[0], ir.For):
        loops.append(loops[-1].body[0])
    return loops


def _loop(lp: ir.For, sizes: Mapping[str, int]) -> LoopDesc:
    trip = affine_extent(lp.lo, lp.hi, sizes)
    tail = False
    if trip is None:
        mx, lo = tail_max_extent(lp, sizes), eval_const(lp.lo, sizes)
        if mx is not None and lo is not None:
            trip, tail = mx, True
    return LoopDesc(lp.var, lp.label or "", to_affine(lp.lo, sizes), to_affine(lp.hi, sizes), trip, tail)


def _accesses(stmts: tuple[ir.Stmt, ...]) -> list[tuple[ir.Access, bool]]:
    out: list[tuple[ir.Access, bool]] = []
    for s in stmts:
        if not isinstance(s, ir.Assign):
            continue
        out.extend((x, False) for x in ir.sub_exprs(s.value) if isinstance(x, ir.Access))
        if isinstance(s.target, ir.Access):
            out.extend((x, False) for i in s.target.indices for x in ir.sub_exprs(i) if isinstance(x, ir.Access))
            out.append((s.target, True))
    return out


def _form(strides: dict[str, int], loops: tuple[LoopDesc, ...], affine: bool) -> str:
    if not affine or not loops:
        return "gather" if not affine else "invariant"
    j = loops[-1].var
    sj = strides.get(j, 0)
    if all(v == 0 for v in strides.values()):
        return "invariant"
    if sj not in (0, 1):
        return "gather"
    if len(loops) == 1:
        return "contiguous" if sj == 1 else "invariant"
    si = strides.get(loops[-2].var, 0)
    if sj == 0:
        return "row-broadcast"
    if si == 0:
        return "column-broadcast"
    return "contiguous" if si == loops[-1].trip else "block-strided"


def describe(loop: ir.For, sizes: Mapping[str, int], info: Mapping[str, object] | None = None,
             decls: Mapping[str, ir.TensorDecl] | None = None) -> NestDesc:
    """The descriptor of the nest rooted at `loop`. `info` maps a tensor to its `TensorInfo`
    (strides and scope in the emitted code); without it strides are dense row-major over
    `decls`' shapes (or the indices' own coefficients when a tensor is in neither)."""
    fors = perfect_prefix(loop)
    loops = tuple(_loop(lp, sizes) for lp in fors)
    body = fors[-1].body
    ops: list[OperandDesc] = []
    for acc, write in _accesses(body):
        ti = (info or {}).get(acc.tensor)
        decl = (decls or {}).get(acc.tensor)
        dtype = getattr(ti, "dtype", None) or (decl.dtype if decl is not None else "")
        if ti is not None:
            kind, scope = getattr(ti, "kind"), getattr(ti, "scope")
            mem = "scalar" if kind == "scalar" else (scope if kind == "local" else "gm")
            tstrides: tuple[int, ...] = getattr(ti, "strides")
        else:
            mem = "gm"
            shape = tuple(eval_const(d, sizes) or 1 for d in decl.shape) if decl is not None else ()
            tstrides = _dense(shape) if shape else (1,) * len(acc.indices)
        afs = [to_affine(i, sizes) for i in acc.indices]
        affine = all(a is not None for a in afs) and len(tstrides) >= len(afs)
        flat = Affine((), 0)
        if affine:
            for a, st in zip(afs, tstrides[len(tstrides) - len(afs):]):
                assert a is not None
                flat = flat + a.scale(st)
        strides = {lp.var: flat.coeff(lp.var) if affine else 0 for lp in loops}
        base = Affine.make({v: c for v, c in flat.coeffs if v not in strides}, flat.const) if affine else None
        ops.append(OperandDesc(acc.tensor, write, dtype, mem, base, tuple(strides.items()),
                               _form(strides, loops, affine)))
    return NestDesc(loops, tuple(ops), len(body), all(isinstance(s, ir.Assign) for s in body))


def _dense(shape: tuple[int, ...]) -> tuple[int, ...]:
    st = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        st[d] = st[d + 1] * shape[d + 1]
    return tuple(st)


__all__ = ["FORMS", "LoopDesc", "NestDesc", "OperandDesc", "describe", "perfect_prefix"]
