"""`round_operand`: read a narrower copy of one operand inside one nest (changes precision).

args:
    `round_operand{pv.s=f16}`   in the nest `pv` (any loop name: `label`, `label.var`, a
                                unique variable), every read of tensor `s` becomes a read
                                of a new temp `s_f16` (same shape, dtype f16), written by a
                                new nest placed right before `pv`

What it is for: the cube takes f16 (or bf16) operands and accumulates in f32. Attention
keeps P (`s`, the exponentials) in f32, so its P·V nest `acc += s * f32(V)` cannot run on
the cube as written; FlashAttention kernels round P to f16 before the second matmul. This
pass makes that rounding explicit in the IR, where `tile` then stages P·V through
`l1` -> `l0a` / `l0b` -> `l0c` like QKᵀ.

**This is the one pass that deliberately changes precision.** Every other pass keeps what
a kernel computes (up to the reassociation of reductions); this one rounds every element
of `s` read in the nest to the target dtype, so results change, within the tolerance of
that dtype (`transformer.interp.tolerance`). It runs only when asked: it is not part of any
default pipeline, `space()` offers it only for f32 operands of `+=`-of-product nests, and
its trace entry says "rounds s to f16 for the cube; results change within f16 tolerance".

The rounding nest has one loop per loop variable of the nest that the read's indices use,
with the same bounds, in the same nesting order, so it writes exactly the elements the
nest reads; each read `s[e]` becomes `f32(s_f16[e])` (converted back to `s`'s dtype, so
every expression keeps its type). Distinct index forms (`s[i, j]`, `s[i, j + 1]`) get one
rounding nest each.

It requires:
    1) the loop exists and is named unambiguously; the tensor exists, is an input or a temp
       (not a `local`: round before `tile`) of rank >= 1, and is read in the nest;
    2) the nest does not write the tensor (then "the value read" would change inside the
       nest and a copy made before it would be stale);
    3) both dtypes are floating-point and the target is narrower (fewer bytes): f32 -> f16
       or f32 -> bf16;
    4) the bounds of every loop the rounding nest copies use only sizes, loops outside the
       nest, and copied loops enclosing it (not a loop that the indices do not use).

rewrite (round_operand{pv.s=f16}):
    temp s: f32[S, S]                          temp s: f32[S, S]
                                               temp s_f16: f16[S, S]
                                               round_s: for i in 0..S {
                                                 for j in 0..S { s_f16[i, j] = f16(s[i, j]) }
                                               }
    pv: for i in 0..S {                  ->    pv: for i in 0..S {
      for d in 0..D {                            for d in 0..D {
        acc[i, d] = 0.0                            acc[i, d] = 0.0
        for j in 0..S {                            for j in 0..S {
          acc[i, d] += s[i, j] * f32(V[j, d])        acc[i, d] += f32(s_f16[i, j]) * f32(V[j, d])
        }                                          }
        O[i, d] = f16(acc[i, d] / sm[i])           O[i, d] = f16(acc[i, d] / sm[i])
      }                                          }
    }                                          }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import BadParameter, DependenceViolation, NotApplicable
from transformer.printer import format_expr, format_stmt

from ._rewrite import accesses, fresh, loop_header, map_expr, map_stmt_exprs, names_in, used_names, writer_of
from .params import Dtype, Entry, LoopTensor, Params
from .base import (Pass, PassError, TraceEntry, all_loops, get_at, name_of_loop, register,
                   replace_at, resolve_loop)
from transformer.targets import Target


@register
@dataclass(frozen=True)
class RoundOperand(Pass):
    name: ClassVar[str] = "round_operand"
    summary: ClassVar[str] = ("read a tensor rounded to a narrower float type inside one nest (e.g. P in f16 for "
                              "the cube); CHANGES PRECISION, within the narrower type's tolerance")
    params: ClassVar[Params] = Entry(("loop", "tensor"), "dtype", LoopTensor(), Dtype(), value_name="dtype",
                                     example="pv.s=f16", note="DTYPE narrower than the tensor's, both floating-point")
    loop: str = ""
    tensor: str = ""
    dtype: str = ""
    keeps_ranges: ClassVar[bool] = True  # a cast inside one nest: no trip count, no size read

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        ref = resolve_loop(kernel, self.loop, self.name)
        nest = ref.loop
        decl = kernel.tensor(self.tensor)
        if decl is None:
            read = sorted({a.tensor for s in ir.iter_stmts(nest.body) if isinstance(s, ir.Assign)
                           for a in accesses(s.value)})
            raise BadParameter(self.name, f"no tensor named `{self.tensor}`", loc=nest.loc,
                            hint=_hint("tensors read in `" + self.loop + "`: " + (", ".join(f"`{t}`" for t in read) or "none"),
                                           _alternatives(kernel)), param="tensor", value=self.tensor, loops=(self.loop,))
        if decl.kind == "local":
            raise NotApplicable(self.name, f"`{self.tensor}` is an on-chip `local` ({decl.scope}); round the operand "
                            "before `tile` stages it", loc=decl.loc or nest.loc, hint=f"put `{self.to_text()}` before `tile` in the pipeline", loops=(self.loop,))
        if decl.rank == 0:
            raise NotApplicable(self.name, f"`{self.tensor}` is a scalar (rank 0): there is no operand tile to round",
                            loc=decl.loc or nest.loc, hint=_alternatives(kernel), loops=(self.loop,))
        _check_not_written(kernel, nest, self.tensor, self.loop)
        forms = _read_forms(nest, self.tensor)
        if not forms:
            raise NotApplicable(self.name, f"`{self.tensor}` is not read in `{self.loop}` ({loop_header(nest)})",
                            loc=nest.loc, hint=_alternatives(kernel), loops=(self.loop,))
        self._check_dtypes(kernel, decl, nest)

        taken = used_names(kernel)
        new_name = fresh(f"{self.tensor}_{self.dtype}", taken)
        new_decl = ir.TensorDecl(new_name, self.dtype, decl.shape, "temp")
        nests: list[ir.Stmt] = []
        for idx, loops in forms:
            label = fresh(f"round_{self.tensor}", taken)
            nests.append(_rounding_nest(label, loops, idx, self.tensor, new_name, self.dtype, nest, self.loop))

        src_dtype = decl.dtype

        def replace(e: ir.Expr) -> ir.Expr:
            if isinstance(e, ir.Access) and e.tensor == self.tensor:
                return ir.Call(src_dtype, (ir.Access(new_name, e.indices, e.loc),), e.loc)
            return e

        new_nest = map_stmt_exprs(nest, lambda e: map_expr(e, replace))
        body = replace_at(kernel.body, ref.path, nests + [new_nest])
        # the new temp is declared right after the tensor it rounds (or last, for an input)
        buffers = list(kernel.buffers)
        at = next((i + 1 for i, b in enumerate(buffers) if b.name == self.tensor), len(buffers))
        buffers.insert(at, new_decl)
        shape = ", ".join(format_expr(d) for d in decl.shape)
        trace.changes.append(f"rounds {self.tensor} to {self.dtype} for the cube; results change within "
                             f"{self.dtype} tolerance")
        for n in nests:
            trace.changes.append(f"new temp `{new_name}: {self.dtype}[{shape}]`, written by the new nest "
                                 f"`{_header(n)}` right before `{self.loop}`: `{_body_text(n)}`")
        trace.changes.append(f"{_count_reads(nest, self.tensor)} read(s) of `{self.tensor}` in "
                             f"`{self.loop}` now read `{src_dtype}({new_name}[...])`")
        trace.decisions.append(f"precision: each element of `{self.tensor}` read in `{self.loop}` is rounded once "
                               f"to {self.dtype} (relative error <= 2^-{_mantissa(self.dtype) + 1})")
        return dataclasses.replace(kernel, buffers=tuple(buffers), body=body)

    def _check_dtypes(self, kernel: ir.Kernel, decl: ir.TensorDecl, nest: ir.For) -> None:
        dt = self.dtype
        why, loc = None, decl.loc or nest.loc
        if dt not in ir.DTYPES:
            why, loc = f"unknown dtype `{dt}`", nest.loc
        elif decl.dtype not in ir.FLOAT_DTYPES or dt not in ir.FLOAT_DTYPES:
            why = f"rounding `{self.tensor}` ({decl.dtype}) to {dt}: both types must be floating-point"
        elif ir.DTYPE_BYTES[dt] >= ir.DTYPE_BYTES[decl.dtype]:
            why = f"{dt} is not narrower than `{self.tensor}`'s {decl.dtype}: nothing to round"
        if why is None:
            return
        narrower = sorted(d for d in ir.FLOAT_DTYPES if ir.DTYPE_BYTES[d] < ir.DTYPE_BYTES.get(decl.dtype, 0))
        hint = ("narrower float types than " + decl.dtype + ": " + ", ".join(f"`{d}`" for d in narrower)) if narrower \
            else f"`{decl.dtype}` has no narrower float type"
        raise BadParameter(self.name, why, loc=loc, hint=_hint(hint, _alternatives(kernel)), param="dtype", value=self.dtype, loops=(self.loop,))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """For every `acc += a * b` statement whose operand `a` (or `b`, under casts) reads an
        f32 input or temp: round it to f16 in the outermost named loop around the statement
        that does not write it (the whole nest when possible)."""
        out: list[Pass] = []
        seen: set[tuple[str, str]] = set()
        loops = all_loops(kernel)
        for path, loop, outer in loops:
            for s in loop.body:
                if not (isinstance(s, ir.Assign) and s.op == "+=" and isinstance(s.value, ir.Binary)
                        and s.value.op == "*"):
                    continue
                for opnd in (s.value.lhs, s.value.rhs):
                    while isinstance(opnd, ir.Call) and opnd.func in ir.DTYPES and len(opnd.args) == 1:
                        opnd = opnd.args[0]
                    if not isinstance(opnd, ir.Access):
                        continue
                    d = kernel.tensor(opnd.tensor)
                    if d is None or d.dtype != "f32" or d.kind not in ("input", "temp") or d.rank == 0:
                        continue
                    chain = [(path[:k], get_at(kernel.body, path[:k])) for k in range(1, len(path) + 1)]
                    for p, lp in chain:
                        assert isinstance(lp, ir.For)
                        if writer_of(lp, opnd.tensor):
                            continue
                        n = name_of_loop(kernel, p)
                        if n is None:
                            continue
                        if (n, opnd.tensor) in seen:
                            break
                        cand = cls(n, opnd.tensor, "f16")
                        _IN_SPACE.append(True)
                        try:
                            cand.run(kernel, target, TraceEntry(cand.to_text()))
                        except PassError:
                            continue
                        finally:
                            _IN_SPACE.pop()
                        seen.add((n, opnd.tensor))
                        out.append(cand)
                        break
        return out


# --------------------------------------------------------------------------------------
# helpers


def _mantissa(dtype: str) -> int:
    return {"f16": 10, "bf16": 7, "f32": 23}.get(dtype, 0)


def _check_not_written(kernel: ir.Kernel, nest: ir.For, tensor: str, name: str) -> None:
    w = writer_of(nest, tensor)
    if w is not None:
        what = "copies into" if isinstance(w, ir.Copy) else ("accumulates into" if getattr(w, "op", "=") != "=" else "writes")
        raise DependenceViolation("round_operand", f"`{name}` {what} `{tensor}`: a copy rounded before the nest would miss "
                        "those writes", loc=w.loc,
                        hint=_hint(f"name a loop (e.g. an inner loop of `{name}`) that reads `{tensor}` without writing it",
                                   _alternatives(kernel)), loops=(name,))


_IN_SPACE: list[bool] = []  # `space()` runs candidates; their refusals need no hint (and must not recurse)


def _alternatives(kernel: ir.Kernel) -> str:
    """The legal instances here (what `space()` offers), for the hint of a refusal."""
    if _IN_SPACE:
        return ""
    inst = RoundOperand.space(kernel)
    return ("legal here: " + ", ".join(f"`{p.to_text()}`" for p in inst)) if inst else \
        "no nest here reads an f32 operand of a `+=`-of-product statement without writing it"


def _hint(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _read_forms(nest: ir.For, tensor: str) -> list[tuple[tuple[ir.Expr, ...], list[ir.For]]]:
    """Distinct index tuples of the reads of `tensor` in `nest`, each with the loops of the
    nest (outermost first, `nest` included) that enclose its first occurrence."""
    forms: dict[tuple[str, ...], tuple[tuple[ir.Expr, ...], list[ir.For]]] = {}

    def walk(stmts: tuple[ir.Stmt, ...], stack: list[ir.For]) -> None:
        for s in stmts:
            if isinstance(s, ir.For):
                walk(s.body, stack + [s])
            elif isinstance(s, ir.Assign):
                exprs = [s.value] + (list(s.target.indices) if isinstance(s.target, ir.Access) else [])
                for e in exprs:
                    for a in accesses(e):
                        if a.tensor == tensor:
                            key = tuple(format_expr(i) for i in a.indices)
                            forms.setdefault(key, (a.indices, list(stack)))
            elif isinstance(s, ir.Copy) and s.src.tensor == tensor:
                raise NotApplicable("round_operand", f"`{tensor}` is copied in the nest (`copy {s.dst.tensor} <- "
                                f"{tensor}`): round it before `tile` stages it", loc=s.loc)

    walk((nest,), [])
    return list(forms.values())


def _rounding_nest(label: str, stack: list[ir.For], idx: tuple[ir.Expr, ...], tensor: str, new: str, dtype: str,
                   nest: ir.For, name: str) -> ir.Stmt:
    """`label: for v1 { for v2 { new[idx] = dtype(tensor[idx]) } }` over the loops of `stack`
    whose variables `idx` uses (legality 4 checked here)."""
    inner = {lp.var for lp in stack}
    used = {n for e in idx for n in names_in(e)} & inner
    kept = [lp for lp in stack if lp.var in used]
    dropped = inner - used
    for k, lp in enumerate(kept):
        for b in (lp.lo, lp.hi):
            bad = [n for n in names_in(b) if n in dropped or (n in inner and n not in {x.var for x in kept[:k]})]
            if bad:
                raise NotApplicable("round_operand", f"the bounds of `{loop_header(lp)}` use `{bad[0]}`, a loop of `{name}` "
                                f"that the reads of `{tensor}` do not index: the elements read are not a box",
                                loc=lp.loc or nest.loc, hint=f"name an inner loop of `{name}`")
    stmt: ir.Stmt = ir.Assign(ir.Access(new, idx), "=", ir.Call(dtype, (ir.Access(tensor, idx),)))
    for k in range(len(kept) - 1, -1, -1):
        lp = kept[k]
        stmt = ir.For(lp.var, lp.lo, lp.hi, (stmt,), label=label if k == 0 else None)
    return stmt


def _header(s: ir.Stmt) -> str:
    return loop_header(s) if isinstance(s, ir.For) else "statement"


def _body_text(s: ir.Stmt) -> str:
    while isinstance(s, ir.For):
        s = s.body[0]
    return format_stmt(s).strip()


def _count_reads(nest: ir.For, tensor: str) -> int:
    n = 0
    for s in ir.iter_stmts(nest.body):
        if isinstance(s, ir.Assign):
            n += sum(1 for a in accesses(s.value) if a.tensor == tensor)
    return n
