"""Static bounds proof: every index and copy region stays inside its tensor, at every
iteration, for the kernel's sizes.

Why: a transformed kernel keeps the loop bounds its passes derived from the sizes it was
transformed at (`tile` writes `for t0 in 0..64` for M = 512). Given another size with
`--size M=128`, its copies would run past the end of the tensor; the emitter would then
write a negative DMA count. The interpreter finds this only when it runs; `emit`, `check`
and `profile` never run the kernel, so the driver asks this module first, and refuses the
kernel with the first access that leaves its tensor, located at that access.

How: for each access (an index of `T[...]`, or a slice `lo:hi` of a copy region), Z3 looks
for loop-variable values inside the enclosing loops' ranges (`lo <= v < hi`, `min`/`max`
bounds as written) that put the index outside `0 .. extent - 1` (a slice: `lo < 0` or
`hi > extent`, for a non-empty slice). The sizes are fixed values (`sizes`), or, for a
size declared with a range (`size S = 1024 in 1..65536`), a Z3 variable over that range:
then "sat" is a size and an iteration that break the kernel, and "unsat" proves it for
every size in the range. A Z3 model is the witness quoted in the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from . import ir
from .diagnostics import SemanticError
from .guards import guarded_accesses

_HINT = ("if the kernel was transformed at other sizes, its loop bounds are the ones its passes derived "
         "from those: run the passes on the original kernel with these sizes instead")

_RANGED_HINT = ("a loop bound or index written as a number serves one size only: write it with the size, "
                "or narrow the size's range")

# Z3 gives up on a single query after this long (nonlinear products of ranged sizes); an
# unknown is reported as an error too: the kernel is not proven safe.
TIMEOUT_MS = 10000


@dataclass(frozen=True)
class _Site:
    """One place a tensor dimension is indexed: `lo` (and `hi` for a slice, half-open)."""

    tensor: str
    dim: int
    lo: ir.Expr
    hi: ir.Expr | None  # None: a single index
    loc: ir.Loc | None
    what: str  # "read", "write", "copy source", "copy destination"
    loops: tuple[ir.For, ...]
    guards: tuple = ()  # the `select` conditions a read is under (guards.py): assumed by the proof


def _sites(stmts: tuple[ir.Stmt, ...], loops: tuple[ir.For, ...] = ()) -> Iterator[_Site]:
    for s in stmts:
        if isinstance(s, ir.For):
            yield from _sites(s.body, loops + (s,))
        elif isinstance(s, ir.Copy):
            for r, what in ((s.dst, "copy destination"), (s.src, "copy source")):
                for d, dim in enumerate(r.dims):
                    if isinstance(dim, ir.Slice):
                        yield _Site(r.tensor, d, dim.lo, dim.hi, r.loc or s.loc, what, loops)
                    else:
                        yield _Site(r.tensor, d, dim, None, r.loc or s.loc, what, loops)
        elif isinstance(s, ir.Assign):
            for e, what in ((s.target, "write"), (s.value, "read")):
                for x, guards in guarded_accesses(e):
                    for d, idx in enumerate(x.indices):
                        yield _Site(x.tensor, d, idx, None, x.loc or s.loc, what, loops, guards)


class _Z3:
    """IR integer expressions -> Z3 terms over sizes and loop variables."""

    def __init__(self, z3: Any, sizes: Mapping[str, int], ranged: Mapping[str, Any]) -> None:
        self.z3, self.sizes, self.ranged = z3, sizes, ranged
        self.vars: dict[str, Any] = {}

    def var(self, name: str) -> Any:
        if name not in self.vars:
            self.vars[name] = self.z3.Int(name)
        return self.vars[name]

    def __call__(self, e: ir.Expr) -> Any:
        z3 = self.z3
        if isinstance(e, ir.IntLit):
            return z3.IntVal(e.value)
        if isinstance(e, ir.Name):
            if e.name in self.ranged:
                return self.ranged[e.name]
            if e.name in self.sizes:
                return z3.IntVal(self.sizes[e.name])
            return self.var(e.name)
        if isinstance(e, ir.Unary):
            return -self(e.operand)
        if isinstance(e, ir.Binary):
            a, b = self(e.lhs), self(e.rhs)
            ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                   "/": lambda: a / b, "%": lambda: a % b,  # Z3 Int `/`, `%`: floor for b > 0
                   "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
                   "==": lambda: a == b, "!=": lambda: a != b}  # a `select` condition (guards)
            if e.op in ops:
                return ops[e.op]()
        if isinstance(e, ir.Call) and e.func in ("min", "max") and len(e.args) == 2:
            a, b = self(e.args[0]), self(e.args[1])
            return z3.If(a <= b, a, b) if e.func == "min" else z3.If(a >= b, a, b)
        raise ValueError(f"not an integer index expression: {e!r}")


def _text(e: ir.Expr) -> str:
    from .printer import format_expr

    return format_expr(e)


# --------------------------------------------------------------------------------------
# Fast paths without Z3: most accesses (`X[i, j]` in `0..N`) are decided by interval
# arithmetic over the loop box, most output ends by the iteration with every loop at its
# last value; Z3 is asked only about the rest (tails written with `min`).

Interval = tuple[int, int]


def _interval(e: ir.Expr, env: Mapping[str, Interval]) -> Interval | None:
    """An interval holding every value of the integer expression `e` when each name lies
    in its interval of `env` (None: not decided here: `/`, `%`, an unknown name)."""
    if isinstance(e, ir.IntLit):
        return e.value, e.value
    if isinstance(e, ir.Name):
        return env.get(e.name)
    if isinstance(e, ir.Unary):
        a = _interval(e.operand, env)
        return None if a is None else (-a[1], -a[0])
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*"):
        a, b = _interval(e.lhs, env), _interval(e.rhs, env)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a[0] + b[0], a[1] + b[1]
        if e.op == "-":
            return a[0] - b[1], a[1] - b[0]
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if isinstance(e, ir.Call) and e.func in ("min", "max") and len(e.args) == 2:
        a, b = _interval(e.args[0], env), _interval(e.args[1], env)
        if a is None or b is None:
            return None
        pick = min if e.func == "min" else max
        return pick(a[0], b[0]), pick(a[1], b[1])
    return None


def _loop_box(loops: tuple[ir.For, ...], env: dict[str, Interval]) -> dict[str, Interval] | None:
    """`env` with each loop variable's interval (outer loops first); None when some loop's
    range is not decided here or is empty (then the caller asks Z3, which knows)."""
    box = dict(env)
    for f in loops:
        lo, hi = _interval(f.lo, box), _interval(f.hi, box)
        if lo is None or hi is None or hi[1] - 1 < lo[0]:
            return None
        box[f.var] = (lo[0], hi[1] - 1)
    return box


def _inside(site: _Site, extent: ir.Expr, env: dict[str, Interval]) -> bool:
    """Interval arithmetic proves the site inside `0 .. extent - 1` (False: not proven)."""
    box = _loop_box(site.loops, env)
    if box is None:
        return False
    ext, lo = _interval(extent, box), _interval(site.lo, box)
    if ext is None or lo is None:
        return False
    if site.hi is None:
        return lo[0] >= 0 and lo[1] <= ext[0] - 1
    hi = _interval(site.hi, box)
    return hi is not None and lo[0] >= 0 and hi[1] <= ext[0]


def may_leave(a: ir.Access, loops: "tuple[ir.For, ...]", shape: tuple[ir.Expr, ...],
              sizes: Mapping[str, int]) -> str | None:
    """Why the access `a` (inside `loops`, outermost first) would index outside its tensor at
    some iteration if it were made unconditionally (`i - 1` reaching -1: interval arithmetic
    over the loops' ranges), or None when it finds no such index (or cannot decide one)."""
    box = _loop_box(loops, {n: (v, v) for n, v in sizes.items()})
    if box is None:
        return None
    for d, (e, ext) in enumerate(zip(a.indices, shape)):
        if isinstance(e, ir.Access):
            continue  # a data-dependent index is in bounds by the kernel's contract (gathers.py)
        iv, n = _interval(e, box), _interval(ext, box)
        if iv is None or n is None:
            continue
        if iv[0] < 0 or iv[1] > n[0] - 1:
            # intervals lose the loops' correlation (`i0 * 2 + i` with `i < min(2, M - i0 * 2)`
            # looks like it reaches M): ask Z3 for an iteration that really leaves
            reached = _leaving_value(e, ext, loops, sizes)
            if reached is None:
                continue
            from .printer import format_expr

            return f"its index `{format_expr(e)}` reaches {reached} (dimension {d} has {n[0]})"
    return None


def _leaving_value(e: ir.Expr, ext: ir.Expr, loops: "tuple[ir.For, ...]", sizes: Mapping[str, int]) -> int | None:
    """A value of index `e` outside `0..ext` at some iteration of `loops` (Z3), or None when
    there is none; an undecided or untranslatable query counts as leaving (conservative)."""
    import z3

    conv = _Z3(z3, sizes, {})
    try:
        idx, n = conv(e), conv(ext)
        facts = [c for f in loops for v in (conv.var(f.var),) for c in (v >= conv(f.lo), v < conv(f.hi))]
    except ValueError:
        return -1
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*facts, z3.Or(idx < 0, idx >= n))
    verdict = s.check()
    if verdict == z3.unsat:
        return None
    if verdict == z3.sat:
        v = s.model().eval(idx, model_completion=True)
        return v.as_long() if z3.is_int_value(v) else -1
    return -1


