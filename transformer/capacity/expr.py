"""Tiny integer expressions shared by the Z3 encoding and the fast evaluator.

Why: the same constraint must mean the same thing to Z3 (proofs, unsat cores, timeouts) and
to the enumerating tile search (thousands of candidate assignments, where a Z3 call each
would be too slow).  Expressions are immutable tuples so a constraint system hashes stably.

  ("c", n)                  constant
  ("v", name)               symbolic tile variable (positive integer)
  ("*", e1, e2, ...)        product
  ("+", e1, e2, ...)        sum
  ("up", e, a)              roundup(e, a) = a * ceil(e / a)
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

Expr = tuple  # ("c", n) | ("v", name) | ("*", ...) | ("+", ...) | ("up", e, a)


def const(n: int) -> Expr:
    return ("c", int(n))


def var(name: str) -> Expr:
    return ("v", name)


def prod(*terms: Expr) -> Expr:
    """Product with constants folded (a constant-only product becomes a constant)."""
    k, rest = 1, []
    for t in terms:
        if t[0] == "c":
            k *= t[1]
        elif t[0] == "*":
            for u in t[1:]:
                if u[0] == "c":
                    k *= u[1]
                else:
                    rest.append(u)
        else:
            rest.append(t)
    if not rest or k == 0:
        return const(k)
    items = ([const(k)] if k != 1 else []) + rest
    return items[0] if len(items) == 1 else ("*", *items)


def add(*terms: Expr) -> Expr:
    """Sum with constants folded."""
    k, rest = 0, []
    for t in terms:
        if t[0] == "c":
            k += t[1]
        elif t[0] == "+":
            for u in t[1:]:
                if u[0] == "c":
                    k += u[1]
                else:
                    rest.append(u)
        else:
            rest.append(t)
    if not rest:
        return const(k)
    items = rest + ([const(k)] if k else [])
    return items[0] if len(items) == 1 else ("+", *items)


def roundup(e: Expr, a: int) -> Expr:
    """a * ceil(e / a) (InitBuffer rounding); folded when `e` is constant."""
    if a <= 1:
        return e
    if e[0] == "c":
        return const(-(-e[1] // a) * a)
    return ("up", e, a)


def symbols(e: Expr) -> set[str]:
    if e[0] == "v":
        return {e[1]}
    if e[0] == "c":
        return set()
    if e[0] == "up":
        return symbols(e[1])
    out: set[str] = set()
    for t in e[1:]:
        out |= symbols(t)
    return out


def substitute(e: Expr, env: Mapping[str, int]) -> Expr:
    """Replace bound variables by constants and fold."""
    tag = e[0]
    if tag == "c":
        return e
    if tag == "v":
        return const(env[e[1]]) if e[1] in env else e
    if tag == "up":
        return roundup(substitute(e[1], env), e[2])
    parts = [substitute(t, env) for t in e[1:]]
    return prod(*parts) if tag == "*" else add(*parts)


def evaluate(e: Expr, env: Mapping[str, int]) -> int:
    tag = e[0]
    if tag == "c":
        return e[1]
    if tag == "v":
        return env[e[1]]
    if tag == "up":
        a = e[2]
        return -(-evaluate(e[1], env) // a) * a
    if tag == "*":
        r = 1
        for t in e[1:]:
            r *= evaluate(t, env)
        return r
    return sum(evaluate(t, env) for t in e[1:])


def to_python(e: Expr, names: Mapping[str, str]) -> str:
    """Python source for `e`, variables renamed through `names` (for compiled evaluation)."""
    tag = e[0]
    if tag == "c":
        return str(e[1])
    if tag == "v":
        return names[e[1]]
    if tag == "up":
        return f"(-(-({to_python(e[1], names)})//{e[2]})*{e[2]})"
    op = "*" if tag == "*" else "+"
    return "(" + op.join(to_python(t, names) for t in e[1:]) + ")"


def to_z3(e: Expr, zvars: Mapping[str, Any]) -> Any:
    """Z3 integer term for `e` (roundup through integer division by the constant)."""
    import z3  # only where a solver runs: z3 costs every command ~50 ms of start-up

    tag = e[0]
    if tag == "c":
        return z3.IntVal(e[1])
    if tag == "v":
        return zvars[e[1]]
    if tag == "up":
        a = e[2]
        return ((to_z3(e[1], zvars) + (a - 1)) / a) * a
    parts = [to_z3(t, zvars) for t in e[1:]]
    out = parts[0]
    for p in parts[1:]:
        out = out * p if tag == "*" else out + p
    return out


def text(e: Expr) -> str:
    """Readable form (for explanations of symbolic constraints)."""
    tag = e[0]
    if tag == "c":
        return str(e[1])
    if tag == "v":
        return e[1]
    if tag == "up":
        return f"roundup({text(e[1])}, {e[2]})"
    return ("*" if tag == "*" else " + ").join(text(t) for t in e[1:])


Compiled = Callable[..., bool]
