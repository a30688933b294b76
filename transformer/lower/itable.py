"""The vector instruction table: one row per Ascend C vector API the lowering emits.

Why: the facts about an instruction were spread over the modules that use them — which
ones are transcendental (the price, `price.py`), which take the shared API temp area (the
UB capacity rule, `temporaries.py`), which need a work tensor, how many repeats one call
takes, which integer operations have an instruction (type selection, `vec_types.py`).
One table, read by each of them, keeps them from disagreeing; a test checks its
pricing classes against the emulator's (`vec_class_of` in
`transformer/emulator/include/ascx_emu/ops.h`, the cost tags of `tm::vec` in `timing.h`)
and that every instruction the lowering emits has a row.

Columns:
- `cost`: the timing model's pricing class — `simple`, `transc` (transcendental and
  division: an extra cost per repeat), `reduce` (an extra head), `cast` (an extra head);
- `dtypes`: element types the API takes on Atlas A2 (the public API pages, as
  `vec_types.py` quotes them; "" for a cast or a bit-pattern move, which `vec_types`
  decides per pair);
- `forms`: `count` (a count of elements) and/or `repeat` (mask / repeat times / strides);
- `api_temp`: the instruction takes the shared API temp area implicitly (reserved by
  `temporaries.py` when a nest uses one);
- `work`: its count form needs a work tensor (the reductions).

`MAX_REPEAT` is the repeat limit of the mask/repeat form (an 8-bit repeat count).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPEAT = 255
COSTS = ("simple", "transc", "reduce", "cast")


@dataclass(frozen=True)
class Instr:
    name: str
    cost: str
    dtypes: tuple[str, ...]
    forms: tuple[str, ...] = ("count", "repeat")
    api_temp: bool = False
    work: bool = False


_ARITH = ("f16", "i16", "f32", "i32")  # Add .. Mins: half/int16_t/float/int32_t
_FLOAT = ("f16", "f32")  # Div, Exp, Ln, Sqrt, Rsqrt, Abs, reductions, Compare: half/float

TABLE: dict[str, Instr] = {i.name: i for i in (
    *(Instr(n, "simple", _ARITH) for n in ("Add", "Sub", "Mul", "Max", "Min", "Adds", "Muls", "Maxs", "Mins")),
    Instr("Div", "transc", _FLOAT),
    *(Instr(n, "transc", _FLOAT) for n in ("Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal")),
    Instr("Abs", "simple", _FLOAT),
    Instr("Duplicate", "simple", _ARITH),
    Instr("Cast", "cast", ()),
    *(Instr(n, "reduce", _FLOAT, ("count",), work=True) for n in ("ReduceMax", "ReduceMin", "ReduceSum")),
    *(Instr(n, "reduce", _FLOAT, ("repeat",)) for n in ("WholeReduceMax", "WholeReduceMin", "WholeReduceSum")),
    Instr("Compare", "simple", _FLOAT, api_temp=True),
    Instr("CompareScalar", "simple", _FLOAT, api_temp=True),
    Instr("Select", "simple", _FLOAT, api_temp=True),
    Instr("And", "simple", ("i16", "u16"), ("count",)),
    Instr("Or", "simple", ("i16", "u16"), ("count",)),
    Instr("CreateVecIndex", "simple", ("i32",), ("count",)),
    Instr("Brcb", "simple", ("f16", "f32", "i32"), ("repeat",)),
    Instr("Gather", "simple", ("f16", "f32", "i32"), ("count",)),
    Instr("Axpy", "simple", _FLOAT, ("count",)),  # dst += src * scalar: (half, half), (float, float), (float, half)
    Instr("Copy", "simple", ("f16", "i16", "f32", "i32"), ("repeat",)),
)}


def instr(name: str) -> Instr:
    """The row of `name`; an instruction missing from the table is a lowering bug."""
    try:
        return TABLE[name]
    except KeyError:
        raise KeyError(f"vector instruction `{name}` has no row in lower/itable.py") from None


def cost_class(name: str) -> str:
    """The pricing class of `name`. An instruction without a row (tests/lower/test_itable.py
    requires one for all that the lowering emits) gets the emulator's own rule: a `Reduce*`
    or `WholeReduce*` name is `reduce`, anything else `simple`."""
    row = TABLE.get(name)
    if row is not None:
        return row.cost
    return "reduce" if name.startswith(("Reduce", "WholeReduce")) else "simple"


API_TEMP: frozenset[str] = frozenset(n for n, i in TABLE.items() if i.api_temp)

__all__ = ["API_TEMP", "COSTS", "Instr", "MAX_REPEAT", "TABLE", "cost_class", "instr"]
