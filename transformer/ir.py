"""The ascx loop-nest IR as immutable dataclasses.

This module is the in-memory form of `shared/design/ir.md`. Every pass maps a `Kernel` to a
new `Kernel`; nodes are frozen and hashable so they can be compared structurally
(`parse(print(k)) == k`). Source locations ride along on nodes but never take part in
equality, so a printed-and-reparsed kernel equals the original.

Expressions are deliberately few: literals, names, tensor accesses, unary and binary
operators, and calls (intrinsics, casts and `select`). What a name refers to (size, const,
loop variable, rank-0 tensor) is decided by the semantic checker, not by the parser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping, Union

from .intrinsics import ARITY
from .dtypes import DTYPE_BYTES, DTYPES, FLOAT_DTYPES, INT_DTYPES  # noqa: F401  (re-exported: ir.DTYPES, ...)

# --------------------------------------------------------------------------------------
# Vocabulary shared by parser, checker, interpreter and passes.

# DTYPES, FLOAT_DTYPES, INT_DTYPES, DTYPE_BYTES: the dtype facts live in dtypes.py (imported above).

SCOPES: tuple[str, ...] = ("ub", "l1", "l0a", "l0b", "l0c")
"""On-chip memory scopes a `local` buffer may live in (extendable by target tables)."""

LAYOUTS: tuple[str, ...] = ("ND", "NZ", "NCHW", "NHWC", "NC1HWC0")

REDUCE_OPS: tuple[str, ...] = ("+=", "*=", "max=", "min=")
ASSIGN_OPS: tuple[str, ...] = ("=",) + REDUCE_OPS

ARITH_OPS = ("+", "-", "*", "/")
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")

# name -> number of arguments, from the one intrinsic table (intrinsics.py): add an intrinsic
# there, not as a special case elsewhere.
INTRINSICS: dict[str, int] = dict(ARITY)

ANNOTATIONS: dict[str, tuple[str, ...]] = {
    # annotation name -> accepted keyword names (a single positional argument is allowed
    # and means the first keyword)
    "unroll": ("factor",),
    "pipeline": ("stages",),
    "cores": ("n",),
    "gemm": ("m", "n", "k", "k0"),  # blocks of a matmul nest the cube runs (passes/gemm.py)
    "conv": ("m", "rows", "c", "k0"),  # blocks of a convolution the cube runs as an implicit GEMM (passes/conv_gemm.py)
    "flash": ("q", "kv", "g"),  # attention as one FlashAttention mix kernel (passes/flash_attention.py)
}


# --------------------------------------------------------------------------------------
# Source locations


@dataclass(frozen=True)
class Loc:
    """A 1-based line and column in a source file."""

    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


def _loc() -> Loc | None:
    return field(default=None, compare=False, repr=False)  # type: ignore[return-value]


# --------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class IntLit:
    value: int
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class FloatLit:
    """A float literal; `math.inf` prints as `inf`."""

    value: float
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Name:
    """A size, const, loop variable or rank-0 tensor, resolved by the checker."""

    name: str
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Access:
    """`T[i, j]`: an element of a tensor. Rank-0 tensors are accessed as `Name`."""

    tensor: str
    indices: tuple["Expr", ...]
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Unary:
    op: str  # only "-"
    operand: "Expr"
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Binary:
    op: str  # one of ARITH_OPS or COMPARE_OPS
    lhs: "Expr"
    rhs: "Expr"
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Call:
    """An intrinsic (`exp(x)`), a cast (`f16(x)`) or `select(c, a, b)`."""

    func: str
    args: tuple["Expr", ...]
    loc: Loc | None = _loc()


Expr = Union[IntLit, FloatLit, Name, Access, Unary, Binary, Call]


# --------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True)
class Assign:
    """`T[idx] op value` with op one of ASSIGN_OPS. Target is an Access or a Name (rank 0)."""

    target: Union[Access, Name]
    op: str
    value: Expr
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Slice:
    """One dimension of a copy region: `lo:hi` (half-open)."""

    lo: Expr
    hi: Expr


@dataclass(frozen=True)
class Region:
    """A rectangular region of a tensor. A dimension is a `Slice` or a single index `Expr`
    (which selects one element and does not count in the region's shape)."""

    tensor: str
    dims: tuple[Union[Slice, Expr], ...]
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Copy:
    """`copy dst <- src`: a block copy (a DMA) between regions of equal shape."""

    dst: Region
    src: Region
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class Annotation:
    """`@unroll(4)`, `@pipeline(stages=2)`, `@cores(24)`. Arguments are stored by keyword."""

    name: str
    args: tuple[tuple[str, int], ...]
    loc: Loc | None = _loc()

    def get(self, key: str, default: int | None = None) -> int | None:
        for k, v in self.args:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class For:
    """`label: for var in lo..hi { body }` with optional annotations written above it."""

    var: str
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]
    label: str | None = None
    annotations: tuple[Annotation, ...] = ()
    loc: Loc | None = _loc()
    var_loc: Loc | None = _loc()  # where the loop variable is written (errors about it point here)

    def annotation(self, name: str) -> Annotation | None:
        for a in self.annotations:
            if a.name == name:
                return a
        return None


