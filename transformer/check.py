"""IR invariants, one function per invariant (in the manner of loopy's `check.py`).

Each `check_*` function takes a `Kernel` and yields `SemanticError`s located at the
offending node. `check_kernel` runs them all in a fixed order; the parser calls it on
every input, the pass manager after every pass, and `verify_kernel` raises the first.

The formal condition each function enforces is in its docstring.

Size: why one module of ~600 lines: it is the list of invariants, each a short independent
function, kept together so that `check_kernel` and the reader see all of them in one place
(loopy's `check.py` does the same); none of them is reused elsewhere.
"""

from __future__ import annotations

import difflib
import math
from typing import Callable, Iterator

from . import ir
from .affine import QUASI_OPS, eval_int, non_affine_part, to_affine
from .diagnostics import SemanticError, did_you_mean
from .dtypes import BOOL, WEAK_FLOAT, WEAK_INT, Ty, float_of, promote
from .intrinsics import BY_NAME as INTRINSIC, names_hint
from .printer import format_expr

CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast
    else enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq""".split()
)
# The IR's own keywords (docs/ir.md): the contextual lexer would accept some of them as names
# in declarations (`temp copy: ...`, `for in in ...`), but such a name cannot be used
# everywhere (`copy[i] = ...` is a copy statement), so they are rejected up front.
IR_KEYWORDS = frozenset({"kernel", "size", "const", "temp", "local", "for", "in", "copy", "layout"})
# Names that would collide with what the emitted Ascend C or the IR itself uses.
RESERVED = frozenset({"half", "bfloat16_t", "select", "inf", *ir.DTYPES, "AscendC", "GM_ADDR"})

Check = Callable[[ir.Kernel], Iterator[SemanticError]]

# Identifiers are at most this long: emitted code derives C++ names and data file names
# (`<input>.bin`, at most 255 bytes on common file systems) from them.
MAX_NAME_LENGTH = 128


def cpp_reserved_form(name: str) -> str | None:
    """Why `name` cannot be a C++ identifier of user code (None if it can): C++ reserves
    names containing `__` or starting with `_` and a capital letter ([lex.name]); and ascx
    bounds the length. Other clashes with C++ names are renamed by the code generator."""
    if "__" in name:
        return "starts with `__`, reserved in C++" if name.startswith("__") else "contains `__`, reserved in C++"
    if len(name) > 1 and name[0] == "_" and name[1].isupper():
        return "starts with `_` and a capital letter, reserved in C++"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long, more than {MAX_NAME_LENGTH}"
    return None


def _unreserved(name: str) -> str:
    import re

    short = re.sub(r"_+", "_", name).lstrip("_")[:MAX_NAME_LENGTH] or "x"
    return short if not short[0].isdigit() else "x" + short[:MAX_NAME_LENGTH - 1]

# Sizes, integer literals and annotation arguments are at most 2^31 - 1: emitted Ascend C
# indexes and counts with int32_t (docs/ir.md). A tensor may hold more elements: the offsets
# into a GM tensor of 2^31 elements or more are computed in int64_t where they need it
# (`lower/cexpr.wide_stride`), up to 2^63 - 1 elements.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# `@cores(n)` becomes the kernel's blockDim, which the Ascend C launch (`<<<blockDim, ...>>>`,
# ICPU_RUN_KF) takes in [1, 65535] (Ascend C API reference, kernel launch).
MAX_CORES = 65535
_INT_RANGE = {"i8": (-128, 127), "i32": (-(2**31), INT32_MAX)}


# --------------------------------------------------------------------------------------
# helpers


def _loop_scopes(stmts: tuple[ir.Stmt, ...], outer: tuple[str, ...] = ()) -> Iterator[tuple[ir.Stmt, tuple[str, ...]]]:
    """Every statement with the loop variables in scope at it (outermost first). A loop's
    own variable is in scope for its body, not for its bounds."""
    for s in stmts:
        yield s, outer
        if isinstance(s, ir.For):
            yield from _loop_scopes(s.body, outer + (s.var,))


def _sizes(k: ir.Kernel) -> frozenset[str]:
    return frozenset(s.name for s in k.sizes)


def _global_names(k: ir.Kernel) -> dict[str, str]:
    """name -> kind, for sizes, consts and tensors."""
    out: dict[str, str] = {}
    for s in k.sizes:
        out.setdefault(s.name, "size")
    for c in k.consts:
        out.setdefault(c.name, "const")
    for t in k.tensors():
        out.setdefault(t.name, t.kind)
    return out


def _loc(node: object) -> ir.Loc | None:
    return getattr(node, "loc", None)


def _first_loc(e: ir.Expr) -> ir.Loc | None:
    for s in ir.sub_exprs(e):
        if getattr(s, "loc", None) is not None:
            return s.loc
    return None


# --------------------------------------------------------------------------------------
# invariants


def check_identifiers(k: ir.Kernel) -> Iterator[SemanticError]:
    """Every declared name (kernel, tensor, size, const, loop variable, label) is a C
    identifier, not a C++ keyword, and not a name the emitted code reserves."""

    def bad(name: str, what: str, loc: ir.Loc | None) -> Iterator[SemanticError]:
        if name in CPP_KEYWORDS:
            yield SemanticError(f"{what} `{name}` is a C++ keyword", loc,
                                hint=f"rename it, e.g. `{name}_`")
        elif name in IR_KEYWORDS:
            yield SemanticError(f"{what} `{name}` is a keyword of the IR", loc, hint=f"rename it, e.g. `{name}_`")
        elif name in RESERVED:
            yield SemanticError(f"{what} `{name}` is reserved", loc, hint=f"rename it, e.g. `{name}_`")
        elif cpp_reserved_form(name) and (what != "loop label" or len(name) > MAX_NAME_LENGTH):
            # (a label reaches C++ only CamelCased into fresh method names: `_G` is fine)
            yield SemanticError(f"{what} `{name}` {cpp_reserved_form(name)}", loc,
                                hint=f"rename it, e.g. `{_unreserved(name)}`")

    yield from bad(k.name, "kernel name", k.loc)
    for s in k.sizes:
        yield from bad(s.name, "size", s.loc)
    for c in k.consts:
        yield from bad(c.name, "const", c.loc)
    for t in k.tensors():
        yield from bad(t.name, "tensor", t.loc)
    for loop in ir.iter_loops(k.body):
        yield from bad(loop.var, "loop variable", loop.var_loc or loop.loc)
        if loop.label is not None:
            yield from bad(loop.label, "loop label", loop.loc)


def check_unique_names(k: ir.Kernel) -> Iterator[SemanticError]:
    """Sizes, consts and tensors share one namespace, with no duplicates; loop labels are
    unique; a loop variable shadows neither a global name nor an enclosing loop's."""
    seen: dict[str, ir.Loc | None] = {}
    decls: list[tuple[str, ir.Loc | None]] = [(s.name, s.loc) for s in k.sizes]
    decls += [(c.name, c.loc) for c in k.consts]
    decls += [(t.name, t.loc) for t in k.tensors()]
    for name, loc in decls:
        if name in seen:
            yield SemanticError(f"`{name}` is declared twice", loc, notes=[(seen[name], "first declared here")])
        else:
            seen[name] = loc
    labels: dict[str, ir.Loc | None] = {}
    for stmt, outer in _loop_scopes(k.body):
        if not isinstance(stmt, ir.For):
            continue
        if stmt.label is not None:
            if stmt.label in labels:
                yield SemanticError(f"loop label `{stmt.label}` is used twice", stmt.loc,
                                    notes=[(labels[stmt.label], "first used here")])
            else:
                labels[stmt.label] = stmt.loc
            if stmt.label in seen:
                yield SemanticError(f"loop label `{stmt.label}` is also the name of a declaration", stmt.loc)
        if stmt.var in seen:
            yield SemanticError(f"loop variable `{stmt.var}` shadows the declaration of `{stmt.var}`", stmt.var_loc or stmt.loc,
                                hint="choose another variable name")
        if stmt.var in outer:
            yield SemanticError(f"loop variable `{stmt.var}` shadows an enclosing loop's variable", stmt.var_loc or stmt.loc,
                                hint="choose another variable name")


