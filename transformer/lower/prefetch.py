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
"""

from __future__ import annotations

import re
from typing import Any

from .. import ir
from .plan import Line

_CALL = re.compile(r"^(\w+)\((.*)\);$")


def prefetched(em: Any, s: ir.For, st: Any, var: str, lo: str, hi: str, body: list[Line], depth: int) -> list[Line] | None:
    """The lines of the loop `s` (C++ variable `var` over `lo..hi`, `body` its lowered body
    at `depth + 1`, `st` its body's stages: `lower.split_stages`) with its next tile's load
    issued before the compute, or None when the conditions of the module docstring do not
    hold."""
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
    if not any("WaitFlag<HardEvent::V_S>" in l.text for m in computes for l in methods[m.group(1)].body):
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


def _writes(s: ir.For, tensor: str) -> bool:
    for x in ir.iter_stmts(s.body):
        if isinstance(x, ir.Copy) and x.dst.tensor == tensor:
            return True
        if isinstance(x, ir.Assign) and (x.target.tensor if isinstance(x.target, ir.Access) else x.target.name) == tensor:
            return True
    return False
