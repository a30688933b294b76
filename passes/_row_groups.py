"""Which accesses of a tensor `tile` stages together in a nest whose row is tiled: the groups
of accesses by the sibling loops over the row they lie in (each group staged per tile of its
loop), and the reads through an index tensor left beside them in GM (`stage.stage_nest`)."""

from __future__ import annotations

from typing import Mapping

from transformer import ir
from transformer.regions import AccessSite, common_path

from . import _rewrite as R
from .split import Strips

Path = tuple[int, ...]


def row_groups(lst: list[AccessSite], st: Strips, loops: Mapping[Path, ir.For]) -> list[list[AccessSite]]:
    """The accesses of one tensor split by the sibling tile loops (made by this pass) they
    lie in, when they lie in two or more such loops directly below their common enclosing
    loop and each loop's variable moves the footprint (the loops over a long row: the
    tensor is staged per tile of each of them); else all accesses as one group."""
    common = common_path(lst)
    by_child: dict[Path, list[AccessSite]] = {}
    for a in lst:
        child = a.stmt_path[:len(common) + 1]
        lp = loops.get(child)
        if lp is None or lp.var not in st.tile_vars or len(a.stmt_path) <= len(child):
            return [lst]
        if not any(lp.var in R.names_in(i) for i in a.access.indices):
            return [lst]
        by_child.setdefault(child, []).append(a)
    return list(by_child.values()) if len(by_child) > 1 else [lst]


def picked_apart(lst: list[AccessSite], st: Strips, loops: Mapping[Path, ir.For]
                 ) -> tuple[list[list[AccessSite]], list[AccessSite]]:
    """`row_groups` of the accesses of a tensor the nest only reads, less its reads through
    an index tensor that lie outside the loops over the row (cross-entropy's pick of the
    label's logit `X[r, labels[r]]` next to the max and sum loops over a row longer than a
    tile): when the other accesses split into two or more groups, those reads stay in GM
    (one element each: the scalar unit reads it) instead of keeping the whole row in GM.
    Else `([lst], [])`."""
    if any(a.write for a in lst):
        return [lst], []
    common = common_path(lst)
    picked = [a for a in lst if any(isinstance(i, ir.Access) for i in a.access.indices)
              and not (a.stmt_path[:len(common) + 1] in loops and len(a.stmt_path) > len(common) + 1)]
    rest = [a for a in lst if a not in picked]
    if not picked or not rest:
        return [lst], []
    groups = row_groups(rest, st, loops)
    return (groups, picked) if len(groups) > 1 else ([lst], [])
