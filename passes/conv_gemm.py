"""`conv_gemm`: run 2-D convolution nests on the cube as implicit GEMMs (img2col on the fly).

    conv_gemm                                blocks chosen by the documented policy
    conv_gemm{m=128,rows=4,c=32,k0=64}       m filters x rows output rows per C tile (L0C),
                                             c channels per L1 K block, L0 K slices of k0

A convolution nest (NCHW, stride 1, no padding, any R x S filter, any loop names:
`acc[n, f, y, x] = f32(bias[f])` (or 0), `acc += f32(X[n, c, y + r, x + s]) * f32(Wt[f, c,
r, s])` over (c, r, s), `Y[n, f, y, x] = f16(acc)` or `f16(max(acc, 0.0))`;
transformer/lower/conv.py) gets `@conv(m=.., rows=.., c=.., k0=..)`. The IR keeps its
meaning (the interpreter runs the nest as written); the annotation tells the lowering to
emit the nest as a cube kernel: per image `Y[f, p] = Wt[f, k] @ img2col(X)[k, p]` with
k = (c, r, s), the img2col block gathered from X during the GM -> L1 copy, the bias as the
tile's first product, the f16 cast (and relu) by Fixpipe.

Why a pass of its own and not `gemm`: the nest is 7 loops deep over 4-D tensors, its
epilogue (bias) is part of the accumulator's initial value, and its B operand is never a
tensor of the kernel — `gemm` matches 2-D matmuls, whose operands it copies as they are.

A nest that is not such a convolution is refused with `NotAConvolution` (the reason, the
nest); the pass asked of a kernel with no convolution at all refuses the same way (exit 2
on the CLI), since a caller who names `conv_gemm` expects the cube.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from transformer import ir
from transformer.targets import Target
from transformer.lower.conv import ConvBlocks, annotate, check_conv_blocks, choose_conv_blocks, match_conv

from .base import BadParameter, CapacityExceeded, NotApplicable, Pass, TraceEntry, register
from .params import Int, Map, Name, Params

KEYS = ("m", "rows", "c", "k0")


class NotAConvolution(NotApplicable):
    """No top-level nest is a convolution the cube lowering takes: `nest` (the nest looked at,
    or None when the kernel has no loop nest) and `why` (what did not match)."""

    reason = "not a convolution"

    def __init__(self, pass_name: str, message: str, loc: ir.Loc | None = None, *, nest: str | None = None,
                 why: str = "", **kw: Any) -> None:
        super().__init__(pass_name, message, loc, **kw)
        self.nest = nest
        self.why = why


@register
@dataclass(frozen=True)
class ConvGemm(Pass):
    """Mark convolution nests `@conv(...)`: the lowering emits them as implicit-GEMM cube kernels."""

    name: ClassVar[str] = "conv_gemm"
    summary: ClassVar[str] = ("run conv2d nests on the cube as implicit GEMMs: img2col gathered during GM->L1, "
                              "C tiles over all AIC, bias and cast in the cube kernel")
    params: ClassVar[Params] = Map("blocks", Name(), Int(1), keys=KEYS, example="m=128,rows=2,c=32,k0=64",
                                   note="filters, output rows, channels, K slice; none: the documented policy chooses")
    blocks: tuple[tuple[str, int], ...] = ()

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        body = list(kernel.body)
        first: tuple[ir.For, str] | None = None
        done = 0
        for idx, nest in enumerate(body):
            if not isinstance(nest, ir.For) or nest.annotation("conv") is not None:
                continue
            cv = match_conv(kernel, nest)
            if isinstance(cv, str):
                first = first or (nest, cv)
                continue
            if nest.annotation("cores") is not None:
                first = first or (nest, "it is already split across cores")
                continue
            if self.blocks:
                d = dict(self.blocks)
                bl = ConvBlocks(d["m"], d["rows"], d["c"], d["k0"])
                bad = check_conv_blocks(cv, bl, target)
                if bad is not None and bad.scope is None:
                    raise BadParameter(self.name, bad.message, loc=nest.loc, param=bad.param, value=bad.value,
                                       hint="m and k0 are multiples of 16; rows, c >= 1")
                if bad is not None:
                    raise CapacityExceeded(self.name, bad.message, loc=nest.loc,
                                           hint="use smaller blocks, or `conv_gemm` without parameters",
                                           scope=bad.scope, need_bytes=bad.need, budget_bytes=bad.budget)
                why_bl = "given"
            else:
                try:
                    bl = choose_conv_blocks(cv, target)
                except ValueError as e:
                    raise CapacityExceeded(self.name, str(e), loc=nest.loc, hint="the output row must fit L0C",
                                           scope="l0c", need_bytes=16 * cv.owp * 4,
                                           budget_bytes=int(target.scopes["l0c"].usable.value)) from None
                why_bl = ("m = the filters (at most 128), the most output rows whose C tile fits L0C, "
                          "the largest K slice fitting L0A/L0B twice, the most channels whose blocks fit L1 twice")
            body[idx] = annotate(nest, bl)
            done += 1
            trace.changes.append(
                f"`{cv.label}` (conv {cv.n}x{cv.c}x{cv.h}x{cv.wd} * {cv.f}x{cv.c}x{cv.r}x{cv.s}: implicit GEMM "
                f"{cv.f} x {cv.n * cv.oh * cv.ow} x {cv.k}) runs on the cube: "
                f"@conv(m={bl.m}, rows={bl.rows}, c={bl.c}, k0={bl.k0})")
            trace.decisions.append(f"blocks {why_bl}; img2col of `{cv.x}` gathered during GM->L1 (Nd2Nz); "
                                   + (f"bias `{cv.bias}` as the first K slice; " if cv.bias else "")
                                   + f"`{cv.y}` by Fixpipe (F322F16" + (", relu)" if cv.relu else ")"))
        if not done:
            if first is None:
                raise NotAConvolution(self.name, "the kernel has no loop nest to run as a convolution", None,
                                      hint="conv_gemm takes a conv2d nest (see examples/conv2d.ir)")
            nest, why = first
            label = nest.label or nest.var
            raise NotAConvolution(self.name, f"`{label}` is not a convolution the cube lowering takes: {why}",
                                  nest.loc, loops=(label,), nest=label, why=why,
                                  hint="NCHW, stride 1, no padding: acc = f32(bias[f]) or 0; acc += f32(X[n, c, y + r, "
                                       "x + s]) * f32(Wt[f, c, r, s]); Y = f16(acc) (examples/conv2d.ir)")
        return dataclasses.replace(kernel, body=tuple(body))

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        # the nests `run` takes: a convolution, not yet marked, not already split across cores
        return [cls()] if any(isinstance(s, ir.For) and s.annotation("conv") is None and s.annotation("cores") is None
                              and not isinstance(match_conv(kernel, s), str) for s in kernel.body) else []
