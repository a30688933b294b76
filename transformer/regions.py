"""Region analysis: the box of elements a nest's accesses touch, per iteration of a loop.

`tile` and `stage` decide what to copy on chip with it; the capacity model reads the same
extents from the copies they write. Vocabulary:

- An *access site* (`AccessSite`) is one tensor reference of an assignment inside a nest,
  with the statement's path (body indices from the nest) and its enclosing loops.
- A *box* (`Box`) is, per tensor dimension, `(lo, extent, max extent, moves)`: the first
  index, the number of indices (an expression: a tail tile's extent is `min(T, N - t*T)`),
  its largest value at the kernel's sizes, and whether a loop inside the level moves it.
- The *footprint* of an access at a *level* (a loop, by path) is the box its indices cover
  while every loop strictly inside that level runs through its range (`box_of`): each
  index must be affine with non-negative coefficients in those loops, whose bounds do not
  depend on each other. `merge` is the smallest box holding several; `union` joins boxes
  that abut; `contains` compares two.
- A read is *covered* at a level (`reads_covered`) when, in the same iteration of that
  loop, earlier plain writes that fill their boxes (`dense_write`) hold its footprint: then
  the staged tile need not be copied in.

Layer 1 (the IR): imports only `transformer/` modules (`walk.uses` walks the accesses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from . import ir
from .affine import Affine, to_affine
from .intexpr import add, affine_extent, const_value, eval_const, lit, mentions, mul, simp, subst_expr, tail_max_extent
from .walk import names_written, uses

Path = tuple[int, ...]


def slice_extent(d: "ir.Slice | ir.Expr", env: Mapping[str, int]) -> int | None:
    """The number of indices of one region dimension: 1 for a point, `hi - lo` for a slice
    when that difference is a constant at `env` (affine in sizes and loop variables), else
    None. The lowering (`lower/cube.py`) reads copy shapes with it."""
    return affine_extent(d.lo, d.hi, env) if isinstance(d, ir.Slice) else 1


def max_slice_extent(d: "ir.Slice | ir.Expr", env: Mapping[str, int]) -> int | None:
    """The largest number of indices of one region dimension: `slice_extent`, or for a tail
    tile `lo:min(a, b)` (what `tile` writes for `N % T != 0`) the smallest `x - lo` of the
    `min`'s arguments that is constant; None when no bound is known. The capacity model
    (`capacity/from_kernel.py`) sizes copies with it."""
    ext = slice_extent(d, env)
    if ext is not None or not isinstance(d, ir.Slice):
        return ext
    lo = to_affine(d.lo, env)
    if lo is None or not (isinstance(d.hi, ir.Call) and d.hi.func == "min"):
        return None
    alts = [to_affine(a, env) for a in d.hi.args]
    consts = [(a - lo).const for a in alts if a is not None and (a - lo).is_const()]
    return min(consts) if consts else None


@dataclass
class AccessSite:
    """One access to a tensor inside a nest."""

    access: ir.Access
    write: bool
    plain: bool  # a plain `=` write
    stmt_path: Path
    loops: tuple[tuple[Path, ir.For], ...]  # enclosing loops inside the nest, outermost first
    stmt: ir.Assign


@dataclass
class Box:
    """Per dimension: (lo expression, extent expression, max extent, uses inner vars)."""

    dims: list[tuple[ir.Expr, ir.Expr, int, bool]]


def collect(nest: ir.For) -> tuple[dict[str, list[AccessSite]], set[str], dict[Path, ir.For]]:
    """The access sites of `nest` by tensor; the tensors it copies or assigns as scalars
    (left alone by staging); its loops by path (the nest itself at `()`)."""
    accs: dict[str, list[AccessSite]] = {}
    in_copies: set[str] = set()
    loops: dict[Path, ir.For] = {(): nest}

    def walk(stmts: tuple[ir.Stmt, ...], path: Path, stack: tuple[tuple[Path, ir.For], ...]) -> None:
        for i, s in enumerate(stmts):
            p = path + (i,)
            if isinstance(s, ir.For):
                loops[p] = s
                walk(s.body, p, stack + ((p, s),))
            elif isinstance(s, ir.Copy):
                in_copies.update((s.dst.tensor, s.src.tensor))
            elif isinstance(s, ir.Assign):
                if not isinstance(s.target, ir.Access):
                    in_copies.add(s.target.name)
                for u in uses(s):
                    accs.setdefault(u.tensor, []).append(AccessSite(u.node, u.write, u.write and s.op == "=", p, stack, s))  # type: ignore[arg-type]

    walk(nest.body, (), (((), nest),))
    return accs, in_copies, loops


def box_of(acc: AccessSite, level: Path, sizes: Mapping[str, int],
           shape: "tuple[ir.Expr, ...] | None" = None) -> Box | None:
    """Footprint of one access over the loops strictly inside `level`. A dimension read
    through an index tensor (`X[r, labels[r]]`, `gathers.py`) may hold any index: with the
    tensor's `shape` given, its footprint is the whole dimension (a read only: a write through
    an index has no box, so it stays in GM); without it, there is no box."""
    inner = [(p, lp) for p, lp in acc.loops if p[:len(level)] == level and len(p) > len(level)]
    inner_vars = {lp.var for _, lp in inner}
    rng: dict[str, tuple[ir.Expr, ir.Expr, int]] = {}
    named = {x.name for i in acc.access.indices for x in ir.sub_exprs(i) if isinstance(x, ir.Name)}
    for _, lp in inner:
        if lp.var not in named:
            # the footprint does not move with this loop: its bounds do not matter (argmax's
            # `I[r] min= ..` inside the tile tail loop `for c in 0..min(8192, C - c0 * 8192)`)
            continue
        for e in (lp.lo, lp.hi):
            if mentions(e, inner_vars) is not None:
                return None
        ext = simp(ir.Binary("-", lp.hi, lp.lo))
        mx = eval_const(ext, sizes)
        if mx is None:
            mx = tail_max_extent(lp, sizes)
            if mx is None:
                return None
        if mx <= 0:  # an empty loop (`for h in 9..4`): no footprint to stage
            return None
        rng[lp.var] = (simp(lp.lo), ext, mx)
    dims = []
    for d, e in enumerate(acc.access.indices):
        if isinstance(e, ir.Access):  # a data-dependent index: the whole dimension
            if shape is None or acc.write:
                return None
            mx = eval_const(shape[d], sizes)
            if mx is None:
                return None
            dims.append((lit(0), shape[d], mx, False))
            continue
        a = to_affine(e, sizes)
        if a is None:
            return None
        used = [v for v in inner_vars if a.coeff(v)]
        if any(a.coeff(v) < 0 for v in used):
            return None
        lo = simp(subst_expr(e, {v: rng[v][0] for v in inner_vars if v in rng}))
        ext: ir.Expr | None = None
        mx = 1
        const = 1
        for v in sorted(used):
            c = a.coeff(v)
            term = mul(lit(c), rng[v][1])
            ext = term if ext is None else add(ext, term)
            const -= c
            mx += c * (rng[v][2] - 1)
        ext = lit(1) if ext is None else add(ext, lit(const))
        dims.append((lo, simp(ext), mx, bool(used)))
    return Box(dims)


def merge(boxes: list[Box], sizes: Mapping[str, int]) -> Box | None:
    """The smallest box holding all `boxes` (None when their corners are not comparable)."""
    out = boxes[0].dims[:]
    for b in boxes[1:]:
        for d, (lo2, ext2, mx2, u2) in enumerate(b.dims):
            lo1, ext1, mx1, u1 = out[d]
            a1, a2 = to_affine(lo1, sizes), to_affine(lo2, sizes)
            if a1 is None or a2 is None:
                return None
            diff = a2 - a1
            if not diff.is_const():
                return None
            if diff.const == 0 and ext1 == ext2:
                out[d] = (lo1, ext1, max(mx1, mx2), u1 or u2)
                continue
            e1, e2 = eval_const(ext1, sizes), eval_const(ext2, sizes)  # `Dh` (a size) too, not only literals
            if e1 is None or e2 is None:
                return None
            lo = lo1 if diff.const >= 0 else lo2
            start = min(0, diff.const)
            end = max(e1, diff.const + e2)
            out[d] = (lo, lit(end - start), end - start, True)
    return Box(out)


def union(boxes: list[Box], sizes: Mapping[str, int]) -> list[Box]:
    """Merge boxes that agree in every dimension but one, where they touch or overlap with
    constant extents (e.g. the writes `e[r, 0]` and `e[r, 1]` of an unrolled loop)."""
    out = list(boxes)
    changed = True
    while changed:
        changed = False
        for x in range(len(out)):
            for y in range(len(out)):
                if x == y:
                    continue
                m = _merge_adjacent(out[x], out[y], sizes)
                if m is not None:
                    out = [b for k, b in enumerate(out) if k not in (x, y)] + [m]
                    changed = True
                    break
            if changed:
                break
    return out


def _merge_adjacent(a: Box, b: Box, sizes: Mapping[str, int]) -> Box | None:
    diff_dim = None
    for d, (x, y) in enumerate(zip(a.dims, b.dims)):
        ax, ay = to_affine(x[0], sizes), to_affine(y[0], sizes)
        if ax is None or ay is None:
            return None
        if ax == ay and x[1] == y[1]:
            continue
        if diff_dim is not None:
            return None
        diff_dim = d
    if diff_dim is None:
        return a
    (lo1, e1, m1, u1), (lo2, e2, m2, u2) = a.dims[diff_dim], b.dims[diff_dim]
    c1, c2 = eval_const(e1, sizes), eval_const(e2, sizes)
    a1, a2 = to_affine(lo1, sizes), to_affine(lo2, sizes)
    if c1 is None or c2 is None or a1 is None or a2 is None or not (a2 - a1).is_const():
        return None
    off = (a2 - a1).const
    if off < 0 or off > c1:
        return None
    dims = list(a.dims)
    ext = max(c1, off + c2)
    dims[diff_dim] = (lo1, lit(ext), ext, True)
    return Box(dims)


def contains(big: Box, small: Box, sizes: Mapping[str, int]) -> bool:
    for (lo1, e1, _, _), (lo2, e2, _, _) in zip(big.dims, small.dims):
        a1, a2 = to_affine(lo1, sizes), to_affine(lo2, sizes)
        if a1 is None or a2 is None:
            return False
        diff = a2 - a1
        if not diff.is_const() or diff.const < 0:
            return False
        c1, c2 = const_value(e1), const_value(e2)
        if c1 is not None and c2 is not None:
            if diff.const + c2 > c1:
                return False
        elif not (diff.const == 0 and e1 == e2):
            return False
    return True


def dense_write(acc: AccessSite, level: Path, sizes: Mapping[str, int] | None = None) -> bool:
    """A plain write whose elements fill its box: each index uses loops inside `level` in
    mixed radix — coefficient 1 on one loop, and each further loop's coefficient the
    product of the extents of the loops before it (`j0 * 256 + j`, `j` over 0..256: a tile
    loop and its point loop), every such loop from 0 to a constant — and no two indices use
    the same loop. `sizes`: the known sizes (a channel group's `g * CG + cc`, `CG = C / G`:
    affine, and `cc` runs to the size `CG`)."""
    sizes = sizes or {}
    inner = {lp.var: lp for p, lp in acc.loops if len(p) > len(level) and p[:len(level)] == level}
    seen: set[str] = set()
    for e in acc.access.indices:
        a = to_affine(e, sizes)
        if a is None:
            return False
        used = sorted((v for v in inner if a.coeff(v)), key=lambda v: a.coeff(v))
        if any(v in seen for v in used) or not _mixed_radix(a, [inner[v] for v in used], sizes):
            return False
        seen.update(used)
    return True


def _mixed_radix(a: Affine, loops: list[ir.For], sizes: Mapping[str, int]) -> bool:
    """Whether `a` steps through consecutive elements over `loops` (by coefficient, smallest
    first): 1, then the extent of the first loop, then the product of the first two, ..."""
    step = 1
    for k, lp in enumerate(loops):
        if a.coeff(lp.var) != step:
            return False
        if k == len(loops) - 1:
            return True
        lo, hi = to_affine(lp.lo, sizes), to_affine(lp.hi, sizes)
        if lo is None or hi is None or not lo.is_const() or not hi.is_const() or lo.const != 0:
            return False
        step *= hi.const
    return True


def reads_covered(x: str, accs: list[AccessSite], level: Path, sizes: Mapping[str, int],
                  loops: Mapping[Path, ir.For]) -> tuple[bool, list[Box]]:
    """Whether every read of `x` in the body of the loop at `level` is preceded, in the same
    iteration of that loop, by plain writes covering it; and the dense write boxes of the
    body's statements (relative to `level`)."""
    by_top: dict[int, list[AccessSite]] = {}
    for a in accs:
        by_top.setdefault(a.stmt_path[len(level)], []).append(a)
    ok, dense = _covered_rec(by_top, loops[level].body, level, [], sizes)
    return ok, [b for lv, b in dense if lv == level]