def check_declarations(k: ir.Kernel) -> Iterator[SemanticError]:
    """dtypes are known; sizes are positive and at most 2^31 - 1; locals have a known scope
    and temps/params none; layouts are known and fit the rank; const values are finite or
    +-inf, and an integer const fits its dtype."""
    for t in k.tensors():
        if t.dtype not in ir.DTYPES:
            yield SemanticError(f"unknown dtype `{t.dtype}` for `{t.name}`", t.loc,
                                hint=did_you_mean(t.dtype, ir.DTYPES))
        if t.kind == "local":
            if t.scope not in ir.SCOPES:
                yield SemanticError(f"unknown scope `@{t.scope}` for local `{t.name}`", t.loc,
                                    hint=did_you_mean(str(t.scope), ir.SCOPES))
        elif t.scope is not None:
            yield SemanticError(f"`{t.name}` is a {t.kind} and cannot have a scope", t.loc)
        if t.layout is not None:
            if t.layout not in ir.LAYOUTS:
                yield SemanticError(f"unknown layout `{t.layout}` for `{t.name}`", t.loc,
                                    hint=did_you_mean(t.layout, ir.LAYOUTS))
            want = {"NCHW": 4, "NHWC": 4, "NC1HWC0": 5}.get(t.layout)
            if want is not None and t.rank != want:
                yield SemanticError(f"layout {t.layout} needs rank {want}, `{t.name}` has rank {t.rank}", t.loc)
    earlier: list[ir.SizeDecl] = []
    for s in k.sizes:
        if s.expr is not None:  # derived: checked as a shape is, over the sizes before it
            bad = list(_check_derived_size(s, k, earlier))
            earlier.append(s)
            if bad:
                yield from bad
                continue
        else:
            earlier.append(s)
        if s.value <= 0:
            derived = s.expr is not None and any(isinstance(q, ir.Name) for q in ir.sub_exprs(s.expr))
            yield SemanticError(f"size `{s.name}` must be positive, got {s.value}",
                                s.loc if derived or s.expr is None else (_start_loc(s.expr) or s.loc),
                                hint=f"`{s.name}` = {format_expr(s.expr)} is {s.value} at these sizes" if derived
                                else "a size is a positive integer")
        elif s.value > INT32_MAX:
            yield SemanticError(f"size `{s.name}` is {s.value}, more than {INT32_MAX} (2^31 - 1)", s.loc,
                                hint="emitted Ascend C indexes with int32_t")
        else:
            yield from check_size_range(s)
    for c in k.consts:
        if c.dtype not in ir.DTYPES:
            yield SemanticError(f"unknown dtype `{c.dtype}` for const `{c.name}`", c.loc,
                                hint=did_you_mean(c.dtype, ir.DTYPES))
        if isinstance(c.value, float) and math.isnan(c.value):
            yield SemanticError(f"const `{c.name}` is NaN", c.loc)
        elif c.dtype in _INT_RANGE and isinstance(c.value, int):
            lo, hi = _INT_RANGE[c.dtype]
            if not lo <= c.value <= hi:
                yield SemanticError(f"const `{c.name}` = {c.value} does not fit {c.dtype} ({lo}..{hi})", c.loc)


