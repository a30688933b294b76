"""Vector instruction selection for innermost nests over UB locals (count-form API).

A nest `for j in lo..hi { stmts }` (or a perfect 2-D nest whose operands are contiguous over
both loops) is replaced by one instruction sequence per statement when:

1. every statement is `T[.., j] = e` or a reduction `s op= e` into a `j`-independent target;
2. every tensor access that depends on `j` is a UB local with `j` (coefficient 1) in its last
   index only, starting 32 B aligned; every other operand is a `j`-independent scalar
   (a literal, const, rank-0 temp, or a local element read with `GetValue`);
3. a tensor written in the body is accessed only at that same index (so running each
   statement over all `j` before the next equals running the iterations in order);
4. arithmetic is in f16 or f32; reductions are `max=`/`min=`, or `+=` into f32.

Instruction table (x, y vectors; s a scalar):

| IR | Ascend C |
|---|---|
| `x + y`, `x - y`, `x * y`, `x / y`, `max(x, y)`, `min(x, y)` | `Add Sub Mul Div Max Min` |
| `x + s`, `x - s`, `x * s`, `max(x, s)`, `min(x, s)` | `Adds` (`-s`), `Muls`, `Maxs`, `Mins` |
| `s - x`, `-x` | `Muls(-1)` then `Adds` |
| `x / s`, `s / x` | `Duplicate` then `Div` (exact division, not a reciprocal) |
| `exp log sqrt rsqrt abs` | `Exp Ln Sqrt Rsqrt Abs` |
| `f32(x)`, `f16(x)` | `Cast` (`CAST_NONE` widening, `CAST_RINT` narrowing) |
| `T[j] = s` | `Duplicate` |
| `s max= x`, `s min= x`, `s += x` (f32) | `ReduceMax`, `ReduceMin`, `ReduceSum`, then a scalar combine after `V_S` sync |

A per-row scalar (`mx[i]` in `x[i, j] - mx[i]`) is read once per row with `GetValue` and fed
to the scalar form of the instruction. Intermediates live in a per-phase `VECCALC` TBuf,
sized and admitted by `temporaries.py` (the rule the capacity model shares).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import ir
from ..affine import Affine, to_affine
from ..dtypes import Ty, promote
from .cexpr import CTYPE
from .plan import Line, NestChoice
from .temporaries import fits, needs_api_temp, over_capacity, slot_bytes

if TYPE_CHECKING:
    from .lower import PhaseEmitter

VEC_TYPES = ("f16", "f32")
UNARY = {"exp": "Exp", "log": "Ln", "sqrt": "Sqrt", "rsqrt": "Rsqrt", "abs": "Abs"}


class NoMatch(Exception):
    pass


@dataclass
class Vec:
    ref: str  # LocalTensor expression
    dtype: str
    tmp: int = -1  # slot index when a temporary


@dataclass
class Scal:
    code: str
    ty: Ty


class _Sel:
    def __init__(self, pe: "PhaseEmitter", loops: list[ir.For], n: int, depth: int) -> None:
        self.pe = pe
        self.low = pe.low
        self.loops = loops
        self.vars = {lp.var for lp in loops}
        self.n = n
        self.depth = depth
        self.lines: list[Line] = []
        self.instrs: list[str] = []
        self.slots = 0
        self.free: list[int] = []
        self.used_slots = 0
        self.slot_bytes = slot_bytes(n)
        self.origin = ""
        self.purposes: list[str] = []

    # ---- temporaries --------------------------------------------------------------------
    @property
    def need(self) -> int:
        """Bytes of temporaries this selection uses (slots x slot bytes)."""
        return self.slots * self.slot_bytes

    def choice(self, where: str, fallback: str = "", capacity: bool = False) -> NestChoice:
        """The plan record of this selection, with its temporaries."""
        lp = self.loops[0]
        return NestChoice(where, tuple(self.instrs), fallback, self.pe.ph.index,
                          lp.label or lp.var, self.need, self.n, self.slots,
                          tuple(self.purposes), capacity, needs_api_temp(self.instrs),
                          (self.n // self.inner_n, self.inner_n) if self.inner_n else (self.n,))

    def alloc(self, dtype: str, purpose: str = "expression temporaries") -> Vec:
        if purpose not in self.purposes:
            self.purposes.append(purpose)
        k = self.free.pop() if self.free else self.slots
        if k == self.slots:
            self.slots += 1
        ref = f"{self.pe.ph.tmp_name}.ReinterpretCast<{CTYPE[dtype]}>()" + (f"[{k * self.slot_bytes // ir.DTYPE_BYTES[dtype]}]" if k else "")
        return Vec(ref, dtype, k)

    def release(self, v: Vec | Scal) -> None:
        if isinstance(v, Vec) and v.tmp >= 0:
            self.free.append(v.tmp)

    def emit(self, text: str, instr: str) -> None:
        self.lines.append(Line(text, self.depth, self.origin))
        if instr not in self.instrs:
            self.instrs.append(instr)

    # ---- operands -----------------------------------------------------------------------
    def depends(self, e: ir.Expr) -> bool:
        return any(isinstance(x, ir.Name) and x.name in self.vars for x in ir.sub_exprs(e))

    def access_ref(self, a: ir.Access) -> Vec:
        info = self.low.info.get(a.tensor)
        if info is None or info.kind != "local" or info.scope != "ub":
            raise NoMatch(f"`{a.tensor}` is not a UB local")
        total = Affine((), 0)
        inner = self.loops[-1].var
        for d, (e, st) in enumerate(zip(a.indices, info.strides)):
            af = to_affine(e, self.low.sizes)
            if af is None:
                raise NoMatch("non-affine index")
            last = d == len(a.indices) - 1
            for v in self.vars:
                c = af.coeff(v)
                if c and not (last and v == inner and c == 1) and not (len(self.loops) == 2 and v == self.loops[0].var):
                    raise NoMatch(f"`{a.tensor}` is not unit-stride in `{inner}`")
            total = total + af.scale(st)
        if len(self.loops) == 2:
            # collapsed 2-D: the outer variable must step by exactly one row of n_inner
            o = self.loops[0].var
            if total.coeff(o) != self.inner_n:
                raise NoMatch(f"`{a.tensor}` is not contiguous over the 2-D nest")
        base = Affine.make({k: v for k, v in total.coeffs if k not in self.vars}, total.const)
        for lp in self.loops:
            lo = to_affine(lp.lo, self.low.sizes)
            if lo is None:
                raise NoMatch("non-affine bound")
            base = base + lo.scale(total.coeff(lp.var))
        es = ir.DTYPE_BYTES[info.dtype]
        if any((k * es) % 32 for _, k in base.coeffs) or (base.const * es) % 32:
            raise NoMatch(f"`{a.tensor}` operand is not 32 B aligned")
        from .cexpr import affine_cpp

        off = affine_cpp(base, self.low.names)
        return Vec(info.cname if off == "0" else f"{info.cname}[{off}]", info.dtype)

    inner_n = 0

    def scalar(self, e: ir.Expr) -> Scal:
        code, ty = self.pe.ex.value(e)
        return Scal(code, ty)

    # ---- expressions ---------------------------------------------------------------------
    def as_type(self, v: Vec | Scal, dtype: str, dest: Vec | None = None) -> Vec | Scal:
        if isinstance(v, Scal):
            return Scal(self.pe.ex.conv(v.code, v.ty, Ty(dtype)), Ty(dtype))
        if v.dtype == dtype:
            return v
        if (v.dtype, dtype) not in (("f16", "f32"), ("f32", "f16")):
            raise NoMatch(f"no vector Cast {v.dtype} -> {dtype}")
        out = self.out_for(dtype, dest, "Cast staging")
        mode = "CAST_NONE" if dtype == "f32" else "CAST_RINT"
        self.emit(f"Cast({out.ref}, {v.ref}, RoundMode::{mode}, {self.n});", "Cast")
        self.release(v)
        return out

    def out_for(self, dtype: str, dest: Vec | None, purpose: str = "expression temporaries") -> Vec:
        return dest if dest is not None and dest.dtype == dtype else self.alloc(dtype, purpose)

    def compile(self, e: ir.Expr, dest: Vec | None = None) -> Vec | Scal:
        """Vector code for `e`; the last instruction writes `dest` when given and of the
        result's dtype (every instruction is elementwise, so `dest` may alias an operand)."""
        if not self.depends(e):
            return self.scalar(e)
        if isinstance(e, ir.Access):
            return self.access_ref(e)
        if isinstance(e, ir.Call) and e.func in ("f16", "f32"):
            return self.as_type(self.compile(e.args[0]), e.func, dest)
        if isinstance(e, ir.Unary):
            x = self.compile(e.operand)
            assert isinstance(x, Vec)
            self.check_type(x.dtype)
            out = self.out_for(x.dtype, dest)
            self.emit(f"Muls({out.ref}, {x.ref}, {CTYPE[x.dtype]}(-1.0f), {self.n});", "Muls")
            self.release(x)
            return out
        if isinstance(e, ir.Call) and e.func in UNARY:
            x = self.compile(e.args[0])
            assert isinstance(x, Vec)
            self.check_type(x.dtype)
            out = self.out_for(x.dtype, dest)
            self.emit(f"{UNARY[e.func]}({out.ref}, {x.ref}, {self.n});", UNARY[e.func])
            self.release(x)
            return out
        if isinstance(e, ir.Call) and e.func in ("max", "min"):
            return self.binop(e.func, e.args[0], e.args[1], dest)
        if isinstance(e, ir.Binary) and e.op in ir.ARITH_OPS:
            return self.binop(e.op, e.lhs, e.rhs, dest)
        raise NoMatch(f"no vector instruction for `{type(e).__name__}`" + (f" `{e.func}`" if isinstance(e, ir.Call) else ""))

    def check_type(self, dtype: str) -> None:
        if dtype not in VEC_TYPES:
            raise NoMatch(f"vector arithmetic in {dtype}")

    def ty_of(self, e: ir.Expr) -> Ty:
        return self.pe.ex.value(e)[1]

    def binop(self, op: str, l: ir.Expr, r: ir.Expr, dest: Vec | None = None) -> Vec:
        comp = promote(self.ty_of(l), self.ty_of(r))
        if comp.weak:
            raise NoMatch("weakly typed vector arithmetic")
        dt = comp.dtype
        self.check_type(dt)
        a = self.as_type(self.compile(l), dt)
        b = self.as_type(self.compile(r), dt)
        ct = CTYPE[dt]
        out = self.out_for(dt, dest)
        n = self.n
        name = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "max": "Max", "min": "Min"}[op]
        if isinstance(a, Vec) and isinstance(b, Vec):
            self.emit(f"{name}({out.ref}, {a.ref}, {b.ref}, {n});", name)
        elif isinstance(a, Vec):
            assert isinstance(b, Scal)
            if op == "+":
                self.emit(f"Adds({out.ref}, {a.ref}, {b.code}, {n});", "Adds")
            elif op == "-":
                self.emit(f"Adds({out.ref}, {a.ref}, {ct}(-({b.code})), {n});", "Adds")
            elif op == "*":
                self.emit(f"Muls({out.ref}, {a.ref}, {b.code}, {n});", "Muls")
            elif op in ("max", "min"):
                self.emit(f"{name}s({out.ref}, {a.ref}, {b.code}, {n});", name + "s")
            else:
                dup = self.alloc(dt)
                self.emit(f"Duplicate({dup.ref}, {b.code}, {n});", "Duplicate")
                self.emit(f"Div({out.ref}, {a.ref}, {dup.ref}, {n});", "Div")
                self.release(dup)
        else:
            assert isinstance(a, Scal) and isinstance(b, Vec)
            if op in ("+", "*", "max", "min"):
                sname = {"+": "Adds", "*": "Muls", "max": "Maxs", "min": "Mins"}[op]
                self.emit(f"{sname}({out.ref}, {b.ref}, {a.code}, {n});", sname)
            elif op == "-":
                self.emit(f"Muls({out.ref}, {b.ref}, {ct}(-1.0f), {n});", "Muls")
                self.emit(f"Adds({out.ref}, {out.ref}, {a.code}, {n});", "Adds")
            else:
                dup = self.alloc(dt)
                self.emit(f"Duplicate({dup.ref}, {a.code}, {n});", "Duplicate")
                self.emit(f"Div({out.ref}, {dup.ref}, {b.ref}, {n});", "Div")
                self.release(dup)
        self.release(a)
        self.release(b)
        return out

    # ---- statements ----------------------------------------------------------------------
    def store(self, s: ir.Assign) -> None:
        tgt = s.target
        self.origin = self.low.where(s)
        if not isinstance(tgt, ir.Access) or not self.depends(tgt):
            self.reduce(s)
            return
        dst = self.access_ref(tgt)
        self.check_type(dst.dtype)
        if s.op != "=":
            comp = promote(Ty(dst.dtype), self.ty_of(s.value))
            if comp.weak or comp.dtype != dst.dtype or s.op not in ("+=", "*=", "max=", "min="):
                raise NoMatch(f"`{s.op}` into a {dst.dtype} vector in {comp.dtype}")
            v = self.as_type(self.compile(s.value), dst.dtype)
            name = {"+=": "Add", "*=": "Mul", "max=": "Max", "min=": "Min"}[s.op]
            if isinstance(v, Scal):
                sname = {"+=": "Adds", "*=": "Muls", "max=": "Maxs", "min=": "Mins"}[s.op]
                self.emit(f"{sname}({dst.ref}, {dst.ref}, {v.code}, {self.n});", sname)
            else:
                self.emit(f"{name}({dst.ref}, {dst.ref}, {v.ref}, {self.n});", name)
                self.release(v)
            return
        v = self.compile(s.value, dst)
        if isinstance(v, Scal):
            c = self.pe.ex.conv(v.code, v.ty, Ty(dst.dtype))
            self.emit(f"Duplicate({dst.ref}, {c}, {self.n});", "Duplicate")
            return
        if v.ref == dst.ref:
            return
        if v.dtype == dst.dtype:  # a plain copy of another local
            self.emit(f"Adds({dst.ref}, {v.ref}, {CTYPE[dst.dtype]}(0.0f), {self.n});", "Adds")
        elif (v.dtype, dst.dtype) in (("f16", "f32"), ("f32", "f16")):
            mode = "CAST_NONE" if dst.dtype == "f32" else "CAST_RINT"
            self.emit(f"Cast({dst.ref}, {v.ref}, RoundMode::{mode}, {self.n});", "Cast")
        else:
            raise NoMatch(f"no vector Cast {v.dtype} -> {dst.dtype}")
        self.release(v)

    def reduce(self, s: ir.Assign) -> None:
        if len(self.loops) != 1:
            raise NoMatch("reduction over a 2-D nest")
        tgt = s.target
        name = tgt.tensor if isinstance(tgt, ir.Access) else tgt.name
        decl = self.low.decls[name]
        if s.op not in ("max=", "min=", "+="):
            raise NoMatch(f"`{s.op}` reduction")
        vt = self.ty_of(s.value)
        comp = promote(Ty(decl.dtype), vt)
        if comp.weak or comp.dtype not in VEC_TYPES or (s.op == "+=" and comp.dtype != "f32"):
            raise NoMatch(f"`{s.op}` into {decl.dtype}")
        v = self.as_type(self.compile(s.value), comp.dtype)
        if not isinstance(v, Vec):  # `s max= 2.0`: nothing to reduce over the loop
            raise NoMatch(f"the `{s.op}` operand does not depend on the loop")
        res = self.alloc(comp.dtype, "reduction work areas")
        work = self.alloc(comp.dtype, "reduction work areas")
        api = {"max=": "ReduceMax", "min=": "ReduceMin", "+=": "ReduceSum"}[s.op]
        self.emit(f"{api}({res.ref}, {v.ref}, {work.ref}, {self.n});", api)
        self.emit("SetFlag<HardEvent::V_S>(0);", "SetFlag")
        self.emit("WaitFlag<HardEvent::V_S>(0);", "WaitFlag")
        got = f"{res.ref}.GetValue(0)" if "[" not in res.ref else f"{res.ref.split('[')[0]}.GetValue({res.ref.split('[')[1][:-1]})"
        ct = CTYPE[comp.dtype]
        old_ref = self.pe.load(name, tgt.indices) if isinstance(tgt, ir.Access) else self.pe.scalar_ref(name)
        old = self.pe.ex.conv(old_ref, Ty(decl.dtype), comp)
        comb = {"max=": f"ascx_max<{ct}>({old}, {got})", "min=": f"ascx_min<{ct}>({old}, {got})", "+=": f"({old} + {got})"}[s.op]
        new = self.pe.ex.conv(comb, comp, Ty(decl.dtype))
        info = self.low.info[name]
        if info.kind == "scalar":
            self.emit(f"{info.cname} = {new};", "GetValue")
        else:
            off = self.pe.offset(name, tgt.indices) if isinstance(tgt, ir.Access) else "0"
            self.emit(f"{info.cname}.SetValue({off}, {new});", "SetValue")
        self.release(v)
        self.release(res)
        self.release(work)


