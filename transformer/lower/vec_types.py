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
| i32 | `+ - * max min` and unary minus (`Add Sub Mul Max Min`, `Adds Muls Maxs Mins`): exact, wrapping like the IR | none (no integer ReduceSum/Max/Min) |
| i8 | none (no int8 vector arithmetic) | none |

Conversions (`cast_reason`): any float pair (through the exact f32), f32 <-> i32 (`Cast`,
CAST_NONE widening / CAST_RINT narrowing: nearest even, saturating), f16/bf16 -> i32 and
i32 -> f16 through f32; not i32 -> bf16, not i8.

Reductions into f16 / bf16 targets (`s: f16` with `s += x`): the IR rounds the accumulator
to its dtype after every step; no vector instruction sums in that order. They are reduced
in f32 instead — the operand widened by an exact `Cast`, one f32 `ReduceSum` (or
`ReduceMax`/`ReduceMin`), the old value added in f32 and the sum rounded once to the target
dtype. That is the exact sum rounded once: at least as accurate as the sequential rounding,
and within the dtype's tolerance of it for the row lengths of staged tiles (the difference
is the sequential sum's own rounding error). `max=`/`min=` are exact either way.
"""

from __future__ import annotations

FLOAT_VEC = ("f16", "f32")  # dtypes with native float vector arithmetic
INT_VEC = ("i32",)  # integer dtypes with native vector arithmetic
INT_OPS = ("+", "-", "*", "max", "min", "neg")  # the integer vector operations (Add .. Min, Muls(-1))
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
            return f"integer division in {dtype} (Div takes half/float)"
        return f"`{op}` of {dtype} (the vector unit has it for half/float only)"
    if dtype == "i8":
        return "vector arithmetic in i8 (Add/Sub/Mul/Max/Min take half/int16_t/float/int32_t)"
    return f"vector arithmetic in {dtype}"


def cast_reason(src: str, dst: str) -> str | None:
    """None when a vector `Cast` (possibly two, through the exact f32) converts `src` to
    `dst` exactly as the IR does (one rounding to nearest even; float -> i32 saturating,
    NaN to 0), else why not. Between floats any pair; f32 <-> i32 directly (Cast
    int32_t <-> float); f16/bf16 -> i32 through the exact f32; i32 -> f16 through f32 (an
    integer that f32 rounds is beyond f16's range either way: inf); not i32 -> bf16 (two
    roundings differ from one), and nothing to or from i8 (int8 Casts exist only with half,
    and the IR computes i8 arithmetic we do not vectorise)."""
    floats = ("f16", "bf16", "f32")
    if src in floats and dst in floats:
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
    if comp in ("i8", "i32"):
        return f"`{op}` into {target} (ReduceSum/ReduceMax/ReduceMin take half/float)"
    if comp not in ("f16", "bf16", "f32"):
        return f"`{op}` into {target}"
    return None


def reduce_dtype(op: str, comp: str) -> str:
    """The dtype the vector reduction runs in: f32 for sums (an f16/bf16 accumulator is
    summed in f32 and rounded once) and for bf16 (no bf16 reductions); else `comp`."""
    return "f32" if op == "+=" or comp == "bf16" else comp