def _check_derived_size(s: ir.SizeDecl, k: ir.Kernel, earlier: list[ir.SizeDecl]) -> Iterator[SemanticError]:
    """`size Dh = D / 2`: an affine or quasi-affine expression of the sizes declared before
    it (not of a ranged one: the range checks take each size on its own) and literals; no
    range of its own (its values follow the others')."""
    assert s.expr is not None
    flt = next((q for q in ir.sub_exprs(s.expr) if isinstance(q, ir.FloatLit)), None)
    if flt is not None:
        yield SemanticError(f"size `{s.name}` is not an integer", flt.loc or s.loc,
                            hint="a size is a positive integer (`size N = 1024`), or an integer expression of "
                                 "the sizes before it (`size H = N / 2`)")
        return
    names = {x.name: x for x in earlier}
    for q in ir.sub_exprs(s.expr):
        if isinstance(q, ir.Name):
            if q.name not in names:
                later = any(x.name == q.name for x in k.sizes)
                yield SemanticError(f"size `{s.name}` uses `{q.name}`, which is not a size declared before it",
                                    q.loc or s.loc, hint="declare it first" if later else
                                    did_you_mean(q.name, list(names)) or "a derived size is an expression of sizes and integers")
                return
            if names[q.name].ranged:
                yield SemanticError(f"size `{s.name}` is derived from the ranged size `{q.name}`", q.loc or s.loc,
                                    hint="a derived size of a ranged one is not supported yet; give it its own value")
                return
    bad = non_affine_part(s.expr, frozenset(), frozenset(names))
    if bad is not None:
        yield SemanticError(f"size `{s.name}` must be affine in sizes and integers", _first_loc(bad) or s.loc,
                            hint=_non_affine_hint(bad, None))
        return
    for q in ir.sub_exprs(s.expr):
        if isinstance(q, ir.Binary) and q.op in QUASI_OPS:
            errs: list[SemanticError] = []
            _check_divisor(q, k, frozenset(), errs)
            yield from errs
            if errs:
                return
    if s.ranged or s.multiple is not None:
        yield SemanticError(f"size `{s.name}` is derived (`{format_expr(s.expr)}`) and cannot have a range of its own",
                            s.range_loc or s.loc, hint="its values follow the sizes it is computed from")


def check_size_range(s: ir.SizeDecl) -> Iterator[SemanticError]:
    """`size S = V in LO..HI multiple of M`: 1 <= LO <= HI <= 2^31 - 1, M >= 1, and V inside
    the range and a multiple of M (the default is one of the values the kernel serves)."""
    at = s.range_loc or s.loc
    if s.multiple is not None and s.multiple < 1:
        yield SemanticError(f"size `{s.name}`: `multiple of {s.multiple}` must be at least 1", at)
        return
    step = s.multiple or 1
    if s.lo is not None and s.hi is not None:
        if s.lo < 1:
            yield SemanticError(f"size `{s.name}`: the range {s.lo}..{s.hi} starts below 1", at,
                                hint="a size is a positive integer")
            return
        if s.hi > INT32_MAX:
            yield SemanticError(f"size `{s.name}`: the range {s.lo}..{s.hi} ends above {INT32_MAX} (2^31 - 1)", at,
                                hint="emitted Ascend C indexes with int32_t")
            return
        if s.lo > s.hi:
            yield SemanticError(f"size `{s.name}`: the range {s.lo}..{s.hi} is empty", at,
                                hint=f"write the smaller end first: `in {s.hi}..{s.lo}`")
            return
        if not s.lo <= s.value <= s.hi:
            yield SemanticError(f"size `{s.name}` = {s.value} is outside its range {s.lo}..{s.hi}", s.loc,
                                hint=f"`{s.name}` takes {s.lo}..{s.hi}" + (f", multiples of {step}" if step > 1 else ""))
            return
    if s.value % step:
        yield SemanticError(f"size `{s.name}` = {s.value} is not a multiple of {step}", s.loc,
                            hint=f"the nearest multiples are {s.value // step * step or step} and "
                                 f"{(s.value // step + 1) * step}")


