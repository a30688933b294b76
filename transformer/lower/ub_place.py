"""UB placement: where each UB buffer of a phase starts, chosen to avoid bank conflicts.

`TPipe::InitBuffer` lays a phase's buffers out one after another from UB byte 0 (each rounded
to 32 B), so with tiles of whole 512 B multiples every buffer starts in bank group 0 and in
the first 64 KB section. A vector instruction whose operands start there pays extra beats
per repeat (docs/timing.md, "UB banks", from the public page "Avoiding Bank Conflicts in the
Unified Buffer"): two operands read in one repeat collide when they use the same bank group
(row `u = addr / 32` is in group `u % groups`), a read and a write when they use the same bank
(the same group and the same `groups * depth`-row section). The public sample's fix is a
layout: the second source 256 B further (the other half of the groups) and the destination
in another 64 KB section.

This module makes that layout from data. A `Slab` is one InitBuffer (slots x bytes); a `Hot`
is one vector instruction as the bank model sees it (each operand's slab, byte offset,
blocks per repeat, block and repeat strides, read or write) and its repeat count. `place`
chooses, slab by slab in allocation order, a pad in front of it (a multiple of 32 B, within
the phase's free UB) that minimises the extra beats of the instructions whose slabs are all
placed; the emitter allocates each pad as a TBuf of its own just before the slab
(`pad_line`). An in-place instruction (dst == src) reads and writes one bank under any
layout, so it costs the same for every choice. `repeat_beats` is the emulator's rule
(`ascx_emu/timing.h` `bank_extra_beats`); `tests/lower/test_ub_place.py` checks it on the
public page's examples and an emitted kernel's profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..ir import DTYPE_BYTES

if TYPE_CHECKING:
    from ..targets import Target
    from .instr import VecOp

#: Samples of an instruction's repeats the cost looks at (its operands may cross a section).
#: Pads are tried in steps of STEP bytes (one bank row).
STEP = 32
SAMPLES = 8


@dataclass(frozen=True)
class Banks:
    """The UB bank layout (target facts `ub_bank_*`, documented)."""

    groups: int = 16
    per_group: int = 3
    row: int = 32
    depth: int = 128

    @property
    def section(self) -> int:
        """Rows of one bank per group: the span after which a group's next bank starts."""
        return self.groups * self.depth

    @classmethod
    def of(cls, target: "Target | str | None") -> "Banks | None":
        """The target's bank layout, or None when it has none (no placement then)."""
        if target is None or isinstance(target, str) or not target.has("ub_bank_groups"):
            return None
        return cls(int(target.value("ub_bank_groups")), int(target.value("ub_banks_per_group")),
                   int(target.value("ub_bank_row_bytes")), int(target.value("ub_bank_depth")))


@dataclass(frozen=True)
class Slab:
    """One InitBuffer: `slots` buffers of `nbytes` (already rounded to 32 B) each."""

    name: str
    nbytes: int
    slots: int = 1


@dataclass(frozen=True)
class Access:
    """One operand of a vector instruction: `blocks` 32 B blocks per repeat, `blk` rows between
    blocks and `rep` rows between repeats, from byte `offset` of slab `slab`."""

    slab: str
    offset: int
    blocks: int
    write: bool
    blk: int = 1
    rep: int = 8


@dataclass(frozen=True)
class Hot:
    """One vector instruction: its operands and how many repeats it runs."""

    accesses: tuple[Access, ...]
    repeats: int
    what: str = ""


