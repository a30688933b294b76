"""Pattern `row-scatter-add`: `T[ids[t], h] += x_ub[t, h]` as one MTE3 DataCopy per row into
GM under `SetAtomicAdd`, in program order (the recogniser, emission and price are shared with
`row-gather`: `row_gather.py`, whose docstring gives the hazards)."""

from __future__ import annotations

from .row_gather import RowGatherPattern


class RowScatterAdd(RowGatherPattern):
    name = "row-scatter-add"
    op = "+="
    summary = ("rows added into a GM tensor at rows an index tensor picks (`T[ids[t], h] += x_ub[t, h]`): "
               "one atomic-add DataCopy per row, in program order")


PATTERN = RowScatterAdd()