def check_outputs(k: ir.Kernel) -> Iterator[SemanticError]:
    """A kernel has at least one output: without one it can do nothing observable."""
    if not k.outputs:
        yield SemanticError(f"kernel `{k.name}` has no outputs: it can do nothing observable", k.loc,
                            hint="declare what it computes after `->`, e.g. `-> (Y: f32[N])`")


def check_shapes(k: ir.Kernel) -> Iterator[SemanticError]:
    """Every tensor dimension is an affine expression of sizes and integer literals that
    evaluates to a positive extent; a tensor has at most 2^31 - 1 elements."""
    sizes = _sizes(k)
    env = k.size_values()
    for t in k.tensors():
        extents: list[int] = []
        for d in t.shape:
            bad = non_affine_part(d, frozenset(), sizes)
            if bad is not None:
                name = bad.name if isinstance(bad, ir.Name) else None
                msg = (f"unknown size `{name}` in the shape of `{t.name}`" if name
                       else f"shape of `{t.name}` must be affine in sizes and integers")
                yield SemanticError(msg, _first_loc(bad) or t.loc,
                                    hint=did_you_mean(name, sizes) if name else _non_affine_hint(bad, None))
                continue
            errs: list[SemanticError] = []
            for q in ir.sub_exprs(d):
                if isinstance(q, ir.Binary) and q.op in QUASI_OPS:
                    _check_divisor(q, k, frozenset(), errs)
            if errs:
                yield from errs
                continue
            v = eval_int(d, env)
            if v <= 0:
                yield SemanticError(f"dimension of `{t.name}` is {v}, it must be positive", _first_loc(d) or t.loc)
            extents.append(v)
        if len(extents) == len(t.shape) and math.prod(extents) > INT64_MAX:
            yield SemanticError(f"`{t.name}` has {math.prod(extents)} elements, more than {INT64_MAX} (2^63 - 1)",
                                t.loc, hint="emitted Ascend C offsets GM tensors with int64_t; use smaller sizes")


def _expr_type(e: ir.Expr, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError]) -> Ty:
    """Type of a value expression, appending errors for unknown names, wrong ranks, bad
    calls and misuse of bool. Returns a best-effort type so checking continues."""
    sizes = _sizes(k)
    if isinstance(e, ir.IntLit):
        return WEAK_INT
    if isinstance(e, ir.FloatLit):
        return WEAK_FLOAT
    if isinstance(e, ir.Name):
        if e.name in loop_vars or e.name in sizes:
            return WEAK_INT
        c = k.const_decl(e.name)
        if c is not None:
            return Ty(c.dtype)
        t = k.tensor(e.name)
        if t is not None:
            if t.rank != 0:
                errors.append(SemanticError(
                    f"`{e.name}` has rank {t.rank} and needs {t.rank} "
                    f"ind{'ex' if t.rank == 1 else 'ices'}", e.loc,
                    hint=f"write `{e.name}[" + ", ".join("_" for _ in range(t.rank)) + "]`"))
            return Ty(t.dtype)
        cands = list(loop_vars) + list(sizes) + [c.name for c in k.consts] + [t.name for t in k.tensors()]
        errors.append(SemanticError(f"unknown name `{e.name}`", e.loc, hint=did_you_mean(e.name, cands)))
        return WEAK_FLOAT
    if isinstance(e, ir.Access):
        _check_access(e, k, loop_vars, errors)
        t = k.tensor(e.tensor)
        return Ty(t.dtype) if t is not None else WEAK_FLOAT
    if isinstance(e, ir.Unary):
        t = _expr_type(e.operand, k, loop_vars, errors)
        if t == BOOL:
            errors.append(SemanticError("cannot negate a comparison", e.loc))
        return t
    if isinstance(e, ir.Binary):
        a = _expr_type(e.lhs, k, loop_vars, errors)
        b = _expr_type(e.rhs, k, loop_vars, errors)
        if BOOL in (a, b):
            errors.append(SemanticError(
                f"a comparison cannot be an operand of `{e.op}`", e.loc,
                hint="comparisons are only allowed as the condition of `select(cond, a, b)`"))
            return WEAK_FLOAT
        _check_literals((e.lhs, e.rhs), promote(a, b), errors)
        if e.op in ir.COMPARE_OPS:
            return BOOL
        if e.op == "%":
            if a != WEAK_INT or b != WEAK_INT:
                errors.append(SemanticError(
                    "`%` takes loop variables, sizes and integer literals (index arithmetic)", e.loc,
                    hint=f"here it has {a.dtype if a != WEAK_INT else 'an index'} and "
                         f"{b.dtype if b != WEAK_INT else 'an index'} operands; for data, `x - c * floor(x / c)`"))
            else:
                _check_divisor(e, k, loop_vars, errors)
        return promote(a, b)
    if isinstance(e, ir.Call):
        return _call_type(e, k, loop_vars, errors)
    raise AssertionError(type(e))