def _const_trip(lp: ir.For, sizes: dict[str, int]) -> int | None:
    lo, hi = to_affine(lp.lo, sizes), to_affine(lp.hi, sizes)
    if lo is None or hi is None or not (hi - lo).is_const():
        return None
    return (hi - lo).const


def _same_index_check(stmts: tuple[ir.Stmt, ...]) -> None:
    written: dict[str, set] = {}
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Access):
            written.setdefault(s.target.tensor, set()).add(s.target.indices)
    for s in stmts:
        for e in ir.stmt_exprs(s):
            for x in ir.sub_exprs(e):
                if isinstance(x, ir.Access) and x.tensor in written and {x.indices} != written[x.tensor]:
                    raise NoMatch(f"`{x.tensor}` is accessed at different indices")
    # a reduction target must not be read inside the loop
    targets = {s.target.name for s in stmts if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
    for s in stmts:
        if isinstance(s, ir.Assign):
            for x in ir.sub_exprs(s.value):
                if isinstance(x, ir.Name) and x.name in targets:
                    raise NoMatch(f"`{x.name}` is read while reduced")


def select_vector(pe: "PhaseEmitter", loop: ir.For, depth: int) -> list[Line] | None:
    """Instructions for the nest `loop`, or None (the caller emits scalar code)."""
    low = pe.low
    if pe.ph.core != "vec":
        return None
    loops = [loop]
    if len(loop.body) == 1 and isinstance(loop.body[0], ir.For):
        loops.append(loop.body[0])
    body = loops[-1].body
    if not all(isinstance(s, ir.Assign) for s in body):
        return _distributed(pe, loop, depth) if len(loops) == 1 else None
    trips = [_const_trip(lp, low.sizes) for lp in loops]
    where = f"{low.where(loop)} `{loop.label or loop.var}`"
    try:
        if any(t is None or t <= 0 for t in trips):
            raise NoMatch("loop bounds are not constant")
        _same_index_check(body)  # type: ignore[arg-type]
        sel = _Sel(pe, loops, trips[0] * (trips[1] if len(loops) == 2 else 1), depth)
        sel.inner_n = trips[-1] if len(loops) == 2 else 0
        if len(loops) == 2:
            # only a fully contiguous 2-D nest is collapsed; otherwise the outer loop stays
            for s in body:
                if isinstance(s, ir.Assign) and not (isinstance(s.target, ir.Access) and sel.depends(s.target)):
                    raise NoMatch("reduction in a 2-D nest")
        for s in body:
            sel.store(s)  # type: ignore[arg-type]
        if not fits(pe, sel.need, sel.instrs):
            pe.no_vector_need = sel
            raise NoMatch(over_capacity(pe, sel.need, sel.instrs))
    except NoMatch as e:
        if len(loops) == 2:
            alt = _interchanged(pe, loops, depth)
            if alt is not None:
                return alt
            return None  # let the inner loop try on its own
        pe.no_vector_reason = str(e)
        return None
    pe.no_vector_need = None
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, sel.need)
    low.nests.append(sel.choice(where))
    return sel.lines


