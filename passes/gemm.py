"""`gemm`: run every top-level matmul nest on the cube as a blocked, double-buffered kernel.

    gemm                        blocks chosen by the documented policy (below)
    gemm{m=128,n=256,k=256,k0=64}   C tile m x n (L0C), L1 K block k, L0 K slice k0

A matmul nest (`for i { for j { acc[i, j] = 0; for k { acc[i, j] += f32(A[i, k]) *
f32(B[k, j]) }; [C[i, j] = f16(acc[i, j])] } }`, `B[j, k]` too; A, B f16 inputs, `acc` an
f32 temp; transformer/lower/gemm.py) gets `@gemm(m=.., n=.., k=.., k0=..)`. The IR keeps its
meaning: the annotation only tells the lowering to emit the nest as a cube kernel of C tiles
m x n over every AIC, GM -> L1 blocks of K = k and L1 -> L0 slices of K = k0, both
double-buffered, tails padded to the 16 x 16 fractal (any M, N, K).

**Epilogues.** A store `C = f16(acc)`, `C = f16(max(acc, 0.0))` or an f32 `C = acc` stays in
the nest (Fixpipe: `F322F16`, `reluEn`). Any other epilogue (a bias, a scale, ...) is split
off first, as `tile` does (`<label>_epi`, whether or not `fuse` merged it into the nest): the
cube writes `acc` (f32, GM workspace) and the epilogue nest runs on the vector cores (`tile`
after `gemm` stages it; `tile` leaves `@gemm` nests alone).

**Blocks** (`choose_blocks`): the largest C tile whose f32 accumulator fits L0C (bn >= bm),
then the largest L1 K block with A and B blocks fitting L1 twice, then the largest L0 slice
dividing it with A and B slices fitting L0A / L0B twice; all multiples of 16, at most the
sizes rounded up to 16. Given blocks are refused (`CapacityExceeded`) unless they fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from transformer import ir
from transformer.lower.gemm import Blocks, annotate, check_blocks, choose_blocks, gemm_buffers, match_gemm

from . import _rewrite as R
from .params import Int, Map, Name, Params
from .base import BadParameter, CapacityExceeded, NothingToDo, Pass, TraceEntry, register
from .fission import split_epilogues
from transformer.targets import Target

KEYS = ("m", "n", "k", "k0")


@register
@dataclass(frozen=True)
class Gemm(Pass):
    """Mark matmul nests `@gemm(...)`: the lowering emits them as blocked cube kernels."""

    name: ClassVar[str] = "gemm"
    summary: ClassVar[str] = "run matmul nests on the cube at any size: C tiles over all AIC, L1/L0 K blocks, double-buffered"
    params: ClassVar[Params] = Map("blocks", Name(), Int(1), keys=KEYS, example="m=128,n=256,k=256,k0=64",
                                   note="block sizes; none: the documented policy chooses")
    blocks: tuple[tuple[str, int], ...] = ()
    # the annotation is the blocking; the lowering pads every tail to the fractal at the
    # sizes it is emitted at, so one `@gemm` nest serves every size of a range
    keeps_ranges: ClassVar[bool] = True

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        import dataclasses

        kernel = _expand_scalar_accumulators(kernel, trace)
        k0 = kernel
        kernel = split_epilogues(kernel, trace, keep=lambda nest: not isinstance(match_gemm(k0, nest), str), int8=True)
        body = list(kernel.body)
        why: list[str] = []
        done = 0
        for idx, nest in enumerate(body):
            if not isinstance(nest, ir.For) or nest.annotation("gemm") is not None:
                continue
            g = match_gemm(kernel, nest)
            if isinstance(g, str):
                why.append(f"`{nest.label or nest.var}`: {g}")
                continue
            if nest.annotation("cores") is not None:
                why.append(f"`{g.label}` is already split across cores")
                continue
            if self.blocks:
                d = dict(self.blocks)
                bl = Blocks(d["m"], d["n"], d["k"], d["k0"])
                bad = check_blocks(bl, target, g.c0)
                if bad:
                    raise BadParameter(self.name, bad, loc=nest.loc, param="blocks", value=self.to_text(),
                                       hint="blocks are multiples of 16; k0 divides k")
                for scope in ("l1", "l0a", "l0b", "l0c"):
                    need = sum(shp[0] * shp[1] * ir.DTYPE_BYTES[dt] * st
                               for _, sc, dt, shp, st, _ in gemm_buffers(bl, g.b_nk, g.dtype) if sc == scope)
                    cap = int(target.scopes[scope].usable.value)
                    if need > cap:
                        raise CapacityExceeded(self.name, f"blocks m={bl.m} n={bl.n} k={bl.k} k0={bl.k0} need {need} B "
                                               f"of {scope.upper()} ({cap} B usable on {target.name})", loc=nest.loc,
                                               hint="use smaller blocks, or `gemm` without parameters",
                                               scope=scope, need_bytes=need, budget_bytes=cap)
                why_bl = "given"
            else:
                bl = choose_blocks(g, target)
                why_bl = "the largest C tile fitting L0C, then the largest K blocks fitting L1 and L0A/L0B twice"
            body[idx] = annotate(nest, bl)
            done += 1
            b = f"{g.b}ᵀ" if g.b_nk else g.b
            shape = f"{g.batch} batches of " if g.a_batched or g.b_batched else ""
            trace.changes.append(f"`{g.label}` ({shape}{g.m} x {g.n} x {g.k}, `{g.acc}` = {g.a} @ {b}) runs on the cube: "
                                 f"@gemm(m={bl.m}, n={bl.n}, k={bl.k}, k0={bl.k0})")
            trace.decisions.append(f"blocks {why_bl}; store: "
                                   + (f"`{g.store}` by Fixpipe" + (" with relu" if g.relu else "") if g.store
                                      else f"`{g.acc}` ({g.acc_dtype}) to the GM workspace for the epilogue"))
        if not done:
            raise NothingToDo(self.name, "no matmul nest to put on the cube (" + "; ".join(why or ["no loop nest"]) + ")")
        return dataclasses.replace(kernel, body=tuple(body))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        return [cls()] if any(isinstance(s, ir.For) and s.annotation("gemm") is None
                              and not isinstance(match_gemm(kernel, s), str) for s in kernel.body) else []


def cube_batched_matmuls(kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
    """`tile` without sizes on a **batched** matmul (`for b { <a matmul> }`, `match_gemm`):
    the nest is marked `@gemm` with the documented blocks, as `gemm` would. Tiling it instead
    stages 3-D operand tiles (a batch axis of 1 in front of each matrix), which the staged
    cube lowering cannot feed to `Mmad` (it went scalar); the blocked kernel deals every
    batch's C tiles over the AIC. Other nests are left to `tile`."""
    import dataclasses

    body = list(kernel.body)
    for idx, nest in enumerate(body):
        if (not isinstance(nest, ir.For) or nest.annotation("gemm") is not None
                or nest.annotation("cores") is not None):
            continue
        g = match_gemm(kernel, nest)
        if isinstance(g, str) or not (g.a_batched or g.b_batched):
            continue
        bl = choose_blocks(g, target)
        body[idx] = annotate(nest, bl)
        trace.changes.append(f"`{g.label}` ({g.batch} batches of {g.m} x {g.n} x {g.k}) runs on the cube: "
                             f"@gemm(m={bl.m}, n={bl.n}, k={bl.k}, k0={bl.k0}), as `gemm` chooses")
        trace.decisions.append(f"`{g.label}` is a batched matmul: blocked cube kernel (staged 3-D tiles "
                               "would not reach `Mmad`)")
    return dataclasses.replace(kernel, body=tuple(body))


