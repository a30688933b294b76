"""Dependence analysis over affine accesses, and the legality predicates passes use.

Vocabulary
- A *statement* is an `Assign` or a `Copy`; its *instances* are its executions, one per
  point of the iteration space of its enclosing loops.
- An *access* is one tensor reference of a statement: the target of an assignment (a
  write; for `+= *= max= min=` also a read of the same element), every tensor read in the
  value, and for a copy the source region (read) and destination region (write). Copy
  regions are boxes: a dimension is a point (`e`) or a half-open range (`lo:hi`).
- Two accesses *conflict* when they touch the same tensor, at least one writes, and some
  instance of the first and some instance of the second touch a common element.
- A *dependence* goes from the instance that runs first (source) to the one that runs
  second (sink): *flow* (write then read), *anti* (read then write), *output* (write then
  write). Over the loops common to both statements it has a *direction vector*
  (`<` source iteration earlier, `=` same, `>` later, `*` unknown) and, where it is a
  constant, a *distance vector* (sink minus source). Stored vectors are normalised:
  lexicographically positive (the first non-`=` entry is `<`, the loop at that position
  *carries* the dependence) or all `=` (loop-independent; then the source is the access
  that comes first in program order).
- A *reduction dependence* links two instances of reduction statements `T[f] op= e` with the
  same `op` in `+= *= max= min=`, through their targets, where `e` does not read `T`.
  Reordering such instances only reassociates `op`, so passes that reorder iterations
  (interchange) may ignore them; splitting them across cores (multicore) may not.

Exactness: each pair of accesses goes first through a fast test, exact for *uniform*
accesses (every subscript is a constant, or `a*v + c` of one common loop variable `v`
with the same `a` on both sides), which yields exact distances; subscripts over loops the
two statements do not share are compared by interval overlap (conservative). Anything
else (several loop variables in one subscript, e.g. tiled `i0*64 + i1`; ranges with loop
bounds) goes to Z3 over the iteration space (Presburger, exact), refining direction
vectors level by level. A Z3 timeout keeps `*` (conservative, never unsound).
A data-dependent index (`T[ids[t], h]`, `gathers.py`) is a dimension that may take any value:
it constrains nothing (an unconstrained variable for Z3), so such a write may conflict with
every access to the tensor that agrees on the other dimensions; every dependence through
it says so in its description (`AccessInfo.through`), which passes quote when they refuse.

Size: why one module of ~870 lines: the fast test, the Z3 test and the legality predicates
(`interchange_violation`, `fusion_conflict`, `privatizable`, ...) share the private
per-access structures (`_Side`, direction components) and the caches; the vocabulary above
is the one they all use. What other analyses also need is already shared in layer 1: the
access walker (`walk.py`), loop addressing (`loops.py`), index arithmetic (`affine.py`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence, Union

from . import ir
from .affine import Affine, to_affine
from .coverage import covered_by_union
from .loops import get_at
from .walk import sites, uses

if TYPE_CHECKING:
    import networkx as nx

Path = tuple[int, ...]
Comp = Union[int, str]  # an exact distance, or one of "<", "=", ">", "*"

Z3_TIMEOUT_MS = 2000
Z3_MAX_QUERIES = 64  # per access pair; beyond it, remaining components stay "*"

# --------------------------------------------------------------------------------------
# statements and accesses


@dataclass(frozen=True)
class LoopCtx:
    """An enclosing loop of a statement: where it is and what it is."""

    path: Path
    loop: ir.For


@dataclass(frozen=True)
class StmtInfo:
    path: Path
    stmt: "ir.Assign | ir.Copy"
    loops: tuple[LoopCtx, ...]  # enclosing loops, outermost first

    @property
    def loc(self) -> ir.Loc | None:
        return self.stmt.loc


# a dimension of an access: ("pt", expr) or ("rng", lo, hi)
Dim = tuple


@dataclass(frozen=True)
class AccessInfo:
    stmt: StmtInfo
    tensor: str
    write: bool
    dims: tuple[Dim, ...]
    position: int  # order of evaluation inside the statement (reads first, write last)
    loc: ir.Loc | None = field(default=None, compare=False)
    reduction: str | None = None  # the op, when this is the target of a reduction statement
    loc_node: "ir.Access | ir.Name | ir.Region | None" = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        from .printer import format_expr

        def d(x: Dim) -> str:
            return format_expr(x[1]) if x[0] == "pt" else f"{format_expr(x[1])}:{format_expr(x[2])}"

        ref = self.tensor + ("[" + ", ".join(d(x) for x in self.dims) + "]" if self.dims else "")
        return ("write of " if self.write else "read of ") + ref

    def through(self) -> str | None:
        """Why this access may touch any element of some dimension (`gathers.describe_through`),
        when it indexes through a tensor; None for an affine access."""
        dims = tuple(k for k, d in enumerate(self.dims) if d[0] == "pt" and isinstance(d[1], ir.Access))
        if not dims or not isinstance(self.loc_node, ir.Access):
            return None
        from .gathers import describe_through

        return describe_through(self.loc_node, dims)


def statements(kernel: ir.Kernel) -> list[StmtInfo]:
    """Every assignment and copy with its path and enclosing loops, in program order."""
    return [StmtInfo(x.path, x.stmt, tuple(LoopCtx(p, lp) for p, lp in x.loops)) for x in sites(kernel.body)]


def is_reduction_stmt(s: ir.Stmt, tensors: set[str] | None = None) -> bool:
    """`T[f] op= e` with op in `+= *= max= min=` and `e` not reading `T`."""
    if not isinstance(s, ir.Assign) or s.op not in ir.REDUCE_OPS:
        return False
    name = s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
    for sub in ir.sub_exprs(s.value):
        if (isinstance(sub, ir.Access) and sub.tensor == name) or (isinstance(sub, ir.Name) and sub.name == name):
            return False
    return True


def accesses(kernel: ir.Kernel, st: StmtInfo) -> list[AccessInfo]:
    """The accesses of one statement in evaluation order (`walk.uses`): reads first, the
    write last; a copy's regions keep their ranges."""
    s = st.stmt
    out: list[AccessInfo] = []
    if isinstance(s, ir.Assign):
        red = s.op if is_reduction_stmt(s) else None
        for u in uses(s, {t.name for t in kernel.tensors()}):
            dims = tuple(("pt", e) for e in u.indices)
            out.append(AccessInfo(st, u.tensor, u.write, dims, len(out), u.loc, red if u.target else None, u.node))
    else:
        for u in uses(s):
            dims = tuple(("rng", d.lo, d.hi) if isinstance(d, ir.Slice) else ("pt", d) for d in u.indices)
            out.append(AccessInfo(st, u.tensor, u.write, dims, len(out), u.loc or s.loc))
    return out


