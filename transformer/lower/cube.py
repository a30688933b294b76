"""Cube instruction selection: a staged matmul nest -> `DataCopy(Nd2Nz)`, `LoadData`, `Mmad`, `Fixpipe`.

A cube phase (one that touches `@l1/@l0a/@l0b/@l0c` locals) is selected as a whole or not
at all: every statement that touches a cube local must match one of the patterns below,
else `select_cube` returns None and the phase runs as scalar AIC code on row-major
buffers (with a warning saying why). Patterns (all extents constant multiples of 16,
operands f16, accumulator f32, every loop of a nest starting at 0):

| IR | Ascend C |
|---|---|
| `copy X_l1[0:R, 0:C] <- G[r:r+R, c:c+C]` (G row-major in GM) | `DataCopy(X_l1, G[off], Nd2NzParams(1, R, C, 0, ldG, R, 1, 0))` (ND -> Nz) |
| `copy A_l0a <- A_l1` (A used as `A_l0a[i, k]`) | `LoadData` per K block (Nz -> Zz, no transpose) |
| `copy B_l0b <- B_l1` (B used as `B_l0b[k, j]`, stored [K, N]) | `LoadData` per K block, `ifTranspose` (Nz -> Zn) |
| `copy B_l0b <- B_l1` (B used as `B_l0b[j, k]`, stored [N, K], e.g. Kᵀ) | `LoadData` of contiguous fractals (Nz of Bᵀ is Zn of B) |
| `for i { for j { [acc[i,j] = 0.0] for k { acc[i,j] += f32(A[i,k]) * f32(B[..]) } } }` | `Mmad(acc, A, B, MmadParams(M, N, K))` |
| `for i { for j { acc[i,j] = 0.0 } }` followed by a loop nest holding the Mmad | nothing: the Mmad of the first iteration has `cmatrixInitVal = true`, later ones accumulate |
| `for i { for j { G[..i.., ..j..] = f16(acc[i,j]) } }` (or `max(acc, 0.0)` inside) | `Fixpipe(G[off], acc, FixpipeParamsV220)`: Nz -> ND, `quantPre = F322F16`, `reluEn` |
| the store right after the K loop inside the Mmad nest (init inside too) | `Mmad` then `Fixpipe` |
| `copy G[..] <- acc[0:M, 0:N]` (f32 GM, e.g. a workspace) | `Fixpipe` with `NoQuant` |

Fractal layouts (C0 = 16 halves, a fractal is 16 x 16 = 512 B; docs/emulator.md):
L1 Nz `(c/16)*R*16 + r*16 + c%16`; L0A Zz `((m/16)*K1 + k/16)*256 + (m%16)*16 + k%16`;
L0B Zn `((k/16)*N1 + n/16)*256 + (n%16)*16 + k%16`; L0C Nz `((n/16)*M + m)*16 + n%16`.
Every instruction works on whole tiles, so the emitted code computes what the IR does; the
only difference is Mmad's accumulation order (exact products summed, rounded to f32 once
per K block, where the interpreter rounds after every `+=`).

Size: about 600 lines: one pattern matcher (`_Matcher`) over the staged-matmul patterns
in the table above; its match methods build one partial selection together, so they stay
in one class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import ir
from ..affine import Affine, to_affine
from ..regions import slice_extent
from .cexpr import affine_cpp, wide_stride
from .plan import Buffer, Line, NestChoice

if TYPE_CHECKING:
    from .lower import Lowering, PhaseEmitter

CUBE_SCOPES = ("l1", "l0a", "l0b", "l0c")
OPERAND_TYPES = ("f16",)
FRACTAL = 16


class NoCube(Exception):
    pass


def _const(e: ir.Expr, sizes: dict[str, int]) -> int | None:
    a = to_affine(e, sizes)
    return a.const if a is not None and a.is_const() else None


def _trip(lp: ir.For, sizes: dict[str, int]) -> tuple[int, int] | None:
    lo, hi = _const(lp.lo, sizes), _const(lp.hi, sizes)
    if lo is None or hi is None:
        return None
    return lo, hi - lo


def _is_var(e: ir.Expr, v: str) -> bool:
    return isinstance(e, ir.Name) and e.name == v


def _paren(cond: str) -> str:
    return cond if cond == "true" else f"({cond})"


def _is_zero(e: ir.Expr) -> bool:
    return isinstance(e, (ir.FloatLit, ir.IntLit)) and e.value == 0


@dataclass
class _Mmad:
    acc: str
    a: str
    b: str
    m: int
    n: int
    k: int
    init_inside: bool
    loc: Any
    init_cond: str = ""  # C++ condition for cmatrixInitVal ("" = not decided yet)
    store: "_Store | None" = None  # a store fused into the nest after the K loop


@dataclass
class _Store:
    acc: str
    dst: str
    index: tuple[ir.Expr, ...] | None  # Access indices (assign form)
    m: int
    n: int
    relu: bool
    region: ir.Region | None = None  # copy form


@dataclass
class CubeSelection:
    """What `select_cube` decided for a phase; `PhaseEmitter` asks it for each loop / copy."""

    low: "Lowering"
    buffers: dict[str, Buffer]
    mmads: dict[int, _Mmad] = field(default_factory=dict)
    inits: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (acc, comment)
    stores: dict[int, _Store] = field(default_factory=dict)
    copies: dict[int, str] = field(default_factory=dict)  # id -> nd2nz | loadA | loadB_T | loadB | fix
    b_stored_nk: dict[str, bool] = field(default_factory=dict)  # l0b buffer -> stored as [N, K]
    acc_ques: set[str] = field(default_factory=set)  # accumulators whose queue the nests drive

    # ---- PhaseEmitter hooks -------------------------------------------------------------
    def handles(self, s: ir.For) -> bool:
        return id(s) in self.mmads or id(s) in self.inits or id(s) in self.stores

    def emit(self, pe: "PhaseEmitter", s: ir.For, depth: int, loop_vars: list[str]) -> list[Line]:
        low = self.low
        origin = low.where(s)
        if id(s) in self.inits:
            acc, why = self.inits[id(s)]
            b = self.buffers[acc]
            out = [Line(f"// `{acc} = 0`: {why}", depth, origin)]
            if acc in self.acc_ques:
                out.append(Line(f"{b.tensor} = {b.holder}.AllocTensor<{b.ctype}>();", depth, origin))
            low.nests.append(NestChoice(f"{origin} `{s.label or s.var}` ({acc} = 0)", ("Mmad(cmatrixInitVal)",)))
            return out
        if id(s) in self.mmads:
            mm = self.mmads[id(s)]
            p = low.names.fresh("mmadParams")
            acc, a, b = self.buffers[mm.acc], self.buffers[mm.a], self.buffers[mm.b]
            out = []
            if mm.store is not None and mm.acc in self.acc_ques:
                out.append(Line(f"{acc.tensor} = {acc.holder}.AllocTensor<{acc.ctype}>();", depth, origin))
            out += [Line(f"MmadParams {p}({mm.m}, {mm.n}, {mm.k}, false, 0, false, false, false);", depth, origin),
                    Line(f"{p}.cmatrixInitVal = {_paren(mm.init_cond)};", depth, origin),
                    Line(f"Mmad({acc.tensor}, {a.tensor}, {b.tensor}, {p});", depth, origin)]
            low.nests.append(NestChoice(f"{origin} `{s.label or s.var}`", ("Mmad", "Fixpipe") if mm.store else ("Mmad",)))
            if mm.store is not None:
                out += self._store_lines(pe, mm.store, s, depth, origin)
            return out
        low.nests.append(NestChoice(f"{origin} `{s.label or s.var}`", ("Fixpipe",)))
        return self._store_lines(pe, self.stores[id(s)], s, depth, origin)

    def _store_lines(self, pe: "PhaseEmitter", st: _Store, s: ir.For, depth: int, origin: str) -> list[Line]:
        acc = self.buffers[st.acc]
        out = []
        if st.acc in self.acc_ques:
            out.append(Line(f"{acc.holder}.EnQue({acc.tensor});", depth, origin))
            out.append(Line(f"{acc.tensor} = {acc.holder}.DeQue<{acc.ctype}>();", depth, origin))
        else:
            out.append(Line("SetFlag<HardEvent::M_FIX>(0);", depth, origin))
            out.append(Line("WaitFlag<HardEvent::M_FIX>(0);", depth, origin))
        assert st.index is not None
        off, ld = self._gm_offset(pe, st.dst, st.index, s)
        out.extend(self._fixpipe(st, off, ld, depth, origin))
        if st.acc in self.acc_ques:
            out.append(Line(f"{acc.holder}.FreeTensor({acc.tensor});", depth, origin))
        else:
            out.append(Line("SetFlag<HardEvent::FIX_M>(0);", depth, origin))
            out.append(Line("WaitFlag<HardEvent::FIX_M>(0);", depth, origin))
        return out

    def copy(self, pe: "PhaseEmitter", c: ir.Copy, depth: int) -> list[Line] | None:
        how = self.copies.get(id(c))
        if how is None:
            return None
        low = self.low
        origin = low.where(c)
        where = f"{origin} copy `{c.dst.tensor} <- {c.src.tensor}`"
        if how == "nd2nz":
            dst = self.buffers[c.dst.tensor]
            start, _, dims = pe.region(c.src)
            (r, _, ld), (cc, _, _) = [(d[1], None, d[2]) for d in dims if d[1] != 1]
            g = low.info[c.src.tensor].cname
            src = g if start == "0" else f"{g}[{start}]"
            low.nests.append(NestChoice(where, ("DataCopy(Nd2NzParams)",)))
            return [Line(f"DataCopy({dst.tensor}, {src}, Nd2NzParams(1, {r}, {cc}, 0, {ld}, {r}, 1, 0));", depth, origin)]
        if how == "fix":
            st = self.stores[id(c)]
            start, _, dims = pe.region(c.dst)
            ld = [d[2] for d in dims if d[1] != 1][0] if st.m > 1 else st.n
            low.nests.append(NestChoice(where, ("Fixpipe",)))
            return self._fixpipe(st, start, ld, depth, origin)
        dst, src = self.buffers[c.dst.tensor], self.buffers[c.src.tensor]
        R, C = src.shape
        fr = 512 // 2  # elements of one fractal (16-bit operands)
        if how == "loadA":  # L1 Nz [M, K] -> L0A Zz: one call per K block (column group)
            m1, k1 = R // FRACTAL, C // FRACTAL
            params, steps, instr = f"0, {m1}, 1, 0, {k1 - 1}, false, 0", (fr, R * FRACTAL), "LoadData"
        elif how == "loadB_T":  # L1 Nz [K, N] -> L0B Zn: transpose each fractal, one call per K block
            k1, n1 = R // FRACTAL, C // FRACTAL
            params, steps, instr = f"0, {n1}, {k1}, 0, 0, true, 0", (n1 * fr, fr), "LoadData(ifTranspose)"
        else:  # loadB: the L1 Nz tile of Bᵀ [N, K] is already Zn of B: contiguous fractals
            n1, k1 = R // FRACTAL, C // FRACTAL
            if n1 * k1 <= 255:
                params, k1 = f"0, {n1 * k1}, 1, 0, 0, false, 0", 1
            else:
                params = f"0, {n1}, 1, 0, 0, false, 0"
            steps, instr = (n1 * fr, n1 * fr), "LoadData"
        low.nests.append(NestChoice(where, (instr,)))
        call = f"LoadData({dst.tensor}{{d}}, {src.tensor}{{s}}, LoadData2DParams({params}));"
        if k1 == 1:
            return [Line(call.format(d="", s=""), depth, origin)]
        kb = "ascx_kb"  # a fixed counter name (RESERVED): its loop nests nothing
        return [Line(f"for (int32_t {kb} = 0; {kb} < {k1}; ++{kb}) {{", depth, origin),
                Line(call.format(d=f"[{kb} * {steps[0]}]", s=f"[{kb} * {steps[1]}]"), depth + 1, origin),
                Line("}", depth, origin)]

    # ---- helpers ------------------------------------------------------------------------
    def _fixpipe(self, st: _Store, off: str, ld: int, depth: int, origin: str) -> list[Line]:
        low = self.low
        acc = self.buffers[st.acc]
        g = low.info[st.dst]
        p = low.names.fresh("fixParams")
        dst = g.cname if off == "0" else f"{g.cname}[{off}]"
        out = [Line(f"FixpipeParamsV220 {p}({st.n}, {st.m}, {acc.shape[0]}, {ld}, {'true' if st.relu else 'false'});",
                    depth, origin)]
        if g.dtype != acc.dtype:
            out.append(Line(f"{p}.quantPre = QuantMode_t::F322F16;", depth, origin))
        out.append(Line(f"Fixpipe({dst}, {acc.tensor}, {p});", depth, origin))
        return out

    def _gm_offset(self, pe: "PhaseEmitter", tensor: str, index: tuple[ir.Expr, ...], s: ir.For) -> tuple[str, int]:
        flat, iv, jv = _flat_store(self.low, tensor, index, s)
        ld = flat.coeff(iv)
        base = Affine.make({k: v for k, v in flat.coeffs if k not in (iv, jv)}, flat.const)
        info = self.low.info[tensor]
        return affine_cpp(base, self.low.names, wide_stride(info.shape, info.strides)), ld


def _flat_store(low: "Lowering", tensor: str, index: tuple[ir.Expr, ...], s: ir.For) -> tuple[Affine, str, str]:
    info = low.info[tensor]
    flat = Affine((), 0)
    for e, st in zip(index, info.strides):
        a = to_affine(e, low.sizes)
        if a is None:
            raise NoCube(f"`{tensor}` index is not affine")
        flat = flat + a.scale(st)
    inner = s.body[0]
    assert isinstance(inner, ir.For)
    return flat, s.var, inner.var


# --------------------------------------------------------------------------------------
# matching


class _Matcher:
    def __init__(self, low: "Lowering", buffers: dict[str, Buffer], top_cores: int) -> None:
        self.low = low
        self.sizes = low.sizes
        self.buffers = buffers
        self.sel = CubeSelection(low, buffers)
        self.seen: set[int] = set()
        self.top_cores = top_cores
        self.l0_role: dict[str, str] = {}  # l0 buffer -> A | B_kn | B_nk
        self.pending_init: list[tuple[int, str]] = []  # (id of the Mmad nest, cmatrixInitVal condition)
        self.where: dict[str, list[tuple[str, int, int]]] = {}  # acc -> [(init|store, id(block), index)]

    def cube_local(self, name: str) -> bool:
        b = self.buffers.get(name)
        return b is not None and b.scope in CUBE_SCOPES

    def touches(self, s: ir.Stmt) -> set[str]:
        return {t for t in ir.names_used((s,)) if self.cube_local(t)}

    def mark(self, s: Any) -> None:
        if id(s) in self.seen:
            raise NoCube("a statement object is shared between two places")
        self.seen.add(id(s))

    # ---- statements ---------------------------------------------------------------------
    def block(self, stmts: tuple[ir.Stmt, ...], path: list[ir.For]) -> None:
        for idx, s in enumerate(stmts):
            if not self.touches(s):
                continue
            self.mark(s)
            if isinstance(s, ir.Copy):
                self.copy(s)
            elif isinstance(s, ir.Assign):
                raise NoCube(f"statement on `{sorted(self.touches(s))[0]}` outside a matmul nest")
            elif self.mmad(s) is not None:
                continue
            elif self.init(s, stmts[idx + 1:], path):
                self.where.setdefault(self.sel.inits[id(s)][0], []).append(("init", id(stmts), idx))
            elif self.store(s):
                self.where.setdefault(self.sel.stores[id(s)].acc, []).append(("store", id(stmts), idx))
            else:
                if not any(isinstance(x, (ir.For, ir.Copy)) for x in s.body):
                    raise NoCube(f"nest `{s.label or s.var}` on `{sorted(self.touches(s))[0]}` is not a matmul, "
                                 "accumulator init or L0C store")
                self.block(s.body, path + [s])

    def copy(self, c: ir.Copy) -> None:
        d, s = c.dst.tensor, c.src.tensor
        db, sb = self.buffers.get(d), self.buffers.get(s)
        dsc = db.scope if db is not None else "gm"
        ssc = sb.scope if sb is not None else "gm"
        if dsc == "l1" and ssc == "gm" and self.low.info.get(s) is not None and self.low.info[s].kind == "gm":
            self.nd2nz(c)
        elif dsc in ("l0a", "l0b") and ssc == "l1":
            self.full(c.dst)
            self.full(c.src)
            assert db is not None and sb is not None
            if db.shape != sb.shape or db.dtype != sb.dtype:
                raise NoCube(f"copy `{d} <- {s}` changes shape or type")
            self.sel.copies[id(c)] = "load:" + d  # resolved once the Mmad roles are known
        elif dsc == "gm" and ssc == "l0c":
            self.fix_copy(c)
        else:
            raise NoCube(f"no cube data path for copy {ssc} -> {dsc}")

    def full(self, r: ir.Region) -> None:
        b = self.buffers[r.tensor]
        for dim, ext in zip(r.dims, b.shape):
            if not isinstance(dim, ir.Slice) or _const(dim.lo, self.sizes) != 0 or _const(dim.hi, self.sizes) != ext:
                raise NoCube(f"copy covers part of `{r.tensor}` (cube copies move whole tiles)")

    def check_tile(self, b: Buffer) -> None:
        if len(b.shape) != 2 or any(x % FRACTAL for x in b.shape) or not all(b.shape):
            raise NoCube(f"`{b.name}` {list(b.shape)} is not a 2-D tile of multiples of 16")
        if b.scope == "l0c":
            if b.dtype != "f32":
                raise NoCube(f"accumulator `{b.name}` is {b.dtype}, not f32")
        elif b.dtype not in OPERAND_TYPES:
            raise NoCube(f"cube operand `{b.name}` is {b.dtype} (f16 supported)")

    def nd2nz(self, c: ir.Copy) -> None:
        b = self.buffers[c.dst.tensor]
        self.check_tile(b)
        self.full(c.dst)
        g = self.low.info[c.src.tensor]
        if g.dtype != b.dtype:
            raise NoCube(f"copy `{b.name} <- {c.src.tensor}` changes type")
        decl = self.low.decls.get(c.src.tensor)
        if decl is not None and decl.layout not in (None, "ND"):
            raise NoCube(f"`{c.src.tensor}` is {decl.layout} in GM (Nd2Nz reads ND)")
        exts: list[tuple[int, int]] = []
        for dim, st in zip(c.src.dims, g.strides):
            if isinstance(dim, ir.Slice):
                e = slice_extent(dim, self.sizes)
                if e is None:
                    raise NoCube(f"copy from `{c.src.tensor}` has a non-constant extent")
                if e != 1:
                    exts.append((e, st))
            elif to_affine(dim, self.sizes) is None:
                raise NoCube(f"copy from `{c.src.tensor}` has a non-affine index")
        if len(exts) != 2 or exts[1][1] != 1 or (exts[0][0], exts[1][0]) != b.shape:
            raise NoCube(f"copy into `{b.name}` is not a 2-D row-major block of its shape")
        if exts[0][1] > 65535 or b.shape[0] > 4095:
            raise NoCube(f"copy into `{b.name}`: Nd2Nz strides out of range")
        self.sel.copies[id(c)] = "nd2nz"

    def fix_copy(self, c: ir.Copy) -> None:
        acc = self.buffers[c.src.tensor]
        self.check_tile(acc)
        self.full(c.src)
        g = self.low.info[c.dst.tensor]
        if g.dtype != "f32":
            raise NoCube(f"copy of `{acc.name}` into {g.dtype} GM")
        exts = []
        for dim, st in zip(c.dst.dims, g.strides):
            if isinstance(dim, ir.Slice):
                e = slice_extent(dim, self.sizes)
                if e is None:
                    raise NoCube(f"copy into `{c.dst.tensor}` has a non-constant extent")
                if e != 1:
                    exts.append((e, st))
        if len(exts) != 2 or exts[1][1] != 1 or (exts[0][0], exts[1][0]) != acc.shape:
            raise NoCube(f"copy of `{acc.name}` is not a 2-D row-major block in GM")
        st = _Store(acc.name, c.dst.tensor, None, acc.shape[0], acc.shape[1], False, c.dst)
        self.sel.stores[id(c)] = st
        self.sel.copies[id(c)] = "fix"

    # ---- nests --------------------------------------------------------------------------
    def two_loops(self, s: ir.For) -> tuple[ir.For, ir.For, int, int] | None:
        if len(s.body) != 1 or not isinstance(s.body[0], ir.For):
            return None
        inner = s.body[0]
        ti, tj = _trip(s, self.sizes), _trip(inner, self.sizes)
        if ti is None or tj is None or ti[0] != 0 or tj[0] != 0:
            return None
        return s, inner, ti[1], tj[1]

    def mmad(self, s: ir.For) -> _Mmad | None:
        two = self.two_loops(s)
        if two is None:
            return None
        li, lj, m, n = two
        body = lj.body
        init_inside = False
        if len(body) in (2, 3) and isinstance(body[0], ir.Assign):
            init_inside = True
            ini = body[0]
            if not (ini.op == "=" and _is_zero(ini.value) and isinstance(ini.target, ir.Access)):
                return None
            body = body[1:]
        fused = None
        if init_inside and len(body) == 2 and isinstance(body[1], ir.Assign):
            fused = body[1]  # `C[..] = f16(acc[i, j])` right after the K loop: Fixpipe after the Mmad
            body = body[:1]
        if len(body) != 1 or not isinstance(body[0], ir.For):
            return None
        lk = body[0]
        tk = _trip(lk, self.sizes)
        if tk is None or tk[0] != 0 or len(lk.body) != 1 or not isinstance(lk.body[0], ir.Assign):
            return None
        st = lk.body[0]
        i, j, k = li.var, lj.var, lk.var
        tgt = st.target
        if st.op != "+=" or not isinstance(tgt, ir.Access) or not self.cube_local(tgt.tensor):
            return None
        acc = self.buffers[tgt.tensor]
        if acc.scope != "l0c" or len(tgt.indices) != 2 or not (_is_var(tgt.indices[0], i) and _is_var(tgt.indices[1], j)):
            return None
        if init_inside:
            t0 = lj.body[0].target  # type: ignore[union-attr]
            if t0 != tgt:
                return None
        v = st.value
        if not (isinstance(v, ir.Binary) and v.op == "*"):
            return None
        ops = [self.operand(x) for x in (v.lhs, v.rhs)]
        if any(o is None for o in ops):
            return None
        a = next((o for o in ops if o is not None and self.buffers[o.tensor].scope == "l0a"), None)
        b = next((o for o in ops if o is not None and self.buffers[o.tensor].scope == "l0b"), None)
        if a is None or b is None:
            return None
        if not (_is_var(a.indices[0], i) and _is_var(a.indices[1], k)):
            raise NoCube(f"`{a.tensor}` is not indexed [{i}, {k}]")
        if _is_var(b.indices[0], k) and _is_var(b.indices[1], j):
            role = "B_kn"
            kdim = self.buffers[b.tensor].shape[0]
        elif _is_var(b.indices[0], j) and _is_var(b.indices[1], k):
            role = "B_nk"
            kdim = self.buffers[b.tensor].shape[1]
        else:
            raise NoCube(f"`{b.tensor}` is not indexed [{k}, {j}] or [{j}, {k}]")
        for bb in (acc, self.buffers[a.tensor], self.buffers[b.tensor]):
            self.check_tile(bb)
        kk = tk[1]
        if (m, n) != acc.shape or self.buffers[a.tensor].shape != (m, kk) or kdim != kk:
            raise NoCube(f"matmul nest `{s.label or s.var}` does not cover whole tiles ({m}x{n}x{kk})")
        for name, role_ in ((a.tensor, "A"), (b.tensor, role)):
            if self.l0_role.setdefault(name, role_) != role_:
                raise NoCube(f"`{name}` is used in two different roles")
        mm = _Mmad(acc.name, a.tensor, b.tensor, m, n, kk, init_inside, s, "true" if init_inside else "")
        if fused is not None:
            mm.store = self.store_stmt(s, li, lj, m, n, fused)
            if mm.store is None or mm.store.acc != acc.name:
                raise NoCube(f"the statement after the K loop of `{s.label or s.var}` is not a store of `{acc.name}`")
            self.where.setdefault(acc.name, []).append(("fused", 0, 0))
        self.sel.mmads[id(s)] = mm
        return mm

    def operand(self, e: ir.Expr) -> ir.Access | None:
        if isinstance(e, ir.Call) and e.func == "f32" and len(e.args) == 1:
            e = e.args[0]
        else:
            return None
        if not isinstance(e, ir.Access) or not self.cube_local(e.tensor) or len(e.indices) != 2:
            return None
        if self.buffers[e.tensor].dtype not in OPERAND_TYPES:
            return None
        return e

    def init(self, s: ir.For, rest: tuple[ir.Stmt, ...], path: list[ir.For]) -> bool:
        two = self.two_loops(s)
        if two is None:
            return False
        li, lj, m, n = two
        if len(lj.body) != 1 or not isinstance(lj.body[0], ir.Assign):
            return False
        st = lj.body[0]
        tgt = st.target
        if not (st.op == "=" and _is_zero(st.value) and isinstance(tgt, ir.Access) and self.cube_local(tgt.tensor)):
            return False
        acc = self.buffers[tgt.tensor]
        if acc.scope != "l0c" or not (_is_var(tgt.indices[0], li.var) and _is_var(tgt.indices[1], lj.var)) or (m, n) != acc.shape:
            return False
        # the next statement touching acc is a loop nest whose only use of acc is one Mmad
        nxt = next((x for x in rest if acc.name in self.touches(x)), None)
        if not isinstance(nxt, ir.For):
            raise NoCube(f"`{acc.name} = 0` is not followed by the matmul loop")
        found: list[tuple[ir.For, list[ir.For]]] = []

        def walk(stmts: tuple[ir.Stmt, ...], loops: list[ir.For]) -> None:
            for x in stmts:
                if acc.name not in self.touches(x):
                    continue
                if isinstance(x, ir.For):
                    two = self.two_loops(x)
                    if two is not None and len(two[1].body) == 1 and isinstance(two[1].body[0], ir.For):
                        found.append((x, loops))
                        continue
                    walk(x.body, loops + [x])
                else:
                    found.append((x, loops))  # type: ignore[arg-type]

        walk((nxt,), [])
        if len(found) != 1 or not isinstance(found[0][0], ir.For):
            raise NoCube(f"`{acc.name}` is used more than once in the loop after `{acc.name} = 0`")
        nest, loops = found[0]
        conds = []
        for lp in loops:
            t = _trip(lp, self.sizes)
            if t is None or t[1] < 1:
                raise NoCube(f"loop `{lp.var}` around the matmul has no constant trip count")
            if not path and self.top_cores > 1:
                raise NoCube("the K loop is split over cores")
            conds.append(f"{self.low.names(lp.var)} == {t[0]}")
        self.pending_init.append((id(nest), " && ".join(conds) or "true"))
        first = (lambda c: c if c != "true" else "always")(" && ".join(conds) or "true")
        self.sel.inits[id(s)] = (acc.name, f"the first Mmad ({first}) overwrites it (cmatrixInitVal), later ones accumulate")
        return True

    def store(self, s: ir.For) -> bool:
        two = self.two_loops(s)
        if two is None:
            return False
        li, lj, m, n = two
        if len(lj.body) != 1 or not isinstance(lj.body[0], ir.Assign):
            return False
        got = self.store_stmt(s, li, lj, m, n, lj.body[0])
        if got is None:
            return False
        self.sel.stores[id(s)] = got
        return True

    def store_stmt(self, s: ir.For, li: ir.For, lj: ir.For, m: int, n: int, st: ir.Assign) -> _Store | None:
        """`G[..] = f16(acc[i, j])` (or f32, or relu'd) inside the (i, j) nest `s`."""
        tgt = st.target
        if st.op != "=" or not isinstance(tgt, ir.Access) or self.low.info.get(tgt.tensor) is None \
                or self.low.info[tgt.tensor].kind != "gm":
            return None
        gdt = self.low.info[tgt.tensor].dtype
        v = st.value
        if isinstance(v, ir.Call) and v.func == gdt and gdt == "f16" and len(v.args) == 1:
            v = v.args[0]
        elif gdt != "f32":
            raise NoCube(f"store into {gdt} `{tgt.tensor}` is not `{gdt}(acc)`")
        relu = False
        if isinstance(v, ir.Call) and v.func == "max" and len(v.args) == 2:
            a0, a1 = v.args
            if _is_zero(a1):
                v, relu = a0, True
            elif _is_zero(a0):
                v, relu = a1, True
        if not (isinstance(v, ir.Access) and self.cube_local(v.tensor)):
            raise NoCube(f"store into `{tgt.tensor}` is not a (relu'd) conversion of the accumulator")
        acc = self.buffers[v.tensor]
        if acc.scope != "l0c" or not (_is_var(v.indices[0], li.var) and _is_var(v.indices[1], lj.var)):
            raise NoCube(f"store reads `{v.tensor}` at other indices than [{li.var}, {lj.var}]")
        self.check_tile(acc)
        if m > acc.shape[0] or n > acc.shape[1]:
            raise NoCube(f"store of `{acc.name}` is larger than the tile")
        flat, iv, jv = _flat_store(self.low, tgt.tensor, tgt.indices, s)
        if flat.coeff(jv) != 1 or flat.coeff(iv) < n:
            raise NoCube(f"store into `{tgt.tensor}` is not row-major in [{iv}, {jv}]")
        return _Store(acc.name, tgt.tensor, tgt.indices, m, n, relu)


def select_cube(low: "Lowering", src: Any, buffers: dict[str, Buffer]) -> CubeSelection | None:
    """Select cube instructions for the whole phase `src`, or return None (with a warning)."""
    m = _Matcher(low, buffers, src.cores)
    try:
        m.block(src.stmts, [])
        for nid, cond in m.pending_init:
            if nid not in m.sel.mmads:
                raise NoCube("the loop after an accumulator init holds no matmul nest")
            m.sel.mmads[nid].init_cond = cond
        for mm in m.sel.mmads.values():
            if not mm.init_cond:
                raise NoCube(f"accumulator `{mm.acc}` is never initialised before its matmul")
        for cid, how in list(m.sel.copies.items()):
            if how.startswith("load:"):
                role = m.l0_role.get(how[5:])
                if role is None:
                    raise NoCube(f"`{how[5:]}` feeds no matmul")
                m.sel.copies[cid] = {"A": "loadA", "B_kn": "loadB_T", "B_nk": "loadB"}[role]
        used = {b.name for b in buffers.values() if b.scope in CUBE_SCOPES}
        for name in used:
            b = buffers[name]
            if b.scope in ("l0a", "l0b") and name not in m.l0_role:
                raise NoCube(f"`{name}` feeds no matmul")
    except NoCube as e:
        low.warn(src.stmts[0], f"cube phase `{src.label}`: no cube instruction selection ({e}); "
                               "it runs as scalar AIC code")
        return None
    sel = m.sel
    for b in buffers.values():
        if b.scope in CUBE_SCOPES:
            b.layout = {"l1": "Nz", "l0a": "Zz", "l0b": "Zn", "l0c": "Nz"}[b.scope]
    # an accumulator initialised by one nest and stored by one later nest of the same block
    # (no copies) is a CO1 queue driven by those nests: AllocTensor at the init, EnQue /
    # DeQue + Fixpipe + FreeTensor at the store (the official samples' shape); any other
    # accumulator without a queue protocol is ordered by M_FIX / FIX_M flags
    for acc, places in m.where.items():
        b = buffers[acc]
        paired = len(places) == 2 and places[0][0] == "init" and places[1][0] == "store" and places[0][1] == places[1][1]
        if (paired or [p[0] for p in places] == ["fused"]) and b.kind == "buf" and not b.roles:
            b.kind, b.depth, b.holder = "que", 1, low.names.derived(b.name, "que_{}")
            sel.acc_ques.add(acc)
    return sel