def _interchanged(pe: "PhaseEmitter", loops: list[ir.For], depth: int) -> list[Line] | None:
    """`for d { for j { T[.., d] op= e } }` with `d` the unit-stride axis: a C++ loop over `j`
    around vector instructions over `d` (each element still accumulates in `j` order, so the
    result is the scalar nest's; this is the axpy form of a matrix-vector product)."""
    outer, inner = loops
    body = inner.body
    if len(body) != 1 or not isinstance(body[0], ir.Assign) or not isinstance(body[0].target, ir.Access):
        return None
    st = body[0]
    tgt = st.target
    assert isinstance(tgt, ir.Access)
    if any(isinstance(x, ir.Name) and x.name == inner.var for i in tgt.indices for x in ir.sub_exprs(i)):
        return None
    if any(isinstance(x, ir.Access) and x.tensor == tgt.tensor and x.indices != tgt.indices for x in ir.sub_exprs(st.value)):
        return None
    low = pe.low
    n = _const_trip(outer, low.sizes)
    if not n or n <= 0:
        return None
    sel = _Sel(pe, [outer], n, depth + 1)
    try:
        sel.store(st)
        if not fits(pe, sel.need, sel.instrs):
            return None
    except NoMatch:
        return None
    v = low.names(inner.var)
    lo, hi = pe.ex.index(inner.lo), pe.ex.index(inner.hi)
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, sel.need)
    low.nests.append(sel.choice(f"{low.where(outer)} `{outer.label or outer.var}` (vectorised over `{outer.var}`, "
                                f"loop over `{inner.var}`)"))
    return [Line(f"for (int32_t {v} = {lo}; {v} < {hi}; ++{v}) {{", depth, low.where(inner)), *sel.lines,
            Line("}", depth, low.where(inner))]


