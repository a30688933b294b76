"""Explicit synchronisation of staged locals that live in a `TBuf` instead of a queue.

A TQue orders its buffer's producer and consumer pipes by itself (EnQue/DeQue make the
consumer wait for the producer, FreeTensor/AllocTensor make the next producer wait for the
consumer).  A `TBuf` does none of that: the lowering demotes a staged local to a TBuf when a
`TPosition` already holds `max_queue_buffers_per_position` queue buffers (a double-buffered
kernel with five outputs: 4 x 2 + 1 > 8), and then every ordering the queue gave must be
written out.  A TBuf has one slot, so each staged iteration touches the same UB bytes:

    CopyIn   MTE2 writes the slot   after V read it in the previous Compute (WAR: V_MTE2)
                                    and, when the local is also copied out, after MTE3 read
                                    it in the previous CopyOut (WAR: MTE3_MTE2)
             V / S read it after    (RAW: MTE2_V at the end of CopyIn; MTE2_S where a
                                    compute stage reads it with GetValue, `_scalar_sync`)
    Compute  V writes the slot      after MTE3 read it in the previous CopyOut (WAR: MTE3_V,
                                    just before the first statement touching it, so the
                                    work before it still overlaps that copy-out; MTE3_S
                                    for SetValue, `_scalar_sync`)
             MTE3 reads it after    (RAW: V_MTE3 at the end of Compute)

Scalar reads need no flag before a later MTE2/MTE3 write: the scalar unit issues those
instructions after it has executed its own.  Off the vector core (cube TBufs in L1) the
lowering keeps whole-pipe barriers.  The cost: a TBuf local is single-buffered, so its
copies do not overlap the compute that touches it; the queue locals still do.
"""

from __future__ import annotations

import re

from .plan import Buffer, Line


def flag_pair(event: str, depth: int = 0) -> list[Line]:
    """`SetFlag` + `WaitFlag` of one hard event (e.g. "MTE3_V"): the second pipe waits for
    everything the first pipe was given so far."""
    return [Line(f"SetFlag<HardEvent::{event}>(0);", depth), Line(f"WaitFlag<HardEvent::{event}>(0);", depth)]


def explicit(b: Buffer | None, core: str) -> bool:
    """Whether `b` is a UB TBuf on a vector core (flags); other TBufs use barriers."""
    return b is not None and b.kind == "buf" and b.scope == "ub" and core == "vec"


def before_load(b: Buffer, core: str) -> list[Line]:
    """Lines before an MTE2 copy into TBuf `b`: the previous iteration's readers are done."""
    if not explicit(b, core):
        return [Line("PipeBarrier<PIPE_ALL>();")]
    return flag_pair("V_MTE2") + (flag_pair("MTE3_MTE2") if "out" in b.roles else [])


def after_loads(bufs: list[Buffer], core: str) -> list[Line]:
    """Lines at the end of a CopyIn that loaded the TBufs `bufs`: compute reads them next."""
    if not bufs:
        return []
    if all(explicit(b, core) for b in bufs):
        return flag_pair("MTE2_V")
    return [Line("PipeBarrier<PIPE_ALL>();")]


def before_writes(body: list[Line], bufs: list[Buffer], core: str, start: int) -> list[Line]:
    """`body` (a Compute stage) with V waiting for MTE3 before the first top-level statement
    at or after `start` that touches one of `bufs` (TBufs the previous CopyOut read)."""
    if not bufs:
        return body
    touch = re.compile(r"\b(" + "|".join(re.escape(b.tensor) for b in bufs) + r")\b")
    first = next((i for i in range(start, len(body)) if touch.search(body[i].text)), None)
    if first is None:
        return body
    while first > start and body[first].depth > 0:  # back to the statement's opening line
        first -= 1
    sync = flag_pair("MTE3_V") if all(explicit(b, core) for b in bufs) else [Line("PipeBarrier<PIPE_ALL>();")]
    return body[:first] + sync + body[first:]
