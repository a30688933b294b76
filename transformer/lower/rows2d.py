"""Short rows, several rows per instruction: a row loop's statistics as whole-tile vector code.

After `fuse,tile`, softmax, layernorm and rmsnorm run a loop over the rows of a staged
`[rows, C]` tile whose body computes per-row statistics (rank-0 temps such as `mx`, `sm`,
`mu`, `rstd`, or a row-indexed local `var_ub[n]`) and uses them along the row:

    for r in 0..64 {
      mx = -inf
      for c in 0..C { mx max= f32(X_ub[r, c]) }
      sm = 0.0
      for c in 0..C { e_ub[c] = exp(f32(X_ub[r, c]) - mx); sm += e_ub[c] }
      for c in 0..C { Y_ub[r, c] = f16(e_ub[c] / sm) }
    }

Per row (`vector.py`), each statistic is a count-form `ReduceMax`/`ReduceSum`, a V -> S flag
and a `GetValue`, and each row-wise use a scalar-operand instruction: for short rows (C = 64)
the instruction heads and the round trips cost 5-10x the data. Here each statement runs over
all rows at once (legal: iteration `r` touches row `r` of every tile, its own statistics and
a row-private vector only, so running statement by statement over all rows performs, for
every row, the same operations in the same order):

- a per-row scalar is a *row vector* of one value per row in the scratch (`mx` -> `[rows]`);
  a row-private local (`e_ub[c]`, written before it is read in each row) becomes a tile;
- a row-level statement (`mu = mu / H`, `rstd = rsqrt(var_ub[n] + eps)`) is a vector
  statement over the row vectors (count form over `rows` elements);
- elementwise work over the tile (`Cast`, `Exp`, tile-by-tile arithmetic) is one count-form
  instruction over `rows x pitch` elements (rows padded to whole 32 B blocks are computed
  through, never read back);
- a row reduction `s op= e(c)` folds the row's 256 B repeats (`Max`/`Min`/`Add`, mask/repeat
  form, one repeat per row) and reduces each row with `WholeReduceMax`/`Min`/`Sum`, one
  repeat per row, into the row vector — no V -> S flag; an identity initialisation right
  before it (`mx = -inf`, `sm = 0.0`) is folded into the reduction;
- an operand that depends on the row only (`mx` in `x - mx`) is broadcast into one 32 B block
  per row (`Brcb`) and read at block stride 0, repeat stride 1 block; one that depends on the
  column only (`f32(gamma_ub[h])`, computed once over C elements) at repeat stride 0: each
  row-wise operation is one mask/repeat instruction per 256 B of the row (one repeat per row),
  at most `ROWS_PER_CALL` rows per call.

Partial rows (`Shape.partial`, RoPE's `Y_ub[s, h, d]` and `Y_ub[s, h, d + Dh]` over row `h`):
when an operand starts inside its row, the rest of the row is another statement's columns, so
every tile instruction is a mask/repeat one over the columns (never computed through), one
tensor may be stored at disjoint column patterns, and values the column loop's statements
share are computed once (`shared_values`). The row may then be any one dimension of a tensor
of rank 3 or more (`_row_dim`).

The selection is `vector._Sel` in three modes (the tile; the row vectors; the column
vectors): its expression compiler, casts and temporaries are reused, and `vop` emits the
mask/repeat form when an operand is a broadcast (`BVec`). `choose` compares the plan's price
(`price.py`, on the target's timing facts) with the per-row plan of the same loop and keeps
the cheaper: for long rows (a row per tile, or rows of thousands of elements) the per-row
count-form code with its round trips is cheaper and stays.

When the whole tile's scratch (a tile-sized slot per temporary) does not fit UB beside the
locals, the rows run in *row groups* (`_grouped`): the largest group of G rows (a multiple of
16) whose selection fits, in a C++ loop over the groups; each group's tile and row-indexed
operands are G rows further, the scratch is reused (rows are independent, so groups are too).
The capacity proof (`ascx check`, Z3) counts the scratch the lowering chose.

Size: about 750 lines, one selection: the shape check (`match`: which rows are independent),
the three-mode selector that reuses `_Sel` (operands, broadcasts, reductions), the row
groups and the priced choice; they share `Shape` and are only meaningful together.

Not handled (the per-row code runs): statistics read after the row loop, GM operands, rows
whose accesses are not exactly row `r`, row pitches that are not whole 32 B blocks or above
255 blocks, tiles of more than 255 rows with a run-time row count, a group of 16 rows that
still does not fit.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterator

from .. import ir
from ..affine import Affine, to_affine
from ..dtypes import Ty, promote
from ..intexpr import affine_extent, eval_const
from .instr import Flag, Loop, Operand, Placed, Repeat, VecOp, render, row_chunks, whole_reduce
from .plan import Line, NestChoice
from .price import Pricer
from .cexpr import CTYPE
from .temporaries import fits, needs_api_temp
from .vector import _COMPOUND, VEC_TYPES, NoMatch, Scal, Vec, _same_index_check, _Sel, _trip, cse_uses, quasi_affine_reason

if TYPE_CHECKING:
    from .lower import PhaseEmitter

BCAST_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins"})
_REDUCE = {"max=": ("Max", "WholeReduceMax"), "min=": ("Min", "WholeReduceMin"), "+=": ("Add", "WholeReduceSum")}


@dataclass
class BVec(Vec):
    """A vector broadcast over the tile: `row` (one value per row, along the row) or `col`
    (one value per column, over the rows)."""

    kind: str = "row"


@dataclass
class Shape:
    """What `match` found: the row loop, its tile and its row-level names."""

    row: ir.For
    rows: int  # the largest row count
    rows_cpp: str  # "" when constant, else the C++ run-time row count (a tile tail)
    cols: int  # C: every column loop's extent
    col_lo: int
    pitch: int  # elements between two rows of every tile operand
    scalars: dict[str, str] = field(default_factory=dict)  # per-row rank-0 temp -> dtype
    private: dict[str, str] = field(default_factory=dict)  # row-private local -> dtype
    skip: set[int] = field(default_factory=set)  # ids of identity initialisations folded into the reduction after them
    fresh: set[int] = field(default_factory=set)  # ids of reductions writing their target directly
    # some operand starts inside its row (RoPE's `X_ub[s, h, d + Dh]`): the rest of a row is not
    # padding but another statement's columns, so every tile instruction is a mask/repeat one
    # over the columns only (never computed through)
    partial: bool = False


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.sub_exprs(e) if isinstance(x, ir.Name)}


def _literal(e: ir.Expr) -> float | None:
    if isinstance(e, (ir.IntLit, ir.FloatLit)):
        return float(e.value)
    if isinstance(e, ir.Unary) and e.op == "-":
        v = _literal(e.operand)
        return None if v is None else -v
    return None


def _seq(row: ir.For) -> list[tuple[ir.Assign, ir.For | None]]:
    """The row body's statements in order, each with its column loop (None at row level)."""
    out: list[tuple[ir.Assign, ir.For | None]] = []
    for x in row.body:
        if isinstance(x, ir.For):
            out.extend((y, x) for y in x.body)  # type: ignore[misc]
        else:
            out.append((x, None))  # type: ignore[arg-type]
    return out