def _expand_scalar_accumulators(kernel: ir.Kernel, trace: TraceEntry) -> ir.Kernel:
    """After `fuse`, a matmul's accumulator is a rank-0 temp (`acc = 0; for k { acc += ..};
    C[i, j] = epi(acc)`). It is private to each (i, j) iteration (set before any read), so
    giving it back its [M, N] shape (`acc[i, j]`) computes the same values; the matmul is then
    recognised and its epilogue split off as without `fuse`."""
    import dataclasses

    body = list(kernel.body)
    decls = {t.name: t for t in kernel.buffers}
    changed: dict[str, ir.TensorDecl] = {}
    for idx, nest in enumerate(body):
        if not (isinstance(nest, ir.For) and nest.annotation("gemm") is None and len(nest.body) == 1
                and isinstance(nest.body[0], ir.For)):
            continue
        lj = nest.body[0]
        first = lj.body[0] if lj.body else None
        if not (isinstance(first, ir.Assign) and isinstance(first.target, ir.Name) and first.op == "="):
            continue
        acc = first.target.name
        d = decls.get(acc)
        if d is None or d.kind != "temp" or d.dtype != "f32" or d.rank != 0 or acc in changed:
            continue
        if any(acc in ir.names_used((x,)) for k, x in enumerate(body) if k != idx):
            continue
        if any(acc in ir.names_used((x,)) for x in nest.body[0].body[1:]) and acc in ir.names_used((first.value,)):
            continue
        at = ir.Access(acc, (ir.Name(nest.var), ir.Name(lj.var)))

        def f(e: ir.Expr, acc: str = acc, at: ir.Access = at) -> ir.Expr:
            return R.map_expr(e, lambda x: at if isinstance(x, ir.Name) and x.name == acc else x)

        new = R.map_stmt_exprs(nest, f)
        cand = dataclasses.replace(kernel, body=tuple(body[:idx]) + (new,) + tuple(body[idx + 1:]),
                                   buffers=tuple(dataclasses.replace(t, shape=(nest.hi, lj.hi)) if t.name == acc else t
                                                 for t in kernel.buffers))
        if isinstance(match_gemm(cand, _head(new)), str):
            continue
        body[idx] = new
        changed[acc] = dataclasses.replace(d, shape=(nest.hi, lj.hi))
        trace.changes.append(f"gave the fused accumulator `{acc}` of `{nest.label or nest.var}` back its shape "
                             f"[{nest.var}, {lj.var}] (private to each iteration: set to 0 before any read)")
    if not changed:
        return kernel
    return dataclasses.replace(kernel, body=tuple(body),
                               buffers=tuple(changed.get(t.name, t) for t in kernel.buffers))


def _head(nest: ir.For) -> ir.For:
    """The nest without the statements after its K loop (what `match_gemm` needs to see)."""
    import dataclasses

    lj = nest.body[0]
    assert isinstance(lj, ir.For)
    return dataclasses.replace(nest, body=(dataclasses.replace(lj, body=lj.body[:2]),))
