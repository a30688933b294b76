"""`split`: strip-mine loops into a tile loop and a point loop, with a tail when the size does
not divide the extent.

    split{ew.i=64}            loop `ew.i` in tiles of 64
    split{ew.i=64,ew.j=256}   several loops, each split on its own

`for i in lo..hi` with size `T` and concrete extent `N = hi - lo` becomes

    for i0 in 0..ceil(N/T) {                  # tile loop (keeps the label, annotations)
      for i in 0..min(T, N - i0*T) { ... }    # point loop (`0..T` when T divides N)
    }

and `i` in the body is replaced by `lo + i0*T + i`. Trip counts are concrete integers
computed from the kernel's fixed `size`s, so **a split kernel is specialised to them**:
change the sizes before splitting, not after. Over ranged sizes (`size N = 1024 in
16..4096`, which `Kernel.known_sizes()` leaves out) the trip count is the run-time `(N + T -
1) / T` (`N / T` when T divides every value of the range: `RangedExtent`), and the point
loop keeps its tail unless it never occurs, so the result serves the whole range. The point loop
runs the original iterations in their original order, so the rewrite is always legal: no
dependence test is needed.

This is step 1 of `tile` (which then sinks the point loops and stages the tiles: see
`passes/tile.py`); alone it is the strip-mining of the loop-transformation literature, the
first half of tiling, useful before `interchange`, `unroll` of the point loop, or
`multicore` of the tile loop.

It requires: 1) every named loop exists and its bounds evaluate to integers (sizes and
literals), or are affine in ranged sizes (T at most the largest extent over the ranges); 2) it runs at least once and 1 <= T <= extent; 3) no loop is named twice; 4) the
loop is not in a `@gemm` nest (the cube kernel blocks those itself). A name `label.var` may
designate several sibling loops over one row (`_rows.resolve_tiled`): each is split.

Rewrite (`split{ew.i=4}` at M = 10):

    ew: for i in 0..M {             ew: for i0 in 0..3 {
      C[i] = A[i] + B[i]      ->      for i in 0..min(4, 10 - i0 * 4) {
    }                                   C[i0 * 4 + i] = A[i0 * 4 + i] + B[i0 * 4 + i]
                                      }
                                    }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Mapping

from transformer import ir
from transformer.affine import Affine, to_affine
from transformer.diagnostics import BadParameter, NotApplicable
from transformer.targets import Target

from transformer.intexpr import expr_of_affine
from transformer.printer import format_expr

from . import _rewrite as R
from ._rows import resolve_tiled
from .base import Pass, PassError, TraceEntry, preferred_loop_names, register
from .params import Int, Loop, Map, Params

Path = tuple[int, ...]
Request = tuple[str, int, ir.For]  # (the name given, the size, the loop)
SPACE_SIZES = (2, 4, 8, 16, 32, 64, 128, 256)  # sizes `space()` offers (the two largest below the extent)

_PARTICIPLE = {"tile": "tiled", "split": "split"}


@register
@dataclass(frozen=True)
class Split(Pass):
    """Strip-mine loops into tile/point loops (tails when the size does not divide)."""

    name: ClassVar[str] = "split"
    summary: ClassVar[str] = "strip-mine loops into a tile loop and a point loop (a tail when the size does not divide)"
    params: ClassVar[Params] = Map("sizes", Loop(), Int(1), minimum=1, example="ew.i=64",
                                   note="LOOP=SIZE: tiles of SIZE iterations (1..extent)")
    sizes: tuple[tuple[str, int], ...] = ()
    keeps_ranges: ClassVar[bool] = True

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.sizes:
            raise BadParameter(self.name, "no loop given", hint="e.g. `split{ew.i=64}`", param="sizes")
        req, by_nest = resolve_requests(kernel, self.sizes, self.name)
        sizes = kernel.known_sizes()
        names = global_names(kernel)
        body = list(kernel.body)
        for top in sorted(by_nest):
            nest = body[top]
            body[top] = strip_mine(nest, req, sizes, names | {lp.var for lp in ir.iter_loops((nest,))}, Strips(), trace,
                                   kernel.size_ranges())
        return dataclasses.replace(kernel, body=tuple(body))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """One loop at a time: each named loop with constant bounds and at least two
        iterations, outside `@gemm` nests, in the two largest sizes of `SPACE_SIZES` below
        its extent (a tail whenever the size does not divide it)."""
        out: list[Pass] = []
        sizes = kernel.known_sizes()
        names = preferred_loop_names(kernel)
        for top in kernel.body:
            if not isinstance(top, ir.For) or top.annotation("gemm") is not None:
                continue
            for lp in ir.iter_loops((top,)):
                n, ext = names.get(id(lp)), R.loop_extent(lp, sizes)
                if n is None or ext is None or ext < 2:
                    continue
                for t in [t for t in SPACE_SIZES if t < ext][-2:]:
                    p = cls(((n, t),))
                    try:
                        resolve_requests(kernel, p.sizes, cls.name)
                    except PassError:
                        continue
                    out.append(p)
        return out


# --------------------------------------------------------------------------------------
# legality


def Check_constant_bounds(loop_name: str, loop: ir.For, sizes: Mapping[str, int], pass_name: str = "split",
                          ranges: Mapping[str, tuple[int, int, int]] | None = None) -> int:
    """Condition: lo and hi of the loop evaluate to integers from sizes and literals, or
    (a kernel with ranged sizes, `ranges`) are affine in the ranged sizes: then the
    largest trip count over the ranges is returned (`RangedExtent`)."""
    ext = R.loop_extent(loop, sizes)
    if ext is None and ranges and (rx := RangedExtent.of(loop, sizes, ranges)) is not None:
        return rx.largest
    if ext is None:
        raise NotApplicable(pass_name, f"loop `{loop_name}` has bounds that depend on other loops; only loops with "
                            f"bounds made of sizes and integers can be {_PARTICIPLE.get(pass_name, pass_name)}",
                            loop.loc, hint=f"{pass_name} the enclosing loops, or a loop with constant bounds",
                            loops=(loop_name,))
    return ext


@dataclass(frozen=True)
class RangedExtent:
    """The trip count `hi - lo` of a loop over ranged sizes, as an affine form in them
    (`M - 3`): the tile loop then runs `(hi - lo + T - 1) / T` times, and its point loop
    has a tail unless T divides the trip count for every value of the ranges."""

    form: Affine
    ranges: Mapping[str, tuple[int, int, int]]

    @staticmethod
    def of(loop: ir.For, sizes: Mapping[str, int], ranges: Mapping[str, tuple[int, int, int]]) -> "RangedExtent | None":
        """None unless the bounds are affine in the ranged sizes (no loop variable)."""
        form = to_affine(ir.Binary("-", loop.hi, loop.lo), sizes)
        if form is None or form.is_const() or not form.vars <= set(ranges):
            return None
        return RangedExtent(form, ranges)

    def _pick(self, largest: bool) -> int:
        total = self.form.const
        for v, c in self.form.coeffs:
            lo, hi, step = self.ranges[v]
            ends = (-(-lo // step) * step, hi // step * step)
            total += max(c * ends[0], c * ends[1]) if largest else min(c * ends[0], c * ends[1])
        return total

    @property
    def largest(self) -> int:
        return self._pick(True)

    @property
    def smallest(self) -> int:
        return self._pick(False)

    def divisible_by(self, t: int) -> bool:
        """Whether `t` divides the trip count at every value: the constant part and each
        size's coefficient times its multiple."""
        return self.form.const % t == 0 and all((c * self.ranges[v][2]) % t == 0 for v, c in self.form.coeffs)

    def text(self) -> str:
        from transformer.printer import format_expr

        return format_expr(expr_of_affine(self.form))


