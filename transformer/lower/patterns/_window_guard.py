"""The guards of a padded window read (pattern `window`, window.py): `select(c1, select(c2,
.. X[..] .., v), v)` split into its read, conditions and value, and the check that the
conditions on one window dimension say exactly "the index is inside the plane" (docs/ir.md,
"Guarded reads"), so the pattern may read a border of v instead of evaluating them."""

from __future__ import annotations

from typing import Any

from ... import ir
from ...affine import to_affine


def unguard(e: ir.Expr) -> tuple[ir.Expr, list[ir.Expr], ir.Expr | None]:
    """`select(c1, select(c2, .. a .., v), v)` -> (a, [c1, c2, ..], v); (e, [], None) if no select."""
    conds: list[ir.Expr] = []
    v: ir.Expr | None = None
    while isinstance(e, ir.Call) and e.func == "select" and len(e.args) == 3 \
            and isinstance(e.args[2], (ir.FloatLit, ir.IntLit)) and (v is None or e.args[2] == v):
        conds.append(e.args[0])
        v = e.args[2]
        e = e.args[1]
    return e, conds, v


_CMP = {">=": lambda d: d >= 0, ">": lambda d: d > 0, "<=": lambda d: d <= 0, "<": lambda d: d < 0}


def guard_is_bounds(conds: list[ir.Expr], idx: ir.Expr, var: str, lvar: str, n_var: int, n_l: int, extent: int,
                     sizes: Any, which: str) -> str:
    """Why the conditions on (`var`, `lvar`) among `conds` are not exactly "index `idx` lies in
    [0, extent)" with the index at most one past either end ("" if they are)."""
    mine = []
    for c in conds:
        if not (isinstance(c, ir.Binary) and c.op in _CMP):
            return f"the guard `{c}` is not a comparison"
        d = to_affine(ir.Binary("-", c.lhs, c.rhs), sizes)
        if d is None:
            return f"the guard `{c}` is not affine"
        vs = set(d.vars)
        if vs <= {var, lvar}:
            if vs:
                mine.append((d, _CMP[c.op]))
        elif vs & {var, lvar}:
            return f"the guard `{c}` mixes the {which} with another loop"
    fi = to_affine(idx, sizes)
    assert fi is not None
    for v in range(n_var):
        for lv in range(n_l):
            env = {var: v, lvar: lv}
            at = fi.const + sum(c * env.get(k, 0) for k, c in fi.coeffs)
            ok = all(f(d.const + sum(c * env.get(k, 0) for k, c in d.coeffs)) for d, f in mine)
            if ok != (0 <= at < extent):
                return f"the guard does not say exactly that the {which} `{idx}` is inside its dimension"
            if not -1 <= at <= extent:
                return f"the {which} `{idx}` reaches {at}: more than one element outside (a halo of one)"
    return ""