Written = list[tuple[Path, Box]]


def _covered_rec(by_top: Mapping[int, list[AccessSite]], body: tuple[ir.Stmt, ...], level: Path,
                 inherited: Written, sizes: Mapping[str, int]) -> tuple[bool, Written]:
    """Walk `body` (the body of the loop at `level`) in order; a read is covered when its
    footprint, measured at the level of an earlier dense write, lies inside that write's box."""
    dense: Written = []

    def covered(a: AccessSite) -> bool:
        by_level: dict[Path, list[Box]] = {}
        for lv, w in inherited + dense:
            by_level.setdefault(lv, []).append(w)
        for lv, ws in by_level.items():
            b = box_of(a, lv, sizes)
            if b is not None and any(contains(w, b, sizes) for w in union(ws, sizes)):
                return True
        return False

    for i in range(len(body)):
        lst = by_top.get(i, [])
        if not lst:
            continue
        s = body[i]
        here = level + (i,)
        if isinstance(s, ir.Assign):
            if any(not a.write and not covered(a) for a in lst):
                return False, dense
        elif isinstance(s, ir.For):
            sub: dict[int, list[AccessSite]] = {}
            for a in lst:
                sub.setdefault(a.stmt_path[len(here)], []).append(a)
            ok, _ = _covered_rec(sub, s.body, here, inherited + dense, sizes)
            if not ok:
                return False, dense
        for a in lst:
            if a.plain and dense_write(a, level, sizes):
                b = box_of(a, level, sizes)
                if b is not None:
                    dense.append((level, b))
        b = interleaved_box([a for a in lst if a.plain and not dense_write(a, level)], level, sizes)
        if b is not None:
            dense.append((level, b))
    return True, dense


