"""Which element types each vector instruction family takes (instruction selection as data).

`vector.py` asks these tables whether an IR operation in a dtype has a vector form, and gets
back either yes or the precise reason it has none (listed by `ascx emit --explain`). The
entries follow the public Ascend C API pages for Atlas A2 (Add, Sub, Mul, Max, Min, Adds,
Muls, Maxs, Mins: "half/int16_t/float/int32_t"; Div, Exp, Ln, Sqrt, Rsqrt, Abs, the
reductions ReduceSum/ReduceMax/ReduceMin and Compare/CompareScalar: half/float):

| IR dtype | vector arithmetic | reductions |
|---|---|---|
| f16, f32 | every instruction of `vector.py`'s table | `max=`, `min=` in the type; `+=` in f32 |
| bf16 | computed in f32 through `Cast`s, rounded once | through f32 (below) |
| i32 | `+ - * max min` and unary minus (`Add Sub Mul Max Min`, `Adds Muls Maxs Mins`): exact, wrapping like the IR; compare and select composed exactly (below) | `+=`, `max=`, `min=` into i32 as a pairwise `Add`/`Max`/`Min` tree (no integer ReduceSum/Max/Min) |
| i8 | none (no int8 vector arithmetic): widened to i32 or a float first | none |

Conversions (`cast_reason`): any float pair (through the exact f32), f32 <-> i32 (`Cast`,
CAST_NONE widening / CAST_RINT narrowing: nearest even, saturating), f16/bf16 -> i32 and
i32 -> f16 through f32; i8 -> f16 (`Cast` int8_t -> half, exact) and from there to f32,
bf16 or i32 (every int8 is exact in each); not i32 -> bf16, nothing to i8.

**i32 compare** (`Compare`/`CompareScalar` take half/float on Atlas A2; an i32 through f32
is not exact beyond 2^24): composed exactly from instructions that take int32_t. With
`m = Min(a, b)` (exact), `a < b` is `m != b`, `a <= b` is `m == a`, `a > b` is `m != a`,
`a >= b` is `m == b`; an equality `u == v` of i32 vectors is `Sub(u, v) == 0` (wrapping:
zero exactly when equal), and that difference is `Cast` to f32 (a non-zero integer never
rounds to 0) and compared with `CompareScalar(.., 0.0f, EQ/NE)`. Exact for every i32.
**i32 select**: `Select` (half/float) moves 32-bit patterns; the i32 operands are read
through `ReinterpretCast<float>()`, so every i32 value (NaN bit patterns included) passes
unchanged.

**i32 reductions** (`s += x`, `s max= x`, `s min= x` with `s` and `x` i32): wrapping sums
and max/min are order-free, so a pairwise tree is exact: the operand copied into a
temporary (unless it is one), then `Add`/`Max`/`Min` of its upper part onto its lower part
in place, each split at a multiple of 8 elements (32 B aligned), until at most 8 remain;
those are folded with the old value in scalar code after a `V_S` flag (wrapping like the
IR). Over a tile tail (a run-time count) the rest of the tile is first filled with the
operation's identity (0, INT_MIN, INT_MAX), and the tree runs over the constant tile length.

Reductions into f16 / bf16 targets (`s: f16` with `s += x`): the IR rounds the accumulator
to its dtype after every step; no vector instruction sums in that order. They are reduced
in f32 instead — the operand widened by an exact `Cast`, one f32 `ReduceSum` (or
`ReduceMax`/`ReduceMin`), the old value added in f32 and the sum rounded once to the target
dtype. That is the exact sum rounded once: at least as accurate as the sequential rounding,
and within the dtype's tolerance of it for the row lengths of staged tiles (the difference
is the sequential sum's own rounding error). `max=`/`min=` are exact either way.
"""

from __future__ import annotations

from .itable import TABLE