# --------------------------------------------------------------------------------------
# dependences


@dataclass(frozen=True)
class Dependence:
    kind: str  # "flow" | "anti" | "output"
    src: AccessInfo
    dst: AccessInfo
    loops: tuple[LoopCtx, ...]  # loops common to both statements, outermost first
    direction: tuple[str, ...]  # normalised: lexicographically positive, or all "="
    distance: tuple[int | None, ...]
    reduction: bool = False

    @property
    def level(self) -> int | None:
        """Index (into `loops`) of the loop that carries it; None if loop-independent."""
        for i, d in enumerate(self.direction):
            if d != "=":
                return i
        return None

    @property
    def carrier(self) -> LoopCtx | None:
        lv = self.level
        return None if lv is None else self.loops[lv]

    def describe(self) -> str:
        vec = "(" + ", ".join(self.direction) + ")"
        dist = ""
        if self.distance and all(d is not None for d in self.distance):
            dist = " distance (" + ", ".join(str(d) for d in self.distance) + ")"
        loops = ", ".join(l.loop.var for l in self.loops)
        red = f" ({self.src.reduction} reduction)" if self.reduction else ""
        why = _through(self.src, self.dst)
        return (f"{self.kind} dependence{red} from the {self.src.describe()} to the {self.dst.describe()}, "
                f"direction {vec} over loops ({loops}){dist}" + (f" ({why})" if why else ""))

    def notes(self) -> list[tuple[ir.Loc | None, str]]:
        return [(self.src.loc or self.src.stmt.loc, f"source: {self.src.describe()}"),
                (self.dst.loc or self.dst.stmt.loc, f"sink: {self.dst.describe()}")]


def _through(a: AccessInfo, b: AccessInfo) -> str | None:
    """The data-dependent indices that make two accesses conflict, explained (None if both are affine)."""
    whys = [w for w in (a.through(), b.through()) if w]
    return "; ".join(dict.fromkeys(whys)) or None


def _flip(c: Comp) -> Comp:
    if isinstance(c, int):
        return -c
    return {"<": ">", ">": "<"}.get(c, c)


def _dir(c: Comp) -> str:
    if isinstance(c, int):
        return "<" if c > 0 else ("=" if c == 0 else ">")
    return c


def _expand(vec: tuple[Comp, ...]) -> Iterator[tuple[Comp, ...]]:
    """Split leading `*` entries so that the first non-`=` entry is definite."""
    for i, c in enumerate(vec):
        d = _dir(c)
        if d == "=":
            continue
        if d == "*":
            for sub in ("<", "=", ">"):
                yield from _expand(vec[:i] + (0 if sub == "=" else sub,) + vec[i + 1:])
            return
        yield vec
        return
    yield vec


def _normalise(a: AccessInfo, b: AccessInfo, vec: tuple[Comp, ...], loops: tuple[LoopCtx, ...]) -> Dependence | None:
    """A raw vector (b's iteration minus a's) as a dependence, or None when it names one
    instance against itself (same access, same iteration)."""
    first = next((_dir(c) for c in vec if _dir(c) != "="), "=")
    if first == ">":
        a, b, vec = b, a, tuple(_flip(c) for c in vec)
    elif first == "=":
        if a.stmt.path == b.stmt.path:
            if a.position == b.position:
                return None
            if a.position > b.position:
                a, b = b, a
        elif a.stmt.path > b.stmt.path:
            a, b = b, a
    kind = "flow" if a.write and not b.write else ("anti" if b.write and not a.write else "output")
    red = (a.reduction is not None and a.reduction == b.reduction and a.tensor == b.tensor)
    return Dependence(kind, a, b, loops, tuple(_dir(c) for c in vec),
                      tuple(c if isinstance(c, int) else (0 if c == "=" else None) for c in vec), red)


# ---- per access pair: raw vectors -----------------------------------------------------


