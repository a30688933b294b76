"""The abstract buffer the capacity model reasons about (independent of the IR).

A `Buffer` is one on-chip allocation as `TPipe::InitBuffer` would make it: `stages` copies
(the queue depth; 2 = double buffering) of `bytes(shape, dtype)` each, in one scope.  A dim
given as a string is a symbolic tile variable (e.g. "kv.j"); `check(..., sizes=...)` binds
it, or the solver chooses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ..dtypes import DTYPE_BYTES
from .errors import InvalidBufferError

# TPositions whose buffers are TQue buffers (counted against the per-position queue limit).
# VECCALC is a TBuf (no queue); GM is not on chip.
NON_QUEUE_POSITIONS = frozenset({"VECCALC", "GM"})

Dim = Union[int, str]
CopyLen = Union[int, str, tuple[Dim, ...]]


@dataclass(frozen=True)
class Buffer:
    """One staged on-chip buffer.

    name:          what the user wrote (shown in explanations).
    scope:         "ub", "l1", "l0a", "l0b", "l0c" (or "gm", ignored by capacity sums).
    dtype:         "f16", "bf16", "f32", "i8", "i32".
    shape:         dims; an int is fixed, a str is a symbolic tile variable.
    stages:        copies allocated (InitBuffer num); 2 = double buffered.
    position:      Ascend C TPosition (VECIN, VECOUT, VECCALC, A1, B1, A2, B2, CO1...).
    cube_operand:  feeds Mmad: every dim must be a multiple of 16 and <= 4095.
    copy_lengths:  element counts of the DataCopy runs into/out of it (int, var name or a
                   tuple of factors); each run's bytes must be a multiple of 32 B, otherwise
                   DataCopyPad is needed (hard error if `pad_allowed` is False).
    pad_allowed:   whether a ragged copy may be lowered to DataCopyPad.
    origin:        what created it ("tile on loop qk.j", "double_buffer on loop kv").
    loc:           source location, for diagnostics.
    live:          (first, last) program points where it is live, inclusive; None = whole
                   kernel.  Only buffers live at the same point share capacity.
    row_align:     when > 0, the innermost dim is padded to a multiple of this many bytes
                   (the lowering pads UB rows to 32 B so every row starts aligned).
    slots:         the allocation holds this many slots of bytes(shape), each rounded to
                   the scope alignment (vector temporaries: one TBuf of n aligned slots).
    tbuf:          allocated as a `TBuf` at `position`, not a queue: the lowering demotes a
                   staged local when its TPosition already holds the queue limit (a
                   double-buffered kernel with five outputs); it takes UB (`stages` halves,
                   used in ping-pong) but no queue slot.
    """

    name: str
    scope: str
    dtype: str
    shape: tuple[Dim, ...]
    stages: int = 1
    position: str | None = None
    cube_operand: bool = False
    copy_lengths: tuple[CopyLen, ...] = ()
    pad_allowed: bool = True
    origin: str = ""
    loc: str | None = None
    live: tuple[int, int] | None = None
    row_align: int = 0
    slots: int = 1
    tbuf: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", self.scope.lower())
        object.__setattr__(self, "shape", tuple(self.shape))
        object.__setattr__(self, "copy_lengths", tuple(
            tuple(c) if isinstance(c, list) else c for c in self.copy_lengths))
        if self.position is not None:
            object.__setattr__(self, "position", self.position.upper())
        if self.dtype not in DTYPE_BYTES:
            raise InvalidBufferError(
                f"buffer {self.name}: unknown dtype {self.dtype!r}",
                f"known dtypes: {', '.join(DTYPE_BYTES)}")
        if not isinstance(self.stages, int) or self.stages < 1:
            raise InvalidBufferError(f"buffer {self.name}: stages must be an int >= 1, "
                                     f"got {self.stages!r}")
        for d in self.shape:
            if isinstance(d, bool) or not isinstance(d, (int, str)):
                raise InvalidBufferError(f"buffer {self.name}: dim {d!r} is not int or str")
            if isinstance(d, int) and d < 1:
                raise InvalidBufferError(f"buffer {self.name}: dim {d} must be >= 1")
            if isinstance(d, str) and not d.strip():
                raise InvalidBufferError(f"buffer {self.name}: empty symbolic dim")
        if not isinstance(self.slots, int) or self.slots < 1:
            raise InvalidBufferError(f"buffer {self.name}: slots must be an int >= 1, "
                                     f"got {self.slots!r}")
        if self.live is not None and (len(self.live) != 2 or self.live[0] > self.live[1]):
            raise InvalidBufferError(f"buffer {self.name}: live must be (first, last), "
                                     f"first <= last")

    @property
    def elem_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def is_queue(self) -> bool:
        """Counts against the per-TPosition queue-buffer limit."""
        return self.position is not None and self.position not in NON_QUEUE_POSITIONS and not self.tbuf

    def symbols(self) -> set[str]:
        """Symbolic dims used by the shape and the copy lengths."""
        out = {d for d in self.shape if isinstance(d, str)}
        for c in self.copy_lengths:
            parts = c if isinstance(c, tuple) else (c,)
            out.update(p for p in parts if isinstance(p, str))
        return out

    def shape_text(self, env: dict[str, int] | None = None) -> str:
        """`128x64`, or `kv.jx64` / `128x64` with `env` substituted."""
        env = env or {}
        dims = "x".join(str(env.get(d, d)) if isinstance(d, str) else str(d) for d in self.shape)
        return f"{self.slots} slots of {dims}" if self.slots > 1 else dims
