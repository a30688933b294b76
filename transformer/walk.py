"""The one access walker of the IR: what a statement reads and writes, and where statements sit.

Dependence analysis (`deps.py`), the interpreter's vectorisation test (`interp.py`), the
region analysis (`regions.py`) and the passes (`passes/_rewrite.py`, `tile`, `double_buffer`,
`_rows`) all ask the same two questions of a kernel, so they ask them here:

- `uses(s, tensors)`: the tensor references of one assignment or copy, in evaluation order —
  the reads in the value, then (for `+= *= max= min=`) the read of the target, then the
  write of the target; for a copy the source region (read) then the destination (write).
  A bare name counts as a rank-0 tensor only when it is in `tensors` (a loop variable or a
  size never does); without `tensors`, only subscripted accesses are reported.
- `sites(stmts)`: every assignment and copy with its path (body indices) and its enclosing
  loops (path, loop), outermost first, in program order.

Index expressions are affine in loop variables and sizes (`check.py`), or an index read
(`ids[t]` in `T[ids[t], h]`, `gathers.py`) whose own indices are affine: an index read is a
read like any other, reported before the access it indexes (for a target, before the
target's read and write).

The "names used" question (which tensors, sizes and variables some statements mention) has
one answer too: `ir.names_used` (and `ir.stmt_names` for one statement); "names written"
(assigned or copied into) is `names_written` here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Container, Iterator, Union

from . import ir

Path = tuple[int, ...]
Index = Union[ir.Expr, ir.Slice]  # a point index, or (copy regions) a half-open range


@dataclass(frozen=True)
class Use:
    """One tensor reference of a statement."""

    tensor: str
    indices: tuple[Index, ...]  # () for a rank-0 tensor; region dims for a copy
    write: bool
    node: "ir.Access | ir.Name | ir.Region" = field(compare=False)
    target: bool = False  # the target of an assignment (its write, and its read for `+=` etc.)

    @property
    def loc(self) -> ir.Loc | None:
        return getattr(self.node, "loc", None)

    @property
    def access(self) -> ir.Access | None:
        """The subscripted access node, when this reference is one."""
        return self.node if isinstance(self.node, ir.Access) else None


def uses(s: ir.Stmt, tensors: Container[str] | None = None) -> list[Use]:
    """The references of one assignment or copy (not of statements nested in a loop: a loop
    has none), in evaluation order (module docstring)."""
    out: list[Use] = []
    if isinstance(s, ir.Assign):
        for x in ir.sub_exprs(s.value):
            if isinstance(x, ir.Access):
                out.append(Use(x.tensor, x.indices, False, x))
            elif isinstance(x, ir.Name) and tensors is not None and x.name in tensors:
                out.append(Use(x.name, (), False, x))
        t = s.target
        if isinstance(t, ir.Access):
            for r in t.indices:
                if isinstance(r, ir.Access):  # an index read (`out[ids[t], h] = ...`)
                    out.append(Use(r.tensor, r.indices, False, r))
        if isinstance(t, ir.Access) or (tensors is not None and t.name in tensors):
            name, idx = (t.tensor, t.indices) if isinstance(t, ir.Access) else (t.name, ())
            if s.op != "=":
                out.append(Use(name, idx, False, t, True))
            out.append(Use(name, idx, True, t, True))
    elif isinstance(s, ir.Copy):
        out.append(Use(s.src.tensor, s.src.dims, False, s.src))
        out.append(Use(s.dst.tensor, s.dst.dims, True, s.dst))
    return out


@dataclass(frozen=True)
class Site:
    """An assignment or copy, where it is, and the loops around it (outermost first)."""

    path: Path
    stmt: "ir.Assign | ir.Copy"
    loops: tuple[tuple[Path, ir.For], ...]


def sites(stmts: tuple[ir.Stmt, ...], base: Path = (),
          outer: tuple[tuple[Path, ir.For], ...] = ()) -> list[Site]:
    """Every assignment and copy in `stmts` (paths start at `base`; `outer` are loops
    already around `stmts`), in program order."""
    out: list[Site] = []

    def walk(body: tuple[ir.Stmt, ...], path: Path, loops: tuple[tuple[Path, ir.For], ...]) -> None:
        for i, s in enumerate(body):
            p = path + (i,)
            if isinstance(s, ir.For):
                walk(s.body, p, loops + ((p, s),))
            else:
                out.append(Site(p, s, loops))  # type: ignore[arg-type]

    walk(stmts, base, outer)
    return out


def names_written(stmts: "tuple[ir.Stmt, ...] | list[ir.Stmt]") -> set[str]:
    """Tensors and scalars assigned or copied into anywhere in `stmts` (nested included)."""
    out: set[str] = set()
    for s in ir.iter_stmts(tuple(stmts)):
        if isinstance(s, ir.Assign):
            out.add(s.target.tensor if isinstance(s.target, ir.Access) else s.target.name)
        elif isinstance(s, ir.Copy):
            out.add(s.dst.tensor)
    return out