def interleaved_box(writes: list[AccessSite], level: Path, sizes: Mapping[str, int]) -> Box | None:
    """The box `m` plain writes of one tensor fill together when they differ in one dimension
    only, as `m*v + c`, .., `m*v + c + m - 1` of one loop `v` inside `level` (interleaved RoPE's
    `Y[.., 2 * k]`, `Y[.., 2 * k + 1]`), each dense with `v` in place of that index; else None."""
    from dataclasses import replace

    first = writes[0].access.indices if writes else ()
    diff = [d for d in range(len(first)) if any(a.access.indices[d] != first[d] for a in writes)]
    if len(writes) < 2 or len({a.access.tensor for a in writes}) != 1 or len(diff) != 1:
        return None
    d, m = diff[0], len(writes)
    affs = [to_affine(a.access.indices[d], sizes) for a in writes]
    if any(f is None or len(f.vars) != 1 or f.vars != affs[0].vars or f.coeff(next(iter(f.vars))) != m  # type: ignore[union-attr]
           for f in affs) or sorted(f.const for f in affs) != list(range(min(f.const for f in affs), min(f.const for f in affs) + m)):  # type: ignore[union-attr]
        return None
    low = writes[min(range(m), key=lambda i: affs[i].const)]  # type: ignore[union-attr]
    v = ir.Name(next(iter(affs[0].vars)))  # type: ignore[union-attr]
    if not dense_write(replace(low, access=replace(low.access, indices=tuple(v if k == d else e for k, e in enumerate(first)))), level):
        return None
    b = box_of(low, level, sizes)
    span = eval_const(b.dims[d][1], sizes) if b is not None else None
    if b is None or span is None:
        return None
    lo, _, mx, used = b.dims[d]
    b.dims[d] = (lo, lit(span + m - 1), mx + m - 1, used)  # [m*lo_v + c, m*(hi_v - 1) + c + m)
    return b