def Check_tile_size(loop_name: str, loop: ir.For, size: int, extent: int, pass_name: str = "split") -> None:
    """Condition: 1 <= size <= extent (a tile of the whole loop is allowed); the loop runs."""
    if extent <= 0:
        raise NotApplicable(pass_name, f"`{R.loop_header(loop)}` never runs (trip count 0): nothing to {pass_name}",
                            loop.var_loc or loop.loc, loops=(loop_name,))
    if size < 1 or size > extent:
        legal = [p for p in (8, 16, 32, 64, 128, 256, 512) if p <= extent]
        why = "must be at least 1" if size < 1 else f"is larger than the loop's extent {extent}"
        raise BadParameter(pass_name, f"tile size {size} for loop `{loop_name}` {why}", loop.loc,
                           hint="accepted: 1.." + str(extent) + (" e.g. " + ", ".join(map(str, legal)) if legal else ""),
                           param=loop_name, value=size, accepted=legal, loops=(loop_name,))


def ranged_whole(kernel: ir.Kernel, chosen: Mapping[str, int], bands: list[list[tuple[str, ir.For]]]
                 ) -> tuple[tuple[str, int], ...]:
    """For `tile` without sizes: the loops of the tiled `bands` (its default bands at the
    sizes' values) it leaves whole whose extent is a ranged size's, each with its extent
    at the value as its tile: a row of a ranged length has no one buffer size (`N = 1024
    in 16..65536`: tiles of 1024, a run-time count of them)."""
    fixed, ranges = kernel.known_sizes(), kernel.size_ranges()
    values = kernel.size_values()
    out = []
    for band in bands:
        if not any(n in chosen for n, _ in band):
            continue
        for n, lp in band:
            if n not in chosen and RangedExtent.of(lp, fixed, ranges) is not None:
                out.append((n, R.loop_extent(lp, values) or 1))
    return tuple(out)