def expr_type(e: ir.Expr, k: ir.Kernel, loop_vars: tuple[str, ...]) -> Ty:
    """The type of a value expression of a checked kernel (`loop_vars`: the loop variables
    in scope), by the rules the checker enforces."""
    return _expr_type(e, k, loop_vars, [])


def _literal_value(e: ir.Expr) -> int | None:
    if isinstance(e, ir.IntLit):
        return e.value
    if isinstance(e, ir.Unary) and isinstance(e.operand, ir.IntLit):
        return -e.operand.value
    return None


def _check_literals(operands: tuple[ir.Expr, ...], comp: Ty, errors: list[SemanticError]) -> None:
    """An integer literal operand takes the (integer) type its operation computes in; it
    must fit that type, else the literal would silently saturate (`x_i8 * 1000`)."""
    if comp.weak or comp.dtype not in _INT_RANGE:
        return
    lo, hi = _INT_RANGE[comp.dtype]
    for e in operands:
        v = _literal_value(e)
        if v is not None and not lo <= v <= hi:
            errors.append(SemanticError(
                f"integer literal {v} does not fit {comp.dtype} ({lo}..{hi}), the type this operation computes in",
                _first_loc(e) or e.loc,
                hint=f"a literal takes the type of the other operand; convert that operand first, e.g. "
                     f"`i32(x) * {v}`" if comp.dtype != "i32" else "a literal takes the type of the other operand"))


def _call_type(e: ir.Call, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError]) -> Ty:
    args = [_expr_type(a, k, loop_vars, errors) for a in e.args]

    def arity(n: int) -> bool:
        if len(args) != n:
            errors.append(SemanticError(f"`{e.func}` takes {n} argument{'s' if n != 1 else ''}, got {len(args)}", e.loc))
            return False
        return True

    if e.func == "select":
        if not arity(3):
            return WEAK_FLOAT
        if args[0] != BOOL:
            errors.append(SemanticError("the condition of `select` must be a comparison", _first_loc(e.args[0]) or e.loc,
                                        hint="e.g. `select(j <= i, x, -inf)`"))
        if BOOL in args[1:]:
            errors.append(SemanticError("`select` branches cannot be comparisons", e.loc))
            return WEAK_FLOAT
        _check_literals(e.args[1:], promote(args[1], args[2]), errors)
        return promote(args[1], args[2])
    if BOOL in args:
        errors.append(SemanticError(f"a comparison cannot be an argument of `{e.func}`", e.loc,
                                    hint="comparisons are only allowed as the condition of `select(cond, a, b)`"))
        return WEAK_FLOAT
    if e.func in ir.DTYPES:
        arity(1)
        return Ty(e.func)
    if e.func in ir.INTRINSICS:
        if not arity(ir.INTRINSICS[e.func]):
            return WEAK_FLOAT
        rule = INTRINSIC[e.func].result
        if rule == "same":
            return args[0]
        comp = promote(args[0], args[1]) if len(args) == 2 else args[0]
        if rule == "promote":
            _check_literals(e.args, comp, errors)
            return comp
        return float_of(comp)
    callables = list(ir.INTRINSICS) + list(ir.DTYPES) + ["select"]
    close = difflib.get_close_matches(e.func, callables, n=1, cutoff=0.6)
    near = f"did you mean `{close[0]}`?" if close else ""
    errors.append(SemanticError(f"unknown function `{e.func}`", e.loc,
                                hint=(near + "; " if near else "") + names_hint()
                                + "; casts: " + ", ".join(ir.DTYPES) + "; and select(cond, a, b)"))
    return WEAK_FLOAT


def _check_access(e: ir.Access, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError]) -> None:
    t = k.tensor(e.tensor)
    if t is None:
        what = {"size": "a size", "const": "a const"}.get(_global_names(k).get(e.tensor, ""))
        if e.tensor in loop_vars:
            what = "a loop variable"
        if what:
            errors.append(SemanticError(f"`{e.tensor}` is {what}, not a tensor, and cannot be indexed", e.loc))
        else:
            errors.append(SemanticError(f"unknown tensor `{e.tensor}`", e.loc,
                                        hint=did_you_mean(e.tensor, [x.name for x in k.tensors()])))
        return
    if len(e.indices) != t.rank:
        errors.append(SemanticError(
            f"`{e.tensor}` has rank {t.rank} but is indexed with {len(e.indices)} "
            f"ind{'ex' if len(e.indices) == 1 else 'ices'}", e.loc,
            hint=f"declared as {t.dtype}[" + ", ".join(_short(d) for d in t.shape) + "]"))
    for d, idx in enumerate(e.indices):
        if isinstance(idx, ir.Access):
            _check_index_read(idx, e, d, k, loop_vars, errors)
        else:
            _check_index(idx, k, loop_vars, errors)


