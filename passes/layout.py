"""`layout`: change the layout of tensors, rewriting every index.

    layout{A=NZ}            ND -> NZ (cube fractals of 16 x 16)
    layout{X=NHWC}          NCHW <-> NHWC
    layout{X=NC1HWC0}       NCHW -> NC1HWC0 (C0 = 16)
    layout{A=ND}            NZ -> ND

Representation. A tensor's declared shape is its *physical* shape and its `layout` tag says
how logical indices map onto it. For a logical [M, K] matrix (`ND`) the Ascend `NZ` layout
is [K1, M1, M0, K0] = [K/16, M/16, 16, 16]: element (m, k) lives at
`[k / 16, m / 16, m % 16, k % 16]` (fractals of 16 x 16, stored column-block-major).
`NC1HWC0` of an NCHW [N, C, H, W] tensor is [N, C/16, H, W, 16]: (n, c, h, w) lives at
`[n, c / 16, h, w, c % 16]`.

The IR has no `/` or `%` in indices, so a dimension that must be split by 16 is split only
when its index is already `16 * q + r` with `r` a loop variable running over `0..16` (and
`q` affine): split the loop by 16 first, e.g. `tile{mm.i=16,mm.k=16}`. Copy regions must be
16-aligned slices whose extent is a multiple of 16. Anything else is refused with the
offending index.

Parameters (inputs and outputs) keep the layout the caller fixed: the pass adds a temp in
the new layout (`A_nz`) with a conversion nest (before the body for an input, after it
for an output) and rewrites the kernel's accesses to the temp. Temps and locals change in
place. Permutations (NCHW <-> NHWC) need no splitting.

It requires: 1) the tensor exists; 2) the conversion is supported (from its current
layout, `ND` when untagged, to the requested one) and the rank fits; 3) split dimensions
are multiples of 16 and every index / region into them decomposes as described.

Rewrite (`layout{X=NHWC}` on a temp):

    temp X: f32[N, C, H, W] layout NCHW      temp X: f32[N, H, W, C] layout NHWC
    X[n, c, h, w] = ...                  ->  X[n, h, w, c] = ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.diagnostics import BadParameter, NotApplicable
from transformer.affine import Affine, to_affine

from . import _rewrite as R
from .params import LayoutName, Map, Params, Tensor
from .base import Pass, PassError, TraceEntry, register
from transformer.targets import Target

# new dims as functions of old dims: ("id", d) old index d; ("q", d) = old d / 16;
# ("r", d) = old d % 16; ("comb", dq, dr) = 16 * old dq + old dr
Spec = tuple[tuple, ...]

CONVERSIONS: dict[tuple[str, str], Spec] = {
    ("NCHW", "NHWC"): (("id", 0), ("id", 2), ("id", 3), ("id", 1)),
    ("NHWC", "NCHW"): (("id", 0), ("id", 3), ("id", 1), ("id", 2)),
    ("ND", "NZ"): (("q", 1), ("q", 0), ("r", 0), ("r", 1)),
    ("NZ", "ND"): (("comb", 1, 2), ("comb", 0, 3)),
    ("NCHW", "NC1HWC0"): (("id", 0), ("q", 1), ("id", 2), ("id", 3), ("r", 1)),
    ("NC1HWC0", "NCHW"): (("id", 0), ("comb", 1, 4), ("id", 2), ("id", 3)),
}
RANKS = {"ND": 2, "NZ": 4, "NCHW": 4, "NHWC": 4, "NC1HWC0": 5}
F = 16


def _err(msg: str, node: Any = None, hint: str | None = None, *, param: str | None = None, value: Any = None) -> PassError:
    """A layout refusal: `BadParameter` when `param` names the parameter at fault, else
    `NotApplicable`."""
    if param is not None:
        return BadParameter("layout", msg, getattr(node, "loc", None), hint=hint, param=param, value=value)
    return NotApplicable("layout", msg, getattr(node, "loc", None), hint=hint)


@register
@dataclass(frozen=True)
class Layout(Pass):
    """Change tensors' layouts (ND<->NZ, NCHW<->NHWC, NCHW<->NC1HWC0), rewriting indices."""

    name: ClassVar[str] = "layout"
    summary: ClassVar[str] = "change a tensor's layout (ND/NZ, NCHW/NHWC/NC1HWC0), rewriting every index"
    params: ClassVar[Params] = Map("layouts", Tensor(), LayoutName(), minimum=1, example="K=NZ",
                                   note="each tensor converted in the order written")
    layouts: tuple[tuple[str, str], ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        for tname, lay in self.layouts:
            kernel = change_layout(kernel, tname, lay, trace)
        return kernel

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        for t in kernel.tensors():
            cur = t.layout or "ND"
            for (a, b) in CONVERSIONS:
                if a == cur and RANKS.get(a) == t.rank:
                    p = cls(((t.name, b),))
                    try:
                        p.run(kernel, target, TraceEntry(""))
                    except PassError:
                        continue
                    out.append(p)
        return out


def Check_conversion(t: ir.TensorDecl, new: str) -> Spec:
    """Condition: (current layout, new) is in CONVERSIONS and the tensor has the rank of
    its current layout."""
    cur = t.layout or "ND"
    if (cur, new) not in CONVERSIONS:
        ok = sorted(b for a, b in CONVERSIONS if a == cur)
        raise _err(f"cannot convert `{t.name}` from {cur} to {new}", t,
                   hint=("supported from " + cur + ": " + ", ".join(ok)) if ok else "no conversion from " + cur)
    if t.rank != RANKS[cur]:
        raise _err(f"`{t.name}` has rank {t.rank}, layout {cur} needs rank {RANKS[cur]}", t)
    return CONVERSIONS[(cur, new)]


def change_layout(kernel: ir.Kernel, tname: str, new: str, trace: TraceEntry) -> ir.Kernel:
    t = kernel.tensor(tname)
    if t is None:
        from transformer.diagnostics import did_you_mean

        raise _err(f"no tensor named `{tname}`", None, hint=did_you_mean(tname, [x.name for x in kernel.tensors()]),
                   param="tensor", value=tname)
    if new not in ir.LAYOUTS:
        from transformer.diagnostics import did_you_mean

        raise _err(f"unknown layout `{new}`", t, hint=did_you_mean(new, ir.LAYOUTS), param="layout", value=new)
    if (t.layout or "ND") == new:
        trace.decisions.append(f"`{tname}` is already {new}")
        return kernel
    spec = Check_conversion(t, new)
    sizes = kernel.known_sizes()
    shape = _new_shape(t, spec, sizes)
    taken = R.used_names(kernel)
    if t.kind in ("input", "output"):
        tmp = R.fresh(f"{tname}_{new.lower()}", taken)
        body = tuple(_rewrite_stmt(s, tname, tmp, spec, sizes, {}) for s in kernel.body)
        conv = _conversion_nest(t, tmp, spec, shape, taken, to_new=(t.kind == "input"))
        body = (conv,) + body if t.kind == "input" else body + (conv,)
        decl = ir.TensorDecl(tmp, t.dtype, shape, "temp", layout=new)
        trace.changes.append(f"`{tname}` is a parameter with a fixed layout: added temp `{tmp}` ({new}) and a "
                             f"conversion nest {'before' if t.kind == 'input' else 'after'} the body")
        return dataclasses.replace(kernel, body=body, buffers=kernel.buffers + (decl,))
    body = tuple(_rewrite_stmt(s, tname, tname, spec, sizes, {}) for s in kernel.body)
    buffers = tuple(dataclasses.replace(b, shape=shape, layout=new) if b.name == tname else b for b in kernel.buffers)
    trace.changes.append(f"`{tname}`: {t.layout or 'ND'} -> {new}, shape now [" +
                         ", ".join(R.eval_const(d, sizes).__str__() if R.eval_const(d, sizes) is not None else "?" for d in shape) + "]")
    return dataclasses.replace(kernel, body=body, buffers=buffers)


def _new_shape(t: ir.TensorDecl, spec: Spec, sizes: Mapping[str, int]) -> tuple[ir.Expr, ...]:
    out: list[ir.Expr] = []
    for d in spec:
        if d[0] == "id":
            out.append(t.shape[d[1]])
        elif d[0] == "r":
            out.append(R.lit(F))
        elif d[0] == "q":
            v = R.eval_const(t.shape[d[1]], sizes)
            if v is None or v % F:
                raise _err(f"dimension {d[1]} of `{t.name}` is {v}, not a multiple of {F}", t)
            out.append(R.lit(v // F))
        else:
            out.append(R.mul(t.shape[d[1]], t.shape[d[2]]))
    return tuple(R.simp(x) for x in out)


def _conversion_nest(t: ir.TensorDecl, tmp: str, spec: Spec, shape: tuple[ir.Expr, ...], taken: set[str],
                     to_new: bool) -> ir.Stmt:
    vs = [R.fresh(f"x{n}", taken) for n in range(len(shape))]
    # old index of each old dim as a function of the new loop variables
    old: dict[int, ir.Expr] = {}
    qs: dict[int, str] = {}
    rs: dict[int, str] = {}
    for v, d in zip(vs, spec):
        if d[0] == "id":
            old[d[1]] = ir.Name(v)
        elif d[0] == "q":
            qs[d[1]] = v
        elif d[0] == "r":
            rs[d[1]] = v
    for d in qs:
        old[d] = R.add(R.mul(ir.Name(qs[d]), R.lit(F)), ir.Name(rs[d]))
    new_idx = tuple(ir.Name(v) for v in vs)
    if any(d[0] == "comb" for d in spec):
        # new = ND from fractals: iterate the old (fractal) space instead
        ovs = [R.fresh(f"y{n}", taken) for n in range(t.rank)]
        oi = tuple(ir.Name(v) for v in ovs)
        ni = tuple(R.add(R.mul(oi[d[1]], R.lit(F)), oi[d[2]]) if d[0] == "comb" else oi[d[1]] for d in spec)
        stmt = ir.Assign(ir.Access(tmp, ni), "=", ir.Access(t.name, oi)) if to_new else \
            ir.Assign(ir.Access(t.name, oi), "=", ir.Access(tmp, ni))
        loop_vars, exts = ovs, list(t.shape)
    else:
        oidx = tuple(old[i] for i in range(t.rank))
        stmt = ir.Assign(ir.Access(tmp, new_idx), "=", ir.Access(t.name, oidx)) if to_new else \
            ir.Assign(ir.Access(t.name, oidx), "=", ir.Access(tmp, new_idx))
        loop_vars, exts = vs, list(shape)
    s: ir.Stmt = stmt
    for v, e in reversed(list(zip(loop_vars, exts))):
        s = ir.For(v, R.lit(0), e, (s,))
    return dataclasses.replace(s, label=R.fresh(f"to_{tmp}" if to_new else f"from_{tmp}", taken))


def _split(e: ir.Expr, sizes: Mapping[str, int], ranges: Mapping[str, tuple[int | None, int | None]],
           node: Any, tname: str) -> tuple[ir.Expr, ir.Expr]:
    """`e` = 16*q + r with r a loop variable over 0..16: returns (q, r)."""
    a = to_affine(e, sizes)
    if a is not None:
        for v, c in a.coeffs:
            if c == 1 and ranges.get(v) == (0, F):
                rest = a - Affine(((v, 1),), 0)
                if rest.const % F == 0 and all(x % F == 0 for _, x in rest.coeffs):
                    q = Affine.make({k: x // F for k, x in rest.coeffs}, rest.const // F)
                    return R.expr_of_affine(q, R.names_in(e)), ir.Name(v)
    from transformer.printer import format_expr

    raise _err(f"index `{format_expr(e)}` of `{tname}` cannot be split into 16-element fractals "
               "(the IR has no `/` or `%`)", node,
               hint="split its loop by 16 first, e.g. `tile{loop=16}`, so the index reads `16 * q + r`")


def _map_index(idx: tuple[ir.Expr, ...], spec: Spec, sizes: Mapping[str, int],
               ranges: Mapping[str, tuple[int | None, int | None]], node: Any, tname: str) -> tuple[ir.Expr, ...]:
    split: dict[int, tuple[ir.Expr, ir.Expr]] = {}
    out = []
    for d in spec:
        if d[0] == "id":
            out.append(idx[d[1]])
        elif d[0] in ("q", "r"):
            if d[1] not in split:
                split[d[1]] = _split(idx[d[1]], sizes, ranges, node, tname)
            out.append(split[d[1]][0 if d[0] == "q" else 1])
        else:
            out.append(R.add(R.mul(idx[d[1]], R.lit(F)), idx[d[2]]))
    return tuple(out)


def _map_region(r: ir.Region, spec: Spec, sizes: Mapping[str, int], node: Any, tname: str) -> tuple[Any, ...]:
    dims = r.dims
    split: dict[int, tuple[Any, Any]] = {}
    out: list[Any] = []
    for d in spec:
        if d[0] == "id":
            out.append(dims[d[1]])
        elif d[0] in ("q", "r"):
            k = d[1]
            if k not in split:
                x = dims[k]
                if not isinstance(x, ir.Slice):
                    raise _err(f"a single index into a split dimension of `{tname}` in a copy", node)
                lo, hi = to_affine(x.lo, sizes), to_affine(x.hi, sizes)
                if lo is None or hi is None or not (hi - lo).is_const() or (hi - lo).const % F or lo.const % F or \
                        any(c % F for _, c in lo.coeffs):
                    raise _err(f"copy region of `{tname}` is not made of whole 16-element fractals", node,
                               hint="tile with multiples of 16 that divide the extents")
                q = Affine.make({n: c // F for n, c in lo.coeffs}, lo.const // F)
                n = (hi - lo).const // F
                qe = R.expr_of_affine(q)
                split[k] = (qe if n == 1 else ir.Slice(qe, R.add(qe, R.lit(n))), ir.Slice(R.lit(0), R.lit(F)))
            out.append(split[k][0 if d[0] == "q" else 1])
        else:
            raise _err(f"copies into `{tname}` cannot be converted back to ND here", node)
    return tuple(out)


def Check_copy_shapes(dst: ir.Region, src: ir.Region, sizes: Mapping[str, int], node: Any, tname: str) -> None:
    """Condition: after the rewrite both regions of a copy still have the same shape (a copy
    is a plain DMA: it neither permutes nor re-tiles). Compared exactly as `check.py` compares
    them, extent-1 slices included: a permutation that only moves an extent-1 slice (NCHW ->
    NHWC with C = 1) still breaks the copy's contract, so it is refused here, not produced."""
    from transformer.check import region_shape

    a, b = region_shape(dst, sizes), region_shape(src, sizes)
    if a != b:
        raise _err(f"the copy of `{tname}` would have to change layout on the way ({a} vs {b}); "
                   "a copy does not convert", node,
                   hint="convert the GM tensor instead, or tile so that each copy moves one 16 x 16 fractal")


def Check_copy_order(r: ir.Region, spec: Spec, node: Any, tname: str) -> None:
    """Condition: the conversion keeps the order of the region's sliced dimensions. A copy
    pairs the two regions' slices by position, so a conversion that moves a sliced dimension
    (NCHW -> NHWC moving the channel slice `0:C` behind `0:3, 0:3`) makes the DMA transpose
    the data, even when the extents happen to be equal (C = 3 against a 3 x 3 filter window:
    `Check_copy_shapes` cannot see it). Found by the emitted-code fuzzer
    (`tile{y=4},layout{Wt=NHWC}` on conv2d with C = 3)."""
    order = [d[1] for d, x in zip(spec, r.dims) if isinstance(x, ir.Slice)]  # `r` is converted
    if order != sorted(order):
        raise _err(f"the copy of `{tname}` would have to move a sliced dimension on the way "
                   "(a copy pairs the slices of its two regions in order); a copy does not convert", node,
                   hint=f"convert `{tname}` before tiling stages it, or convert the GM tensor instead")


def _rewrite_stmt(s: ir.Stmt, old: str, new: str, spec: Spec, sizes: Mapping[str, int],
                  ranges: dict[str, tuple[int | None, int | None]]) -> ir.Stmt:
    if isinstance(s, ir.For):
        r = dict(ranges)
        r[s.var] = (R.eval_const(s.lo, sizes), R.eval_const(s.hi, sizes))
        return dataclasses.replace(s, body=tuple(_rewrite_stmt(b, old, new, spec, sizes, r) for b in s.body))
    if isinstance(s, ir.Copy):
        dst, src = s.dst, s.src
        if dst.tensor == old:
            dst = ir.Region(new, _map_region(dst, spec, sizes, s, old), dst.loc)
        if src.tensor == old:
            src = ir.Region(new, _map_region(src, spec, sizes, s, old), src.loc)
        Check_copy_shapes(dst, src, sizes, s, old)
        for after in (dst, src):
            if after.tensor == new:
                Check_copy_order(after, spec, s, old)
        return dataclasses.replace(s, dst=dst, src=src)

    def relayout(e: ir.Expr) -> ir.Expr:
        """An access to `old` (indices already rewritten) -> the access to `new`."""
        if isinstance(e, ir.Access) and e.tensor == old:
            return ir.Access(new, _map_index(e.indices, spec, sizes, ranges, s, old), e.loc)
        return e

    assert isinstance(s, ir.Assign)
    return dataclasses.replace(s, target=R.map_expr(s.target, relayout), value=R.map_expr(s.value, relayout))  # type: ignore[arg-type]
