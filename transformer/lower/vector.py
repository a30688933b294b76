"""Vector instruction selection for innermost nests over UB locals (count-form API).

A nest `for j in lo..hi { stmts }` (or a perfect 2-D nest whose operands are contiguous over
both loops) is replaced by one instruction sequence per statement when:

1. every statement is `T[.., j] = e` or a reduction `s op= e` into a `j`-independent target;
2. every tensor access that depends on `j` is a UB local with `j` (coefficient 1) in its last
   index only, starting 32 B aligned; every other operand is a `j`-independent scalar
   (a literal, const, rank-0 temp, or a local element read with `GetValue`);
3. a tensor written in the body is accessed only at that same index (so running each
   statement over all `j` before the next equals running the iterations in order);
4. arithmetic is in f16 or f32 (bf16 through f32; i32 `+ - * max min`, compare, select);
   reductions are `max=`/`min=`/`+=` into a float accumulator (into f16/bf16: in f32,
   rounded once) or into i32 from i32 (a pairwise tree) —
   which dtype each instruction takes is `vec_types.py`.

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
| `tanh(x)` | `1 - 2 / (exp(2x) + 1)` in f32: `Muls Exp Adds`, `Div` of -2 by the vector, `Adds` (`Cast`s around an f16 `x`) |
| `erf sin cos sigmoid exp2 log1p floor`, `pow(x, c)` | the intrinsic table's composition of the instructions here (`compose.py`) |
| a loop variable (or an index expression of it) as a value | `CreateVecIndex` (i32), then `Muls`/`Adds` for a step or offset (`index_vector`) |
| bf16 arithmetic | in f32: `Cast` up, the f32 instruction, one `Cast` down (`narrowed`) |
| `select(x <op> y, a, b)` on data | `Compare` / `CompareScalar` into a bit mask, `Select` (`select_data`; two literals in the stored type; nested selects that spell `c1 and c2` / `c1 or c2`: `And` / `Or` of the masks, one `Select`) |
| i32 `+ - * max min`, `-x` | `Add Sub Mul Max Min`, `Adds Muls Maxs Mins` (wrapping, exact) |
| i32 `select(a <op> b, x, y)` | `Min`/`Sub`, `Cast` to f32, `CompareScalar` with 0 (exact, `int_cmp_mask`); `Select` on the bits as float |
| `s += x`, `s max= x`, `s min= x` into i32 | a pairwise `Add`/`Max`/`Min` tree (`int_tree`), the last 8 folded after `V_S` |
| `i32(x_i8)` | `Cast` int8_t -> half, then on through f32 |
| `s += x` into f16/bf16 | `Cast` to f32, `ReduceSum`, combine in f32 rounded once |

A per-row scalar (`mx[i]` in `x[i, j] - mx[i]`) is read once per row with `GetValue` and fed
to the scalar form of the instruction. Intermediates live in a per-phase `VECCALC` TBuf,
sized and admitted by `temporaries.py` (the rule the capacity model shares).

Size: about 1250 lines: one expression selector (`_Sel`, the table above) and the nest shapes
that feed it (row context, dot products, interchanged and distributed nests); every shape
ends in the same selector and its temporaries, so they are kept with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .. import ir
from ..affine import Affine, is_quasi_affine, to_affine
from ..dtypes import WEAK_INT, Ty, promote
from ..intexpr import affine_extent, eval_const, tail_max_extent
from ..intrinsics import BY_NAME as INTRINSIC
from ..printer import format_expr
from .cexpr import CTYPE
from .compose import compile_composed
from .instr import REPEAT, Flag, Loop, Operand, Placed, RangeFill, Repeat, ScalarStep, VecOp, names_of, render, repeat_chunks
from .plan import Line, NestChoice
from .temporaries import fits, needs_api_temp, over_capacity, slot_bytes
from .vec_types import FLOAT_VEC, INT_VEC, arith_reason, cast_reason, reduce_dtype, reduce_reason

if TYPE_CHECKING:
    from .lower import PhaseEmitter

VEC_TYPES = ("f16", "f32")
FLOAT_TYPES = ("f16", "bf16", "f32")  # Cast between any two; bf16 arithmetic runs in f32
SELECT_TYPES = ("f16", "f32", "i32")  # compare and select: native in half/float, composed in i32
UNARY = {"exp": "Exp", "log": "Ln", "sqrt": "Sqrt", "rsqrt": "Rsqrt", "abs": "Abs"}


class NoMatch(Exception):
    pass


@dataclass
class Vec:
    op: Operand  # the LocalTensor operand
    tmp: int = -1  # slot index when a temporary

    @property
    def dtype(self) -> str:
        return self.op.dtype

    @property
    def ref(self) -> str:
        return self.op.cpp()


@dataclass
class Scal:
    code: str
    ty: Ty


_BIN = {"+": "Add", "-": "Sub", "*": "Mul", "/": "Div", "max": "Max", "min": "Min"}
_SCALAR_FORM = {"+": "Adds", "*": "Muls", "max": "Maxs", "min": "Mins"}
_COMPOUND = {"+=": "+", "*=": "*", "max=": "max", "min=": "min"}
_CMPMODE = {"<": "LT", ">": "GT", "==": "EQ", "<=": "LE", ">=": "GE", "!=": "NE"}
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}  # s op x == x FLIP[op] s


def quasi_affine_reason(tensor: str, stmts: tuple[ir.Stmt, ...], sizes: dict[str, int]) -> str | None:
    """Why `tensor` in the nest `stmts` has no vector code when one of its accesses there is
    at a quasi-affine index (`X[s, d / 2]`): `tile` stages no such tensor (the footprint is
    not a box of affine bounds) and no vector pattern gathers it yet; None otherwise."""
    for st in ir.iter_stmts(stmts):
        for top in ir.stmt_exprs(st):
            for a in ir.sub_exprs(top):
                if isinstance(a, ir.Access) and a.tensor == tensor:
                    through = next((i for i in a.indices if isinstance(i, ir.Access)), None)
                    if through is not None:
                        return (f"`{tensor}` is read through the index tensor `{format_expr(through)}`: it stays in "
                                "GM and no vector pattern gathers it in this nest (the row_gather pattern copies "
                                "whole rows `D_ub[t, h] = T[ids[t], h]`)")
                    quasi = next((i for i in a.indices if is_quasi_affine(i) and to_affine(i, sizes) is None), None)
                    if quasi is not None:
                        return (f"`{tensor}` is accessed at a quasi-affine index `{format_expr(quasi)}` (floor "
                                "division or modulo): `tile` does not stage it and no vector pattern reads it yet")
    return None


def _typed_stand_ins(e: ir.Expr, bound: dict[str, Vec]) -> ir.Expr:
    """`e` with each bound step name replaced by a value of its dtype (`f32(0.0)`), so the
    scalar typer gives the type of an expression over a composition's steps."""
    if isinstance(e, ir.Name) and e.name in bound:
        return ir.Call(bound[e.name].dtype, (ir.FloatLit(0.0),))
    if isinstance(e, ir.Unary):
        return ir.Unary(e.op, _typed_stand_ins(e.operand, bound))
    if isinstance(e, ir.Binary):
        return ir.Binary(e.op, _typed_stand_ins(e.lhs, bound), _typed_stand_ins(e.rhs, bound))
    if isinstance(e, ir.Call):
        return ir.Call(e.func, tuple(_typed_stand_ins(a, bound) for a in e.args))
    return e


def _no_instruction(e: ir.Expr) -> str:
    """Why `e` has no vector instruction, in the kernel's own terms (its source text, never
    an internal class name)."""
    return f"no vector instruction for `{format_expr(e)}`"


