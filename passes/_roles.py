"""Matmul roles for `stage` (step 3 of `tile`): which tensors of a nest go to the cube's
scopes (`l0a` / `l0b` operands through `l1`, the `l0c` accumulator) and which outputs the
FIX pipe writes straight from `l0c`. Not a pass.
"""

from __future__ import annotations

from typing import Mapping

from transformer import ir
from transformer.regions import AccessSite


def strip_casts(e: ir.Expr) -> ir.Expr:
    while isinstance(e, ir.Call) and e.func in ir.DTYPES and len(e.args) == 1:
        e = e.args[0]
    return e


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)}


def _window(target: ir.Access, operand: ir.Access, loop_vars: set[str]) -> bool:
    """`operand` is read through a window (`X[y + r]`: one index mixes a loop variable of the
    target with a summed one, as a convolution does): no matmul operand, the cube takes it
    only through `conv_gemm`'s img2col, and the vector cores through the `window` pattern."""
    kept = {v for i in target.indices for v in _names(i) if v in loop_vars}
    for i in operand.indices:
        n = _names(i) & loop_vars
        if n & kept and n - kept:
            return True
    return False


def matmul_roles(nest: ir.For, accs: Mapping[str, list[AccessSite]], allowed: set[str]) -> dict[str, str]:
    """tensor -> `l0a` / `l0b` / `l0c` for a matmul-like nest (`passes/stage.py` says when)."""
    roles: dict[str, str] = {}
    loop_vars = {s.var for s in ir.iter_stmts((nest,)) if isinstance(s, ir.For)}
    for s in ir.iter_stmts(nest.body):
        if not (isinstance(s, ir.Assign) and s.op == "+=" and isinstance(s.target, ir.Access)):
            continue
        v = s.value
        if not (isinstance(v, ir.Binary) and v.op == "*"):
            continue
        a, b = strip_casts(v.lhs), strip_casts(v.rhs)
        if not (isinstance(a, ir.Access) and isinstance(b, ir.Access)) or a.tensor == b.tensor:
            continue
        c = s.target.tensor
        if c in (a.tensor, b.tensor) or _window(s.target, a, loop_vars) or _window(s.target, b, loop_vars):
            continue
        roles.setdefault(a.tensor, "l0a")
        roles.setdefault(b.tensor, "l0b")
        roles.setdefault(c, "l0c")
    # validate: the accumulator is only initialised with a literal, accumulated, or read by a cast
    for t, r in list(roles.items()):
        for acc in accs.get(t, []):
            s = acc.stmt
            ok = False
            if r == "l0c":
                if acc.write and s.op == "=" and isinstance(s.value, (ir.FloatLit, ir.IntLit)):
                    ok = True
                elif s.op == "+=" and isinstance(s.value, ir.Binary) and s.value.op == "*" and \
                        isinstance(s.target, ir.Access) and s.target.tensor == t:
                    ok = True
                elif not acc.write and s.op == "=" and strip_casts(s.value) == acc.access and s.value != acc.access:
                    ok = True
            else:
                v = s.value
                ok = (not acc.write and s.op == "+=" and isinstance(v, ir.Binary) and v.op == "*"
                      and (strip_casts(v.lhs) == acc.access if r == "l0a" else strip_casts(v.rhs) == acc.access))
            if not ok:
                roles.pop(t, None)
                break
    roles = {t: r for t, r in roles.items() if t in allowed}
    # a matmul statement goes to the cube only when all three of its tensors do
    changed = True
    while changed:
        changed = False
        for s in ir.iter_stmts(nest.body):
            if isinstance(s, ir.Assign) and s.op == "+=" and isinstance(s.target, ir.Access) \
                    and isinstance(s.value, ir.Binary) and s.value.op == "*":
                a, b = strip_casts(s.value.lhs), strip_casts(s.value.rhs)
                if not (isinstance(a, ir.Access) and isinstance(b, ir.Access)):
                    continue
                trio = (roles.get(a.tensor) == "l0a", roles.get(b.tensor) == "l0b", roles.get(s.target.tensor) == "l0c")
                if any(trio) and not all(trio):
                    for t in (a.tensor, b.tensor, s.target.tensor):
                        if t in roles:
                            roles.pop(t)
                            changed = True
    return roles


def fixpipe_written(nest: ir.For, accs: Mapping[str, list[AccessSite]], roles: Mapping[str, str]) -> set[str]:
    """Tensors written only by `Y = cast(acc)` from an `l0c` accumulator and never read."""
    out = set()
    for t, lst in accs.items():
        if t in roles:
            continue
        ok = bool(lst)
        for a in lst:
            v = strip_casts(a.stmt.value)
            if not (a.write and a.plain and isinstance(v, ir.Access) and roles.get(v.tensor) == "l0c"):
                ok = False
        if ok:
            out.add(t)
    return out