class _Side:
    """One access's variables: loop `k` of its statement is named `{tag}{k}`."""

    def __init__(self, acc: AccessInfo, tag: str, sizes: dict[str, int]) -> None:
        self.acc = acc
        self.tag = tag
        self.sizes = sizes
        self.ren = {lc.loop.var: f"{tag}{k}" for k, lc in enumerate(acc.stmt.loops)}

    def aff(self, e: ir.Expr) -> Affine | None:
        a = to_affine(e, self.sizes)
        if a is None:
            return None
        return Affine.make({self.ren.get(v, v): c for v, c in a.coeffs}, a.const)

    def intervals(self) -> dict[str, tuple[int, int]] | None:
        """Closed interval of each loop variable (None if a bound is not evaluable)."""
        env: dict[str, tuple[int, int]] = {}
        for k, lc in enumerate(self.acc.stmt.loops):
            lo = _interval(lc.loop.lo, self, env)
            hi = _interval(lc.loop.hi, self, env)
            if lo is None or hi is None:
                return None
            env[f"{self.tag}{k}"] = (lo[0], hi[1] - 1)
        return env


def _interval(e: ir.Expr, side: _Side, env: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if isinstance(e, ir.Call) and e.func in ("min", "max") and len(e.args) == 2:
        a, b = (_interval(x, side, env) for x in e.args)
        if a is None or b is None:
            return None
        f = min if e.func == "min" else max
        return (f(a[0], b[0]), f(a[1], b[1]))
    af = side.aff(e)
    if af is None:
        return None
    lo = hi = af.const
    for v, c in af.coeffs:
        if v not in env:
            return None
        x0, x1 = env[v]
        lo += min(c * x0, c * x1)
        hi += max(c * x0, c * x1)
    return (lo, hi)


def _trip(lc: LoopCtx, sizes: dict[str, int]) -> int | None:
    lo, hi = to_affine(lc.loop.lo, sizes), to_affine(lc.loop.hi, sizes)
    if lo is None or hi is None:
        return None
    d = hi - lo
    return max(d.const, 0) if d.is_const() else None


class _Complex(Exception):
    pass


def raw_vectors(a: AccessInfo, b: AccessInfo, pairs: Sequence[tuple[int, int]], sizes: dict[str, int]) -> list[tuple[Comp, ...]]:
    """Feasible vectors (b's iteration minus a's, over the identified loop `pairs`
    (depth in a, depth in b)) for which the two accesses touch a common element.
    Empty list: independent. Components are exact distances or directions (`*` = any)."""
    if a.tensor != b.tensor or len(a.dims) != len(b.dims):
        return []
    sa, sb = _Side(a, "x", sizes), _Side(b, "y", sizes)
    try:
        return _fast_vectors(sa, sb, pairs, sizes)
    except _Complex:
        return _z3_vectors(sa, sb, pairs, sizes)


def _fast_vectors(sa: _Side, sb: _Side, pairs: Sequence[tuple[int, int]], sizes: dict[str, int]) -> list[tuple[Comp, ...]]:
    pair_of_x = {f"x{i}": p for p, (i, _) in enumerate(pairs)}
    pair_of_y = {f"y{j}": p for p, (_, j) in enumerate(pairs)}
    dist: dict[int, int] = {}
    ia = ib = None
    for da, db in zip(sa.acc.dims, sb.acc.dims):
        if _gathered(da) or _gathered(db):
            continue  # a data-dependent index may take any value of the dimension: no constraint
        if da[0] != "pt" or db[0] != "pt":
            ra, rb = _dim_interval(da, sa), _dim_interval(db, sb)
            if ra is None or rb is None:
                raise _Complex
            if (da[0] == "rng" and not _const_dim(da, sa)) or (db[0] == "rng" and not _const_dim(db, sb)):
                if ra[1] < rb[0] or rb[1] < ra[0]:
                    return []
                d = _range_distance(da, db, sa, sb, pair_of_x, pair_of_y)
                if d is None:
                    raise _Complex
                p, ds = d
                if not ds or (p in dist and dist[p] not in ds):
                    return []
                if len(ds) > 1:
                    raise _Complex
                dist[p] = ds[0]
                continue
            if ra[1] < rb[0] or rb[1] < ra[0]:
                return []
            continue
        fa, fb = sa.aff(da[1]), sb.aff(db[1])
        if fa is None or fb is None:
            raise _Complex
        if fa.is_const() and fb.is_const():
            if fa.const != fb.const:
                return []
            continue
        ca = [v for v in fa.vars if v in pair_of_x]
        cb = [v for v in fb.vars if v in pair_of_y]
        if not ca and not cb:
            if ia is None:
                ia, ib = sa.intervals(), sb.intervals()
            if ia is None or ib is None:
                raise _Complex
            ra, rb = _interval_aff(fa, ia), _interval_aff(fb, ib)
            if ra[1] < rb[0] or rb[1] < ra[0]:
                return []
            if len(fa.vars) + len(fb.vars) > 1 or (fa.vars and fb.vars):
                continue  # conservative: may overlap
            continue
        if (len(fa.vars) == 1 and len(fb.vars) == 1 and ca and cb
                and pair_of_x[ca[0]] == pair_of_y[cb[0]] and fa.coeffs[0][1] == fb.coeffs[0][1]):
            p = pair_of_x[ca[0]]
            c = fa.coeffs[0][1]
            num = fa.const - fb.const  # c*x + ca = c*y + cb  ->  y - x = (ca - cb) / c
            if num % c:
                return []
            d = num // c
            if dist.get(p, d) != d:
                return []
            dist[p] = d
            continue
        raise _Complex
    vec: list[Comp] = []
    for p, (i, j) in enumerate(pairs):
        la, lb = sa.acc.stmt.loops[i], sb.acc.stmt.loops[j]
        ta, tb = _trip(la, sizes), _trip(lb, sizes)
        if p in dist:
            d = dist[p]
            if ta is not None and tb is not None and la.loop.lo == lb.loop.lo and abs(d) >= max(ta, tb):
                return []
            vec.append(d)
        elif ta == 1 and tb == 1 and la.loop.lo == lb.loop.lo:
            vec.append(0)
        else:
            vec.append("*")
    return [tuple(vec)]


def _gathered(d: Dim) -> bool:
    """Whether a dimension is a data-dependent index (`ids[t]` in `T[ids[t], h]`)."""
    return d[0] == "pt" and isinstance(d[1], ir.Access)


def _paired_range(d: Dim, side: _Side, pair_of: dict[str, int]) -> tuple[int, int, int, int] | None:
    """(pair, c, a, b) when dimension `d` covers [c*v + a, c*v + b) for one identified loop
    variable v (pair `pair`) and c > 0 (a point is the range of width 1), else None."""
    lo = side.aff(d[1])
    hi = lo + Affine((), 1) if (lo is not None and d[0] == "pt") else side.aff(d[2])
    if lo is None or hi is None or len(lo.coeffs) != 1 or lo.coeffs != hi.coeffs:
        return None
    v, c = lo.coeffs[0]
    if v not in pair_of or c <= 0:
        return None
    return pair_of[v], c, lo.const, hi.const


def _range_distance(da: Dim, db: Dim, sa: _Side, sb: _Side, pair_of_x: dict[str, int],
                    pair_of_y: dict[str, int]) -> tuple[int, list[int]] | None:
    """The distances d = y - x of one identified loop pair at which the ranges
    [c*x + a1, c*x + b1) and [c*y + a2, c*y + b2) overlap (tiles of one tile loop: the
    only distance is 0); None when the dimensions are not of that form (Z3 decides)."""
    ra, rb = _paired_range(da, sa, pair_of_x), _paired_range(db, sb, pair_of_y)
    if ra is None or rb is None or ra[0] != rb[0] or ra[1] != rb[1]:
        return None
    p, c, a1, b1 = ra
    _, _, a2, b2 = rb
    if b1 <= a1 or b2 <= a2:
        return None  # an empty range: let the solver say
    # overlap iff c*y + a2 < c*x + b1 and c*x + a1 < c*y + b2, i.e. a1 - b2 < c*d < b1 - a2
    first, last = (a1 - b2) // c + 1, -((a2 - b1) // c) - 1
    if last - first > 64:
        return None
    return p, [d for d in range(first, last + 1) if a1 - b2 < c * d < b1 - a2]


def _const_dim(d: Dim, side: _Side) -> bool:
    return all((a := side.aff(e)) is not None and a.is_const() for e in d[1:])


def _dim_interval(d: Dim, side: _Side) -> tuple[int, int] | None:
    env = side.intervals()
    if env is None:
        return None
    if d[0] == "pt":
        return _interval(d[1], side, env)
    lo, hi = _interval(d[1], side, env), _interval(d[2], side, env)
    if lo is None or hi is None:
        return None
    return (lo[0], hi[1] - 1)


def _interval_aff(f: Affine, env: dict[str, tuple[int, int]]) -> tuple[int, int]:
    lo = hi = f.const
    for v, c in f.coeffs:
        x0, x1 = env[v]
        lo += min(c * x0, c * x1)
        hi += max(c * x0, c * x1)
    return (lo, hi)


def _z3_expr(e: ir.Expr, side: _Side, vars_: dict):  # type: ignore[no-untyped-def]
    import z3

    if isinstance(e, ir.IntLit):
        return z3.IntVal(e.value)
    if isinstance(e, ir.Name):
        if e.name in side.sizes:
            return z3.IntVal(side.sizes[e.name])
        if e.name not in side.ren:  # a ranged size (`Kernel.known_sizes` leaves it out): one symbol,
            # free, for both sides: a dependence at any value is found (sound for its range)
            return vars_.setdefault(f"size:{e.name}", z3.Int(f"size:{e.name}"))
        return vars_[side.ren[e.name]]
    if isinstance(e, ir.Unary):
        return -_z3_expr(e.operand, side, vars_)
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        l, r = _z3_expr(e.lhs, side, vars_), _z3_expr(e.rhs, side, vars_)
        return l + r if e.op == "+" else (l - r if e.op == "-" else l * r)
    if isinstance(e, ir.Binary) and e.op in ("/", "%"):
        # quasi-affine, by a positive constant (checked): Z3's integer div / mod are Euclidean,
        # which for a positive divisor is floor division and the remainder in 0..c-1, as the
        # IR defines them; the query stays Presburger (exact)
        c = to_affine(e.rhs, side.sizes)
        if c is None or not c.is_const() or c.const <= 0:
            raise _Complex
        l = _z3_expr(e.lhs, side, vars_)
        return l / c.const if e.op == "/" else l % c.const
    if isinstance(e, ir.Call) and e.func in ("min", "max") and len(e.args) == 2:
        l, r = _z3_expr(e.args[0], side, vars_), _z3_expr(e.args[1], side, vars_)
        return z3.If(l <= r, l, r) if e.func == "min" else z3.If(l >= r, l, r)
    if isinstance(e, ir.Access):  # a data-dependent index: any value (unconstrained, conservative)
        return z3.FreshInt("g")
    raise _Complex


def _z3_vectors(sa: _Side, sb: _Side, pairs: Sequence[tuple[int, int]], sizes: dict[str, int]) -> list[tuple[Comp, ...]]:
    import z3

    star = [tuple("*" for _ in pairs)]
    s = z3.Solver()
    s.set("timeout", Z3_TIMEOUT_MS)
    vars_: dict[str, object] = {}
    try:
        for side in (sa, sb):
            for k, lc in enumerate(side.acc.stmt.loops):
                v = z3.Int(f"{side.tag}{k}")
                vars_[f"{side.tag}{k}"] = v
                s.add(_z3_expr(lc.loop.lo, side, vars_) <= v, v < _z3_expr(lc.loop.hi, side, vars_))
        for n, (da, db) in enumerate(zip(sa.acc.dims, sb.acc.dims)):
            if da[0] == "pt" and db[0] == "pt":
                s.add(_z3_expr(da[1], sa, vars_) == _z3_expr(db[1], sb, vars_))
                continue
            p = z3.Int(f"p{n}")
            for d, side in ((da, sa), (db, sb)):
                if d[0] == "pt":
                    s.add(p == _z3_expr(d[1], side, vars_))
                else:
                    s.add(_z3_expr(d[1], side, vars_) <= p, p < _z3_expr(d[2], side, vars_))
    except (_Complex, KeyError):
        return star
    budget = [Z3_MAX_QUERIES]

    def check() -> str:
        budget[0] -= 1
        r = s.check()
        return "sat" if r == z3.sat else ("unsat" if r == z3.unsat else "unknown")

    first = check()
    if first == "unsat":
        return []
    if first == "unknown":
        return star
    out: list[tuple[Comp, ...]] = []

    def refine(prefix: tuple[Comp, ...]) -> None:
        k = len(prefix)
        if k == len(pairs):
            out.append(prefix)
            return
        if budget[0] <= 0:
            out.append(prefix + tuple("*" for _ in range(len(pairs) - k)))
            return
        i, j = pairs[k]
        x, y = vars_[f"x{i}"], vars_[f"y{j}"]
        for d, cons in (("<", x < y), ("=", x == y), (">", x > y)):
            s.push()
            s.add(cons)
            r = check()
            if r == "sat":
                refine(prefix + (0 if d == "=" else d,))
            elif r == "unknown":
                out.append(prefix + (d,) + tuple("*" for _ in range(len(pairs) - k - 1)))
            s.pop()

    refine(())
    return out


# ---- the whole kernel -----------------------------------------------------------------


def _common_depth(a: StmtInfo, b: StmtInfo) -> int:
    n = 0
    for la, lb in zip(a.loops, b.loops):
        if la.path != lb.path:
            break
        n += 1
    return n


@dataclass
class DepInfo:
    """Everything known about one kernel's dependences."""

    kernel: ir.Kernel
    stmts: list[StmtInfo]
    deps: list[Dependence]

    @functools.cached_property
    def graph(self) -> nx.DiGraph:
        """The statement graph (nodes: statement paths; edges: source -> sink, attribute
        `deps` (list of Dependence) and `kinds`). Built on first use: no pass needs it, and
        importing networkx costs ~165 ms of every command's start-up."""
        import networkx as nx

        g = nx.DiGraph()
        for st in self.stmts:
            g.add_node(st.path, stmt=st.stmt, loc=st.loc)
        for d in self.deps:
            u, v = d.src.stmt.path, d.dst.stmt.path
            if not g.has_edge(u, v):
                g.add_edge(u, v, deps=[], kinds=set())
            g.edges[u, v]["deps"].append(d)
            g.edges[u, v]["kinds"].add(d.kind)
        return g

    def within(self, loop_path: Path) -> list[Dependence]:
        """Dependences whose two statements are both inside the loop at `loop_path`."""
        n = len(loop_path)
        return [d for d in self.deps if d.src.stmt.path[:n] == loop_path and d.dst.stmt.path[:n] == loop_path]


def accesses_of(kernel: ir.Kernel) -> list[AccessInfo]:
    return [a for st in statements(kernel) for a in accesses(kernel, st)]


@functools.lru_cache(maxsize=256)
def analyze(kernel: ir.Kernel) -> DepInfo:
    """All dependences of `kernel` (and, on first use, its statement graph)."""
    sizes = kernel.known_sizes()
    stmts = statements(kernel)
    by_tensor: dict[str, list[AccessInfo]] = {}
    for st in stmts:
        for acc in accesses(kernel, st):
            by_tensor.setdefault(acc.tensor, []).append(acc)
    deps: list[Dependence] = []
    for accs in by_tensor.values():
        if not any(a.write for a in accs):
            continue
        for ia, a in enumerate(accs):
            for b in accs[ia:]:
                if not (a.write or b.write):
                    continue
                if a is b and not a.write:
                    continue
                n = _common_depth(a.stmt, b.stmt)
                loops = a.stmt.loops[:n]
                for raw in raw_vectors(a, b, [(k, k) for k in range(n)], sizes):
                    for vec in _expand(raw):
                        d = _normalise(a, b, vec, loops)
                        if d is not None:
                            deps.append(d)
    return DepInfo(kernel, stmts, deps)


def dependence_graph(kernel: ir.Kernel) -> nx.DiGraph:
    return analyze(kernel).graph


# --------------------------------------------------------------------------------------
# legality predicates


def _find_loop(kernel: ir.Kernel, path: Path) -> ir.For:
    s = get_at(kernel.body, path)
    assert isinstance(s, ir.For)
    return s


def carried_dependences(kernel: ir.Kernel, loop_path: Path, *, include_reductions: bool = True) -> list[Dependence]:
    """Dependences carried by the loop at `loop_path`: those whose first non-`=` direction
    entry is at that loop. (Formally: exist instances S(x), T(y), conflicting, with
    x and y equal on the loops enclosing L and x_L < y_L.)"""
    n = len(loop_path)
    out = []
    for d in analyze(kernel).deps:
        c = d.carrier
        if c is not None and c.path == loop_path[:n] and c.path == loop_path:
            if include_reductions or not d.reduction:
                out.append(d)
    return out


def carries_dependence(kernel: ir.Kernel, loop_path: Path, *, include_reductions: bool = True) -> Dependence | None:
    """The first dependence the loop carries, or None.
    Condition: some dependence has direction `=` on every loop enclosing L and `<` on L."""
    ds = carried_dependences(kernel, loop_path, include_reductions=include_reductions)
    return ds[0] if ds else None


def is_parallel(kernel: ir.Kernel, loop_path: Path) -> bool:
    """L's iterations may run at once on separate cores, each with private copies of
    the buffers it writes before reading.
    Condition: every dependence L carries (reductions included: a reduction split across
    cores would need a cross-core combine) is on a buffer privatizable in L
    (`parallel_blockers` is empty)."""
    return not parallel_blockers(kernel, loop_path)


def perfect_band(kernel: ir.Kernel, loop_path: Path) -> list[Path]:
    """Paths of the perfect nest starting at `loop_path`: each loop's body is exactly the
    next loop."""
    band = [loop_path]
    loop = _find_loop(kernel, loop_path)
    while len(loop.body) == 1 and isinstance(loop.body[0], ir.For):
        band.append(band[-1] + (0,))
        loop = loop.body[0]
    return band


def interchange_violation(kernel: ir.Kernel, band: Sequence[Path], perm: Sequence[int]) -> Dependence | None:
    """The dependence that forbids reordering the perfect `band` (outermost first) into
    `[band[p] for p in perm]`, or None.
    Condition (legal): for every non-reduction dependence among the band's statements,
    its direction vector with the band's entries permuted is lexicographically
    non-negative (its first non-`=` entry is `<`; a `*` before any `<` counts as `>`)."""
    top = band[0]
    depth0 = len([p for p in range(len(top))])  # noqa: F841 (paths, not depths)
    for d in analyze(kernel).within(top):
        if d.reduction:
            continue
        idx = {lc.path: k for k, lc in enumerate(d.loops)}
        pos = [idx[p] for p in band if p in idx]
        if len(pos) != len(band):
            continue
        vec = list(d.direction)
        new = list(vec)
        for slot, src in zip(pos, [pos[p] for p in perm]):
            new[slot] = vec[src]
        for c in new:
            if c == "=":
                continue
            if c == "<":
                break
            return d  # ">" or "*"
    return None


def can_interchange(kernel: ir.Kernel, band: Sequence[Path], perm: Sequence[int]) -> bool:
    return interchange_violation(kernel, band, perm) is None


@dataclass(frozen=True)
class FusionConflict:
    """Why two loops cannot be fused: the consumer's access at iteration `i` meets the
    producer's at a later iteration `i' > i`."""

    first: AccessInfo  # in the first loop
    second: AccessInfo  # in the second loop
    direction: tuple[str, ...]

    def describe(self) -> str:
        why = _through(self.first, self.second)
        return (f"the {self.second.describe()} in the second loop at iteration i conflicts with the "
                f"{self.first.describe()} in the first loop at a later iteration i' > i" + (f" ({why})" if why else ""))

    def notes(self) -> list[tuple[ir.Loc | None, str]]:
        return [(self.first.loc or self.first.stmt.loc, f"first loop: {self.first.describe()}"),
                (self.second.loc or self.second.stmt.loc, f"second loop: {self.second.describe()}")]


def fusion_conflict(kernel: ir.Kernel, path_a: Path, path_b: Path) -> FusionConflict | None:
    """Why fusing the loop at `path_a` with the next sibling `path_b` (same bounds) would
    change the result, or None.
    Condition (legal): no conflicting pair (s in A, t in B, one a write) has instances
    s(x), t(y) that agree on the loops enclosing both and have y_L < x_L on the fused
    loop L: fusion runs t(y) before s(x) exactly then, while the original runs every A
    instance before every B instance."""
    sizes = kernel.known_sizes()
    stmts = statements(kernel)
    n = len(path_a)
    in_a = [s for s in stmts if s.path[:n] == path_a]
    in_b = [s for s in stmts if s.path[:n] == path_b]
    depth = len(in_a[0].loops) - 1 if in_a else 0
    if not in_a or not in_b:
        return None
    depth = next(k for k, lc in enumerate(in_a[0].loops) if lc.path == path_a)
    pairs = [(k, k) for k in range(depth + 1)]
    acc_a = [a for st in in_a for a in accesses(kernel, st)]
    acc_b = [b for st in in_b for b in accesses(kernel, st)]
    for a in acc_a:
        for b in acc_b:
            if a.tensor != b.tensor or not (a.write or b.write):
                continue
            for vec in raw_vectors(a, b, pairs, sizes):
                outer, last = vec[:-1], _dir(vec[-1])
                if all(_dir(c) in ("=", "*") for c in outer) and last in (">", "*"):
                    return FusionConflict(a, b, tuple(_dir(c) for c in vec))
    return None


def can_fuse(kernel: ir.Kernel, path_a: Path, path_b: Path) -> bool:
    return fusion_conflict(kernel, path_a, path_b) is None


__all__ = [
    "AccessInfo", "DepInfo", "Dependence", "FusionConflict", "LoopCtx", "StmtInfo",
    "accesses", "accesses_of", "analyze", "can_fuse", "can_interchange", "carried_dependences",
    "carries_dependence", "dependence_graph", "fusion_conflict", "interchange_violation",
    "is_parallel", "is_reduction_stmt", "perfect_band", "raw_vectors", "statements",
]


# --------------------------------------------------------------------------------------
# privatisation (for multicore): a buffer each iteration writes before it reads


def privatizable(kernel: ir.Kernel, loop_path: Path, tensor: str) -> bool:
    """Each iteration of L could use its own copy of `tensor` (e.g. each core its own
    UB buffer), so dependences on it carried by L do not order L's iterations.
    Condition: `tensor` is a temp or local; every access to it is inside L; and every read
    R of it is *covered*: some write W (`=` assignment or copy destination), earlier in
    program order inside the same iteration of L, writes the element R reads for every
    instance of R. W covers R when each dimension of W is either an expression over the
    loops W shares with R (equal to R's), a variable of a loop of W not shared with R used
    only there (R's index, or R's copy range, lies in that loop's range), or a copy range
    (R's index or range lies in it) -- checked with Z3 for all instances of R; or several
    writes cover R together (`coverage.covered_by_union`: RoPE's two store patterns). So a tile a
    loop computes into a local and copies out (`C_ub[i, j] = ..; copy C <- C_ub[0:R, 0:C]`)
    is private to each iteration, as `tile` stages it."""
    decl = kernel.tensor(tensor)
    if decl is None or decl.kind not in ("temp", "local"):
        return False
    n = len(loop_path)
    accs = [a for st in statements(kernel) for a in accesses(kernel, st) if a.tensor == tensor]
    if any(a.stmt.path[:n] != loop_path for a in accs):
        return False
    sizes = kernel.known_sizes()
    writes = [a for a in accs if a.write and (isinstance(a.stmt.stmt, ir.Copy) or a.stmt.stmt.op == "=")]
    from .guards import guarded_reads

    for r in accs:
        if r.write:
            continue
        # a read under a `select` arm is made only where its guard holds, inside the tensor
        # (docs/ir.md "Guarded reads"): its indices are cut to the tensor's extents
        guarded = r.loc_node is not None and id(r.loc_node) in guarded_reads(r.stmt.stmt)
        before = [w for w in writes if w.stmt.path < r.stmt.path]
        if not any(_covers(w, r, sizes, decl.shape, guarded) for w in before) and not covered_by_union(before, r, sizes):
            return False
    return True


def _gathered_interval(d: int, shape: "tuple[ir.Expr, ...] | None", sizes: dict[str, int]) -> tuple[int, int] | None:
    """The values a data-dependent index in dimension `d` can take: the whole dimension (an
    index outside it is an error of the kernel, `gathers.py`), when its extent is known."""
    if shape is None:
        return None
    n = to_affine(shape[d], sizes)
    return (0, n.const - 1) if n is not None and n.is_const() else None


def _covers_by_intervals(w: AccessInfo, r: AccessInfo, sizes: dict[str, int],
                         shape: "tuple[ir.Expr, ...] | None" = None, guarded: bool = False) -> bool:
    """`_covers` without the solver, for the common shapes: in each dimension W writes the
    same index as R over the loops they share, or a constant range (a copy, or a private
    loop of W with constant bounds) that contains every index R reads (R's interval over
    its loop ranges). True only when that proves coverage; False means "ask Z3"."""
    shared = _common_depth(w.stmt, r.stmt)
    sw, sr = _Side(w, "w", sizes), _Side(r, "r", sizes)
    for k in range(shared):
        sw.ren[w.stmt.loops[k].loop.var] = f"r{k}"
    private = {w.stmt.loops[k].loop.var: w.stmt.loops[k].loop for k in range(shared, len(w.stmt.loops))}
    used: set[str] = set()
    for k, (dw, dr) in enumerate(zip(w.dims, r.dims)):
        if _gathered(dw):
            return False
        radix = _radix_range(sw.aff(dw[1]), private, used, sw) if dw[0] == "pt" else None
        got_r = _gathered_interval(k, shape, sizes) if _gathered(dr) else _dim_interval(dr, sr)
        if guarded and got_r is not None:  # made only inside the tensor
            whole = _gathered_interval(k, shape, sizes)
            got_r = None if whole is None else (max(got_r[0], whole[0]), min(got_r[1], whole[1]))
        if radix is not None:  # `j0 * 256 + j` over a tile loop and its point loop: a range
            got = got_r
            if got is None or got[0] < radix[0] or got[1] > radix[1] - 1:
                return False
            continue
        if dw[0] == "pt" and isinstance(dw[1], ir.Name) and dw[1].name in private and dw[1].name not in used:
            used.add(dw[1].name)
            loop = private[dw[1].name]
            lo, hi = sw.aff(loop.lo), sw.aff(loop.hi)
        elif dw[0] == "rng":
            lo, hi = sw.aff(dw[1]), sw.aff(dw[2])
        else:
            fw = sw.aff(dw[1])
            if dr[0] != "pt" or fw is None or fw.vars - {f"r{k}" for k in range(shared)} or fw != sr.aff(dr[1]):
                return False
            continue
        if lo is None or hi is None or not lo.is_const() or not hi.is_const():
            return False
        got = got_r
        if got is None or got[0] < lo.const or got[1] > hi.const - 1:
            return False
    return True


def _radix_range(fw: "Affine | None", private: Mapping[str, ir.For], used: set[str],
                 sw: "_Side") -> tuple[int, int] | None:
    """[lo, hi) of the elements W writes in one dimension whose index is `c + s1*v1 + s2*v2
    + ...` over two or more of W's private loops in mixed radix (smallest step 1, each next
    step the span of the loops before: a tile loop and its point loop, `j0 * 256 + j` with
    `j` over 0..256), every loop from a constant to a constant: the spans abut, so all of
    [c + s1*lo1 + .., c + s1*(hi1-1) + .. + 1) is written. Marks the loops used; None when
    not that form."""
    named: dict[str, str] = {}  # the side's name of each private loop variable -> the variable
    for v in private:
        a = sw.aff(ir.Name(v))
        if a is not None and len(a.vars) == 1:
            named[next(iter(a.vars))] = v
    if fw is None or len(fw.vars) < 2 or not fw.vars <= set(named) or {named[x] for x in fw.vars} & used:
        return None
    step, lo, hi = 1, fw.const, fw.const
    for x in sorted(fw.vars, key=fw.coeff):
        v = named[x]
        loop = private[v]
        a, b = sw.aff(loop.lo), sw.aff(loop.hi)
        if a is None or b is None or not a.is_const() or not b.is_const() or fw.coeff(x) != step or b.const <= a.const:
            return None
        lo += step * a.const
        hi += step * (b.const - 1)
        step *= b.const - a.const
    used.update(named[x] for x in fw.vars)
    return lo, hi + 1


def _covers(w: AccessInfo, r: AccessInfo, sizes: dict[str, int], shape: "tuple[ir.Expr, ...] | None" = None,
            guarded: bool = False) -> bool:
    if _covers_by_intervals(w, r, sizes, shape, guarded):
        return True
    if any(_gathered(d) for d in w.dims):
        return False  # a write through an index covers nothing it can be shown to
    import z3

    shared = _common_depth(w.stmt, r.stmt)
    sw, sr = _Side(w, "w", sizes), _Side(r, "r", sizes)
    # W's loops shared with R are R's loops: name them alike
    for k in range(shared):
        sw.ren[w.stmt.loops[k].loop.var] = f"r{k}"
    private = {w.stmt.loops[k].loop.var: k for k in range(shared, len(w.stmt.loops))}
    vars_: dict[str, object] = {}
    s = z3.Solver()
    s.set("timeout", Z3_TIMEOUT_MS)
    try:
        for k, lc in enumerate(r.stmt.loops):
            v = z3.Int(f"r{k}")
            vars_[f"r{k}"] = v
            s.add(_z3_expr(lc.loop.lo, sr, vars_) <= v, v < _z3_expr(lc.loop.hi, sr, vars_))
        fails = []
        used_private: set[str] = set()
        for k, (dw, dr) in enumerate(zip(w.dims, r.dims)):
            # R reads [lo, hi) in this dimension: one index (a point) or a copy's range
            lo = _z3_expr(dr[1], sr, vars_)
            if _gathered(dr):  # a data-dependent index: any value of the dimension
                ext = _gathered_interval(k, shape, sizes)
                if ext is None:
                    return False
                s.add(0 <= lo, lo <= ext[1])
            hi = lo + 1 if dr[0] == "pt" else _z3_expr(dr[2], sr, vars_)
            if dw[0] == "rng":
                fails.append(z3.And(lo < hi, z3.Or(lo < _z3_expr(dw[1], sw, vars_), hi > _z3_expr(dw[2], sw, vars_))))
                continue
            names = {x.name for x in ir.sub_exprs(dw[1]) if isinstance(x, ir.Name)}
            priv = names & set(private)
            if not priv:
                e = _z3_expr(dw[1], sw, vars_)
                fails.append(z3.And(lo < hi, z3.Or(lo != e, hi != e + 1)))
                continue
            if not (isinstance(dw[1], ir.Name) and dw[1].name not in used_private):
                return False
            used_private.add(dw[1].name)
            loop = w.stmt.loops[private[dw[1].name]].loop
            for b in (loop.lo, loop.hi):  # bounds must use shared loops only
                if any(isinstance(x, ir.Name) and x.name in private for x in ir.sub_exprs(b)):
                    return False
            fails.append(z3.And(lo < hi, z3.Or(lo < _z3_expr(loop.lo, sw, vars_), hi > _z3_expr(loop.hi, sw, vars_))))
        if len(used_private) != len(private):
            # a private loop of W that indexes nothing: W's element does not depend on it
            pass
        s.add(z3.Or(*fails) if fails else z3.BoolVal(False))
    except (_Complex, KeyError):
        return False
    return s.check() == z3.unsat


def parallel_blockers(kernel: ir.Kernel, loop_path: Path) -> list[Dependence]:
    """Dependences that stop L's iterations from running on different cores: every
    dependence L carries (reductions included), except those on buffers that are
    privatizable in L (`privatizable`)."""
    out = []
    priv: dict[str, bool] = {}
    for d in carried_dependences(kernel, loop_path, include_reductions=True):
        t = d.src.tensor
        if t not in priv:
            priv[t] = privatizable(kernel, loop_path, t)
        if not priv[t]:
            out.append(d)
    return out