def repeat_beats(banks: Banks, rows: Iterable[tuple[int, bool]]) -> int:
    """Beats of one repeat touching `rows` (row index, is a write): the busiest group's reads,
    its writes, or the busiest bank's reads + writes; a row read (written) twice counts once."""
    seen: set[tuple[int, bool]] = set()
    rg: dict[int, int] = {}
    wg: dict[int, int] = {}
    ab: dict[int, int] = {}
    beats = 1
    for u, w in rows:
        if (u, w) in seen:
            continue
        seen.add((u, w))
        g = u % banks.groups
        b = (u // banks.section) % banks.per_group * banks.groups + g
        side = wg if w else rg
        side[g] = side.get(g, 0) + 1
        ab[b] = ab.get(b, 0) + 1
        beats = max(beats, side[g], ab[b])
    return beats


def extra_beats(banks: Banks, hot: Hot, start: dict[str, int], slabs: dict[str, Slab]) -> float:
    """Extra beats of `hot` with slab `s` at UB byte `start[s]`, averaged over the slots its
    queues take in turn (slot i of every queue together) and sampled over its repeats."""
    turns = max(slabs[a.slab].slots for a in hot.accesses)
    step = max(1, hot.repeats // SAMPLES)
    samples = range(0, hot.repeats, step)
    total = 0.0
    for t in range(turns):
        for r in samples:
            rows = []
            for a in hot.accesses:
                s = slabs[a.slab]
                u0 = (start[a.slab] + (t % s.slots) * s.nbytes + a.offset) // banks.row + r * a.rep
                rows.extend((u0 + k * a.blk, a.write) for k in range(a.blocks))
            total += repeat_beats(banks, rows) - 1
    return total * hot.repeats / (turns * len(samples))


def place(banks: Banks, slabs: list[Slab], hots: list[Hot], free: int) -> list[int]:
    """Pads (bytes, multiples of 32) in front of each slab, at most `free` in all.

    Greedy in allocation order: each slab takes the pad (a shift within the next 512 B, or a
    move to the next bank section plus such a shift) that minimises the extra beats of the
    instructions using it, over their operands placed so far; the smallest pad on a tie; the
    first slab stays at 0."""
    span = banks.groups * banks.row  # bytes of one row across all groups
    sect = banks.section * banks.row  # bytes of one bank section
    by_name = {s.name: s for s in slabs}
    order = {s.name: i for i, s in enumerate(slabs)}
    merged: dict[tuple[Access, ...], int] = {}  # the same operands: one entry, repeats summed
    for h in hots:
        if h.repeats > 0 and all(a.slab in order for a in h.accesses):
            merged[h.accesses] = merged.get(h.accesses, 0) + h.repeats
    hots = [Hot(acc, n) for acc, n in merged.items()]
    memo: dict[tuple[object, ...], float] = {}

    def beats(h: Hot, st: dict[str, int]) -> float:
        key = (h.accesses, h.repeats, *(st[a.slab] for a in h.accesses))
        if key not in memo:
            memo[key] = extra_beats(banks, h, st, by_name)
        return memo[key]
    def options(cur: int, left: int) -> list[int]:
        to_sect = -cur % sect
        out = list(range(0, span, STEP)) + ([to_sect + k for k in range(0, span, STEP) if to_sect + k >= span] if to_sect else [])
        return [p for p in out if p <= left]

    def starts(pads: list[int]) -> dict[str, int]:
        out, cur = {}, 0
        for s, p in zip(slabs, pads):
            out[s.name] = cur + p
            cur += p + s.nbytes * s.slots
        return out

    def total(pads: list[int]) -> float:
        st = starts(pads)
        return sum(beats(h, st) for h in hots)

    pads = [0] * len(slabs)
    start: dict[str, int] = {}
    cur, left = 0, free
    for i, s in enumerate(slabs):
        # the instructions touching this slab, with the operands in slabs placed so far
        mine = [Hot(tuple(a for a in h.accesses if order[a.slab] <= i), h.repeats, h.what) for h in hots
                if any(order[a.slab] == i for a in h.accesses)]
        best: tuple[float, int] = (float("inf"), 0)
        for p in (options(cur, left) if i > 0 and mine else [0]):
            start[s.name] = cur + p
            c = sum(beats(h, start) for h in mine)
            if c < best[0] - 1e-9:
                best = (c, p)
        pads[i] = best[1]
        start[s.name] = cur + best[1]
        left -= best[1]
        cur += best[1] + s.nbytes * s.slots
    # one pass of corrections: a slab's pad again, the others fixed, on every instruction
    # (the greedy step saw only the operands placed before it)
    best_total = total(pads)
    used = [sum(s.nbytes * s.slots for s in slabs[:i]) + sum(pads[:i]) for i in range(len(slabs))]
    for i in range(1, len(slabs)):
        room = free - sum(pads) + pads[i]
        for p in options(used[i], room):
            trial = pads[:i] + [p] + pads[i + 1:]
            c = total(trial)
            if c < best_total - 1e-9:
                best_total, pads = c, trial
        used = [sum(s.nbytes * s.slots for s in slabs[:k]) + sum(pads[:k]) for k in range(len(slabs))]
    return pads if best_total < total([0] * len(slabs)) - 1e-9 else [0] * len(slabs)


# ---- from the typed instructions of the vector selector (instr.VecOp) ---------------------

_INT_SUM = re.compile(r"^\s*\d+(\s*\+\s*\d+)*\s*$")
# the instructions the emulator's bank model prices (count forms; repeat forms with strides)
_PRICED = {"Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Adds", "Muls", "Maxs", "Mins",
           "Exp", "Ln", "Abs", "Reciprocal", "Sqrt", "Rsqrt", "Relu", "Not", "Cast"}


def _const(text: str | int) -> int | None:
    """The value of a constant C++ sum (`3088 + 64`), else None."""
    if isinstance(text, int):
        return text
    if _INT_SUM.match(text):
        return sum(int(x) for x in text.split("+"))
    return None


def _esize(dtype: str) -> int | None:
    """Bytes of an operand's element (IR dtypes, and the mask types `u8` / `u16` ...)."""
    if dtype in DTYPE_BYTES:
        return DTYPE_BYTES[dtype]
    m = re.fullmatch(r"[a-z]+(\d+)", dtype)
    return int(m.group(1)) // 8 if m and int(m.group(1)) % 8 == 0 else None


def hot_of(op: "VecOp", slab_of: dict[str, str], guess_repeats: int) -> Hot | None:
    """`op` as the bank model sees it, or None when an operand is not in a known slab or its
    offset is not a constant. An operand's base maps to a slab through `slab_of` (the
    LocalTensor expression, or its name before `.`); a run-time count or repeat count (a tile
    tail) takes `guess_repeats`."""
    if op.op not in _PRICED:
        return None
    located = []
    for o, w in [(op.dst, True), *((s, False) for s in op.srcs)]:
        slab = slab_of.get(o.base) or slab_of.get(o.base.split(".")[0])
        off, es = _const(o.offset), _esize(o.dtype)
        if slab is None or off is None or not es:
            return None
        located.append((slab, off * es, es, w))
    widest = max(e for _, _, e, _ in located)
    if op.repeat is None:
        n = _const(op.count)
        repeats = -(-n * widest // 256) if n is not None else guess_repeats
        acc = tuple(Access(sl, off, max(1, 8 * e // widest), w, 1, max(1, 8 * e // widest)) for sl, off, e, w in located)
        return Hot(acc, repeats, op.op)
    r = op.repeat
    times = _const(r.times)
    blocks = min(8, -(-r.mask * located[0][2] // 32))
    acc = tuple(Access(sl, off, blocks, w, r.blk[k], r.rep[k]) for k, (sl, off, _e, w) in enumerate(located))
    return Hot(acc, times if times is not None else guess_repeats, op.op)


def _vecops(items: Iterable[object]) -> Iterable["VecOp"]:
    """The VecOps of a nest's placed items, loops included."""
    from .instr import Loop, VecOp

    for p in items:
        it = getattr(p, "item", p)
        if isinstance(it, VecOp):
            yield it
        elif isinstance(it, Loop):
            yield from _vecops(it.body)


@dataclass(frozen=True)
class Init:
    """One UB InitBuffer of a phase: its holder, slots, bytes of a slot (rounded to 32 B) and
    the LocalTensor expressions over it."""

    holder: str
    slots: int
    nbytes: int
    tensors: tuple[str, ...]


def phase_pads(banks: Banks | None, inits: list[Init], nest_plans: Iterable[tuple[object, ...]], free: int) -> list[int]:
    """The pad in front of each of `inits` (UB InitBuffers in allocation order) that keeps the
    bank conflicts of the phase's selected vector instructions (`nest_plans`: the typed items
    of each `NestChoice.plan`) lowest within `free` bytes; all 0 without a bank model."""
    if banks is None or free <= 0 or not inits:
        return [0] * len(inits)
    slabs = [Slab(x.holder, x.nbytes, x.slots) for x in inits]
    slab_of = {t: x.holder for x in inits for t in x.tensors}
    guess = max(1, max(s.nbytes for s in slabs) // 256)
    hots = [h for plan in nest_plans for op in _vecops(plan) if (h := hot_of(op, slab_of, guess)) is not None]
    return place(banks, slabs, hots, free) if hots else [0] * len(inits)


def pad_line(holder: str, nbytes: int, before: str, at: int) -> str:
    """The InitBuffer of a pad TBuf (never read: it only moves the next buffer)."""
    return f"pipe.InitBuffer({holder}, {nbytes});  // UB bank placement (ub_place.py): {before} at UB byte {at}"