Stmt = Union[Assign, Copy, For]


# --------------------------------------------------------------------------------------
# Declarations and the kernel


@dataclass(frozen=True)
class SizeDecl:
    """`size S = 1024 in 1..65536 multiple of 16`: `value` is the default (the size used
    for examples, profiles and `run`); `lo..hi` (inclusive) the values the kernel must serve
    (None: only `value`), each a multiple of `multiple` (None: any)."""

    name: str
    value: int
    loc: Loc | None = _loc()
    lo: int | None = None
    hi: int | None = None
    multiple: int | None = None
    range_loc: Loc | None = _loc()
    expr: "Expr | None" = None  # a derived size (`size Dh = D / 2`): its value follows the sizes before it

    @property
    def ranged(self) -> bool:
        return self.lo is not None

    def bounds(self) -> tuple[int, int, int]:
        """(lo, hi, step): the inclusive range and the multiple (the value alone if not ranged)."""
        step = self.multiple or 1
        if self.lo is None or self.hi is None:
            return self.value, self.value, step
        return self.lo, self.hi, step

    def allows(self, v: int) -> bool:
        lo, hi, step = self.bounds() if self.ranged else (v, v, self.multiple or 1)
        return lo <= v <= hi and v % step == 0


@dataclass(frozen=True)
class ConstDecl:
    name: str
    dtype: str
    value: Union[int, float]
    loc: Loc | None = _loc()


@dataclass(frozen=True)
class TensorDecl:
    """A tensor: a kernel parameter (`input`/`output`), a `temp`, or an on-chip `local`."""

    name: str
    dtype: str
    shape: tuple[Expr, ...]
    kind: str  # "input" | "output" | "temp" | "local"
    scope: str | None = None  # for locals: one of SCOPES (or a target-defined scope)
    layout: str | None = None
    loc: Loc | None = _loc()

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Kernel:
    name: str
    inputs: tuple[TensorDecl, ...]
    outputs: tuple[TensorDecl, ...]
    sizes: tuple[SizeDecl, ...]
    consts: tuple[ConstDecl, ...]
    buffers: tuple[TensorDecl, ...]  # temps and locals, in declaration order
    body: tuple[Stmt, ...]
    loc: Loc | None = _loc()

    # ---- lookups ---------------------------------------------------------------------
    def tensors(self) -> Iterator[TensorDecl]:
        yield from self.inputs
        yield from self.outputs
        yield from self.buffers

    def tensor(self, name: str) -> TensorDecl | None:
        for t in self.tensors():
            if t.name == name:
                return t
        return None

    def size_values(self) -> dict[str, int]:
        return {s.name: s.value for s in self.sizes}

    def known_sizes(self) -> dict[str, int]:
        """The sizes whose value is fixed (every size but the ranged ones): what a pass may
        fold into constants. A ranged size stays a symbol for the passes that keep ranges
        (`Pass.keeps_ranges`); for a kernel without ranges this is `size_values()`."""
        return {s.name: s.value for s in self.sizes if not s.ranged}

    def size_ranges(self) -> dict[str, tuple[int, int, int]]:
        """The ranged sizes: name -> (lo, hi, step), the inclusive range and the multiple."""
        return {s.name: s.bounds() for s in self.sizes if s.ranged}

    def specialised(self, names: "frozenset[str] | set[str] | None" = None) -> "Kernel":
        """The kernel with the sizes `names` (None: every size) fixed at their values, their
        ranges dropped: what `--size` gives, and what the passes see of a ranged kernel."""
        return replace(self, sizes=tuple(
            replace(s, lo=None, hi=None, multiple=None, range_loc=None) if names is None or s.name in names else s
            for s in self.sizes))

    def const_decl(self, name: str) -> ConstDecl | None:
        for c in self.consts:
            if c.name == name:
                return c
        return None

    def with_sizes(self, overrides: dict[str, int]) -> "Kernel":
        """Return the kernel with some `size` defaults replaced (the CLI's `--size`)."""
        known = {s.name for s in self.sizes}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise KeyError(unknown[0])
        out: list[SizeDecl] = []
        env: dict[str, int] = {}
        for s in self.sizes:
            if s.expr is not None:  # derived: recomputed from the (overridden) sizes before it
                try:
                    s = replace(s, value=eval_int_expr(s.expr, env))
                except (KeyError, ValueError):
                    pass  # the checker reports a derived size it cannot evaluate
            elif s.name in overrides:
                s = replace(s, value=overrides[s.name])
            env[s.name] = s.value
            out.append(s)
        return replace(self, sizes=tuple(out))