def _distributed(pe: "PhaseEmitter", loop: ir.For, depth: int) -> list[Line] | None:
    """`for d { S1; for j { S2 }; S3 }` with every written element indexed by `d` (unit
    stride) and touched only at that index: the `d` loop is distributed over its statements
    (legal: iteration `d` touches element `d` of each written tensor only, so every element
    sees its statements in the original order), each vectorised over `d`, the inner `j` loops
    kept as C++ loops (axpy form). This is P·V with its init and normalisation:
    `acc[i, d] = 0; for j { acc[i, d] += p[i, j] * f32(V[j, d]) }; O[i, d] = f16(acc[i, d] / sm[i])`."""
    low = pe.low
    n = _const_trip(loop, low.sizes)
    leaves: list[ir.Assign] = []
    for x in loop.body:
        leaves.extend([x] if isinstance(x, ir.Assign) else list(x.body))  # type: ignore[arg-type]
    if not n or n <= 0:
        return None
    try:
        _same_index_check(tuple(leaves))
    except NoMatch:
        return None
    for st in leaves:
        tgt = st.target
        if not isinstance(tgt, ir.Access) or not any(isinstance(x, ir.Name) and x.name == loop.var
                                                    for i in tgt.indices for x in ir.sub_exprs(i)):
            return None  # a reduction over `d` would be read before it completes
    for x in loop.body:
        if isinstance(x, ir.For):
            for st in x.body:
                if any(isinstance(y, ir.Name) and y.name == x.var for i in st.target.indices for y in ir.sub_exprs(i)):  # type: ignore[union-attr]
                    return None
    lines: list[Line] = []
    instrs: list[str] = []
    need = 0
    widest: _Sel | None = None
    for x in loop.body:
        inner = isinstance(x, ir.For)
        sel = _Sel(pe, [loop], n, depth + (1 if inner else 0))
        try:
            for st in (x.body if isinstance(x, ir.For) else (x,)):
                sel.store(st)  # type: ignore[arg-type]
        except NoMatch:
            return None
        if widest is None or sel.need > widest.need:
            widest = sel
        need = max(need, sel.need)
        instrs.extend(i for i in sel.instrs if i not in instrs)
        if isinstance(x, ir.For):
            v = low.names(x.var)
            lines.append(Line(f"for (int32_t {v} = {pe.ex.index(x.lo)}; {v} < {pe.ex.index(x.hi)}; ++{v}) {{", depth, low.where(x)))
            lines.extend(sel.lines)
            lines.append(Line("}", depth, low.where(x)))
        else:
            lines.extend(sel.lines)
    if not fits(pe, need, instrs):
        return None
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, need)
    assert widest is not None
    choice = widest.choice(f"{low.where(loop)} `{loop.label or loop.var}` (distributed over its statements, "
                           f"vectorised over `{loop.var}`)")
    low.nests.append(NestChoice(choice.where, tuple(instrs), "", choice.phase, choice.nest, choice.temp_bytes,
                                choice.temp_elems, choice.temp_slots, choice.temp_purposes, False,
                                needs_api_temp(instrs), choice.temp_shape))
    return lines