FLOAT_VEC = ("f16", "f32")  # dtypes with native float vector arithmetic
INT_VEC = ("i32",)  # integer dtypes with native vector arithmetic
# the instruction of each IR arithmetic operation (`neg` is `Muls(-1)`); whether it takes an
# integer dtype is its row's dtypes in the instruction table (itable.py)
ARITH_API = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "max": "Max", "min": "Min", "neg": "Muls"}
INT_OPS = tuple(op for op, api in ARITH_API.items() if "i32" in TABLE[api].dtypes)  # + - * max min neg
NARROW_ACC = ("f16", "bf16")  # reduction targets accumulated in f32, rounded once


def arith_reason(op: str, dtype: str) -> str | None:
    """None when `op` (`+ - * / max min`, `neg`, or an intrinsic name) has a vector
    instruction in `dtype`, else why not."""
    if dtype in FLOAT_VEC:
        return None
    if dtype in INT_VEC:
        if op in INT_OPS:
            return None
        if op == "/":
            return f"integer division in {dtype} (Div takes {_c_types(TABLE['Div'].dtypes)})"
        return f"`{op}` of {dtype} (the vector unit has it for half/float only)"
    if dtype == "i8":
        return f"vector arithmetic in i8 (Add/Sub/Mul/Max/Min take {_c_types(TABLE['Add'].dtypes)})"
    return f"vector arithmetic in {dtype}"


def _c_types(dtypes: tuple[str, ...]) -> str:
    """`half/int16_t/float/int32_t`: a table row's dtypes as the API pages name them."""
    names = {"f16": "half", "f32": "float", "i16": "int16_t", "i32": "int32_t", "u16": "uint16_t"}
    return "/".join(names.get(d, d) for d in dtypes)


def cast_reason(src: str, dst: str) -> str | None:
    """None when a vector `Cast` (possibly two, through the exact f32) converts `src` to
    `dst` exactly as the IR does (one rounding to nearest even; float -> i32 saturating,
    NaN to 0), else why not. Between floats any pair; f32 <-> i32 directly (Cast
    int32_t <-> float); f16/bf16 -> i32 through the exact f32; i32 -> f16 through f32 (an
    integer that f32 rounds is beyond f16's range either way: inf); not i32 -> bf16 (two
    roundings differ from one); i8 -> f16 (Cast int8_t -> half, exact) and on from f16 to
    f32, bf16 or i32 (exact: every int8 is representable); nothing to i8 (the IR's i8
    arithmetic is not vectorised)."""
    floats = ("f16", "bf16", "f32")
    if src in floats and dst in floats:
        return None
    if src == "i8" and dst in floats + ("i32",):  # Cast int8_t -> half is exact; on through f16
        return None
    if {src, dst} <= {"f32", "i32"} or (src in floats and dst == "i32") or (src == "i32" and dst == "f16"):
        return None
    if src == "i32" and dst == "bf16":
        return "no vector Cast i32 -> bf16 (through f32 it would round twice)"
    return f"no vector Cast {src} -> {dst}"


def reduce_reason(op: str, target: str, comp: str) -> str | None:
    """None when a reduction `s op= x` into a `target`-typed accumulator, computed in
    `comp`, has a vector form (in `comp`, or in f32 for narrow float accumulators), else why."""
    if op not in ("max=", "min=", "+="):
        return f"`{op}` reduction (no vector product reduction)"
    if comp == "i32" and target == "i32":
        return None  # the pairwise Add/Max/Min tree (module docstring)
    if comp in ("i8", "i32"):
        return f"`{op}` into {target} (ReduceSum/ReduceMax/ReduceMin take half/float; i32 trees need an i32 target)"
    if op == "+=" and target in ("i8", "i32"):
        return f"`+=` of {comp} into {target} (the IR rounds to {target} after every step; a vector sum rounds once)"
    if comp not in ("f16", "bf16", "f32"):
        return f"`{op}` into {target}"
    return None


def reduce_dtype(op: str, comp: str) -> str:
    """The dtype the vector reduction runs in: f32 for float sums (an f16/bf16 accumulator is
    summed in f32 and rounded once) and for bf16 (no bf16 reductions); i32 for the
    integer tree; else `comp`."""
    if comp == "i32":
        return "i32"
    return "f32" if op == "+=" or comp == "bf16" else comp
