"""The UB the lowering allocates besides the kernel's `local`s, and the one rule deciding
whether it fits — shared by the lowering and the capacity model.

Vector instruction selection (`vector.py`) needs work space the IR does not declare:

* **expression temporaries** — intermediate vectors of an expression (`exp(-x)` needs one
  for `-x`; a `Duplicate`d scalar divisor needs one),
* **Cast staging** — an f16 operand widened to f32 (`f32(a[t, h])`) before arithmetic,
* **reduction work areas** — `ReduceMax/Min/Sum` write their result to one slot and use a
  second as their work tensor,
* the target's **API temp reserve** (`Target.api_temp_bytes`) when an emitted instruction
  takes the shared temp area implicitly (`API_TEMP_INSTRUCTIONS`).

Each temporary is one *slot* of `slot_bytes(n)` (n elements of f32, rounded to 32 B so every
slot starts aligned); a nest needs `slots x slot_bytes` and a phase allocates one `VECCALC`
TBuf (`tmpBuf<i>`) of the largest need of its nests.  A nest is vectorised only when
`fits(...)` holds: the phase's UB locals (each `roundup(bytes, 32) x depth`, as allocated)
plus the temporaries stay within UB usable bytes (minus the API temp reserve when the nest
needs it).  Otherwise it falls back to scalar code and the lowering records the need
(`NestChoice.temp_bytes`, `NestChoice.capacity`).

`allocation.ub_allocation(kernel, target)` runs the lowering itself and reads back what it
allocated and what it needed: that is how `transformer.capacity.kernel_buffers` models the
temporaries ("vector temporaries of nest `h`"), so the capacity proof and the emitted code
cannot disagree (one computation, not two copies of a rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .itable import API_TEMP

if TYPE_CHECKING:
    from .lower import PhaseEmitter

SLOT_ALIGN = 32
# Instructions that use the target's shared UB temp area implicitly (no work tensor
# argument): Compare/Select-style APIs (the target fact `api_temp_bytes` names them).
# The vector selector emits them for `select` on data (`vector._Sel.select_data`); reductions
# pass an explicit work slot instead.
API_TEMP_INSTRUCTIONS: frozenset[str] = API_TEMP  # the instruction table's `api_temp` rows (itable.py)


def slot_bytes(n: int) -> int:
    """Bytes of one temporary slot for `n` elements: f32-sized (the widest vector type),
    rounded up to 32 B so the next slot starts aligned."""
    return -(-n * 4 // SLOT_ALIGN) * SLOT_ALIGN


def ub_locals_bytes(pe: "PhaseEmitter") -> int:
    """UB the phase's locals occupy: each buffer rounded to 32 B (InitBuffer) x its depth."""
    return sum(-(-b.nbytes // 32) * 32 * b.depth for b in pe.buffers.values() if b.scope == "ub")


def ub_limit(pe: "PhaseEmitter", instrs: tuple[str, ...] | list[str] = ()) -> int:
    """UB usable for locals + temporaries of a nest emitting `instrs`."""
    limit = pe.low.scope_cap["ub"]
    if needs_api_temp(instrs):
        limit -= int(pe.low.target.api_temp_bytes)
    return limit


def needs_api_temp(instrs: Any) -> bool:
    return any(i in API_TEMP_INSTRUCTIONS for i in instrs)


def fits(pe: "PhaseEmitter", need: int, instrs: tuple[str, ...] | list[str] = ()) -> bool:
    """The one rule: do `need` bytes of temporaries fit next to the phase's locals (the
    phase TBuf grows to the largest need of its nests)?"""
    return ub_locals_bytes(pe) + max(need, pe.ph.tmp_bytes) <= ub_limit(pe, instrs)


def over_capacity(pe: "PhaseEmitter", need: int, instrs: Any = ()) -> str:
    """The fallback reason the lowering reports when `fits` fails."""
    if needs_api_temp(instrs):
        return (f"{need} B of vector temporaries and the {int(pe.low.target.api_temp_bytes)} B "
                f"API temp area do not fit in UB")
    return f"{need} B of vector temporaries do not fit in UB"
