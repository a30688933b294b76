"""`flash_attention`: emit attention as one FlashAttention mix kernel on the 910B.

    round_operand{pv.s=f16},flash_attention

Marks the first nest of the attention kernel (examples/attention.ir, or the causal
examples/attention_causal.ir, after `round_operand{pv.s=f16}`; any names) `@flash(q=128, kv=128)`. The IR keeps its meaning;
the lowering (transformer/lower/flash.py) emits one MIX_MODE kernel over every AIC and its
two AIVs: per query tile of 128 rows and key block of 128 keys, QKᵀ and P·V on the cube, the
online softmax on the vector cores, the cube one key block ahead of the vector cores
(two workspace slots per stream, cross-core flags).

**P in f16 is an explicit option**: P·V on the cube takes f16 operands, so the kernel must
first be rounded with `round_operand{pv.s=f16}` (the one pass that changes results, within
f16 tolerance; docs/passes.md). Without it the pass refuses, naming that pass. The online
softmax itself is exact in exact arithmetic (a rescaled running max and sum); the emitted
P_j = f16(exp(x - running max)) differs from the IR's f16(exp(x - final max)) by rounding.

Causal (`s[i, j] = select(j <= i, s[i, j] * scale, -inf)` in place of the additive mask):
the kernel skips the fully masked key blocks of each query tile (neither the cube nor the
vector cores touch them), masks the diagonal block only, and deals the unequal query tiles
heaviest first to the least-loaded AIC. Any other mask nest in an otherwise attention-shaped
kernel is refused (`NotApplicable`, naming the nest).

Requires S a multiple of 128 and D = 64 or 128 (else refused, `NotApplicable`); nothing to
do when the kernel is not attention-shaped (a no-op).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from transformer import ir
from transformer.lower.flash import (AIVS_PER_AIC, KV_BLOCK, FlashAttn, Refusal, causal_blocks, choose_q, flash_cores, flash_fits,
                                     flash_group, group_limit, match_flash)

from transformer.targets import resolve_target

from .params import Int, Keywords, Params
from .base import BadParameter, NotApplicable, NothingToDo, Pass, PipelineError, TraceEntry, register
from transformer.targets import Target


@register
@dataclass(frozen=True)
class FlashAttention(Pass):
    """Mark attention `@flash(...)`: the lowering emits one pipelined cube + vector mix kernel."""

    name: ClassVar[str] = "flash_attention"
    summary: ClassVar[str] = ("attention as one 910B FlashAttention mix kernel (QKᵀ, P·V on the cube, online softmax on "
                              "the vector cores, pipelined); needs round_operand{pv.s=f16} first")
    params: ClassVar[Params] = Keywords({"q": Int(1), "g": Int(1)}, example="q=64,g=2",
                                        note="q: query tile rows (64 or 128), g: query tiles per pass over K and V; "
                                             "omitted: chosen (`choose_q`, `flash_group`); key blocks of 128")
    q: int = 0  # 0: chosen
    g: int = 0  # 0: chosen
    # the annotation is the blocking; the lowering runs any S a multiple of the key block, so
    # a range of such S is served (`_check_ranges`); the tiles are chosen at the default
    keeps_ranges: ClassVar[bool] = True

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        first = kernel.body[0] if kernel.body else None
        if isinstance(first, ir.For) and first.annotation("flash") is not None:
            raise NothingToDo(self.name, "the kernel is already marked @flash")
        fa = match_flash(kernel)
        if isinstance(fa, Refusal):
            raise NotApplicable(self.name, str(fa), getattr(kernel.body[1], "loc", None),
                                hint="the causal form is `select(j <= i, s[i, j] * scale, -inf)` (examples/attention_causal.ir); "
                                     "other masks go through an additive mask input M (examples/attention.ir)")
        if isinstance(fa, str):
            hint = _needs_rounding(kernel, target)
            if hint:
                raise NotApplicable(self.name, "P·V on the cube takes P in f16; the kernel keeps P in f32",
                                    getattr(first, "loc", None),
                                    hint=f"run `{hint},flash_attention` (P rounded to f16, as FlashAttention kernels do)")
            raise NothingToDo(self.name, fa)
        if target.aiv_per_aic != AIVS_PER_AIC:
            raise NotApplicable(self.name, f"the mix kernel splits each query tile over {AIVS_PER_AIC} AIVs per AIC; "
                                f"{target.name} has {target.aiv_per_aic or 'no separate'} AIVs per AIC",
                                getattr(first, "loc", None), hint="use a split-core target such as ascend910b2 (`--target`)")
        _check_ranges(kernel, fa.names["S"], fa.names["D"], first)
        if self.q and self.q not in (64, 128):
            raise BadParameter(self.name, f"query tile q={self.q}: the kernel takes 64- or 128-row tiles",
                               loc=getattr(first, "loc", None), param="q", value=self.q, hint="q=64 or q=128")
        fa = dataclasses.replace(fa, q=self.q or choose_q(fa, target))
        bad = flash_fits(fa)
        if bad is None:
            fa = dataclasses.replace(fa, g=self._group(fa, target, first))
        if bad:
            raise NotApplicable(self.name, bad, getattr(first, "loc", None),
                                hint=f"use S a multiple of {KV_BLOCK} and D = 64 or 128 (`--size`)")
        assert isinstance(first, ir.For)
        ann = ir.Annotation("flash", (("q", fa.q), ("kv", KV_BLOCK), ("g", fa.g)), None)
        body = (dataclasses.replace(first, annotations=first.annotations + (ann,)),) + tuple(kernel.body[1:])
        n = flash_cores(fa, target)
        blocks = (f"key blocks 0 .. its diagonal (causal: {sum(causal_blocks(t, fa.q) for t in range(fa.s // fa.q))} of "
                  f"{(fa.s // fa.q) * (fa.s // KV_BLOCK)} (tile, block) pairs; fully masked blocks skipped, the mask applied "
                  "on the diagonal block only, tiles balanced over the AIC)") if fa.causal else f"{fa.s // KV_BLOCK} key blocks each"
        trace.changes.append(f"{'causal ' if fa.causal else ''}attention (S = {fa.s}, D = {fa.d}) runs as one mix kernel: "
                             f"@flash(q={fa.q}, kv={KV_BLOCK}, g={fa.g}) on `{first.label or first.var}`, {fa.s // fa.q} query "
                             f"tiles over {n} AIC + {AIVS_PER_AIC * n} AIV, {fa.g} per pass over K and V, {blocks}")
        trace.decisions.append(f"query tile {fa.q} rows: of 128 and 64, the one that leaves the busiest AIC the fewest rows; "
                               "QKᵀ and P·V on the cube, the online softmax on the vector cores, the cube one key block "
                               "ahead (two workspace slots, cross-core flags); P is the f16 `round_operand` made")
        return dataclasses.replace(kernel, body=body)

    def _group(self, fa: "FlashAttn", target: Target, first: ir.Stmt | None) -> int:
        """The g requested (checked against `group_limit`), else `flash_group`'s choice."""
        if not self.g:
            return flash_group(fa, target)
        most = group_limit(fa, target)
        if self.g > most:
            raise BadParameter(self.name, f"g={self.g} query tiles per pass over K and V: at most {most} here (the busiest "
                               "AIC's tiles, one softmax state each in UB, the S-ready sets within a cross-core flag)",
                               loc=getattr(first, "loc", None), param="g", value=self.g, hint=f"g in 1..{most}")
        return self.g

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        fa = match_flash(kernel)
        first = kernel.body[0] if kernel.body else None
        if isinstance(fa, str) or flash_fits(dataclasses.replace(fa, q=choose_q(fa, target or resolve_target(None)))) or (isinstance(first, ir.For) and first.annotation("flash")):
            return []
        return [cls()]