class _Sel:
    NoMatch = NoMatch  # for the shapes in other modules (contract.py) that drive a selection
    Vec = Vec

    def __init__(self, pe: "PhaseEmitter", loops: list[ir.For], n: int, depth: int, ctx: "RowCtx | None" = None) -> None:
        self.pe = pe
        self.low = pe.low
        self.loops = loops
        self.vars = {lp.var for lp in loops}
        self.n = n  # the nest's (largest) trip count: what temporaries are sized for
        self.count: int | str = n  # the instructions' count: a C++ expression for a tail
        self.quantum = n  # the count is a multiple of this (a tail of whole rows: the row length)
        self.total = False  # a 2-D nest reduced over both loops into one element (pattern `collapsed-reduction`)
        self.depth = depth
        self.items: list[Placed] = []
        self.slots = 0
        self.free: list[int] = []
        self.slot_bytes = slot_bytes(n)
        self.origin = ""
        self.purposes: list[str] = []
        self.ctx = ctx if ctx is not None and len(loops) == 1 and ctx.n == n else None
        self.base_bytes = self.ctx.reserved if self.ctx is not None else 0
        self.made: dict[str, Vec] = {}  # row-cache entries this selection computed (committed on success)
        self.pre: list[Placed] = []  # hoisted items (run before the row loop)
        self.vs = ""  # V->S round trips: "row" / "element" (NestChoice.vs_round_trip)
        self.guard = 0  # slack after the slots: Compare reads whole 256 B past a ragged count
        self.table_sink: list[Placed] | None = None  # when set: Gather offset tables go here, built once
        self.tables: dict[tuple[int, ...], int] = {}  # their byte offsets in the scratch, by shape
        self.cse: dict[str, int] = {}  # uses of each repeated subexpression of the statement
        self.cse_vals: dict[str, Vec] = {}  # their values, once computed
        self.bound: dict[str, Vec] = {}  # a composed intrinsic's named steps, while it compiles (compose.py)

    # ---- temporaries --------------------------------------------------------------------
    @property
    def need(self) -> int:
        """Bytes of temporaries this selection uses (pinned row-cache slots + slots x slot bytes)."""
        return self.base_bytes + self.slots * self.slot_bytes + self.guard

    @property
    def instrs(self) -> list[str]:
        return names_of(self.pre + self.items)

    @property
    def lines(self) -> list[Line]:
        return render(self.items, self.depth)

    def choice(self, where: str, fallback: str = "", capacity: bool = False) -> NestChoice:
        """The plan record of this selection, with its temporaries and typed instructions."""
        lp = self.loops[0]
        # pinned row-context slots have this selection's slot size: the capacity model sees
        # `slots` equal slots (temporaries.py)
        return NestChoice(where, tuple(self.instrs), fallback, self.pe.ph.index,
                          lp.label or lp.var, self.need, self.n, self.slots + self.base_bytes // self.slot_bytes,
                          tuple(self.purposes), capacity, needs_api_temp(self.instrs),
                          (self.n // self.inner_n, self.inner_n) if self.inner_n else (self.n,),
                          tuple(self.pre + self.items), self.vs)

    def slot_operand(self, dtype: str, byte_off: int) -> Operand:
        return Operand(f"{self.pe.ph.tmp_name}.ReinterpretCast<{CTYPE[dtype]}>()", dtype,
                       str(byte_off // ir.DTYPE_BYTES[dtype]))

    def alloc(self, dtype: str, purpose: str = "expression temporaries") -> Vec:
        if purpose not in self.purposes:
            self.purposes.append(purpose)
        k = self.free.pop() if self.free else self.slots
        if k == self.slots:
            self.slots += 1
        return Vec(self.slot_operand(dtype, self.base_bytes + k * self.slot_bytes), k)

    def release(self, v: Vec | Scal) -> None:
        if isinstance(v, Vec) and v.tmp >= 0:
            self.free.append(v.tmp)

    def emit(self, item: VecOp | Flag | ScalarStep | Loop) -> None:
        self.items.append(Placed(item, self.origin))

    def vop(self, op: str, dst: Vec, *srcs: Vec, scalar: str | None = None, **kw: object) -> None:
        self.emit(VecOp(op, dst.op, tuple(s.op for s in srcs), scalar, self.count, **kw))  # type: ignore[arg-type]

    # ---- operands -----------------------------------------------------------------------
    def depends(self, e: ir.Expr) -> bool:
        return any(isinstance(x, ir.Name) and (x.name in self.vars or x.name in self.bound) for x in ir.sub_exprs(e))

    def access_ref(self, a: ir.Access, write: bool = False, into: Vec | None = None) -> Vec:
        """The operand of the UB local access `a` over the nest: the tensor at the first
        iteration's element when contiguous over the nest (and 32 B aligned); a read that is
        strided, broadcast or unaligned is gathered into a temporary (`gathered`, or into
        `into` when given) instead."""
        info = self.low.info.get(a.tensor)
        if info is None or info.kind != "local" or info.scope != "ub":
            raise NoMatch(quasi_affine_reason(a.tensor, self.loops[0].body, self.low.sizes)
                          or f"`{a.tensor}` is not a UB local")
        total = Affine((), 0)
        inner = self.loops[-1].var
        strided = ""
        for d, (e, st) in enumerate(zip(a.indices, info.strides)):
            af = to_affine(e, self.low.sizes)
            if af is None:
                raise NoMatch("non-affine index")
            last = d == len(a.indices) - 1
            for v in self.vars:
                c = af.coeff(v)
                if c and not (last and v == inner and c == 1) and not (len(self.loops) == 2 and v == self.loops[0].var):
                    strided = f"`{a.tensor}` is not unit-stride in `{inner}`"
            total = total + af.scale(st)
        if len(self.loops) == 2 and not strided:
            # collapsed 2-D: the outer variable must step by exactly one row of n_inner
            o = self.loops[0].var
            if total.coeff(o) != self.inner_n or total.coeff(inner) != 1:
                strided = f"`{a.tensor}` is not contiguous over the 2-D nest"
            elif self.valid_inner not in (0, self.inner_n):
                strided = f"`{a.tensor}` is read into rows padded to {self.inner_n}"
        base = Affine.make({k: v for k, v in total.coeffs if k not in self.vars}, total.const)
        for lp in self.loops:
            lo = to_affine(lp.lo, self.low.sizes)
            if lo is None:
                raise NoMatch("non-affine bound")
            base = base + lo.scale(total.coeff(lp.var))
        es = ir.DTYPE_BYTES[info.dtype]
        if not strided and (any((k * es) % 32 for _, k in base.coeffs) or (base.const * es) % 32):
            strided = f"`{a.tensor}` operand is not 32 B aligned"
        from .cexpr import affine_cpp

        if strided or into is not None:
            if write:
                raise NoMatch(strided)
            if not strided:
                return Vec(Operand(info.cname, info.dtype, affine_cpp(base, self.low.names)))
            return self.gathered(info, total, base, strided, into)
        return Vec(Operand(info.cname, info.dtype, affine_cpp(base, self.low.names)))

    def gathered(self, info: "object", total: Affine, base: Affine, why: str, into: Vec | None) -> Vec:
        """A strided / broadcast / unaligned read as a contiguous temporary (or `into`): its
        byte offsets built by vector instructions, then one `Gather` (gather.py)."""
        from .cexpr import affine_cpp
        from .gather import GATHER_TYPES, NoGather, gather, offset_table, table_shift

        dt = info.dtype  # type: ignore[attr-defined]
        if dt not in GATHER_TYPES:
            raise NoMatch(f"{why} (no Gather of {dt})")
        valid = None
        if len(self.loops) == 2:
            n0, n1 = self.n // self.inner_n, self.inner_n
            c_o, c_i = total.coeff(self.loops[0].var), total.coeff(self.loops[1].var)
            if self.valid_inner not in (0, n1):
                valid = self.valid_inner
        else:
            n0, n1, c_o, c_i = 1, self.n, 0, total.coeff(self.loops[0].var)
        if len(self.loops) == 2 and self.table_sink is None and not (c_o and c_i):
            raise NoMatch(why)  # a row or column broadcast: the per-row 1-D nest reads it better
        if isinstance(self.count, str) and min(c_o, c_i) < 0:
            raise NoMatch(f"{why} (a descending gather over a tail)")
        es = ir.DTYPE_BYTES[dt]
        key = (n0, n1, c_o, c_i, es, valid or n1)
        tmp = self.pe.ph.tmp_name
        if key in self.tables:  # the same table, built before the nest's loops (`table_sink`)
            slot, byte_off = None, self.tables[key]
        else:
            if self.table_sink is not None:  # live across the loops around the nest: a slot never reused
                self.free, saved = [], self.free
                slot = self.alloc("f32", "gather offsets")
                self.free = saved
            else:
                slot = self.alloc("f32", "gather offsets")
            byte_off = int(slot.op.offset) * 4
            try:
                table = offset_table(Operand(f"{tmp}.ReinterpretCast<int32_t>()", "i32", str(byte_off // 4)), n0, n1, c_o, c_i, es, valid)
            except NoGather as e:
                raise NoMatch(f"{why} ({e})") from None
            if self.table_sink is not None:  # kept: built once, before the loops around the nest
                self.table_sink.extend(Placed(it, self.origin) for it in table)
                self.tables[key] = byte_off
                slot = None
            else:
                for it in table:
                    self.emit(it)
        out = into if into is not None and into.dtype == dt else self.alloc(dt, "gathered operands")
        start = base + Affine((), table_shift(n0, valid or n1, c_o, c_i))
        offs = Operand(f"{tmp}.ReinterpretCast<uint32_t>()", "u32", str(byte_off // 4))
        self.emit(gather(out.op, info.cname, dt, offs, f"({affine_cpp(start, self.low.names)}) * {es}", self.count))  # type: ignore[attr-defined]
        if slot is not None:
            self.release(slot)
        return out

    inner_n = 0
    valid_inner = 0  # a 2-D tile's real columns when its rows are padded to `inner_n` (contract.py)

    def scalar(self, e: ir.Expr) -> Scal:
        code, ty = self.pe.ex.value(e)
        return Scal(code, ty)

    # ---- expressions ---------------------------------------------------------------------
    def cast(self, v: Vec, dtype: str, out: Vec) -> None:
        # CAST_NONE: exact widening (rounds to nearest even where i32 -> f32 is inexact);
        # CAST_RINT: narrowing, and f32 -> i32 (nearest even, saturating as the IR converts)
        mode = "CAST_NONE" if dtype == "f32" or v.dtype == "i8" else "CAST_RINT"
        self.vop("Cast", out, v, round=mode)  # (rows2d: the mask/repeat form over partial rows)

    def as_type(self, v: Vec | Scal, dtype: str, dest: Vec | None = None) -> Vec | Scal:
        if isinstance(v, Scal):
            return Scal(self.pe.ex.conv(v.code, v.ty, Ty(dtype)), Ty(dtype))
        if v.dtype == dtype:
            return v
        why = cast_reason(v.dtype, dtype)
        if why is not None:
            raise NoMatch(why)
        if v.dtype == "i8" and dtype != "f16":  # Cast int8_t -> half (exact), then on from f16
            return self.as_type(self.as_type(v, "f16"), dtype, dest)
        if "f32" not in (v.dtype, dtype) and v.dtype != "i8":  # f16 <-> bf16 (or an i32) through the exact f32 (one rounding)
            return self.as_type(self.as_type(v, "f32"), dtype, dest)
        out = self.out_for(dtype, dest, "Cast staging")
        self.cast(v, dtype, out)
        self.release(v)
        return out

    def out_for(self, dtype: str, dest: Vec | None, purpose: str = "expression temporaries") -> Vec:
        return dest if dest is not None and dest.dtype == dtype else self.alloc(dtype, purpose)

    def compile(self, e: ir.Expr, dest: Vec | None = None) -> Vec | Scal:
        """Vector code for `e`; the last instruction writes `dest` when given and of the
        result's dtype (every instruction is elementwise, so `dest` may alias an operand).
        A value the row context keeps (`RowCtx`) is computed once into its pinned slot."""
        if not self.depends(e):
            return self.scalar(e)
        if isinstance(e, ir.Access):
            return self.access_ref(e)
        if self.ctx is not None:
            key = self.ctx.key(e, self.loops[0])
            if key in self.ctx.pinned:
                return self.cached(key, e)
        if self.cse:
            return self.common(e, dest)
        return self.compile_new(e, dest)

    def common(self, e: ir.Expr, dest: Vec | None) -> Vec | Scal:
        """`e` computed once per statement when it occurs there more than once (`cse_uses`:
        the `f32(G[i])` of `silu(G) * U` written out): the first use computes it into a slot
        of its own, and every use gets it pinned (`tmp=-1`: an operand that is neither
        overwritten in place nor released). The slot is freed when the statement is done
        (`store`): a use compiled early (the left operand of the last instruction) is read
        after those compiled later."""
        from ..printer import format_expr

        key = format_expr(e)
        if key not in self.cse:
            return self.compile_new(e, dest)
        got = self.cse_vals.get(key)
        if got is None:
            got = self.compile_new(e, None)
            if not isinstance(got, Vec) or got.tmp < 0:  # a local or a scalar: nothing to keep
                del self.cse[key]
                return got
            self.cse_vals[key] = got
        return Vec(got.op)

    def cached(self, key: str, e: ir.Expr) -> Vec:
        """The row context's pinned copy of `e`: reused when still valid, else computed now
        (a hoisted value into the code before the row loop)."""
        ctx = self.ctx
        assert ctx is not None
        got = self.made.get(key) or ctx.ready.get(key)
        if got is not None:
            return got
        ty = self.ty_of(e)
        dt = ty.dtype
        if dt not in VEC_TYPES and ty != WEAK_INT:  # an index value: an i32 progression (index_vector)
            raise NoMatch(f"vector arithmetic in {dt}")
        slot = Vec(self.slot_operand(dt, ctx.pinned[key] * ctx.slot))
        if key in ctx.hoist:
            saved, self.items = self.items, []
            v = self.compile_new(e, slot)
            self.pre.extend(self.items)
            self.items = saved
        else:
            v = self.compile_new(e, slot)
        if isinstance(v, Vec) and v.op != slot.op:
            self.copy_into(slot, v)
            self.release(v)
        self.made[key] = slot
        return slot

    def copy_into(self, dst: Vec, v: Vec) -> None:
        if v.dtype == dst.dtype and v.dtype != "bf16":  # a plain copy of another local
            self.vop("Adds", dst, v, scalar=f"{CTYPE[dst.dtype]}(0.0f)")
        elif v.dtype == dst.dtype:  # bf16: no bf16 arithmetic; two exact Casts through f32
            t = self.as_type(v, "f32")
            assert isinstance(t, Vec)
            self.cast(t, "bf16", dst)
            self.release(t)
        elif v.dtype != dst.dtype and v.dtype in FLOAT_TYPES and dst.dtype in FLOAT_TYPES:
            self.as_type(v, dst.dtype, dst)
        else:
            raise NoMatch(f"no vector Cast {v.dtype} -> {dst.dtype}")

    def compile_new(self, e: ir.Expr, dest: Vec | None = None) -> Vec | Scal:
        if isinstance(e, ir.Call) and e.func in FLOAT_TYPES + INT_VEC:
            return self.as_type(self.compile(e.args[0]), e.func, dest)
        if isinstance(e, ir.Call) and e.func in ir.DTYPES:
            raise NoMatch(f"a conversion to {e.func} ({cast_reason('f32', e.func)})")
        if isinstance(e, ir.Unary) or (isinstance(e, ir.Call) and e.func in UNARY):
            x = self.compile(e.operand if isinstance(e, ir.Unary) else e.args[0])
            assert isinstance(x, Vec)
            narrow = x.dtype == "bf16"  # computed in f32, rounded once to bf16
            if narrow:
                x = self.as_type(x, "f32")  # type: ignore[assignment]
            self.check_arith("neg" if isinstance(e, ir.Unary) else e.func, x.dtype)
            out = self.out_for(x.dtype, None if narrow else dest)
            if isinstance(e, ir.Unary):
                self.vop("Muls", out, x, scalar=self.minus_one(x.dtype))
            else:
                self.vop(UNARY[e.func], out, x)
            self.release(x)
            return self.narrowed(out, dest) if narrow else out
        if isinstance(e, ir.Call) and e.func == "tanh":
            return self.tanh(e.args[0], dest)
        if isinstance(e, ir.Name) and e.name in self.bound:  # a composition's step (compose.py)
            return self.bound[e.name]
        if isinstance(e, (ir.Name, ir.Binary, ir.Unary)) and self.ty_of(e) == WEAK_INT:
            return self.index_vector(e, dest)  # loop variables as values (`c`, `c0 * 64 + c1`)
        if isinstance(e, ir.Call) and (e.func == "pow" or (e.func in INTRINSIC and INTRINSIC[e.func].compose)):
            return compile_composed(self, e, dest)
        if isinstance(e, ir.Call) and e.func in ("max", "min"):
            return self.binop(e.func, e.args[0], e.args[1], dest)
        if isinstance(e, ir.Call) and e.func == "select":
            cond = e.args[0]
            if isinstance(cond, ir.Binary) and cond.op in ir.COMPARE_OPS and \
                    (to_affine(ir.Binary("-", cond.lhs, cond.rhs), self.low.sizes) is None
                     or any(isinstance(x, ir.Name) and x.name in self.bound for x in ir.sub_exprs(cond))):
                return self.select_data(e, dest)
            return self.select_index(e, dest)
        if isinstance(e, ir.Binary) and e.op in ir.ARITH_OPS:
            return self.binop(e.op, e.lhs, e.rhs, dest)
        raise NoMatch(_no_instruction(e))

    def index_vector(self, e: ir.Expr, dest: Vec | None) -> Vec:
        """An index expression of the nest's loop variable used as a value (`f32(c)`, after
        `tile` `c0 * 64 + c1`): affine in it with step k, it is the arithmetic progression
        first, first + k, ... over the nest: `CreateVecIndex` in i32 (documented for int32_t
        on the A2) from `first` when k is 1, else from 0 then `Muls` k and `Adds` first. The
        IR computes index arithmetic in 64 bits: exact while the values fit i32. One loop
        only: over a collapsed 2-D nest the values are not one progression."""
        lp = self.loops[-1]
        a = to_affine(e, self.low.sizes)
        lo = to_affine(lp.lo, self.low.sizes)
        what = format_expr(e)
        if a is None:
            raise NoMatch(f"the index expression `{what}` is used as a value and is not affine")
        if len(self.loops) != 1 or any(a.coeff(lp2.var) for lp2 in self.loops[:-1]):
            raise NoMatch(f"the index expression `{what}` is used as a value in a 2-D nest (not one progression)")
        if lo is None:
            raise NoMatch(f"the index expression `{what}` is used as a value and its loop starts at a `min`/`max`")
        from .cexpr import affine_cpp

        bounds = self.low.var_bounds
        span = abs(a.const) + sum(abs(c) * max(abs(b) for b in bounds.get(v, (2**31, 2**31))) for v, c in a.coeffs)
        if span >= 2**31:
            raise NoMatch(f"the index expression `{what}` is used as a value and may not fit i32")
        k = a.coeff(lp.var)
        first = Affine.make({v: c for v, c in a.coeffs if v != lp.var}, a.const) + lo.scale(k)
        out = self.out_for("i32", dest, "index vectors")
        if k == 1:
            self.vop("CreateVecIndex", out, scalar=f"int32_t({affine_cpp(first, self.low.names)})")
            return out
        self.vop("CreateVecIndex", out, scalar="int32_t(0)")
        self.vop("Muls", out, out, scalar=f"int32_t({k})")
        if first != Affine((), 0):
            self.vop("Adds", out, out, scalar=f"int32_t({affine_cpp(first, self.low.names)})")
        return out

    def narrowed(self, v: Vec, dest: Vec | None) -> Vec:
        """`v` (f32) rounded once to bf16 (`Cast`, CAST_RINT): the result of a bf16 operation
        computed in f32, as the interpreter computes it (docs/ir.md)."""
        out = self.out_for("bf16", dest, "Cast staging")
        self.cast(v, "bf16", out)
        self.release(v)
        return out

    def tanh(self, arg: ir.Expr, dest: Vec | None) -> Vec:
        """`tanh(x)` as `1 - 2 / (exp(2x) + 1)` in f32 (`Muls`, `Exp`, `Adds`, a division of
        the scalar -2 by the vector, `Adds`): safe at both ends (exp overflows to inf: 1;
        underflows to 0: -1), no NaN but for a NaN input; near 0 the error is absolute,
        about one f32 ulp of 1. An f16 `x` is widened first and the result narrowed once
        (`Cast`), as the interpreter rounds the exact tanh to f16."""
        x = self.compile(arg)
        if isinstance(x, Scal):  # pragma: no cover - compile() keeps loop-invariant calls scalar
            raise NoMatch("`tanh` of a scalar")
        dt = x.dtype
        if dt not in FLOAT_TYPES:
            raise NoMatch(f"vector arithmetic in {dt}")
        xf = self.as_type(x, "f32")
        assert isinstance(xf, Vec)
        t = xf if xf.tmp >= 0 else self.alloc("f32")
        self.vop("Muls", t, xf, scalar="2.0f")
        self.vop("Exp", t, t)
        self.vop("Adds", t, t, scalar="1.0f")
        self.div_scalar(t, t, "-2.0f", scalar_first=True)
        out = self.out_for("f32", dest if dt == "f32" else None)
        self.vop("Adds", out, t, scalar="1.0f")
        if t.op != out.op:
            self.release(t)
        if dt == "f32":
            return out
        res = self.out_for(dt, dest)
        self.cast(out, dt, res)
        self.release(out)
        return res

    def alloc_mask(self) -> Vec:
        """A slot holding a bit mask (one bit per element: at most n / 8 bytes of a slot)."""
        v = self.alloc("f32", "comparison masks")
        return Vec(Operand(f"{self.pe.ph.tmp_name}.ReinterpretCast<uint8_t>()", "u8",
                           str(self.base_bytes + v.tmp * self.slot_bytes)), v.tmp)

    def select_data(self, e: ir.Call, dest: Vec | None) -> Vec:
        """`select(x <op> y, a, b)` comparing data: `Compare` (two vectors) or `CompareScalar`
        (a vector and a scalar; `s < x` is `x > s`, false on NaN both ways) into a bit mask,
        then `Select` (tensor-tensor, or tensor-scalar when `b` is a scalar; a scalar `a` is
        `Duplicate`d). Compare and CompareScalar take counts of whole 256 B (documented):
        the count is rounded up, an operand that is not a temporary is first copied into one
        (it is read past the nest's elements) and 256 B of slack follow the temporaries, so
        the extra elements read stay inside the scratch buffer (their bits are never used:
        `Select` runs over the nest's own count). The instructions take the target's API temp
        area (`temporaries.API_TEMP_INSTRUCTIONS`)."""
        cond, a, b = e.args
        assert isinstance(cond, ir.Binary)
        ct = promote(self.ty_of(cond.lhs), self.ty_of(cond.rhs))
        comp = promote(self.ty_of(a), self.ty_of(b))
        if ct.weak:  # pragma: no cover - a condition of literals does not depend on the loop
            raise NoMatch("a `select` whose condition does not depend on the loop")
        if comp.weak:
            # two literals (`select(x > 0.0, 1.0, 0.0)`): chosen in the type they are stored
            # in (the store converts the weak value, the same conversion as here), else in
            # their own type (index values and integer literals: i32, `index_vector` checks
            # that the loop's values fit)
            comp = Ty(dest.dtype if dest is not None and dest.dtype in SELECT_TYPES else comp.dtype)
        self.check_select_type(ct.dtype)
        self.check_select_type(comp.dtype)
        mask, cnt = self.cmp_mask(cond, ct.dtype)
        fused = _fusable(e, ct, self.ty_of, self.low.sizes)
        if fused is not None:  # a combined condition: one Select of the two masks' And / Or
            kind, cond2, a, b = fused
            m2, _ = self.cmp_mask(cond2, ct.dtype)
            u16 = lambda m: Operand(m.op.base.replace("<uint8_t>", "<uint16_t>"), "u16", str(int(m.op.offset) // 2))  # noqa: E731
            n16: int | str = cnt // 16 if isinstance(cnt, int) else f"({cnt}) / 16"
            self.emit(VecOp(kind, u16(mask), (u16(mask), u16(m2)), None, n16))
            self.release(m2)
        va = self.as_type(self.compile(a), comp.dtype)
        vb = self.as_type(self.compile(b), comp.dtype)
        if isinstance(va, Scal):  # a scalar `a` is `Duplicate`d
            va = self.duplicated(va)
        if isinstance(vb, Scal) and comp.dtype in INT_VEC:  # the float Select's scalar cannot carry i32 bits
            vb = self.duplicated(vb)
        out = self.out_for(comp.dtype, dest)
        if isinstance(vb, Scal):
            self.vop("Select", out, mask, va, scalar=vb.code, mode="SELMODE::VSEL_TENSOR_SCALAR_MODE")
        elif comp.dtype in INT_VEC:  # Select moves 32-bit patterns: the i32 data read as float bits
            self.emit(VecOp("Select", _bits(out.op), (mask.op, _bits(va.op), _bits(vb.op)), None, self.count,
                            mode="SELMODE::VSEL_TENSOR_TENSOR_MODE"))
        else:
            self.vop("Select", out, mask, va, vb, mode="SELMODE::VSEL_TENSOR_TENSOR_MODE")
        for v in (mask, va, vb):
            self.release(v)
        return out

    def duplicated(self, v: Scal) -> Vec:
        """The scalar `v` as a vector over the nest (`Duplicate`)."""
        out = self.alloc(v.ty.dtype)
        self.vop("Duplicate", out, scalar=v.code)
        return out

    def cmp_mask(self, cond: ir.Binary, cdt: str) -> tuple[Vec, int | str]:
        """The bit mask of `cond` over the nest (`Compare` / `CompareScalar` in `cdt`) and the
        element count it was computed over (rounded up to whole 256 B). An i32 condition is
        composed exactly (`int_cmp_mask`)."""
        if cdt in INT_VEC:
            return self.int_cmp_mask(cond)
        got = self.widened_eq_mask(cond, cdt)
        if got is not None:
            return got
        x = self.as_type(self.compile(cond.lhs), cdt)
        y = self.as_type(self.compile(cond.rhs), cdt)
        op = cond.op
        if isinstance(x, Scal):
            if isinstance(y, Scal):
                raise NoMatch("a `select` whose condition does not depend on the loop")
            x, y = y, x
            op = _FLIP[op]
        assert isinstance(x, Vec)
        return self.compare(x, y, op, cdt)

    def widened_eq_mask(self, cond: ir.Binary, cdt: str) -> tuple[Vec, int | str] | None:
        """`f32(x) == s` (or `!=`) with `x` f16 over the nest and `s` an f32 scalar (argmax's
        `f32(X[r, c]) == mx[r]`): compared in f16, without widening the row (`Cast`) and over
        half the bytes. Exact: `f32(x) == s` holds iff `x == h`, `h` being `f16(s)` when that
        converts back to `s` and NaN otherwise (no f16 widens to such an `s`; NaN equals
        nothing, as an f32 NaN `s` does). None when the condition is not of that form."""
        if cdt != "f32" or cond.op not in ("==", "!="):
            return None
        for wide, other in ((cond.lhs, cond.rhs), (cond.rhs, cond.lhs)):
            if not (isinstance(wide, ir.Call) and wide.func == "f32" and len(wide.args) == 1
                    and self.ty_of(wide.args[0]).dtype == "f16" and not self.depends(other)):
                continue
            x = self.compile(wide.args[0])
            y = self.compile(other)
            if not isinstance(x, Vec) or not isinstance(y, Scal) or x.dtype != "f16":
                return None
            s = self.pe.ex.conv(y.code, y.ty, Ty("f32"))
            h = f"ascx_cvt<half>({s})"
            code = f"(ascx_cvt<float>({h}) == {s} ? {h} : ascx_cvt<half>(ascx_nan))"
            return self.compare(x, Scal(code, Ty("f16")), cond.op, "f16")
        return None

    def int_cmp_mask(self, cond: ir.Binary) -> tuple[Vec, int | str]:
        """The bit mask of an i32 comparison, exact for every i32 (vec_types.py: Compare takes
        half/float): `m = Min(a, b)`; `a < b` is `m != b`, `a <= b` is `m == a`, `a > b` is
        `m != a`, `a >= b` is `m == b`; `u == v` is `Sub(u, v)` (wrapping) cast to f32 (a
        non-zero integer stays non-zero) and compared with 0 by `CompareScalar`."""
        x = self.as_type(self.compile(cond.lhs), "i32")
        y = self.as_type(self.compile(cond.rhs), "i32")
        if isinstance(x, Scal) and isinstance(y, Scal):
            raise NoMatch("a `select` whose condition does not depend on the loop")
        a, b = (self.duplicated(v) if isinstance(v, Scal) else v for v in (x, y))
        d = self.alloc("i32")
        if cond.op in ("==", "!="):
            self.vop("Sub", d, a, b)
            zero_is = cond.op
        else:
            self.vop("Min", d, a, b)
            other = b if cond.op in ("<", ">=") else a
            self.vop("Sub", d, d, other)
            zero_is = "==" if cond.op in ("<=", ">=") else "!="
        for v in (a, b):
            self.release(v)
        f = self.as_type(d, "f32")
        assert isinstance(f, Vec)
        return self.compare(f, Scal("0.0f", Ty("f32")), zero_is, "f32")

    def compare(self, x: Vec, y: Vec | Scal, op: str, cdt: str) -> tuple[Vec, int | str]:
        """`Compare` / `CompareScalar` of `x op y` in `cdt` into a fresh mask; the count
        rounded up to whole 256 B (operands that are not temporaries copied first)."""
        es = ir.DTYPE_BYTES[cdt]
        per = 256 // es
        # the count is a multiple of `quantum` (itself when constant, the row length when a
        # tail of whole rows): whole 256 B counts need no rounding
        over = (self.quantum * es) % 256 != 0
        cnt: int | str = self.count
        if over and isinstance(self.count, str):
            cnt = f"(({self.count}) + {per - 1}) / {per} * {per}"
        elif over:
            cnt = -(-self.count // per) * per
        if over:
            self.guard = 256
        opnds: list[Vec] = []
        for v in (x, y):
            if isinstance(v, Vec) and over and v.tmp < 0:
                w = self.alloc(cdt)
                self.copy_into(w, v)
                v = w
            if isinstance(v, Vec):
                opnds.append(v)
        mask = self.alloc_mask()
        mode = f"CMPMODE::{_CMPMODE[op]}"
        if isinstance(y, Scal):
            self.emit(VecOp("CompareScalar", mask.op, (opnds[0].op,), y.code, cnt, mode=mode))
        else:
            self.emit(VecOp("Compare", mask.op, (opnds[0].op, opnds[1].op), None, cnt, mode=mode))
        for v in opnds:
            self.release(v)
        return mask, cnt

    def select_index(self, e: ir.Call, dest: Vec | None) -> Vec:
        """`select(a(j) <= b, x, y)` whose condition is affine in the vectorised index `j`
        (a causal mask: `jb * 64 + j <= i0 * 64 + i`): the condition holds on a prefix (or a
        suffix) of the row, known at run time without reading data. The branch that is a
        vector is computed over the whole row, then the scalar branch fills its range
        (`RangeFill`: whole repeats in count form, the ragged repeat with a bit mask)."""
        cond, a, b = e.args
        if len(self.loops) != 1 or not isinstance(cond, ir.Binary) or cond.op not in ("<", "<=", ">", ">="):
            raise NoMatch("no vector instruction for a `select` on data")
        if isinstance(self.count, str):
            raise NoMatch("a run-time range `select` over a tail")
        diff = to_affine(ir.Binary("-", cond.lhs, cond.rhs), self.low.sizes)
        lp = self.loops[0]
        lo = to_affine(lp.lo, self.low.sizes)
        if diff is None or lo is None or diff.coeff(lp.var) not in (1, -1):
            raise NoMatch("no vector instruction for a `select` on data")
        comp = promote(self.ty_of(a), self.ty_of(b))
        if comp.weak or comp.dtype not in VEC_TYPES:
            raise NoMatch(f"`select` in {comp.dtype}")
        # with j = lo + t: c * t + rest <op> 0, rest = diff - c * j + c * lo
        c = diff.coeff(lp.var)
        rest = Affine.make({k: v for k, v in diff.coeffs if k != lp.var}, diff.const) + lo.scale(c)
        strict = cond.op in ("<", ">")
        # the condition holds for t < k0 (a prefix) or t >= k0 (a suffix)
        less = (cond.op in ("<", "<=")) == (c == 1)
        from .cexpr import affine_cpp

        if less:  # t * 1 + rest <(=) 0 -> t <(=) -rest; or -t + rest >(=) 0 -> t <(=) rest
            k0 = (rest.scale(-1) if c == 1 else rest) + Affine((), 0 if strict else 1)
        else:  # t >(=) -rest (c = 1) or t >(=) rest (c = -1)
            k0 = (rest.scale(-1) if c == 1 else rest) + Affine((), 1 if strict else 0)
        k0c = affine_cpp(k0, self.low.names)
        if self.depends(a) == self.depends(b):
            raise NoMatch("`select` of two vectors (or two scalars)")
        vexpr, sexpr = (a, b) if self.depends(a) else (b, a)
        out = self.out_for(comp.dtype, dest)
        v = self.as_type(self.compile(vexpr, out), comp.dtype)
        sc = self.scalar(sexpr)
        assert isinstance(v, Vec)
        if v.op != out.op:
            self.copy_into(out, v)
            self.release(v)
        code = self.pe.ex.conv(sc.code, sc.ty, comp)
        per = 256 // ir.DTYPE_BYTES[comp.dtype]
        # the scalar branch's range: where the condition fails (x vector) or holds (y vector)
        scalar_where_false = vexpr is a
        fill_prefix = less != scalar_where_false
        lo_c, hi_c = ("0", k0c) if fill_prefix else (k0c, str(self.n))
        self.emit(RangeFill(out.op, code, lo_c, hi_c, self.n, per, fill_prefix))
        return out

    def check_type(self, dtype: str) -> None:
        if dtype not in VEC_TYPES:
            raise NoMatch(f"vector arithmetic in {dtype}")

    def check_select_type(self, dtype: str) -> None:
        """A `select` compares and chooses in f16, f32 or (composed) i32, else NoMatch."""
        if dtype not in SELECT_TYPES:
            raise NoMatch(f"`select` in {dtype} (Compare/Select take half/float; i32 is composed)")

    def check_arith(self, op: str, dtype: str) -> None:
        """`op` has a vector instruction in `dtype` (vec_types.py: f16/f32, and the integer
        `+ - * max min` and negation in i32), else NoMatch with the reason."""
        why = arith_reason(op, dtype)
        if why is not None:
            raise NoMatch(why)

    @staticmethod
    def minus_one(dtype: str) -> str:
        return f"{CTYPE[dtype]}(-1)" if dtype in INT_VEC else f"{CTYPE[dtype]}(-1.0f)"

    def ty_of(self, e: ir.Expr) -> Ty:
        if self.bound and any(isinstance(x, ir.Name) and x.name in self.bound for x in ir.sub_exprs(e)):
            e = _typed_stand_ins(e, self.bound)
        return self.pe.ex.value(e)[1]

    def broadcast(self, dt: str, code: str) -> Vec:
        """One 32 B block holding the scalar `code` (a mask-form `Duplicate` of one repeat):
        read with block and repeat stride 0 it stands for a vector of that scalar."""
        blk = self.alloc(dt)
        self.emit(VecOp("Duplicate", blk.op, (), code, 0, Repeat(32 // ir.DTYPE_BYTES[dt], 1, (1,), (8,))))
        return blk

    def div_bcast(self, out: Vec, a: Vec, blk: Vec, scalar_first: bool) -> None:
        """`out = a / s` (or `s / a`) with `s` in the broadcast block `blk`: `Div` in its
        mask/repeat form, the scalar operand at block and repeat stride 0 (no full-length
        `Duplicate`; the division stays exact, not a reciprocal)."""
        for off, mask, times in repeat_chunks(self.n, ir.DTYPE_BYTES[a.dtype]):
            srcs = (blk.op, a.op.at(off)) if scalar_first else (a.op.at(off), blk.op)
            blks = (1, 0, 1) if scalar_first else (1, 1, 0)
            reps = (8, 0, 8) if scalar_first else (8, 8, 0)
            self.emit(VecOp("Div", out.op.at(off), srcs, None, 0, Repeat(mask, times, blks, reps)))

    def div_scalar(self, out: Vec, v: Vec, code: str, scalar_first: bool) -> None:
        """`out = v / s` (or `s / v`): over a constant count the broadcast block and the
        mask/repeat `Div` (`div_bcast`); over a tail (a run-time count, unknown repeats) the
        scalar `Duplicate`d over the count and the count-form `Div`."""
        if isinstance(self.count, str):
            full = self.alloc(v.dtype)
            self.vop("Duplicate", full, scalar=code)
            self.vop("Div", out, *((full, v) if scalar_first else (v, full)))
            self.release(full)
            return
        blk = self.broadcast(v.dtype, code)
        self.div_bcast(out, v, blk, scalar_first)
        self.release(blk)

    def binop(self, op: str, l: ir.Expr, r: ir.Expr, dest: Vec | None = None) -> Vec:
        comp = promote(self.ty_of(l), self.ty_of(r))
        if comp.weak:
            raise NoMatch("weakly typed vector arithmetic")
        dt = comp.dtype
        if dt == "bf16":
            # a bf16 operation: operands rounded to bf16, computed in f32, rounded once (docs/ir.md)
            a32 = self.as_type(self.as_type(self.compile(l), "bf16"), "f32")
            b32 = self.as_type(self.as_type(self.compile(r), "bf16"), "f32")
            return self.narrowed(self.arith(op, a32, b32, "f32", None), dest)
        self.check_arith(op, dt)
        a = self.as_type(self.compile(l), dt)
        from ..printer import format_expr

        # `e op e` (the square of a centred row in a variance): one computation of `e`
        b = a if isinstance(a, Vec) and format_expr(l) == format_expr(r) else self.as_type(self.compile(r), dt)
        return self.arith(op, a, b, dt, dest)

    def arith(self, op: str, a: Vec | Scal, b: Vec | Scal, dt: str, dest: Vec | None) -> Vec:
        """`a op b`, both already of type `dt` (f16 or f32). Without `dest`, the result
        overwrites a temporary operand (every instruction here is elementwise, so a
        destination equal to a source is allowed): one slot fewer than a fresh result."""
        ct = CTYPE[dt]
        if dest is None or dest.dtype != dt:
            for x in (a, b):
                if isinstance(x, Vec) and x.tmp >= 0 and x.dtype == dt:
                    dest = x
                    break
        out = self.out_for(dt, dest)
        name = _BIN[op]
        if isinstance(a, Vec) and isinstance(b, Vec):
            self.vop(name, out, a, b)
        elif isinstance(a, Vec):
            assert isinstance(b, Scal)
            if op == "-":  # an integer negated with wrap-around (-INT_MIN is INT_MIN), as the IR does
                neg = f"ascx_ineg<{ct}>({b.code})" if dt in INT_VEC else f"{ct}(-({b.code}))"
                self.vop("Adds", out, a, scalar=neg)
            elif op == "/":
                self.div_scalar(out, a, b.code, scalar_first=False)
            else:
                self.vop(_SCALAR_FORM[op], out, a, scalar=b.code)
        else:
            assert isinstance(a, Scal) and isinstance(b, Vec)
            if op == "-":
                self.vop("Muls", out, b, scalar=self.minus_one(dt))
                self.vop("Adds", out, out, scalar=a.code)
            elif op == "/":
                self.div_scalar(out, b, a.code, scalar_first=True)
            else:
                self.vop(_SCALAR_FORM[op], out, b, scalar=a.code)
        for x in (a, b) if a is not b else (a,):
            if not (isinstance(x, Vec) and x.op == out.op):
                self.release(x)
        return out

    # ---- statements ----------------------------------------------------------------------
    def store(self, s: ir.Assign) -> None:
        self.cse, self.cse_vals = cse_uses(s.value, self.depends), {}
        try:
            self.store_(s)
        finally:
            for v in self.cse_vals.values():
                self.release(v)
            self.cse, self.cse_vals = {}, {}
        if self.ctx is not None:  # a value read from what this statement wrote is stale now
            written = {s.target.tensor if isinstance(s.target, ir.Access) else s.target.name}
            self.made = {k: v for k, v in self.made.items() if not (self.ctx.reads[k] & written)}

    def store_(self, s: ir.Assign) -> None:
        tgt = s.target
        self.origin = self.low.where(s)
        dst = self.target_ref(tgt)
        if dst is None:
            self.reduce(s)
            return
        if s.op == "=" and isinstance(s.value, ir.Access) and self.depends(s.value) and \
                self.ty_of(s.value).dtype == dst.dtype:
            v = self.access_ref(s.value, into=dst)  # a strided read gathered straight into `dst`
            if v.op == dst.op:
                return
        if dst.dtype == "bf16":
            self.store_bf16(s, dst)
            return
        if dst.dtype not in FLOAT_VEC + INT_VEC:
            self.check_arith(_COMPOUND.get(s.op, "="), dst.dtype)
        if s.op != "=":
            comp = promote(Ty(dst.dtype), self.ty_of(s.value))
            if not comp.weak and comp.dtype == "f32" and dst.dtype == "f16" and s.op in _COMPOUND:
                # an f16 accumulator of f32 values: f16(f32(T) op e), computed in f32
                d32 = self.as_type(dst, "f32")
                r = self.arith(_COMPOUND[s.op], d32, self.as_type(self.compile(s.value), "f32"), "f32", None)
                self.cast(r, "f16", dst)
                self.release(r)
                return
            if comp.weak or comp.dtype != dst.dtype or s.op not in ("+=", "*=", "max=", "min="):
                raise NoMatch(f"`{s.op}` into a {dst.dtype} vector in {comp.dtype}")
            v = self.as_type(self.compile(s.value), dst.dtype)
            name = {"+=": "Add", "*=": "Mul", "max=": "Max", "min=": "Min"}[s.op]
            if isinstance(v, Scal):
                sname = {"+=": "Adds", "*=": "Muls", "max=": "Maxs", "min=": "Mins"}[s.op]
                self.vop(sname, dst, dst, scalar=v.code)
            else:
                self.vop(name, dst, dst, v)
                self.release(v)
            return
        v = self.compile(s.value, dst)
        if isinstance(v, Scal):
            c = self.pe.ex.conv(v.code, v.ty, Ty(dst.dtype))
            self.vop("Duplicate", dst, scalar=c)
            return
        if v.op == dst.op:
            return
        self.copy_into(dst, v)
        self.release(v)

    def target_ref(self, tgt: ir.Access | ir.Name) -> Vec | None:
        """The vector a statement writes, or None when it reduces into a target that does
        not depend on the nest (`s max= x[j]`: `reduce`). rows2d.py overrides it (a row
        statistic is a vector over the rows there)."""
        if not isinstance(tgt, ir.Access) or not self.depends(tgt):
            return None
        return self.access_ref(tgt, write=True)

    def store_bf16(self, s: ir.Assign, dst: Vec) -> None:
        """A store into a bf16 local: no vector arithmetic in bf16 — values are computed in f32
        and rounded once by a `Cast` into the destination; `T[j] op= e` is
        `T = bf16(f32(T) op f32(bf16(e)))` (`f32(T) op e` when `e` is f32), a scalar is `Duplicate`d in f32 and cast."""
        if s.op != "=":
            comp = promote(Ty("bf16"), self.ty_of(s.value))
            if comp.weak or comp.dtype not in ("bf16", "f32") or s.op not in _COMPOUND:
                raise NoMatch(f"`{s.op}` into a bf16 vector in {comp.dtype}")
            d32 = self.as_type(dst, "f32")
            v32 = self.as_type(self.as_type(self.compile(s.value), comp.dtype), "f32")
            self.narrowed(self.arith(_COMPOUND[s.op], d32, v32, "f32", None), dst)
            return
        v = self.compile(s.value, dst)
        if isinstance(v, Scal):
            c = self.pe.ex.conv(self.pe.ex.conv(v.code, v.ty, Ty("bf16")), Ty("bf16"), Ty("f32"))
            t = self.alloc("f32")
            self.vop("Duplicate", t, scalar=c)
            self.narrowed(t, dst)
            return
        if v.op != dst.op:
            self.copy_into(dst, v)
            self.release(v)

    def reduce(self, s: ir.Assign) -> None:
        """`s op= x` over the loop: one count-form `Reduce*`, a `V_S` flag and the scalar
        combine with the old value. Into an f16/bf16 accumulator (vec_types.py): the
        operand computed in its own type, widened to f32 (`Cast`), reduced in f32 and the
        combine rounded once to the accumulator's dtype."""
        if len(self.loops) != 1 and not (self.total and not self.depends(s.target)):
            raise NoMatch("reduction over a 2-D nest")
        tgt = s.target
        name = tgt.tensor if isinstance(tgt, ir.Access) else tgt.name
        decl = self.low.decls[name]
        vt = self.ty_of(s.value)
        comp = promote(Ty(decl.dtype), vt)
        why = reduce_reason(s.op, decl.dtype, comp.dtype)
        if why is None and comp.weak:
            why = f"`{s.op}` of a weakly typed value into {decl.dtype}"
        if why is not None:
            raise NoMatch(why)
        val = s.value
        rdt = reduce_dtype(s.op, comp.dtype)
        if s.op != "+=" and isinstance(val, ir.Call) and val.func == "f32" and self.ty_of(val.args[0]).dtype == "f16":
            # max/min commute with the exact f16 -> f32 widening: reduce the f16 operand
            # (half the bytes, no Cast) and widen the one result
            v = self.as_type(self.compile(val.args[0]), "f16")
            rdt = "f16"
        else:  # the operand in the computation type (rounded as the IR rounds it), then widened
            v = self.as_type(self.as_type(self.compile(val), comp.dtype), rdt)
        if not isinstance(v, Vec):  # `s max= 2.0`: nothing to reduce over the loop
            raise NoMatch(f"the `{s.op}` operand does not depend on the loop")
        comp = Ty(rdt) if rdt == "f32" else comp  # the combine runs in f32 too: one rounding
        if rdt in INT_VEC:
            got, held = self.int_tree(s.op, v)
        else:
            res, work = self.reduce_areas(rdt)
            api = {"max=": "ReduceMax", "min=": "ReduceMin", "+=": "ReduceSum"}[s.op]
            self.emit(VecOp(api, res.op, (v.op,), None, self.count, work=work.op))
            self.emit(Flag("V_S"))
            got = self.pe.ex.conv(f"{res.op.base}.GetValue({res.op.offset})", Ty(rdt), comp)
            held = [v, res, work]
        # one result per row (`mx`, `mb[i]`), or one element of a 2-D family (`s[i, j]`)
        idx_vars = {x.name for i in (tgt.indices if isinstance(tgt, ir.Access) else ()) for x in ir.sub_exprs(i)
                    if isinstance(x, ir.Name) and x.name not in self.low.sizes}
        self.vs = "element" if len(idx_vars) >= 2 or self.vs == "element" else "row"
        ct = CTYPE[comp.dtype]
        old_ref = self.pe.load(name, tgt.indices) if isinstance(tgt, ir.Access) else self.pe.scalar_ref(name)
        old = self.pe.ex.conv(old_ref, Ty(decl.dtype), comp)
        add = f"ascx_iadd<{ct}>({old}, {got})" if comp.dtype in INT_VEC else f"({old} + {got})"
        comb = {"max=": f"ascx_max<{ct}>({old}, {got})", "min=": f"ascx_min<{ct}>({old}, {got})", "+=": add}[s.op]
        new = self.pe.ex.conv(comb, comp, Ty(decl.dtype))
        info = self.low.info[name]
        if info.kind == "scalar":
            self.emit(ScalarStep("GetValue", f"{info.cname} = {new};"))
        else:
            off = self.pe.offset(name, tgt.indices) if isinstance(tgt, ir.Access) else "0"
            self.emit(ScalarStep("SetValue", f"{info.cname}.SetValue({off}, {new});"))
        for h in held:
            self.release(h)

    def int_tree(self, op: str, v: Vec) -> tuple[str, list[Vec]]:
        """An i32 `+=`/`max=`/`min=` of `v` over the nest as a pairwise tree (vec_types.py: no
        integer Reduce*; wrapping sums and max/min are order-free, so exact): `v` copied into
        a temporary unless it is one (over a tile tail's run-time count, the rest of the
        nest's n elements then filled with the identity: 0, INT_MIN, INT_MAX), then `Add`/`Max`/`Min` of the upper part onto the lower
        part in place, split at a multiple of 8 elements (32 B aligned) until at most 8
        remain, folded by scalar code after a `V_S` flag. Returns that fold (a C++
        expression) and the slots to release."""
        api = {"max=": "Max", "min=": "Min", "+=": "Add"}[op]
        width = self.n
        w, src = v, v
        if isinstance(self.count, str):
            # a tile tail (run-time count): the operand copied, the rest of the n elements
            # filled with the operation's identity, and the tree over the constant n
            if v.tmp < 0:
                w = src = self.alloc("i32", "reduction work areas")
                self.copy_into(w, v)
            ident = {"max=": "int32_t(-2147483647 - 1)", "min=": "int32_t(2147483647)", "+=": "int32_t(0)"}[op]
            self.emit(RangeFill(w.op, ident, str(self.count), str(self.n), self.n, REPEAT // 4, prefix=False))
        elif v.tmp < 0:  # a local: the first step reads it, later steps work in a temporary
            w = self.alloc("i32", "reduction work areas")
            if width % 16 and width > 8:  # the first split keeps a middle part: copy it all first
                self.copy_into(w, v)
                src = w
            elif width <= 8:
                src = w = v
        while width > 8:
            half = 8 * -(-width // 16)  # >= width / 2, a whole number of 32 B blocks
            self.emit(VecOp(api, w.op, (src.op, src.op.at(half)), None, width - half))
            width, src = half, w
        self.emit(Flag("V_S"))
        fold = {"max=": "ascx_max<int32_t>", "min=": "ascx_min<int32_t>", "+=": "ascx_iadd<int32_t>"}[op]
        got = f"{w.op.base}.GetValue({w.op.offset})"
        for k in range(1, width):
            got = f"{fold}({got}, {w.op.at(k).base}.GetValue({w.op.at(k).offset}))"
        return got, [v, w] if w is not v else [v]

    def reduce_areas(self, rdt: str) -> tuple[Vec, Vec]:
        """The result (one 32 B block) and work area of a count-form reduction over `n`
        elements of `rdt`: the documented minimum work size is the first round's results,
        ceil(n / elements per repeat) rounded up to whole 32 B blocks (Ascend C ReduceSum /
        ReduceMax / ReduceMin, "workLocal"); both share one slot when they fit in it (a
        slot holds n f32), else they take a slot each."""
        es = ir.DTYPE_BYTES[rdt]
        per_blk = 32 // es
        work_elems = -(-(-(-self.n // (256 // es))) // per_blk) * per_blk
        res = self.alloc(rdt, "reduction work areas")
        if 32 + work_elems * es <= self.slot_bytes:
            return res, Vec(res.op.at(per_blk))
        return res, self.alloc(rdt, "reduction work areas")


def cse_uses(e: ir.Expr, vector: Callable[[ir.Expr], bool]) -> dict[str, int]:
    """{printed subexpression: times `_Sel.compile` will ask for it} for the vector
    subexpressions (not plain accesses) that occur more than once in `e`; occurrences
    inside a repeated one count once (the repeat is not compiled again), and the right
    side of `x op x` not at all (`binop` reuses the left)."""
    from ..printer import format_expr

    uses: dict[str, int] = {}

    def walk(x: ir.Expr) -> None:
        if isinstance(x, ir.Access) or not vector(x):
            return
        key = format_expr(x)
        if key in uses:
            uses[key] += 1
            return
        uses[key] = 1
        if isinstance(x, ir.Unary):
            walk(x.operand)
        elif isinstance(x, ir.Binary):
            walk(x.lhs)
            if format_expr(x.lhs) != format_expr(x.rhs):
                walk(x.rhs)
        elif isinstance(x, ir.Call):
            for a in x.args:
                walk(a)

    walk(e)
    return {k: n for k, n in uses.items() if n > 1}


def _bits(op: Operand) -> Operand:
    """An i32 operand read as float bits (`Select` moves 32-bit patterns unchanged)."""
    base = op.base.removesuffix(".ReinterpretCast<int32_t>()")  # a scratch slot: read it as float directly
    return Operand(f"{base}.ReinterpretCast<float>()", "f32", op.offset)


def _is_data_select(e: ir.Expr) -> bool:
    c = e.args[0] if isinstance(e, ir.Call) and e.func == "select" else None
    return isinstance(c, ir.Binary) and c.op in ir.COMPARE_OPS


def _fusable(e: ir.Call, ct: Ty, ty_of, sizes) -> "tuple[str, ir.Binary, ir.Expr, ir.Expr] | None":  # type: ignore[no-untyped-def]
    """A combined condition written as nested selects, compared in the same type:
    `select(c1, select(c2, x, y), y)` is `c1 and c2` (("And", c2, x, y)) and
    `select(c1, x, select(c2, x, y))` is `c1 or c2` (("Or", c2, x, y)): exactly, NaN
    included (a false comparison is false in both forms)."""
    from ..printer import format_expr

    _, a, b = e.args
    for kind, inner, other in (("And", a, b), ("Or", b, a)):
        if not _is_data_select(inner):
            continue
        assert isinstance(inner, ir.Call)
        c2, x2, y2 = inner.args
        same = format_expr(y2 if kind == "And" else x2) == format_expr(other)
        assert isinstance(c2, ir.Binary)
        if same and promote(ty_of(c2.lhs), ty_of(c2.rhs)).dtype == ct.dtype and \
                to_affine(ir.Binary("-", c2.lhs, c2.rhs), sizes) is None:
            return (kind, c2, x2, b) if kind == "And" else (kind, c2, a, y2)
    return None


def _trip(pe: "PhaseEmitter", lp: ir.For) -> tuple[int, str] | None:
    """(largest trip count, C++ count or "" when constant) of a loop with constant bounds or
    of a tile tail `for v in lo..min(T, ..)` (lo constant; at most T - lo iterations), else
    None. A tail's instructions take the run-time count; its temporaries the largest."""
    t = affine_extent(lp.lo, lp.hi, pe.low.sizes)
    if t is not None:
        return (t, "") if t > 0 else None
    mx = tail_max_extent(lp, pe.low.sizes)
    lo = eval_const(lp.lo, pe.low.sizes)
    if mx is None or mx <= 0 or lo is None:
        return None
    hi = pe.ex.index(lp.hi)
    return mx, hi if lo == 0 else f"({hi} - {lo})"


def _same_index_check(stmts: tuple[ir.Stmt, ...], loop: "tuple[str, int, dict[str, int]] | None" = None) -> None:
    """Vectorising statement by statement runs each over the whole loop in turn, so a
    tensor written there must be accessed at one index pattern (and a reduction target not
    read). `loop` = (variable, trip, sizes) of a 1-D loop: a tensor the statements only
    write may be written at several patterns when no two touch one element
    (`_disjoint_stores`: RoPE's `Y[.., d]` and `Y[.., d + Dh]` over `d` in 0..Dh)."""
    written: dict[str, set] = {}
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Access):
            written.setdefault(s.target.tensor, set()).add(s.target.indices)
    read = {x.tensor for s in stmts if isinstance(s, ir.Assign) for x in ir.sub_exprs(s.value)
            if isinstance(x, ir.Access)}
    for s in stmts:
        for e in ir.stmt_exprs(s):
            for x in ir.sub_exprs(e):
                if isinstance(x, ir.Access) and x.tensor in written and {x.indices} != written[x.tensor]:
                    if (loop is not None and x.tensor not in read and s.target is x  # type: ignore[union-attr]
                            and _disjoint_stores(written[x.tensor], *loop)):
                        continue
                    raise NoMatch(f"`{x.tensor}` is accessed at different indices")
    # a reduction target must not be read inside the loop
    targets = {s.target.name for s in stmts if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
    for s in stmts:
        if isinstance(s, ir.Assign):
            for x in ir.sub_exprs(s.value):
                if isinstance(x, ir.Name) and x.name in targets:
                    raise NoMatch(f"`{x.name}` is read while reduced")


def _disjoint_stores(patterns: set, var: str, trip: int, sizes: dict[str, int]) -> bool:
    """Do the store index patterns touch pairwise disjoint elements over `var` in 0..trip?
    Two patterns equal in every dimension but one, where they are `a*var + c1` and
    `a*var + c2` (the same affine part): `a*v1 + c1 = a*v2 + c2` needs `a` to divide
    `c2 - c1` and `|v1 - v2| = |c2 - c1| / a < trip`; otherwise disjoint. Anything else: no."""
    from ..affine import to_affine

    pats = list(patterns)
    for i, p in enumerate(pats):
        for q in pats[i + 1:]:
            if len(p) != len(q):
                return False
            diff = [(a, b) for a, b in zip(p, q) if a != b]
            if len(diff) != 1:
                return False
            fa, fb = (to_affine(x, sizes) for x in diff[0])
            if fa is None or fb is None:
                return False
            if Affine.make(dict(fa.coeffs), 0) != Affine.make(dict(fb.coeffs), 0):
                return False
            a = abs(fa.coeff(var))
            if a == 0 or set(v for v, _ in fa.coeffs) != {var}:
                return False
            c = abs(fb.const - fa.const)
            if c % a == 0 and c // a < trip:
                return False
    return True


class RowCtx:
    """Values shared by the innermost nests of one row loop `for r { ..nests.. }`.

    Softmax, layernorm and rmsnorm after `fuse,tile` run several nests per row over the same
    columns; they read the same widened row (`f32(X_ub[n, h])`), the same centred row
    (`f32(X_ub[n, h]) - mu`), and row-independent vectors (`f32(gamma_ub[h])`). A value that
    occurs twice in the row's nests, or does not depend on the row at all, gets a *pinned*
    slot at the start of the phase's scratch (`reserved` bytes; the nests' own slots follow):
    the first nest needing it computes it there, later ones reuse it while what it reads is
    unchanged (`after` drops a value when a statement writes what it reads), and a
    row-independent value is computed once before the row loop (`pre`: the hoisted casts).
    """

    def __init__(self, pe: "PhaseEmitter", row: ir.For, limit: int | None = None) -> None:
        from ..printer import format_expr

        self.pe = pe
        self.fmt = format_expr
        sizes = pe.low.sizes
        nests = [x for x in row.body if isinstance(x, ir.For) and x.body and all(isinstance(y, ir.Assign) for y in x.body)]
        trips = [affine_extent(x.lo, x.hi, sizes) for x in nests]
        ns = [t for t in trips if t]
        self.n = max(set(ns), key=ns.count) if ns else 0
        self.nests = {id(x) for x, t in zip(nests, trips) if t == self.n}
        written: set[str] = set()
        for st in ir.iter_stmts(row.body):
            if isinstance(st, ir.Assign):
                written.add(st.target.tensor if isinstance(st.target, ir.Access) else st.target.name)
        count: dict[str, int] = {}
        self.reads: dict[str, set[str]] = {}
        hoist: set[str] = set()
        for x in nests:
            if id(x) not in self.nests:
                continue
            for st in x.body:
                assert isinstance(st, ir.Assign)
                v = st.value
                if st.op in ("max=", "min=") and isinstance(v, ir.Call) and v.func == "f32":
                    v = v.args[0]  # reduced in f16 (`_Sel.reduce`)
                for e in ir.sub_exprs(v):
                    if not isinstance(e, (ir.Call, ir.Binary, ir.Unary)) or not _uses(e, x.var):
                        continue
                    k = self.key(e, x)
                    count[k] = count.get(k, 0) + 1
                    reads = {y.tensor if isinstance(y, ir.Access) else y.name for y in ir.sub_exprs(e)
                             if isinstance(y, (ir.Access, ir.Name))}
                    self.reads[k] = reads
                    if not (reads & written) and row.var not in reads:
                        hoist.add(k)
        keys = [k for k in count if count[k] > 1 or k in hoist]
        # the most used first: when all do not fit UB, the row keeps the first `limit`
        keys = sorted(keys, key=lambda k: -count[k])[:limit]
        self.pinned = {k: i for i, k in enumerate(keys)}
        self.hoist = hoist & set(keys)
        self.slot = slot_bytes(self.n)
        self.reserved = len(keys) * self.slot
        self.ready: dict[str, Vec] = {}
        self.pre: list[Placed] = []
        self.overflow = False  # a nest did not fit with the pinned slots: redo the row without them

    def key(self, e: ir.Expr, loop: ir.For) -> str:
        return f"{self.fmt(e)} @ {loop.var} in {self.fmt(loop.lo)}..{self.fmt(loop.hi)}"

    def commit(self, sel: _Sel) -> None:
        self.ready.update(sel.made)
        self.pre.extend(sel.pre)

    def after(self, st: ir.Stmt) -> None:
        """Drop the values that read what `st` writes."""
        if not self.ready:
            return
        written = {s.target.tensor if isinstance(s.target, ir.Access) else s.target.name
                   for s in ir.iter_stmts((st,)) if isinstance(s, ir.Assign)}
        self.ready = {k: v for k, v in self.ready.items() if not (self.reads[k] & written) or k in self.hoist}

    @staticmethod
    def build(pe: "PhaseEmitter", row: ir.For, limit: int | None = None) -> "RowCtx | None":
        """The row's context, pinning at most `limit` values (None: every value worth it)."""
        if not pe.low.select or pe.ph.core != "vec" or any(isinstance(x, ir.Copy) for x in ir.iter_stmts(row.body)):
            return None
        if not any(isinstance(x, ir.For) for x in row.body):
            return None
        ctx = RowCtx(pe, row, limit)
        return ctx if ctx.pinned else None


def _uses(e: ir.Expr, var: str) -> bool:
    return any(isinstance(x, ir.Name) and x.name == var for x in ir.sub_exprs(e))


def match_straight(pe: "PhaseEmitter", loop: ir.For, depth: int, total: bool = False) -> "_Sel | str":
    """The straight selection of a 1-D nest or of a perfect 2-D nest collapsed into one
    vector (patterns `vector-1d`, `collapsed-2d`): the selection, or why not. A capacity
    refusal records what the selection needs (`pe.no_vector_need`) and asks the row context
    to pin fewer slots (`RowCtx.overflow`)."""
    low = pe.low
    loops = [loop]
    if len(loop.body) == 1 and isinstance(loop.body[0], ir.For):
        loops.append(loop.body[0])
    body = loops[-1].body
    trips = [_trip(pe, lp) for lp in loops]
    ctx: RowCtx | None = getattr(pe, "row_ctx", None)
    if ctx is not None and (id(loop) not in ctx.nests or any(t is not None and t[1] for t in trips)):
        ctx = None
    try:
        if any(t is None for t in trips):
            raise NoMatch("loop bounds are neither constant nor a tile tail `min(T, ..)`")
        if len(loops) == 2 and trips[1][1]:  # type: ignore[index]
            raise NoMatch("a ragged row in a 2-D nest: vectorised per row")
        one = trips[0] if len(loops) == 1 and not trips[0][1] else None  # type: ignore[index]
        _same_index_check(body, (loop.var, one[0], low.sizes) if one else None)  # type: ignore[arg-type]
        (n0, c0), (n1, _) = trips[0], (trips[1] if len(loops) == 2 else (1, ""))  # type: ignore[misc]
        sel = _Sel(pe, loops, n0 * n1, depth, ctx)
        if c0:  # a tail: the instructions run over the run-time count, temporaries sized for the full tile
            sel.count = c0 if n1 == 1 else f"({c0}) * {n1}"
            sel.quantum = n1
        sel.inner_n = n1 if len(loops) == 2 else 0
        sel.total = total and len(loops) == 2
        if len(loops) == 2:
            # only a fully contiguous 2-D nest is collapsed; otherwise the outer loop stays.
            # `total` (pattern `collapsed-reduction`): every statement reduces over both loops
            # into one element (`mu += X[cc, y, x]` over y, x), one reduction over all of them
            for s in body:
                if not isinstance(s, ir.Assign):
                    continue
                if total:
                    if s.op == "=" or sel.depends(s.target):
                        raise NoMatch("not every statement reduces over both loops into one element")
                elif not (isinstance(s.target, ir.Access) and sel.depends(s.target)):
                    raise NoMatch("reduction in a 2-D nest")
        for s in body:
            sel.store(s)  # type: ignore[arg-type]
        if not fits(pe, sel.need, sel.instrs):
            pe.no_vector_need = sel
            if sel.ctx is not None:
                sel.ctx.overflow = True
            raise NoMatch(over_capacity(pe, sel.need, sel.instrs))
    except NoMatch as e:
        return str(e)
    return sel


def commit_straight(pe: "PhaseEmitter", loop: ir.For, sel: "_Sel") -> list[Line]:
    """Emit a `match_straight` selection: its temporaries, row-cache entries and plan record."""
    pe.no_vector_need = None
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, sel.need)
    if sel.ctx is not None:
        sel.ctx.commit(sel)
    pe.low.nests.append(sel.choice(f"{pe.low.where(loop)} `{loop.label or loop.var}`"))
    return sel.lines


def match_interchanged(pe: "PhaseEmitter", loops: list[ir.For], depth: int) -> "tuple[_Sel, Placed] | str":
    """`for d { for j { T[.., d] op= e } }` with `d` the unit-stride axis: a C++ loop over `j`
    around vector instructions over `d` (each element still accumulates in `j` order, so the
    result is the scalar nest's; this is the axpy form of a matrix-vector product). The
    selection and its loop item, or why not (pattern `interchanged`)."""
    outer, inner = loops
    body = inner.body
    if len(body) != 1 or not isinstance(body[0], ir.Assign) or not isinstance(body[0].target, ir.Access):
        return "the inner loop's body is not one store into a tensor element"
    st = body[0]
    tgt = st.target
    assert isinstance(tgt, ir.Access)
    if any(isinstance(x, ir.Name) and x.name == inner.var for i in tgt.indices for x in ir.sub_exprs(i)):
        return f"the stored element depends on the inner loop `{inner.var}` (nothing to keep in a vector over `{outer.var}`)"
    if not any(isinstance(x, ir.Name) and x.name == outer.var for i in tgt.indices for x in ir.sub_exprs(i)):
        return f"the stored element does not depend on `{outer.var}`: a reduction over both loops, not a vector over `{outer.var}`"
    if any(isinstance(x, ir.Access) and x.tensor == tgt.tensor and x.indices != tgt.indices for x in ir.sub_exprs(st.value)):
        return f"`{tgt.tensor}` is read at another index than it is stored"
    low = pe.low
    n = affine_extent(outer.lo, outer.hi, low.sizes)
    if not n or n <= 0:
        return f"the bounds of `{outer.var}` are not constant"
    sel = _Sel(pe, [outer], n, depth + 1)
    try:
        sel.store(st)
    except NoMatch as e:
        return f"over `{outer.var}`: {e}"
    if "Gather" in sel.instrs:
        return f"an operand is strided in `{outer.var}`: a Gather on every iteration of `{inner.var}`"
    if not fits(pe, sel.need, sel.instrs):
        return over_capacity(pe, sel.need, sel.instrs)
    loop = Placed(Loop(low.names(inner.var), pe.ex.index(inner.lo), pe.ex.index(inner.hi), tuple(sel.items)), low.where(inner))
    return sel, loop


def commit_interchanged(pe: "PhaseEmitter", loops: list[ir.For], sel: "_Sel", loop: Placed, depth: int) -> list[Line]:
    """Emit a `match_interchanged` selection."""
    outer, inner = loops
    low = pe.low
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, sel.need)
    sel.items = [loop]
    low.nests.append(sel.choice(f"{low.where(outer)} `{outer.label or outer.var}` (vectorised over `{outer.var}`, "
                                f"loop over `{inner.var}`)"))
    return render([loop], depth)


def _factors(e: ir.Expr) -> tuple[ir.Expr, ir.Expr] | None:
    return (e.lhs, e.rhs) if isinstance(e, ir.Binary) and e.op == "*" else None


def match_dot(pe: "PhaseEmitter", outer: ir.For, inner: ir.For, depth: int) -> "_Sel | str":
    """`for d { .. for k { T[.., d] += x(k) * y(d, k) } .. }` (QKᵀ of attention: a score per
    key `d`, reduced over the head dimension `k`) as whole-tile vector code, no scalar
    round trip per score: `y` (a UB tile, rows `d` with `k` unit stride) is widened once
    (`Cast` of the tile), multiplied by the row `x(k)` (`Mul` in its repeat form, the row
    read at repeat stride 0, one repeat per `d`), its columns beyond the first 256 B folded
    (`Add`, repeat form), each row summed (`WholeReduceSum`, one result per repeat: a
    contiguous vector over `d`), and added to `T[.., d]` (`Add`). f32 only; the sums
    reassociate (as every vector reduction does)."""
    low = pe.low
    if len(inner.body) != 1 or not isinstance(inner.body[0], ir.Assign):
        return f"the body of `{inner.var}` is not one statement"
    st = inner.body[0]
    fs = _factors(st.value)
    J, D = affine_extent(outer.lo, outer.hi, low.sizes), affine_extent(inner.lo, inner.hi, low.sizes)
    if st.op != "+=" or fs is None or not isinstance(st.target, ir.Access):
        return f"the body of `{inner.var}` is not `T[..] += x * y`"
    if not J or not D or J > 255:
        return f"the trip counts are not constant, or `{outer.var}` runs more than 255 times (one repeat per element)"
    d, k = outer.var, inner.var
    x, y = fs if not _uses(fs[0], d) else (fs[1], fs[0])
    if _uses(x, d) or not _uses(y, d):
        return f"not one factor independent of `{d}` and one dependent on it"
    ya = y.args[0] if isinstance(y, ir.Call) and y.func == "f32" and len(y.args) == 1 else y
    if not isinstance(ya, ir.Access) or low.decls[st.target.tensor].dtype != "f32":
        return "the accumulator is not f32, or the factor over `" + d + "` is not a tensor read"
    info = low.info.get(ya.tensor)
    if info is None or info.kind != "local" or info.scope != "ub" or len(ya.indices) < 2 or info.dtype not in VEC_TYPES:
        return f"`{ya.tensor}` is not an f16/f32 UB tile of rank >= 2 (stage it first)"
    afs = [to_affine(i, low.sizes) for i in ya.indices]
    if any(a is None for a in afs):
        return f"an index of `{ya.tensor}` is not affine"
    *rest, ad, ak = afs
    if ad.coeff(d) != 1 or ak.coeff(d) or ak.coeff(k) != 1 or ad.coeff(k) or any(a.coeff(d) or a.coeff(k) for a in rest):  # type: ignore[union-attr]
        return f"`{ya.tensor}` is not indexed [.., {d}, {k}] (rows `{d}`, `{k}` unit stride)"
    rs = info.strides[-2]
    if rs != D or (rs * 4) % 32 or rs * 4 // 32 > 255:
        return f"the rows of `{ya.tensor}` are not {D} elements of 32 B-aligned length (at most 255 blocks)"
    if (y is not ya and info.dtype != "f16") or (y is ya and info.dtype != "f32"):
        return f"`{ya.tensor}` is neither f32 nor f16 widened by `f32(..)`"
    try:
        dsel = _Sel(pe, [outer], J, depth)
        dsel.origin = low.where(st)
        tgt = dsel.access_ref(st.target, write=True)
        if tgt.dtype != "f32":
            return "the accumulator is not f32"
        # the tile's first element: every index at its loop's lower bound
        first = ir.Access(ya.tensor, ya.indices)
        lo_map = {d: outer.lo, k: inner.lo}
        from .cexpr import affine_cpp

        base = Affine((), 0)
        for a, s_ in zip(afs, info.strides):
            assert a is not None
            b = Affine.make({v: c for v, c in a.coeffs if v not in lo_map}, a.const)
            for v, lo in lo_map.items():
                la = to_affine(lo, low.sizes)
                if la is None:
                    return f"the lower bound of `{v}` is not affine"
                b = b + la.scale(a.coeff(v))
            base = base + b.scale(s_)
        if any((c * ir.DTYPE_BYTES[info.dtype]) % 32 for _, c in base.coeffs) or (base.const * ir.DTYPE_BYTES[info.dtype]) % 32:
            return f"the tile of `{ya.tensor}` does not start 32 B aligned"
        del first
        ysrc = Operand(info.cname, info.dtype, affine_cpp(base, low.names))
        # the row x(k) in f32, by a selection over `k`
        xsel = _Sel(pe, [inner], D, depth)
        xsel.origin = dsel.origin
        xv = xsel.as_type(xsel.compile(x), "f32")
        if not isinstance(xv, Vec):
            return f"the factor over `{k}` is a scalar"
        tile_bytes = J * xsel.slot_bytes  # one slot of x's size (D f32 = one tile row) per row
        # layout of the scratch: [x's slots][the f32 tile][the J sums]
        tile = Operand(xsel.slot_operand("f32", 0).base, "f32", str(xsel.need // 4))
        sums = Operand(tile.base, "f32", str((xsel.need + tile_bytes) // 4))
        need = xsel.need + tile_bytes + -(-J * 4 // xsel.slot_bytes) * xsel.slot_bytes
        items = list(xsel.items)
        o = dsel.origin
        rb = rs * 4 // 32
        src = ysrc
        if y is not ya:
            items.append(Placed(VecOp("Cast", tile, (ysrc,), None, J * rs, round="CAST_NONE"), o))
            src = tile
        cols = [(c, min(64, D - c)) for c in range(0, D, 64)]  # 256 B of f32 per repeat
        for c, mask in cols:
            items.append(Placed(VecOp("Mul", tile.at(c), (src.at(c), xv.op.at(c)), None, 0,
                                      Repeat(mask, J, (1, 1, 1), (rb, rb, 0))), o))
        for c, mask in cols[1:]:
            items.append(Placed(VecOp("Add", tile, (tile, tile.at(c)), None, 0, Repeat(mask, J, (1, 1, 1), (rb, rb, rb))), o))
        items.append(Placed(VecOp("WholeReduceSum", sums, (tile,), None, 0, Repeat(min(D, 64), J, (1, 1), (1, rb))), o))
        items.append(Placed(VecOp("Add", tgt.op, (tgt.op, Operand(sums.base, "f32", sums.offset)), None, J), o))
    except NoMatch as e:
        return str(e)
    # reported as whole slots of one tile row (the capacity model counts equal slots)
    out = _Sel(pe, [outer], D, depth)
    out.items = items
    out.slots = -(-need // out.slot_bytes)
    out.purposes = ["expression temporaries", "Cast staging", "reduction work areas"]
    return out


def _unread_reduction(st: ir.Assign, leaves: list[ir.Assign]) -> bool:
    """Is `st` a reduction (`max=`, `min=`, `+=`) whose target no other statement of the
    distributed loop reads or writes? Then distributing the loop is legal with it too: the
    reduction runs once over the whole loop (a vector `Reduce*`) where it stood, after the
    statements before it wrote every element it reads, and nothing in the loop sees the
    partial values (fused attention: `mx max= s[j]` in the loop computing the scores)."""
    if st.op not in ("max=", "min=", "+="):
        return False
    name = st.target.tensor if isinstance(st.target, ir.Access) else st.target.name
    for other in leaves:
        if other is st:
            reads = [x for x in ir.sub_exprs(st.value)]
        else:
            t = other.target
            if (t.tensor if isinstance(t, ir.Access) else t.name) == name:
                return False
            reads = [x for e in ir.stmt_exprs(other) for x in ir.sub_exprs(e)]
        if any((isinstance(x, ir.Access) and x.tensor == name) or (isinstance(x, ir.Name) and x.name == name)
               for x in reads):
            return False
    return True


@dataclass
class Distributed:
    """A `match_distributed` selection: the items of every statement in order, the widest
    statement selection (its temporaries' shape), the bytes and instructions of all, and
    the pattern chosen for each inner loop (`axpy`, `dot`, `contract`)."""

    items: list[Placed]
    widest: "_Sel"
    need: int
    instrs: list[str]
    kinds: list[str]
    # per inner loop, what the `inner` site's patterns said: (loop variable, tried)
    inner_tried: list[tuple[str, tuple[tuple[str, float | None, str], ...]]] = field(default_factory=list)


InnerChooser = Callable[[ir.For, bool], "tuple[_Sel, bool, str] | str"]


def axpy(pe: "PhaseEmitter", loop: ir.For, x: ir.For, depth: int) -> "_Sel | str":
    """The inner loop `x` of a distributed `loop` kept as a C++ loop around vector
    instructions over `loop` (pattern `axpy`), or why not."""
    n = affine_extent(loop.lo, loop.hi, pe.low.sizes)
    sel = _Sel(pe, [loop], n or 0, depth + 1)
    try:
        for st in x.body:
            sel.store(st)  # type: ignore[arg-type]
    except NoMatch as e:
        return str(e)
    if "Gather" in sel.instrs:
        return f"an operand is strided in `{loop.var}`: a Gather on every iteration of `{x.var}`"
    return sel


def match_distributed(pe: "PhaseEmitter", loop: ir.For, depth: int, inner: InnerChooser) -> "Distributed | str":
    """`for d { S1; for j { S2 }; S3 }` with every written element indexed by `d` (unit
    stride) and touched only at that index: the `d` loop is distributed over its statements
    (legal: iteration `d` touches element `d` of each written tensor only, so every element
    sees its statements in the original order), each vectorised over `d`, the inner `j` loops
    kept as C++ loops (axpy form) or, for a dot product over `j` (`_dot`), as whole-tile code.
    This is P·V with its init and normalisation:
    `acc[i, d] = 0; for j { acc[i, d] += p[i, j] * f32(V[j, d]) }; O[i, d] = f16(acc[i, d] / sm[i])`,
    and QKᵀ: `s[i, j] = 0; for k { s[i, j] += f32(Q[i, k]) * f32(K[j, k]) }; s[i, j] = s[i, j] * c + ..`.
    Each inner loop's form is chosen by `inner(x, deep)` (the `inner` site's patterns:
    `axpy`, `dot`, `contract`): (selection, still a C++ loop, form) or why none applies.
    The selection, or why not (pattern `distributed`)."""
    low = pe.low
    n = affine_extent(loop.lo, loop.hi, low.sizes)
    from .contract import perfect_nest

    leaves: list[ir.Assign] = []
    deep: set[int] = set()  # inner nests of several loops: reductions over them (contract.py)
    for x in loop.body:
        if isinstance(x, ir.For) and any(isinstance(y, ir.For) for y in x.body):
            got = perfect_nest(x)
            if got is None:
                return f"the nest under `{x.var}` is not a perfect nest around one statement"
            deep.add(id(x))
            leaves.append(got[1])
            continue
        if isinstance(x, ir.Copy):
            return "the loop body holds a copy"
        leaves.extend([x] if isinstance(x, ir.Assign) else list(x.body))  # type: ignore[arg-type]
    if not n or n <= 0:
        return f"the bounds of `{loop.var}` are not constant"
    try:
        _same_index_check(tuple(leaves))
    except NoMatch as e:
        return str(e)
    for st in leaves:
        tgt = st.target
        if not isinstance(tgt, ir.Access) or not any(isinstance(x, ir.Name) and x.name == loop.var
                                                    for i in tgt.indices for x in ir.sub_exprs(i)):
            if st in loop.body and _unread_reduction(st, leaves):
                continue  # `mx max= s[j]` after the scores: reduced once over the loop, at its place
            return f"a statement stores an element independent of `{loop.var}`: a reduction over `{loop.var}` " \
                   "would be read before it completes"
    for x in loop.body:
        if isinstance(x, ir.For) and id(x) not in deep:
            for st in x.body:
                if any(isinstance(y, ir.Name) and y.name == x.var for i in st.target.indices for y in ir.sub_exprs(i)):  # type: ignore[union-attr]
                    return f"a statement under `{x.var}` stores an element that depends on `{x.var}`"
    items: list[Placed] = []
    instrs: list[str] = []
    need = 0
    widest: _Sel | None = None
    kinds: list[str] = []
    for x in loop.body:
        if isinstance(x, ir.For):
            got_x = inner(x, bool(deep))
            if isinstance(got_x, str):
                return f"the inner loop `{x.var}`: {got_x}"
            sel, still_loop, kind = got_x
            kinds.append(kind)
        else:
            sel, still_loop = _Sel(pe, [loop], n, depth), False
            try:
                sel.store(x)  # type: ignore[arg-type]
            except NoMatch as e:
                return str(e)
        if widest is None or sel.need > widest.need:
            widest = sel
        need = max(need, sel.need)
        instrs.extend(i for i in sel.instrs if i not in instrs)
        if still_loop:
            assert isinstance(x, ir.For)
            items.append(Placed(Loop(low.names(x.var), pe.ex.index(x.lo), pe.ex.index(x.hi), tuple(sel.items)), low.where(x)))
        else:
            items.extend(sel.items)
    if not fits(pe, need, instrs):
        return over_capacity(pe, need, instrs)
    assert widest is not None
    return Distributed(items, widest, need, instrs, kinds)


def commit_distributed(pe: "PhaseEmitter", loop: ir.For, d: Distributed, depth: int) -> list[Line]:
    """Emit a `match_distributed` selection."""
    low = pe.low
    pe.ph.tmp_bytes = max(pe.ph.tmp_bytes, d.need)
    how = ("a reduction over a nest as a 2-D tile" if "contract" in d.kinds else
           "a dot product per element as whole-tile code" if "dot" in d.kinds else "distributed over its statements")
    choice = d.widest.choice(f"{low.where(loop)} `{loop.label or loop.var}` ({how}, vectorised over `{loop.var}`)")
    low.nests.append(NestChoice(choice.where, tuple(d.instrs), "", choice.phase, choice.nest, d.need,
                                choice.temp_elems, choice.temp_slots, choice.temp_purposes, False,
                                needs_api_temp(d.instrs), choice.temp_shape, tuple(d.items), inner=tuple(d.kinds),
                                inner_tried=tuple(d.inner_tried)))
    return render(d.items, depth)
