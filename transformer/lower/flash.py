"""Attention marked `@flash(q, kv)` -> one 910B mix kernel: FlashAttention with the cube and
the vector cores pipelined on different key blocks.

The `flash_attention` pass (passes/flash_attention.py) marks the first nest of the attention
kernel of `examples/attention.ir` after `round_operand{pv.s=f16}` (P rounded to f16 for P·V,
as FlashAttention kernels do; names are free, the structure is that file's: `qk`, `bias`,
`rmax`, `expo`, `round_s`, `pv`). The IR keeps its meaning; this module emits the kernel:

Per AIC block `b` (blockDim = min(AIC cores, S / q)) and each of its query tiles of q rows,
for every key block j of kv keys:

| core | step | instructions |
|---|---|---|
| AIC | S_j = Q Kⱼᵀ (Q in L0A, Kⱼ in L0B, S_j in L0C) -> workspace slot j % 3 (f32) | Nd2Nz `DataCopy`, `LoadData`, `Mmad`, `Fixpipe`; `CrossCoreSetFlag<2, PIPE_FIX>(S ready)` |
| AIV (each of 2: q/2 rows) | online softmax of S_j: x = S_j * scale + M, m' = max(m, rowmax x), α_j = exp(m - m'), P_j = exp(x - m'), l = l α_j + rowsum P_j; P_j (f16) -> workspace slot j % 3 | `DataCopy`, `Muls`, `Cast`, `Add`, `Max` + `WholeReduceMax`, `Sub`/`Exp`, `Brcb` (row broadcast), `WholeReduceSum`; `CrossCoreSetFlag<2, PIPE_MTE3>(P ready)` |
| AIC | O_j = P_j V_j (P in L0A, V_j in L0B transposed) -> workspace slot j % 3 (f32) | after `CrossCoreWaitFlag(P ready)`; `CrossCoreSetFlag<2, PIPE_FIX>(O ready)` |
| AIV | acc = acc α_j + O_j (after the softmax of block j+1); last block: O = f16(acc / l) | `Brcb`, `Mul`, `Add`, `Div`, `Cast`, `DataCopy` |

The AIC computes S_{j+2} before it waits for P_j, so the cube works two key blocks ahead of
the vector cores, and the vector cores fold O_{j-1} into acc while the cube multiplies
P_j V_j. Three workspace slots per block and stream suffice without "slot free" flags: each
reuse of a slot is ordered behind its last read by the flag chain and the in-order pipes
(e.g. the AIC's Mmad of S_{j+3} follows its Mmad of P_j V_j, which follows the load of
P_j). Numerics: the online softmax rescales (exact in exact arithmetic); P is
rounded to f16 per block (exp(x - running max)), the row sum uses the f32 values.

Causal (examples/attention_causal.ir: `mask` nest `s = select(j <= i, s * scale, -inf)`
instead of `bias`): query tile t runs key blocks 0 .. ceil((t + 1) q / kv) - 1 only (the
rest are fully masked: no load, Mmad, softmax or flag for them), the AIVs add a 0 / -inf
mask tile (built once per AIV) on the last, diagonal block, and the tiles are packed over
the AIC blocks by a table (`causal_schedule`) since their work grows with t.

Size: about 700 lines: recognition, schedule, buffers and emission of one mix kernel (one
path per tiling key, flash_keys.py). The AIC and AIV methods share the buffer plan, the
workspace slots and the cross-core flag protocol, which must agree line by line; they are
kept together so that they do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import ir
from ..affine import eval_int
from .cexpr import CTYPE
from .plan import Buffer, Line, Method, NestChoice
from . import flash_banks, ub_place
from ..targets import Target

if TYPE_CHECKING:
    from .lower import Lowering

ANNOTATION = "flash"
CANON_NAMES = ("Q", "K", "V", "M", "O", "s", "s_f16", "mx", "sm", "acc", "scale", "S", "D")
CANON_NESTS = (
    "for i in 0..S {\n for j in 0..S {\n s[i, j] = 0.0\n for k in 0..D {\n s[i, j] += f32(Q[i, k]) * f32(K[j, k])\n }\n }\n}",
    "for i in 0..S {\n for j in 0..S {\n s[i, j] = s[i, j] * scale + f32(M[i, j])\n }\n}",
    "for i in 0..S {\n mx[i] = -inf\n for j in 0..S {\n mx[i] max= s[i, j]\n }\n}",
    "for i in 0..S {\n sm[i] = 0.0\n for j in 0..S {\n s[i, j] = exp(s[i, j] - mx[i])\n sm[i] += s[i, j]\n }\n}",
    "for i in 0..S {\n for j in 0..S {\n s_f16[i, j] = f16(s[i, j])\n }\n}",
    "for i in 0..S {\n for d in 0..D {\n acc[i, d] = 0.0\n for j in 0..S {\n acc[i, d] += f32(s_f16[i, j]) * f32(V[j, d])\n"
    " }\n O[i, d] = f16(acc[i, d] / sm[i])\n }\n}",
)
CANON_NESTS = tuple("\n".join(line.strip() for line in n.splitlines()) for n in CANON_NESTS)
# examples/attention_causal.ir: no mask input, the scores masked by the key index instead
CAUSAL_MASK = "for i in 0..S {\nfor j in 0..S {\ns[i, j] = select(j <= i, s[i, j] * scale, -inf)\n}\n}"
Q_BLOCK, KV_BLOCK = 128, 128  # the largest query tile; the key block
AIVS_PER_AIC = 2  # the kernel splits a query tile over the two AIVs of a MIX block (`flash_fits` checks the target)


def ub_budget(target: Target) -> int:
    """UB bytes one AIV's buffers may take: the target's usable UB less the API temp area."""
    return target.scope("ub").usable_bytes - target.api_temp_bytes
SLOTS = 3  # workspace slots per stream: the cube runs two key blocks ahead of the vector cores


@dataclass(frozen=True)
class FlashAttn:
    names: dict[str, str]  # canonical name -> the kernel's name
    s: int
    d: int
    q: int = 128  # query rows per tile (each AIV takes q / 2)
    causal: bool = False  # attention_causal.ir: key j attends query i only when j <= i
    g: int = 1  # query tiles sharing each pass over K and V (each K/V block loaded once for g tiles)


class Refusal(str):
    """Why `match_flash` does not take a kernel that is attention-shaped otherwise (e.g. a mask
    it does not recognise): the pass refuses (exit 2) instead of doing nothing."""


def _strip(s: ir.Stmt) -> ir.Stmt:
    import dataclasses

    if isinstance(s, ir.For):
        return dataclasses.replace(s, label=None, annotations=(), body=tuple(_strip(b) for b in s.body))
    return s


CANON_LOOPS = (("i", "j", "k"), ("i", "j"), ("i", "j"), ("i", "j"), ("i", "j"), ("i", "d", "j"))


def _canon_text(nest: ir.Stmt, tensors: dict[str, str], loops: tuple[str, ...]) -> str:
    """`nest` printed without labels, its tensors and loop variables renamed to the canonical ones."""
    from ..printer import format_stmt

    got = [lp.var for lp in ir.iter_loops((nest,))]
    if len(got) != len(loops) or any(v in tensors for v in got):
        return ""
    ren = dict(tensors)
    ren.update(zip(got, loops))
    text = "\n".join(line.strip() for line in format_stmt(_strip(nest)).splitlines())
    return re.sub(r"\b[A-Za-z_][A-Za-z_0-9]*\b", lambda m: ren.get(m.group(0), m.group(0)), text)


def match_flash(kernel: ir.Kernel) -> FlashAttn | str:
    """The attention of examples/attention.ir (or attention_causal.ir) after
    `round_operand{pv.s=f16}`, or why not (a `Refusal` when only the mask is not recognised)."""
    ins, outs = list(kernel.inputs), list(kernel.outputs)
    temps = [t for t in kernel.buffers if t.kind == "temp"]
    causal = len(ins) == 3
    if len(ins) not in (3, 4) or len(outs) != 1 or len(temps) != 5 or len(kernel.consts) != 1 or len(kernel.sizes) != 2:
        return ("not the attention kernel of examples/attention.ir or attention_causal.ir after `round_operand{pv.s=f16}` "
                "(inputs Q, K, V[, M]; output O; temps s, s_f16, mx, sm, acc; one const; sizes S, D)")
    canon = tuple(c for c in CANON_NAMES if not (causal and c == "M"))
    names = dict(zip(canon, [t.name for t in ins + outs + temps] + [kernel.consts[0].name]
                     + [x.name for x in kernel.sizes]))
    back = {v: k for k, v in names.items()}
    nests = [s for s in kernel.body]
    if len(nests) != len(CANON_NESTS):
        return f"{len(nests)} top-level statements, not the 6 nests qk, bias (or mask), rmax, expo, round_s, pv"
    for n, (nest, want) in enumerate(zip(nests, CANON_NESTS)):
        if causal and n == 1:
            want = CAUSAL_MASK
        got = _canon_text(nest, back, CANON_LOOPS[n])
        if got != want:
            label = nest.label if isinstance(nest, ir.For) else None
            if causal and n == 1 and all(_canon_text(x, back, CANON_LOOPS[m]) == w for m, (x, w) in enumerate(zip(nests, CANON_NESTS)) if m != 1):
                return Refusal(f"nest 2 (`{label or '?'}`) is not the causal mask `s[i, j] = select(j <= i, s[i, j] * scale, -inf)` "
                               f"(got `{' '.join(got.splitlines()[2:3]) or '?'}`): other masks are not recognised")
            return f"nest {n + 1} (`{label or '?'}`) is not the attention nest `{' '.join(want.splitlines()[:3])} ...`" \
                   + (" (run `round_operand{pv.s=f16}` first: P·V on the cube takes P in f16)" if n >= 4 else "")
    sizes = kernel.size_values()
    dec = {t.name: t for t in kernel.tensors()}
    want_types = {"Q": ("f16", ("S", "D")), "K": ("f16", ("S", "D")), "V": ("f16", ("S", "D")), "M": ("f16", ("S", "S")),
                  "O": ("f16", ("S", "D")), "s": ("f32", ("S", "S")), "s_f16": ("f16", ("S", "S")),
                  "mx": ("f32", ("S",)), "sm": ("f32", ("S",)), "acc": ("f32", ("S", "D"))}
    S, D = sizes[names["S"]], sizes[names["D"]]
    for c, (dt, shp) in want_types.items():
        if c not in names:
            continue
        t = dec[names[c]]
        if t.dtype != dt or tuple(eval_int(x, sizes) for x in t.shape) != tuple({"S": S, "D": D}[x] for x in shp):
            return f"`{t.name}` is not {dt}[{', '.join(shp)}]"
    if kernel.consts[0].dtype != "f32":
        return "the scale is not an f32 const"
    return FlashAttn(names, S, D, causal=causal)


def choose_q(fa: FlashAttn, target: Target) -> int:
    """The query tile: of 128 and 64 rows, the one that leaves the busiest AIC the fewest
    rows (S / q tiles dealt round-robin over the AIC), then the fewest passes over K and V
    (`flash_group`: g tiles share a pass; at 8192, D = 128 both give 384 rows, but 64-row
    tiles share passes 3 at a time and 128-row ones cannot: 2 passes instead of 3, measured
    797k vs 848k cycles), 128 on a tie. Causal: 128 when there are at least as many 128-row
    tiles as AIC, else 64."""
    aic = int(target.aic_cores or target.cores)
    if fa.s % 128:
        return 64
    if fa.causal:
        # 128 whenever every AIC gets a tile: the balanced schedule then stays within a few
        # percent of the mean for either size, and a 64-row tile halves the rows each vector
        # instruction serves (measured at S = 8192: 1.29x the cycles; with 5 tiles per K/V
        # pass still 1.13x)
        return 128 if fa.s // 128 >= aic else 64
    import dataclasses

    def passes(q: int) -> int:
        fq = dataclasses.replace(fa, q=q)
        return -(-(-(-(fa.s // q) // aic)) // flash_group(fq, target))

    return min((128, 64), key=lambda q: (-(-(fa.s // q) // aic) * q, passes(q), -q))


def causal_blocks(t: int, q: int) -> int:
    """Key blocks query tile `t` (rows t*q .. t*q+q-1) attends causally: the blocks holding a
    key j <= its last row; the last one is the only one partly masked (q divides KV_BLOCK)."""
    return -(-((t + 1) * q) // KV_BLOCK)


def causal_schedule(s: int, q: int, cores: int) -> list[list[int]]:
    """The query tiles of each AIC block for causal attention: tile t costs its key blocks
    (t + 1 for q = 128), so round-robin would give the last blocks the heaviest tiles. The
    smallest capacity C (from the mean load up) for which best-fit decreasing packs every
    tile into `cores` blocks of at most C key blocks (at S = 8192, q = 128: C = 87, the mean
    is 86.7; heaviest-first to the least-loaded block gives 97). Each block runs its tiles
    heaviest first."""
    w = {t: causal_blocks(t, q) for t in range(s // q)}
    items = sorted(w, key=lambda t: (-w[t], t))
    cap = max(-(-sum(w.values()) // cores), max(w.values()))
    while True:
        load = [0] * cores
        out: list[list[int]] = [[] for _ in range(cores)]
        for t in items:
            fits = [b for b in range(cores) if load[b] + w[t] <= cap]
            if not fits:
                break
            b = max(fits, key=lambda b: (load[b], -b))  # best fit: the fullest block it fits in
            load[b] += w[t]
            out[b].append(t)
        else:
            return out
        cap += 1


def flash_fits(fa: FlashAttn) -> str | None:
    """Why the emitted kernel cannot take these sizes (or None)."""
    if fa.s % fa.q or fa.s % KV_BLOCK:
        return f"S = {fa.s} is not a multiple of the {fa.q}-row query tile and the {KV_BLOCK}-key block"
    if fa.d not in (64, 128):
        return f"D = {fa.d}: the kernel takes D = 64 or 128 (one or two 64-float vector repeats per row)"
    return None


def flash_cores(fa: FlashAttn, target: Target) -> int:
    return max(1, min(int(target.aic_cores or target.cores), fa.s // fa.q))


def workspace_slots(fa: FlashAttn, target: Target, widest_s: int | None = None) -> list[tuple[str, str, int]]:
    """(role, dtype, elements) of the GM workspace: SLOTS S, P and O slots per AIC block and
    query tile of a group (`widest_s`: S read at run time, up to that: the most blocks)."""
    import dataclasses

    n = flash_cores(dataclasses.replace(fa, s=widest_s) if widest_s else fa, target) * fa.g
    return [("S", "f32", n * SLOTS * fa.q * KV_BLOCK), ("P", "f16", n * SLOTS * fa.q * KV_BLOCK),
            ("O", "f32", n * SLOTS * fa.q * fa.d)]


def _ub_bytes(fa: FlashAttn, g: int, stages: int) -> int:
    """UB bytes of one AIV's buffers (`flash_buffers`) for group size g and load stages."""
    return sum(sh[0] * sh[1] * ir.DTYPE_BYTES[dt] * (st if st > 1 else 1)
               for _, scope, dt, sh, st, _ in _buffers(fa, g, stages) if scope == "ub")