def _reaches_last(site: _Site, last: int, sizes: Mapping[str, int]) -> bool:
    """The iteration with every loop at its last value writes index `last` (a witness)."""
    point: dict[str, Interval] = {n: (v, v) for n, v in sizes.items()}
    for f in site.loops:
        lo, hi = _interval(f.lo, point), _interval(f.hi, point)
        if lo is None or hi is None or hi[0] <= lo[0]:
            return False
        point[f.var] = (hi[0] - 1, hi[0] - 1)
    lo = _interval(site.lo, point)
    if site.hi is None:
        return lo == (last, last)
    hi = _interval(site.hi, point)
    return lo is not None and hi is not None and lo[0] <= last < hi[0]



def out_of_bounds(k: ir.Kernel, sizes: Mapping[str, int] | None = None,
                  ranges: Mapping[str, tuple[int, int, int]] | None = None) -> list[SemanticError]:
    """Located errors for the accesses of `k` that can leave their tensor (at most one per
    tensor dimension and statement location), the first one first.

    `sizes` default to the kernel's size values; `ranges` maps a size to `(lo, hi, step)`
    (inclusive range, values multiples of `step`) to prove the accesses for every value."""
    sizes = dict(k.size_values() if sizes is None else sizes)
    ranges = dict(ranges or {})
    for n in ranges:
        sizes.pop(n, None)
    env = {n: (v, v) for n, v in sizes.items()} | {n: (lo, hi) for n, (lo, hi, _) in ranges.items()}
    sites = [s for s in _sites(k.body) if (t := k.tensor(s.tensor)) is not None and s.dim < t.rank
             and not _inside(s, t.shape[s.dim], env)]  # a bad tensor or rank: the semantic checker reports it
    if not sites:
        return []  # proven by intervals alone: Z3 not even imported
    import z3

    ranged = {n: z3.Int(n) for n in ranges}
    conv = _Z3(z3, sizes, ranged)
    size_facts = []
    for n, (lo, hi, step) in ranges.items():
        size_facts += [ranged[n] >= lo, ranged[n] <= hi]
        if step > 1:
            size_facts.append(ranged[n] % step == 0)
    errors: list[SemanticError] = []
    seen: set[tuple[str, int, object]] = set()
    for site in sites:
        t = k.tensor(site.tensor)
        assert t is not None
        key = (site.tensor, site.dim, site.loc)
        if key in seen:
            continue
        try:
            extent = conv(t.shape[site.dim])
            lo = conv(site.lo)
            hi = conv(site.hi) if site.hi is not None else None
            facts = list(size_facts)
            for f in site.loops:
                v = conv.var(f.var)
                facts += [v >= conv(f.lo), v < conv(f.hi)]
        except ValueError:
            continue  # not affine: the semantic checker reports it
        for cond, want in site.guards:  # a guarded read: only where its arm is chosen
            try:
                c = conv(cond)
            except ValueError:
                continue  # a condition on data: not assumed (conservative)
            facts.append(c if want else z3.Not(c))
        s = z3.Solver()
        s.set("timeout", TIMEOUT_MS)
        s.add(*facts)
        bad = z3.Or(lo < 0, lo >= extent) if hi is None else z3.And(hi > lo, z3.Or(lo < 0, hi > extent))
        s.add(bad)
        verdict = s.check()
        if verdict == z3.unsat:
            continue
        seen.add(key)
        errors.append(_error(site, t, verdict == z3.unknown, s.model() if verdict == z3.sat else None,
                             conv, lo, hi, extent, ranged))
    return errors


