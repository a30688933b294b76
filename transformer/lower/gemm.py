"""A matmul nest marked `@gemm(m, n, k, k0)` -> a blocked, double-buffered cube kernel at any size.

The `gemm` pass (passes/gemm.py) marks a top-level nest

    for i in 0..M { for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += f32(A[i, k]) * f32(B[k, j]) }     # B[j, k] (Bᵀ stored) too
      [C[i, j] = f16(acc[i, j])  |  f16(max(acc[i, j], 0.0))  |  C[i, j] = acc[i, j] (f32)]
    } }

with `@gemm(m=BM, n=BN, k=BK, k0=K0)`; the IR keeps its meaning (the interpreter runs the
nest as written), and this module emits the whole phase by hand, the shape hand-written
Ascend C matmuls have:

* **C tiles** of BM x BN (`L0C`, one `TQue<CO1, 1>`), dealt to every AIC: block `w` runs tiles
  `w, w + blockDim, ...` (blockDim = min(AIC cores, tiles));
* per tile, **L1 blocks** of K = BK: `A[m0:m0+BM, k:k+BK]` and `B[k:k+BK, n0:n0+BN]`, GM -> L1 by
  `DataCopy(Nd2NzParams)` into `TQue<A1, 2>` / `TQue<B1, 2>` (double-buffered: the load of block
  kb+1 runs on MTE2 while the cube works on block kb);
* per L1 block, **L0 slices** of K = K0: `LoadData` into `TQue<A2, 2>` / `TQue<B2, 2>`
  (double-buffered: MTE1 fills slice s+1 while the cube multiplies slice s), one `Mmad` each,
  `cmatrixInitVal` on the first slice of the tile;
* the tile's **store** by `Fixpipe` (Nz -> ND; `F322F16` for an f16 C, `reluEn` for relu,
  `NoQuant` for an f32 C or the f32 workspace of an epilogue that runs on the vector cores).

**int8** (`acc` an i32 temp of `i32(A[i, k]) * i32(B[j, k])`, int8 inputs, B stored [N, K]):
int8 L1/L0 buffers and an int32 L0C, K groups of C0 = 32 (the 16 x 32 int8 fractal), Fixpipe
NoQuant to the i32 store or workspace; B [K, N] is refused (int8 L0B fractals are
K-innermost and LoadData transposes 16-bit fractals only).

**Tails** (sizes that are not multiples of the blocks or of 16): the last tiles and blocks
take the actual extents `mLen = min(BM, M - m0)` etc.; buffers keep their full size, the Nz
layouts use the extents rounded up to the 16 x 16 fractal (`mPad`), `Nd2Nz` zero-fills the
columns of the last C0 group (documented: so A's padded K columns, and Bᵀ's, are 0), B's
padding rows of the K tail are zeroed by `InitConstValue` (the cube multiplies whole
fractals: stale Inf/NaN there times A's zero columns would be NaN; the emulator's `Mmad`
refuses a K padding that contributes anything), `Mmad` takes the actual m, n, k and
`Fixpipe` writes only mLen x nLen. So every size goes through the cube.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import ir
from ..affine import eval_int, to_affine
from ..targets import Target
from .cexpr import CTYPE
from .cube_emit import finish_phase, queue_buffers, slice_loop
from .gemm_runtime import ANNOTATION, FRACTAL, gemm_dims
from .plan import NestChoice

if TYPE_CHECKING:
    from .lower import Lowering, _PhaseSrc

ACC_OF = {"f16": "f32", "i8": "i32"}  # the cube's accumulation dtype per input dtype (s8 x s8 -> s32)
CONVERT = {"f16": "f32", "i8": "i32"}  # the IR conversion an operand is read through


@dataclass(frozen=True)
class GemmNest:
    """What a matmul nest computes, read off the IR (`match_gemm`)."""

    label: str
    acc: str  # the f32 accumulator temp
    a: str  # A[M, K] (GM, f16)
    b: str  # B[K, N] (b_nk: B stored [N, K], read as B[j, k])
    b_nk: bool
    m: int
    n: int
    k: int
    store: str | None  # the GM tensor the tile is written to (None: the accumulator itself, f32)
    relu: bool
    batch: int = 1  # the trips of an outer batch loop (`for b { <the matmul> }`): one matmul per batch
    a_batched: bool = False  # A is [batch, M, K] read at [b, i, k] (else shared by every batch)
    b_batched: bool = False  # B is [batch, K, N] (or [batch, N, K]) read at [b, ..]
    dtype: str = "f16"  # the operands' dtype: f16 (f32 accumulator) or i8 (i32 accumulator)

    @property
    def acc_dtype(self) -> str:
        return ACC_OF[self.dtype]

    @property
    def c0(self) -> int:
        """Elements per 32 B fractal row (C0): 16 halves, 32 int8."""
        return 32 // ir.DTYPE_BYTES[self.dtype]


@dataclass(frozen=True)
class Blocks:
    m: int
    n: int
    k: int
    k0: int


def _ceil16(x: int) -> int:
    return -(-x // FRACTAL) * FRACTAL


def _is_var(e: ir.Expr, v: str) -> bool:
    return isinstance(e, ir.Name) and e.name == v


def _zero(e: ir.Expr) -> bool:
    return isinstance(e, (ir.FloatLit, ir.IntLit)) and e.value == 0


def _shape(d: ir.TensorDecl, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(eval_int(x, sizes) for x in d.shape)


def _range0(lp: ir.For, sizes: dict[str, int]) -> int | None:
    lo, hi = to_affine(lp.lo, sizes), to_affine(lp.hi, sizes)
    if lo is None or hi is None or not lo.is_const() or not hi.is_const() or lo.const != 0 or hi.const < 1:
        return None
    return hi.const


def match_gemm(kernel: ir.Kernel, nest: ir.Stmt) -> GemmNest | str:
    """The matmul `nest` computes (see the module docstring), or why it is not one.

    A **batched** matmul is the same nest inside one more loop, `for b in 0..B { for i {
    for j { ... } } }`: the accumulator and the store are indexed `[b, i, j]`, A `[b, i, k]`
    and B `[b, k, j]` (or `[b, j, k]`); an operand indexed without `b` (2-D) is shared by
    every batch (weights). Each batch is one matmul; the lowering deals the C tiles of
    every batch over the AIC."""
    sizes = kernel.size_values()
    if (isinstance(nest, ir.For) and len(nest.body) == 1 and isinstance(nest.body[0], ir.For)
            and len(nest.body[0].body) == 1 and isinstance(nest.body[0].body[0], ir.For)):
        nb = _range0(nest, sizes)
        if nb is None:
            return "the batch loop does not run from 0 to a constant"
        return _match(kernel, nest.body[0], sizes, nest.label or nest.var, (nest.var, nb))
    return _match(kernel, nest, sizes, None, None)


def _match(kernel: ir.Kernel, nest: ir.Stmt, sizes: dict[str, int], label: str | None,
           batch: tuple[str, int] | None) -> GemmNest | str:
    """`match_gemm` of the (i, j) nest, inside the batch loop (variable, trips) when given."""
    if not isinstance(nest, ir.For) or len(nest.body) != 1 or not isinstance(nest.body[0], ir.For):
        return "not a perfect (i, j) nest"
    bv = batch[0] if batch else None
    nb = batch[1] if batch else 1

    def split(x: ir.Access, need: bool) -> tuple[tuple[ir.Expr, ...], bool] | str:
        """(the [row, column] indices, batched?) of an access, the batch index peeled off."""
        ix = x.indices
        if bv is not None and len(ix) == 3 and _is_var(ix[0], bv):
            return ix[1:], True
        if len(ix) == 2 and not need and not (bv is not None and any(bv in ir.names_used((e,)) for e in ix)):
            return ix, False
        return (f"`{x.tensor}` is not indexed [{bv}, .., ..]" if bv is not None
                else f"`{x.tensor}` is not indexed with two loop variables")

    li, lj = nest, nest.body[0]
    m, n = _range0(li, sizes), _range0(lj, sizes)
    if m is None or n is None:
        return "the (i, j) loops do not run from 0 to a constant"
    body = lj.body
    if len(body) < 2 or not isinstance(body[0], ir.Assign) or not isinstance(body[1], ir.For):
        return "the (i, j) body is not `acc = 0; for k { acc += a * b }; ...`"
    ini, lk = body[0], body[1]
    i, j = li.var, lj.var
    t = ini.target
    if not (ini.op == "=" and _zero(ini.value) and isinstance(t, ir.Access)):
        return "the accumulator is not set to 0 at [i, j] first"
    ti = split(t, bv is not None)
    if isinstance(ti, str) or not (_is_var(ti[0][0], i) and _is_var(ti[0][1], j)):
        return "the accumulator is not set to 0 at " + (f"[{bv}, i, j]" if bv else "[i, j]") + " first"
    acc = kernel.tensor(t.tensor)
    if acc is None or acc.kind not in ("temp", "output") or acc.dtype not in ("f32", "i32"):
        return f"`{t.tensor}` is not an f32 (or i32) temp"
    in_dt = "f16" if acc.dtype == "f32" else "i8"
    conv = CONVERT[in_dt]
    kk = _range0(lk, sizes)
    if kk is None or len(lk.body) != 1 or not isinstance(lk.body[0], ir.Assign):
        return "the K loop does not run from 0 to a constant over one statement"
    st = lk.body[0]
    kv = lk.var
    v = st.value
    if not (st.op == "+=" and st.target == t and isinstance(v, ir.Binary) and v.op == "*"):
        return "the K loop is not `acc[i, j] += a * b`"
    ops = []
    for x in (v.lhs, v.rhs):
        if not (isinstance(x, ir.Call) and x.func == conv and len(x.args) == 1 and isinstance(x.args[0], ir.Access)):
            return f"the operands are not `{conv}(X[..])`"
        ops.append(x.args[0])
    a, b = ops
    found: list[tuple[tuple[ir.Expr, ...], bool]] = []
    for o in (a, b):
        d = kernel.tensor(o.tensor)
        sp = split(o, False)
        if isinstance(sp, str):
            return sp
        if d is None or d.kind != "input" or d.dtype != in_dt or d.rank != len(o.indices):
            return f"`{o.tensor}` is not a {'2-D or batched ' if bv else '2-D '}{in_dt} input (into {acc.dtype} `{acc.name}`)"
        if d.layout not in (None, "ND"):
            return f"`{o.tensor}` is {d.layout} in GM (Nd2Nz reads ND)"
        found.append(sp)
    (ai, ab), (bi, bb) = found
    if not (_is_var(ai[0], i) and _is_var(ai[1], kv)):
        a, b, (ai, ab), (bi, bb) = b, a, (bi, bb), (ai, ab)
    if not (_is_var(ai[0], i) and _is_var(ai[1], kv)):
        return f"no operand is indexed [{i}, {kv}]"
    if _is_var(bi[0], kv) and _is_var(bi[1], j):
        b_nk = False
        bshape: tuple[int, ...] = (kk, n)
    elif _is_var(bi[0], j) and _is_var(bi[1], kv):
        b_nk = True
        bshape = (n, kk)
    else:
        return f"`{b.tensor}` is not indexed [{kv}, {j}] or [{j}, {kv}]"
    if in_dt == "i8" and not b_nk:
        return (f"the int8 `{b.tensor}` is stored [K, N]: the cube's L0B takes int8 fractals with K innermost, and "
                "LoadData transposes 16-bit fractals only (store it [N, K], read as `B[j, k]`)")
    lead = (nb,) if bv else ()
    ashape = ((nb,) if ab else ()) + (m, kk)
    bshape = ((nb,) if bb else ()) + bshape
    if _shape(kernel.tensor(a.tensor), sizes) != ashape:  # type: ignore[arg-type]
        return f"`{a.tensor}` is not {list(ashape)}"
    if _shape(kernel.tensor(b.tensor), sizes) != bshape:  # type: ignore[arg-type]
        return f"`{b.tensor}` is not {list(bshape)}"
    if _shape(acc, sizes) != lead + (m, n):
        return f"`{acc.name}` is not {list(lead + (m, n))}"
    store, relu = None, False
    rest = body[2:]
    if len(rest) > 1:
        return "more than one statement after the K loop (`tile`/`gemm` split an epilogue off first)"
    if rest and acc.kind == "output":
        return f"the output `{acc.name}` accumulates and is then read (keep the accumulator a temp)"
    if rest:
        s = rest[0]
        g = kernel.tensor(s.target.tensor) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Access) else None
        if g is None or g.kind != "output" or _shape(g, sizes) != lead + (m, n) or s.op != "=":  # type: ignore[union-attr]
            return "the statement after the K loop is not a store into an " + ("[B, M, N]" if bv else "[M, N]") + " output"
        si = split(s.target, bv is not None)  # type: ignore[union-attr]
        if isinstance(si, str) or not (_is_var(si[0][0], i) and _is_var(si[0][1], j)):
            return f"the store is not at " + (f"[{bv}, {i}, {j}]" if bv else f"[{i}, {j}]")
        val = s.value  # type: ignore[union-attr]
        if in_dt == "i8" and g.dtype != "i32":
            return f"the store of the i32 accumulator into {g.dtype} `{g.name}` (the dequant epilogue is split off first)"
        if in_dt == "f16" and g.dtype == "f16" and isinstance(val, ir.Call) and val.func == "f16" and len(val.args) == 1:
            val = val.args[0]
        elif g.dtype != acc.dtype:
            return f"the store into {g.dtype} `{g.name}` is not `{g.dtype}(acc)`"
        if in_dt == "f16" and isinstance(val, ir.Call) and val.func == "max" and len(val.args) == 2 and any(_zero(x) for x in val.args):
            val = val.args[1] if _zero(val.args[0]) else val.args[0]
            relu = True
        if val != t:
            return "the store is not a (relu'd) conversion of the accumulator"
        store = g.name
    if bv is not None and not (ab or bb):
        return f"neither operand is indexed by the batch loop `{bv}`"
    return GemmNest(label or nest.label or nest.var, acc.name, a.tensor, b.tensor, b_nk, m, n, kk, store, relu,
                    nb, ab, bb, in_dt)


def choose_blocks(g: GemmNest, target: Target) -> Blocks:
    """The documented policy: the largest C tile that fits L0C (bn >= bm: B's rows are the
    long bursts), then the largest L0 K slice (at most 256) whose A and B slices fit L0A and
    L0B twice, then the L1 K block: a multiple of the slice whose A and B blocks fit L1
    twice, a multiple of 256 (512 B-aligned GM rows) when one fits, else the largest; all
    multiples of 16 (K of int8: of 32, the int8 fractal's 16 x 32), clamped to the sizes
    rounded up to 16 (32)."""
    cap = {s: int(target.scopes[s].usable.value) for s in ("l1", "l0a", "l0b", "l0c")}
    ks, es = g.c0, ir.DTYPE_BYTES[g.dtype]  # the K step and the operand bytes
    mp, np_, kp = _ceil16(g.m), _ceil16(g.n), -(-g.k // ks) * ks
    best = None
    for bm in range(FRACTAL, min(mp, 256) + 1, FRACTAL):
        for bn in range(FRACTAL, min(np_, 256) + 1, FRACTAL):
            if bm * bn * 4 > cap["l0c"] or bn < min(bm, np_):
                continue
            # tiles the work splits into, and how full they are (padding of the last tile)
            key = (bm * bn, bn, bm)
            if best is None or key > best[0]:
                best = (key, bm, bn)
    assert best is not None
    _, bm, bn = best
    k0 = ks
    for cand in range(ks, min(kp, 256) + 1, ks):
        if 2 * bm * cand * es <= cap["l0a"] and 2 * cand * bn * es <= cap["l0b"]:
            k0 = cand
    # the L1 block: multiples of k0 fitting L1 twice, 512 B-aligned rows (256 halves) first
    fits = [c for c in range(k0, -(-kp // k0) * k0 + 1, k0) if 2 * (bm + bn) * c * es <= cap["l1"]] or [k0]
    bk = max(fits, key=lambda c: (c % 256 == 0, c))
    return Blocks(bm, bn, bk, k0)


def check_blocks(bl: Blocks, target: Target, k_step: int = FRACTAL) -> str | None:
    """Why the blocks do not fit the chip (or None): what the capacity model proves too.
    `k_step`: the K fractal width (16, 32 for int8)."""
    for name, v, q in (("m", bl.m, FRACTAL), ("n", bl.n, FRACTAL), ("k", bl.k, k_step), ("k0", bl.k0, k_step)):
        if v % q:
            return f"block {name}={v} is not a multiple of {q}"
    if bl.k % bl.k0:
        return f"the L0 slice k0={bl.k0} does not divide the L1 block k={bl.k}"
    return None


def gemm_buffers(bl: Blocks, b_nk: bool = False, dtype: str = "f16") -> list[tuple[str, str, str, tuple[int, int], int, str]]:
    """(role, scope, dtype, shape, stages, position) of every buffer a gemm phase allocates
    (operands in `dtype`, the L0C accumulator in its accumulation dtype)."""
    bshape = (bl.n, bl.k) if b_nk else (bl.k, bl.n)
    b0shape = (bl.n, bl.k0) if b_nk else (bl.k0, bl.n)
    return [("A_l1", "l1", dtype, (bl.m, bl.k), 2, "A1"), ("B_l1", "l1", dtype, bshape, 2, "B1"),
            ("A_l0a", "l0a", dtype, (bl.m, bl.k0), 2, "A2"), ("B_l0b", "l0b", dtype, b0shape, 2, "B2"),
            ("C_l0c", "l0c", ACC_OF[dtype], (bl.m, bl.n), 1, "CO1")]


def blocks_of(nest: ir.For) -> Blocks | None:
    a = nest.annotation(ANNOTATION)
    if a is None:
        return None
    return Blocks(int(a.get("m") or 0), int(a.get("n") or 0), int(a.get("k") or 0), int(a.get("k0") or 0))


def annotate(nest: ir.For, bl: Blocks) -> ir.For:
    import dataclasses

    ann = ir.Annotation(ANNOTATION, (("m", bl.m), ("n", bl.n), ("k", bl.k), ("k0", bl.k0)), None)
    return dataclasses.replace(nest, annotations=tuple(a for a in nest.annotations if a.name != ANNOTATION) + (ann,))


def tiles_of(g: GemmNest, bl: Blocks) -> int:
    """C tiles of the launch: every batch's M x N in tiles of BM x BN."""
    return g.batch * -(-g.m // bl.m) * -(-g.n // bl.n)


def gemm_cores(g: GemmNest, bl: Blocks, target: Target) -> int:
    """Blocks of the launch: every AIC (the target table), at most one per C tile."""
    aic = target.aic_cores or target.cores
    return max(1, min(int(aic), tiles_of(g, bl)))


# --------------------------------------------------------------------------------------
# emission


def lower_gemm_phase(low: "Lowering", src: "_PhaseSrc", ph: Any, g: GemmNest, bl: Blocks, method: str) -> None:
    """Fill `ph` (buffers, the phase method `method`) with the blocked cube kernel of `g`."""
    names = low.names
    bufs = queue_buffers(low, g.label, gemm_buffers(bl, g.b_nk, g.dtype))
    it, at = CTYPE[g.dtype], CTYPE[g.acc_dtype]  # half / float, or int8_t / int32_t
    ph.buffers = list(bufs.values())
    a1, b1, a2, b2, c0 = (bufs[r] for r in ("A_l1", "B_l1", "A_l0a", "B_l0b", "C_l0c"))
    A, B = low.info[g.a].cname, low.info[g.b].cname
    out = low.info[g.store or g.acc]
    quant = out.dtype == "f16"
    where = f"{low.where(src.stmts[0])} `{g.label}`"
    dm = gemm_dims(low, src.stmts[0], g, bl, int(low.target.aic_cores or low.target.cores))
    low.nests.append(NestChoice(where, ("DataCopy(Nd2NzParams)",) + (("InitConstValue",) if dm.k_tail and not g.b_nk else ())
                                + ("LoadData", "Mmad", "Fixpipe")))
    v = names.fresh
    t, mi, ni, m0, n0, ml, nl, mp, np_ = (v(x) for x in ("tile", "mIdx", "nIdx", "m0", "n0", "mLen", "nLen", "mPad", "nPad"))
    kb, kl1, kl, kp = (v(x) for x in ("kb", "kL1", "kLen", "kPad"))
    fxp = v("fixParams")
    mt, nt, cores = dm.m_tiles, dm.n_tiles, dm.cores
    M, N, K = dm.m, dm.n, dm.k  # constants, or run-time sizes (gemm_runtime.py)
    L: list[tuple[int, str]] = []

    def w(d: int, s: str) -> None:
        L.append((d, s))

    for b in ph.buffers:
        w(0, f"pipe.InitBuffer({b.holder}, {'BUFFER_NUM' if b.depth == 2 else b.depth}, {b.nbytes});")
    batched = g.a_batched or g.b_batched
    # per batch (a batched matmul): the offsets of its A, B and C matrices in GM
    a_at = b_at = c_at = ""
    if batched:
        bi, tb = v("bIdx"), v("tIn")
        a_at = f"{bi} * {M * K} + " if g.a_batched else ""  # type: ignore[operator]  # batched: fixed dims
        b_at = f"{bi} * {K * N} + " if g.b_batched else ""  # type: ignore[operator]
        c_at = f"{bi} * {M * N} + "  # type: ignore[operator]
        w(0, f"// C[b] = A{'[b]' if g.a_batched else ''} @ B{'[b]' if g.b_batched else ''}{'ᵀ' if g.b_nk else ''} "
             f"({g.batch} batches of {M} x {N} x {K}) on the cube: {g.batch} x {mt} x {nt} C tiles of {bl.m} x {bl.n} "
             f"over {cores} AIC, L1 K blocks of {bl.k}, L0 K slices of {bl.k0}")
        w(0, f"for (int32_t {t} = workerIdx; {t} < {dm.tiles}; {t} += {cores}) {{")
        w(1, f"const int32_t {bi} = {t} / {mt * nt}, {tb} = {t} % {mt * nt};")  # type: ignore[operator]
        w(1, f"const int32_t {mi} = {tb} / {nt}, {ni} = {tb} % {nt};")
    else:
        w(0, f"// C = A @ B{'ᵀ' if g.b_nk else ''} ({M} x {N} x {K}) on the cube: {mt} x {nt} C tiles of {bl.m} x {bl.n} "
             f"over {cores} AIC, L1 K blocks of {bl.k}, L0 K slices of {bl.k0}")
        w(0, f"for (int32_t {t} = workerIdx; {t} < {dm.tiles}; {t} += {cores}) {{")
        w(1, f"const int32_t {mi} = {t} / {nt}, {ni} = {t} % {nt};")
    w(1, f"const int32_t {m0} = {mi} * {bl.m}, {n0} = {ni} * {bl.n};")
    w(1, f"const int32_t {ml} = ascx_min<int32_t>({bl.m}, {M} - {m0}), {nl} = ascx_min<int32_t>({bl.n}, {N} - {n0});")
    w(1, f"const int32_t {mp} = ({ml} + 15) / 16 * 16, {np_} = ({nl} + 15) / 16 * 16;")
    w(1, f"{c0.tensor} = {c0.holder}.AllocTensor<{at}>();")
    w(1, f"for (int32_t {kb} = 0; {kb} < {dm.k_blocks}; ++{kb}) {{")
    w(2, f"const int32_t {kl1} = {kb} * {bl.k}, {kl} = ascx_min<int32_t>({bl.k}, {K} - {kl1});")
    if not g.b_nk:
        w(2, f"const int32_t {kp} = ({kl} + 15) / 16 * 16;")
    # GM -> L1 (Nd2Nz): A rows m0.., columns kL1..; B rows kL1.. (or n0.. for Bᵀ)
    w(2, f"{a1.tensor} = {a1.holder}.AllocTensor<{it}>();")
    w(2, f"DataCopy({a1.tensor}, {A}[{a_at}{m0} * {K} + {kl1}], Nd2NzParams(1, {ml}, {kl}, 0, {K}, {mp}, 1, 0));")
    w(2, f"{a1.holder}.EnQue({a1.tensor});")
    w(2, f"{b1.tensor} = {b1.holder}.AllocTensor<{it}>();")
    if g.b_nk:
        w(2, f"DataCopy({b1.tensor}, {B}[{b_at}{n0} * {K} + {kl1}], Nd2NzParams(1, {nl}, {kl}, 0, {K}, {np_}, 1, 0));")
    else:
        w(2, f"DataCopy({b1.tensor}, {B}[{b_at}{kl1} * {N} + {n0}], Nd2NzParams(1, {kl}, {nl}, 0, {N}, {kp}, 1, 0));")
        if dm.k_tail:
            # the K tail: B's rows kLen..kPad of every column group are padding that the cube
            # multiplies (by A's zero-filled columns): zero them, stale Inf/NaN would give NaN
            w(2, f"if ({kl} < {kp}) {{")
            w(3, f"InitConstValue({b1.tensor}[{kl} * 16], InitConstValueParams<half>({np_} / 16, {kp} - {kl}, {kl}, half(0.0f)));")
            w(2, "}")
    w(2, f"{b1.holder}.EnQue({b1.tensor});")
    w(2, f"{a1.tensor} = {a1.holder}.DeQue<{it}>();")
    w(2, f"{b1.tensor} = {b1.holder}.DeQue<{it}>();")
    slice_loop(low, w, 2, bufs, k0=bl.k0, kl=kl, kp=kp, mp=mp, np_=np_, m=ml, n=nl,
               init=f"({kb} == 0 && {{ks}} == 0)", b_nk=g.b_nk, kc=g.c0, dtype=g.dtype)
    w(2, f"{a1.holder}.FreeTensor({a1.tensor});")
    w(2, f"{b1.holder}.FreeTensor({b1.tensor});")
    w(1, "}")
    w(1, f"{c0.holder}.EnQue({c0.tensor});")
    w(1, f"{c0.tensor} = {c0.holder}.DeQue<{at}>();")
    w(1, f"FixpipeParamsV220 {fxp}({nl}, {ml}, {mp}, {N}, {'true' if g.relu else 'false'});")
    if quant:
        w(1, f"{fxp}.quantPre = QuantMode_t::F322F16;")
    w(1, f"Fixpipe({out.cname}[{c_at}{m0} * {N} + {n0}], {c0.tensor}, {fxp});")
    w(1, f"{c0.holder}.FreeTensor({c0.tensor});")
    w(0, "}")
    finish_phase(low, src, ph, L, method)


def gemm_phase(kernel: ir.Kernel, nest: ir.Stmt) -> tuple[GemmNest, Blocks] | None:
    """The matmul and blocks of a `@gemm` nest, or None (not marked, or not a matmul)."""
    if not isinstance(nest, ir.For):
        return None
    bl = blocks_of(nest)
    if bl is None:
        return None
    g = match_gemm(kernel, nest)
    if isinstance(g, str):
        return None
    return g, bl