def _check_index_read(r: ir.Access, outer: ir.Access, d: int, k: ir.Kernel, loop_vars: tuple[str, ...],
                      errors: list[SemanticError]) -> None:
    """A data-dependent index (`T[ids[t], h]`, `gathers.py`): the read of an integer tensor
    whose own indices are affine (index reads nest once)."""
    t = k.tensor(r.tensor)
    if t is None:
        _check_access(r, k, loop_vars, errors)  # reports the unknown name
        return
    if t.dtype not in ir.INT_DTYPES:
        errors.append(SemanticError(
            f"index {d} of `{outer.tensor}` reads {t.dtype} tensor `{t.name}`: an index tensor must be an integer tensor",
            r.loc, hint=f"declare `{t.name}` as i32 (or i8), or convert its values first into an i32 temp"))
        return
    if len(r.indices) != t.rank:
        _check_access(r, k, loop_vars, errors)  # reports the rank
        return
    for idx in r.indices:
        if isinstance(idx, ir.Access):
            errors.append(SemanticError(
                "an index tensor's own index reads a tensor: data-dependent indices nest once", idx.loc,
                hint=f"read `{format_expr(idx)}` into an i32 temp first and index `{r.tensor}` with loop variables"))
            return
        _check_index(idx, k, loop_vars, errors, what="index of an index tensor")


def _check_index(idx: ir.Expr, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError],
                 *, allow_minmax: bool = False, what: str = "index") -> None:
    sizes = _sizes(k)
    for s in ir.sub_exprs(idx):
        if isinstance(s, ir.Name) and s.name not in loop_vars and s.name not in sizes:
            if k.const_decl(s.name) is not None or k.tensor(s.name) is not None:
                errors.append(SemanticError(f"{what} uses `{s.name}`, which is not a loop variable or size", s.loc,
                                            hint=f"{_article(what)} {what} is affine in loop variables, sizes and integers"))
            else:
                errors.append(SemanticError(f"unknown name `{s.name}`", s.loc,
                                            hint=did_you_mean(s.name, list(loop_vars) + list(sizes))))
            return
    bad = non_affine_part(idx, frozenset(loop_vars), sizes, allow_minmax=allow_minmax)
    if bad is not None and isinstance(bad, ir.Binary) and bad.op in QUASI_OPS:
        _check_divisor(bad, k, frozenset(loop_vars), errors)  # the divisor mentions a loop variable
        return
    if bad is None:
        for q in ir.sub_exprs(idx):
            if isinstance(q, ir.Binary) and q.op in QUASI_OPS:
                _check_divisor(q, k, frozenset(loop_vars), errors)
    if bad is not None:
        errors.append(SemanticError(f"{what} is not affine", _first_loc(bad) or _first_loc(idx),
                                    hint=_non_affine_hint(bad, f"{_article(what)} {what} is affine in loop variables, "
                                                               "sizes and integer literals"
                                                               + (" (plus `min`/`max`)" if allow_minmax else ""))))


def _check_divisor(e: ir.Binary, k: ir.Kernel, loop_vars: tuple[str, ...] | frozenset[str],
                   errors: list[SemanticError]) -> None:
    """The divisor of a quasi-affine `/` or `%` is a positive constant: an integer literal,
    a size or an expression of them (floor division and modulo by it are then exact for
    dependence analysis: MLIR's affine `floordiv` / `mod`)."""
    if any(isinstance(x, ir.Name) and x.name in loop_vars for x in ir.sub_exprs(e.rhs)):
        errors.append(SemanticError(f"the divisor of `{e.op}` depends on a loop variable", _start_loc(e.rhs) or e.loc,
                                    hint="divide by an integer literal or a size (`i / 2`, `c % CG`)"))
        return
    try:
        v = eval_int(e.rhs, k.size_values())
    except (KeyError, ValueError):
        return  # an unknown name: reported where it is
    if v <= 0:
        errors.append(SemanticError(f"the divisor of `{e.op}` is {v}; it must be positive", _start_loc(e.rhs) or e.loc,
                                    hint="floor division and modulo are by a positive literal or size"))


def _start_loc(e: ir.Expr) -> ir.Loc | None:
    """The leftmost source location in `e` (where its text starts, bar an opening parenthesis)."""
    locs = [x.loc for x in ir.sub_exprs(e) if x.loc is not None]
    return min(locs, key=lambda l: (l.line, l.col)) if locs else None


