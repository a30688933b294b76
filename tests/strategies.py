"""Hypothesis strategies for ascx IR kernels, shared by the round-trip tests and by passes'
property tests.

    from strategies import kernels          # tests/ is on sys.path under pytest
    @given(kernels())
    def test_something(k): ...

`kernels()` draws kernels that pass `transformer.check.check_kernel`: random sizes, consts
of every dtype (negative and infinite values included), inputs/outputs/temps/locals of
ranks 0-5 with scopes and layouts, nested loops with unique labels and annotations, all
five assignment operators, block copies (with `min` tails), `select` with comparisons,
casts, every intrinsic, unary minus, nested binary operators of mixed precedence, and
float literals of many magnitudes (subnormal to huge, `inf`, exponents).

They are *syntactically and statically* valid, not necessarily runnable: indices may go
out of bounds and temps may be read before written. Use `runnable_kernels()` when the
interpreter must accept the kernel: every output element is written, every temp element
is written before it is read, every index is in bounds.

Every node is built without source locations, and in the printer's canonical form where
the IR has two spellings (float consts of float dtypes are Python floats), so
`parse(print_kernel(k)) == k` must hold exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

from transformer import ir
from transformer.affine import eval_int
from transformer.intrinsics import TABLE as INTRINSIC_TABLE
from transformer.check import CPP_KEYWORDS, INT32_MAX, RESERVED, cpp_reserved_form

# Words the grammar or the expression language gives meaning to; never used as names.
_KEYWORDS = frozenset({
    "kernel", "size", "const", "temp", "local", "for", "in", "copy", "layout", "inf",
    "select", *ir.INTRINSICS, *ir.DTYPES, *ir.ANNOTATIONS, "bool",
})
_BANNED = _KEYWORDS | CPP_KEYWORDS | RESERVED
# intrinsics whose vector code is accurate over any value a random expression gives (sin and
# cos are not beyond |x| = 2e5, pow's composed forms only for a literal exponent: intrinsics.py)
_FUZZ_INTRINSICS = sorted(i.name for i in INTRINSIC_TABLE if i.fuzz)

_IDENT = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,7}|_[A-Za-z0-9][A-Za-z0-9_]{0,4}", fullmatch=True)
_SIZE_NAMES = ("N", "M", "K", "S", "D", "H", "W", "C", "B", "T", "L", "R")
_VAR_NAMES = ("i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t", "u", "v", "x", "y", "z")

# Float literal values: many magnitudes, exponents, the printer's `inf`.
NICE_FLOATS = (0.0, 0.5, 1.0, 2.0, 0.125, 0.1, 1.0e-5, 1.0e-6, 3.0e38, 6.5504e4, 1.0e16,
               1.0e-30, 5.0e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 123456.789,
               math.inf)
floats_nonneg = st.one_of(
    st.just(math.inf),
    st.sampled_from(NICE_FLOATS),
    st.floats(min_value=0.0, allow_nan=False, allow_infinity=True),
    st.floats(min_value=0.0, max_value=1.0e6, allow_nan=False, allow_subnormal=False),
).map(lambda v: 0.0 if v == 0 else float(v))  # no negative zero in a literal


@dataclass
class _Names:
    """Allocates unique identifiers that are legal in the IR and in emitted C++."""

    used: set[str] = field(default_factory=set)

    def fresh(self, draw: st.DrawFn, pool: tuple[str, ...] | None = None) -> str:
        base = draw(st.sampled_from(pool)) if pool and draw(st.booleans()) else draw(_IDENT)
        if base in _BANNED or cpp_reserved_form(base):
            base = "v" + "_".join(p for p in base.split("_") if p)
        name, n = base, 0
        while name in self.used or name in _BANNED:
            n += 1
            name = f"{base}{n}"
        self.used.add(name)
        return name


@dataclass
class _Ctx:
    sizes: dict[str, int]
    consts: dict[str, str]  # name -> dtype
    tensors: dict[str, ir.TensorDecl]
    names: _Names
    labels: set[str] = field(default_factory=set)


# --------------------------------------------------------------------------------------
# index and shape expressions (affine)


def _dim(draw: st.DrawFn, sizes: dict[str, int]) -> ir.Expr:
    """A positive affine extent of sizes and integer literals."""
    names = sorted(sizes)
    kind = draw(st.integers(0, 5 if names else 0))
    if kind == 0:
        return ir.IntLit(draw(st.integers(1, 16)))
    n = draw(st.sampled_from(names))
    if kind == 1:
        return ir.Name(n)
    if kind == 2:
        return ir.Binary("+", ir.Name(n), ir.IntLit(draw(st.integers(0, 4))))
    if kind == 3:
        return ir.Binary("*", ir.IntLit(draw(st.integers(1, 4))), ir.Name(n))
    if kind == 4 and sizes[n] > 1:
        return ir.Binary("-", ir.Name(n), ir.IntLit(draw(st.integers(1, sizes[n] - 1))))
    m = draw(st.sampled_from(names))
    return ir.Binary("*", ir.Name(n), ir.Name(m))


def _affine(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...], depth: int = 2, *,
            minmax: bool = False) -> ir.Expr:
    """An affine expression of loop variables, sizes and integer literals (with `min`/`max`
    when allowed: loop bounds and copy regions)."""
    leaves: list[st.SearchStrategy[ir.Expr]] = [st.integers(0, 64).map(ir.IntLit)]
    if loop_vars:
        leaves.append(st.sampled_from(loop_vars).map(ir.Name))
    if ctx.sizes:
        leaves.append(st.sampled_from(sorted(ctx.sizes)).map(ir.Name))
    if depth <= 0:
        return draw(st.one_of(leaves))
    kind = draw(st.integers(0, 6 if minmax else 5))
    if kind <= 1:
        return draw(st.one_of(leaves))
    if kind == 2:
        op = draw(st.sampled_from(("+", "-")))
        return ir.Binary(op, _affine(draw, ctx, loop_vars, depth - 1), _affine(draw, ctx, loop_vars, depth - 1))
    if kind == 3:
        # scale * expr, the scale mentioning no loop variable
        scale: ir.Expr = ir.IntLit(draw(st.integers(0, 8)))
        if ctx.sizes and draw(st.booleans()):
            scale = ir.Name(draw(st.sampled_from(sorted(ctx.sizes))))
        inner = _affine(draw, ctx, loop_vars, depth - 1)
        return ir.Binary("*", scale, inner) if draw(st.booleans()) else ir.Binary("*", inner, scale)
    if kind == 4:
        return ir.Unary("-", _affine(draw, ctx, loop_vars, depth - 1))
    if kind == 5:
        return draw(st.one_of(leaves))
    f = draw(st.sampled_from(("min", "max")))
    return ir.Call(f, (_affine(draw, ctx, loop_vars, depth - 1, minmax=True),
                       _affine(draw, ctx, loop_vars, depth - 1, minmax=True)))


# --------------------------------------------------------------------------------------
# value expressions


def _value(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...], depth: int) -> ir.Expr:
    kind = draw(st.integers(0, 11 if depth > 0 else 4))
    if kind == 0:
        # at most 127: a literal takes the type of its other operand, and must fit an i8
        return ir.IntLit(draw(st.one_of(st.integers(0, 9), st.integers(0, 127))))
    if kind == 1:
        return ir.FloatLit(draw(floats_nonneg))
    if kind == 2:
        # a size, const, loop variable or rank-0 tensor used as a value
        cands = list(loop_vars) + sorted(ctx.sizes) + sorted(ctx.consts)
        cands += [t.name for t in ctx.tensors.values() if t.rank == 0]
        if cands:
            return ir.Name(draw(st.sampled_from(cands)))
        return ir.FloatLit(1.0)
    if kind in (3, 4):
        ranked = [t for t in ctx.tensors.values() if t.rank > 0]
        if ranked:
            t = draw(st.sampled_from(ranked))
            return ir.Access(t.name, tuple(_affine(draw, ctx, loop_vars, 1) for _ in range(t.rank)))
        return ir.FloatLit(draw(floats_nonneg))
    sub = lambda: _value(draw, ctx, loop_vars, depth - 1)  # noqa: E731
    if kind == 5:
        return ir.Unary("-", sub())
    if kind in (6, 7, 8):
        return ir.Binary(draw(st.sampled_from(ir.ARITH_OPS)), sub(), sub())
    if kind == 9:
        f = draw(st.sampled_from(_FUZZ_INTRINSICS))
        return ir.Call(f, tuple(sub() for _ in range(ir.INTRINSICS[f])))
    if kind == 10:
        return ir.Call(draw(st.sampled_from(ir.DTYPES)), (sub(),))
    cond = ir.Binary(draw(st.sampled_from(ir.COMPARE_OPS)), sub(), sub())
    return ir.Call("select", (cond, sub(), sub()))


# --------------------------------------------------------------------------------------
# statements


def _assign(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...]) -> ir.Assign | None:
    writable = [t for t in ctx.tensors.values() if t.kind != "input"]
    if not writable:
        return None
    t = draw(st.sampled_from(writable))
    target: ir.Access | ir.Name
    if t.rank == 0:
        target = ir.Name(t.name)
    else:
        target = ir.Access(t.name, tuple(_affine(draw, ctx, loop_vars) for _ in range(t.rank)))
    op = draw(st.sampled_from(ir.ASSIGN_OPS))
    return ir.Assign(target, op, _value(draw, ctx, loop_vars, draw(st.integers(0, 4))))


def _copy(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...]) -> ir.Copy | None:
    dsts = [t for t in ctx.tensors.values() if t.kind != "input" and t.rank > 0]
    if not dsts:
        return None
    dst = draw(st.sampled_from(dsts))
    srcs = [t for t in ctx.tensors.values() if t.dtype == dst.dtype and t.rank > 0]
    src = draw(st.sampled_from(srcs))
    n_slices = draw(st.integers(0, min(dst.rank, src.rank)))
    extents: list[ir.Expr] = []
    for _ in range(n_slices):
        if ctx.sizes and draw(st.booleans()):
            extents.append(ir.Name(draw(st.sampled_from(sorted(ctx.sizes)))))
        else:
            extents.append(ir.IntLit(draw(st.integers(1, 16))))

    def region(t: ir.TensorDecl) -> ir.Region:
        slots = sorted(draw(st.permutations(range(t.rank)))[:n_slices])
        dims: list[ir.Slice | ir.Expr] = []
        ext_iter = iter(extents)
        for d in range(t.rank):
            if d in slots:
                ext = next(ext_iter)
                lo = _affine(draw, ctx, loop_vars, 1)
                if isinstance(lo, ir.IntLit) and lo.value == 0 and draw(st.booleans()):
                    hi: ir.Expr = ext
                else:
                    hi = ir.Binary("+", lo, ext)
                if draw(st.integers(0, 4)) == 0:  # a tiled tail: extent depends on `min`
                    hi = ir.Call("min", (hi, _affine(draw, ctx, loop_vars, 1)))
                dims.append(ir.Slice(lo, hi))
            else:
                dims.append(_affine(draw, ctx, loop_vars, 1))
        return ir.Region(t.name, tuple(dims))

    return ir.Copy(region(dst), region(src))


def _annotations(draw: st.DrawFn) -> tuple[ir.Annotation, ...]:
    names = draw(st.lists(st.sampled_from(sorted(ir.ANNOTATIONS)), unique=True, max_size=3))
    out = []
    for n in names:
        key = ir.ANNOTATIONS[n][0]
        out.append(ir.Annotation(n, ((key, draw(st.integers(1, 64))),)))
    return tuple(out)


def _for(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...], depth: int, top: bool) -> ir.For:
    taken = set(loop_vars) | ctx.names.used
    free = [v for v in _VAR_NAMES if v not in taken]
    if free and draw(st.integers(0, 3)):
        var = draw(st.sampled_from(free))
    else:
        var = ctx.names.fresh(draw, None)
        ctx.names.used.discard(var)  # loop variables may repeat in sibling loops
        n = 0
        while var in loop_vars or var in ctx.names.used:
            n += 1
            var = f"{var}_{n}"
    label = None
    if top or draw(st.integers(0, 3)) == 0:
        label = ctx.names.fresh(draw, None)
        ctx.labels.add(label)
    lo = _affine(draw, ctx, loop_vars, 1, minmax=True)
    hi = _affine(draw, ctx, loop_vars, 2, minmax=True)
    body = _block(draw, ctx, loop_vars + (var,), depth - 1)
    return ir.For(var, lo, hi, body, label=label, annotations=_annotations(draw))


def _block(draw: st.DrawFn, ctx: _Ctx, loop_vars: tuple[str, ...], depth: int, top: bool = False) -> tuple[ir.Stmt, ...]:
    n = draw(st.integers(0 if top else 1, 4 if top else 3))
    out: list[ir.Stmt] = []
    for _ in range(n):
        kind = draw(st.integers(0, 6))
        s: ir.Stmt | None
        if kind <= (3 if top else 2) and depth > 0:
            s = _for(draw, ctx, loop_vars, depth, top)
        elif kind == 3:
            s = _copy(draw, ctx, loop_vars)
        else:
            s = _assign(draw, ctx, loop_vars)
        if s is not None:
            out.append(s)
    return tuple(out)


# --------------------------------------------------------------------------------------
# declarations and kernels


def _const_value(draw: st.DrawFn, dtype: str) -> int | float:
    if dtype == "i8":
        return draw(st.integers(-128, 127))
    if dtype == "i32":
        return draw(st.integers(-(2**31), 2**31 - 1))
    v = draw(floats_nonneg)
    return -v if draw(st.booleans()) and v != 0 else v


def _tensor(draw: st.DrawFn, ctx: _Ctx, kind: str) -> ir.TensorDecl:
    name = ctx.names.fresh(draw, ("A", "B", "X", "Y", "Q", "O", "acc", "tile", "buf", "mx"))
    rank = draw(st.integers(0, 5))
    shape = tuple(_dim(draw, ctx.sizes) for _ in range(rank))
    if math.prod(eval_int(d, ctx.sizes) for d in shape) > INT32_MAX:  # the checker's element limit
        shape = tuple(ir.IntLit(1) for _ in shape)
    layouts: list[str | None] = [None, None, "ND", "NZ"]
    if rank == 4:
        layouts += ["NCHW", "NHWC"]
    if rank == 5:
        layouts += ["NC1HWC0"]
    return ir.TensorDecl(
        name=name,
        dtype=draw(st.sampled_from(ir.DTYPES)),
        shape=shape,
        kind=kind,
        scope=draw(st.sampled_from(ir.SCOPES)) if kind == "local" else None,
        layout=draw(st.sampled_from(layouts)),
    )


@st.composite
def kernels(draw: st.DrawFn, max_depth: int = 3) -> ir.Kernel:
    """A kernel that passes `check_kernel` (statically valid, not necessarily runnable)."""
    names = _Names()
    sizes = {}
    for _ in range(draw(st.integers(0, 3))):
        sizes[names.fresh(draw, _SIZE_NAMES)] = draw(st.integers(1, 64))
    consts = {}
    const_decls = []
    for _ in range(draw(st.integers(0, 3))):
        n = names.fresh(draw, ("scale", "eps", "alpha", "beta", "c"))
        dt = draw(st.sampled_from(ir.DTYPES))
        consts[n] = dt
        const_decls.append(ir.ConstDecl(n, dt, _const_value(draw, dt)))
    ctx = _Ctx(sizes, consts, {}, names)
    inputs = tuple(_tensor(draw, ctx, "input") for _ in range(draw(st.integers(0, 3))))
    outputs = tuple(_tensor(draw, ctx, "output") for _ in range(draw(st.integers(1, 2))))
    buffers = tuple(_tensor(draw, ctx, draw(st.sampled_from(("temp", "local"))))
                    for _ in range(draw(st.integers(0, 3))))
    ctx.tensors = {t.name: t for t in inputs + outputs + buffers}
    body = _block(draw, ctx, (), max_depth, top=True)
    return ir.Kernel(
        name=names.fresh(draw, ("attention", "softmax", "k", "gemm")),
        inputs=inputs,
        outputs=outputs,
        sizes=tuple(ir.SizeDecl(n, v) for n, v in sizes.items()),
        consts=tuple(const_decls),
        buffers=buffers,
        body=body,
    )


# --------------------------------------------------------------------------------------
# runnable kernels: the interpreter accepts them (for semantic property tests of passes)

_FLOAT_DTYPES = ("f16", "bf16", "f32")


def _safe_value(draw: st.DrawFn, reads: list[ir.Expr], depth: int) -> ir.Expr:
    """A float expression over `reads` that stays finite for inputs in [-1, 1]: no
    division by something that can be zero, `exp`/`log`/`sqrt` only of bounded or
    positive arguments."""
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        if reads and draw(st.integers(0, 3)):
            return draw(st.sampled_from(reads))
        return ir.FloatLit(draw(st.sampled_from((0.5, 1.0, 2.0, 0.125, 3.0, 1.0e-3))))
    sub = lambda: _safe_value(draw, reads, depth - 1)  # noqa: E731
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return ir.Binary(draw(st.sampled_from(("+", "-", "*"))), sub(), sub())
    if kind == 4:
        return ir.Unary("-", sub())
    if kind == 5:  # division by a value >= 1
        return ir.Binary("/", sub(), ir.Binary("+", ir.Call("abs", (sub(),)), ir.FloatLit(1.0)))
    if kind == 6:
        f = draw(st.sampled_from(("exp", "sqrt", "log", "rsqrt")))
        bounded: ir.Expr = ir.Call("tanh", (sub(),))
        if f != "exp":
            bounded = ir.Binary("+", bounded, ir.FloatLit(2.0))
        return ir.Call(f, (bounded,))
    if kind == 7:
        return ir.Call(draw(st.sampled_from(("max", "min"))), (sub(), sub()))
    if kind == 8:
        return ir.Call(draw(st.sampled_from(_FLOAT_DTYPES)), (sub(),))
    cond = ir.Binary(draw(st.sampled_from(ir.COMPARE_OPS)), sub(), sub())
    return ir.Call("select", (cond, sub(), sub()))


@st.composite
def runnable_kernels(draw: st.DrawFn) -> ir.Kernel:
    """A kernel the interpreter runs without error on inputs in [-1, 1]: float tensors only,
    a sequence of labelled stages, each a perfect loop nest over the whole of the tensor
    it writes (optionally with an inner reduction loop), reading only inputs and tensors
    already fully written, always in bounds. Outputs are all written; values stay finite."""
    names = _Names()
    sizes: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 3))):
        sizes[names.fresh(draw, _SIZE_NAMES)] = draw(st.integers(1, 12))
    size_names = sorted(sizes)

    def shape() -> tuple[ir.Expr, ...]:
        rank = draw(st.integers(1, 3))
        return tuple(
            ir.Name(draw(st.sampled_from(size_names))) if draw(st.integers(0, 3)) else ir.IntLit(draw(st.integers(1, 4)))
            for _ in range(rank))

    def tensor(kind: str) -> ir.TensorDecl:
        return ir.TensorDecl(names.fresh(draw, ("A", "B", "X", "Y", "acc", "t")),
                             draw(st.sampled_from(_FLOAT_DTYPES)), shape(), kind,
                             scope=draw(st.sampled_from(ir.SCOPES)) if kind == "local" else None)

    inputs = tuple(tensor("input") for _ in range(draw(st.integers(1, 3))))
    outputs = tuple(tensor("output") for _ in range(draw(st.integers(1, 2))))
    buffers = tuple(tensor(draw(st.sampled_from(("temp", "local")))) for _ in range(draw(st.integers(0, 2))))
    consts = []
    if draw(st.booleans()):
        consts.append(ir.ConstDecl(names.fresh(draw, ("scale", "alpha")), "f32",
                                   draw(st.sampled_from((0.5, 0.125, 2.0, -1.0)))))
    extent = {}
    sizes_env = dict(sizes)
    from transformer.affine import eval_int

    def value_of(d: ir.Expr) -> int:
        return eval_int(d, sizes_env)

    written: list[ir.TensorDecl] = list(inputs)
    body: list[ir.Stmt] = []
    # buffers first (so later stages can read them), then every output
    for t in buffers + outputs:
        vars_ = [names.fresh(draw, _VAR_NAMES) for _ in range(t.rank)]
        for v, d in zip(vars_, t.shape):
            extent[v] = d
        red_var = None
        red_extent: ir.Expr | None = None
        if draw(st.booleans()):
            red_var = names.fresh(draw, _VAR_NAMES)
            red_extent = ir.Name(draw(st.sampled_from(size_names))) if draw(st.booleans()) else ir.IntLit(draw(st.integers(1, 4)))

        def reads(avail_vars: list[tuple[str, ir.Expr]]) -> list[ir.Expr]:
            out: list[ir.Expr] = [ir.Name(c.name) for c in consts]
            for r in written:
                idx = []
                for d in r.shape:
                    match = [v for v, e in avail_vars if e == d]
                    if match and draw(st.integers(0, 4)):
                        idx.append(ir.Name(draw(st.sampled_from(match))))
                    else:
                        idx.append(ir.IntLit(draw(st.integers(0, value_of(d) - 1))))
                out.append(ir.Access(r.name, tuple(idx)))
            return out

        avail = list(zip(vars_, t.shape))
        target = ir.Access(t.name, tuple(ir.Name(v) for v in vars_))
        stmts: list[ir.Stmt] = [ir.Assign(target, "=", _safe_value(draw, reads(avail), 3))]
        if red_var is not None and red_extent is not None:
            op = draw(st.sampled_from(ir.REDUCE_OPS))
            val = _safe_value(draw, reads(avail + [(red_var, red_extent)]), 2)
            if op == "*=":  # keep products bounded
                val = ir.Binary("+", ir.Binary("*", ir.Call("tanh", (val,)), ir.FloatLit(0.5)), ir.FloatLit(1.0))
            stmts.append(ir.For(red_var, ir.IntLit(0), red_extent, (ir.Assign(target, op, val),)))
        nest: tuple[ir.Stmt, ...] = tuple(stmts)
        for v, d in reversed(list(zip(vars_, t.shape))):
            nest = (ir.For(v, ir.IntLit(0), d, nest),)
        loop = nest[0]
        assert isinstance(loop, ir.For)
        label = names.fresh(draw, ("stage", "s", "ew", "red"))
        body.append(ir.For(loop.var, loop.lo, loop.hi, loop.body, label=label,
                           annotations=_annotations(draw) if draw(st.integers(0, 3)) == 0 else ()))
        written.append(t)
        # loop variables may be reused by later stages
        for v in vars_ + ([red_var] if red_var else []):
            names.used.discard(v)
    return ir.Kernel(
        name=names.fresh(draw, ("k", "fused")),
        inputs=inputs, outputs=outputs,
        sizes=tuple(ir.SizeDecl(n, v) for n, v in sizes.items()),
        consts=tuple(consts), buffers=buffers, body=tuple(body),
    )


# --------------------------------------------------------------------------------------
# contraction kernels: sums over products indexed by loop variables (the interpreter's
# BLAS path and its fallbacks)


@st.composite
def contraction_kernels(draw: st.DrawFn) -> ir.Kernel:
    """`T[...] op= f1 * f2 (* f3)` over a random perfect nest, after an init nest: 2-4 loop
    variables in random order, factors indexed by random subsets of them (some shifted by
    one, some with a constant leading index, some sharing no summed variable), f16 / bf16 /
    f32 tensors read directly or through `f32(...)`, sometimes a scalar factor, a target of
    rank 0-2 in f32 (mostly) or f16 / bf16, op `+=` (mostly) or `max=`. Every kernel runs:
    indices stay in bounds and the target is written before it is accumulated into."""
    from transformer.parser import parse

    n_vars = draw(st.integers(2, 4))
    vars_ = list(draw(st.permutations(["i", "j", "k", "l"])))[:n_vars]
    sizes = {"N": draw(st.integers(1, 9)), "M": draw(st.integers(2, 7))}
    extent = {v: draw(st.sampled_from(["N", "M", "N", "M", "3", "1"])) for v in vars_}
    decls: list[str] = []

    tvars = [v for v in vars_ if draw(st.integers(0, 2)) == 0][:2]

    def factor(name: str) -> str:
        # summed variables mostly in every factor (the BLAS form), the target's in some
        used = [v for v in vars_ if draw(st.integers(0, 9) if v not in tvars else st.integers(0, 1))]
        used = used or [draw(st.sampled_from(vars_))]
        used = list(draw(st.permutations(used)))
        dims, idx = [], []
        if draw(st.integers(0, 4)) == 0:  # a constant leading index
            dims.append("3")
            idx.append(str(draw(st.integers(0, 2))))
        for v in used:
            if draw(st.integers(0, 3)) == 0:  # shifted by one
                dims.append(f"{extent[v]} + 1")
                idx.append(f"{v} + 1")
            else:
                dims.append(extent[v])
                idx.append(v)
        dtype = draw(st.sampled_from(["f16", "bf16", "f32"]))
        decls.append(f"{name}: {dtype}[{', '.join(dims)}]")
        access = f"{name}[{', '.join(idx)}]"
        return f"f32({access})" if dtype != "f32" and draw(st.integers(0, 5)) else access

    factors = [factor(n) for n in ("A", "B", "C")[:draw(st.sampled_from([2, 2, 2, 3]))]]
    if draw(st.integers(0, 3)) == 0:
        factors.insert(draw(st.integers(0, len(factors))), draw(st.sampled_from(["0.5", "scale", "2.0"])))
    tdtype = draw(st.sampled_from(["f32"] * 6 + ["f16", "bf16"]))
    op = draw(st.sampled_from(["+="] * 6 + ["max="]))
    shape = f"[{', '.join(extent[v] for v in tvars)}]"
    tacc = f"T[{', '.join(tvars)}]" if tvars else "T"
    lines = [f"kernel c({', '.join(decls)}) -> (T: {tdtype}{shape}) {{",
             f"  size N = {sizes['N']}", f"  size M = {sizes['M']}", "  const scale: f32 = 0.25"]
    ind = "  "
    for v in tvars:
        lines.append(f"{ind}for {v} in 0..{extent[v]} {{")
        ind += "  "
    lines.append(f"{ind}{tacc} = {'0.0' if op == '+=' else '-inf'}")
    lines += ["  " * (len(tvars) - d) + "}" for d in range(len(tvars))]
    order = list(draw(st.permutations(vars_)))
    for d, v in enumerate(order):
        lines.append("  " * (d + 1) + f"for {v} in 0..{extent[v]} {{")
    lines.append("  " * (len(order) + 1) + f"{tacc} {op} {' * '.join(factors)}")
    lines += ["  " * (len(order) - d) + "}" for d in range(len(order))]
    lines.append("}")
    return parse("\n".join(lines) + "\n", "contraction.ir")
