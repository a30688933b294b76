"""The cheap model: an analytic, plan-level estimate of a kernel's time without compiling.

Why: the agent prices every candidate before spending a measurement (a compile and an
emulator run cost seconds; this costs milliseconds). It is a prior for ranking, not a
profile: `ascx tune` never reports a time it did not measure with the chosen measurer.

Method, per top-level nest (one phase of the kernel), from the IR alone:
- MTE2 / MTE3 / MTE1: bytes of every `copy` (GM -> local, local -> GM, local -> local),
  times the trip counts around it, at the target's per-cycle copy rates;
- V: every statement whose accesses are all on-chip (or scalar temps) runs as vector
  instructions over its innermost loop: ceil(row bytes / bytes per repeat) repeats per
  arithmetic operation, at the target's repeats per cycle;
- M: `+=` of a product whose operands sit in `l0a`/`l0b`: MACs at the cube's MACs/cycle;
- S: any statement touching a GM tensor element by element runs as scalar code: one
  cycle per operation plus one DataCopy block per GM element access;
- a `@pipeline` loop overlaps its pipes (max + the non-overlapped share of one
  iteration), otherwise pipes add; a `@cores(n)` loop divides the nest by n;
- a `@gemm` nest (the `gemm` pass) is priced as its blocked cube kernel: MTE2/MTE1 bytes of
  the A and B blocks per C tile, Mmad MACs, the Fixpipe store; double-buffered (the slowest
  pipe), over the AIC cores it launches on; a `@conv` nest (`conv_gemm`) likewise as its
  implicit-GEMM cube kernel (B's L1 bytes per tile: the shifted copies or the gathered
  img2col rows);
- a `@flash` kernel (the `flash_attention` pass) is one mix kernel: per AIC block of its
  schedule, K and V blocks GM -> L1 once per pass over K/V (g query tiles per pass), Q, P
  and the L0 loads, both Mmads and the Fixpipe of S and O per (tile, key block) on the AIC;
  the S / M / O loads, the online-softmax vector repeats and the P store per (tile, key
  block) on each AIV; the cube and vector cores pipelined (the slowest pipe of the busiest
  block).
The kernel time is the sum over nests, never below GM bytes / HBM bandwidth. Every rate
is a `Fact` of the target (`transformer/targets/`); the one modelling assumption of our
own is that scalar code does one operation per cycle.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from .. import ir
from ..targets import resolve_target
from ..targets import Target
from .memo import KernelMemo

ESTIMATE_VERSION = "estimate-4"  # 2: @gemm nests priced as the blocked cube kernel; 3: @conv nests too; 4: @flash kernels as the mix kernel
PIPES = ("MTE2", "MTE1", "MTE3", "V", "M", "S")


@dataclass
class Estimate:
    time_us: float
    cycles: float
    bound: str
    pipes: dict[str, float] = field(default_factory=dict)
    roofline_us: float = 0.0


_ESTIMATES: KernelMemo[Estimate] = KernelMemo()


def _ops(e: ir.Expr) -> int:
    if isinstance(e, (ir.Binary,)):
        return 1 + _ops(e.lhs) + _ops(e.rhs)
    if isinstance(e, ir.Unary):
        return 1 + _ops(e.operand)
    if isinstance(e, ir.Call):
        return (0 if e.func in ("f16", "f32", "bf16", "i8", "i32") else 1) + sum(_ops(a) for a in e.args)
    return 0


def _accesses(e: ir.Expr) -> list[ir.Access]:
    return [x for x in ir.sub_exprs(e) if isinstance(x, ir.Access)]


class _Model:
    def __init__(self, kernel: ir.Kernel, target: Target) -> None:
        self.k = kernel
        self.t = target
        self.sizes = kernel.size_values()
        self.decl = {d.name: d for d in (*kernel.inputs, *kernel.outputs, *kernel.buffers)}

    def fact(self, name: str) -> float:
        return float(self.t.value(name))

    def nbytes(self, tensor: str) -> int:
        d = self.decl.get(tensor)
        return ir.DTYPE_BYTES[d.dtype] if d is not None else 4

    def on_chip(self, tensor: str) -> bool:
        d = self.decl.get(tensor)
        return d is not None and d.kind == "local"

    def scope(self, tensor: str) -> str:
        d = self.decl.get(tensor)
        if d is None or d.kind != "local":
            return "gm"
        return str(d.scope)

    def gm_element(self, tensor: str) -> bool:
        d = self.decl.get(tensor)
        return d is not None and d.kind != "local" and len(d.shape) > 0

    def trip(self, loop: ir.For) -> int:
        from passes import _rewrite as R

        n = R.loop_extent(loop, self.sizes)
        if n is None:
            n = R.tail_max_extent(loop, self.sizes)
        return max(0, int(n or 1))

    def extent(self, d: Any) -> int:
        from passes import _rewrite as R

        if not isinstance(d, ir.Slice):
            return 1
        hi = R.eval_const(R.simp(R.sub(d.hi, d.lo)), self.sizes)
        return max(1, hi) if hi is not None else 1

    # ---- a nest -------------------------------------------------------------------
    def nest(self, s: ir.Stmt) -> tuple[dict[str, float], float]:
        """(busy cycles per pipe, cycles hidden by pipelining) of one top-level statement."""
        pipes = {p: 0.0 for p in PIPES}
        self.hidden = 0.0
        self.walk((s,), 1.0, None, pipes)
        return pipes, self.hidden

    def walk(self, stmts: tuple[ir.Stmt, ...], mult: float, inner: ir.For | None, pipes: dict[str, float]) -> None:
        for s in stmts:
            if isinstance(s, ir.For):
                n = self.trip(s)
                if any(a.name == "pipeline" for a in s.annotations) and n > 1:
                    sub = {p: 0.0 for p in PIPES}
                    outer_hidden = self.hidden
                    self.hidden = 0.0
                    self.walk(s.body, 1.0, s, sub)
                    inner_hidden = self.hidden
                    top = max(sub.values())
                    total = sum(sub.values())
                    # steady state: each iteration costs its slowest pipe, the others hide
                    # behind it except in the first and last iterations (fill and drain)
                    hidden_per_iter = (total - top) * (n - 1) / n
                    for p in PIPES:
                        pipes[p] += mult * n * sub[p]
                    self.hidden = outer_hidden + mult * n * (hidden_per_iter + inner_hidden)
                else:
                    self.walk(s.body, mult * n, s, pipes)
            elif isinstance(s, ir.Copy):
                # the extent of a GM slice may not fold (`i0 * 64:i0 * 64 + 64` does; a
                # tail `min(...)` does not): take the larger of the two sides
                elems = max(math.prod(self.extent(d) for d in s.dst.dims),
                            math.prod(self.extent(d) for d in s.src.dims))
                b = elems * self.nbytes(s.dst.tensor) * mult
                src, dst = self.scope(s.src.tensor), self.scope(s.dst.tensor)
                if src == "gm" and dst != "gm":
                    rate = self.fact("mte2_gm_to_l1_bytes_per_cycle" if dst == "l1" else "mte2_gm_to_ub_bytes_per_cycle")
                    pipes["MTE2"] += b / rate
                elif dst == "gm":
                    rate = self.fact("fix_l0c_to_gm_bytes_per_cycle" if src == "l0c" else "mte3_ub_to_gm_bytes_per_cycle")
                    pipes["MTE3"] += b / rate
                else:
                    pipes["MTE1"] += b / self.fact("mte1_l1_to_l0a_bytes_per_cycle")
            elif isinstance(s, ir.Assign):
                self.assign(s, mult, inner, pipes)

    def assign(self, s: ir.Assign, mult: float, inner: ir.For | None, pipes: dict[str, float]) -> None:
        acc = _accesses(s.value) + ([s.target] if isinstance(s.target, ir.Access) else [])
        ops = _ops(s.value) + (1 if s.op != "=" else 0) or 1
        gm = [a for a in acc if self.gm_element(a.tensor)]
        reads = _accesses(s.value)
        if gm == [s.target] and reads and all(self.scope(a.tensor) == "l0c" for a in reads):
            # C[...] = f16(acc_l0c[...]): the Fixpipe copy out of L0C
            pipes["MTE3"] += mult * self.nbytes(s.target.tensor) / self.fact("fix_l0c_to_gm_bytes_per_cycle")
            return
        if gm:
            block = self.fact("datacopy_granularity_bytes") / self.fact("mte2_gm_to_ub_bytes_per_cycle")
            pipes["S"] += mult * (ops + len(gm) * block)
            return
        cube = s.op == "+=" and isinstance(s.value, ir.Binary) and s.value.op == "*" and \
            any(self.scope(a.tensor) in ("l0a", "l0b") for a in acc)
        if cube:
            pipes["M"] += mult / self.fact("cube_macs_per_cycle_f16")
            return
        # vector: the innermost loop is one instruction per operation over the row
        row = self.trip(inner) if inner is not None else 1
        width = max((self.nbytes(a.tensor) for a in acc), default=4)
        repeats = math.ceil(row * width / self.fact("vector_bytes_per_repeat"))
        pipes["V"] += (mult / max(1, row)) * repeats * ops / self.fact("vector_repeats_per_cycle")


def _gemm_nest(m: _Model, kernel: ir.Kernel, s: ir.Stmt) -> tuple[dict[str, float], int] | None:
    """(busy cycles per pipe over all C tiles, AIC cores) of a `@gemm` nest, else None.

    The lowering (`lower/gemm.py`) runs each (m x n) C tile on one AIC: A and B blocks over
    the whole (fractal-padded) K go GM -> L1 (MTE2) and L1 -> L0A/L0B (MTE1), the Mmads
    (M) at the cube's MAC rate, the tile out by Fixpipe; queues double-buffer the loads, so
    the slowest pipe is the time."""
    from ..lower.gemm import gemm_cores, gemm_phase, tiles_of

    found = gemm_phase(kernel, s)
    if found is None:
        return None
    g, bl = found
    tiles = tiles_of(g, bl)
    kpad = -(-g.k // 16) * 16
    in_bytes = tiles * (bl.m + bl.n) * kpad * ir.DTYPE_BYTES["f16"]
    out_bytes = g.batch * g.m * g.n * (ir.DTYPE_BYTES["f16"] if g.store else ir.DTYPE_BYTES["f32"])
    pipes = {p: 0.0 for p in PIPES}
    pipes["MTE2"] = in_bytes / m.fact("mte2_gm_to_l1_bytes_per_cycle")
    pipes["MTE1"] = in_bytes / m.fact("mte1_l1_to_l0a_bytes_per_cycle")
    pipes["M"] = tiles * bl.m * bl.n * kpad / m.fact("cube_macs_per_cycle_f16")
    pipes["MTE3"] = out_bytes / m.fact("fix_l0c_to_gm_bytes_per_cycle")
    return pipes, gemm_cores(g, bl, m.t)


def _conv_nest(m: _Model, kernel: ir.Kernel, s: ir.Stmt) -> tuple[dict[str, float], int] | None:
    """(busy cycles per pipe over all C tiles, AIC cores) of a `@conv` nest, else None.

    The lowering (`lower/conv.py`) runs each (m filters x rows output rows) C tile on one
    AIC as an implicit GEMM over K = C*R*S: per tile, B's L1 block (the S shifted copies of
    the tile's input rows, or the gathered img2col rows) and A (the filters: once per core on
    the shifted path, per tile otherwise) go GM -> L1 (MTE2), the K slices L1 -> L0 (MTE1),
    the Mmads (M) at the cube's MAC rate, the tile out by Fixpipe; queues double-buffer the
    loads, so the slowest pipe is the time."""
    from ..lower.conv import _bn, _hrows, conv_cores, conv_phase, conv_tiles, shifted

    found = conv_phase(kernel, s)
    if found is None:
        return None
    cv, bl = found
    tiles, cores = conv_tiles(cv, bl), conv_cores(cv, bl, m.t)
    bn, kpad, half = _bn(cv, bl.rows), -(-cv.k // 16) * 16, ir.DTYPE_BYTES["f16"]
    if shifted(cv, bl):
        l1_bytes = (tiles * cv.s * _hrows(cv, bl) * cv.c * cv.owp + cores * bl.m * cv.k) * half
    else:
        l1_bytes = tiles * (bl.m + bn) * kpad * half
    l0_bytes = tiles * (bl.m + bn) * kpad * half
    pipes = {p: 0.0 for p in PIPES}
    pipes["MTE2"] = l1_bytes / m.fact("mte2_gm_to_l1_bytes_per_cycle")
    pipes["MTE1"] = l0_bytes / m.fact("mte1_l1_to_l0a_bytes_per_cycle")
    pipes["M"] = tiles * bl.m * bn * (kpad + (16 if cv.bias else 0)) / m.fact("cube_macs_per_cycle_f16")
    pipes["MTE3"] = cv.n * cv.f * cv.oh * cv.ow * half / m.fact("fix_l0c_to_gm_bytes_per_cycle")
    return pipes, cores


def _flash_kernel(m: _Model, kernel: ir.Kernel) -> dict[str, float] | None:
    """Busy cycles per pipe of the busiest block of a `@flash` mix kernel, else None
    (`lower/flash.py`: the AIC's pipes, and one AIV's under the AIV names)."""
    from ..lower.flash import (AIVS_PER_AIC, KV_BLOCK, causal_blocks, flash_cores, flash_fits, flash_schedule, match_flash,
                               with_annotation)

    first = kernel.body[0] if kernel.body else None
    ann = first.annotation("flash") if isinstance(first, ir.For) else None
    fa = match_flash(kernel) if ann is not None else None
    if fa is None or isinstance(fa, str):
        return None
    fa = with_annotation(fa, ann)
    if flash_fits(fa) is not None:
        return None
    q, kv, d, r, g = fa.q, KV_BLOCK, fa.d, fa.q // AIVS_PER_AIC, fa.g
    f16, f32 = ir.DTYPE_BYTES["f16"], ir.DTYPE_BYTES["f32"]
    rep = m.fact("vector_bytes_per_repeat")
    # vector repeats of one AIV per (tile, key block): S-wide passes (scale, [mask cast, add],
    # two subtracts, exp, the P cast), one fold / reduction / Nz copy per row pair, the update
    s_rep = r * kv * f32 / rep
    per_block_v = s_rep * (5 if fa.causal else 7) + 5 * r * max(1, kv // 64) / 2 + 2 * r * d * f32 / rep
    best: dict[str, float] = {}
    for tiles in flash_schedule(fa, flash_cores(fa, m.t)):
        nb = [causal_blocks(t, q) if fa.causal else fa.s // kv for t in tiles]
        pairs = sum(nb)
        passes = sum(max(nb[i:i + g]) for i in range(0, len(nb), g))  # K/V blocks loaded
        pipes = {p: 0.0 for p in PIPES}
        kv_bytes = passes * 2 * kv * d * f16
        pipes["MTE2"] = (kv_bytes + pairs * q * kv * f16 + len(tiles) * q * d * f16) / m.fact("mte2_gm_to_l1_bytes_per_cycle")
        pipes["MTE1"] = (kv_bytes + pairs * (q * d + q * kv) * f16) / m.fact("mte1_l1_to_l0a_bytes_per_cycle")
        pipes["M"] = pairs * 2 * q * kv * d / m.fact("cube_macs_per_cycle_f16")
        pipes["MTE3"] = pairs * (q * kv + q * d) * f32 / m.fact("fix_l0c_to_gm_bytes_per_cycle")  # Fixpipe of S, O
        aiv_in = pairs * (r * kv * f32 + (0 if fa.causal else r * kv * f16) + r * d * f32)
        aiv = {"MTE2": aiv_in / m.fact("mte2_gm_to_ub_bytes_per_cycle"), "V": pairs * per_block_v / m.fact("vector_repeats_per_cycle"),
               "MTE3": pairs * r * kv * f16 / m.fact("mte3_ub_to_gm_bytes_per_cycle")}
        for p, c in aiv.items():  # the AIV's pipes run beside the AIC's: the same names, the larger
            pipes[p] = max(pipes[p], c)
        if max(pipes.values()) > max(best.values(), default=-1.0):
            best = pipes
    return best


def estimate(kernel: ir.Kernel, target: Target | None = None) -> Estimate:
    """The analytic time of `kernel` on `target` (see the module docstring); computed once
    per canonical kernel and target in a process (`memo.py`: the search asks again and again)."""
    tgt = resolve_target(target)
    e = _ESTIMATES.get(kernel, tgt, "", lambda: _estimate(kernel, tgt))
    return dataclasses.replace(e, pipes=dict(e.pipes))  # a copy: the memo's own is never changed


def _estimate(kernel: ir.Kernel, tgt: Target) -> Estimate:
    m = _Model(kernel, tgt)
    total = {p: 0.0 for p in PIPES}
    cycles = 0.0
    from ..lower.spread import kernel_spread

    flash = _flash_kernel(m, kernel)
    # the cores lowering splits each top-level loop over (a flash kernel has its own schedule)
    spread = kernel_spread(kernel, tgt) if flash is None else {}
    if flash is not None:  # the whole kernel is one pipelined mix kernel
        total = dict(flash)
        cycles = max(flash.values())
    for i, s in enumerate(kernel.body if flash is None else ()):
        gemm = _gemm_nest(m, kernel, s) or _conv_nest(m, kernel, s)
        if gemm is not None:
            pipes, cores = gemm
            for p in PIPES:
                total[p] += pipes[p] / cores
            cycles += max(pipes.values()) / cores  # L1 and L0 loads are double-buffered
            continue
        pipes, hidden = m.nest(s)
        cores = spread[i].cores if i in spread else 1
        for p in PIPES:
            total[p] += pipes[p] / cores
        cycles += (sum(pipes.values()) - hidden) / cores
    gm_bytes = sum(math.prod(m.extent(ir.Slice(ir.IntLit(0), d)) for d in t.shape) * ir.DTYPE_BYTES[t.dtype]
                   for t in (*kernel.inputs, *kernel.outputs))
    clock = m.fact("clock_mhz") * 1e6
    hbm_cycles = gm_bytes / (m.fact("hbm_bandwidth_gbps") * 1e9) * clock
    bound = max(total, key=total.__getitem__)
    if hbm_cycles > cycles:
        cycles, bound = hbm_cycles, "HBM"
    return Estimate(cycles / clock * 1e6, cycles, bound, {p: v for p, v in total.items() if v},
                    hbm_cycles / clock * 1e6)