def _non_affine_hint(bad: ir.Expr, default: str | None) -> str | None:
    """The hint for a non-affine shape, bound or index: for a division, how to write it
    without one (its own size, or a loop split in two)."""
    if isinstance(bad, ir.Binary) and bad.op in QUASI_OPS:
        return (f"`{bad.op}` divides by a positive constant: an integer literal or a size (`D / 2`, `i % 2`, "
                "`c / CG`), not by a loop variable or a tensor element")
    if isinstance(bad, ir.Access):
        return ("a tensor read may be a whole index of a tensor access (`T[ids[t], h]`: an integer tensor "
                "with affine indices), not part of index arithmetic, a loop bound, a shape or a copy region")
    return default


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _short(e: ir.Expr) -> str:
    from .printer import format_expr

    return format_expr(e)


def check_statements(k: ir.Kernel) -> Iterator[SemanticError]:
    """Every statement is well formed: names resolve; accesses have one affine index per
    dimension; loop bounds are affine (min/max allowed); value expressions type-check
    (comparisons only as `select` conditions); targets are writable tensors; copies name
    tensors with one region dimension per tensor dimension."""
    errors: list[SemanticError] = []
    for stmt, loop_vars in _loop_scopes(k.body):
        if isinstance(stmt, ir.For):
            _check_index(stmt.lo, k, loop_vars, errors, allow_minmax=True, what="loop bound")
            _check_index(stmt.hi, k, loop_vars, errors, allow_minmax=True, what="loop bound")
            for a in stmt.annotations:
                for key, v in a.args:
                    if v < 1:
                        errors.append(SemanticError(f"`@{a.name}({key}={v})` must be at least 1", a.loc))
                    elif v > INT32_MAX:
                        errors.append(SemanticError(f"`@{a.name}({key}={v})` must be at most {INT32_MAX}", a.loc))
                    elif a.name == "cores" and v > MAX_CORES:
                        errors.append(SemanticError(f"`@cores({v})` asks for more than {MAX_CORES} cores", a.loc,
                                                    hint=f"a kernel launches at most {MAX_CORES} blocks (blockDim)"))
        elif isinstance(stmt, ir.Assign):
            _check_target(stmt, k, loop_vars, errors)
            vt = _expr_type(stmt.value, k, loop_vars, errors)
            if vt == BOOL:
                errors.append(SemanticError("cannot store a comparison", _first_loc(stmt.value) or stmt.loc,
                                            hint="use `select(cond, 1.0, 0.0)`"))
            else:
                tgt = stmt.target
                t = k.tensor(tgt.tensor if isinstance(tgt, ir.Access) else tgt.name)
                if stmt.op != "=" and t is not None and t.dtype in ir.DTYPES:
                    _check_literals((stmt.value,), promote(Ty(t.dtype), vt), errors)
        elif isinstance(stmt, ir.Copy):
            for region, role in ((stmt.dst, "destination"), (stmt.src, "source")):
                _check_region(region, role, k, loop_vars, errors)
    yield from errors


def _check_target(stmt: ir.Assign, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError]) -> None:
    tgt = stmt.target
    name = tgt.tensor if isinstance(tgt, ir.Access) else tgt.name
    t = k.tensor(name)
    if t is None:
        kind = _global_names(k).get(name) or ("loop variable" if name in loop_vars else None)
        if kind:
            errors.append(SemanticError(f"cannot assign to {kind} `{name}`", tgt.loc, hint="only tensors can be assigned"))
        else:
            errors.append(SemanticError(f"unknown tensor `{name}`", tgt.loc,
                                        hint=did_you_mean(name, [x.name for x in k.tensors()])))
        return
    if t.kind == "input":
        errors.append(SemanticError(f"cannot assign to input `{name}`", tgt.loc,
                                    hint="inputs are read-only; copy into a `temp` first"))
    if isinstance(tgt, ir.Access):
        _check_access(tgt, k, loop_vars, errors)
    elif t.rank != 0:
        errors.append(SemanticError(f"`{name}` has rank {t.rank} and needs {t.rank} "
                                    f"ind{'ex' if t.rank == 1 else 'ices'}", tgt.loc))


def _check_region(r: ir.Region, role: str, k: ir.Kernel, loop_vars: tuple[str, ...], errors: list[SemanticError]) -> None:
    t = k.tensor(r.tensor)
    if t is None:
        errors.append(SemanticError(f"unknown tensor `{r.tensor}` in copy {role}", r.loc,
                                    hint=did_you_mean(r.tensor, [x.name for x in k.tensors()])))
        return
    if role == "destination" and t.kind == "input":
        errors.append(SemanticError(f"cannot copy into input `{r.tensor}`", r.loc))
    if len(r.dims) != t.rank:
        errors.append(SemanticError(f"copy {role} `{r.tensor}` has rank {t.rank} but the region has {len(r.dims)} dimensions",
                                    r.loc))
    for e in ir.region_exprs(r):
        _check_index(e, k, loop_vars, errors, allow_minmax=True, what="region bound")


def region_shape(r: ir.Region, sizes: dict[str, int]) -> list[int | None]:
    """Extents of a region's slice dimensions: an int when it does not depend on loop
    variables, None when it does (e.g. tails written with `min`)."""
    out: list[int | None] = []
    for d in r.dims:
        if isinstance(d, ir.Slice):
            lo, hi = to_affine(d.lo, sizes), to_affine(d.hi, sizes)
            if lo is None or hi is None:
                out.append(None)
                continue
            ext = hi - lo
            out.append(ext.const if ext.is_const() else None)
    return out