def unwritten_ends(k: ir.Kernel, sizes: Mapping[str, int] | None = None, *,
                   hint: str = _HINT) -> list[SemanticError]:
    """Located errors for output dimensions whose last index no write reaches.

    A necessary condition of "every output element is written" (the interpreter checks the
    whole condition when it runs): for each output dimension, some write, at some
    iteration, reaches index `extent - 1`. A kernel whose loop bounds were derived at a
    smaller size fails it at a larger one (`for t0 in 0..64` of 8 rows covers 512 rows, not
    1024). The sizes are fixed values (a ranged size is checked at its ends by the caller)."""
    fixed = dict(k.size_values() if sizes is None else sizes)
    sites = [s for s in _sites(k.body) if s.what in ("write", "copy destination")]
    errors: list[SemanticError] = []
    point = {n: (v, v) for n, v in fixed.items()}
    for t in k.outputs:
        for d, shape in enumerate(t.shape):
            mine = [s for s in sites if s.tensor == t.name and s.dim == d]
            ext = _interval(shape, point)
            if ext is not None and any(_reaches_last(s, ext[0] - 1, fixed) for s in mine):
                continue
            import z3

            conv = _Z3(z3, fixed, {})
            try:
                last = conv(shape) - 1
                reach = []
                for site in mine:
                    facts = [z3.And(conv.var(f.var) >= conv(f.lo), conv.var(f.var) < conv(f.hi)) for f in site.loops]
                    lo = conv(site.lo)
                    hit = lo == last if site.hi is None else z3.And(lo <= last, last < conv(site.hi))
                    reach.append(z3.And(*facts, hit))
            except ValueError:
                continue
            s = z3.Solver()
            s.set("timeout", TIMEOUT_MS)
            s.add(z3.Or(*reach) if reach else z3.BoolVal(False))
            if s.check() == z3.unsat:
                n = z3.simplify(last + 1)
                errors.append(SemanticError(
                    f"output `{t.name}` is not written to its end: no write reaches index {z3.simplify(last)} of "
                    f"dimension {d} ({_text(shape)} = {n})", (mine[0].loc if mine else None) or t.loc,
                    hint=hint))
    return errors