def resolve_requests(kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...], pass_name: str
                     ) -> tuple[dict[int, Request], dict[int, list[tuple[str, Path, ir.For]]]]:
    """Resolve and check every `(loop name, size)`: the requests by `id(loop)`, and per
    top-level nest the loops named in it (sibling loops named together count once)."""
    sizes = kernel.known_sizes()
    ranges = kernel.size_ranges()
    req: dict[int, Request] = {}
    by_nest: dict[int, list[tuple[str, Path, ir.For]]] = {}
    for name, size in tiles:
        refs = resolve_tiled(kernel, name, pass_name)
        for k, ref in enumerate(refs):
            ext = Check_constant_bounds(name, ref.loop, sizes, pass_name, ranges)
            Check_tile_size(name, ref.loop, size, ext, pass_name)
            if id(ref.loop) in req:
                raise BadParameter(pass_name, f"loop `{name}` is named twice", ref.loop.loc, param=name, value=size,
                                   loops=(name,))
            top_loop = kernel.body[ref.path[0]]
            if isinstance(top_loop, ir.For) and top_loop.annotation("gemm") is not None:
                raise NotApplicable(pass_name, f"loop `{name}` is in the `@gemm` nest "
                                    f"`{top_loop.label or top_loop.var}`, which the cube kernel blocks itself",
                                    ref.loop.loc, loops=(name,))
            req[id(ref.loop)] = (name, size, ref.loop)
            if k == 0:
                by_nest.setdefault(ref.path[0], []).append((name, ref.path, ref.loop))
    return req, by_nest


# --------------------------------------------------------------------------------------
# the rewrite


@dataclass
class Strips:
    """What `strip_mine` made in one nest: the tile loops' and point loops' variables, and
    each point loop's size (what sinking and staging read next, in `tile`)."""

    tile_vars: set[str] = field(default_factory=set)
    point_vars: set[str] = field(default_factory=set)
    point_size: dict[str, int] = field(default_factory=dict)
    named: dict[str, str] = field(default_factory=dict)  # tile loop variable -> the name requesting it

    def row_groups(self) -> list[set[str]]:
        """The tile loop variables of names that designated several loops (a row's loops)."""
        by: dict[str, set[str]] = {}
        for v, n in self.named.items():
            by.setdefault(n, set()).add(v)
        return [g for g in by.values() if len(g) > 1]


def global_names(kernel: ir.Kernel) -> set[str]:
    """Names a new loop variable must avoid in every nest: tensors, sizes, consts, labels."""
    out = {t.name for t in kernel.tensors()} | {x.name for x in kernel.sizes} | {c.name for c in kernel.consts}
    return out | {lp.label for lp in ir.iter_loops(kernel.body) if lp.label}


def strip_mine(s: ir.Stmt, req: Mapping[int, Request], sizes: Mapping[str, int], taken: set[str],
               st: Strips, trace: TraceEntry, ranges: Mapping[str, tuple[int, int, int]] | None = None) -> ir.Stmt:
    """Split every requested loop in `s` into a tile loop and a point loop (module
    docstring); new tile variables avoid `taken` and are added to it and to `st`. A loop
    over ranged sizes (`ranges`) gets a run-time trip count `(N + T - 1) / T`."""
    if not isinstance(s, ir.For):
        return s
    new_body = tuple(strip_mine(b, req, sizes, taken, st, trace, ranges) for b in s.body)
    if id(s) not in req:
        return dataclasses.replace(s, body=new_body)
    lname, T, _ = req[id(s)]
    N = R.loop_extent(s, sizes)
    ranged = RangedExtent.of(s, sizes, ranges) if N is None and ranges else None
    assert N is not None or ranged is not None
    divides = ranged.divisible_by(T) if ranged is not None else N % T == 0  # type: ignore[operator]
    v0 = R.fresh(f"{s.var}0", taken)
    offset = R.add(R.simp(s.lo), R.mul(ir.Name(v0), R.lit(T)))
    inner_hi = R.lit(T) if divides else R.imin(R.lit(T), R.sub(R.sub(s.hi, s.lo), R.mul(ir.Name(v0), R.lit(T))))
    m = {s.var: R.add(offset, ir.Name(s.var))}
    point = ir.For(s.var, R.lit(0), inner_hi, tuple(R.subst_stmt(b, m, simplify=True) for b in new_body))
    st.tile_vars.add(v0)
    st.named[v0] = lname
    st.point_vars.add(s.var)
    st.point_size[s.var] = T
    if ranged is not None:
        extent = expr_of_affine(ranged.form)
        count = ir.Binary("/", extent if divides else R.add(extent, R.lit(T - 1)), R.lit(T))
        trip: ir.Expr = extent if T == 1 else count
        tail = "" if divides else f", a tail where {T} does not divide {ranged.text()}"
        trace.changes.append(f"split `{lname}` ({ranged.text()} iterations) into run-time {format_expr(trip)} tiles "
                             f"of {T} (`{v0}` x `{s.var}`{tail})")
        return ir.For(v0, R.lit(0), trip, (point,), label=s.label, annotations=s.annotations, loc=s.loc)
    assert N is not None
    ntiles = -(-N // T)
    tail = "" if N % T == 0 else f", tail of {N % T}"
    trace.changes.append(f"split `{lname}` ({N} iterations) into {ntiles} tiles of {T} (`{v0}` x `{s.var}`{tail})")
    return ir.For(v0, R.lit(0), R.lit(ntiles), (point,), label=s.label, annotations=s.annotations, loc=s.loc)