# --------------------------------------------------------------------------------------
# Generic traversal helpers used by the checker, interpreter and passes.


def eval_int_expr(e: Expr, env: Mapping[str, int]) -> int:
    """Evaluate an integer index / bound / size expression with every name bound in `env`
    (sizes and loop variables): `+ - *`, unary `-`, `min`/`max`, and the quasi-affine floor
    division `/` and remainder `%` (by a positive divisor; else ValueError). Raises KeyError
    for an unbound name (`affine.eval_int` is this function)."""
    if isinstance(e, IntLit):
        return e.value
    if isinstance(e, Name):
        return env[e.name]
    if isinstance(e, Unary):
        return -eval_int_expr(e.operand, env)
    if isinstance(e, Binary):
        a, b = eval_int_expr(e.lhs, env), eval_int_expr(e.rhs, env)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if e.op in ("/", "%"):
            if b <= 0:
                raise ValueError(f"division by {b} in an index expression (the divisor must be positive)")
            return a // b if e.op == "/" else a % b
        raise ValueError(f"operator {e.op} in an integer expression")
    if isinstance(e, Call) and e.func in ("min", "max"):
        vals = [eval_int_expr(a, env) for a in e.args]
        return min(vals) if e.func == "min" else max(vals)
    raise ValueError(f"not an integer expression: {type(e).__name__}")


def iter_stmts(stmts: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """All statements, pre-order, including loops and everything nested in them."""
    for s in stmts:
        yield s
        if isinstance(s, For):
            yield from iter_stmts(s.body)


def stmt_names(s: Stmt) -> set[str]:
    """The tensor, size, const and loop-variable names one statement mentions directly (not
    in statements nested in a loop), including copy endpoints and bare rank-0 tensors."""
    out: set[str] = set()
    if isinstance(s, Copy):
        out.update((s.dst.tensor, s.src.tensor))
    for e in stmt_exprs(s):
        for x in sub_exprs(e):
            if isinstance(x, Access):
                out.add(x.tensor)
            elif isinstance(x, Name):
                out.add(x.name)
    return out


def names_used(stmts: tuple[Stmt, ...]) -> set[str]:
    """`stmt_names` of every statement in `stmts` and everything nested in them."""
    return set().union(*(stmt_names(s) for s in iter_stmts(stmts)))


def iter_loops(stmts: tuple[Stmt, ...]) -> Iterator[For]:
    for s in iter_stmts(stmts):
        if isinstance(s, For):
            yield s


def sub_exprs(e: Expr) -> Iterator[Expr]:
    """`e` and every expression inside it, pre-order."""
    yield e
    if isinstance(e, Access):
        for i in e.indices:
            yield from sub_exprs(i)
    elif isinstance(e, Unary):
        yield from sub_exprs(e.operand)
    elif isinstance(e, Binary):
        yield from sub_exprs(e.lhs)
        yield from sub_exprs(e.rhs)
    elif isinstance(e, Call):
        for a in e.args:
            yield from sub_exprs(a)


def region_exprs(r: Region) -> Iterator[Expr]:
    for d in r.dims:
        if isinstance(d, Slice):
            yield d.lo
            yield d.hi
        else:
            yield d


def stmt_exprs(s: Stmt) -> Iterator[Expr]:
    """The expressions that appear directly in a statement (not in nested statements)."""
    if isinstance(s, Assign):
        yield s.target
        yield s.value
    elif isinstance(s, Copy):
        yield from region_exprs(s.dst)
        yield from region_exprs(s.src)
    elif isinstance(s, For):
        yield s.lo
        yield s.hi


def is_inf(e: Expr) -> bool:
    return isinstance(e, FloatLit) and math.isinf(e.value)
