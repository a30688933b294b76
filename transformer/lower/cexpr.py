"""C++ names and scalar expressions, with the IR's typing rules (`transformer.dtypes`).

Scalar code must compute exactly what the interpreter computes: each operation in the
promoted type of its operands (f16 in `half`, rounded after every operation), stores and
casts rounding to nearest even (integers saturate), integer division truncating with
`x / 0 == 0`. The helpers `ascx_cvt`, `ascx_idiv`, `ascx_max`, `ascx_min` come from the
prelude in `templates/kernel.cpp.j2`.
"""

from __future__ import annotations

import math
import struct
from typing import Callable

from .. import ir
from ..affine import Affine, to_affine
from ..dtypes import BOOL, WEAK_FLOAT, WEAK_INT, Ty, float_of, promote

CTYPE: dict[str, str] = {"f16": "half", "bf16": "bfloat16_t", "f32": "float", "i8": "int8_t", "i32": "int32_t"}

# Identifiers the emitted code uses itself: an IR name equal to one of these is renamed
# with a trailing `_` (names were validated by the parser, so they are C identifiers).
RESERVED: frozenset[str] = frozenset("""
main Init Process CopyIn Compute CopyOut pipe workspace BUFFER_NUM blockIdx workerIdx op
AscendC std GM_ADDR half bfloat16_t TPipe TQue TBuf TPosition QuePosition LocalTensor GlobalTensor
DataCopy DataCopyPad DataCopyParams DataCopyExtParams DataCopyPadExtParams Nd2NzParams LoadData
LoadData2DParams Mmad MmadParams Fixpipe FixpipeParamsV220 CFG_ROW_MAJOR CFG_NZ QuantMode_t Add Sub Mul Div
Max Min Adds Muls Maxs Mins Exp Ln Abs Sqrt Rsqrt Reciprocal Relu Neg Duplicate Cast RoundMode ReduceMax
ReduceMin ReduceSum Brcb BrcbRepeatParams GetBlockIdx GetBlockNum GetSubBlockIdx GetTaskRation SetFlag
WaitFlag HardEvent PipeBarrier CrossCoreSetFlag CrossCoreWaitFlag PIPE_ALL PIPE_V PIPE_MTE2 PIPE_MTE3 PIPE_FIX
PIPE_M PIPE_MTE1 PIPE_S ICPU_RUN_KF GmAlloc GmFree SetKernelMode KernelMode ASCEND_IS_AIC ASCEND_IS_AIV
ASCEND_IS_NOT_AIC ASCEND_IS_NOT_AIV int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t
float double int bool char void NULL INFINITY NAN assert printf fprintf fopen fclose fread fwrite FILE exit
abort malloc free memcpy stderr stdout errno argc argv ONE_BLK_SIZE SYNC_AIV SYNC_AIC SYNC_C2V SYNC_V2C
""".split())


class Names:
    """IR name -> C++ identifier, unique and clear of `RESERVED` and of each other."""

    def __init__(self, kernel: ir.Kernel) -> None:
        used: set[str] = set(RESERVED)
        self.map: dict[str, str] = {}
        all_names = [t.name for t in kernel.tensors()] + [s.name for s in kernel.sizes] + \
            [c.name for c in kernel.consts] + [lp.var for lp in ir.iter_loops(kernel.body)]
        for n in dict.fromkeys(all_names):
            c = n
            while c in used or c.startswith("ascx_"):
                c = c + "_"
            used.add(c)
            self.map[n] = c
        self.used = used

    def __call__(self, name: str) -> str:
        return self.map.get(name, name)

    def fresh(self, base: str) -> str:
        c, k = base, 1
        while c in self.used:
            k += 1
            c = f"{base}{k}"
        self.used.add(c)
        return c