def _target_name(st: ir.Assign) -> str:
    return st.target.tensor if isinstance(st.target, ir.Access) else st.target.name


def _refs(st: ir.Assign) -> list[ir.Expr]:
    return [x for e in ir.stmt_exprs(st) for x in ir.sub_exprs(e) if isinstance(x, (ir.Name, ir.Access))]


def _reads(st: ir.Assign) -> set[str]:
    """Names and tensors a statement reads (its value and its target's indices)."""
    exprs = [st.value, *(st.target.indices if isinstance(st.target, ir.Access) else ())]
    return {x.name if isinstance(x, ir.Name) else x.tensor for e in exprs for x in ir.sub_exprs(e)
            if isinstance(x, (ir.Name, ir.Access))}


def _used_outside(stmts: tuple[ir.Stmt, ...], row: ir.For) -> tuple[set[str], bool]:
    """(names mentioned by statements outside `row`, whether `row` was found)."""
    out: set[str] = set()
    found = False
    for s in stmts:
        if s is row:
            found = True
            continue
        out |= ir.stmt_names(s)
        if isinstance(s, ir.For):
            inner, f = _used_outside(s.body, row)
            out |= inner
            found = found or f
    return out, found


def _assigned_outside(stmts: tuple[ir.Stmt, ...], row: ir.For) -> set[str]:
    """Names the assignments outside `row` mention (copies excluded: their DMA is ordered by
    queues and flags of its own)."""
    out: set[str] = set()
    for s in stmts:
        if s is row:
            continue
        if isinstance(s, ir.For):
            out |= _assigned_outside(s.body, row)
        elif isinstance(s, ir.Assign):
            out |= ir.stmt_names(s)
    return out


def scalar_order(pe: "PhaseEmitter", row: ir.For, items: list[Placed]) -> tuple[list[Placed], list[Placed]]:
    """Flags around the whole-tile items: the per-row code accessed the row statistics kept in
    locals (`mx_ub[i]`, `sm_ub[i]` of attention) with GetValue / SetValue on the scalar unit;
    here the vector unit does. When a statement outside the loop (scalar code, possibly) also
    accesses such a local, S -> V orders its earlier accesses before these instructions and
    V -> S their writes before its later ones (`SetFlag`/`WaitFlag` pairs, once per tile)."""
    low = pe.low
    by_cname = {i.cname: n for n, i in low.info.items() if i.kind == "local"}
    touched, written = set(), set()
    flat = [q for p in items for q in (p.item.body if isinstance(p.item, Loop) else (p,))]  # row groups: their loop's body
    for p in flat:
        it = p.item
        if isinstance(it, VecOp):
            written |= {by_cname[it.dst.base]} if it.dst.base in by_cname else set()
            touched |= {by_cname[o.base] for o in (it.dst, *it.srcs) if o.base in by_cname}
    shared = _assigned_outside(low.kernel.body, row)
    where = low.where(row)
    return ([Placed(Flag("S_V"), where)] if touched & shared else [],
            [Placed(Flag("V_S"), where)] if written & shared else [])