def common_path(lst: list[AccessSite]) -> Path:
    """The path of the innermost statement enclosing every access of `lst`."""
    common = lst[0].stmt_path[:-1]
    for a in lst[1:]:
        n = 0
        while n < min(len(common), len(a.stmt_path) - 1) and common[n] == a.stmt_path[n]:
            n += 1
        common = common[:n]
    return common


def kept_dims(box: Box) -> list[bool]:
    """True for dimensions kept in the local (slices), False for single indices."""
    out = [used or mx != 1 for (_, _, mx, used) in box.dims]
    if not any(out):
        out = [False] * (len(out) - 1) + [True]
    return out


class WrittenBefore:
    """Which tensors the statements before a nest have written, by region: `x in wb` is true
    when those statements write every element of `x` the nest touches (the hull of its
    accesses over the whole nest, or the whole tensor when that hull is not a box).

    The writes counted are the plain writes that fill their boxes (`dense_write`) over the
    whole of their nest; when some statement before writes `x` in a way this cannot read (a
    `copy`, a top-level assignment), the answer falls back to whether anything before writes
    `x` at all. `stage` copies a tile in only from what is `in` it: a temp written in rows
    0 by one nest and in rows 1.. by the next is not written before the second nest where
    it touches it (the hand-peeled matmul of issue 29, item 12). `wb | {"x"}` also counts
    `x` as written (an earlier part of the same nest writes it)."""

    def __init__(self, before: "tuple[ir.Stmt, ...] | list[ir.Stmt]", nest: ir.Stmt, kernel: ir.Kernel,
                 sizes: Mapping[str, int], extra: frozenset[str] = frozenset()) -> None:
        self.before, self.nest, self.kernel, self.sizes, self.extra = tuple(before), nest, kernel, sizes, extra
        self._names = names_written(self.before)

    def __or__(self, more: "set[str] | frozenset[str]") -> "WrittenBefore":
        return WrittenBefore(self.before, self.nest, self.kernel, self.sizes, self.extra | frozenset(more))

    def __contains__(self, x: object) -> bool:
        if not isinstance(x, str):
            return False
        if x in self.extra:
            return True
        if x not in self._names:
            return False
        written = _dense_written(self.before, x, self.sizes)
        if written is None:  # written in a way not read here: by name
            return True
        region = _footprint(self.nest, x, self.sizes) or _whole(self.kernel, x, self.sizes)
        if region is None and self.kernel.tensor(x) is not None:  # a shape over ranged sizes: by name
            return True
        return region is not None and any(contains(w, region, self.sizes) for w in union(written, self.sizes))


