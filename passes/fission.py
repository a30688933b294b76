"""`fission`: split the epilogue of a cube matmul nest off into a nest of its own.

    fission            every matmul nest with an epilogue
    fission{pv}        the named nests only (refused when one cannot be split)

A nest whose innermost band body is `acc = 0; for k { acc += f32(a) * f32(b) }` followed by
statements reading `acc` other than by a cast (`O = f16(acc / sm)`, the normalisation of
P·V; a plain `C = f16(acc)` stays: the FIX pipe writes it), with `a` and `b` in cube operand
types (f16, bf16: `round_operand` makes P f16) and `acc` an f32 temp, is distributed into
the matmul nest (keeps the label; goes to the cube) and an epilogue nest `<label>_epi`
(vector work), `acc` staying a temp between them:

    pv: for i in 0..S {                       pv: for i in 0..S {
      for d in 0..D {                           for d in 0..D {
        acc[i, d] = 0.0                           acc[i, d] = 0.0
        for j in 0..S { acc[i, d] += .. }  ->     for j in 0..S { acc[i, d] += .. }
        O[i, d] = f16(acc[i, d] / sm[i])        }
      }                                       }
    }                                         pv_epi: for i in 0..S {
                                                for d in 0..D { O[i, d] = f16(acc[i, d] / sm[i]) }
                                              }

It requires (`Check_epilogue_split`): no dependence runs from an epilogue instance back to
a later matmul instance (the split runs every matmul instance before every epilogue
instance). This is step 0 of `tile` (which then mirrors tile sizes requested for the
matmul's loops onto the epilogue's loops of the same variables); `gemm` runs it too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from transformer import ir
from transformer.deps import _dir, accesses, raw_vectors, statements
from transformer.diagnostics import DependenceViolation, NotApplicable
from transformer.targets import Target

from . import _rewrite as R
from .base import Pass, TraceEntry, register, resolve_loop
from .params import Loop, Names, Params
from .stage import strip_casts

CUBE_OPERAND_DTYPES = ("f16", "bf16")
CUBE_ACC_OF = {"f16": "f32", "bf16": "f32", "i8": "i32"}  # the accumulator a cube operand dtype takes (s8 x s8 -> s32)
EPILOGUE_SUFFIX = "_epi"


@register
@dataclass(frozen=True)
class Fission(Pass):
    """Split the epilogue of a cube matmul nest into its own nest."""

    name: ClassVar[str] = "fission"
    summary: ClassVar[str] = "split the epilogue of a cube matmul nest (what reads the accumulator) into its own nest"
    params: ClassVar[Params] = Names("nests", Loop(), optional=True, noun="nest", example="pv",
                                     note="none: every matmul nest with an epilogue")
    nests: tuple[str, ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if not self.nests:
            return split_epilogues(kernel, trace)
        tops: dict[int, str] = {}
        for n in self.nests:
            ref = resolve_loop(kernel, n, self.name)
            if len(ref.path) != 1:
                raise NotApplicable(self.name, f"`{n}` is not a nest (a top-level loop)", ref.loop.loc,
                                    hint="name the outer loop of the matmul nest", loops=(n,))
            tops[ref.path[0]] = n
        return split_epilogues(kernel, trace, only=tops, pass_name=self.name)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """`fission` when some nest has an epilogue to split, and each such labelled nest alone."""
        out: list[Pass] = []
        for i, nest in enumerate(kernel.body):
            got = epilogue_of(kernel, nest) if isinstance(nest, ir.For) else "not a loop"
            if isinstance(got, str) or not Check_epilogue_split(kernel, i, len(got[0]) - 1, got[1]):
                continue
            if not out:
                out.append(cls())
            if isinstance(nest, ir.For) and nest.label:
                out.append(cls((nest.label,)))
        return out


def epilogue_of(kernel: ir.Kernel, nest: ir.For, int8: bool = False) -> "tuple[list[ir.For], int, str] | str":
    """(the band, the number of head statements in its innermost body, the accumulator) of
    a cube matmul nest with an epilogue, or why `nest` is not one."""
    band = _band(nest)
    inner = band[-1].body
    n_head = max((i + 1 for i, x in enumerate(inner) if isinstance(x, ir.For)), default=0)
    tail = inner[n_head:]
    if not n_head or not tail or not all(isinstance(x, ir.Assign) for x in tail):
        return "its innermost band body is not a K loop followed by assignments"
    acc = cube_matmul_head(kernel, inner[:n_head], int8)
    if acc is None:
        return ("its head is not `acc = 0; for k { acc += f32(a) * f32(b) }` with f16/bf16 operands "
                "and an f32 temp accumulator")
    if not any(acc in ir.names_used((x,)) for x in tail):
        return f"nothing after its K loop reads `{acc}`"
    if any(isinstance(x, ir.Assign) and isinstance(x.target, ir.Access) and x.target.tensor == acc for x in tail):
        return f"`{acc}` is written after its K loop"
    if all(is_cast_store(x, acc) for x in tail):
        return f"`{acc}` is only stored by a cast (the FIX pipe writes it): nothing to split"
    return band, n_head, acc


def split_epilogues(kernel: ir.Kernel, trace: TraceEntry, keep: Any = None, *, only: "dict[int, str] | None" = None,
                    pass_name: str = "fission", int8: bool = False) -> ir.Kernel:
    """Split every top-level cube matmul nest with an epilogue (module docstring), except
    the nests `keep(nest)` is true for (`gemm` keeps those its Fixpipe stores); with `only`
    ({nest index: name}), those nests alone, refusing when one cannot be split. `int8`:
    int8 matmuls into i32 too (only `gemm` lowers them to the cube; staged `tile` cube
    code is f16/bf16)."""
    body: list[ir.Stmt] = []
    taken: set[str] | None = None
    for top, nest in enumerate(kernel.body):
        body.append(nest)
        if not isinstance(nest, ir.For) or (keep is not None and keep(nest)) or (only is not None and top not in only):
            continue
        got = epilogue_of(kernel, nest, int8)
        if isinstance(got, str):
            if only is not None:
                raise NotApplicable(pass_name, f"`{only[top]}` has no epilogue to split off: {got}", nest.loc,
                                    loops=(only[top],))
            continue
        band, n_head, acc = got
        inner = band[-1].body
        if not Check_epilogue_split(kernel, top, len(band) - 1, n_head):
            if only is not None:
                raise DependenceViolation(pass_name, f"the epilogue of `{only[top]}` cannot run after the whole "
                                          "matmul: a dependence runs from it back to a later matmul iteration",
                                          nest.loc, loops=(only[top],))
            trace.decisions.append(f"kept the epilogue of `{nest.label or nest.var}` in the matmul nest: a dependence "
                                   "runs from it back to a later matmul iteration")
            continue
        if taken is None:
            taken = R.used_names(kernel)
        label = R.fresh((nest.label or nest.var) + EPILOGUE_SUFFIX, taken)

        def rebuild(k: int, stmts: tuple[ir.Stmt, ...]) -> ir.Stmt:
            lp = band[k]
            if k == len(band) - 1:
                return dataclasses.replace(lp, body=stmts)
            return dataclasses.replace(lp, body=(rebuild(k + 1, stmts),))

        mm = rebuild(0, inner[:n_head])
        epi = dataclasses.replace(rebuild(0, inner[n_head:]), label=label, loc=None)
        body[-1:] = [mm, epi]
        trace.changes.append(f"split the epilogue of the matmul nest `{nest.label or nest.var}` (reads of `{acc}` after "
                             f"its K loop) into nest `{label}`: the matmul goes to the cube, the epilogue to the "
                             f"vector cores, `{acc}` stays a temp between them")
    if taken is None:
        return kernel
    return dataclasses.replace(kernel, body=tuple(body))


def Check_epilogue_split(kernel: ir.Kernel, top: int, depth: int, n_head: int) -> bool:
    """Condition for distributing the body of the band loop at `depth` of nest `top` into
    its first `n_head` statements (head) and the rest (tail), through every band loop: no
    conflicting pair (head access a, tail access b, one a write) has instances whose
    iteration vector over the band loops puts b's iteration lexicographically before
    a's. The original runs tail(x) before head(y) exactly when x < y; the split runs every
    head instance before every tail instance."""
    sizes = kernel.known_sizes()
    stmts = [st for st in statements(kernel) if st.path[0] == top]
    head = [st for st in stmts if st.path[depth + 1] < n_head]
    tail = [st for st in stmts if st.path[depth + 1] >= n_head]
    pairs = [(k, k) for k in range(depth + 1)]
    acc_t = [b for st in tail for b in accesses(kernel, st)]
    for st in head:
        for a in accesses(kernel, st):
            for b in acc_t:
                if a.tensor != b.tensor or not (a.write or b.write):
                    continue
                for vec in raw_vectors(a, b, pairs, sizes):
                    first = next((_dir(c) for c in vec if _dir(c) != "="), "=")
                    if first in (">", "*"):
                        return False
    return True


def _band(nest: ir.For) -> list[ir.For]:
    """`nest` and the loops perfectly nested in it, outermost first."""
    band = [nest]
    while len(band[-1].body) == 1 and isinstance(band[-1].body[0], ir.For):
        band.append(band[-1].body[0])
    return band


def cube_matmul_head(kernel: ir.Kernel, head: tuple[ir.Stmt, ...], int8: bool = False) -> str | None:
    """The accumulator when `head` is `[acc = literal;] loops of acc += f32(a) * f32(b)`
    with `a`, `b` in cube operand types and `acc` an f32 temp (or `i32(a) * i32(b)` of
    int8 operands into an i32 temp when `int8`: the cube's s8 x s8 -> s32); else None."""
    acc: set[str] = set()
    prod = False
    in_dts: set[str] = set()
    for st in ir.iter_stmts(head):
        if isinstance(st, ir.Copy):
            return None
        if not isinstance(st, ir.Assign):
            continue
        if not isinstance(st.target, ir.Access):
            return None
        acc.add(st.target.tensor)
        if st.op == "=" and isinstance(st.value, (ir.FloatLit, ir.IntLit)):
            continue
        v = st.value
        if not (st.op == "+=" and isinstance(v, ir.Binary) and v.op == "*"):
            return None
        ops = [strip_casts(v.lhs), strip_casts(v.rhs)]
        for o in ops:
            d = kernel.tensor(o.tensor) if isinstance(o, ir.Access) else None
            if d is None or d.dtype not in (CUBE_ACC_OF if int8 else CUBE_OPERAND_DTYPES) or o.tensor == st.target.tensor:  # type: ignore[union-attr]
                return None
            in_dts.add(d.dtype)
        prod = True
    if len(acc) != 1 or not prod:
        return None
    (name,) = acc
    d = kernel.tensor(name)
    want = {CUBE_ACC_OF[x] for x in in_dts}
    return name if d is not None and d.kind == "temp" and want == {d.dtype} and d.rank >= 1 else None


def is_cast_store(st: ir.Assign, acc: str) -> bool:
    """`X[..] = cast(acc[..])` (what the FIX pipe writes from L0C), or a statement not reading `acc`."""
    if acc not in ir.names_used((st,)):
        return True
    v = strip_casts(st.value)
    return st.op == "=" and isinstance(v, ir.Access) and v.tensor == acc and v != st.value
