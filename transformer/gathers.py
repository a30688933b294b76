"""Data-dependent indices: an index position that reads an integer tensor (`T[ids[t], h]`).

Layer 1 (the IR). An index of a tensor access is either affine (quasi-affine) in loop
variables and sizes, or an *index read*: exactly one access `idx[...]` of an integer
tensor (i8 or i32) whose own indices are affine. `T[ids[t], h]` gathers row `ids[t]` of
`T`; `out[ids[t], h] += x[t, h]` scatters into it. Index reads nest once: the indices of
`idx` are affine, never index reads themselves.

What the rest of ascx assumes of such an access (docs/ir.md, "Data-dependent indices"):
- the checker (`check.py`) enforces the form above, and that no index tensor is written in
  the nest (top-level statement) that reads it as an index;
- the interpreter bounds-checks the value read at the access, with the index tensor's
  element named in the error;
- dependence analysis treats a gathered dimension as one that may take any value of the
  dimension (`deps.py`); bounds and capacity use the dimension's whole extent.
"""

from __future__ import annotations

from typing import Iterator

from . import ir


def is_index_read(e: ir.Expr) -> bool:
    """Whether the index expression `e` reads a tensor (a data-dependent index)."""
    return isinstance(e, ir.Access)


def gathered_dims(indices: "tuple[ir.Expr | ir.Slice, ...]") -> tuple[int, ...]:
    """The positions of `indices` that are index reads."""
    return tuple(d for d, e in enumerate(indices) if isinstance(e, ir.Access))


def index_reads(a: ir.Access) -> Iterator[ir.Access]:
    """The index reads in the indices of `a` (the `ids[t]` of `T[ids[t], h]`)."""
    for e in a.indices:
        if isinstance(e, ir.Access):
            yield e


def has_index_reads(e: ir.Expr) -> bool:
    """Whether `e` contains an access with a data-dependent index."""
    return any(isinstance(x, ir.Access) and any(isinstance(i, ir.Access) for i in x.indices)
               for x in ir.sub_exprs(e))


def stmt_index_reads(s: ir.Stmt) -> Iterator[ir.Access]:
    """Every index read of one assignment (in its value and its target), in source order."""
    if not isinstance(s, ir.Assign):
        return
    for e in (s.value, s.target):
        for x in ir.sub_exprs(e):
            if isinstance(x, ir.Access):
                yield from index_reads(x)


def kernel_has_gathers(k: ir.Kernel) -> bool:
    """Whether some statement of `k` indexes through a tensor."""
    return any(True for s in ir.iter_stmts(k.body) for _ in stmt_index_reads(s))


def describe_through(a: ir.Access, dims: tuple[int, ...]) -> str:
    """`out[ids[t], h] is indexed through ids[t] in dimension 0`: why an access may touch
    any element of those dimensions (the reason passes and analyses give)."""
    from .printer import format_expr

    parts = ", ".join(f"`{format_expr(a.indices[d])}` in dimension {d}" for d in dims)
    return (f"`{format_expr(a)}` is indexed through {parts}: it may touch any element of "
            f"{'that dimension' if len(dims) == 1 else 'those dimensions'}")


def index_extents(k: ir.Kernel) -> dict[str, int]:
    """Per tensor read as an index: the smallest extent (at the sizes' values) of the
    dimensions it indexes. Random inputs draw such a tensor's values in `0..extent-1`, so
    that every generated input is one the kernel accepts."""
    from .affine import eval_int

    sizes = k.size_values()
    out: dict[str, int] = {}
    for s in ir.iter_stmts(k.body):
        if not isinstance(s, ir.Assign):
            continue
        for e in (s.value, s.target):
            for x in ir.sub_exprs(e):
                if not isinstance(x, ir.Access):
                    continue
                decl = k.tensor(x.tensor)
                for d in gathered_dims(x.indices):
                    r = x.indices[d]
                    assert isinstance(r, ir.Access) and decl is not None
                    n = eval_int(decl.shape[d], sizes)
                    out[r.tensor] = min(out.get(r.tensor, n), n)
    return out
