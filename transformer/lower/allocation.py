"""What the emitted plan allocates on chip, read back from the lowering itself: the input of
the capacity model (`transformer.capacity.kernel_buffers`), so the proof covers exactly what
the emitted kernel allocates — every local's queue depth and row padding, the locals moved
to the GM workspace, and per phase the vector temporaries (`temporaries.py`), including what
a nest needed when it fell back to scalar code for lack of UB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from .lower import Lowering
from .plan import KernelPlan
from ..targets import Target


@dataclass(frozen=True)
class PhaseTemporaries:
    """The temporaries of one phase (one top-level nest, or a run of top-level statements).

    allocated: bytes of the phase's `tmpBuf` TBuf (the largest need of its vectorised nests).
    need:      bytes the phase would need to vectorise every nest that wants to (>= allocated;
               larger when a nest fell back to scalar code for lack of UB).
    nests:     (nest name, bytes) of every nest with temporaries, vectorised or not.
    shape/slots: the nest with the largest need: elements per slot ((n,) for a row, (rows,
               n) for a collapsed 2-D nest) and slot count.
    """

    phase: int
    label: str
    first: int  # first and last top-level statement of the phase
    last: int
    allocated: int
    need: int
    shape: tuple[int, ...]
    slots: int
    nests: tuple[tuple[str, int], ...]
    purposes: tuple[str, ...]
    api_temp: bool


@dataclass(frozen=True)
class LocalAllocation:
    """How the lowering allocates one `local`."""

    name: str
    phase: int
    depth: int
    kind: str  # "que" (TQue) or "buf" (TBuf)
    nbytes: int  # bytes of one buffer, before the 32 B InitBuffer rounding
    padded: bool  # rows padded to 32 B (physical strides differ from dense)


@dataclass
class UbAllocation:
    """What the emitted plan allocates on chip, per phase (see the module docstring)."""

    locals: dict[str, LocalAllocation] = field(default_factory=dict)
    demoted: dict[str, str] = field(default_factory=dict)  # local -> why it lives in GM
    tbufs: dict[str, str] = field(default_factory=dict)  # staged local -> why a TBuf, not a queue
    temporaries: list[PhaseTemporaries] = field(default_factory=list)
    phase_range: dict[int, tuple[int, int]] = field(default_factory=dict)
    api_temp: bool = False  # some nest's instructions take the UB API temp area


def ub_allocation(kernel: ir.Kernel, target: Target | None = None) -> UbAllocation:
    """Lower `kernel` (instruction selection on) and report its on-chip allocation.

    Raises `LoweringError` for a kernel the code generator cannot lower. Spreading over the
    cores changes no on-chip buffer, so it is not decided here (`spread.py`)."""
    low = Lowering(kernel, target, spread=False)
    low.bank_place = False  # pads only move buffers within free UB: the allocation is the same without them
    plan = low.run()
    return allocation_of(plan, low)


def allocation_of(plan: KernelPlan, low: Lowering) -> UbAllocation:
    """The allocation summary of a lowered plan (`low` is the `Lowering` that made it)."""
    out = UbAllocation(demoted=dict(low.demoted), tbufs=dict(low.tbufs), phase_range=dict(low.phase_range),
                       api_temp=any(n.api_temp for n in plan.nests))
    for ph in plan.phases:
        for b in ph.buffers:
            dense = b.strides == _dense(b.shape)
            out.locals[b.name] = LocalAllocation(b.name, ph.index, b.depth, b.kind, b.nbytes,
                                                 not dense)
        needs = [n for n in plan.nests if n.phase == ph.index and n.temp_bytes]
        if not needs and not ph.tmp_bytes:
            continue
        need = max([ph.tmp_bytes] + [n.temp_bytes for n in needs])
        big = max(needs, key=lambda n: n.temp_bytes) if needs else None
        first, last = low.phase_range[ph.index]
        purposes: list[str] = []
        for n in needs:
            purposes.extend(p for p in n.temp_purposes if p not in purposes)
        out.temporaries.append(PhaseTemporaries(
            ph.index, ph.label, first, last, ph.tmp_bytes, need,
            big.temp_shape if big else (0,), big.temp_slots if big else 0,
            tuple((n.nest, n.temp_bytes) for n in needs), tuple(purposes),
            any(n.api_temp for n in needs)))
    return out


def _dense(shape: tuple[int, ...]) -> tuple[int, ...]:
    st = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        st[d] = st[d + 1] * shape[d + 1]
    return tuple(st)