def _round_f32(v: float) -> float:
    """`float(np.float32(v))` without numpy (`ascx emit` does not import it): round to
    nearest float32, overflow to a signed infinity."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def f32_literal(v: float) -> str:
    """A C++ float literal equal to `float32(v)` (inf as a named constant)."""
    if math.isinf(v):
        return "ascx_inf" if v > 0 else "(-ascx_inf)"
    if math.isnan(v):
        return "ascx_nan"
    f = _round_f32(v)
    s = repr(f)
    if "e" not in s and "." not in s:
        s += ".0"
    return s + "f"


def const_value(c: ir.ConstDecl) -> str:
    ct = CTYPE[c.dtype]
    if c.dtype in ("i8", "i32"):
        return str(int(c.value))
    lit = f32_literal(float(c.value))
    return lit if c.dtype == "f32" else f"{ct}({lit})"


def affine_cpp(a: Affine, names: Callable[[str], str]) -> str:
    parts: list[str] = []
    for v, k in a.coeffs:
        term = names(v) if k == 1 else f"{names(v)} * {k}" if k > 0 else f"{names(v)} * ({k})"
        parts.append(term)
    if a.const or not parts:
        parts.append(str(a.const))
    out = parts[0]
    for p in parts[1:]:
        out = f"{out} - {p[1:]}" if p.startswith("-") else f"{out} + {p}"
    return out


class ExprEmitter:
    """Scalar C++ for IR expressions; `load(tensor, offset_cpp)` reads an element."""

    def __init__(self, kernel: ir.Kernel, names: Names, load: Callable[[str, tuple[ir.Expr, ...]], str],
                 scalar_of: Callable[[str], str]) -> None:
        self.kernel = kernel
        self.names = names
        self.sizes = kernel.size_values()
        self.decls = {t.name: t for t in kernel.tensors()}
        self.consts = {c.name: c for c in kernel.consts}
        self.load = load
        self.scalar_of = scalar_of

    # ---- integers (indices, bounds) ----------------------------------------------------
    def index(self, e: ir.Expr) -> str:
        a = to_affine(e, self.sizes)
        if a is not None:
            return affine_cpp(a, self.names)
        if isinstance(e, ir.Call) and e.func in ("min", "max"):
            return f"ascx_{e.func}<int32_t>({self.index(e.args[0])}, {self.index(e.args[1])})"
        if isinstance(e, ir.Binary):
            return f"({self.index(e.lhs)} {e.op} {self.index(e.rhs)})"
        if isinstance(e, ir.Unary):
            return f"(-{self.index(e.operand)})"
        if isinstance(e, ir.IntLit):
            return str(e.value)
        if isinstance(e, ir.Name):
            return str(self.sizes[e.name]) if e.name in self.sizes else self.names(e.name)
        raise AssertionError(f"not an index expression: {e!r}")

    # ---- values -------------------------------------------------------------------------
    @staticmethod
    def conv(code: str, t: Ty, to: Ty) -> str:
        """`code` of type `t` as a value of type `to` (a strong or weak type)."""
        if to.dtype == "bool" or t == to:
            return code
        if t.weak and to.weak:
            return f"static_cast<float>({code})" if to.is_float and not t.is_float else code
        ct = CTYPE[to.dtype]
        if not t.weak and t.dtype == to.dtype:
            return code
        if t.weak and t.is_int and to.dtype == "i32":
            return f"static_cast<int32_t>({code})"
        if t.weak and t.is_float and to.dtype == "f32":
            return code
        return f"ascx_cvt<{ct}>({code})"

    def value(self, e: ir.Expr) -> tuple[str, Ty]:
        if isinstance(e, ir.IntLit):
            return str(e.value), WEAK_INT
        if isinstance(e, ir.FloatLit):
            return f32_literal(e.value), WEAK_FLOAT
        if isinstance(e, ir.Name):
            n = e.name
            if n in self.consts:
                return self.names(n), Ty(self.consts[n].dtype)
            if n in self.sizes:
                return self.names(n), WEAK_INT
            if n in self.decls:
                return self.scalar_of(n), Ty(self.decls[n].dtype)
            return self.names(n), WEAK_INT  # loop variable
        if isinstance(e, ir.Access):
            return self.load(e.tensor, e.indices), Ty(self.decls[e.tensor].dtype)
        if isinstance(e, ir.Unary):
            c, t = self.value(e.operand)
            if t.weak:
                return f"(-{c})", t
            return f"static_cast<{CTYPE[t.dtype]}>(-{c})" if t.dtype in ("i8",) else f"(-{c})", t
        if isinstance(e, ir.Binary):
            return self.binary(e)
        if isinstance(e, ir.Call):
            return self.call(e)
        raise AssertionError(type(e))

    def binary(self, e: ir.Binary) -> tuple[str, Ty]:
        a, ta = self.value(e.lhs)
        b, tb = self.value(e.rhs)
        comp = promote(ta, tb)
        x, y = self.conv(a, ta, comp), self.conv(b, tb, comp)
        if e.op in ir.COMPARE_OPS:
            return f"({x} {e.op} {y})", BOOL
        if comp.is_int:
            ct = "int64_t" if comp.weak else CTYPE[comp.dtype]
            if e.op == "/":
                r = f"ascx_idiv<{ct}>({x}, {y})"
            else:
                r = f"({x} {e.op} {y})"
            return (r if comp.weak else f"ascx_cvt<{ct}>({r})"), comp
        r = f"({x} {e.op} {y})"
        if comp.weak:
            return r, comp
        if comp.dtype in ("f16", "bf16"):
            return r, comp  # half op half -> half (rounded once)
        return r, comp

    def call(self, e: ir.Call) -> tuple[str, Ty]:
        f = e.func
        if f == "select":
            c, _ = self.value(e.args[0])
            a, ta = self.value(e.args[1])
            b, tb = self.value(e.args[2])
            comp = promote(ta, tb)
            return f"({c} ? {self.conv(a, ta, comp)} : {self.conv(b, tb, comp)})", comp
        if f in ir.DTYPES:
            v, t = self.value(e.args[0])
            return f"ascx_cvt<{CTYPE[f]}>({v})", Ty(f)
        if f in ("max", "min"):
            (a, ta), (b, tb) = self.value(e.args[0]), self.value(e.args[1])
            comp = promote(ta, tb)
            ct = ("float" if comp.is_float else "int64_t") if comp.weak else CTYPE[comp.dtype]
            return f"ascx_{f}<{ct}>({self.conv(a, ta, comp)}, {self.conv(b, tb, comp)})", comp
        v, t = self.value(e.args[0])
        if f == "abs":
            ct = ("float" if t.is_float else "int64_t") if t.weak else CTYPE[t.dtype]
            return f"ascx_abs<{ct}>({v})", t
        comp = Ty(float_of(t).dtype)
        x = self.conv(v, t, Ty("f32"))
        fn = {"exp": "std::exp", "log": "std::log", "sqrt": "std::sqrt", "tanh": "std::tanh"}.get(f)
        r = f"{fn}({x})" if fn else f"(1.0f / std::sqrt({x}))"
        if comp.dtype == "f32":
            return r, comp
        return f"ascx_cvt<{CTYPE[comp.dtype]}>({r})", comp
