"""`peel`: run the first (or last) N iterations of a loop as a loop of their own.

    peel{loop=mm,first=1}      rows 0 of `mm` in a nest `mm_peel` before the rest
    peel{loop=ew.j,last=2}     the last 2 iterations of `ew.j` after the others

`for i in lo..hi { body }` with a constant trip count T and `first=N` becomes

    for i in lo..lo + N { body }       # the peeled iterations (label `<label>_peel`)
    for i in lo + N..hi { body }       # the rest (keeps the label and annotations)

and with `last=N` the rest `lo..hi - N` comes first and the peeled `hi - N..hi` after. A
top-level loop so becomes two nests (two phases of the emitted kernel); an inner loop two
sibling loops in its parent's body. Every iteration runs once, in the original order, so
the rewrite is exact and needs no dependence test. It is the usual first step before
specialising the boundary iterations of a loop (a first row block that initialises what
the rest accumulates), and what a user writes by hand when the first block is special:
`tile` and `stage` must then stage each nest by what it writes (the property test over
`space()` draws it).

It requires: 1) the loop exists and is named unambiguously; 2) its trip count T is a
compile-time constant (bounds of sizes and integers); 3) exactly one of `first` and `last`
is given, with 1 <= N < T (peeling every iteration leaves nothing to peel from); 4) the
loop is not in a `@gemm`, `@conv` or `@flash` nest (their lowering takes the whole nest).
Labels of loops inside the peeled copy get fresh names (`<label>_peel`), so every label
stays unique; the peeled copy of the loop itself carries no annotation (`@cores`,
`@pipeline` stay on the rest).

Rewrite (`peel{loop=ew,first=1}`, M = 4):

    ew: for i in 0..M {          ew_peel: for i in 0..1 { C[i] = A[i] + B[i] }
      C[i] = A[i] + B[i]   ->    ew: for i in 1..M { C[i] = A[i] + B[i] }
    }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import BadParameter, NotApplicable
from transformer.targets import Target

from ._rewrite import add, const_trip, fresh, lit, loop_header, map_loops, simp, sub, used_names
from .base import Pass, TraceEntry, all_loops, name_of_loop, register, replace_at, resolve_loop
from .params import Int, Keywords, Loop, Params

WHOLE_NESTS = ("gemm", "conv", "flash")  # nests whose lowering takes the whole nest
SPACE_MAX = 8  # instances `space()` offers at most


@register
@dataclass(frozen=True)
class Peel(Pass):
    """Peel the first or last N iterations of a loop into a loop (a nest) of their own."""

    name: ClassVar[str] = "peel"
    summary: ClassVar[str] = "run the first (or last) N iterations of a loop as their own loop (nest)"
    params: ClassVar[Params] = Keywords({"loop": Loop(), "first": Int(1), "last": Int(1)},
                                        example="loop=mm,first=1",
                                        note="exactly one of first=N and last=N (1 <= N < trip count)")
    loop: str = ""
    first: int = 0
    last: int = 0

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.loop:
            raise BadParameter(self.name, "no loop given", hint="e.g. `peel{loop=mm,first=1}`", param="loop")
        if (self.first > 0) == (self.last > 0):
            raise BadParameter(self.name, "give exactly one of `first=N` and `last=N`" if self.first
                               else "no count given: `first=N` or `last=N`", param="first",
                               hint=f"e.g. `peel{{loop={self.loop},first=1}}`")
        ref = resolve_loop(kernel, self.loop, self.name)
        loop = ref.loop
        top = kernel.body[ref.path[0]]
        whole = next((a.name for a in getattr(top, "annotations", ()) if a.name in WHOLE_NESTS), None)
        if whole is not None:
            raise NotApplicable(self.name, f"loop `{self.loop}` is in the `@{whole}` nest "
                                f"`{top.label or top.var}`, which is lowered as a whole",  # type: ignore[union-attr]
                                loop.loc, hint="peel before the pass that annotated the nest", loops=(self.loop,))
        ct = const_trip(loop, kernel.known_sizes())
        if ct is None:
            raise NotApplicable(self.name, f"the trip count of `{loop_header(loop)}` is not a compile-time constant "
                                "(its bounds use a loop variable)", loop.loc,
                                hint="peel a loop whose bounds are sizes and integers", loops=(self.loop,))
        trip = ct[1]
        n, which = (self.first, "first") if self.first else (self.last, "last")
        if n >= trip:
            raise BadParameter(self.name, f"{which}={n} peels every iteration of `{loop_header(loop)}` "
                               f"(trip count {trip}): nothing would remain", loop.loc, param=which, value=n,
                               hint=f"accepted: 1..{trip - 1}" if trip > 1 else "the loop runs once: nothing to peel",
                               loops=(self.loop,))
        taken = used_names(kernel) | {kernel.name}
        cut = simp(add(loop.lo, lit(n))) if which == "first" else simp(sub(loop.hi, lit(n)))
        label = fresh(f"{loop.label}_peel", taken, sep="", first=2) if loop.label else None
        body = tuple(map_loops(b, lambda lp: _relabel(lp, taken)) for b in loop.body)
        if which == "first":
            peeled = dataclasses.replace(loop, hi=cut, label=label, annotations=(), body=body)
            rest = dataclasses.replace(loop, lo=cut)
            new: list[ir.Stmt] = [peeled, rest]
        else:
            peeled = dataclasses.replace(loop, lo=cut, label=label, annotations=(), body=body)
            rest = dataclasses.replace(loop, hi=cut)
            new = [rest, peeled]
        where = "a nest" if len(ref.path) == 1 else "a loop"
        trace.changes.append(f"peeled the {which} {n} of {trip} iterations of `{loop_header(loop)}` into {where} "
                             f"of their own" + (f" (`{label}`)" if label else ""))
        return dataclasses.replace(kernel, body=replace_at(kernel.body, ref.path, new))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """The first iteration of each named loop with a constant trip count of at least 2,
        outside `@gemm`/`@conv`/`@flash` nests, and the last one of each top-level loop."""
        out: list[Pass] = []
        sizes = kernel.known_sizes()
        for path, loop, _ in all_loops(kernel):
            top = kernel.body[path[0]]
            if any(a.name in WHOLE_NESTS for a in getattr(top, "annotations", ())):
                continue
            ct, name = const_trip(loop, sizes), name_of_loop(kernel, path)
            if ct is None or name is None or ct[1] < 2:
                continue
            out.append(cls(name, first=1))
            if len(path) == 1:
                out.append(cls(name, last=1))
            if len(out) >= SPACE_MAX:
                break
        return out[:SPACE_MAX]


def _relabel(lp: ir.For, taken: set[str]) -> ir.For:
    """A loop of the peeled copy, its label made fresh (`<label>_peel`) so labels stay unique."""
    return dataclasses.replace(lp, label=fresh(f"{lp.label}_peel", taken, sep="", first=2)) if lp.label else lp
