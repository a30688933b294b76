"""Typed vector instructions: what instruction selection (`vector.py`) chooses, as data.

Selection returns a list of `Item`s per nest — `VecOp` (one Ascend C vector API call, in its
count form or its mask/repeat form), `Flag` (a `SetFlag`/`WaitFlag` pair), `ScalarStep` (a
scalar statement of the nest: the combine of a reduction result, a per-row `SetValue`) and
`Loop` (a C++ loop around items, the axpy form of P·V) — or a `Fallback` with its reason.
`render` turns items into C++ `Line`s; it is the only place that writes their text, so a
test can check what was selected (op, dtype, count, repeat form) without reading C++, and
`ascx emit --plan` prints the items (`describe`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .itable import MAX_REPEAT  # the repeat limit of the mask/repeat form (the instruction table)
from .plan import Line

# elements per 32 B block and per 256 B repeat, by dtype size
BLOCK = 32
REPEAT = 256


@dataclass(frozen=True)
class Operand:
    """A `LocalTensor` operand: `base` (a C++ LocalTensor expression) at element `offset`."""

    base: str
    dtype: str
    offset: str = "0"

    def at(self, k: int | str) -> "Operand":
        """The operand `k` elements further."""
        if k == 0 or k == "0":
            return self
        off = str(k) if self.offset == "0" else f"{self.offset} + {k}"
        return Operand(self.base, self.dtype, off)

    def cpp(self) -> str:
        return self.base if self.offset == "0" else f"{self.base}[{self.offset}]"


@dataclass(frozen=True)
class Repeat:
    """The mask/repeat form: `mask` active elements per repeat, `times` repeats, block and
    repeat strides (32 B units) per operand, destination first."""

    mask: int
    times: int | str  # a C++ expression for a run-time row count (a tile tail)
    blk: tuple[int, ...]
    rep: tuple[int, ...]


@dataclass(frozen=True)
class VecOp:
    """One vector API call. `count` > 0: the count form; `repeat`: the mask/repeat form."""

    op: str
    dst: Operand
    srcs: tuple[Operand, ...] = ()
    scalar: str | None = None  # the scalar operand (Adds, Muls, Duplicate, ...)
    count: int | str = 0  # a C++ expression: the run-time count of a tile tail
    repeat: Repeat | None = None
    round: str = ""  # RoundMode of a Cast
    work: Operand | None = None  # the work tensor of a count-form Reduce*
    mode: str = ""  # CMPMODE / SELMODE of Compare, CompareScalar, Select (after the scalar)

    @property
    def name(self) -> str:
        return self.op

    def cpp(self) -> str:
        args = [self.dst.cpp(), *(s.cpp() for s in self.srcs)]
        if self.work is not None:
            args.append(self.work.cpp())
        if self.round:
            args.append(f"RoundMode::{self.round}")
        if self.scalar is not None:
            args.append(self.scalar)
        if self.mode:
            args.append(self.mode)
        if self.repeat is None:
            args.append(str(self.count))
            return f"{self.op}({', '.join(args)});"
        r = self.repeat
        args += [str(r.mask), str(r.times)]
        if self.op == "Duplicate":
            args += [str(r.blk[0]), str(r.rep[0])]
        elif self.op == "Brcb":  # no mask: each repeat broadcasts 8 elements into 8 blocks
            args = [args[0], args[1], str(r.times), f"BrcbRepeatParams({r.blk[0]}, {r.rep[0]})"]
        elif self.op == "Copy":  # vector Copy: block strides and repeat sizes (32 B units)
            args.append(f"CopyRepeatParams({r.blk[0]}, {r.blk[1]}, {r.rep[0]}, {r.rep[1]})")
        elif self.op in ("WholeReduceSum", "WholeReduceMax", "WholeReduceMin"):
            args += [str(r.rep[0]), str(r.blk[1]), str(r.rep[1])]
            if self.op != "WholeReduceSum":
                args.append("ReduceOrder::ORDER_ONLY_VALUE")
        else:
            kind = "Binary" if len(self.srcs) == 2 else "Unary"
            strides = [*r.blk, *r.rep]
            args.append(f"{kind}RepeatParams({', '.join(map(str, strides))})")
        return f"{self.op}({', '.join(args)});"

    def describe(self) -> str:
        form = f"count {self.count}" if self.repeat is None else \
            f"mask {self.repeat.mask} x {self.repeat.times} repeats, blk {self.repeat.blk} rep {self.repeat.rep}"
        ops = ", ".join(s.cpp() for s in self.srcs)
        extra = (f", {self.scalar}" if self.scalar is not None else "") + (f", {self.mode}" if self.mode else "")
        return f"{self.op} {self.dst.dtype} {self.dst.cpp()} <- {ops}{extra} ({form})"


@dataclass(frozen=True)
class Flag:
    """A `SetFlag`/`WaitFlag` pair of `event` (`V_S`: the scalar unit reads a vector result)."""

    event: str

    @property
    def name(self) -> str:
        return "SetFlag"

    def describe(self) -> str:
        return f"flag {self.event}"


@dataclass(frozen=True)
class ScalarStep:
    """A scalar statement (`op` names what it costs: `GetValue` or `SetValue`)."""

    op: str
    code: str

    @property
    def name(self) -> str:
        return self.op

    def describe(self) -> str:
        return f"scalar {self.code}"


@dataclass(frozen=True)
class Loop:
    """A C++ loop `for (v = lo; v < hi; ++v)` around `body`."""

    var: str
    lo: str
    hi: str
    body: tuple["Placed", ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return "loop"

    def describe(self) -> str:
        return f"loop {self.var} in [{self.lo}, {self.hi})"


@dataclass(frozen=True)
class RangeFill:
    """`dst[lo:hi] = value` for a range known only at run time (`lo`, `hi`: C++ integer
    expressions, clamped to [0, n]): a count-form `Duplicate` over the whole 256 B repeats
    and a mask-form one (bit mask computed by `ascx_range_mask`) for the partial repeat at
    the range's ragged end; `per` elements per repeat. Where the range starts at 0 the
    partial repeat is last (`prefix`), else first."""

    dst: Operand
    value: str
    lo: str
    hi: str
    n: int
    per: int
    prefix: bool

    @property
    def name(self) -> str:
        return "Duplicate"

    def describe(self) -> str:
        return f"Duplicate {self.dst.dtype} {self.dst.cpp()}[{self.lo}:{self.hi}] <- {self.value} (run-time range of {self.n})"

    def cpp_lines(self) -> list[str]:
        d, per, n = self.dst, self.per, self.n
        lo = f"ascx_min<int32_t>({n}, ascx_max<int32_t>(0, {self.lo}))"
        hi = f"ascx_min<int32_t>({n}, ascx_max<int32_t>(0, {self.hi}))"
        if self.prefix:  # [0, hi): whole repeats, then the ragged last one
            return [f"{{ const int32_t ascx_hi = {hi}, ascx_full = ascx_hi / {per} * {per};",
                    f"  if (ascx_full > 0) {{ Duplicate({d.cpp()}, {self.value}, ascx_full); }}",
                    f"  if (ascx_hi > ascx_full) {{ uint64_t ascx_m[2]; ascx_range_mask(0, ascx_hi - ascx_full, ascx_m);",
                    f"    Duplicate({d.at('ascx_full').cpp()}, {self.value}, ascx_m, 1, 1, 8); }} }}"]
        return [f"{{ const int32_t ascx_lo = {lo}, ascx_r0 = ascx_lo / {per} * {per};",
                f"  if (ascx_lo < {n} && ascx_lo > ascx_r0) {{ uint64_t ascx_m[2];",
                f"    ascx_range_mask(ascx_lo - ascx_r0, ascx_min<int32_t>({per}, {n} - ascx_r0), ascx_m);",
                f"    Duplicate({d.at('ascx_r0').cpp()}, {self.value}, ascx_m, 1, 1, 8); }}",
                f"  const int32_t ascx_full = ascx_lo > ascx_r0 ? ascx_r0 + {per} : ascx_r0;",
                f"  if (ascx_full < {n}) {{ Duplicate({d.at('ascx_full').cpp()}, {self.value}, {n} - ascx_full); }} }}"]


Item = VecOp | Flag | ScalarStep | Loop | RangeFill


@dataclass(frozen=True)
class Placed:
    """An item and the IR location it implements."""

    item: Item
    origin: str = ""


@dataclass(frozen=True)
class Fallback:
    """No instruction: the nest runs as scalar code, for `reason`."""

    reason: str
    capacity: bool = False


def names_of(items: list[Placed] | tuple[Placed, ...]) -> list[str]:
    """The instruction names the plan summary lists (first use order)."""
    out: list[str] = []
    for p in items:
        it = p.item
        ns = [n for q in it.body for n in names_of((q,))] if isinstance(it, Loop) else \
            (["SetFlag", "WaitFlag"] if isinstance(it, Flag) else [it.name])
        out.extend(n for n in ns if n not in out)
    return out


def render(items: list[Placed] | tuple[Placed, ...], depth: int) -> list[Line]:
    """C++ lines of `items` at indentation `depth`."""
    out: list[Line] = []
    for p in items:
        it = p.item
        if isinstance(it, VecOp):
            out.append(Line(it.cpp(), depth, p.origin))
        elif isinstance(it, Flag):
            out.append(Line(f"SetFlag<HardEvent::{it.event}>(0);", depth, p.origin))
            out.append(Line(f"WaitFlag<HardEvent::{it.event}>(0);", depth, p.origin))
        elif isinstance(it, ScalarStep):
            out.append(Line(it.code, depth, p.origin))
        elif isinstance(it, RangeFill):
            out.extend(Line(t, depth, p.origin) for t in it.cpp_lines())
        else:
            out.append(Line(f"for (int32_t {it.var} = {it.lo}; {it.var} < {it.hi}; ++{it.var}) {{", depth, p.origin))
            out.extend(render(it.body, depth + 1))
            out.append(Line("}", depth, p.origin))
    return out


ROWS_PER_CALL = 240  # at most 255 repeats; a multiple of 16 so an f16 row vector's next call starts 32 B aligned


def row_chunks(rows: int, cpp: str = "", per_call: int = ROWS_PER_CALL) -> list[tuple[int, int | str]]:
    """(first row, repeat count) of each mask/repeat call over `rows` rows (`cpp`: the C++
    run-time row count of a tail, at most `rows`): one call when they fit 255 repeats."""
    if rows <= 255:
        return [(0, cpp or rows)]
    out: list[tuple[int, int | str]] = []
    for r0 in range(0, rows, per_call):
        out.append((r0, f"ascx_max<int32_t>(0, ascx_min<int32_t>({per_call}, ({cpp}) - {r0}))" if cpp
                    else min(per_call, rows - r0)))
    return out


def whole_reduce(api: str, dst: Operand, src: Operand, mask: int, chunks: list[tuple[int, int | str]],
                 pitch: int, pitch_blocks: int) -> list[VecOp]:
    """`api` (WholeReduceSum / Max / Min) of the first `mask` elements of each row of `src`
    (rows `pitch` elements, `pitch_blocks` 32 B blocks apart), one repeat per row, the results
    contiguous in `dst` (destination repeat stride 1)."""
    return [VecOp(api, dst.at(r0), (src.at(r0 * pitch),), None, 0, Repeat(mask, t, (1, 1), (1, pitch_blocks)))
            for r0, t in chunks]



def repeat_chunks(n: int, dtype_bytes: int, wide_bytes: int | None = None) -> list[tuple[int, int, int]]:
    """Split `n` contiguous elements into mask/repeat calls: (element offset, mask, repeats);
    a repeat covers 256 B of the widest operand, at most 255 repeats per call, the tail
    (fewer than a repeat's elements) as one masked repeat."""
    per = REPEAT // (wide_bytes or dtype_bytes)
    out: list[tuple[int, int, int]] = []
    full, tail = divmod(n, per)
    off = 0
    while full:
        t = min(full, MAX_REPEAT)
        out.append((off, per, t))
        off += t * per
        full -= t
    if tail:
        out.append((off, tail, 1))
    return out
