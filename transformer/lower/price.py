"""Cycles of typed instructions (`instr.py`) on the target's timing facts, without running them.

Why: instruction selection sometimes has two correct plans for one loop and must pick the
cheaper before anything is compiled — a row loop's statistics per row (a count-form
reduction, a V -> S flag and a scalar read per row) or over the whole tile (`rows2d.py`: a
few mask/repeat instructions over all rows). The price is the emulator timing model's
formula (`transformer/emulator/include/ascx_emu/timing.h`, `tm::vec`), on the same facts
(`transformer/targets/_timing.py`, `timing_*`):

- a vector instruction costs its head (`timing_v_instr_cycles`) plus `timing_v_repeat_cycles`
  per 256 B repeat (count form: `ceil(bytes / 256)` of the widest operand; mask/repeat form:
  its repeat count), plus by its pricing class in the instruction table (`itable.py`)
  `timing_v_transc_repeat_cycles` per repeat for Exp/Ln/Sqrt/Rsqrt/Div, the extra head of
  reductions (`timing_v_reduce_instr_cycles`) and of Cast (`timing_v_cast_instr_cycles`), and the count-form tail (`timing_v_count_tail_cycles`) when
  its bytes are not a multiple of 256;
- a V -> S round trip (`Flag`) stalls the vector pipe for `timing_sync_latency_cycles` and the
  scalar read after it (`ScalarStep`: `timing_s_local_access_cycles` per GetValue/SetValue);
- a `Loop` costs its body times its trip count.

It is an estimate for ranking two plans of the same loop (the pipes' overlap is not
modelled: within a row loop with round trips nothing overlaps anyway), never a reported time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import ir
from .instr import Flag, Loop, Placed, RangeFill, ScalarStep, VecOp
from .itable import TABLE, cost_class

if TYPE_CHECKING:
    from ..targets import Target

TRANSCENDENTAL = frozenset(n for n, i in TABLE.items() if i.cost == "transc")  # the table's pricing classes
_ARITH = re.compile(r"^[0-9+\-*/() ]+$")


def _number(x: int | str, default: int) -> int:
    """`x` as an integer: a C++ expression of literals is evaluated, anything else (a
    run-time count) is `default` (the largest value it takes)."""
    if isinstance(x, int):
        return x
    s = x.strip()
    if _ARITH.match(s):
        try:
            return int(eval(s.replace("/", "//"), {"__builtins__": {}}))  # digits and + - * / ( ) only
        except (SyntaxError, ZeroDivisionError):
            return default
    return default


class Pricer:
    """Prices items on `target`'s timing facts; `subst` maps a run-time C++ count (a tile
    tail's row count) to the largest value it takes."""

    def __init__(self, target: "Target", subst: dict[str, int] | None = None, default: int = 1) -> None:
        def fact(name: str) -> float:
            return float(target.value(name))

        self.instr = fact("timing_v_instr_cycles")
        self.repeat = fact("timing_v_repeat_cycles")
        self.transc = fact("timing_v_transc_repeat_cycles")
        self.reduce = fact("timing_v_reduce_instr_cycles")
        self.cast = fact("timing_v_cast_instr_cycles")
        self.tail = fact("timing_v_count_tail_cycles")
        self.sync = fact("timing_sync_latency_cycles")
        self.s_access = fact("timing_s_local_access_cycles")
        self.s_issue = fact("timing_s_issue_cycles")
        self.subst = dict(subst or {})
        self.default = default

    def number(self, x: int | str) -> int:
        if isinstance(x, str):
            for k, v in sorted(self.subst.items(), key=lambda kv: -len(kv[0])):
                x = x.replace(k, str(v))
        return _number(x, self.default)

    def vec(self, op: VecOp) -> float:
        es = max([ir.DTYPE_BYTES.get(op.dst.dtype, 4)] + ([ir.DTYPE_BYTES.get(s.dtype, 4) for s in op.srcs]
                                                          if op.op == "Cast" else []))
        tail = 0.0
        if op.repeat is None:
            nbytes = self.number(op.count) * es
            repeats = -(-nbytes // 256)
            tail = self.tail if nbytes % 256 else 0.0
        else:
            repeats = self.number(op.repeat.times)
        c = self.instr + repeats * self.repeat + tail
        cls = cost_class(op.op)  # the instruction table's pricing class (itable.py)
        if cls == "transc":
            c += repeats * self.transc
        elif cls == "reduce":
            c += self.reduce
        elif cls == "cast":
            c += self.cast
        return c

    def items(self, items: tuple[Placed, ...] | list[Placed]) -> float:
        """Cycles of `items` in order (no overlap between pipes)."""
        total = 0.0
        for p in items:
            it = p.item
            if isinstance(it, VecOp):
                total += self.vec(it)
            elif isinstance(it, Flag):
                total += self.sync + 2 * self.s_issue
            elif isinstance(it, ScalarStep):
                total += self.s_issue + self.s_access * max(1, it.code.count("GetValue(") + it.code.count("SetValue("))
            elif isinstance(it, RangeFill):
                total += 2 * (self.instr + self.repeat) + self.s_issue * 8
            elif isinstance(it, Loop):
                trips = max(0, self.number(it.hi) - self.number(it.lo))
                total += trips * self.items(it.body)
        return total
