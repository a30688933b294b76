"""A 2-D convolution nest marked `@conv(m, rows, c, k0)` -> an implicit-GEMM cube kernel.

The `conv_gemm` pass (passes/conv_gemm.py) marks a top-level nest (any names; stride 1,
no padding, any R x S filter)

    for n in 0..N { for f in 0..F { for y in 0..OH { for x in 0..OW {
      acc[n, f, y, x] = f32(bias[f])                              # or 0.0 (no bias)
      for c in 0..C { for r in 0..R { for s in 0..S {
        acc[n, f, y, x] += f32(X[n, c, y + r, x + s]) * f32(Wt[f, c, r, s]) } } }
      Y[n, f, y, x] = f16(acc[n, f, y, x])                        # or f16(max(acc, 0.0))
    } } } }

with X, Wt, Y in NCHW (the caller's layout), and the lowering emits it as an implicit GEMM
on the cube. Per image `n` the convolution is the matmul

    Y[n][f, p] = sum_k Wt[f, k] * Xcol[k, p],   k = (c, r, s) (K = C*R*S),  p = (y, x)

— the output-pixel axis is the GEMM's N and the filters its M, the orientation in which an
NCHW output is row-major (`Fixpipe` writes the C tile's rows, one per filter, as runs of
output pixels). `Wt` is already the [F, K] matrix (row-major, contiguous). `Xcol` is never
built in GM: its L1 block is **gathered from X during the GM -> L1 copy** (img2col on the
fly). For one channel block, one filter row `r` and one output row `yy` of the tile, rows
k = (c, r, s) of the block are `S` overlapping runs of `OW` pixels,
`X[n, c, y + r, s : s + OW]`, so one `DataCopy(Nd2NzParams)` with `srcDValue = 1` (row
`s` starts one element after row `s - 1`), `nValue = S`, `dValue = OW` and `ndNum` = the
channels of the block (`srcNdMatrixStride = H*W`, `dstNzMatrixStride = R*S` rows) writes
them straight into the Nz layout the cube reads. The rest is the gemm kernel
(transformer/lower/gemm.py):

* **C tiles** of `m` filters x `rows` whole output rows (L0C), one per (image, row block,
  filter block), dealt round-robin to every AIC; an output row takes `OWp = ceil16(OW)`
  columns of the tile (the padding columns are zero-filled by `Nd2Nz` and never stored);
* **L1 blocks** of `c` channels (K = c*R*S), A (`Wt`) and B (gathered X) in depth-2 queues
  (the gather of block kb+1 runs on MTE2 while the cube works on block kb);
* **L0 slices** of K = `k0`, `LoadData` into depth-2 L0A / L0B queues, one `Mmad` each;
* **bias** as the first product of the tile: a 16-wide K slice whose A column is `bias`
  (`Nd2Nz` of one column, the other 15 zero-filled) and whose B rows are ones
  (`InitConstValue`, once per core), so L0C starts at `bias[f]` (the cube's bias table is
  not modelled by the emulator);
* the tile's **store** by `Fixpipe` (Nz -> ND, `F322F16`, `reluEn`), one call per tile when
  `OW` is a multiple of 16, else one per output row (`dstStride = OH*OW`: NCHW).

B rows of the K padding (a block whose `c*R*S` is not a multiple of 16) are zero-filled in
L1 (`InitConstValue`), as A's padding columns are by `Nd2Nz`.

**The shifted path** (`shifted`: all channels in one block, C a multiple of 16, R*S <= 16):
the gather above reads every input element R*S times, one GM burst per (k, output row). This
path reads the tile's input rows once per filter *column* instead: K is ordered
(r, s, c) with 16 channels per K group, and B's L1 buffer holds S copies of the input rows
`X[n, :, y0 : y0 + rows + R - 1, s : s + OW]`, channel-major (Nz [C][OWp] per input row:
fractal = 16 channels x 16 pixels), one `Nd2Nz` per shift s (`ndNum` = input rows,
`nValue` = C, `srcDValue = H*W`). The B row group (r, s, c1) for output row yy is then the
fractals of copy s, input row yy + r, channel group c1 — one transposing `LoadData` per row
group, the fractals `C/16` apart. A must be ordered the same way: `Wp[f, r, s, c]`, which
no DMA makes from `Wt[f, c, r, s]` (the channels are R*S apart). The cube does it, once,
in a prologue (`_permute_weights`): an identity I16 from `InitConstValue` block patterns,
times the Nz tile of Wt's rows (f, c) x (r*S + s) read *without* transpose (B = Wtᵀ), and
`Fixpipe` (ndNum = filters) writes Wp to the GM workspace; each AIC permutes F / blockDim
filters, a `SyncAll` publishes them, and every AIC keeps its filter block of Wp in L1 for
all its tiles.

Size: about 670 lines: the lowering of one kernel. Its two img2col paths (gather and
shifted copies) share the buffers, the C-tile loop, the weight permutation and the
epilogue; a module per path would duplicate those or pass them back and forth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import ir
from ..targets import Target
from .gemm import FRACTAL, _ceil16, _is_var, _range0, _shape, _zero
from .cube_emit import finish_phase, queue_buffers, slice_loop
from .plan import NestChoice

if TYPE_CHECKING:
    from .lower import Lowering, _PhaseSrc

ANNOTATION = "conv"
MAX_REPEAT = 255  # LoadData2DParams.repeatTimes is 8-bit: a tile row of fractals is at most 255


@dataclass(frozen=True)
class ConvNest:
    """What a convolution nest computes, read off the IR (`match_conv`)."""

    label: str
    acc: str  # the f32 accumulator temp [N, F, OH, OW]
    x: str  # X[N, C, H, W] (GM, f16)
    w: str  # Wt[F, C, R, S] (GM, f16)
    bias: str | None  # bias[F] (f16) or None (the accumulator starts at 0)
    y: str  # Y[N, F, OH, OW] (GM, f16)
    relu: bool
    n: int
    c: int
    h: int
    wd: int  # W
    f: int
    r: int
    s: int
    oh: int
    ow: int

    @property
    def k(self) -> int:
        return self.c * self.r * self.s

    @property
    def owp(self) -> int:
        return _ceil16(self.ow)


@dataclass(frozen=True)
class ConvBlocks:
    m: int  # filters per C tile (multiple of 16)
    rows: int  # output rows per C tile
    c: int  # channels per L1 K block
    k0: int  # L0 K slice (multiple of 16)


def _sum_of(e: ir.Expr, a: str, b: str) -> bool:
    """`e` is `a + b` (either order)."""
    return (isinstance(e, ir.Binary) and e.op == "+"
            and ((_is_var(e.lhs, a) and _is_var(e.rhs, b)) or (_is_var(e.lhs, b) and _is_var(e.rhs, a))))


def _perfect(nest: ir.Stmt, depth: int) -> list[ir.For] | None:
    """The `depth` loops of a perfect nest (each body one loop), or None."""
    loops: list[ir.For] = []
    s: ir.Stmt = nest
    for d in range(depth):
        if not isinstance(s, ir.For):
            return None
        loops.append(s)
        if d < depth - 1:
            if len(s.body) != 1:
                return None
            s = s.body[0]
    return loops


def match_conv(kernel: ir.Kernel, nest: ir.Stmt) -> ConvNest | str:
    """The convolution `nest` computes (see the module docstring), or why it is not one."""
    sizes = kernel.size_values()
    outer = _perfect(nest, 4)
    if outer is None:
        return "not a perfect 4-deep (n, f, y, x) nest"
    ext = [_range0(lp, sizes) for lp in outer]
    if any(e is None for e in ext):
        return "the (n, f, y, x) loops do not run from 0 to a constant"
    body = outer[3].body
    if len(body) != 3 or not isinstance(body[0], ir.Assign) or not isinstance(body[1], ir.For) \
            or not isinstance(body[2], ir.Assign):
        return "the pixel body is not `acc = bias; for c { for r { for s { acc += x * w } } }; Y = f16(acc)`"
    ini, red, store = body
    t = ini.target
    if not (isinstance(t, ir.Access) and len(t.indices) == 4 and all(isinstance(i, ir.Name) for i in t.indices)):
        return "the accumulator is not indexed by four loop variables"
    nv, fv, yv, xv = (i.name for i in t.indices)  # type: ignore[union-attr]
    if [lp.var for lp in outer] != [nv, fv, yv, xv]:
        return "the accumulator is not indexed [n, f, y, x] by the four loops in order"
    nn, ff, oh, ow = ext
    acc = kernel.tensor(t.tensor)
    if acc is None or acc.kind != "temp" or acc.dtype != "f32":
        return f"`{t.tensor}` is not an f32 temp"
    bias = None
    v = ini.value
    if ini.op != "=":
        return "the accumulator is not initialised with `=`"
    if isinstance(v, ir.Call) and v.func == "f32" and len(v.args) == 1 and isinstance(v.args[0], ir.Access):
        b = v.args[0]
        bd = kernel.tensor(b.tensor)
        if bd is None or bd.kind != "input" or bd.dtype != "f16" or bd.rank != 1 or len(b.indices) != 1 \
                or not _is_var(b.indices[0], fv):
            return "the initial value is not `f32(bias[f])` of a 1-D f16 input"
        bias = b.tensor
    elif not _zero(v):
        return "the accumulator does not start at `f32(bias[f])` or 0"
    rl = _perfect(red, 3)
    if rl is None or len(rl[2].body) != 1 or not isinstance(rl[2].body[0], ir.Assign):
        return "the reduction is not a perfect 3-deep (c, r, s) nest over one statement"
    rext = [_range0(lp, sizes) for lp in rl]
    if any(e is None for e in rext):
        return "the reduction loops do not run from 0 to a constant"
    st = rl[2].body[0]
    if not (st.op == "+=" and st.target == t and isinstance(st.value, ir.Binary) and st.value.op == "*"):
        return "the reduction is not `acc[n, f, y, x] += a * b`"
    ops = []
    for o in (st.value.lhs, st.value.rhs):
        if not (isinstance(o, ir.Call) and o.func == "f32" and len(o.args) == 1 and isinstance(o.args[0], ir.Access)):
            return "the operands are not `f32(T[..])`"
        d = kernel.tensor(o.args[0].tensor)
        if d is None or d.kind != "input" or d.dtype != "f16" or d.rank != 4 or len(o.args[0].indices) != 4:
            return f"`{o.args[0].tensor}` is not a 4-D f16 input"
        if d.layout not in (None, "NCHW"):
            return f"`{d.name}` is {d.layout} in GM (the lowering reads NCHW)"
        ops.append(o.args[0])
    xa, wa = ops
    if isinstance(xa.indices[2], ir.Name):
        xa, wa = wa, xa
    rvars = [lp.var for lp in rl]
    # the filter operand names the reduction variables: Wt[f, c, r, s]
    if not (_is_var(wa.indices[0], fv) and all(isinstance(i, ir.Name) for i in wa.indices[1:])):
        return "no operand is indexed [f, c, r, s]"
    cv, rv, sv = (i.name for i in wa.indices[1:])  # type: ignore[union-attr]
    if sorted(rvars) != sorted([cv, rv, sv]) or len({cv, rv, sv}) != 3:
        return "the filter is not indexed by the three reduction variables"
    if not (_is_var(xa.indices[0], nv) and _is_var(xa.indices[1], cv) and _sum_of(xa.indices[2], yv, rv)
            and _sum_of(xa.indices[3], xv, sv)):
        return f"the input is not indexed [{nv}, {cv}, {yv} + {rv}, {xv} + {sv}] (stride 1, no padding)"
    ext_of = dict(zip(rvars, rext))
    cc, rr, ss = ext_of[cv], ext_of[rv], ext_of[sv]
    xshape = _shape(kernel.tensor(xa.tensor), sizes)  # type: ignore[arg-type]
    if xshape[0] != nn or xshape[1] != cc or xshape[2] < oh + rr - 1 or xshape[3] < ow + ss - 1:  # type: ignore[operator]
        return f"`{xa.tensor}` {list(xshape)} does not hold [{nn}, {cc}, {oh} + {rr} - 1, {ow} + {ss} - 1]"
    if _shape(kernel.tensor(wa.tensor), sizes) != (ff, cc, rr, ss):  # type: ignore[arg-type]
        return f"`{wa.tensor}` is not [{ff}, {cc}, {rr}, {ss}]"
    if bias is not None and _shape(kernel.tensor(bias), sizes) != (ff,):  # type: ignore[arg-type]
        return f"`{bias}` is not [{ff}]"
    if _shape(acc, sizes) != (nn, ff, oh, ow):
        return f"`{acc.name}` is not [{nn}, {ff}, {oh}, {ow}]"
    g = kernel.tensor(store.target.tensor) if isinstance(store.target, ir.Access) else None
    if g is None or g.kind != "output" or g.dtype != "f16" or store.op != "=" or _shape(g, sizes) != (nn, ff, oh, ow):
        return "the last statement is not a store into an f16 [N, F, OH, OW] output"
    if g.layout not in (None, "NCHW"):
        return f"`{g.name}` is {g.layout} in GM (Fixpipe writes NCHW)"
    if store.target.indices != t.indices:  # type: ignore[union-attr]
        return "the store is not at [n, f, y, x]"
    val = store.value
    if not (isinstance(val, ir.Call) and val.func == "f16" and len(val.args) == 1):
        return "the store is not `f16(acc)`"
    val = val.args[0]
    relu = False
    if isinstance(val, ir.Call) and val.func == "max" and len(val.args) == 2 and any(_zero(x) for x in val.args):
        val = val.args[1] if _zero(val.args[0]) else val.args[0]
        relu = True
    if val != t:
        return "the store is not a (relu'd) conversion of the accumulator"
    return ConvNest(nest.label or nest.var, acc.name, xa.tensor, wa.tensor, bias, g.name, relu,  # type: ignore[union-attr]
                    nn, cc, xshape[2], xshape[3], ff, rr, ss, oh, ow)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# blocks, buffers, cores


def _bn(cv: ConvNest, rows: int) -> int:
    return rows * cv.owp


def _hrows(cv: ConvNest, bl: ConvBlocks) -> int:
    """Input rows a tile of `rows` output rows reads."""
    return bl.rows + cv.r - 1


def _wchunk(cv: ConvNest, bl: ConvBlocks) -> int:
    """Filters per step of the weight permutation (shifted path): their C x R*S rows fit the
    L1 buffer, their C columns fit L0B, L0C (16 rows) and one LoadData (255 fractals)."""
    bn = _bn(cv, bl.rows)
    lim = min(cv.s * _hrows(cv, bl) * cv.owp, bl.k0 * bn // FRACTAL, bl.m * bn // FRACTAL, MAX_REPEAT * FRACTAL)
    return lim // cv.c


def shifted(cv: ConvNest, bl: ConvBlocks) -> bool:
    """Whether the blocks take the shifted-copy path (module docstring): all channels in one
    block, C a multiple of 16, R*S <= 16, the copy strides within 16 bits, and queues large
    enough for the weight-permutation prologue (two 16 x 256 patterns in L1, L0A and L0B)."""
    if bl.c != cv.c or cv.c % FRACTAL or cv.r * cv.s > FRACTAL:
        return False
    bn = _bn(cv, bl.rows)
    return (cv.h * cv.wd <= 0xFFFF and cv.owp // FRACTAL * cv.c * FRACTAL <= 0xFFFF and cv.k <= 0xFFFF
            and bl.m * bl.k0 >= 4096 and bl.k0 * bn >= 4096 and cv.s * _hrows(cv, bl) * cv.c * cv.owp >= 8192
            and _wchunk(cv, bl) >= 1)


def conv_buffers(cv: ConvNest, bl: ConvBlocks) -> list[tuple[str, str, str, tuple[int, int], int, str]]:
    """(role, scope, dtype, shape, stages, position) of every buffer a conv phase allocates.
    Shifted path: A (the permuted filters, [m, R*S*C]) stays in L1 across tiles, B holds the
    S shifted copies of the tile's input rows (channel-major), double-buffered. Gather path:
    A and B blocks of c channels, double-buffered."""
    bn, kp = _bn(cv, bl.rows), _ceil16(bl.c * cv.r * cv.s)
    if shifted(cv, bl):
        ab = [("A_l1", "l1", "f16", (bl.m, cv.k), 1, "A1"),
              ("B_l1", "l1", "f16", (cv.s * _hrows(cv, bl) * cv.c, cv.owp), 2, "B1")]
    else:
        ab = [("A_l1", "l1", "f16", (bl.m, kp), 2, "A1"), ("B_l1", "l1", "f16", (kp, bn), 2, "B1")]
    out = ab + [("A_l0a", "l0a", "f16", (bl.m, bl.k0), 2, "A2"), ("B_l0b", "l0b", "f16", (bl.k0, bn), 2, "B2"),
                ("C_l0c", "l0c", "f32", (bl.m, bn), 1, "CO1")]
    if cv.bias is not None:
        out += [("bias_l1", "l1", "f16", (bl.m, FRACTAL), 1, "A1"), ("ones_l1", "l1", "f16", (FRACTAL, bn), 1, "B1")]
    return out


def conv_workspace(cv: ConvNest, bl: ConvBlocks, target: Target) -> list[tuple[str, str, int]]:
    """(role, dtype, elements) of the GM workspace: the shifted path's identity (one 16 x 16
    per AIC) and permuted filters Wp[F, R, S, C]; none for the gather path."""
    if not shifted(cv, bl):
        return []
    return [("eye", "f16", conv_cores(cv, bl, target) * 256), ("wp", "f16", cv.f * cv.k)]


def _need(cv: ConvNest, bl: ConvBlocks) -> dict[str, int]:
    need: dict[str, int] = {}
    for _, sc, dt, shp, st, _ in conv_buffers(cv, bl):
        need[sc] = need.get(sc, 0) + shp[0] * shp[1] * ir.DTYPE_BYTES[dt] * st
    return need


@dataclass(frozen=True)
class BlockProblem:
    """Why given blocks are refused: a bad value (`param`, `value`) or a scope they overflow."""

    message: str
    param: str = ""
    value: int = 0
    scope: str | None = None
    need: int = 0
    budget: int = 0


def check_conv_blocks(cv: ConvNest, bl: ConvBlocks, target: Target) -> BlockProblem | None:
    """Why the blocks are wrong, or None when they fit (what the capacity model proves too)."""
    for name, v in (("m", bl.m), ("k0", bl.k0)):
        if v < FRACTAL or v % FRACTAL:
            return BlockProblem(f"block {name}={v} is not a positive multiple of 16", name, v)
    for name, v in (("rows", bl.rows), ("c", bl.c)):
        if v < 1:
            return BlockProblem(f"block {name}={v} must be at least 1", name, v)
    if _bn(cv, bl.rows) // FRACTAL > MAX_REPEAT:
        return BlockProblem(f"a tile of {bl.rows} rows x {cv.owp} columns is more than {MAX_REPEAT} fractals wide "
                            "(LoadData repeatTimes is 8-bit)", "rows", bl.rows)
    if bl.m // FRACTAL > MAX_REPEAT:
        return BlockProblem(f"m={bl.m} is more than {MAX_REPEAT} fractals (LoadData repeatTimes is 8-bit)", "m", bl.m)
    for sc, n in _need(cv, bl).items():
        cap = int(target.scopes[sc].usable.value)
        if n > cap:
            return BlockProblem(f"blocks m={bl.m} rows={bl.rows} c={bl.c} k0={bl.k0} need {n} B of {sc.upper()} "
                                f"({cap} B usable on {target.name})", scope=sc, need=n, budget=cap)
    return None


def choose_conv_blocks(cv: ConvNest, target: Target) -> ConvBlocks:
    """The documented policy: m = the filters rounded up to 16 (at most 128); the most output
    rows whose f32 C tile fits L0C and is at most 256 columns wide (one row when a row is wider;
    as gemm's tiles: the L0 slices stay deep); the largest L0 K slice (<= 256) whose slices fit
    L0A and L0B twice; then all channels in one block when that takes the shifted path and
    fits, else the most channels whose A and B gather blocks fit L1 twice. Raises ValueError
    when not even the smallest blocks fit (an output row wider than L0C)."""
    cap = {s: int(target.scopes[s].usable.value) for s in ("l1", "l0a", "l0b", "l0c")}
    m = min(_ceil16(cv.f), 128)
    rows = 0
    for cand in range(1, cv.oh + 1):
        bn = _bn(cv, cand)
        if m * bn * 4 <= cap["l0c"] and bn // FRACTAL <= MAX_REPEAT and (cand == 1 or bn <= 256):
            rows = cand
    while rows == 0 and m > FRACTAL:
        m -= FRACTAL
        rows = 1 if m * cv.owp * 4 <= cap["l0c"] and cv.owp // FRACTAL <= MAX_REPEAT else 0
    if rows == 0:
        raise ValueError(f"an output row of {cv.ow} pixels does not fit L0C ({cap['l0c']} B) with 16 filters")
    bn = _bn(cv, rows)
    kmax = _ceil16(cv.k)
    k0 = FRACTAL
    for cand in range(FRACTAL, min(kmax, 256) + 1, FRACTAL):
        if 2 * m * cand * 2 <= cap["l0a"] and 2 * cand * bn * 2 <= cap["l0b"]:
            k0 = cand
    whole = ConvBlocks(m, rows, cv.c, k0)
    if shifted(cv, whole) and check_conv_blocks(cv, whole, target) is None:
        return whole
    c = 1
    for cand in range(1, cv.c + 1):
        bl = ConvBlocks(m, rows, cand, k0)
        if not shifted(cv, bl) and check_conv_blocks(cv, bl, target) is None:
            c = cand
    return ConvBlocks(m, rows, c, k0)


def conv_tiles(cv: ConvNest, bl: ConvBlocks) -> int:
    return cv.n * -(-cv.oh // bl.rows) * -(-cv.f // bl.m)


def conv_cores(cv: ConvNest, bl: ConvBlocks, target: Target) -> int:
    """Blocks of the launch: every AIC (the target table), at most one per C tile."""
    aic = target.aic_cores or target.cores
    return max(1, min(int(aic), conv_tiles(cv, bl)))


def blocks_of(nest: ir.For) -> ConvBlocks | None:
    a = nest.annotation(ANNOTATION)
    if a is None:
        return None
    return ConvBlocks(int(a.get("m") or 0), int(a.get("rows") or 0), int(a.get("c") or 0), int(a.get("k0") or 0))


def annotate(nest: ir.For, bl: ConvBlocks) -> ir.For:
    import dataclasses

    ann = ir.Annotation(ANNOTATION, (("m", bl.m), ("rows", bl.rows), ("c", bl.c), ("k0", bl.k0)), None)
    return dataclasses.replace(nest, annotations=tuple(a for a in nest.annotations if a.name != ANNOTATION) + (ann,))


def conv_phase(kernel: ir.Kernel, nest: ir.Stmt) -> tuple[ConvNest, ConvBlocks] | None:
    """The convolution and blocks of a `@conv` nest, or None (not marked, or not a convolution)."""
    if not isinstance(nest, ir.For):
        return None
    bl = blocks_of(nest)
    if bl is None:
        return None
    cv = match_conv(kernel, nest)
    if isinstance(cv, str):
        return None
    return cv, bl


# --------------------------------------------------------------------------------------
# emission


def lower_conv_phase(low: "Lowering", src: "_PhaseSrc", ph: Any, cv: ConvNest, bl: ConvBlocks, method: str) -> None:
    """Fill `ph` (buffers, the phase method `method`) with the implicit-GEMM cube kernel of `cv`."""
    names = low.names
    bufs = queue_buffers(low, cv.label, conv_buffers(cv, bl))
    ph.buffers = list(bufs.values())
    a1, b1, a2, b2, c0 = (bufs[r] for r in ("A_l1", "B_l1", "A_l0a", "B_l0b", "C_l0c"))
    X, Wt, Y = (low.info[t].cname for t in (cv.x, cv.w, cv.y))
    where = f"{low.where(src.stmts[0])} `{cv.label}`"
    instrs = ("DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe")
    low.nests.append(NestChoice(where, instrs + (("InitConstValue",) if cv.bias or _k_tail(cv, bl) else ())))
    v = names.fresh
    t, fi, yi, ni, f0, y0, fl, yl, fp, nl = (v(x) for x in ("tile", "fIdx", "yIdx", "img", "f0", "y0", "fLen", "yLen",
                                                              "fPad", "nLen"))
    cb, cs, cl, kl, kp, r, yy, rr = (v(x) for x in ("cb", "c0", "cLen", "kLen", "kPad", "ch", "yy", "fr"))
    fxp = v("fixParams")
    R, S, C, H, W, F, OH, OW = cv.r, cv.s, cv.c, cv.h, cv.wd, cv.f, cv.oh, cv.ow
    RS, K, OWP = R * S, cv.k, cv.owp
    ntf, nty = -(-F // bl.m), -(-OH // bl.rows)
    ncb = -(-C // bl.c)
    cores = conv_cores(cv, bl, low.target)
    bn = _bn(cv, bl.rows)
    fast, hrows, G = shifted(cv, bl), _hrows(cv, bl), OWP // FRACTAL
    L: list[tuple[int, str]] = []

    def w(d: int, s: str) -> None:
        L.append((d, s))

    for b in ph.buffers:
        w(0, f"pipe.InitBuffer({b.holder}, {'BUFFER_NUM' if b.depth == 2 else b.depth}, {b.nbytes});")
    w(0, f"// conv2d {cv.n}x{C}x{H}x{W} * {F}x{C}x{R}x{S} as an implicit GEMM on the cube: per image "
         f"Y[f, p] = Wt[f, (c,r,s)] @ img2col(X)[(c,r,s), p]; {cv.n * nty * ntf} C tiles of {bl.m} filters x "
         f"{bl.rows} output rows over {cores} AIC, L1 K blocks of {bl.c} channels, L0 K slices of {bl.k0}")
    if cv.bias:
        ones = bufs["ones_l1"]
        w(0, f"{ones.tensor} = {ones.holder}.AllocTensor<half>();")
        w(0, f"InitConstValue({ones.tensor}, InitConstValueParams<half>(1, {bn}, 0, half(1.0f)));  // B of the bias slice: ones")
        w(0, f"{ones.holder}.EnQue({ones.tensor});")
        w(0, f"{ones.tensor} = {ones.holder}.DeQue<half>();")
        bF = v("bF")
        w(0, f"int32_t {bF} = -1;  // the filter block whose bias column is in {bufs['bias_l1'].tensor}")
    if fast:
        _permute_weights(low, w, bufs, cv, bl, src.index, cores)
        aF = v("aF")
        w(0, f"int32_t {aF} = -1;  // the filter block whose permuted weights are in {a1.tensor}")
    w(0, f"for (int32_t {t} = workerIdx; {t} < {cv.n * nty * ntf}; {t} += {cores}) {{")
    w(1, f"const int32_t {fi} = {t} % {ntf}, {yi} = {t} / {ntf} % {nty}, {ni} = {t} / {ntf * nty};")
    w(1, f"const int32_t {f0} = {fi} * {bl.m}, {y0} = {yi} * {bl.rows};")
    w(1, f"const int32_t {fl} = ascx_min<int32_t>({bl.m}, {F} - {f0}), {yl} = ascx_min<int32_t>({bl.rows}, {OH} - {y0});")
    w(1, f"const int32_t {fp} = ({fl} + 15) / 16 * 16, {nl} = {yl} * {OWP};")
    if fast:  # A: the block's permuted filters [fLen, R*S*C], loaded once per filter block
        Wp = low.info[_ws_key(src.index, "wp")].cname
        w(1, f"if ({fi} != {aF}) {{")
        w(2, f"if ({aF} >= 0) {a1.holder}.FreeTensor({a1.tensor});")
        w(2, f"{a1.tensor} = {a1.holder}.AllocTensor<half>();")
        w(2, f"DataCopy({a1.tensor}, {Wp}[{f0} * {K}], Nd2NzParams(1, {fl}, {K}, 0, {K}, {fp}, 1, 0));")
        w(2, f"{a1.holder}.EnQue({a1.tensor});")
        w(2, f"{a1.tensor} = {a1.holder}.DeQue<half>();")
        w(2, f"{aF} = {fi};")
        w(1, "}")
    w(1, f"{c0.tensor} = {c0.holder}.AllocTensor<float>();")
    if cv.bias:
        bl1, ones = bufs["bias_l1"], bufs["ones_l1"]
        B = low.info[cv.bias].cname
        w(1, "// bias: L0C starts at bias[f] (A column 0 = bias, the other 15 zero-filled; B rows = ones),")
        w(1, "// the column loaded once per filter block")
        w(1, f"if ({fi} != {bF}) {{")
        w(2, f"if ({bF} >= 0) {bl1.holder}.FreeTensor({bl1.tensor});")
        w(2, f"{bl1.tensor} = {bl1.holder}.AllocTensor<half>();")
        w(2, f"DataCopy({bl1.tensor}, {B}[{f0}], Nd2NzParams(1, {fl}, 1, 0, 1, {fp}, 1, 0));")
        w(2, f"{bl1.holder}.EnQue({bl1.tensor});")
        w(2, f"{bl1.tensor} = {bl1.holder}.DeQue<half>();")
        w(2, f"{bF} = {fi};")
        w(1, "}")
        w(1, f"{a2.tensor} = {a2.holder}.AllocTensor<half>();")
        w(1, f"LoadData({a2.tensor}, {bl1.tensor}, LoadData2DParams(0, {fp} / 16, 1, 0, 0, false, 0));")
        w(1, f"{a2.holder}.EnQue({a2.tensor});")
        w(1, f"{b2.tensor} = {b2.holder}.AllocTensor<half>();")
        w(1, f"LoadData({b2.tensor}, {ones.tensor}, LoadData2DParams(0, {nl} / 16, 1, 0, 0, true, 0));")
        w(1, f"{b2.holder}.EnQue({b2.tensor});")
        w(1, f"{a2.tensor} = {a2.holder}.DeQue<half>();")
        w(1, f"{b2.tensor} = {b2.holder}.DeQue<half>();")
        w(1, f"Mmad({c0.tensor}, {a2.tensor}, {b2.tensor}, MmadParams({fl}, {nl}, 16, false, 0, false, false, false));")
        w(1, f"{a2.holder}.FreeTensor({a2.tensor});")
        w(1, f"{b2.holder}.FreeTensor({b2.tensor});")
    if fast:  # the tile's input rows, S shifted copies, channel-major (one Nd2Nz per shift)
        w(1, f"{b1.tensor} = {b1.holder}.AllocTensor<half>();")
        w(1, f"for (int32_t {rr} = 0; {rr} < {S}; ++{rr}) {{")
        w(2, f"DataCopy({b1.tensor}[{rr} * {hrows * G * C * FRACTAL}], {X}[({ni} * {C * H} + {y0}) * {W} + {rr}], "
             f"Nd2NzParams({yl} + {R - 1}, {C}, {OW}, {W}, {H * W}, {C}, 1, {G * C * FRACTAL}));")
        w(1, "}")
        w(1, f"{b1.holder}.EnQue({b1.tensor});")
        w(1, f"{b1.tensor} = {b1.holder}.DeQue<half>();")
        C1 = C // FRACTAL

        def shifted_src(kg: str) -> tuple[str, str]:  # row group kg = ((r*S + s)*C1 + c1): copy s, input row yy + r, channels c1
            return (f"{b1.tensor}[((({kg}) / {C1} % {S} * {hrows} + ({kg}) / {S * C1}) * {G * C1} + ({kg}) % {C1}) * 256]",
                    str(C1))

        slice_loop(low, w, 1, bufs, k0=bl.k0, kl=str(K), kp=str(K), mp=fp, np_=nl, m=fl, n=nl,
                   init="false" if cv.bias else "({ks} == 0)", b_src=shifted_src)
        w(1, f"{b1.holder}.FreeTensor({b1.tensor});")
    else:
        w(1, f"for (int32_t {cb} = 0; {cb} < {ncb}; ++{cb}) {{")
        w(2, f"const int32_t {cs} = {cb} * {bl.c}, {cl} = ascx_min<int32_t>({bl.c}, {C} - {cs});")
        w(2, f"const int32_t {kl} = {cl} * {RS}, {kp} = ({kl} + 15) / 16 * 16;")
        # A: the filters' rows f0.., columns (c0.., r, s): one Nd2Nz (Wt is [F, C*R*S] row-major)
        w(2, f"{a1.tensor} = {a1.holder}.AllocTensor<half>();")
        w(2, f"DataCopy({a1.tensor}, {Wt}[{f0} * {K} + {cs} * {RS}], Nd2NzParams(1, {fl}, {kl}, 0, {K}, {fp}, 1, 0));")
        w(2, f"{a1.holder}.EnQue({a1.tensor});")
        # B: img2col on the fly, one Nd2Nz per (output row, filter row) over the block's channels
        w(2, f"{b1.tensor} = {b1.holder}.AllocTensor<half>();")
        if _k_tail(cv, bl):
            # the K padding rows of every column group: the cube multiplies whole fractals
            w(2, f"if ({kl} < {kp}) {{")
            w(3, f"InitConstValue({b1.tensor}[{kl} * 16], InitConstValueParams<half>({nl} / 16, {kp} - {kl}, {kl}, half(0.0f)));")
            w(2, "}")
        chan_batch = H * W <= 0xFFFF and RS * FRACTAL <= 0xFFFF
        w(2, f"for (int32_t {yy} = 0; {yy} < {yl}; ++{yy}) {{")
        w(3, f"for (int32_t {rr} = 0; {rr} < {R}; ++{rr}) {{")
        dst = f"{b1.tensor}[{yy} * {OWP // FRACTAL} * {kp} * 16 + {rr} * {S * FRACTAL}"
        srcrow = f"(({ni} * {C} + {cs}) * {H} + {y0} + {yy} + {rr}) * {W}"
        if chan_batch:
            w(4, f"DataCopy({dst}], {X}[{srcrow}], Nd2NzParams({cl}, {S}, {OW}, {H * W}, 1, {kp}, 1, {RS * FRACTAL}));")
        else:
            w(4, f"for (int32_t {r} = 0; {r} < {cl}; ++{r}) {{")
            w(5, f"DataCopy({dst} + {r} * {RS * FRACTAL}], {X}[{srcrow} + {r} * {H * W}], Nd2NzParams(1, {S}, {OW}, 0, 1, {kp}, 1, 0));")
            w(4, "}")
        w(3, "}")
        w(2, "}")
        w(2, f"{b1.holder}.EnQue({b1.tensor});")
        w(2, f"{a1.tensor} = {a1.holder}.DeQue<half>();")
        w(2, f"{b1.tensor} = {b1.holder}.DeQue<half>();")
        slice_loop(low, w, 2, bufs, k0=bl.k0, kl=kl, kp=kp, mp=fp, np_=nl, m=fl, n=nl,
                   init="false" if cv.bias else f"({cb} == 0 && {{ks}} == 0)")
        w(2, f"{a1.holder}.FreeTensor({a1.tensor});")
        w(2, f"{b1.holder}.FreeTensor({b1.tensor});")
        w(1, "}")
    w(1, f"{c0.holder}.EnQue({c0.tensor});")
    w(1, f"{c0.tensor} = {c0.holder}.DeQue<float>();")
    out = f"({ni} * {F} + {f0}) * {OH * OW} + ({y0}"
    relu = "true" if cv.relu else "false"
    if OWP == OW:  # the tile's rows are contiguous in Y: one store
        w(1, f"FixpipeParamsV220 {fxp}({yl} * {OW}, {fl}, {fp}, {OH * OW}, {relu});")
        w(1, f"{fxp}.quantPre = QuantMode_t::F322F16;")
        w(1, f"Fixpipe({Y}[{out}) * {OW}], {c0.tensor}, {fxp});")
    else:  # one store per output row (its OWp - OW padding columns are not written)
        w(1, f"FixpipeParamsV220 {fxp}({OW}, {fl}, {fp}, {OH * OW}, {relu});")
        w(1, f"{fxp}.quantPre = QuantMode_t::F322F16;")
        w(1, f"for (int32_t {yy} = 0; {yy} < {yl}; ++{yy}) {{")
        w(2, f"Fixpipe({Y}[{out} + {yy}) * {OW}], {c0.tensor}[{yy} * {OWP} * {fp}], {fxp});")
        w(1, "}")
    w(1, f"{c0.holder}.FreeTensor({c0.tensor});")
    w(0, "}")
    if fast:
        w(0, f"if ({aF} >= 0) {a1.holder}.FreeTensor({a1.tensor});")
    if cv.bias:
        ones, bl1 = bufs["ones_l1"], bufs["bias_l1"]
        w(0, f"if ({bF} >= 0) {bl1.holder}.FreeTensor({bl1.tensor});")
        w(0, f"{ones.holder}.FreeTensor({ones.tensor});")
    finish_phase(low, src, ph, L, method)


def _ws_key(phase: int, role: str) -> str:
    """The lowering's key of a conv phase's workspace slot (lower.py registers them)."""
    return f"\0conv{phase}_{role}"


def _permute_weights(low: "Lowering", w: Any, bufs: dict[str, Any], cv: ConvNest, bl: ConvBlocks, phase: int,
                     cores: int) -> None:
    """The shifted path's prologue: Wp[f, r, s, c] = Wt[f, c, r, s] into the GM workspace, on
    the cube. An identity I16 comes from block patterns (L1 blocks are 32 B: A[m, k] = 1 on
    the k-group m, B[k, n] = 1/16 on the k-group n, so A x B over 16 groups is I16 exactly),
    through the workspace back into L0A. Then each AIC takes F / blockDim filters: their
    Wt rows (c, r*S + s) in Nz, read by a LoadData *without* transpose as the B = Wtᵀ
    fractals, times I16, and Fixpipe writes Wp (one ND matrix per filter: ndNum). A SyncAll
    makes every core's share visible before any core loads A."""
    a2, b2, c0, tb = bufs["A_l0a"], bufs["B_l0b"], bufs["C_l0c"], bufs["B_l1"]
    eye, wp = (low.info[_ws_key(phase, r)].cname for r in ("eye", "wp"))
    Wt = low.info[cv.w].cname
    C, RS, F = cv.c, cv.r * cv.s, cv.f
    per, fc = -(-F // cores), _wchunk(cv, bl)
    v = low.names.fresh
    wf, wl, fe = v("wf"), v("wfLen"), v("fixEye")
    w(0, f"// Wp[f, r, s, c] = Wt[f, c, r, s] (GM workspace) on the cube, {per} filters per AIC; the identity first")
    w(0, f"{tb.tensor} = {tb.holder}.AllocTensor<half>();")
    w(0, f"InitConstValue({tb.tensor}, InitConstValueParams<half>(1, 512, 0, half(0.0f)));")
    w(0, f"InitConstValue({tb.tensor}, InitConstValueParams<half>(16, 1, 16, half(1.0f)));  // A[m, k] = (k / 16 == m)")
    w(0, f"InitConstValue({tb.tensor}[4096], InitConstValueParams<half>(16, 1, 16, half(0.0625f)));  // B[k, n] = (k / 16 == n) / 16")
    w(0, f"{tb.holder}.EnQue({tb.tensor});")
    w(0, f"{tb.tensor} = {tb.holder}.DeQue<half>();")
    w(0, f"{a2.tensor} = {a2.holder}.AllocTensor<half>();")
    w(0, f"LoadData({a2.tensor}, {tb.tensor}, LoadData2DParams(0, 16, 1, 0, 0, false, 0));")
    w(0, f"{a2.holder}.EnQue({a2.tensor});")
    w(0, f"{b2.tensor} = {b2.holder}.AllocTensor<half>();")
    w(0, f"LoadData({b2.tensor}, {tb.tensor}[4096], LoadData2DParams(0, 16, 1, 0, 0, false, 0));")
    w(0, f"{b2.holder}.EnQue({b2.tensor});")
    w(0, f"{a2.tensor} = {a2.holder}.DeQue<half>();")
    w(0, f"{b2.tensor} = {b2.holder}.DeQue<half>();")
    w(0, f"{c0.tensor} = {c0.holder}.AllocTensor<float>();")
    w(0, f"Mmad({c0.tensor}, {a2.tensor}, {b2.tensor}, MmadParams(16, 16, 256, false, 0, false, false, false));")
    w(0, f"{a2.holder}.FreeTensor({a2.tensor});")
    w(0, f"{b2.holder}.FreeTensor({b2.tensor});")
    w(0, f"{tb.holder}.FreeTensor({tb.tensor});")
    w(0, f"{c0.holder}.EnQue({c0.tensor});")
    w(0, f"{c0.tensor} = {c0.holder}.DeQue<float>();")
    w(0, f"FixpipeParamsV220 {fe}(16, 16, 16, 16, false);")
    w(0, f"{fe}.quantPre = QuantMode_t::F322F16;")
    w(0, f"Fixpipe({eye}[workerIdx * 256], {c0.tensor}, {fe});")
    w(0, f"{c0.holder}.FreeTensor({c0.tensor});")
    w(0, "PipeBarrier<PIPE_ALL>();  // the identity is in GM before MTE2 reads it back")
    w(0, f"{tb.tensor} = {tb.holder}.AllocTensor<half>();")
    w(0, f"DataCopy({tb.tensor}, {eye}[workerIdx * 256], Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));")
    w(0, f"{tb.holder}.EnQue({tb.tensor});")
    w(0, f"{tb.tensor} = {tb.holder}.DeQue<half>();")
    w(0, f"{a2.tensor} = {a2.holder}.AllocTensor<half>();  // I16, kept for the filters")
    w(0, f"LoadData({a2.tensor}, {tb.tensor}, LoadData2DParams(0, 1, 1, 0, 0, false, 0));")
    w(0, f"{a2.holder}.EnQue({a2.tensor});")
    w(0, f"{a2.tensor} = {a2.holder}.DeQue<half>();")
    w(0, f"{tb.holder}.FreeTensor({tb.tensor});")
    last = f"ascx_min<int32_t>({F}, (workerIdx + 1) * {per})"
    w(0, f"for (int32_t {wf} = workerIdx * {per}; {wf} < {last}; {wf} += {fc}) {{")
    w(1, f"const int32_t {wl} = ascx_min<int32_t>({fc}, {last} - {wf});")
    w(1, f"{tb.tensor} = {tb.holder}.AllocTensor<half>();  // rows (f, c), columns r*S + s (zero-filled to 16)")
    w(1, f"DataCopy({tb.tensor}, {Wt}[{wf} * {cv.k}], Nd2NzParams(1, {wl} * {C}, {RS}, 0, {RS}, {wl} * {C}, 1, 0));")
    w(1, f"{tb.holder}.EnQue({tb.tensor});")
    w(1, f"{tb.tensor} = {tb.holder}.DeQue<half>();")
    w(1, f"{b2.tensor} = {b2.holder}.AllocTensor<half>();")
    w(1, f"LoadData({b2.tensor}, {tb.tensor}, LoadData2DParams(0, {wl} * {C // FRACTAL}, 1, 0, 0, false, 0));")
    w(1, f"{b2.holder}.EnQue({b2.tensor});")
    w(1, f"{b2.tensor} = {b2.holder}.DeQue<half>();")
    w(1, f"{tb.holder}.FreeTensor({tb.tensor});")
    w(1, f"{c0.tensor} = {c0.holder}.AllocTensor<float>();")
    w(1, f"Mmad({c0.tensor}, {a2.tensor}, {b2.tensor}, MmadParams(16, {wl} * {C}, 16, false, 0, false, false, false));")
    w(1, f"{b2.holder}.FreeTensor({b2.tensor});")
    w(1, f"{c0.holder}.EnQue({c0.tensor});")
    w(1, f"{c0.tensor} = {c0.holder}.DeQue<float>();")
    w(1, f"FixpipeParamsV220 {fe}W({C}, {RS}, 16, {C}, false);")
    w(1, f"{fe}W.quantPre = QuantMode_t::F322F16;")
    w(1, f"{fe}W.ndNum = {wl};")
    w(1, f"{fe}W.srcNdStride = {C // FRACTAL};")
    w(1, f"{fe}W.dstNdStride = {cv.k};")
    w(1, f"Fixpipe({wp}[{wf} * {cv.k}], {c0.tensor}, {fe}W);")
    w(1, f"{c0.holder}.FreeTensor({c0.tensor});")
    w(0, "}")
    w(0, f"{a2.holder}.FreeTensor({a2.tensor});")
    w(0, "PipeBarrier<PIPE_ALL>();")
    w(0, "SyncAll<false>();  // every AIC's filters are in Wp")


def _k_tail(cv: ConvNest, bl: ConvBlocks) -> bool:
    """Whether some L1 K block (c*R*S, or the last block's) is not a multiple of 16."""
    last = cv.c - (-(-cv.c // bl.c) - 1) * bl.c
    return (bl.c * cv.r * cv.s) % FRACTAL != 0 or (last * cv.r * cv.s) % FRACTAL != 0