def _check_ranges(kernel: ir.Kernel, s: str, d: str, first: ir.Stmt | None) -> None:
    """Condition over size ranges: the head dimension is fixed (64 or 128), and every value
    of a ranged sequence length is a multiple of the key block (at least one block)."""
    ranges = kernel.size_ranges()
    where = getattr(first, "loc", None)
    if d in ranges:
        raise NotApplicable("flash_attention", f"the head dimension `{d}` has a range; the mix kernel is built for "
                            "D = 64 or 128", where, hint=f"fix `{d}` (`size {d} = 64`) or give it with --size")
    if s in ranges:
        lo, hi, step = ranges[s]
        if step % KV_BLOCK or lo < KV_BLOCK:
            raise NotApplicable("flash_attention", f"`{s}` ranges over {lo}..{hi}" + (f" multiple of {step}" if step > 1 else "")
                                + f": the mix kernel needs every value a multiple of {KV_BLOCK}", where,
                                hint=f"declare `size {s} = ... in {KV_BLOCK}..{hi // KV_BLOCK * KV_BLOCK} multiple of {KV_BLOCK}`")


def _needs_rounding(kernel: ir.Kernel, target: Target) -> str | None:
    """The `round_operand` request that makes `kernel` the rounded attention, if one does."""
    from .base import PassError, parse_pipeline, run_pipeline

    last = kernel.body[-1] if kernel.body else None
    temps = [t.name for t in kernel.buffers if t.kind == "temp"]
    if not isinstance(last, ir.For) or not last.label or not temps:
        return None
    text = f"round_operand{{{last.label}.{temps[0]}=f16}}"
    try:
        rounded = run_pipeline(kernel, parse_pipeline(text), target)[0]
    except (PassError, PipelineError):
        return None
    return text if not isinstance(match_flash(rounded), str) else None
