"""`rfactor`: split a reduction loop into H partial reductions over a new parallel axis `h`
(a new top-level phase), then combine the partials where the loop was (cf. Halide's
`rfactor`).

args:
    `rfactor{L=H}`     split the reduction loop `L` into H parts (H >= 2, H divides L's trip)

What it is for: a reduction is a dependence across its loop, so the loop cannot be spread over
the cores, and the rows of a row reduction are the only parallel work. With few long rows
(softmax 256 x 65536 on 48 cores: 6 rows on some cores, 5 on others) the cores are unevenly
loaded. After `rfactor` each row's reduction is H independent partial reductions, a parallel
axis the lowering spreads (`transformer/lower/spread.py`: the rows x parts loops collapse
into one index, a cross-block barrier before the combine), and the combine is H steps per row.

rewrite (`rfactor{rmax.c=2}` on examples/softmax.ir):
    rmax: for r in 0..R {              temp mx_rf: f32[2, R]
      mx[r] = -inf                     rmax_rf: for r in 0..R {
      for c in 0..C {                    for h in 0..2 {
        mx[r] max= f32(X[r, c])    ->      mx_rf[h, r] = -inf
      }                                    for c in h * (C / 2)..(h + 1) * (C / 2) {
    }                                        mx_rf[h, r] max= f32(X[r, c])
                                           }
                                         }
                                       }
                                       rmax: for r in 0..R {
                                         mx[r] = -inf
                                         for h in 0..2 {
                                           mx[r] max= mx_rf[h, r]
                                         }
                                       }
(the combine keeps the loops inside `L`, with the loop over the parts innermost: a column
sum's combine `for c { for h { Y[c] += Y_rf[h, c] } }` is parallel over `c`)

The partial of accumulator `a[idx]` is `a_rf[h, *e, *idx]`: `h`, then one dimension per
enclosing loop whose variable `idx` does not use (`e`: that loop's variable minus its lower
bound; a rank-0 accumulator re-used per row after `fuse`), then `a`'s own indices. Each part
starts from the operator's identity (`+=`: 0, `*=`: 1, `max=`: -inf, `min=`: +inf); the
combine applies the same operator to the accumulator as it was before the loop, so its
initial value is kept.

It requires (each refusal names the statement):
    1) `L` exists, has constant bounds, and H (>= 2) divides its trip count;
    2) the loops around `L` have constant bounds (the partial phase repeats them);
    3) every assignment inside `L` is a reduction (`+=`, `*=`, `max=`, `min=`) into an
       accumulator whose indices use no variable of `L` or of a loop inside it, and no
       statement inside `L` is a copy: an assignment `=` would be split across parts that
       run on different cores, and a later part would not see it;
    4) no value inside `L` reads an accumulator (`a += a * x` is not a reduction the parts can
       compute alone);
    5) the partial phase runs before the whole top-level statement around `L`, so nothing `L`
       reads may be written by that statement (softmax's sum reads the row max computed in the
       same fused row loop: apply `rfactor` before `fuse`);
    6) integer `max=`/`min=` accumulators are refused (no literal identity in the IR).

Changes results within rounding: floating-point `+=` and `*=` are reassociated (H partial sums
added at the end); `max=` / `min=` are exact. Like `reciprocal`, it runs only when asked
(`space()` is empty: the tuner does not try it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.targets import Target
from transformer.diagnostics import BadParameter, NotApplicable

from transformer.lower.spread import written

from ._rewrite import const_trip, fresh, loop_header, simp, used_names
from .params import Entry, Int, Loop, Params
from .base import Pass, PassError, TraceEntry, get_at, register, replace_at, resolve_loop

IDENTITY = {"+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}


@register
@dataclass(frozen=True)
class Rfactor(Pass):
    name: ClassVar[str] = "rfactor"
    summary: ClassVar[str] = ("split a reduction loop into H partial reductions over a new parallel axis (a new phase "
                              "the lowering spreads) and a combine; float sums reassociate")
    params: ClassVar[Params] = Entry("loop", "parts", Loop(), Int(2), example="rmax.c=2",
                                     note="H: parts (at least 2, dividing the loop's trip count)")
    loop: str = ""
    parts: int = 2

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.loop:
            raise BadParameter(self.name, "no loop given", hint="e.g. `rfactor{rmax.c=2}`", param="loop")
        ref = resolve_loop(kernel, self.loop, self.name)
        loop, path = ref.loop, ref.path
        sizes = kernel.known_sizes()
        ct = const_trip(loop, sizes)
        if ct is None:
            raise NotApplicable(self.name, f"`{loop_header(loop)}` has no constant bounds", loc=loop.loc,
                                loops=(self.loop,))
        lo, trip = ct
        if self.parts < 2 or trip % self.parts:
            divisors = [d for d in range(2, min(trip, 64) + 1) if trip % d == 0]
            raise BadParameter(self.name, f"{self.parts} parts for `{loop_header(loop)}` ({trip} iterations): the "
                               "parts must be at least 2 and divide the trip count", loc=loop.loc, param="parts",
                               value=self.parts, hint=f"e.g. {', '.join(map(str, divisors[:6]))}" if divisors
                               else "this loop cannot be split evenly", loops=(self.loop,))
        outer = [get_at(kernel.body, path[:k]) for k in range(1, len(path))]
        for o in outer:
            if const_trip(o, sizes) is None:  # type: ignore[arg-type]
                raise NotApplicable(self.name, f"the enclosing `{loop_header(o)}` has no constant bounds: the "  # type: ignore[arg-type]
                                    "partial phase repeats it", loc=o.loc, loops=(self.loop,))  # type: ignore[union-attr]
        for x in ir.iter_loops(loop.body):
            if loop.var in _names(x.lo) | _names(x.hi):
                raise NotApplicable(self.name, f"the bounds of `{loop_header(x)}` use `{loop.var}`: the identities and "
                                    "the combine repeat the loops inside it without it", loc=x.loc, loops=(self.loop,))
        accs: dict[str, tuple[str, ir.Expr | ir.Access | ir.Name]] = {}
        plain: list[ir.Assign] = []
        for s in ir.iter_stmts(loop.body):
            if isinstance(s, ir.Copy):
                raise NotApplicable(self.name, f"`{loop_header(loop)}` holds a copy: rfactor splits loops whose "
                                    "body only reduces", loc=s.loc, loops=(self.loop,), hint="apply it before `tile`")
            if not isinstance(s, ir.Assign):
                continue
            acc = s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
            if s.op not in IDENTITY:
                plain.append(s)  # an element each iteration writes (legality: parallel_blockers below)
                continue
            idx = s.target.indices if isinstance(s.target, ir.Access) else ()
            if any(loop.var in _names(e) for e in idx):
                raise NotApplicable(self.name, f"the accumulator `{acc}` is indexed by `{loop.var}`: that is not a "
                                    f"reduction over `{loop_header(loop)}`", loc=s.loc, loops=(self.loop,))
            decl = kernel.tensor(acc)
            if decl is not None and decl.dtype not in ir.FLOAT_DTYPES and s.op in ("max=", "min="):
                raise NotApplicable(self.name, f"`{acc}` is an integer `{s.op}` accumulator: its identity has no "
                                    "literal in the IR", loc=s.loc, loops=(self.loop,))
            if acc in accs:
                raise NotApplicable(self.name, f"`{acc}` is reduced by two statements inside `{loop_header(loop)}`: "
                                    "rfactor combines one reduction per accumulator", loc=s.loc, loops=(self.loop,))
            accs[acc] = (s.op, s.target)
        if not accs:
            raise NotApplicable(self.name, f"`{loop_header(loop)}` reduces nothing", loc=loop.loc, loops=(self.loop,))
        for s in plain:
            t = s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
            if t in accs:
                raise NotApplicable(self.name, f"`{t}` is both assigned and reduced inside `{loop_header(loop)}`",
                                    loc=s.loc, loops=(self.loop,))
        from transformer.deps import parallel_blockers

        blockers = [d for d in parallel_blockers(kernel, path) if d.src.tensor not in accs]
        if blockers:
            d = blockers[0]
            raise NotApplicable(self.name, f"`{loop_header(loop)}` carries a dependence besides its reductions: the "
                                f"{d.describe()}; its parts would run on different cores", loc=loop.loc,
                                notes=d.notes(), loops=(self.loop,))
        for s in ir.iter_stmts(loop.body):
            if isinstance(s, ir.Assign) and (bad := _names(s.value) & set(accs)):
                raise NotApplicable(self.name, f"a value inside `{loop_header(loop)}` reads the accumulator "
                                    f"`{sorted(bad)[0]}`: the parts cannot compute it alone", loc=s.loc,
                                    loops=(self.loop,))
        top = kernel.body[path[0]]
        reads = set().union(*(_names(s.value) for s in ir.iter_stmts(loop.body) if isinstance(s, ir.Assign)))
        rest = replace_at(kernel.body, path, [])[path[0]] if len(path) > 1 else None  # `top` without `L`
        rest_writes = written((rest,)) if rest is not None else set()
        moved = sorted((written(loop.body) - set(accs)) & (ir.names_used((rest,)) if rest is not None else set()))
        if moved:
            raise NotApplicable(self.name, f"`{loop_header(loop)}` writes `{moved[0]}`, which `{loop_header(top)}` "  # type: ignore[arg-type]
                                "also uses outside it: the partial phase moves those writes before that statement",
                                loc=loop.loc, loops=(self.loop,), hint="apply `rfactor` before `fuse`")
        clash = sorted((reads & rest_writes) - set(accs))
        if clash:
            raise NotApplicable(self.name, f"`{loop_header(loop)}` reads `{clash[0]}`, which `{loop_header(top)}` "  # type: ignore[arg-type]
                                "writes: the partial phase runs before that statement, so it would read it unset",
                                loc=loop.loc, loops=(self.loop,),
                                hint="apply `rfactor` before `fuse` (each reduction in its own top-level loop)")
        return self._rewrite(kernel, path, outer, loop, lo, trip, accs, trace)  # type: ignore[arg-type]

    def _rewrite(self, kernel: ir.Kernel, path: tuple[int, ...], outer: list[ir.For], loop: ir.For, lo: int,
                 trip: int, accs: dict, trace: TraceEntry) -> ir.Kernel:
        sizes = kernel.known_sizes()
        taken = used_names(kernel)
        H, q = self.parts, trip // self.parts
        h = fresh("h", taken)
        temps: list[ir.TensorDecl] = []
        rf_access: dict[str, ir.Access] = {}
        for acc, (op, target) in accs.items():
            idx = target.indices if isinstance(target, ir.Access) else ()
            used = set().union(*(_names(e) for e in idx)) if idx else set()
            extra = [o for o in outer if o.var not in used]
            decl = kernel.tensor(acc)
            dtype = decl.dtype if decl is not None else "f32"
            shape = (ir.IntLit(H), *(ir.IntLit(const_trip(o, sizes)[1]) for o in extra),  # type: ignore[index]
                     *(decl.shape if decl is not None else ()))
            name = fresh(f"{acc}_rf", taken)
            temps.append(ir.TensorDecl(name, dtype, shape, "temp"))
            offs = [ir.Binary("-", ir.Name(o.var), o.lo) if const_trip(o, sizes)[0] else ir.Name(o.var)  # type: ignore[index]
                    for o in extra]
            rf_access[acc] = ir.Access(name, (ir.Name(h), *offs, *idx))

        def to_rf(s: ir.Stmt) -> ir.Stmt:
            if isinstance(s, ir.For):
                return dataclasses.replace(s, body=tuple(to_rf(b) for b in s.body))
            if isinstance(s, ir.Assign) and s.op in IDENTITY:
                acc = s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
                return dataclasses.replace(s, target=rf_access[acc])
            return s

        def lit(v: float, acc: str) -> ir.Expr:
            decl = kernel.tensor(acc)
            if decl is not None and decl.dtype not in ir.FLOAT_DTYPES:
                return ir.IntLit(int(v))
            return ir.Unary("-", ir.FloatLit(math.inf)) if v == -math.inf else ir.FloatLit(v)

        # the partial nest: the enclosing loops, h, the identities, the loop over its part
        base = loop.lo
        part_lo = simp(ir.Binary("+", base, ir.Binary("*", ir.Name(h), ir.IntLit(q))))
        part_hi = simp(ir.Binary("+", base, ir.Binary("*", ir.Binary("+", ir.Name(h), ir.IntLit(1)), ir.IntLit(q))))
        part = dataclasses.replace(loop, lo=part_lo, hi=part_hi, label=None, annotations=(),
                                   body=tuple(to_rf(b) for b in loop.body))
        def skeleton(stmts: tuple[ir.Stmt, ...], make) -> tuple[ir.Stmt, ...]:  # type: ignore[no-untyped-def]
            """The loops inside `L` around its reductions, each reduction replaced by `make(it)`
            (the other assignments dropped): per part, the identities, and the combine."""
            out: list[ir.Stmt] = []
            for x in stmts:
                if isinstance(x, ir.For):
                    inner = skeleton(x.body, make)
                    if inner:
                        out.append(dataclasses.replace(x, body=inner, label=None, annotations=()))
                elif isinstance(x, ir.Assign) and x.op in IDENTITY:
                    out.append(make(x))
            return tuple(out)

        def acc_of(x: ir.Assign) -> str:
            return x.target.tensor if isinstance(x.target, ir.Access) else x.target.name  # type: ignore[union-attr]

        inits = skeleton(loop.body, lambda x: ir.Assign(to_rf(x).target, "=",  # type: ignore[union-attr]
                                                        lit(IDENTITY[x.op], acc_of(x))))
        nest: ir.Stmt = ir.For(h, ir.IntLit(0), ir.IntLit(H), (*inits, part))
        for o in reversed(outer):
            nest = dataclasses.replace(o, body=(nest,), label=None, annotations=())
        top = kernel.body[path[0]]
        label = fresh(f"{(top.label if isinstance(top, ir.For) else None) or 'part'}_rf", taken)
        nest = dataclasses.replace(nest, label=label)  # type: ignore[arg-type]
        # the combine, where the loop was
        # the combine: the loops inside `L`, and innermost around each reduction the loop over
        # the parts (so a column sum's combine is parallel over its columns)
        combined = skeleton(loop.body, lambda x: ir.For(h, ir.IntLit(0), ir.IntLit(H), (
            ir.Assign(x.target, x.op, to_rf(x).target),)))  # type: ignore[union-attr]
        if len(combined) == 1 and isinstance(combined[0], ir.For):
            combine = dataclasses.replace(combined[0], label=loop.label, loc=loop.loc)
        else:
            combine = ir.For(fresh("k", taken), ir.IntLit(0), ir.IntLit(1), combined, label=loop.label, loc=loop.loc)
        body = replace_at(kernel.body, path, [combine])
        i = path[0]
        body = body[:i] + (nest,) + body[i:]
        trace.changes.append(f"`{loop_header(loop)}` split into {H} parts of {q} iterations in the new phase `{label}` "
                             f"(before `{loop_header(top)}`), combined where it was")  # type: ignore[arg-type]
        for t in temps:
            trace.changes.append(f"new temp `{t.name}` holds the partials of "
                                 + ", ".join(f"`{a}`" for a in accs if rf_access[a].tensor == t.name))
        if any(op in ("+=", "*=") for op, _ in accs.values()):
            trace.decisions.append("floating-point `+=`/`*=` partials are combined at the end: results change within "
                                   "rounding (reassociation)")
        return dataclasses.replace(kernel, buffers=kernel.buffers + tuple(temps), body=body)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """Empty: `rfactor` reassociates float sums, so it runs only when asked."""
        return []


def _names(e: ir.Expr) -> set[str]:
    """Every name `e` mentions: variables, scalars and the tensors it reads."""
    return {x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)} | \
        {x.tensor for x in ir.sub_exprs(e) if isinstance(x, ir.Access)}


__all__ = ["IDENTITY", "Rfactor", "PassError"]