def _wrapped(s: ir.Stmt) -> ir.For:
    """`s` inside a one-iteration loop, so `box_of` at its level covers every loop of `s`."""
    return ir.For("\0", ir.IntLit(0), ir.IntLit(1), (s,))


def _dense_written(stmts: tuple[ir.Stmt, ...], x: str, sizes: Mapping[str, int]) -> list[Box] | None:
    """The boxes of `x` that plain dense writes in the loop nests `stmts` fill over their whole
    nest; None when some statement writes `x` otherwise than by assignments inside loops."""
    out: list[Box] = []
    for s in stmts:
        if x not in names_written((s,)):
            continue
        if not isinstance(s, ir.For) or any(isinstance(c, ir.Copy) and c.dst.tensor == x or isinstance(c, ir.Assign)
                                            and not isinstance(c.target, ir.Access) and c.target.name == x
                                            for c in ir.iter_stmts((s,))):
            return None
        accs, _, _ = collect(_wrapped(s))
        for a in accs.get(x, []):
            if a.write and a.plain and dense_write(a, ()):
                b = _concrete(box_of(a, (), sizes), sizes)
                if b is not None:
                    out.append(b)
    return out


def _concrete(b: Box | None, sizes: Mapping[str, int]) -> Box | None:
    """`b` (the footprint of a whole nest: no loop variable left) with integer corners and
    extents at the kernel's sizes, so boxes of different nests compare; None when some
    corner or extent is not a constant."""
    if b is None:
        return None
    dims = []
    for lo, ext, _, used in b.dims:
        lo_v, ext_v = eval_const(lo, sizes), eval_const(ext, sizes)
        if lo_v is None or ext_v is None:
            return None
        dims.append((lit(lo_v), lit(ext_v), ext_v, used))
    return Box(dims)


def _footprint(nest: ir.Stmt, x: str, sizes: Mapping[str, int]) -> Box | None:
    """The hull of every access to `x` in `nest` over all its loops (None: not a box)."""
    if not isinstance(nest, ir.For):
        return None
    accs, _, _ = collect(_wrapped(nest))
    boxes = [_concrete(box_of(a, (), sizes), sizes) for a in accs.get(x, [])]
    if not boxes or any(b is None for b in boxes):
        return None
    return merge(boxes, sizes)  # type: ignore[arg-type]


def _whole(kernel: ir.Kernel, x: str, sizes: Mapping[str, int]) -> Box | None:
    """The box of every element of tensor `x`."""
    from .affine import eval_int

    decl = kernel.tensor(x)
    if decl is None:
        return None
    dims = []
    for d in decl.shape:
        try:
            n = eval_int(d, sizes)
        except KeyError:  # a ranged size (a symbol for the passes that keep ranges): no one box
            return None
        dims.append((lit(0), lit(n), n, n != 1))
    return Box(dims)
