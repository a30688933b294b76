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
lowering keeps whole-pipe barriers.

**Ping-pong.** A one-slot TBuf does not overlap its copies with the compute that touches
it: the load of tile i + 1 waits for all of tile i's vector work.  A demoted local of a
double-buffered loop (`depth` 2; `ping_pong_loop` says when that is safe) therefore gets a
TBuf of two halves, used by tile parity: tile i works in half `i mod 2`
(`TBuf::GetWithOffset` in each stage; a member flips the half after each tile), and the
write-after-read orderings become split
flags with one event id per half, so the load of tile i + 1 into the other half only waits
for the compute of tile i - 1, which read that half:

    CopyIn(i)    WaitFlag<V_MTE2>(h)    [+ WaitFlag<MTE3_MTE2>(h): copied in and out]
                 loads; SetFlag+WaitFlag<MTE2_V>(0) (RAW, as above)
    Compute(i)   WaitFlag<MTE3_V>(h) before the first statement touching a copied-out half
                 ...; SetFlag+WaitFlag<V_MTE3>(0) (RAW); SetFlag<V_MTE2>(h)
    CopyOut(i)   copies; SetFlag<MTE3_V>(h) [+ SetFlag<MTE3_MTE2>(h)]

with h = base + i mod 2.  Each half's waits and sets alternate, so every flag is balanced
by one `SetFlag` per event id when the phase starts and one `WaitFlag` when it ends
(`PingPong.preset` / `PingPong.drain`; the emulator rejects a flag left set).  Event ids
1..6 (id 0 stays with the one-slot syncs): three ping-pong tile loops per phase at most,
a fourth keeps the one-slot syncs in its two halves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from .. import ir
from .plan import Buffer, Line

MAX_PING_PONG_EVENT = 7  # event ids are 0..7; id 0 is the one-slot syncs'


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


def before_writes(body: list[Line], bufs: list[Buffer], core: str, start: int,
                  sync: list[Line] | None = None) -> list[Line]:
    """`body` (a Compute stage) with V waiting for MTE3 before the first top-level statement
    at or after `start` that touches one of `bufs` (TBufs the previous CopyOut read); `sync`
    replaces the flag pair (the ping-pong wait)."""
    if not bufs:
        return body
    touch = re.compile(r"\b(" + "|".join(re.escape(b.tensor) for b in bufs) + r")\b")
    first = next((i for i in range(start, len(body)) if touch.search(body[i].text)), None)
    if first is None:
        return body
    while first > start and body[first].depth > 0:  # back to the statement's opening line
        first -= 1
    if sync is None:
        sync = flag_pair("MTE3_V") if all(explicit(b, core) for b in bufs) else [Line("PipeBarrier<PIPE_ALL>();")]
    return body[:first] + sync + body[first:]


# --------------------------------------------------------------------------------------
# ping-pong TBufs (module docstring)