def check_copies(k: ir.Kernel) -> Iterator[SemanticError]:
    """`copy dst <- src`: both regions have the same shape (compared where the extents do
    not depend on loop variables), and the dtypes agree (a copy is a DMA; it does not
    convert)."""
    sizes = k.size_values()
    for stmt in ir.iter_stmts(k.body):
        if not isinstance(stmt, ir.Copy):
            continue
        dt, st = k.tensor(stmt.dst.tensor), k.tensor(stmt.src.tensor)
        if dt is None or st is None or len(stmt.dst.dims) != dt.rank or len(stmt.src.dims) != st.rank:
            continue  # reported by check_statements
        if dt.dtype != st.dtype:
            yield SemanticError(f"copy from {st.dtype} `{st.name}` to {dt.dtype} `{dt.name}`: a copy does not convert",
                                stmt.loc, hint="convert with an assignment loop, e.g. `x[i] = f32(y[i])`")
        a, b = region_shape(stmt.dst, sizes), region_shape(stmt.src, sizes)
        if None in a or None in b:
            if len(a) != len(b):
                yield SemanticError(f"copy regions have {len(a)} and {len(b)} sliced dimensions", stmt.loc)
            continue
        if a != b:
            yield SemanticError(f"copy regions differ in shape: destination {a}, source {b}", stmt.loc)
        elif any(x <= 0 for x in a):  # type: ignore[operator]
            yield SemanticError(f"copy region has an empty or negative extent {a}", stmt.loc)


def check_literals(k: ir.Kernel) -> Iterator[SemanticError]:
    """Literals in expressions are non-negative (negation is the `-` operator) and not
    NaN; this keeps `parse(print(k)) == k` exact. Integer literals are at most 2^31 - 1."""
    exprs: list[ir.Expr] = []
    for stmt in ir.iter_stmts(k.body):
        exprs.extend(ir.stmt_exprs(stmt))
    for t in k.tensors():
        exprs.extend(t.shape)
    for e in exprs:
        for s in ir.sub_exprs(e):
            if isinstance(s, (ir.IntLit, ir.FloatLit)):
                if isinstance(s.value, float) and math.isnan(s.value):
                    yield SemanticError("NaN literal", s.loc)
                elif s.value < 0:
                    yield SemanticError(f"negative literal {s.value}; use unary minus", s.loc)
                elif isinstance(s, ir.IntLit) and s.value > INT32_MAX:
                    yield SemanticError(f"integer literal {s.value} is more than {INT32_MAX} (2^31 - 1)", s.loc,
                                        hint=f"for a float value write `{s.value}.0`")


def check_ranged_sizes(k: ir.Kernel) -> Iterator[SemanticError]:
    """A kernel with ranged sizes is valid for every value of the ranges: its accesses stay
    inside its tensors and its outputs are written to their ends (`bounds.py`, Z3; skipped,
    with no Z3 import, for a kernel without ranges)."""
    if k.size_ranges():
        from .bounds import check_ranged_bounds

        yield from check_ranged_bounds(k)


def check_index_tensors(k: ir.Kernel) -> Iterator[SemanticError]:
    """No tensor read as a data-dependent index (`ids` in `T[ids[t], h]`) is assigned in the
    same nest (top-level statement): its values are data of an earlier nest (or an input),
    so the gather (or scatter) can be planned from them. A copy into it (a pass staging the
    index tensor into UB, `copy ids_ub <- ids[...]`) moves those values and is allowed.
    Index reads appear only in assignments (a copy region is affine)."""
    from .gathers import stmt_index_reads

    for top in k.body:
        written = {s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
                   for s in ir.iter_stmts((top,)) if isinstance(s, ir.Assign)}
        for s in ir.iter_stmts((top,)):
            for r in stmt_index_reads(s):
                if r.tensor in written:
                    yield SemanticError(
                        f"index tensor `{r.tensor}` is assigned in the nest that indexes through it", r.loc,
                        hint=f"compute `{r.tensor}` in a loop nest of its own before this one")
                    return


INVARIANTS: tuple[Check, ...] = (
    check_identifiers,
    check_unique_names,
    check_declarations,
    check_shapes,
    check_statements,
    check_copies,
    check_index_tensors,
    check_literals,
    check_outputs,
    check_ranged_sizes,
)


def check_kernel(k: ir.Kernel) -> list[SemanticError]:
    """All invariant violations, in a stable order (by invariant, then by position).
    Later invariants are skipped once an earlier one fails, since they assume it."""
    for inv in INVARIANTS:
        errors = list(inv(k))
        if errors:
            return errors
    return []


def verify_kernel(k: ir.Kernel) -> None:
    """Raise the first invariant violation, if any."""
    errors = check_kernel(k)
    if errors:
        raise errors[0]
