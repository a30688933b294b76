"""Pieces shared by the hand-emitted cube kernels (`gemm.py`, `conv.py`): the queue buffers
of a phase, the loop over the L0 K slices of an L1 block (L1 -> L0A / L0B by `LoadData`,
one `Mmad` each, both queues double-buffered), and the phase's tail (a member method of its
own unless the kernel is this one phase)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .. import ir
from .cexpr import CTYPE
from .plan import Buffer, Line, Method

if TYPE_CHECKING:
    from .lower import Lowering, _PhaseSrc

LAYOUT = {"l1": "Nz", "l0a": "Zz", "l0b": "Zn", "l0c": "Nz"}

Emit = Callable[[int, str], None]


def queue_buffers(low: "Lowering", label: str,
                  specs: list[tuple[str, str, str, tuple[int, int], int, str]]) -> dict[str, Buffer]:
    """One `TQue` buffer per (role, scope, dtype, shape, depth, position), named after `label`."""
    out: dict[str, Buffer] = {}
    for role, scope, dt, shape, depth, pos in specs:
        base = f"{label}_{role}"
        nbytes = shape[0] * shape[1] * ir.DTYPE_BYTES[dt]
        out[role] = Buffer(base, low.names.fresh(f"{base}Local"), low.names.fresh(f"que_{base}"), dt, CTYPE[dt], scope,
                           pos, depth, shape, (shape[1], 1), LAYOUT[scope], nbytes, "que")
    return out


def slice_loop(low: "Lowering", w: Emit, d: int, bufs: dict[str, Buffer], *, k0: int, kl: str, kp: str, mp: str,
               np_: str, m: str, n: str, init: str, b_nk: bool = False,
               b_src: Callable[[str], tuple[str, str]] | None = None, kc: int = 16, dtype: str = "f16") -> None:
    """The L0 K slices of the L1 blocks `A_l1` (Nz [mp, kp]) and `B_l1` (Nz [kp, np_], or the
    Bᵀ tile [np_, kp] when `b_nk`) over `kl` columns: L1 -> L0A one `LoadData` per 16-column
    group, L1 -> L0B one transposing `LoadData` per 16-row group (one contiguous load for
    Bᵀ), then `Mmad(m, n, slice)` into `C_l0c`; `init` is the C++ condition of
    `cmatrixInitVal` given the slice index (written `{ks}`). `b_src(kg)`: where the 16 x n
    row group `kg` (a C++ expression) of B is in L1 and its fractal stride, transposed by the
    load (default: row group kg of `B_l1`, fractals `kp / 16` apart). `kc`: the elements of
    a fractal row, the K group width (16 halves; 32 int8: fractals of 16 x 32, Bᵀ only)."""
    a1, b1, a2, b2, c0 = (bufs[r] for r in ("A_l1", "B_l1", "A_l0a", "B_l0b", "C_l0c"))
    v = low.names.fresh
    ks, ko, kls, k1, r, mmp = (v(x) for x in ("ks", "kOff", "kSlice", "k1", "r", "mmadParams"))
    w(d, f"for (int32_t {ks} = 0; {ks} * {k0} < {kl}; ++{ks}) {{")
    w(d + 1, f"const int32_t {ko} = {ks} * {k0}, {kls} = ascx_min<int32_t>({k0}, {kl} - {ko}), {k1} = ({kls} + {kc - 1}) / {kc};")
    # L1 -> L0A: Nz [mPad, kPad] -> Zz [mPad, k1*16], one call per 16-column group
    ct = CTYPE[dtype]
    w(d + 1, f"{a2.tensor} = {a2.holder}.AllocTensor<{ct}>();")
    w(d + 1, f"for (int32_t {r} = 0; {r} < {k1}; ++{r}) {{")
    w(d + 2, f"LoadData({a2.tensor}[{r} * {16 * kc}], {a1.tensor}[({ko} / {kc} + {r}) * {mp} * {kc}], "
             f"LoadData2DParams(0, {mp} / 16, 1, 0, {k1} - 1, false, 0));")
    w(d + 1, "}")
    w(d + 1, f"{a2.holder}.EnQue({a2.tensor});")
    w(d + 1, f"{b2.tensor} = {b2.holder}.AllocTensor<{ct}>();")
    if b_nk:
        # the Nz tile of Bᵀ [nPad, kPad] holds the Zn fractals of B: the slice is contiguous
        w(d + 1, f"LoadData({b2.tensor}, {b1.tensor}[{ko} / {kc} * {np_} * {kc}], "
                 f"LoadData2DParams(0, {k1} * {np_} / 16, 1, 0, 0, false, 0));")
    else:
        # L1 -> L0B: Nz [kPad, nPad] -> Zn, each fractal transposed, one call per 16-row group
        at, stride = (b_src or (lambda kg: (f"{b1.tensor}[({kg}) * 256]", f"{kp} / 16")))(f"{ko} / 16 + {r}")
        w(d + 1, f"for (int32_t {r} = 0; {r} < {k1}; ++{r}) {{")
        w(d + 2, f"LoadData({b2.tensor}[{r} * {np_} * 16], {at}, LoadData2DParams(0, {np_} / 16, {stride}, 0, 0, true, 0));")
        w(d + 1, "}")
    w(d + 1, f"{b2.holder}.EnQue({b2.tensor});")
    w(d + 1, f"{a2.tensor} = {a2.holder}.DeQue<{ct}>();")
    w(d + 1, f"{b2.tensor} = {b2.holder}.DeQue<{ct}>();")
    w(d + 1, f"MmadParams {mmp}({m}, {n}, {kls}, false, 0, false, false, false);")
    w(d + 1, f"{mmp}.cmatrixInitVal = {init.format(ks=ks)};")
    w(d + 1, f"Mmad({c0.tensor}, {a2.tensor}, {b2.tensor}, {mmp});")
    w(d + 1, f"{a2.holder}.FreeTensor({a2.tensor});")
    w(d + 1, f"{b2.holder}.FreeTensor({b2.tensor});")
    w(d, "}")


def finish_phase(low: "Lowering", src: "_PhaseSrc", ph: Any, lines: list[tuple[int, str]], method: str) -> None:
    """Give `ph` its lines: inline when the kernel is this one phase, else a member method of
    its own ending in a barrier and `pipe.Reset()` (the next phase plans its own buffers)."""
    origin = low.where(src.stmts[0])
    body = [Line(s, d, origin) for d, s in lines]
    if len(low.phase_range) == 1 and low.mode != "MIX_MODE":
        ph.init = [l for l in body if l.text.startswith("pipe.InitBuffer")]
        ph.body = [l for l in body if not l.text.startswith("pipe.InitBuffer")]
        return
    body += [Line("PipeBarrier<PIPE_ALL>();", 0, origin), Line("pipe.Reset();", 0, origin)]
    ph.methods.append(Method(method, (), body, "phase"))
    ph.body = [Line(f"{method}();")]