def match(pe: "PhaseEmitter", row: ir.For) -> Shape | str:
    """The shape of the row loop `row`, or why it is not one (module docstring)."""
    low = pe.low
    if not low.select or pe.ph.core != "vec":
        return "not a vector phase"
    nests = [x for x in row.body if isinstance(x, ir.For)]
    if not nests or not all(isinstance(x, ir.Assign) or (isinstance(x, ir.For) and x.body and
                                                          all(isinstance(y, ir.Assign) for y in x.body)) for x in row.body):
        return "the row body is not statements and column loops of statements"
    trip = _trip(pe, row)
    if trip is None or eval_const(row.lo, low.sizes) != 0:
        return "the row loop does not start at 0 with a constant or tail extent"
    rows, rows_cpp = trip
    if rows_cpp and rows > 255:
        return "more than 255 rows with a run-time row count"
    spans = {(eval_const(x.lo, low.sizes), affine_extent(x.lo, x.hi, low.sizes)) for x in nests}
    if len(spans) != 1:
        return "column loops of different extents"
    col_lo, cols = spans.pop()
    if col_lo is None or not cols or cols <= 0 or any(x.var == row.var for x in nests):
        return "a column loop without constant bounds"
    seq = _seq(row)
    sh = Shape(row, rows, rows_cpp, cols, col_lo, 0)
    # per-row scalars: rank-0 temps written in the body, first by a row-level `=`
    written = {_target_name(st) for st, _ in seq}
    for st, nest in seq:
        for x in _refs(st):
            n = x.name if isinstance(x, ir.Name) else x.tensor
            info = low.info.get(n)
            if n in sh.scalars or n not in written or info is None or info.kind != "scalar":
                continue
            if nest is not None or st.target is not x or st.op != "=" or n in _names(st.value) or low.decls[n].kind != "temp":
                return f"`{n}` is read before it is set in the row"
            sh.scalars[n] = low.decls[n].dtype
    # tensors: locals in UB; a written one is indexed by exactly `r` (its row) or row-private
    pitches: set[int] = set()
    first: dict[str, tuple[ir.Assign, ir.For | None, ir.Access]] = {}
    for st, nest in seq:
        accs = [x for x in _refs(st) if isinstance(x, ir.Access)]
        # the reads of a statement come before its write
        if isinstance(st.target, ir.Access):
            accs = [a for a in accs if a is not st.target] + [st.target]
        for a in accs:
            info = low.info.get(a.tensor)
            if info is None or info.kind != "local" or info.scope != "ub":
                return quasi_affine_reason(a.tensor, row.body, low.sizes) or f"`{a.tensor}` is not a UB local"
            first.setdefault(a.tensor, (st, nest, a))
            uses_r = any(row.var in _names(i) for i in a.indices)
            # rank 3 and more: row `r` in one dimension (`Y_ub[s, h, d]` over row `h`)
            dim = _row_dim(a, row.var) if len(a.indices) > 2 else None
            if uses_r and (len(a.indices) == 2 or dim is not None):
                pitches.add(info.strides[dim if dim is not None else 0])
                off = _in_row_offset(a, dim if dim is not None else 0, info.strides, low.sizes)
                if off is None:
                    return f"`{a.tensor}` is not indexed by a row and columns"
                sh.partial = sh.partial or off != 0
            if a.tensor not in written:
                continue
            if uses_r:
                if dim is None and (not (isinstance(a.indices[0], ir.Name) and a.indices[0].name == row.var) or
                                    any(row.var in _names(i) for i in a.indices[1:]) or len(a.indices) > 2):
                    return f"`{a.tensor}` is written in the row and accessed outside row `{row.var}`"
            else:
                if nest is None or len(a.indices) != 1 or not (isinstance(a.indices[0], ir.Name) and a.indices[0].name == nest.var):
                    return f"`{a.tensor}` is written in the row and not indexed by the column alone"
                sh.private[a.tensor] = info.dtype
    for x in nests:  # a reduction's partial value is never read in its own loop (it completes first here)
        reduced = {_target_name(st) for st in x.body if x.var not in _names(st.target)}
        if any(_reads(st) & reduced for st in x.body):
            return f"a row reduction is read in its own column loop `{x.var}`"
    for t in sh.private:
        st, nest, a = first[t]
        if nest is None or st.target is not a or st.op != "=":
            return f"`{t}` is read before it is written in the row"
    if len(pitches) != 1:
        return "no tile operand, or tile operands with different row pitches"
    sh.pitch = pitches.pop()
    if (sh.pitch * 4) % 32 or sh.pitch < cols:
        return "the tile's rows are not whole 32 B blocks of f32"
    outside, found = _used_outside(low.kernel.body, row)
    if not found or (set(sh.scalars) | set(sh.private)) & outside:
        return "a per-row value is used after the row loop"
    _fold_identities(sh, row)
    return sh


_IDENTITY = {"max=": float("-inf"), "min=": float("inf"), "+=": 0.0}


def _row_dim(a: ir.Access, r: str) -> int | None:
    """The dimension of `a` indexed by exactly the row variable `r`, when no other index
    mentions `r` (row `r` of a tensor of any rank: `Y_ub[s, h, d]` over row `h`), else None."""
    dims = [k for k, i in enumerate(a.indices) if r in _names(i)]
    if len(dims) != 1 or not (isinstance(a.indices[dims[0]], ir.Name) and a.indices[dims[0]].name == r):
        return None
    return dims[0]


def _in_row_offset(a: ir.Access, dim: int, strides: "tuple[int, ...]", sizes: dict[str, int]) -> int | None:
    """The constant element offset inside its row of `a` (row index in dimension `dim`): the
    constant part of the indices after `dim`; None when an index before `dim` mentions no
    loop but is not constant, or an index after it is not affine."""
    off = 0
    for e, st in zip(a.indices[dim + 1:], strides[dim + 1:]):
        af = to_affine(e, sizes)
        if af is None:
            return None
        off += af.const * st
    return off


