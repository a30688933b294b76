"""Issue the next tile's load before this tile's compute in a double-buffered loop whose
compute stage stops the scalar unit (a row statistic read back with `GetValue`).

Why: a pipelined tile loop is emitted as `CopyIn(i); Compute(i); CopyOut(i)` per iteration,
and double buffering relies on the scalar unit issuing the next `CopyIn` while the pipes
still work on this tile. A compute stage that reads a vector result on the scalar unit (a
long row's max or sum: `ReduceMax`, a V -> S flag, `GetValue`) stops the scalar unit until V
is done, so the load of tile i + 1 is only issued after the compute of tile i: MTE2 and V
take turns instead of overlapping (softmax rows of 65536, tiled along the row: the max and
sum passes are 8 loads and 8 reductions in series). Issuing `CopyIn(i + 1)` before
`Compute(i)`, and the first tile's load before the loop, lets MTE2 fill the second buffer
while V works, as hand-written kernels prefetch:

    CopyIn(r, 0);
    for (int32_t c0 = 0; c0 < 8; ++c0) {
        if (c0 + 1 < 8) {
            CopyIn(r, c0 + 1);
        }
        Compute();
    }

When (all checked, else the loop is left as it was): the loop is `@pipeline(stages >= 2)`;
its body lowers to a `CopyIn` call first; every tensor it loads is a queue of depth >= 2
(two tiles in flight) loaded from GM, not from another local (that copy-in would dequeue
its source); the loop writes none of the GM tensors it loads (a load moved before the
previous iteration's stores would read stale data); and its compute stage waits V -> S on
the scalar unit (otherwise the scalar unit already runs ahead and nothing changes).

Chained passes (`chain`): a long row is streamed once per pass (softmax: max, sum,
normalisation), each pass a tile loop after the other in the row loop's body. The first
load of the next pass waited for the previous pass's last `GetValue` (the scalar unit
stopped there), so MTE2 started it only when V had finished the pass: one tile load of V
idle per pass boundary. When a prefetched loop A is followed, with only scalar assignments
(`sm = 0.0f;`) in between, by a tile loop B that can take the prefetched form (the
conditions above, except that B's compute need not wait V -> S), B's first load is issued
in A's last iteration, in place of the prefetch A has no tile for:

    for (int32_t c0 = 0; c0 < 8; ++c0) {          // A: the max pass
        if (c0 + 1 < 8) {
            CopyIn(r, c0 + 1);
        } else {
            CopyIn2(r, 0);                         // B's first tile
        }
        Compute();
    }
    sm = 0.0f;
    for (int32_t c0_1 = 0; c0_1 < 8; ++c0_1) {    // B: the sum pass
        if (c0_1 + 1 < 8) {
            CopyIn2(r, c0_1 + 1);
        }
        Compute2();
    }

When: both loops run a constant number of times >= 1 (the hoisted load is consumed
exactly once); A writes none of the GM tensors B loads (B's first load now runs before A's
last compute and stores). In A's last iteration A holds one tile of each of its queues, so
a queue B shares with A has its second slot free; queues are FIFO, so A's compute still
dequeues A's tile first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .. import ir
from ..affine import to_affine
from .plan import Line

_CALL = re.compile(r"^(\w+)\((.*)\);$")


@dataclass(frozen=True)
class Form:
    """A tile loop that can take the prefetched form: `fetched` its lines in that form (the
    first load, the loop, its guarded prefetch closed by `fetched[4]`); `plain` the lines
    emitted instead when the loop itself did not need the form (None: `fetched` was
    emitted); `sources` the GM tensors it loads."""

    fetched: tuple[Line, ...]
    plain: tuple[Line, ...] | None
    sources: frozenset[str]


def prefetched(em: Any, s: ir.For, st: Any, var: str, lo: str, hi: str, body: list[Line], depth: int,
               need_wait: bool = True) -> list[Line] | None:
    """The lines of the loop `s` (C++ variable `var` over `lo..hi`, `body` its lowered body
    at `depth + 1`, `st` its body's stages: `lower.split_stages`) with its next tile's load
    issued before the compute, or None when the conditions of the module docstring do not
    hold (`need_wait=False`: all but the compute's V -> S wait)."""
    ann = s.annotation("pipeline")
    if ann is None or (ann.get("stages") or 0) < 2 or not body or body[0].depth != depth + 1:
        return None
    if st is None or not st.copy_in:
        return None
    first = _CALL.match(body[0].text)
    methods = {m.name: m for m in em.ph.methods}
    if first is None or methods.get(first.group(1)) is None or methods[first.group(1)].stage != "copy_in":
        return None
    for c in st.copy_in:
        b = em.buffers.get(c.dst.tensor)
        if b is None or b.kind != "que" or b.depth < 2 or c.src.tensor in em.buffers:
            return None
        if em.low.decls[c.src.tensor].kind == "local" or _writes(s, c.src.tensor):
            return None
    computes = [m for l in body[1:] if l.depth == depth + 1 and (m := _CALL.match(l.text))
                and m.group(1) in methods and methods[m.group(1)].stage == "compute"]
    if need_wait and not any("WaitFlag<HardEvent::V_S>" in l.text for m in computes for l in methods[m.group(1)].body):
        return None
    name, args = first.group(1), [a.strip() for a in first.group(2).split(",") if a.strip()]

    def call(value: str) -> str:
        return f"{name}({', '.join(value if a == var else a for a in args)});"

    return [Line(call(lo), depth, body[0].origin),
            Line(f"for (int32_t {var} = {lo}; {var} < {hi}; ++{var}) {{", depth),
            Line(f"if ({var} + 1 < {hi}) {{", depth + 1),
            Line(call(f"{var} + 1"), depth + 2, body[0].origin),
            Line("}", depth + 1),
            *body[1:],
            Line("}", depth)]


def form(em: Any, s: ir.For, st: Any, var: str, lo: str, hi: str, body: list[Line], depth: int) -> list[Line]:
    """The lines of the tile loop `s` (as `prefetched`; the plain loop when that does not
    apply), remembering in `em.prefetch_forms` how `chain` may rewrite it."""
    plain = [Line(f"for (int32_t {var} = {lo}; {var} < {hi}; ++{var}) {{", depth), *body, Line("}", depth)]
    fetched = prefetched(em, s, st, var, lo, hi, body, depth)
    if fetched is not None:
        em.prefetch_forms[id(s)] = Form(tuple(fetched), None, frozenset(c.src.tensor for c in st.copy_in))
        return fetched
    alt = prefetched(em, s, st, var, lo, hi, body, depth, need_wait=False)
    if alt is not None:
        em.prefetch_forms[id(s)] = Form(tuple(alt), tuple(plain), frozenset(c.src.tensor for c in st.copy_in))
    return plain


def chain(em: Any, stmts: tuple[ir.Stmt, ...], parts: list[list[Line]]) -> None:
    """Issue the first load of a tile loop in the last iteration of the prefetched tile loop
    before it (module docstring, "Chained passes"). `parts[k]` are the lines of `stmts[k]`,
    rewritten in place."""
    forms: dict[int, Form] = em.prefetch_forms
    fetched_now: set[int] = set()  # loops rewritten into the prefetched form here
    for i, a in enumerate(stmts):
        fa = forms.get(id(a)) if isinstance(a, ir.For) else None
        if fa is None or (fa.plain is not None and id(a) not in fetched_now) or not _runs(em, a):
            continue
        j = i + 1
        while j < len(stmts) and isinstance(stmts[j], ir.Assign) and not isinstance(stmts[j].target, ir.Access):
            j += 1
        b = stmts[j] if j < len(stmts) else None
        fb = forms.get(id(b)) if isinstance(b, ir.For) else None
        if fb is None or not _runs(em, b) or any(_writes(a, t) for t in fb.sources):
            continue
        lines_b = list(parts[j])
        if fb.plain is not None:
            k = _find(lines_b, fb.plain[0])
            if k is None:
                continue
            lines_b[k:k + len(fb.plain)] = fb.fetched
        k, g = _find(lines_b, fb.fetched[0]), _find(parts[i], fa.fetched[4])
        if k is None or g is None:
            continue
        first = lines_b.pop(k)
        d = fa.fetched[4].depth
        parts[i][g:g + 1] = [Line("} else {", d), Line(first.text, d + 1, first.origin), Line("}", d)]
        parts[j] = lines_b
        fetched_now.add(id(b))


def _find(lines: list[Line], line: Line) -> int | None:
    return next((k for k, l in enumerate(lines) if l is line), None)


def _runs(em: Any, s: ir.For) -> bool:
    """Whether the loop runs a constant number of times >= 1 (its bounds as lowered)."""
    if id(s) in em.clip:
        return False
    lo, hi = to_affine(s.lo, em.low.sizes), to_affine(s.hi, em.low.sizes)
    return lo is not None and hi is not None and lo.is_const() and hi.is_const() and hi.const > lo.const


def _writes(s: ir.For, tensor: str) -> bool:
    for x in ir.iter_stmts(s.body):
        if isinstance(x, ir.Copy) and x.dst.tensor == tensor:
            return True
        if isinstance(x, ir.Assign) and (x.target.tensor if isinstance(x.target, ir.Access) else x.target.name) == tensor:
            return True
    return False
