"""`reciprocal`: divide by a loop-invariant divisor as a multiplication by its reciprocal
(changes precision, within f32 rounding).

    reciprocal               every eligible division of the kernel
    reciprocal{norm.c}       only the divisions inside the named loops

What it is for: a vector core has no "divide by a scalar" instruction, and its `Div` is a
transcendental-rate instruction (value-dependent, slower per repeat than `Mul`). Softmax and
the norms divide a whole row by one per-row value (`Y[r, c] = f16(e[r, c] / sm)`); computing
`1 / sm` once per row and multiplying (`Muls`) is what hand-written kernels do.

**This pass changes results** (like `round_operand`, it runs only when asked): `x * (1 / s)`
rounds twice where `x / s` rounds once, so each quotient may differ from the division by
about one f32 unit in the last place (relative error <= 2^-22, far inside the f16
tolerance of an f16 output). Zeros, infinities and NaNs behave as in the division
(`x * (1 / 0)` = `x / 0`, `x * (1 / inf)` = `x / inf`), except that the reciprocal of an f32
divisor below 2^-128 in magnitude overflows to infinity where the division may not. Its trace
entry says "divides by reciprocals: results change within f32 rounding".

Which divisions: `x / d` where the divisor `d` is a read of an f32 tensor (`s[idx]` or a
rank-0 `s`) that does not change inside the loop the division sits in: the indices of `d`
use no variable of that loop (or of loops inside it), and the loop neither writes nor
copies into `s`. The reciprocal is computed once, right before the outermost loop around
the division in which `d` is invariant (with a name: the named loop), into a new rank-0 temp
`s_rcp` (one per divisor and loop; divisions by the same `d` share it). Divisions by
literals, consts or expressions, and integer or f16 / bf16 divisors, are left alone (in f16
the reciprocal's own rounding would be as large as the output's tolerance).

It requires: 1) every named loop exists; 2) there is at least one such division (inside the
named loops); 3) the reciprocal's place is inside a loop nest or at the top level of the
kernel body.

rewrite (`fuse,reciprocal` on examples/softmax.ir):
    rmax: for r in 0..R {                      rmax: for r in 0..R {
      ...                                        ...
      for c in 0..C {                  ->        sm_rcp = 1.0 / sm
        Y[r, c] = f16(e[c] / sm)                 for c in 0..C {
      }                                            Y[r, c] = f16(e[c] * sm_rcp)
    }                                            }
                                               }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import NotApplicable, NothingToDo
from transformer.printer import format_expr
from transformer.targets import Target

from ._rewrite import fresh, loop_header, map_expr, names_in, used_names, writer_of
from .base import Pass, PassError, TraceEntry, register, resolve_loop
from .params import Loop, Names, Params

DIVISOR_DTYPES = ("f32",)  # f16 / bf16 reciprocals would round as coarsely as the output tolerance


@register
@dataclass(frozen=True)
class Reciprocal(Pass):
    name: ClassVar[str] = "reciprocal"
    summary: ClassVar[str] = ("divide by a loop-invariant f32 divisor as a multiplication by its reciprocal (once "
                              "per row); CHANGES PRECISION, within f32 rounding")
    params: ClassVar[Params] = Names("loops", Loop(), optional=True, example="norm.c",
                                     note="the loops whose divisions to rewrite (default: every eligible division)")
    loops: tuple[str, ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        refs = [resolve_loop(kernel, n, self.name).loop for n in self.loops]
        named = {id(lp): n for lp, n in zip(refs, self.loops)}
        rw = _Rewriter(kernel, named)
        body = rw.block(kernel.body, ())
        if not rw.done:
            where = (" inside " + ", ".join(f"`{n}`" for n in self.loops)) if self.loops else ""
            why = rw.skipped[0] if rw.skipped else "no division by a read of an f32 tensor"
            err = NotApplicable if self.loops else NothingToDo
            raise err(self.name, f"no division to rewrite{where}: {why}", loc=refs[0].loc if refs else kernel.loc,
                      hint="the divisor must be an f32 tensor read (`s[r]` or a rank-0 `s`) that the loop around "
                           "the division does not change, e.g. softmax's `e[c] / sm` after `fuse`")
        buffers = list(kernel.buffers) + [ir.TensorDecl(n, "f32", (), "temp") for n in rw.done]
        trace.changes.append("divides by reciprocals: results change within f32 rounding "
                             "(x * (1 / s) instead of x / s, relative error <= 2^-22)")
        for name, (d, loop, count) in rw.done.items():
            trace.changes.append(f"new temp `{name}: f32` = `1.0 / {format_expr(d)}`, computed once before "
                                 f"`{loop_header(loop)}`; {count} division(s) in it multiply by `{name}`")
        return dataclasses.replace(kernel, buffers=tuple(buffers), body=body)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        """`reciprocal` (every eligible division) when the kernel has one."""
        cand = cls()
        try:
            cand.run(kernel, target, TraceEntry(cand.to_text()))  # type: ignore[arg-type]
        except PassError:
            return []
        return [cand]


class _Rewriter:
    """Walks the body with the stack of enclosing loops; rewrites each eligible division at
    the outermost loop (of the named ones, when names are given) in which its divisor is
    invariant, and inserts the reciprocals right before those loops."""

    def __init__(self, kernel: ir.Kernel, named: dict[int, str]) -> None:
        self.kernel = kernel
        self.named = named
        self.taken = used_names(kernel)
        self.pre: dict[int, dict[str, str]] = {}  # id(loop) -> divisor text -> temp computed before it
        self.done: dict[str, list] = {}  # temp -> [divisor, loop, divisions rewritten]
        self.skipped: list[str] = []

    def block(self, stmts: tuple[ir.Stmt, ...], stack: tuple[ir.For, ...]) -> tuple[ir.Stmt, ...]:
        """`stmts` rewritten, each loop preceded by the reciprocals placed before it."""
        out: list[ir.Stmt] = []
        for s in stmts:
            if isinstance(s, ir.For):
                self.pre[id(s)] = {}
                new = dataclasses.replace(s, body=self.block(s.body, stack + (s,)))
                for key, name in self.pre.pop(id(s)).items():
                    d = self.done[name][0]
                    out.append(ir.Assign(ir.Name(name), "=", ir.Binary("/", ir.FloatLit(1.0), d)))
                out.append(new)
            elif isinstance(s, ir.Assign) and stack:
                out.append(dataclasses.replace(s, value=map_expr(s.value, lambda e: self.division(e, stack))))
            else:
                out.append(s)
        return tuple(out)

    def division(self, e: ir.Expr, stack: tuple[ir.For, ...]) -> ir.Expr:
        if not (isinstance(e, ir.Binary) and e.op == "/"):
            return e
        at = self.place(e.rhs, stack)
        if at is None:
            return e
        key = format_expr(e.rhs)
        pre = self.pre[id(at)]
        if key not in pre:
            base = e.rhs.tensor if isinstance(e.rhs, ir.Access) else e.rhs.name  # type: ignore[union-attr]
            pre[key] = fresh(f"{base}_rcp", self.taken)
            self.done[pre[key]] = [e.rhs, at, 0]
        self.done[pre[key]][2] += 1
        return ir.Binary("*", e.lhs, ir.Name(pre[key]), e.loc)

    def place(self, d: ir.Expr, stack: tuple[ir.For, ...]) -> ir.For | None:
        """The loop before which `1 / d` is computed, or None (the reason kept in `skipped`)."""
        tensors = {t.name for t in self.kernel.tensors()}
        if isinstance(d, ir.Access) and not any(isinstance(x, ir.Access) or (isinstance(x, ir.Name) and x.name in tensors)
                                                for i in d.indices for x in ir.sub_exprs(i)):
            tensor, idx_names = d.tensor, {n for i in d.indices for n in names_in(i)}
        elif isinstance(d, ir.Name) and d.name in tensors:
            tensor, idx_names = d.name, set()
        else:
            self.skipped.append(f"`{format_expr(d)}` is not a tensor read with loop-variable indices")
            return None
        decl = self.kernel.tensor(tensor)
        assert decl is not None
        if decl.dtype not in DIVISOR_DTYPES:
            self.skipped.append(f"the divisor `{format_expr(d)}` is {decl.dtype}, not f32")
            return None
        # invariance holds from some loop inwards (inner loops write and index less): the
        # outermost loop of that suffix of the stack
        k = len(stack)
        while k > 0 and stack[k - 1].var not in idx_names and writer_of(stack[k - 1], tensor) is None:
            k -= 1
        if k == len(stack):
            self.skipped.append(f"the divisor `{format_expr(d)}` changes inside `{loop_header(stack[-1])}`")
            return None
        if not self.named:
            return stack[k]
        return next((lp for lp in stack[k:] if id(lp) in self.named), None)
