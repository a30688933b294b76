"""`Kernel` -> canonical text. `parse(print_kernel(k)) == k`, and printing is idempotent.

Canonical form: two-space indentation, one statement per line, declarations grouped
(sizes, consts, then temps and locals in their order), a blank line between top-level
statements, minimal parentheses, floats in their shortest round-trip form with a point.
Comments are not kept.
"""

from __future__ import annotations

import math

from . import ir

# Binding strength: higher binds tighter.
_PREC = {"<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1, "+": 2, "-": 2, "*": 3, "/": 3, "%": 3}
_UNARY_PREC = 4


def format_float(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = repr(float(v))
    if "e" in s and "." not in s.split("e")[0]:
        mant, exp = s.split("e")
        s = f"{mant}.0e{exp}"
    if "." not in s and "e" not in s:
        s += ".0"
    return s


def format_expr(e: ir.Expr, parent_prec: int = 0) -> str:
    """Print an expression, parenthesised only where the grammar needs it."""
    if isinstance(e, ir.IntLit):
        return str(e.value)
    if isinstance(e, ir.FloatLit):
        return format_float(e.value)
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Access):
        return f"{e.tensor}[{', '.join(format_expr(i) for i in e.indices)}]"
    if isinstance(e, ir.Call):
        return f"{e.func}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, ir.Unary):
        inner = format_expr(e.operand, _UNARY_PREC)
        text = f"-{inner}"
        if inner.startswith("-"):
            text = f"-({inner})"
        return f"({text})" if parent_prec > _UNARY_PREC else text
    if isinstance(e, ir.Binary):
        p = _PREC[e.op]
        # Left-associative: the right operand needs parentheses at equal precedence;
        # comparisons do not chain, so both sides need them at equal precedence.
        left = format_expr(e.lhs, p + (1 if p == 1 else 0))
        right = format_expr(e.rhs, p + 1)
        text = f"{left} {e.op} {right}"
        return f"({text})" if p < parent_prec else text
    raise TypeError(f"not an expression: {e!r}")


def format_type(t: ir.TensorDecl) -> str:
    s = t.dtype
    if t.shape:
        s += "[" + ", ".join(format_expr(d) for d in t.shape) + "]"
    if t.layout is not None:
        s += f" layout {t.layout}"
    return s


def format_region(r: ir.Region) -> str:
    dims = []
    for d in r.dims:
        if isinstance(d, ir.Slice):
            dims.append(f"{format_expr(d.lo)}:{format_expr(d.hi)}")
        else:
            dims.append(format_expr(d))
    return f"{r.tensor}[{', '.join(dims)}]"


def format_size_range(s: ir.SizeDecl) -> str:
    """` in LO..HI multiple of M` (each part only when declared)."""
    out = f" in {s.lo}..{s.hi}" if s.ranged else ""
    return out + (f" multiple of {s.multiple}" if s.multiple is not None else "")


def format_annotation(a: ir.Annotation) -> str:
    keywords = ir.ANNOTATIONS.get(a.name, ())
    if len(a.args) == 1 and keywords and a.args[0][0] == keywords[0] and a.name != "pipeline":
        return f"@{a.name}({a.args[0][1]})"
    return f"@{a.name}(" + ", ".join(f"{k}={v}" for k, v in a.args) + ")"


def _stmt_lines(s: ir.Stmt, indent: int) -> list[str]:
    pad = "  " * indent
    if isinstance(s, ir.Assign):
        return [f"{pad}{format_expr(s.target)} {s.op} {format_expr(s.value)}"]
    if isinstance(s, ir.Copy):
        return [f"{pad}copy {format_region(s.dst)} <- {format_region(s.src)}"]
    if isinstance(s, ir.For):
        lines = [f"{pad}{format_annotation(a)}" for a in s.annotations]
        label = f"{s.label}: " if s.label else ""
        lines.append(f"{pad}{label}for {s.var} in {format_expr(s.lo)}..{format_expr(s.hi)} {{")
        for b in s.body:
            lines.extend(_stmt_lines(b, indent + 1))
        lines.append(f"{pad}}}")
        return lines
    raise TypeError(f"not a statement: {s!r}")


def format_stmt(s: ir.Stmt, indent: int = 0) -> str:
    return "\n".join(_stmt_lines(s, indent))


def _const_value(c: ir.ConstDecl) -> str:
    if isinstance(c.value, float):
        return format_float(c.value)
    return str(c.value)


def print_kernel(k: ir.Kernel) -> str:
    """The canonical text of a kernel, ending with a newline."""
    params_in = ", ".join(f"{t.name}: {format_type(t)}" for t in k.inputs)
    params_out = ", ".join(f"{t.name}: {format_type(t)}" for t in k.outputs)
    lines = [f"kernel {k.name}({params_in}) -> ({params_out}) {{"]
    groups: list[list[str]] = []
    if k.sizes:
        groups.append([f"  size {s.name} = {format_expr(s.expr) if s.expr is not None else s.value}" + format_size_range(s)
                       for s in k.sizes])
    if k.consts:
        groups.append([f"  const {c.name}: {c.dtype} = {_const_value(c)}" for c in k.consts])
    if k.buffers:
        groups.append([
            f"  {'local' if b.kind == 'local' else 'temp'} {b.name}: {format_type(b)}"
            + (f" @{b.scope}" if b.kind == "local" else "")
            for b in k.buffers
        ])
    for s in k.body:
        groups.append(_stmt_lines(s, 1))
    for i, g in enumerate(groups):
        if i:
            lines.append("")
        lines.extend(g)
    lines.append("}")
    return "\n".join(lines) + "\n"