def half_bytes(b: Buffer) -> int:
    """Bytes of one half of a ping-pong TBuf (32 B aligned, so the second half is too)."""
    return -(-b.nbytes // 32) * 32


def ping_pong_loop(stmts: tuple[ir.Stmt, ...], name: str, decls: dict[str, ir.TensorDecl],
                   split_stages: Callable[..., Any]) -> bool:
    """Whether local `name` can be a ping-pong TBuf: every copy of it is a GM load at the
    start or a GM store at the end of the body of one `@pipeline(stages >= 2)` loop (its
    CopyIn / CopyOut stages: `split_stages` is `lower.split_stages`), and nothing outside
    that body touches it."""
    def touches(c: ir.Stmt) -> bool:
        return isinstance(c, ir.Copy) and name in (c.src.tensor, c.dst.tensor)

    loops = [s for s in ir.iter_loops(stmts) if any(touches(c) for c in s.body)]
    if len(loops) != 1:
        return False
    loop = loops[0]
    ann = loop.annotation("pipeline")
    if ann is None or int(ann.get("stages", 2) or 2) < 2:
        return False
    st = split_stages(loop.body, decls)
    if st is None:
        return False
    gm = {"input", "output", "temp"}
    staged = [c for c in st.copy_in if c.dst.tensor == name and decls[c.src.tensor].kind in gm] + \
             [c for c in st.copy_out if c.src.tensor == name and decls[c.dst.tensor].kind in gm]
    if len(staged) != sum(touches(c) for c in ir.iter_stmts(stmts)):
        return False

    def outside(body: tuple[ir.Stmt, ...]) -> bool:
        for s in body:
            if s is loop:
                continue
            if isinstance(s, ir.For) and any(x is loop for x in ir.iter_stmts(s.body)):
                if name in ir.stmt_names(s) or outside(s.body):
                    return True
            elif name in ir.names_used((s,)):
                return True
        return False

    return not outside(stmts)


@dataclass
class PingPong:
    """The ping-pong TBufs of one staged block (the body of a tile loop), the member `var`
    holding the half of the current tile (0 or 1, flipped after the block's last stage: a
    loop variable's parity would repeat a half where an inner tile loop restarts), and the
    event ids `base` and `base + 1` of the two halves."""

    bufs: list[Buffer]
    var: str
    base: int

    @property
    def ins(self) -> list[Buffer]:
        return [b for b in self.bufs if "in" in b.roles]

    @property
    def outs(self) -> list[Buffer]:
        return [b for b in self.bufs if "out" in b.roles]

    def events(self) -> list[str]:
        """The write-after-read events this block's halves need (module docstring)."""
        return ((["V_MTE2"] if self.ins else []) + (["MTE3_V"] if self.outs else [])
                + (["MTE3_MTE2"] if any("out" in b.roles for b in self.ins) else []))

    def _flag(self, op: str, event: str) -> Line:
        return Line(f"{op}<HardEvent::{event}>({self.base} + {self.var});")

    def select(self, bufs: list[Buffer]) -> list[Line]:
        """The tensors of `bufs` on this tile's half (the first lines of each stage, for the
        buffers it touches: a prefetched CopyIn of tile i + 1 runs before Compute(i))."""
        return [Line(f"{b.tensor} = {b.holder}.GetWithOffset<{b.ctype}>({half_bytes(b) // _esize(b)}, "
                     f"{self.var} * {half_bytes(b)});") for b in bufs]

    def before_loads(self) -> list[Line]:
        """Before the first load into a half: its previous readers (tile i - 2) are done."""
        return [self._flag("WaitFlag", e) for e in self.events() if e.endswith("MTE2")]

    def before_writes(self) -> list[Line]:
        """Before V first touches a copied-out half: tile i - 2's CopyOut read it."""
        return [self._flag("WaitFlag", "MTE3_V")] if self.outs else []

    def after_compute(self) -> list[Line]:
        return [self._flag("SetFlag", "V_MTE2")] if self.ins else []

    def after_copy_out(self) -> list[Line]:
        return [self._flag("SetFlag", e) for e in self.events() if e.startswith("MTE3")]

    def advance(self) -> list[Line]:
        """After the block's last stage: the next tile uses the other half."""
        return [Line(f"{self.var} ^= 1;")]

    def preset(self) -> list[Line]:
        """At the phase start: the first tile in half 0, each half's flags set once (nothing
        read them yet)."""
        return [Line(f"{self.var} = 0;")] + [Line(f"SetFlag<HardEvent::{e}>({self.base + h});")
                                            for e in self.events() for h in (0, 1)]

    def drain(self) -> list[Line]:
        """At the phase end: the last sets waited, so every flag is balanced."""
        return [Line(f"WaitFlag<HardEvent::{e}>({self.base + h});") for e in self.events() for h in (0, 1)]


def _esize(b: Buffer) -> int:
    return ir.DTYPE_BYTES[b.dtype]
