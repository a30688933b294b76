"""`share_tail`: share the rows of a row loop's last, partial wave over the cores among several
cores, each recomputing the row's statistics and writing a part of the row (exact).

    share_tail           every top-level row loop it applies to
    share_tail{rmax}     the named loops only (refused, with the reason, when one cannot be shared)

What it is for: the lowering spreads the rows of a row loop over the cores, a contiguous
share each. When the rows are not a multiple of the cores, some cores run one row more: long-
row softmax (256 rows of 65536 after `fuse,tile,double_buffer`) runs 6 rows on 16 of the 48
cores and 5 on the others, so the kernel takes 6 rows' time while the average is 5.33. The
statistics of a row (its max and sum) need the whole row, but the last loop over the row
(the normalisation, writing the output) is parallel. So the last `t = R mod cores` rows
become a phase of their own in which each row is run by `k` cores (`k = cores // t`, at most
the last loop's trip count): each computes the row's statistics itself and runs `1/k` of
the last loop. Nothing crosses the cores; the statistics are computed `k` times on cores that
would otherwise wait.

rewrite (`share_tail{rmax}`, 48 cores, after `fuse,tile,double_buffer` at 256 x 65536):
    rmax: for r0 in 0..256 {                  rmax: for r0 in 0..240 { ... }   (5 rows per core)
      for r in 0..1 {                         rmax_tail: for r0 in 240..256 {
        mx = -inf; <max pass>          ->       for p in 0..3 {
        sm = 0.0; <sum pass>                      for r in 0..1 {
        for c0_2 in 0..8 { <normalise> }            mx_1 = -inf; <max pass>   (names of the row
      }                                             sm_1 = 0.0; <sum pass>     made private to
    }                                               for c0_2 in p * 3..min(p * 3 + 3, 8) { .. }
                                                  }                            the new phase)
                                                }
                                              }
The lowering collapses `rmax_tail` x `p` into 48 units, one per core.

It requires (each refusal says which failed):
    1) the loop is a top-level loop with constant bounds whose last wave over the cores is
       partial: `R mod cores` (or `R`, when `R < cores`) rows, not 0, and at least two
       cores per such row;
    2) its body, through loops of one iteration (`tile`'s `for r in 0..1`), ends with a loop
       (the shared loop) with constant bounds and at least 2 iterations;
    3) the row loop is parallel (`deps.is_parallel`: what a row writes before reading is
       private to it), so a row's statements before the shared loop compute the same values
       each time they run;
    4) the shared loop's iterations are independent (`deps.is_parallel`), and nothing before
       it in the row reads what it writes, so its parts may run on different cores.
The names the row writes that are private to it (scalar temps, locals) get fresh names in the
new phase (a local used by two phases would live in GM). Results are bit-identical: the same
statements compute the same values. Like `rfactor`, it runs only when asked (`space()` is
empty): what it gains depends on the target's core count and the pipeline before it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.deps import is_parallel, privatizable
from transformer.diagnostics import NotApplicable
from transformer.lower.spread import kind_cores, written
from transformer.targets import Target

from ._rewrite import const_trip, fresh, loop_header, map_expr, map_loops, map_region, simp, used_names
from .base import Pass, TraceEntry, register
from .params import Loop, Names, Params

TAIL_SUFFIX = "_tail"


@register
@dataclass(frozen=True)
class ShareTail(Pass):
    """Share the rows of a row loop's last, partial wave over the cores among several cores."""

    name: ClassVar[str] = "share_tail"
    summary: ClassVar[str] = ("the rows of a row loop's last, partial wave over the cores shared by several cores, each "
                              "recomputing the row's statistics and writing a part of its last loop (exact)")
    params: ClassVar[Params] = Names("loops", Loop(), optional=True, noun="loop", example="rmax",
                                     note="none: every top-level row loop it applies to")
    loops: tuple[str, ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        cores, kind = kind_cores(target, "vec")
        named: dict[int, str] = {}
        for n in self.loops:
            idx = next((i for i, s in enumerate(kernel.body) if isinstance(s, ir.For) and n in (s.label, s.var)), None)
            if idx is None:
                raise NotApplicable(self.name, f"`{n}` is not a top-level loop", kernel.loc, loops=(n,),
                                    hint="name a row loop at the top of the kernel, e.g. `share_tail{rmax}`")
            named[idx] = n
        body: list[ir.Stmt] = []
        new: list[ir.TensorDecl] = []
        for i, s in enumerate(kernel.body):
            body.append(s)
            if not isinstance(s, ir.For) or (named and i not in named):
                continue
            why = _why_not(kernel, i, cores)
            if isinstance(why, str):
                if named:
                    raise NotApplicable(self.name, f"cannot share the last rows of `{named[i]}`: {why}", s.loc,
                                        loops=(named[i],))
                continue
            body[-1:] = _split(kernel, s, why, cores, kind, trace, new)
        if not new and len(body) == len(kernel.body):
            trace.noop = (f"no top-level row loop has a partial last wave over the {cores} {kind} cores to share "
                          "(or the rows before its last loop over the row cannot be recomputed)")
        return dataclasses.replace(kernel, body=tuple(body), buffers=kernel.buffers + tuple(new))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        return []


@dataclass(frozen=True)
class _Plan:
    lo: int  # the row loop's bounds
    hi: int
    tail: int  # rows in the last wave
    path: tuple[int, ...]  # from the row loop's body down to the shared loop (through 1-trip loops)
    parts: int
    per: int  # iterations of the shared loop per part
    last: ir.For


def _why_not(kernel: ir.Kernel, i: int, cores: int) -> "_Plan | str":
    loop = kernel.body[i]
    assert isinstance(loop, ir.For)
    sizes = kernel.known_sizes()
    ct = const_trip(loop, sizes)
    if ct is None:
        return f"`{loop_header(loop)}` has no constant bounds"
    lo, trip = ct
    tail = trip % cores if trip >= cores else trip
    if tail == 0:
        return f"its {trip} rows are a multiple of the {cores} cores: every core runs as many"
    path: list[int] = []
    stmts = loop.body
    while len(stmts) == 1 and isinstance(stmts[0], ir.For) and (c := const_trip(stmts[0], sizes)) and c[1] == 1:
        path.append(0)
        stmts = stmts[0].body
    last = stmts[-1] if stmts else None
    if not isinstance(last, ir.For):
        return "its row's body does not end with a loop over the row"
    lt = const_trip(last, sizes)
    if lt is None or lt[1] < 2:
        return f"its row's last loop `{loop_header(last)}` has no constant trip count of 2 or more"
    if not is_parallel(kernel, (i,)):
        return f"`{loop_header(loop)}` is not parallel: its rows depend on each other"
    if not is_parallel(_alone(kernel, i, len(path)), (0, *path, 0)):
        return f"the iterations of its row's last loop `{loop_header(last)}` depend on each other"
    # a part's statements before the last loop run after the previous part's last loop: they
    # may not read what it writes, unless each row writes that before reading it (private)
    read_before = {n for s in stmts[:-1] for n in ir.names_used((s,))}
    shared = sorted(n for n in written((last,)) & read_before if not privatizable(kernel, (i,), n))
    if shared:
        return f"the row reads `{shared[0]}` before its last loop `{loop_header(last)}` writes it"
    parts = min(cores // tail, lt[1])
    per = -(-lt[1] // parts)
    parts = -(-lt[1] // per)
    if parts < 2:
        return f"{tail} rows in the last wave leave fewer than 2 cores per row"
    return _Plan(lo, lo + trip, tail, tuple(path), parts, per, last)


def _alone(kernel: ir.Kernel, i: int, depth: int) -> ir.Kernel:
    """The kernel with only the row loop `kernel.body[i]`, its row's body cut down to its last
    loop: buffers the row's earlier statements also use (one tile buffer for every pass over
    the row) are then private to the last loop when it writes before it reads them."""
    def cut(s: ir.For, d: int) -> ir.For:
        inner = s.body[0] if d else s.body[-1]
        return dataclasses.replace(s, body=(cut(inner, d - 1) if d else inner,))  # type: ignore[arg-type]

    return dataclasses.replace(kernel, body=(cut(kernel.body[i], depth),))  # type: ignore[arg-type]


def _split(kernel: ir.Kernel, loop: ir.For, plan: _Plan, cores: int, kind: str, trace: TraceEntry,
           new: list[ir.TensorDecl]) -> list[ir.Stmt]:
    """The loop's first rows, then its last wave shared (module docstring); the declarations
    of the names made private to the new phase are appended to `new`."""
    taken = used_names(kernel) | {d.name for d in new}
    cut = plan.hi - plan.tail
    # names private to the row (temps and locals it writes, used nowhere else): fresh in the tail
    inside = {d.name: d for d in kernel.buffers if d.name in written(loop.body)}
    outside = {n for s in kernel.body if s is not loop for n in ir.names_used((s,))}
    rename: dict[str, str] = {}
    for n, d in inside.items():
        if n in outside:
            continue
        rename[n] = fresh(n, taken)
        taken.add(rename[n])
        new.append(dataclasses.replace(d, name=rename[n]))
    p = fresh("p", taken)
    taken.add(p)
    lo_l, hi_l = plan.last.lo, plan.last.hi
    start = simp(ir.Binary("+", lo_l, ir.Binary("*", ir.Name(p), ir.IntLit(plan.per))))
    part = dataclasses.replace(plan.last, lo=start,
                               hi=simp(ir.Call("min", (ir.Binary("+", start, ir.IntLit(plan.per)), hi_l))))

    def rebuild(stmts: tuple[ir.Stmt, ...], path: tuple[int, ...]) -> tuple[ir.Stmt, ...]:
        if not path:
            return stmts[:-1] + (part,)
        inner = stmts[0]
        assert isinstance(inner, ir.For)
        return (dataclasses.replace(inner, body=rebuild(inner.body, path[1:])),)

    row = rebuild(loop.body, plan.path)
    row = tuple(_renamed(s, rename) for s in row)
    row = tuple(map_loops(s, lambda f: dataclasses.replace(f, label=None)) for s in row)
    label = fresh((loop.label or loop.var) + TAIL_SUFFIX, taken)
    tail = ir.For(loop.var, ir.IntLit(cut), ir.IntLit(plan.hi),
                  (ir.For(p, ir.IntLit(0), ir.IntLit(plan.parts), row, loc=loop.loc, var_loc=loop.var_loc),),
                  label=label, loc=loop.loc, var_loc=loop.var_loc)
    name = loop.label or loop.var
    trace.changes.append(f"shared the last {plan.tail} rows of `{name}` ({plan.hi - plan.lo} rows over {cores} {kind} "
                         f"cores) among {plan.parts} cores each in `{label}`: each recomputes the row up to "
                         f"`{loop_header(plan.last)}` and runs up to {plan.per} of its iterations")
    if rename:
        trace.decisions.append(f"`{label}` uses its own {', '.join(f'`{v}`' for v in rename.values())} (private to a row)")
    out: list[ir.Stmt] = []
    if cut > plan.lo:
        out.append(dataclasses.replace(loop, hi=ir.IntLit(cut)))
    out.append(tail)
    return out


def _renamed(s: ir.Stmt, m: dict[str, str]) -> ir.Stmt:
    """`s` with the tensors and scalars named in `m` renamed (reads, writes, copy regions)."""
    if not m:
        return s

    def f(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Name) and e.name in m:
            return dataclasses.replace(e, name=m[e.name])
        if isinstance(e, ir.Access) and e.tensor in m:
            return dataclasses.replace(e, tensor=m[e.tensor])
        return e

    def region(r: ir.Region) -> ir.Region:
        return map_region(dataclasses.replace(r, tensor=m.get(r.tensor, r.tensor)), lambda e: map_expr(e, f))

    if isinstance(s, ir.Copy):
        return dataclasses.replace(s, dst=region(s.dst), src=region(s.src))
    if isinstance(s, ir.Assign):
        return dataclasses.replace(s, target=map_expr(s.target, f), value=map_expr(s.value, f))  # type: ignore[arg-type]
    assert isinstance(s, ir.For)
    return dataclasses.replace(s, body=tuple(_renamed(b, m) for b in s.body))
