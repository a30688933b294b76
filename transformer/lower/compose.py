"""Vector code for an intrinsic with no single Ascend C instruction (`erf`, `sin`, `pow`, ...):
its composition of basic instructions from the one table (`transformer/intrinsics.py`).

A composition is a small expression over the argument with named intermediate values
(`steps`). Each step is turned into IR and compiled by the ordinary expression selector
(`vector._Sel`) into a temporary that stays pinned until the composition ends; later steps
and the result read it by name, so a value used three times is computed once. The argument
is computed in f32 (an f16/bf16/i32 argument is widened by `Cast` first) and the f32
result is rounded once to the intrinsic's result type, as the interpreter does.

The bound names start with `%`, which no kernel can spell, so they never meet a user's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ir
from ..intrinsics import BY_NAME, Composition, Term, pow_by_constant

if TYPE_CHECKING:
    from .vector import Vec, _Sel

_FUNCS = {"exp", "log", "sqrt", "abs", "max", "min", "select"}


def literal_value(e: ir.Expr) -> float | None:
    """The value of a literal (`2`, `-0.5`), else None."""
    if isinstance(e, (ir.IntLit, ir.FloatLit)):
        return float(e.value)
    if isinstance(e, ir.Unary):
        v = literal_value(e.operand)
        return None if v is None else -v
    return None


def composition_of(e: ir.Call) -> Composition:
    """The composition that computes `e`, or NoMatch-worthy ValueError with the reason."""
    if e.func == "pow":
        c = literal_value(e.args[1])
        if c is None:
            raise ValueError("`pow` with an exponent that is not a literal (exp(y * log(x)) is wrong for a "
                             "negative x and an integer y): scalar code")
        comp = pow_by_constant(c)
        if comp is None:
            raise ValueError("`pow(x, 0)` (1 for every x, NaN included): scalar code")
        return comp
    spec = BY_NAME[e.func]
    if spec.compose is None:  # pragma: no cover - the selector asks only for composed intrinsics
        raise ValueError(f"no composition for `{e.func}`")
    return spec.compose()


def to_ir(t: Term, args: list[ir.Expr]) -> ir.Expr:
    """The IR of a composition term; `arg` i is `args[i]`, `let` a bound name."""
    if t.op == "arg":
        return args[t.value]
    if t.op == "let":
        return ir.Name("%" + t.value)
    if t.op == "lit":
        return ir.FloatLit(t.value)
    subs = tuple(to_ir(a, args) for a in t.args)
    if t.op == "neg":
        return ir.Unary("-", subs[0])
    if t.op in _FUNCS:
        return ir.Call(t.op, subs)
    return ir.Binary(t.op, subs[0], subs[1])


def compile_composed(sel: "_Sel", e: ir.Call, dest: "Vec | None") -> "Vec":
    """Vector code for the composed intrinsic call `e` (the module docstring)."""
    NoMatch, Vec = sel.NoMatch, sel.Vec  # the selector's own types (no import cycle)
    res = sel.ty_of(e)
    if res.dtype not in ("f16", "bf16", "f32"):
        raise NoMatch(f"`{e.func}` in {res.dtype}")
    try:
        comp = composition_of(e)
    except ValueError as why:
        raise NoMatch(str(why)) from None
    args = [a if sel.ty_of(a).dtype == "f32" else ir.Call("f32", (a,)) for a in e.args]
    held: list["Vec"] = []
    for name, term in comp.steps:
        v = sel.compile(to_ir(term, args))
        if not isinstance(v, Vec):  # pragma: no cover - every step reads the (loop-dependent) argument
            raise NoMatch(f"`{e.func}` of a loop-invariant value")
        if v.tmp >= 0:
            held.append(v)
        # read-only to the selector (tmp -1): nothing overwrites or frees it before the end
        sel.bound["%" + name] = Vec(v.op)
    out = sel.compile(to_ir(comp.result, args), dest if res.dtype == "f32" else None)
    assert isinstance(out, Vec)
    for name, _ in comp.steps:
        del sel.bound["%" + name]
    if out.tmp < 0 and any(out.op == h.op for h in held):  # the result is a step's value: keep it
        w = sel.alloc("f32")
        sel.copy_into(w, out)
        out = w
    for v in held:
        sel.release(v)
    return sel.as_type(out, res.dtype, dest)  # type: ignore[return-value]
