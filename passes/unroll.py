"""`unroll`: replicate a loop's body, by a factor (with a remainder loop) or fully.

args:
    `unroll{L=4}`     unroll loop `L` by 4: the body appears 4 times per iteration of a new
                      loop over `trip // 4` iterations; the `trip % 4` leftover iterations
                      run in a remainder loop right after (omitted when 4 divides the trip)
    `unroll{L=full}`  replace `L` by `trip` copies of its body with the variable replaced by
                      each value (also what a factor equal to the trip count does)

This is a real rewrite, not an `@unroll(n)` hint for the code generator. The trip count is
evaluated at the kernel's sizes (the `--size` in force), so the result is specialised to
them, like every pass that splits a loop.

It requires:
    1) `L` exists and is named unambiguously;
    2) `L`'s trip count is a compile-time constant (its bounds use no loop variable);
    3) the factor is at least 2 and at most the trip count (`full` needs trip >= 1, and at
       most FULL_UNROLL_MAX copies).
Unrolling never reorders instances, so no dependence can forbid it. Labels of loops inside
the body are renamed in the copies (`L2`, ...) so every label stays unique; the remainder
loop is labelled `<label>_rem`.

rewrite (unroll{k=2}, trip 5):
    for k in 0..5 {          for ku in 0..2 {
      s += A[k]        ->      s += A[2 * ku]
    }                          s += A[2 * ku + 1]
                             }
                             for k in 4..5 {
                               s += A[k]
                             }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import BadParameter, NotApplicable

from ._rewrite import add, const_trip, fresh, lit, loop_header, map_loops, mul, subst_stmt, used_names
from .params import Entry, IntOrFull, Loop, Params
from .base import Pass, PassError, TraceEntry, all_loops, name_of_loop, register, replace_at, resolve_loop
from transformer.targets import Target

FULL_UNROLL_MAX = 1024  # copies a `full` request may create
SPACE_FACTORS = (2, 4)  # factors `space()` offers
SPACE_FULL_MAX = 8  # `space()` offers full unrolling up to this trip count
SPACE_BODY_MAX = 24  # ... and only for bodies of at most this many statements (after unrolling)


@register
@dataclass(frozen=True)
class Unroll(Pass):
    name: ClassVar[str] = "unroll"
    summary: ClassVar[str] = "unroll a loop by a factor (remainder loop after) or fully (constant trip counts)"
    params: ClassVar[Params] = Entry("loop", "factor", Loop(), IntOrFull(minimum=2, full_value=0),
                                     value_name="factor", example="qk.k=4",
                                     note="N: the unroll factor (remainder loop after); full: unroll completely")
    loop: str = ""
    factor: int = 0  # 0 means full

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.loop:
            raise BadParameter(self.name, "no loop given", hint="e.g. `unroll{qk.k=4}`", param="loop")
        ref = resolve_loop(kernel, self.loop, self.name)
        loop = ref.loop
        ct = const_trip(loop, kernel.known_sizes())
        if ct is None:
            raise NotApplicable(self.name, f"the trip count of `{loop_header(loop)}` is not a compile-time constant "
                            "(its bounds use a loop variable)", loc=loop.loc,
                            hint="unroll an inner loop with constant bounds, or tile first", loops=(self.loop,))
        lo, trip = ct
        if trip == 0:
            raise NotApplicable(self.name, f"`{loop_header(loop)}` never runs (trip count 0)", loc=loop.loc, loops=(self.loop,))
        if self.factor > trip:
            raise BadParameter(self.name, f"factor {self.factor} exceeds the trip count {trip} of `{loop_header(loop)}`",
                            loc=loop.loc, hint=f"use a factor in 2..{trip}, or `full`" if trip >= 2 else "nothing to unroll", param="factor", value=self.factor, loops=(self.loop,))
        full = self.factor in (0, trip)
        if full and trip > FULL_UNROLL_MAX:
            raise BadParameter(self.name, f"full unrolling of `{loop_header(loop)}` would make {trip} copies "
                            f"(limit {FULL_UNROLL_MAX})", loc=loop.loc, hint="unroll by a factor instead, e.g. `=4`", param="factor", value=self.factor, loops=(self.loop,))
        taken = used_names(kernel) | {kernel.name}
        if full:
            copies = [_copy(b, {loop.var: ir.IntLit(lo + t)}, t, taken) for t in range(trip) for b in loop.body]
            new_body = replace_at(kernel.body, ref.path, copies)
            trace.changes.append(f"`{loop_header(loop)}` fully unrolled into {trip} copies of its body "
                                 f"({len(copies)} statements), `{loop.var}` replaced by {lo}..{lo + trip - 1}")
            return dataclasses.replace(kernel, body=new_body)
        f = self.factor
        main_trip, rem = divmod(trip, f)
        uvar = fresh(f"{loop.var}u", taken, sep="", first=2)
        lo_e: ir.Expr = ir.IntLit(lo) if not isinstance(loop.lo, ir.IntLit) else loop.lo
        body = []
        for t in range(f):
            idx = add(add(lo_e, mul(lit(f), ir.Name(uvar))), lit(t))
            body.extend(_copy(b, {loop.var: idx}, t, taken) for b in loop.body)
        anns = tuple(a for a in loop.annotations if a.name != "unroll")
        main = dataclasses.replace(loop, var=uvar, lo=ir.IntLit(0), hi=ir.IntLit(main_trip), body=tuple(body),
                                   annotations=anns)
        new: list[ir.Stmt] = [main]
        if rem:
            tail_label = fresh(f"{loop.label}_rem", taken, sep="", first=2) if loop.label else None
            tail = dataclasses.replace(loop, lo=ir.IntLit(lo + main_trip * f), hi=ir.IntLit(lo + trip),
                                       label=tail_label, annotations=(),
                                       body=tuple(_copy(b, {}, 1, taken) for b in loop.body))
            new.append(tail)
        trace.changes.append(f"`{loop_header(loop)}` unrolled by {f}: `for {uvar} in 0..{main_trip}` with {f} copies of the body"
                             + (f", then a remainder loop over {loop.var} in {lo + main_trip * f}..{lo + trip}" if rem else ""))
        trace.decisions.append(f"trip count {trip} at the current sizes; "
                               + (f"{f} does not divide it: remainder of {rem}" if rem else f"{f} divides it: no remainder"))
        return dataclasses.replace(kernel, body=replace_at(kernel.body, ref.path, new))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        sizes = kernel.known_sizes()
        for path, loop, _ in all_loops(kernel):
            ct = const_trip(loop, sizes)
            name = name_of_loop(kernel, path)
            if ct is None or name is None or ct[1] < 2:
                continue
            trip = ct[1]
            n_body = sum(1 for _ in ir.iter_stmts(loop.body))
            if trip <= SPACE_FULL_MAX and n_body * trip <= SPACE_BODY_MAX:
                out.append(cls(name, 0))
            for f in SPACE_FACTORS:
                if f < trip and n_body * f <= SPACE_BODY_MAX:
                    out.append(cls(name, f))
        return out


def _copy(s: ir.Stmt, m: dict[str, ir.Expr], t: int, taken: set[str]) -> ir.Stmt:
    """`s` with `m` substituted; in copies after the first, nested labels get fresh names."""
    s = subst_stmt(s, m)
    if t == 0:
        return s

    def relabel(l: ir.For) -> ir.For:
        return dataclasses.replace(l, label=fresh(l.label, taken, sep="", first=2)) if l.label else l

    return map_loops(s, relabel)
