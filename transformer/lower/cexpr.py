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
from typing import Callable, Mapping

from .. import ir
from ..affine import Affine, to_affine
from ..dtypes import BOOL, WEAK_FLOAT, WEAK_INT, Ty, float_of, promote
from ..intrinsics import BY_NAME as INTRINSIC

CTYPE: dict[str, str] = {"f16": "half", "bf16": "bfloat16_t", "f32": "float", "i8": "int8_t", "i32": "int32_t"}

def _cxx_names() -> dict[str, frozenset[str]]:
    """Sections of `cxx_names.txt`: macros of the included headers, C library globals."""
    from pathlib import Path

    out: dict[str, set[str]] = {}
    section = ""
    for line in Path(__file__).with_name("cxx_names.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        out.setdefault(section, set()).add(line)
    return {k: frozenset(v) for k, v in out.items()}


_CXX = _cxx_names()
MACROS: frozenset[str] = _CXX.get("macros", frozenset())
C_GLOBALS: frozenset[str] = _CXX.get("globals", frozenset())

# Identifiers the emitted code (kernel, prelude and harness) uses itself, unqualified, and
# every macro of the headers it includes. A kernel's name equal to one of these is renamed
# (`Names`); everything else the code generator invents is drawn from `Names.fresh`.
RESERVED: frozenset[str] = frozenset("""
main Init Process pipe workspace BUFFER_NUM blockIdx workerIdx op
AscendC std GM_ADDR half bfloat16_t TPipe TQue TBuf TPosition QuePosition LocalTensor GlobalTensor
DataCopy DataCopyPad DataCopyParams DataCopyExtParams DataCopyPadExtParams Nd2NzParams LoadData
LoadData2DParams Mmad MmadParams Fixpipe FixpipeParamsV220 CFG_ROW_MAJOR CFG_NZ QuantMode_t InitConstValue InitConstValueParams Add Sub Mul Div
Max Min Adds Muls Maxs Mins Exp Ln Abs Sqrt Rsqrt Reciprocal Relu Neg Duplicate Cast RoundMode ReduceMax
ReduceMin ReduceSum Brcb BrcbRepeatParams GetBlockIdx GetBlockNum GetSubBlockIdx GetTaskRation SetFlag
WaitFlag HardEvent PipeBarrier CrossCoreSetFlag CrossCoreWaitFlag PIPE_ALL PIPE_V PIPE_MTE2 PIPE_MTE3 PIPE_FIX
PIPE_M PIPE_MTE1 PIPE_S ICPU_RUN_KF GmAlloc GmFree SetKernelMode KernelMode ASCEND_IS_AIC ASCEND_IS_AIV
ASCEND_IS_NOT_AIC ASCEND_IS_NOT_AIV int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t
float double int bool char void NULL INFINITY NAN assert printf fprintf fopen fclose fread fwrite FILE exit
abort malloc free memcpy stderr stdout errno argc argv ONE_BLK_SIZE SYNC_AIV SYNC_AIC SYNC_C2V SYNC_V2C
ReadFile WriteFile dir status
ascx_cvt ascx_wrap ascx_iadd ascx_isub ascx_imul ascx_ineg ascx_idiv ascx_qdiv ascx_qmod ascx_max ascx_min ascx_abs
ascx_inf ascx_nan ascx_kb ascx_c0 ascx_c1 ascx_c2 ascx_c3 ascx_c4 ascx_c5 ascx_c6 ascx_c7
ascx_range_mask ascx_m ascx_lo ascx_hi ascx_full ascx_r0 WholeReduceSum BinaryRepeatParams UnaryRepeatParams
""".split()) | MACROS


class Names:
    """IR name -> C++ identifier, and every identifier the code generator invents.

    One scheme, so that no two entities of the emitted code can share a name: a kernel's
    names (tensors, sizes, consts, loop variables) are kept verbatim unless they are in
    `RESERVED` (C++ names the emitted code or its headers use, macros included); those are
    renamed `name_` (or `name_2`, ...). Every other identifier (GM and local tensor members
    `xGm`/`xLocal`, queues, methods, counters, the class) comes from `fresh`/`derived`,
    which never return a name already taken. The parser rejects C++ keywords and names
    with `__` or a leading `_X`, which C++ reserves, and names longer than 128 characters.
    """

    def __init__(self, kernel: ir.Kernel) -> None:
        self.used: set[str] = set(RESERVED)
        self.map: dict[str, str] = {}
        self._derived: dict[tuple[str, str], str] = {}
        all_names = [t.name for t in kernel.tensors()] + [s.name for s in kernel.sizes] + \
            [c.name for c in kernel.consts] + [lp.var for lp in ir.iter_loops(kernel.body)]
        unique = list(dict.fromkeys(all_names))
        for n in unique:  # safe names first: a renamed one must not take a safe one's name
            if n not in RESERVED:
                self.map[n] = n
                self.used.add(n)
        for n in unique:
            if n not in self.map:
                self.map[n] = self.fresh(n if n.endswith("_") else n + "_")

    def __call__(self, name: str) -> str:
        return self.map.get(name, name)

    def fresh(self, base: str) -> str:
        """`base`, or `base2`, `base3`, ...: the first not yet taken (and now taken)."""
        c, k = base, 1
        while c in self.used:
            k += 1
            c = f"{base}{k}"
        self.used.add(c)
        return c

    def derived(self, name: str, pattern: str) -> str:
        """The identifier of IR entity `name` in role `pattern` (`"{}Gm"`, `"inQueue_{}"`):
        fresh the first time, the same one after."""
        key = (name, pattern)
        if key not in self._derived:
            self._derived[key] = self.fresh(pattern.format(self(name)))
        return self._derived[key]


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
    v = float(c.value)
    if c.dtype == "f16":  # the interpreter rounds the const's value to f16 once (not via f32)
        try:
            v = struct.unpack("<e", struct.pack("<e", v))[0]
        except OverflowError:  # rounds past the f16 maximum
            v = math.copysign(math.inf, v)
    lit = f32_literal(v)
    return lit if c.dtype == "f32" else f"{ct}({lit})"


INT32_MAX = 2**31 - 1


def wide_stride(shape: tuple[int, ...], strides: tuple[int, ...]) -> int | None:
    """The smallest stride of a GM tensor's dimensions whose span (`extent * stride`) is
    more than 2^31 - 1 elements, or None when every offset into the tensor fits int32_t.
    An offset term `v * k` with `|k|` at least that stride is computed in int64_t (`affine_cpp`),
    the others stay 32-bit: a tensor of 128 x 4096 x 4096 f32 has 2^31 elements, and only
    its outer index (stride 2^24, span 2^31) needs 64-bit arithmetic."""
    big = [st for n, st in zip(shape, strides) if n * st > INT32_MAX]
    return min(big) if big else None


def wide_term(term: str, k: int, wide: int | None) -> str:
    """`term * k` as C++, in int64_t when `|k|` is at least `wide` (`wide_stride`)."""
    if wide is not None and abs(k) >= wide:
        term = f"static_cast<int64_t>({term})"
    return term if k == 1 else f"{term} * {k}" if k > 0 else f"{term} * ({k})"


def affine_cpp(a: Affine, names: Callable[[str], str], wide: int | None = None) -> str:
    """`a` as C++ (terms of loop variables, then the constant); with `wide` (a tensor's
    `wide_stride`), the terms whose coefficient reaches it are computed in int64_t."""
    parts: list[str] = []
    for v, k in a.coeffs:
        parts.append(wide_term(names(v), k, wide))
    if a.const or not parts:
        parts.append(str(a.const))
    out = parts[0]
    for p in parts[1:]:
        out = f"{out} - {p[1:]}" if p.startswith("-") else f"{out} + {p}"
    return out


class ExprEmitter:
    """Scalar C++ for IR expressions; `load(tensor, offset_cpp)` reads an element."""

    def __init__(self, kernel: ir.Kernel, names: Names, load: Callable[[str, tuple[ir.Expr, ...]], str],
                 scalar_of: Callable[[str], str], sizes: Mapping[str, int] | None = None) -> None:
        self.kernel = kernel
        self.names = names
        self.sizes = kernel.size_values() if sizes is None else sizes  # a size absent stays a C++ name
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
        if isinstance(e, ir.Binary) and e.op in ("/", "%"):  # quasi-affine: floor division / modulo
            return f"ascx_{'qdiv' if e.op == '/' else 'qmod'}<int64_t>({self.index(e.lhs)}, {self.index(e.rhs)})"
        if isinstance(e, ir.Binary):
            return f"({self.index(e.lhs)} {e.op} {self.index(e.rhs)})"
        if isinstance(e, ir.Unary):
            return f"(-{self.index(e.operand)})"
        if isinstance(e, ir.IntLit):
            return str(e.value)
        if isinstance(e, ir.Name):
            return str(self.sizes[e.name]) if e.name in self.sizes else self.names(e.name)
        if isinstance(e, ir.Access):  # a data-dependent index: the scalar unit reads the index tensor
            return f"static_cast<int32_t>({self.load(e.tensor, e.indices)})"
        raise AssertionError(f"not an index expression: {e!r}")

    # ---- values -------------------------------------------------------------------------
    @staticmethod
    def conv(code: str, t: Ty, to: Ty) -> str:
        """`code` of type `t` as a value of type `to` (a strong or weak type). Every conversion
        between types rounds to nearest even and saturates integers (`ascx_cvt`), as the
        interpreter's `convert` does; a weak integer is held in `int64_t`."""
        if to.dtype == "bool" or t == to:
            return code
        if t.weak and to.weak:
            return f"static_cast<float>({code})" if to.is_float and not t.is_float else code
        ct = CTYPE[to.dtype]
        if not t.weak and t.dtype == to.dtype:
            return code
        if t.weak and t.is_float and to.dtype == "f32":
            return code
        return f"ascx_cvt<{ct}>({code})"

    @staticmethod
    def int_ctype(t: Ty) -> str:
        """The C++ type integer arithmetic of type `t` is done in (weak: 64-bit)."""
        return "int64_t" if t.weak else CTYPE[t.dtype]

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
            if t.is_int:  # wraps: -(-128) is -128 in i8, as numpy computes it
                return f"ascx_ineg<{self.int_ctype(t)}>({c})", t
            return f"(-{c})", t
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
            if x == y and comp.is_int:  # `i >= i`: g++ -Werror=tautological-compare
                return ("true" if e.op in ("==", "<=", ">=") else "false"), BOOL
            return f"({x} {e.op} {y})", BOOL
        if comp.is_int:
            return self.int_op(e.op, x, y, comp), comp
        return f"({x} {e.op} {y})", comp

    def int_op(self, op: str, x: str, y: str, comp: Ty) -> str:
        """`x op y` for integers of type `comp`: wraps in that type (in 64 bits when weak),
        division truncates and `x / 0 == 0` (`ascx_i*` helpers of the prelude)."""
        fn = {"+": "ascx_iadd", "-": "ascx_isub", "*": "ascx_imul", "/": "ascx_idiv", "%": "ascx_qmod"}[op]
        if comp.weak and op == "/":  # index arithmetic: floor division by a positive divisor
            fn = "ascx_qdiv"
        return f"{fn}<{self.int_ctype(comp)}>({x}, {y})"

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
        vals = [self.value(a) for a in e.args]
        v, t = vals[0]
        if f == "abs":
            ct = ("float" if t.is_float else "int64_t") if t.weak else CTYPE[t.dtype]
            return f"ascx_abs<{ct}>({v})", t
        if len(vals) == 2:
            t = promote(t, vals[1][1])
        comp = Ty(float_of(t).dtype)
        cpp = INTRINSIC[f].cpp
        assert cpp is not None, f
        r = cpp.format(*[self.conv(vv, tv, Ty("f32")) for vv, tv in vals])
        if comp.dtype == "f32":
            return r, comp
        return f"ascx_cvt<{CTYPE[comp.dtype]}>({r})", comp
