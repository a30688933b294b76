"""`multicore`: split an outer parallel loop across AI cores (`@cores(n)`).

args:
    `multicore{L}`     mark `L` `@cores(n)` with n = the target's core count (`Target.cores`
                       of `--target`, the default target without one); never more than `L`'s
                       trip count
    `multicore{L=8}`   use 8 cores

The loop stays in the IR as written; the annotation tells the code generator to give each
core a contiguous block of `L`'s iterations (`GetBlockIdx()`). Without it, the code generator
spreads the outermost parallel loop of every phase over all cores by itself, with a
cross-block barrier between phases that hand data through GM (`transformer/lower/spread.py`);
the pass is the explicit control (another count, `L=1` for one core).

It requires:
    1) `L` exists and is named unambiguously;
    2) `L` is outermost (not nested in another loop) and not already split across cores;
    3) `L` carries no dependence (`transformer.deps.is_parallel`): iterations on different
       cores run at the same time. Reductions count: a `+=`/`max=` into one element across
       `L`'s iterations would need a cross-core combine, which ascx does not generate.
       Exception: buffers every iteration writes before reading (a contracted row buffer
       after `fuse`, a staged tile after `tile`) are private to each core
       (`transformer.deps.privatizable`), so dependences on them do not count;
    4) an explicit n is at least 1 and at most `L`'s trip count (when it is constant).

rewrite (multicore{rows=8}):
    rows: for r in 0..R {          @cores(8)
      ...                    ->    rows: for r in 0..R {
    }                                ...
                                   }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.targets import Target
from transformer.diagnostics import BadParameter, DependenceViolation, NotApplicable
from transformer.deps import parallel_blockers

from ._rewrite import const_trip, loop_header
from .params import Entry, Int, Loop, Params
from .base import Pass, PassError, TraceEntry, get_at, name_of_loop, register, replace_at, resolve_loop

@register
@dataclass(frozen=True)
class Multicore(Pass):
    name: ClassVar[str] = "multicore"
    summary: ClassVar[str] = "split an outermost parallel loop across AI cores (@cores(n)); refused if it carries a dependence"
    params: ClassVar[Params] = Entry("loop", "cores", Loop(), Int(1), bare=0, example="qk=8",
                                     note="N: cores (a bare LOOP: the target's core count)")
    loop: str = ""
    cores: int = 0  # 0: the target's core count (`Target.cores`)
    keeps_ranges: ClassVar[bool] = True  # legal over the ranges: dependences with the sizes free; idle cores at small sizes

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.loop:
            raise BadParameter(self.name, "no loop given", hint="e.g. `multicore{qk}`", param="loop")
        ref = resolve_loop(kernel, self.loop, self.name)
        loop = ref.loop
        check_outermost(kernel, ref.path, self.loop)
        if loop.annotation("cores") is not None:
            raise NotApplicable(self.name, f"`{self.loop}` is already split across cores", loc=loop.loc, loops=(self.loop,))
        blockers = parallel_blockers(kernel, ref.path)
        dep = blockers[0] if blockers else None
        if dep is not None:
            what = (f"carries a {dep.src.reduction} reduction into `{dep.src.tensor}` across its iterations; "
                    "splitting it across cores would need a cross-core combine, which ascx does not generate"
                    if dep.reduction else f"carries a dependence: the {dep.describe()}")
            raise DependenceViolation(self.name, f"loop `{self.loop}` is not parallel: it {what}", loc=loop.loc,
                            notes=dep.notes(), hint=_alternatives(kernel), dependence=dep, loops=(self.loop,))
        ct = const_trip(loop, kernel.known_sizes())
        trip = ct[1] if ct else None
        ranged = ""
        if trip is None and kernel.size_ranges() and (most := largest_trip(loop, kernel)) is not None:
            trip, ranged = most, (" (its largest trip count over the size ranges; at smaller sizes the cores past "
                                  "the trip count get no iteration)")
        if trip is not None and trip <= 0:
            raise PassError(self.name, f"`{loop_header(loop)}` never runs (trip count 0): there is nothing to split "
                            "across cores", loc=loop.loc)
        if self.cores:
            n, why = self.cores, "given"
            if trip is not None and n > trip:
                raise BadParameter(self.name, f"{n} cores for `{loop_header(loop)}`, which has only {trip} iterations"
                                + (" at the largest sizes of the ranges" if ranged else ""),
                                loc=loop.loc, hint=f"use at most {trip} cores", param="cores", value=n, loops=(self.loop,))
        else:
            n, why = target.cores, f"the core count of {target.name}"
            if trip is not None and n > trip:
                n, why = trip, why + f", capped at the trip count {trip}{ranged}"
        ann = ir.Annotation("cores", (("n", n),))
        new_loop = dataclasses.replace(loop, annotations=loop.annotations + (ann,))
        trace.changes.append(f"`{loop_header(loop)}` split across {n} cores (@cores({n}))")
        from transformer.deps import carried_dependences

        private = sorted({d.src.tensor for d in carried_dependences(kernel, ref.path)})
        trace.decisions.append(f"n = {n}: {why}; the loop carries no dependence"
                               + (f" except on " + ", ".join(f"`{t}`" for t in private)
                                  + ", written before read in every iteration: private per core" if private else ""))
        return dataclasses.replace(kernel, body=replace_at(kernel.body, ref.path, [new_loop]))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        for i, s in enumerate(kernel.body):
            if isinstance(s, ir.For) and s.annotation("cores") is None:
                name = name_of_loop(kernel, (i,))
                if name and not parallel_blockers(kernel, (i,)):
                    out.append(cls(name, 0))
        return out


def largest_trip(loop: ir.For, kernel: ir.Kernel) -> int | None:
    """The largest trip count of `loop` (bounds of sizes and literals, `/` allowed) over the
    ranges of the ranged sizes: the greatest value over the corners of the ranges (every
    size at its smallest or largest allowed value), exact for an affine trip count and for a
    tile count `(N + T - 1) / T` (monotone in an affine N); None if it has no value there."""
    import itertools

    from transformer.bounds import range_ends

    ranges = kernel.size_ranges()
    ends = range_ends(kernel)
    trips = []
    for pick in itertools.product((0, -1), repeat=len(ranges)):
        env = kernel.size_values() | {n: ends[k][n] for n, k in zip(ranges, pick)}
        t = const_trip(loop, env)
        if t is None:
            return None
        trips.append(t[1])
    return max(trips)


def check_outermost(kernel: ir.Kernel, path: tuple[int, ...], name: str) -> None:
    """Legality 2: the loop is not nested in another loop."""
    if len(path) > 1:
        outer = kernel.body[path[0]]
        raise NotApplicable("multicore", f"`{name}` is nested inside `{loop_header(outer)}`; only an outermost loop "  # type: ignore[arg-type]
                        "can be split across cores", loc=getattr(get_at(kernel.body, path), "loc", None),
                        hint=_alternatives(kernel), loops=(name,))


def _alternatives(kernel: ir.Kernel) -> str:
    ok = [p.loop for p in Multicore.space(kernel)]  # type: ignore[attr-defined]
    return ("loops that can be split across cores: " + ", ".join(f"`{n}`" for n in ok)) if ok else \
        "no outermost loop here is parallel"
