"""`interchange`: reorder the loops of a perfect nest.

args:
    `interchange{a,b}`      swap loops `a` and `b` (either order; both in one perfect nest)
    `interchange{a,b,c,..}` (three or more) put the named loops in this order, outermost
                            first, in the positions they occupy now

It requires:
    1) every named loop exists and is named unambiguously;
    2) the named loops lie in one perfect nest (each loop's body, from the outermost named
       loop down to the innermost, is exactly the next loop);
    3) the bounds of the loops being reordered do not depend on each other's variables
       (a rectangular band);
    4) no loop split across cores (`@cores`) would stop being the outermost;
    5) every dependence among the nest's statements, other than reduction dependences,
       keeps a lexicographically non-negative direction vector after the permutation
       (`transformer.deps.interchange_violation`). Reductions (`+= *= max= min=` into one
       element, not otherwise read) are reordered freely: that only reassociates them.

rewrite (interchange{mm.i,mm.j}):
    mm: for i in 0..M {                 mm: for j in 0..N {
      for j in 0..N {           ->        for i in 0..M {
        C[i, j] = f16(A[i, j])              C[i, j] = f16(A[i, j])
      }                                   }
    }                                   }
The label stays on the outermost loop; annotations travel with their loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import BadParameter, DependenceViolation, NotApplicable
from transformer.deps import interchange_violation, perfect_band

from ._rewrite import loop_header, mentions
from .params import Loop, Names, Params
from .base import Pass, PassError, TraceEntry, all_loops, get_at, name_of_loop, register, replace_at, resolve_loop
from transformer.targets import Target


def check_rectangular(loops: list[ir.For]) -> tuple[ir.For, str] | None:
    """Legality 3: (loop, variable) when a loop's bound uses another band loop's variable."""
    vars_ = {l.var for l in loops}
    for l in loops:
        v = mentions(l.lo, vars_) or mentions(l.hi, vars_)
        if v is not None:
            return l, v
    return None


def check_cores_outermost(loops: list[ir.For], new: list[ir.For]) -> ir.For | None:
    """Legality 4: a `@cores` loop that would no longer be the outermost of the band."""
    for pos, l in enumerate(new):
        if l.annotation("cores") is not None and pos != 0:
            return l
    return None


@register
@dataclass(frozen=True)
class Interchange(Pass):
    name: ClassVar[str] = "interchange"
    summary: ClassVar[str] = "reorder the loops of a perfect nest (swap two, or give an order); refused across a loop-carried dependence"
    params: ClassVar[Params] = Names("loops", Loop(), minimum=2, example="qk.i,qk.j",
                                     note="two loops: swap them; more: their new order, outermost first")
    loops: tuple[str, ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        refs = [resolve_loop(kernel, n, self.name) for n in self.loops]
        paths = [r.path for r in refs]
        if len(set(paths)) != len(paths):
            raise BadParameter(self.name, "two of the names " + ", ".join(f"`{n}`" for n in self.loops)
                            + " designate the same loop", loc=refs[0].loop.loc, param="loops", value=self.loops, loops=self.loops)
        top = min(paths, key=len)
        band_all = perfect_band(kernel, top)
        for r in refs:
            if r.path not in band_all:
                outer = min(refs, key=lambda x: len(x.path))
                if r.path[:len(top)] != top or len(r.path) <= len(top):
                    raise NotApplicable(self.name, f"loops `{outer.name}` and `{r.name}` are not nested in one another",
                                    loc=r.loop.loc, notes=[(outer.loop.loc, f"`{outer.name}` is here")],
                                    hint="interchange reorders the loops of one nest", loops=(outer.name, r.name))
                # the perfect nest stops above r: find the loop whose body is not a single loop
                breaker = get_at(kernel.body, band_all[-1])
                assert isinstance(breaker, ir.For)
                raise NotApplicable(self.name, f"`{outer.name}` .. `{r.name}` is not a perfect nest: the body of "
                                f"`{loop_header(breaker)}` has {len(breaker.body)} statements, not one loop",
                                loc=breaker.loc, hint="interchange reorders loops whose bodies are exactly the next loop; "
                                "loops it can reorder here: " + _band_names(kernel, band_all), loops=(outer.name, r.name))
        positions = sorted(band_all.index(p) for p in paths)
        lo_pos, hi_pos = positions[0], positions[-1]
        band = band_all[lo_pos:hi_pos + 1]
        loops = [get_at(kernel.body, p) for p in band]
        assert all(isinstance(l, ir.For) for l in loops)
        # new order (indices into band)
        order = list(range(len(band)))
        named_pos = [band_all.index(p) - lo_pos for p in paths]
        if len(paths) == 2:
            a, b = named_pos
            order[a], order[b] = order[b], order[a]
        else:
            for slot, src in zip(sorted(named_pos), named_pos):
                order[slot] = src
        if order == list(range(len(band))):
            raise NotApplicable(self.name, "the requested order is the current order", loc=loops[0].loc, loops=self.loops)
        bad = check_rectangular(loops)  # type: ignore[arg-type]
        if bad is not None:
            l, v = bad
            raise NotApplicable(self.name, f"the bounds of `{loop_header(l)}` depend on `{v}`, another loop of the nest; "
                            "interchange needs a rectangular nest", loc=l.loc, loops=self.loops)
        new_loops = [loops[i] for i in order]
        c = check_cores_outermost(loops, new_loops)  # type: ignore[arg-type]
        if c is not None:
            raise NotApplicable(self.name, f"`{loop_header(c)}` is split across cores (@cores) and must stay outermost",
                            loc=c.loc, loops=self.loops)
        dep = interchange_violation(kernel, band, order)
        if dep is not None:
            carrier = dep.carrier
            raise DependenceViolation(self.name, "cannot reorder " + ", ".join(f"`{n}`" for n in self.loops)
                            + f": the {dep.describe()} would run backwards (its direction vector would become "
                            "lexicographically negative)",
                            loc=(carrier.loop.loc if carrier else loops[0].loc), notes=dep.notes(),
                            hint=_alternatives(kernel, band_all), dependence=dep, loops=self.loops)
        new_kernel = dataclasses.replace(kernel, body=replace_at(kernel.body, band[0], [_rebuild(loops, order)]))  # type: ignore[arg-type]
        trace.changes.append("nest " + " > ".join(l.var for l in loops) + " reordered to "  # type: ignore[union-attr]
                             + " > ".join(loops[i].var for i in order))  # type: ignore[union-attr]
        trace.decisions.append(_legality_note(kernel, band))
        return new_kernel

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        seen: set[tuple] = set()
        for path, loop, _ in all_loops(kernel):
            band = perfect_band(kernel, path)
            if len(band) < 2 or band[0] in seen:
                continue
            seen.update(band)
            loops = [get_at(kernel.body, p) for p in band]
            for i in range(len(band)):
                for j in range(i + 1, len(band)):
                    sub = loops[i:j + 1]
                    if check_rectangular(sub) is not None:  # type: ignore[arg-type]
                        continue
                    order = list(range(j - i + 1))
                    order[0], order[-1] = order[-1], order[0]
                    if check_cores_outermost(sub, [sub[k] for k in order]) is not None:  # type: ignore[arg-type]
                        continue
                    na, nb = name_of_loop(kernel, band[i]), name_of_loop(kernel, band[j])
                    if na is None or nb is None:
                        continue
                    if interchange_violation(kernel, band[i:j + 1], order) is None:
                        out.append(cls((na, nb)))
        return out


def _rebuild(loops: list[ir.For], order: list[int]) -> ir.For:
    """The band with loop headers in `order`; the outermost keeps the band's label."""
    body = loops[-1].body
    headers = [loops[i] for i in order]
    labels = [l.label for l in loops]  # labels stay at their depth
    for depth in range(len(headers) - 1, -1, -1):
        h = headers[depth]
        body = (dataclasses.replace(h, body=body, label=labels[depth]),)
    return body[0]  # type: ignore[return-value]


def _band_names(kernel: ir.Kernel, band: list[tuple[int, ...]]) -> str:
    names = [name_of_loop(kernel, p) or "?" for p in band]
    return ", ".join(f"`{n}`" for n in names) if len(names) > 1 else "none (the nest has one loop)"


def _alternatives(kernel: ir.Kernel, band_all: list[tuple[int, ...]]) -> str:
    legal = [p for p in Interchange.space(kernel) if isinstance(p, Interchange)
             and all(resolve_loop(kernel, n, "interchange").path in band_all for n in p.loops)]
    if legal:
        return "legal interchanges of this nest: " + ", ".join(f"`{p.to_text()}`" for p in legal)
    return "no interchange of this nest is legal"


def _legality_note(kernel: ir.Kernel, band: list[tuple[int, ...]]) -> str:
    from transformer.deps import analyze

    deps = analyze(kernel).within(band[0])
    red = sum(1 for d in deps if d.reduction)
    return (f"checked {len(deps)} dependences inside the nest: none reverses"
            + (f" ({red} of them reduction dependences, free to reorder: reassociation only)" if red else ""))