def check_bounds(k: ir.Kernel, sizes: Mapping[str, int] | None = None) -> list[SemanticError]:
    """`out_of_bounds` then `unwritten_ends`: the accesses a kernel's loop bounds imply fit
    its tensors at `sizes` (default: the kernel's), and reach the ends of its outputs."""
    return out_of_bounds(k, sizes) + unwritten_ends(k, sizes)


def range_ends(k: ir.Kernel) -> list[dict[str, int]]:
    """The sizes at the ranged sizes' smallest and largest allowed values (the others at
    their values), distinct."""
    out: list[dict[str, int]] = []
    for pick in (min, max):
        env = k.size_values()
        for n, (lo, hi, step) in k.size_ranges().items():
            env[n] = pick(-(-lo // step) * step, hi // step * step)
        if env not in out:
            out.append(env)
    return out


def check_ranged_bounds(k: ir.Kernel) -> list[SemanticError]:
    """A kernel with ranged sizes: its accesses stay inside its tensors for every value of
    the ranges (one Z3 query per access, the sizes free in their ranges), and its outputs are
    written to their ends at the ranges' ends (`unwritten_ends` takes fixed sizes)."""
    if not k.size_ranges():
        return []
    errors = out_of_bounds(k, ranges=k.size_ranges())
    for env in range_ends(k):
        if errors:
            break
        errors = [SemanticError(f"at {', '.join(f'{n} = {env[n]}' for n in k.size_ranges())}: {e.message}",
                                e.loc, hint=e.hint) for e in unwritten_ends(k, env, hint=_RANGED_HINT)]
    return errors


def _error(site: _Site, t: ir.TensorDecl, unknown: bool, model: Any, conv: _Z3, lo: Any, hi: Any,
           extent: Any, ranged: Mapping[str, Any]) -> SemanticError:
    dim = _text(t.shape[site.dim])
    span = _text(site.lo) + ("" if site.hi is None else ":" + _text(site.hi))
    if unknown:
        return SemanticError(f"cannot prove the {site.what} `{site.tensor}` stays inside its dimension "
                             f"{site.dim} ({dim}): `{span}`: the solver gave up", site.loc,
                             hint="narrow the size ranges, or give the sizes with --size")

    def val(x: Any) -> int:
        return model.eval(x, model_completion=True).as_long()

    where = ", ".join(f"{f.var} = {val(conv.var(f.var))}" for f in site.loops)
    sizes = ", ".join(f"{n} = {val(z)}" for n, z in ranged.items())
    got = f"{val(lo)}" if hi is None else f"{val(lo)}:{val(hi)}"
    at = ", ".join(x for x in (sizes, where) if x)
    return SemanticError(
        f"the {site.what} `{site.tensor}` leaves its dimension {site.dim} ({dim} = {val(extent)}): "
        f"`{span}` reaches {got}" + (f" when {at}" if at else ""),
        site.loc,
        hint=_RANGED_HINT if ranged else _HINT)