XFLAG_PENDING = 15  # a cross-core flag counts at most 15 pending sets (the emulator refuses more)


def flash_group(fa: FlashAttn, target: Target) -> int:
    """Query tiles per pass over K and V: every tile of the busiest AIC block, as far as one
    softmax state (running max, sum, f32 accumulator) per tile fits UB next to the rest and
    the S-ready sets the cube issues ahead (SLOTS key blocks x g tiles) stay within a flag's
    counter; when that takes several passes, their tiles are spread evenly (6 tiles, at most
    5 per pass: 3 + 3)."""
    most = max((len(x) for x in flash_schedule(fa, flash_cores(fa, target))), default=1)
    passes = -(-most // group_limit(fa, target))
    return -(-most // passes)


def group_limit(fa: FlashAttn, target: Target) -> int:
    """The most query tiles one pass over K and V may take (`flash_group`'s bounds): the
    busiest AIC block's tiles, one softmax state per tile in UB, the S-ready sets within a
    cross-core flag's counter. A `flash_attention{g=...}` request above it is refused."""
    most = max((len(x) for x in flash_schedule(fa, flash_cores(fa, target))), default=1)
    return max([g for g in range(1, min(most, XFLAG_PENDING // SLOTS) + 1) if _ub_bytes(fa, g, 1) <= ub_budget(target)] or [1])


def flash_schedule(fa: FlashAttn, cores: int) -> list[list[int]]:
    """The query tiles of each AIC block: round-robin, or (causal) `causal_schedule`."""
    if fa.causal:
        return causal_schedule(fa.s, fa.q, cores)
    return [list(range(b, fa.s // fa.q, cores)) for b in range(cores)]


def flash_buffers(fa: FlashAttn, target: Target) -> list[tuple[str, str, str, tuple[int, int], int, str]]:
    """(role, scope, dtype, shape, stages, position) of every on-chip buffer (AIC, then each
    AIV), for `fa.g` query tiles per K/V pass: Q of every tile of the group in L1, one softmax
    state per tile (acc_ub, stat_ub rows); the S, M and O loads double-buffered when that fits.
    Causal: no mask input (no m_ub); the additive diagonal masks (0 / -inf, one per row offset
    of the diagonal block: 1 for q = 128, 2 for q = 64) are built once per AIV in mask_ub, and
    mf_ub only holds the 64-column fold of the row max / sum (and P in f16)."""
    return _buffers(fa, fa.g, 2 if _ub_bytes(fa, fa.g, 2) <= ub_budget(target) else 1)


def _buffers(fa: FlashAttn, g: int, st: int) -> list[tuple[str, str, str, tuple[int, int], int, str]]:
    q, kv, d, r = fa.q, KV_BLOCK, fa.d, fa.q // AIVS_PER_AIC
    w = max(kv, d)
    cube = [("q_l1", "l1", "f16", (g * q, d), 1, "A1"), ("k_l1", "l1", "f16", (kv, d), 2, "B1"),
            ("p_l1", "l1", "f16", (q, kv), 2, "A1"), ("v_l1", "l1", "f16", (kv, d), 2, "B1"),
            ("a_l0a", "l0a", "f16", (q, w), 2, "A2"), ("b_l0b", "l0b", "f16", (w, w), 2, "B2"),
            ("c_l0c", "l0c", "f32", (q, w), 2, "CO1")]
    stats = [("acc_ub", "ub", "f32", (g * r, d), 1, "VECCALC"), ("stat_ub", "ub", "f32", (8 * g, r), 1, "VECCALC"),
             ("brc_ub", "ub", "f32", (r, 8), 1, "VECCALC")]
    loads = [("s_ub", "ub", "f32", (r, kv), st, "VECIN")] + ([] if fa.causal else [("m_ub", "ub", "f16", (r, kv), st, "VECIN")]) \
        + [("o_ub", "ub", "f32", (r, d), st, "VECIN"), ("p_ub", "ub", "f16", (r + 1, kv), 1, "VECOUT"),
           ("out_ub", "ub", "f16", (r, d), 1, "VECOUT")]
    if fa.causal:
        return cube + loads + [("mf_ub", "ub", "f32", (r, 64), 1, "VECCALC")] + stats + [
            ("mask_ub", "ub", "f32", ((KV_BLOCK // q) * r, kv), 1, "VECCALC")]
    return cube + loads + [("mf_ub", "ub", "f32", (r, kv), 1, "VECCALC")] + stats


def _bank_pads(low: "Lowering", bufs: dict[str, Buffer], roles: list[str], fa: FlashAttn, nb: int) -> dict[str, int]:
    """The UB bank placement of the AIV buffers (ub_place.py): bytes of pad before each role,
    within the AIV's UB budget, from the vector instructions of `flash_banks.vector_hots`."""
    banks = ub_place.Banks.of(low.target)
    slabs = [ub_place.Slab(x, -(-bufs[x].nbytes // 32) * 32, bufs[x].depth) for x in roles]
    free = ub_budget(low.target) - sum(s.nbytes * s.slots for s in slabs)
    if banks is None or free <= 0:
        return {x: 0 for x in roles}
    blocks = nb if isinstance(nb, int) else 1  # a run-time S: its block count is C++ text
    hots = flash_banks.vector_hots(fa.q // AIVS_PER_AIC, KV_BLOCK, fa.d, fa.g, fa.causal, blocks)
    return dict(zip(roles, ub_place.place(banks, slabs, hots, free)))


def with_annotation(fa: FlashAttn, ann: Any) -> FlashAttn:
    """`fa` with the query tile and group size of its `@flash(q, kv, g)` annotation."""
    import dataclasses

    return dataclasses.replace(fa, q=int(ann.get("q") or fa.q), g=int(ann.get("g") or 1))


def lower_flash_phase(low: "Lowering", src: Any, ph: Any, fa: FlashAttn, method: str, rt: Any = None) -> None:
    """Fill `ph` with the mix kernel (module docstring): buffers, the AIC and AIV methods;
    with a run-time S (`rt`: flash_keys.runtime_s, S read from the tiling struct), one path
    per tiling key, chosen once on the key."""
    where = f"{low.where(src.stmts[0])} attention"
    low.nests.append(NestChoice(where + " (AIC)", ("DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe",
                                                   "CrossCoreSetFlag", "CrossCoreWaitFlag")))
    low.nests.append(NestChoice(where + " (AIV)", ("Muls", "Cast", "Add", "Max", "WholeReduceMax", "Sub", "Exp", "Brcb",
                                                   "WholeReduceSum", "Mul", "Div", "DataCopy")))
    ph.buffers = []
    paths = [_lower_path(low, src, ph, f, rt, k) for k, f in enumerate(rt[5] if rt is not None else [fa])]
    origin = low.where(src.stmts[0])
    body = []
    for core, i in (("AIC", 0), ("AIV", 1)):
        if len(paths) == 1:
            body.append(Line(f"if ASCEND_IS_{core} {{ {paths[0][i]}(); }}", 0, origin))
            continue
        body.append(Line(f"if ASCEND_IS_{core} {{", 0, origin))
        for k, p in enumerate(paths):  # the tiling key's path: the code a static kernel gets for its S
            cond = f"if ({rt[4]} == {k})" if k < len(paths) - 1 else ""  # type: ignore[index]
            body.append(Line(f"{'} else ' if k else ''}{cond}{' ' if cond else ''}{{", 1, origin))
            body.append(Line(f"{p[i]}();", 2, origin))
        body += [Line("}", 1, origin), Line("}", 0, origin)]
    ph.methods.append(Method(method, (), body, "phase"))
    ph.body = [Line(f"{method}();")]


def _lower_path(low: "Lowering", src: Any, ph: Any, fa: FlashAttn, rt: Any, key: int) -> tuple[str, str]:
    """One path of the mix kernel for `fa`'s q and g: its buffers and methods into `ph`; the
    names of its AIC and AIV methods."""
    names = low.names
    nm = fa.names
    bufs: dict[str, Buffer] = {}
    for role, scope, dt, shape, depth, pos in flash_buffers(fa, low.target):
        base = f"fa_{role}" + (f"_k{key}" if key else "")
        kind = "buf" if pos == "VECCALC" else "que"
        layout = {"l1": "Nz", "l0a": "Zz", "l0b": "Zn", "l0c": "Nz", "ub": "ND"}[scope]
        bufs[role] = Buffer(base, names.fresh(f"{base}Local"), names.fresh(("buf_" if kind == "buf" else "que_") + base),
                            dt, CTYPE[dt], scope, pos, depth, shape, (shape[1], 1), layout,
                            shape[0] * shape[1] * ir.DTYPE_BYTES[dt], kind)
    ph.buffers += list(bufs.values())
    B = {k: (b.tensor, b.holder) for k, b in bufs.items()}
    gm = {c: low.info[nm[c]].cname for c in ("Q", "K", "V", "M", "O") if c in nm}
    ws = {r: low.info[f"\0flash_{r}"].cname for r in ("S", "P", "O")}
    scale = names(nm["scale"])
    q, kv, d, r = fa.q, KV_BLOCK, fa.d, fa.q // AIVS_PER_AIC
    S: int | str = fa.s
    nb: int | str = fa.s // kv
    cores: int | str = flash_cores(fa, low.target)
    if rt is not None:
        S, nb, cores, qtiles = rt[:4]
    f_s, f_p, f_o = 5, 6, 7  # cross-core flag ids (the barrier ids of the template are 1-4)
    v = names.fresh
    G = fa.g
    blk, j, rr, h, slot, gi = (v(x) for x in ("faBlk", "faJ", "faR", "faH", "faSlot", "faG"))
    tu = [v(f"faT{u}") for u in range(G)]  # the group's query tiles (-1: none)
    nbu = [v(f"faNb{u}") for u in range(G)]  # their key blocks (0 for none)
    nbg = v("faNbG")  # the group's pass over K/V: the most blocks of its tiles
    sched = flash_schedule(fa, cores) if rt is None else []  # type: ignore[arg-type]
    tiles_v, first_v = v("faTiles"), v("faFirst")
    L: list[tuple[int, str]] = []

    def w(dd: int, s_: str) -> None:
        L.append((dd, s_))

    def alloc(role: str, dd: int) -> None:
        tn, hn = B[role]
        w(dd, f"{tn} = {hn}.AllocTensor<{bufs[role].ctype}>();")

    def enq_deq(role: str, dd: int) -> None:
        tn, hn = B[role]
        w(dd, f"{hn}.EnQue({tn});")
        w(dd, f"{tn} = {hn}.DeQue<{bufs[role].ctype}>();")

    def free(role: str, dd: int) -> None:
        tn, hn = B[role]
        w(dd, f"{hn}.FreeTensor({tn});")

    def group_loop() -> None:
        """This block's query tiles (`flash_schedule`), G at a time: tiles, key blocks."""
        if rt is not None:  # the round-robin of `flash_schedule` at run time: tiles blk, blk + blockDim, ...
            count = v("faCount")
            w(0, f"const int32_t {count} = ({qtiles} - {blk} + {cores} - 1) / {cores};  "
                 f"// this block's query tiles: {blk}, {blk} + {cores}, ...")
            w(0, f"for (int32_t {gi} = 0; {gi} < {count}; {gi} += {G}) {{  // {G} query tile(s) per pass over K and V")
            for u in range(G):
                tile = f"{blk} + ({gi}{f' + {u}' if u else ''}) * {cores}"
                w(1, f"const int32_t {tu[u]} = " + (f"{tile};" if u == 0 else f"{gi} + {u} < {count} ? {tile} : -1;"))
                w(1, f"const int32_t {nbu[u]} = " + (f"{nb};" if u == 0 else f"{tu[u]} < 0 ? 0 : {nb};"))
            most = nbu[0]
            for u in range(1, G):
                most = f"ascx_max<int32_t>({most}, {nbu[u]})"
            w(1, f"const int32_t {nbg} = {most};")
            return
        order = [x for tiles in sched for x in tiles]
        starts = [0]
        for tiles in sched:
            starts.append(starts[-1] + len(tiles))
        if fa.causal:
            w(0, f"// causal: query tile t attends key blocks 0 .. ceil((t + 1) * {q} / {kv}) - 1 (the rest are fully masked); "
                 "tiles packed over the blocks by best-fit decreasing")
        w(0, f"const int32_t {tiles_v}[{len(order)}] = {{{', '.join(map(str, order))}}};")
        w(0, f"const int32_t {first_v}[{len(starts)}] = {{{', '.join(map(str, starts))}}};")
        w(0, f"for (int32_t {gi} = {first_v}[{blk}]; {gi} < {first_v}[{blk} + 1]; {gi} += {G}) {{  "
             f"// {G} query tile(s) per pass over K and V")
        for u in range(G):
            have = f"{gi} + {u} < {first_v}[{blk} + 1]"
            w(1, f"const int32_t {tu[u]} = " + (f"{tiles_v}[{gi}];" if u == 0 else f"{have} ? {tiles_v}[{gi} + {u}] : -1;"))
            blocks = f"(({tu[u]} + 1) * {q} + {kv - 1}) / {kv}" if fa.causal else str(nb)
            w(1, f"const int32_t {nbu[u]} = " + (f"{blocks};" if u == 0 else f"{tu[u]} < 0 ? 0 : {blocks};"))
        most = nbu[0]
        for u in range(1, G):
            most = f"ascx_max<int32_t>({most}, {nbu[u]})"
        w(1, f"const int32_t {nbg} = {most};")

    def slot_of(jexpr: str, u: int | str) -> str:
        return f"(({blk} * {SLOTS} + ({jexpr}) % {SLOTS}) * {G} + {u})"

    T = {k: b[0] for k, b in B.items()}
    # ---------------- AIC
    cube: list[tuple[int, str]] = []
    L = cube
    for role in ("q_l1", "k_l1", "p_l1", "v_l1", "a_l0a", "b_l0b", "c_l0c"):
        b = bufs[role]
        w(0, f"pipe.InitBuffer({b.holder}, {'BUFFER_NUM' if b.depth == 2 else 1}, {b.nbytes});")
    w(0, f"const int32_t {blk} = static_cast<int32_t>(GetBlockIdx());")
    group_loop()
    alloc("q_l1", 1)
    for u in range(G):
        w(1, f"if ({tu[u]} >= 0) {{")
        w(2, f"DataCopy({T['q_l1']}[{u * q * d}], {gm['Q']}[{tu[u]} * {q * d}], Nd2NzParams(1, {q}, {d}, 0, {d}, {q}, 1, 0));")
        w(1, "}")
    enq_deq("q_l1", 1)

    qk_m, jq = names.fresh("FlashQk"), "faJq"
    nbp = [f"faNbQ{u}" for u in range(G)]

    def qk(dd: int, jexpr: str) -> None:
        w(dd, f"{qk_m}({blk}, {jexpr}, {', '.join(nbu)});  // S_j = Q K_jᵀ of each tile into its workspace slot")

    def qk_body() -> None:
        e = 0
        alloc("k_l1", e)
        w(e, f"DataCopy({T['k_l1']}, {gm['K']}[{jq} * {kv * d}], Nd2NzParams(1, {kv}, {d}, 0, {d}, {kv}, 1, 0));")
        enq_deq("k_l1", e)
        alloc("b_l0b", e)
        w(e, f"LoadData({T['b_l0b']}, {T['k_l1']}, LoadData2DParams(0, {(kv // 16) * (d // 16)}, 1, 0, 0, false, 0));")
        free("k_l1", e)
        enq_deq("b_l0b", e)
        for u in range(G):  # K_j loaded once, multiplied by the Q of every tile of the group
            w(e, f"if ({jq} < {nbp[u]}) {{")
            alloc("a_l0a", e + 1)
            w(e + 1, f"for (int32_t {rr} = 0; {rr} < {d // 16}; ++{rr}) {{")
            w(e + 2, f"LoadData({T['a_l0a']}[{rr} * 256], {T['q_l1']}[{u * q * d} + {rr} * {q * 16}], "
                     f"LoadData2DParams(0, {q // 16}, 1, 0, {d // 16 - 1}, false, 0));")
            w(e + 1, "}")
            enq_deq("a_l0a", e + 1)
            alloc("c_l0c", e + 1)
            w(e + 1, f"Mmad({T['c_l0c']}, {T['a_l0a']}, {T['b_l0b']}, MmadParams({q}, {kv}, {d}, false, 0, false, false, false));")
            free("a_l0a", e + 1)
            enq_deq("c_l0c", e + 1)
            w(e + 1, f"Fixpipe({ws['S']}[{slot_of(jq, u)} * {q * kv}], {T['c_l0c']}, FixpipeParamsV220({kv}, {q}, {q}, {kv}, false));")
            free("c_l0c", e + 1)
            w(e + 1, f"CrossCoreSetFlag<0x2, PIPE_FIX>({f_s});")
            w(e, "}")
        free("b_l0b", e)

    qk(1, "0")
    w(1, f"if ({nbg} > 1) {{")
    qk(2, "1")
    w(1, "}")
    w(1, f"for (int32_t {j} = 0; {j} < {nbg}; ++{j}) {{")
    w(2, f"if ({j} + 2 < {nbg}) {{")
    qk(3, f"{j} + 2")
    w(2, "}")
    alloc("v_l1", 2)
    w(2, f"DataCopy({T['v_l1']}, {gm['V']}[{j} * {kv * d}], Nd2NzParams(1, {kv}, {d}, 0, {d}, {kv}, 1, 0));")
    enq_deq("v_l1", 2)
    alloc("b_l0b", 2)
    w(2, f"for (int32_t {rr} = 0; {rr} < {kv // 16}; ++{rr}) {{")
    w(3, f"LoadData({T['b_l0b']}[{rr} * {d * 16}], {T['v_l1']}[{rr} * 256], LoadData2DParams(0, {d // 16}, {kv // 16}, 0, 0, true, 0));")
    w(2, "}")
    free("v_l1", 2)
    enq_deq("b_l0b", 2)
    for u in range(G):  # V_j loaded once, multiplied by the P of every tile of the group
        w(2, f"if ({j} < {nbu[u]}) {{")
        w(3, f"CrossCoreWaitFlag({f_p});  // P_j of this tile from both AIVs")
        w(3, f"const int32_t {slot}{u} = {slot_of(j, u)};")
        alloc("p_l1", 3)
        w(3, f"DataCopy({T['p_l1']}, {ws['P']}[{slot}{u} * {q * kv}], {q * kv});  // already Nz (the AIVs wrote it so)")
        enq_deq("p_l1", 3)
        alloc("a_l0a", 3)
        w(3, f"for (int32_t {rr} = 0; {rr} < {kv // 16}; ++{rr}) {{")
        w(4, f"LoadData({T['a_l0a']}[{rr} * 256], {T['p_l1']}[{rr} * {q * 16}], LoadData2DParams(0, {q // 16}, 1, 0, {kv // 16 - 1}, false, 0));")
        w(3, "}")
        free("p_l1", 3)
        enq_deq("a_l0a", 3)
        alloc("c_l0c", 3)
        w(3, f"Mmad({T['c_l0c']}, {T['a_l0a']}, {T['b_l0b']}, MmadParams({q}, {d}, {kv}, false, 0, false, false, false));")
        free("a_l0a", 3)
        enq_deq("c_l0c", 3)
        w(3, f"Fixpipe({ws['O']}[{slot}{u} * {q * d}], {T['c_l0c']}, FixpipeParamsV220({d}, {q}, {q}, {d}, false));")
        free("c_l0c", 3)
        w(3, f"CrossCoreSetFlag<0x2, PIPE_FIX>({f_o});")
        w(2, "}")
    free("b_l0b", 2)
    w(1, "}")
    free("q_l1", 1)
    w(0, "}")
    qk_lines: list[tuple[int, str]] = []
    L = qk_lines
    qk_body()
    # ---------------- AIV
    vec: list[tuple[int, str]] = []
    L = vec
    ub_roles = [x for x in ("s_ub", "m_ub", "o_ub", "p_ub", "out_ub", "mf_ub", "acc_ub", "stat_ub", "brc_ub", "mask_ub")
                if x in bufs]
    pads = _bank_pads(low, bufs, ub_roles, fa, nb)
    at = 0
    for role in ub_roles:
        b = bufs[role]
        if pads[role]:
            ph.pads.append(v("faUbPad"))
            at += pads[role]
            w(0, ub_place.pad_line(ph.pads[-1], pads[role], b.holder, at))
        at += -(-b.nbytes // 32) * 32 * b.depth
        if b.kind == "que":
            w(0, f"pipe.InitBuffer({b.holder}, {'BUFFER_NUM' if b.depth == 2 else 1}, {b.nbytes});")
        else:
            w(0, f"pipe.InitBuffer({b.holder}, {b.nbytes});")
            w(0, f"{b.tensor} = {b.holder}.Get<float>();")
    st, acc0, mf, brc = T["stat_ub"], T["acc_ub"], T["mf_ub"], T["brc_ub"]
    # per tile u of the group: 8 rows of r floats in stat_ub (m, m', rowv, l, alpha by parity)
    # and r x d floats of acc_ub; the methods take u at run time
    uu, q0u, last, tt, nbs = "faU", "faQ0", "faLast", "faTs", "faNbs"
    base = f"{uu} * {8 * r}"
    m_old, m_new, rowv, l_ = (f"{st}[{base} + {k * r}]" for k in range(4))
    acc = f"{acc0}[{uu} * {r * d}]"
    w(0, f"const int32_t {blk} = static_cast<int32_t>(GetBlockIdx()) / 2;")
    w(0, f"const int32_t {h} = static_cast<int32_t>(GetSubBlockIdx());  // this AIV's half of each query tile")
    upd, smx = names.fresh("FlashUpdate"), names.fresh("FlashSoftmax")
    if fa.causal:  # the additive masks of the diagonal block: row i of mask m keeps keys <= m*q + h*r + i
        mk, mi = T["mask_ub"], v("faMi")
        w(0, f"for (int32_t {mi} = 0; {mi} < {(kv // q) * r}; ++{mi}) {{")
        w(1, f"Duplicate({mk}[{mi} * {kv}], -ascx_inf, {kv});")
        w(1, f"Duplicate({mk}[{mi} * {kv}], 0.0f, ascx_min<int32_t>({kv}, ({mi} / {r}) * {q} + {h} * {r} + {mi} % {r} + 1));")
        w(0, "}")
    group_loop()
    w(1, f"Duplicate({st}, 0.0f, {8 * G * r});")
    for u in range(G):
        w(1, f"Duplicate({st}[{u * 8 * r}], -ascx_inf, {r});  // running max of tile {u}")
    w(1, f"Duplicate({acc0}, 0.0f, {G * r * d});")
    w(1, f"for (int32_t {j} = 0; {j} < {nbg}; ++{j}) {{")
    for u in range(G):
        w(2, f"if ({j} < {nbu[u]}) {{")
        w(3, f"{smx}({blk}, {h}, {j}, {u}, {tu[u]}, {nbu[u]});")
        w(2, "}")
    w(2, f"if ({j} > 0) {{")
    for u in range(G):
        w(3, f"if ({j} - 1 < {nbu[u]}) {{")
        w(4, f"{upd}({blk}, {h}, {j} - 1, {u}, {tu[u]} * {q} + {h} * {r}, {j} == {nbu[u]});")
        w(3, "}")
    w(2, "}")
    w(1, "}")
    for u in range(G):
        w(1, f"if ({nbu[u]} == {nbg}) {{")
        w(2, f"{upd}({blk}, {h}, {nbg} - 1, {u}, {tu[u]} * {q} + {h} * {r}, 1);")
        w(1, "}")
    w(0, "}")
    # the online softmax of S_j for tile u (rows tile * q + h * r ..): P_j (f16, Nz) to its slot
    smx_body: list[tuple[int, str]] = []
    L = smx_body
    js = "faJs"
    w(0, f"CrossCoreWaitFlag({f_s});  // S_j of this tile from the AIC")
    w(0, f"const int32_t {slot} = {slot_of(js, uu)};")
    alloc("s_ub", 0)
    w(0, f"DataCopy({T['s_ub']}, {ws['S']}[{slot} * {q * kv} + {h} * {r * kv}], {r * kv});")
    s_ = T["s_ub"]
    if fa.causal:
        if kv // q == 1:
            w(0, f"(void){tt};")
        enq_deq("s_ub", 0)
        w(0, f"Muls({s_}, {s_}, {scale}, {r * kv});")
        w(0, f"if ({js} == {nbs} - 1) {{  // the diagonal block: keys beyond the row masked (-inf)")
        w(1, f"Add({s_}, {s_}, {T['mask_ub']}" + (f"[({tt} % 2) * {r * kv}]" if kv // q > 1 else "") + f", {r * kv});")
        w(0, "}")
    else:
        w(0, f"(void){nbs};")
        alloc("m_ub", 0)
        w(0, f"DataCopy({T['m_ub']}, {gm['M']}[({tt} * {q} + {h} * {r}) * {S} + {js} * {kv}], "
             f"DataCopyParams({r}, {kv * 2 // 32}, {(S - kv) * 2 // 32 if isinstance(S, int) else f'({S} - {kv}) * 2 / 32'}, 0));")
        enq_deq("s_ub", 0)
        enq_deq("m_ub", 0)
        w(0, f"Muls({s_}, {s_}, {scale}, {r * kv});")
        w(0, f"Cast({mf}, {T['m_ub']}, RoundMode::CAST_NONE, {r * kv});")
        free("m_ub", 0)
        w(0, f"Add({s_}, {s_}, {mf}, {r * kv});")
    # the per-row statistics (r <= 64 floats) in the mask form, one repeat: a count form of
    # r = 32 floats (128 B) pays the count-form tail
    one_b, one_u = f"{r}, 1, BinaryRepeatParams()", f"{r}, 1, UnaryRepeatParams()"
    # row max: fold the 64-float halves of each row, then one value per row
    w(0, f"Max({mf}, {s_}, {s_}[64], 64, {r}, BinaryRepeatParams(1, 1, 1, 8, {kv // 8}, {kv // 8}));")
    w(0, f"WholeReduceMax({rowv}, {mf}, 64, {r}, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);")
    w(0, f"Max({m_new}, {m_old}, {rowv}, {one_b});")
    alpha = f"{st}[{base} + {4 * r} + ({js} % 2) * {r}]"  # α of block j: two rows, by parity
    w(0, f"Sub({alpha}, {m_old}, {m_new}, {one_b});")
    w(0, f"Exp({alpha}, {alpha}, {one_u});")
    w(0, f"Adds({m_old}, {m_new}, 0.0f, {one_u});")
    w(0, f"Brcb({brc}, {m_new}, {r // 8}, BrcbRepeatParams(1, 8));")
    for half in range(kv // 64):
        w(0, f"Sub({s_}[{half * 64}], {s_}[{half * 64}], {brc}, 64, {r}, BinaryRepeatParams(1, 1, 0, {kv // 8}, {kv // 8}, 1));")
    w(0, f"Exp({s_}, {s_}, {r * kv});")
    w(0, f"Add({mf}, {s_}, {s_}[64], 64, {r}, BinaryRepeatParams(1, 1, 1, 8, {kv // 8}, {kv // 8}));")
    w(0, f"WholeReduceSum({rowv}, {mf}, 64, {r}, 1, 1, 8);")
    w(0, f"Mul({l_}, {l_}, {alpha}, {one_b});")
    w(0, f"Add({l_}, {l_}, {rowv}, {one_b});")
    # P_j in f16, rearranged into the L1 layout the cube reads (Nz: 16-column groups of the
    # tile's q rows), so the AIC loads it with one contiguous DataCopy instead of q Nd2Nz rows:
    # Cast (ND, into mf), then one strided copy per row (block g of row i -> g * (r + 1) + i), then
    # this AIV's r rows of each group to GM (kv / 16 bursts of r x 32 B)
    ph16 = f"{mf}.ReinterpretCast<half>()"
    w(0, f"Cast({ph16}, {s_}, RoundMode::CAST_RINT, {r * kv});")
    free("s_ub", 0)
    alloc("p_ub", 0)
    # (the groups are r + 1 blocks apart in p_ub, not r: a repeat's 8 blocks then land in 8
    # different UB bank groups instead of one; the copy skips the spare block of each group)
    w(0, f"Adds({T['p_ub']}, {ph16}, static_cast<half>(0.0f), 128, {r}, UnaryRepeatParams({r + 1}, 1, 1, {kv // 16}));")
    enq_deq("p_ub", 0)
    w(0, f"DataCopy({ws['P']}[{slot} * {q * kv} + {h} * {r * 16}], {T['p_ub']}, DataCopyParams({kv // 16}, {r}, 1, {q - r}));")
    free("p_ub", 0)
    w(0, f"CrossCoreSetFlag<0x2, PIPE_MTE3>({f_p});")
    # acc = acc * alpha_j + O_j; after the tile's last block O = f16(acc / l)
    upd_body: list[tuple[int, str]] = []
    L = upd_body
    jj = "faJj"
    w(0, f"CrossCoreWaitFlag({f_o});  // O_j of this tile from the AIC")
    alloc("o_ub", 0)
    w(0, f"DataCopy({T['o_ub']}, {ws['O']}[{slot_of(jj, uu)} * {q * d} + {h} * {r * d}], {r * d});")
    enq_deq("o_ub", 0)
    w(0, f"Brcb({brc}, {st}[{base} + {4 * r} + ({jj} % 2) * {r}], {r // 8}, BrcbRepeatParams(1, 8));")
    for half in range(d // 64):
        w(0, f"Mul({acc}[{half * 64}], {acc}[{half * 64}], {brc}, 64, {r}, BinaryRepeatParams(1, 1, 0, {d // 8}, {d // 8}, 1));")
    w(0, f"Add({acc}, {acc}, {T['o_ub']}, {r * d});")
    free("o_ub", 0)
    w(0, f"if ({last}) {{")
    w(1, f"Brcb({brc}, {l_}, {r // 8}, BrcbRepeatParams(1, 8));")
    for half in range(d // 64):
        w(1, f"Div({acc}[{half * 64}], {acc}[{half * 64}], {brc}, 64, {r}, BinaryRepeatParams(1, 1, 0, {d // 8}, {d // 8}, 1));")
    alloc("out_ub", 1)
    w(1, f"Cast({T['out_ub']}, {acc}, RoundMode::CAST_RINT, {r * d});")
    enq_deq("out_ub", 1)
    w(1, f"DataCopy({gm['O']}[{q0u} * {d}], {T['out_ub']}, {r * d});")
    free("out_ub", 1)
    w(0, "}")
    origin = low.where(src.stmts[0])
    cube_m, vec_m = names.fresh("FlashCube"), names.fresh("FlashVec")
    ph.methods.append(Method(cube_m, (), [Line(s_, dd, origin) for dd, s_ in cube], "phase"))
    ph.methods.append(Method(vec_m, (), [Line(s_, dd, origin) for dd, s_ in vec], "phase"))
    ph.methods.append(Method(smx, (blk, h, js, uu, tt, nbs), [Line(s_, dd, origin) for dd, s_ in smx_body], "phase"))
    ph.methods.append(Method(upd, (blk, h, jj, uu, q0u, last), [Line(s_, dd, origin) for dd, s_ in upd_body], "phase"))
    ph.methods.append(Method(qk_m, (blk, jq, *nbp), [Line(s_, dd, origin) for dd, s_ in qk_lines], "phase"))
    return cube_m, vec_m