def _fold_identities(sh: Shape, row: ir.For) -> None:
    """`T = identity` at row level followed by a column loop whose only mention of `T` is
    `T op= e` (op's identity: -inf for max, inf for min, 0 for a sum): the reduction writes
    `T` directly and the initialisation is dropped (max(-inf, m) = m, 0 + s = s)."""
    body = row.body
    for i, x in enumerate(body):
        if not isinstance(x, ir.Assign) or x.op != "=":
            continue
        v = _literal(x.value)
        t = _target_name(x)
        for y in body[i + 1:]:
            stmts = list(y.body) if isinstance(y, ir.For) else [y]
            mentions = [s for s in stmts if any((r.name if isinstance(r, ir.Name) else r.tensor) == t for r in _refs(s))]
            if not mentions:
                continue
            s = mentions[0]
            if isinstance(y, ir.For) and len(mentions) == 1 and s.target == x.target and s.op in _IDENTITY \
                    and v == _IDENTITY[s.op] and t not in _names(s.value) and \
                    not any(isinstance(a, ir.Access) and a.tensor == t for a in _refs(s) if a is not s.target):
                sh.skip.add(id(x))
                sh.fresh.add(id(s))
            break


class RowsSel(_Sel):
    """`_Sel` over a whole `[rows, C]` tile (`kind` "tile"), its row vectors ("row") or its
    column vectors ("col"); see the module docstring."""

    def __init__(self, pe: "PhaseEmitter", sh: Shape, depth: int) -> None:
        first = next(x for x in sh.row.body if isinstance(x, ir.For))
        super().__init__(pe, [sh.row, first], sh.rows * sh.pitch, depth)
        self.sh = sh
        # a slot holds a tile, or the row broadcast of `Brcb` (8 blocks per repeat of 8 rows)
        self.slot_bytes = max(self.slot_bytes, -(-sh.rows // 8) * 256)
        self.kind = "tile"
        self.col = first
        self.bcasts: dict[Operand, Vec] = {}
        self.bvec_ops: set[Operand] = set()
        self.loop_cse: dict[str, int] = {}  # values the column loop's statements share (`shared_values`)
        self.loop_vals: dict[str, Vec] = {}
        # reserved at the start of the scratch: a row vector per per-row scalar, a tile per
        # row-private local (never released); the expression slots follow
        self.home: dict[str, Operand] = {}
        off = 0
        for n, dt in [*sh.scalars.items(), *sh.private.items()]:
            es = ir.DTYPE_BYTES[dt]
            self.home[n] = self.slot_operand(dt, off)
            off += -(-(sh.rows * (sh.pitch if n in sh.private else 1) * es) // 32) * 32
        self.base_bytes = off
        self.purposes = ["row statistics"] if sh.scalars else []
        self._set("tile")

    # ---- modes ---------------------------------------------------------------------------
    def _set(self, kind: str) -> None:
        sh = self.sh
        self.kind = kind
        if kind == "tile":
            self.loops, self.n, self.quantum, self.inner_n = [sh.row, self.col], sh.rows * sh.pitch, sh.pitch, sh.pitch
            self.count = f"({sh.rows_cpp}) * {sh.pitch}" if sh.rows_cpp else self.n
        elif kind == "row":
            self.loops, self.n, self.inner_n = [sh.row], sh.rows, 0
            self.count = sh.rows_cpp or sh.rows
            self.quantum = 1 if sh.rows_cpp else sh.rows
        else:
            self.loops, self.n, self.quantum, self.inner_n = [self.col], sh.cols, sh.cols, 0
            self.count = sh.cols
        self.vars = {lp.var for lp in self.loops}

    @contextmanager
    def mode(self, kind: str) -> Iterator[None]:
        saved = self.kind
        self._set(kind)
        try:
            yield
        finally:
            self._set(saved)

    def kind_of(self, e: ir.Expr) -> str:
        """"tile", "row", "col" or "" (neither: a scalar) for an expression in the tile."""
        ns = _names(e)
        private = any(isinstance(x, ir.Access) and x.tensor in self.sh.private for x in ir.sub_exprs(e))
        r = self.sh.row.var in ns or bool(ns & set(self.sh.scalars)) or private
        c = self.col.var in ns or private
        return "tile" if r and c else "row" if r else "col" if c else ""

    # ---- operands ------------------------------------------------------------------------
    def depends(self, e: ir.Expr) -> bool:
        ns = _names(e)
        return bool(ns & self.vars) or (self.kind != "col" and bool(ns & set(self.sh.scalars)))

    def compile(self, e: ir.Expr, dest: Vec | None = None) -> Vec | Scal:
        if self.kind == "tile":
            k = self.kind_of(e)
            if k in ("row", "col"):
                with self.mode(k):
                    v = self.compile(e)
                if isinstance(v, Scal):  # pragma: no cover - a row or column expression depends on its loop
                    return v
                return self.bvec(v, k)
        if isinstance(e, ir.Name) and e.name in self.sh.scalars:
            if self.kind != "row":
                raise NoMatch(f"`{e.name}` outside the rows")
            return Vec(self.home[e.name])
        return super().compile(e, dest)

    def access_ref(self, a: ir.Access, write: bool = False, into: Vec | None = None) -> Vec:
        if a.tensor in self.sh.private:
            if self.kind != "tile":
                raise NoMatch(f"`{a.tensor}` outside the tile")
            return Vec(self.home[a.tensor])
        if self.kind != "tile":
            return super().access_ref(a, write, into)
        return self.tile_ref(a)

    def tile_ref(self, a: ir.Access) -> Vec:
        """The tile operand of `a` (row `r` at the pitch, column `c` unit-stride, 32 B aligned)."""
        info = self.low.info[a.tensor]
        total = Affine((), 0)
        for e, st in zip(a.indices, info.strides):
            af = to_affine(e, self.low.sizes)
            if af is None:
                raise NoMatch("non-affine index")
            total = total + af.scale(st)
        r, c = self.sh.row.var, self.col.var
        if total.coeff(r) != self.sh.pitch or total.coeff(c) != 1:
            raise NoMatch(f"`{a.tensor}` is not a [rows, C] tile at the row pitch")
        base = Affine.make({k: v for k, v in total.coeffs if k not in (r, c)}, total.const) + Affine((), self.sh.col_lo)
        es = ir.DTYPE_BYTES[info.dtype]
        if any((k * es) % 32 for _, k in base.coeffs) or (base.const * es) % 32:
            raise NoMatch(f"`{a.tensor}` tile is not 32 B aligned")
        from .cexpr import affine_cpp

        return Vec(Operand(info.cname, info.dtype, affine_cpp(base, self.low.names)))

    def target_ref(self, tgt: ir.Access | ir.Name) -> Vec | None:
        if self.kind == "row" and isinstance(tgt, ir.Name) and tgt.name in self.sh.scalars:
            return Vec(self.home[tgt.name])
        if self.kind == "tile" and self.kind_of(tgt) != "tile":
            return None  # a reduction into the row vector
        return super().target_ref(tgt)

    def as_type(self, v: Vec | Scal, dtype: str, dest: Vec | None = None) -> Vec | Scal:
        if isinstance(v, BVec):
            if v.dtype == dtype:
                return v
            with self.mode(v.kind):
                w = super().as_type(Vec(v.op, v.tmp), dtype)
            assert isinstance(w, Vec)
            return self.bvec(w, v.kind)
        return super().as_type(v, dtype, dest)

    def bvec(self, v: Vec, kind: str) -> BVec:
        """`v` (computed over the rows or the columns) as a broadcast operand of the tile; its
        operand is remembered so that no count-form instruction reads it as a tile (`emit`)."""
        self.bvec_ops.add(v.op)
        return BVec(v.op, v.tmp, kind)

    def copy_into(self, dst: Vec, v: Vec) -> None:
        if not isinstance(v, BVec):
            super().copy_into(dst, v)
            return
        if dst.dtype not in VEC_TYPES:
            raise NoMatch(f"a row or column vector broadcast into a {dst.dtype} tile")
        w = self.as_type(v, dst.dtype)
        assert isinstance(w, BVec)
        self.vop("Adds", dst, w, scalar=f"{CTYPE[dst.dtype]}(0.0f)")
        if w.op != v.op:
            self.release(w)

    def emit(self, item: Any) -> None:
        """As `_Sel.emit`; in the tile, an instruction that reads a broadcast operand as if it
        were a tile (anything but the mask/repeat forms of `vop`) means a shape not handled."""
        if self.kind == "tile" and isinstance(item, VecOp) and item.repeat is None and \
                any(s in self.bvec_ops for s in item.srcs):
            raise NoMatch(f"`{item.op}` reads a row or column vector as a tile")
        if self.kind == "tile" and self.sh.partial and isinstance(item, VecOp) and item.repeat is None:
            raise NoMatch(f"`{item.op}` in count form over rows that are partly other statements' columns")
        super().emit(item)

    def arith(self, op: str, a: Vec | Scal, b: Vec | Scal, dt: str, dest: Vec | None) -> Vec:
        if self.kind == "tile" and (isinstance(a, BVec) or isinstance(b, BVec)):
            if dest is None or isinstance(dest, BVec) or dest.dtype != dt:
                tiles = [x for x in (a, b) if isinstance(x, Vec) and not isinstance(x, BVec) and x.tmp >= 0 and x.dtype == dt]
                dest = tiles[0] if tiles else self.alloc(dt)
        return super().arith(op, a, b, dt, dest)

    def release(self, v: Vec | Scal) -> None:
        """As `_Sel.release`, once: `copy_into` and `as_type` release what they cast already."""
        if isinstance(v, Vec) and v.tmp >= 0 and v.tmp not in self.free:
            self.free.append(v.tmp)

    # ---- broadcast operands: the mask/repeat form ----------------------------------------
    def brcb(self, v: BVec) -> Vec:
        """The row vector `v` broadcast into one 32 B block per row (`Brcb`), once per statement."""
        got = self.bcasts.get(v.op)
        if got is not None:
            return got
        blk = self.alloc(v.dtype, "row broadcasts")
        per_blk = 32 // ir.DTYPE_BYTES[v.dtype]
        for r0, t in row_chunks(self.sh.rows, self.sh.rows_cpp):
            times = -(-t // 8) if isinstance(t, int) else f"(({t}) + 7) / 8"
            self.emit(VecOp("Brcb", blk.op.at(r0 * per_blk), (v.op.at(r0),), None, 0, Repeat(0, times, (1,), (8,))))
        self.bcasts[v.op] = blk
        return blk

    def pitch_blocks(self, dtype: str) -> int:
        b, rem = divmod(self.sh.pitch * ir.DTYPE_BYTES[dtype], 32)
        if rem or b > 255:
            raise NoMatch(f"a row pitch of {self.sh.pitch} {dtype} is not a repeat stride")
        return b

    def vop(self, op: str, dst: Vec, *srcs: Vec, scalar: str | None = None, **kw: object) -> None:
        partial = self.kind == "tile" and self.sh.partial
        if not partial and (self.kind != "tile" or not any(isinstance(s, BVec) for s in srcs)):
            super().vop(op, dst, *srcs, scalar=scalar, **kw)
            return
        if partial and op == "Cast" and set(kw) <= {"round"} and len(srcs) == 1 and not isinstance(srcs[0], BVec):
            pass  # a cast of the partial tile: mask/repeat over its columns, strides per dtype
        elif op not in BCAST_OPS or kw or isinstance(dst, BVec):
            raise NoMatch(f"`{op}` of a row or column vector over the tile" if not partial else
                          f"`{op}` over rows that are partly other statements' columns (no mask/repeat form here)")
        es = max(ir.DTYPE_BYTES[x.dtype] for x in (dst, *srcs))
        per, rb = 256 // es, self.pitch_blocks(dst.dtype)
        ops: list[tuple[Operand, int, int, int, bool]] = []  # operand, blk, rep, elements per row, column-offset
        for s in srcs:
            if isinstance(s, BVec) and s.kind == "row":
                ops.append((self.brcb(s).op, 0, 1, 32 // ir.DTYPE_BYTES[s.dtype], False))
            elif isinstance(s, BVec):
                ops.append((s.op, 1, 0, 0, True))
            else:
                ops.append((s.op, 1, self.pitch_blocks(s.dtype), self.sh.pitch, True))
        for r0, t in row_chunks(self.sh.rows, self.sh.rows_cpp):
            for c0 in range(0, self.sh.cols, per):
                mask = min(per, self.sh.cols - c0)
                s_ops = tuple(o.at(r0 * step + (c0 if col else 0)) for o, _, _, step, col in ops)
                self.emit(VecOp(op, dst.op.at(r0 * self.sh.pitch + c0), s_ops, scalar, 0,
                                Repeat(mask, t, (1, *(b for _, b, _, _, _ in ops)), (rb, *(r for _, _, r, _, _ in ops))),
                                **kw))  # type: ignore[arg-type]

    # ---- statements ----------------------------------------------------------------------
    def store(self, s: ir.Assign) -> None:
        if not self.loop_cse:
            super().store(s)
        else:  # as `_Sel.store`, keeping the values the column loop's statements share
            self.cse = {**cse_uses(s.value, self.depends), **self.loop_cse}
            self.cse_vals = self.loop_vals
            try:
                self.store_(s)
            finally:
                for k in [k for k in self.cse_vals if k not in self.loop_cse]:
                    self.release(self.cse_vals.pop(k))
                self.loop_vals, self.cse, self.cse_vals = self.cse_vals, {}, {}
        for v in self.bcasts.values():
            self.release(v)
        self.bcasts = {}
        self.bvec_ops = set()

    def shared_values(self, loop: ir.For) -> dict[str, int]:
        """The tile subexpressions (not plain accesses) that two or more statements of the
        column loop `loop` compute and that no statement of it changes (RoPE's `f32(X_ub[s,
        h, d])` in both rotations): computed once for the loop, kept in a slot until its end
        (only over partial rows: elsewhere the per-statement selection is unchanged)."""
        from ..printer import format_expr

        if not self.sh.partial or len(loop.body) < 2:
            return {}
        written = {_target_name(st) for st in loop.body}  # type: ignore[arg-type]
        seen: dict[str, int] = {}
        for st in loop.body:
            keys = {format_expr(x) for x in ir.sub_exprs(st.value)  # type: ignore[attr-defined]
                    if not isinstance(x, (ir.Access, ir.Name)) and self.depends(x) and not (_names(x) & written)
                    and not any(isinstance(y, ir.Access) and y.tensor in written for y in ir.sub_exprs(x))}
            for k in keys:
                seen[k] = seen.get(k, 0) + 1
        return {k: n for k, n in seen.items() if n > 1}

    def reduce(self, s: ir.Assign) -> None:
        """`T op= e` over the columns into the row vector `T`: fold each row's repeats, one
        `WholeReduce*` repeat per row, combine with `T` (or write it: `Shape.fresh`)."""
        if self.kind != "tile":
            raise NoMatch("a reduction outside the tile")
        tgt = s.target
        if self.kind_of(tgt) != "row":
            raise NoMatch("a reduction over the whole tile")
        name = _target_name(s)
        decl = self.low.decls[name]
        if s.op not in _REDUCE:
            raise NoMatch(f"`{s.op}` reduction")
        comp = promote(Ty(decl.dtype), self.ty_of(s.value))
        if comp.weak or comp.dtype not in VEC_TYPES or (s.op == "+=" and comp.dtype != "f32"):
            raise NoMatch(f"`{s.op}` into {decl.dtype}")
        val, rdt = s.value, comp.dtype
        if s.op != "+=" and isinstance(val, ir.Call) and val.func == "f32" and self.ty_of(val.args[0]).dtype == "f16":
            val, rdt = val.args[0], "f16"  # max/min commute with the exact widening: reduce the f16 tile
        v = self.as_type(self.compile(val), rdt)
        if not isinstance(v, Vec) or isinstance(v, BVec):
            raise NoMatch(f"the `{s.op}` operand does not depend on the tile")
        with self.mode("row"):
            t = self.target_ref(tgt)
        assert t is not None
        fresh = id(s) in self.sh.fresh
        res = t if fresh and t.dtype == rdt else self.alloc(rdt, "reduction work areas")
        w = self.fold(_REDUCE[s.op][0], v, rdt)
        es = ir.DTYPE_BYTES[rdt]
        for it in whole_reduce(_REDUCE[s.op][1], res.op, w.op, min(256 // es, self.sh.cols),
                               row_chunks(self.sh.rows, self.sh.rows_cpp), self.sh.pitch, self.pitch_blocks(rdt)):
            self.emit(it)
        for x in {w.tmp: w, v.tmp: v}.values():
            self.release(x)
        if res is t:
            return
        with self.mode("row"):
            if fresh:
                self.copy_into(t, res)
            else:
                a = self.as_type(t, comp.dtype)
                b = self.as_type(res, comp.dtype)
                out = self.arith(_COMPOUND[s.op], a, b, comp.dtype, t if t.dtype == comp.dtype else None)
                if out.op != t.op:
                    self.copy_into(t, out)
                    self.release(out)
            self.release(res)

    def fold(self, op: str, v: Vec, dt: str) -> Vec:
        """A tile whose first 256 B of each row combine (`op`) all of the row's repeats of `v`
        (`v` itself when a row is one repeat; folded in place when `v` is a temporary)."""
        es = ir.DTYPE_BYTES[dt]
        per, cols, p = 256 // es, self.sh.cols, self.sh.pitch
        if cols <= per:
            return v
        rb = self.pitch_blocks(dt)
        rest = [(c0, min(per, cols - c0)) for c0 in range(per, cols, per)]
        w, src = v, v
        if v.tmp < 0:
            w = self.alloc(dt, "reduction work areas")
            if rest[0][1] < per:  # a partial second repeat leaves columns of the first unwritten
                self.copy_into(w, v)
                src = w
        for c0, mask in rest:
            for r0, t in row_chunks(self.sh.rows, self.sh.rows_cpp):
                self.emit(VecOp(op, w.op.at(r0 * p), (src.op.at(r0 * p), v.op.at(r0 * p + c0)), None, 0,
                                Repeat(mask, t, (1, 1, 1), (rb, rb, rb))))
            src = w
        return w

    def run(self) -> None:
        """Select every statement of the row body in order (module docstring)."""
        for x in self.sh.row.body:
            if id(x) in self.sh.skip:
                continue
            if isinstance(x, ir.Assign):
                with self.mode("row"):
                    self.store(x)
                continue
            assert isinstance(x, ir.For)
            _same_index_check(x.body, (x.var, self.sh.cols, self.low.sizes) if self.sh.partial else None)
            self.col = x
            self._set("tile")
            self.loop_cse, self.loop_vals = self.shared_values(x), {}
            for st in x.body:
                self.store(st)  # type: ignore[arg-type]
            for v in self.loop_vals.values():
                self.release(v)
            self.loop_cse, self.loop_vals = {}, {}

    def choice(self, where: str, fallback: str = "", capacity: bool = False) -> NestChoice:
        """The plan record: the temporaries as one area of `need` bytes (row vectors, row-private
        tiles and expression slots have different sizes)."""
        need = -(-self.need // 32) * 32
        return NestChoice(where, tuple(self.instrs), fallback, self.pe.ph.index, self.sh.row.label or self.sh.row.var,
                          need, need // 4, 1, tuple(self.purposes), capacity, needs_api_temp(self.instrs),
                          (need // 4,), tuple(self.items), "")


def _select(pe: "PhaseEmitter", sh: Shape, depth: int, tmp_before: int) -> tuple[RowsSel, bool] | str:
    """The selection of the rows of `sh` and whether its scratch fits UB next to the phase's
    locals (`tmp_before`: the phase scratch before the per-row lowering of this loop), or why
    the selection does not take the body."""
    sel = RowsSel(pe, sh, depth)
    sel.origin = pe.low.where(sh.row)
    try:
        sel.run()
    except NoMatch as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - a shape this selection does not know: the per-row plan (never wrong) stays
        return f"a statement the whole-tile selection does not know ({type(e).__name__})"
    saved, pe.ph.tmp_bytes = pe.ph.tmp_bytes, tmp_before
    try:
        return sel, fits(pe, sel.need, sel.instrs)
    finally:
        pe.ph.tmp_bytes = saved


def _shifts(pe: "PhaseEmitter", sh: Shape) -> dict[str, tuple[int, int]] | None:
    """C++ name of each UB local the row body accesses (row-private ones excepted: they live
    in the scratch) -> (elements its operands move per row, element bytes), or None when a
    local is accessed at two different row strides."""
    low = pe.low
    out: dict[str, tuple[int, int]] = {}
    for st, _ in _seq(sh.row):
        for a in _refs(st):
            if not isinstance(a, ir.Access) or a.tensor in sh.private:
                continue
            info = low.info[a.tensor]
            k = 0
            for e, stride in zip(a.indices, info.strides):
                af = to_affine(e, low.sizes)
                if af is None:
                    return None
                k += af.coeff(sh.row.var) * stride
            if out.setdefault(info.cname, (k, ir.DTYPE_BYTES[info.dtype]))[0] != k:
                return None
    return out


def _shift_items(items: list[Placed], shifts: dict[str, tuple[int, int]], locals_: set[str], by: str,
                 rows: int) -> list[Placed] | None:
    """`items` (one row group's vector instructions) with every local's operand moved by `by`
    groups of `rows` rows (scratch operands stay), or None when an item is not a VecOp or an
    operand is a local this selection does not know."""
    def move(o: Operand) -> Operand | None:
        key = o.base.split(".")[0].split("[")[0]
        if key not in locals_:
            return o  # the phase scratch: each group reuses it
        if key not in shifts:
            return None
        k = shifts[key][0] * rows
        return o.at(f"{by} * {k}") if k else o

    out: list[Placed] = []
    for p in items:
        it = p.item
        if not isinstance(it, VecOp):
            return None
        ops = [move(o) for o in (it.dst, *it.srcs)]
        work = move(it.work) if it.work is not None else None
        if any(o is None for o in ops) or (it.work is not None and work is None):
            return None
        out.append(Placed(replace(it, dst=ops[0], srcs=tuple(ops[1:]), work=work), p.origin))  # type: ignore[arg-type]
    return out


def _grouped(pe: "PhaseEmitter", sh: Shape, depth: int, tmp_before: int) -> tuple[RowsSel, int, str, str] | None:
    """Row groups when the whole tile's scratch does not fit UB: the largest group of G rows
    (a multiple of 16, fewer than the tile's) whose selection fits, run by a C++ loop over
    the groups (the row loop's own variable), each group's tile and row-indexed operands
    G rows further; the scratch is reused by every group. (its selector, G, the C++ group
    count, the C++ row count of a group or "" when constant)."""
    low = pe.low
    shifts = _shifts(pe, sh)
    if shifts is None:
        return None
    locals_ = {i.cname for i in low.info.values() if i.kind == "local"}
    total = sh.rows_cpp or str(sh.rows)
    gv = low.names(sh.row.var)
    tried: set[int] = set()
    for n in range(2, 65):
        g = -(-(-(-sh.rows // n)) // 16) * 16
        if g >= sh.rows or g in tried or g < 16:
            continue
        tried.add(g)
        if any((g * k * es) % 32 for k, es in shifts.values()):
            continue
        even = not sh.rows_cpp and sh.rows % g == 0
        rows_cpp = "" if even else f"ascx_min<int32_t>({g}, ({total}) - {gv} * {g})"
        count = str(sh.rows // g) if even else (str(-(-sh.rows // g)) if not sh.rows_cpp else f"(({total}) + {g - 1}) / {g}")
        got = _select(pe, replace(sh, rows=g, rows_cpp=rows_cpp), depth + 1, tmp_before)
        if isinstance(got, str):
            return None
        sel, ok = got
        if not ok:
            continue
        moved = _shift_items(sel.items, shifts, locals_, gv, g)
        if moved is None:
            return None
        sel.items = [Placed(Loop(gv, "0", count, tuple(moved)), sel.origin)]
        return sel, g, count, rows_cpp
    return None


@dataclass
class TilePlan:
    """A whole-tile plan of a row loop (`match_tile`): its shape, selection, price in cycles
    and the row-group phrase of its plan record ("" for one tile)."""

    sh: Shape
    sel: RowsSel
    cost: float
    group: str


def match_tile(pe: "PhaseEmitter", row: ir.For, depth: int, tmp_before: int) -> TilePlan | str:
    """The whole-tile plan of `row` when it matches and fits UB (the whole tile, or else row
    groups: `_grouped`), priced on the target's timing facts; or why not (pattern `rows2d`)."""
    sh = match(pe, row)
    if isinstance(sh, str):
        return sh
    got = _select(pe, sh, depth, tmp_before)
    if isinstance(got, str):
        return got
    sel, whole = got
    subst = {sh.rows_cpp: sh.rows} if sh.rows_cpp else {}
    tile_pricer = Pricer(pe.low.target, subst, sh.rows)
    group = ""
    if not whole:
        got = _grouped(pe, sh, depth, tmp_before)
        if got is None:
            return "the whole tile does not fit UB and no group of rows does"
        sel, g, count, g_cpp = got
        tile_pricer = Pricer(pe.low.target, {**subst, **({g_cpp: g} if g_cpp else {})}, g)
        group = f" in {count} groups of {g} rows" if count.isdigit() else f" in groups of {g} rows"
    return TilePlan(sh, sel, tile_pricer.items(sel.items), group)


def per_row_cost(pe: "PhaseEmitter", row: ir.For, per_row: list[NestChoice], pre: list[Placed]) -> float:
    """Cycles of the per-row plan of `row` (`per_row`: the nests the per-row lowering
    recorded, `pre` its hoisted items); infinite when a nest went scalar, 0 when `row` is not
    a row loop `match` knows (nothing to compare it with)."""
    sh = match(pe, row)
    if isinstance(sh, str):
        return 0.0
    if any(n.fallback for n in per_row):
        return float("inf")
    pricer = Pricer(pe.low.target, {sh.rows_cpp: sh.rows} if sh.rows_cpp else {}, sh.rows)
    body = sum(pricer.items(n.plan) for n in per_row) - pricer.items(pre)
    body += sum(pricer.s_access if any(isinstance(a, ir.Access) for a in _refs(x)) else pricer.s_issue
                for x in row.body if isinstance(x, ir.Assign))
    return sh.rows * body + pricer.items(pre)


def commit_tile(pe: "PhaseEmitter", row: ir.For, tp: TilePlan, row_cost: float, depth: int) -> tuple[NestChoice, list[Line], int]:
    """(plan record, lines at `depth`, temporaries' bytes) of a chosen whole-tile plan."""
    sh, sel = tp.sh, tp.sel
    where = f"{pe.low.where(row)} `{row.label or row.var}` ({sh.rows} rows x {sh.cols} as one tile{tp.group}, " \
            f"per-row statistics as row vectors: about {tp.cost:.0f} cycles vs {row_cost:.0f} row by row)"
    pre, post = scalar_order(pe, row, sel.items)
    sel.items = pre + sel.items + post
    return sel.choice(where), render(sel.items, depth), sel.need


__all__ = ["BVec", "RowsSel", "Shape", "TilePlan", "commit_tile", "match", "match_tile", "per_row_cost"]
