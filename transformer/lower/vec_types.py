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
