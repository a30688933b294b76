"""Guarded reads for `stage` (step 3 of `tile`): a read under a `select` arm whose unguarded
footprint leaves its tensor is staged with the footprint cut to the tensor when that covers
each such dimension whole (docs/ir.md, "Guarded reads"). Not a pass."""

from __future__ import annotations

from typing import Mapping

from transformer import ir
from transformer.affine import to_affine
from transformer.regions import AccessSite, Box


def clamp_to_tensor(box: Box, shape: tuple[ir.Expr, ...], sizes: Mapping[str, int], leaving: set[int]) -> Box | None:
    """The footprint of a guarded read cut to its tensor (the read is made only where its
    guard holds, inside the tensor: docs/ir.md "Guarded reads"), when that is a box at the
    same corner: each dimension in `leaving` (where the unguarded index would leave the
    tensor) must cover it whole (a constant footprint from <= 0 to >= its extent): the whole
    dimension is staged at corner 0, so the local's indices there are the tensor's. Else None
    (a tile's footprint crossing an edge would need a clamped, moving corner)."""
    from transformer.regions import eval_const

    dims = list(box.dims)
    for d in leaving:
        lo, ext, mx, u = dims[d]
        a, e, dn = to_affine(lo, sizes), eval_const(ext, sizes), eval_const(shape[d], sizes)
        if a is None or e is None or dn is None or not a.is_const() or a.const > 0 or a.const + e < dn:
            return None
        dims[d] = (ir.IntLit(0), shape[d], dn, u)
    return Box(dims)


def leaving_dims(a: AccessSite, shape: tuple[ir.Expr, ...], sizes: Mapping[str, int]) -> set[int]:
    """The dimensions where access `a`, made unconditionally, would leave its tensor."""
    from transformer.bounds import may_leave

    loops = tuple(lp for _, lp in a.loops)
    out = set()
    for d in range(len(a.access.indices)):
        only = tuple(i if k == d else ir.IntLit(0) for k, i in enumerate(a.access.indices))
        if may_leave(ir.Access(a.access.tensor, only), loops, shape, sizes) is not None:
            out.add(d)
    return out
