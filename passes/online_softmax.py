"""`online_softmax`: stream softmax(QK^T)V over blocks of keys (running max and sum).

    online_softmax               blocks of 64 keys
    online_softmax{block=32}

Works on the attention shape, fused (`fuse`) or not: row loops `for i in ...` whose bodies,
read in order, hold
  1) optional score producers: loops `for j in 0..N` writing the scores,
  2) the row max `MX = -inf; for j { MX max= Z }`,
  3) the exponentials and their sum `SM = 0.0; for j { P = exp(Z - MX); SM += P }`,
  4) the weighted sum `for d { ACC = 0.0; for j { ACC += P * W }; ...ACC... }`.
It rewrites them into *one* row loop `attn` with a K/V block loop `kv` that streams the
keys once: per block it computes the block's scores, the new running max `mb`, the
rescale factor `al = exp(MX - mb)`, rescales the running sum and accumulator, adds the
block's contribution, and finally normalises once per row. The safe max
`ms = select(mb == -inf, 0.0, mb)` keeps fully masked blocks (causal attention) from making
NaNs. This is the FlashAttention recurrence; it needs no full row of scores, so long
sequences fit on chip. It does its own blocking (the `block` parameter), so it runs
before `tile`: `tile{attn.i=64}` then tiles the query rows and stages K/V per block.

Rows two loops deep: when every top-level nest is `for h { for g { ... } }` and the row max
lies below `g` (grouped-query decode attention: query row `h * G + g` reads KV head `h`), the
pair (h, g) is the row index: the result is `attn: for h { for g { ... } }` and every row temp
gets both indices (`mx: f32[HK, G]`). `tile` then takes the whole group as one tile of query
rows, so K/V blocks are staged once per KV head for its G rows. Deeper rows are refused.

Temps are made row-private: every temp keeps its name but gets the row index first and
block-sized key dimensions (`s: f32[S, S]` -> `s: f32[S, 64]`, a contracted `mx: f32` ->
`mx: f32[S]`), so that `tile` can distribute the row loop around the block loop.

It requires: 1) the pattern above (softmax alone, without the weighted sum, is refused:
its normalisation needs the final max, a second pass); 2) `block` divides the key extent;
3) the accumulator starts at 0.0 (rescaling is linear).

Result verifies within f32 accumulation tolerance (the sums are reassociated per block).

    rmax: for i in 0..S { mx[i] = -inf; for j in 0..S { mx[i] max= s[i, j] } }
    expo: for i in 0..S { sm[i] = 0.0; for j in 0..S { s[i, j] = exp(s[i, j] - mx[i]); sm[i] += s[i, j] } }
    pv:   for i in 0..S { for d in 0..D { acc[i, d] = 0.0; for j ... acc[i, d] += s[i, j] * f32(V[j, d]) ... } }
  ->
    attn: for i in 0..S {
      mx[i] = -inf;  sm[i] = 0.0;  for d in 0..D { acc[i, d] = 0.0 }
      kv: for jb in 0..S/64 {
        for j in 0..64 { ...scores s[i, j] of keys jb * 64 + j... }
        mb[i] = mx[i];  for j in 0..64 { mb[i] max= s[i, j] }
        ms[i] = select(mb[i] == -inf, 0.0, mb[i]);  al[i] = exp(mx[i] - ms[i])
        sm[i] = sm[i] * al[i];  for d in 0..D { acc[i, d] = acc[i, d] * al[i] }
        for j in 0..64 { s[i, j] = exp(s[i, j] - ms[i]); sm[i] += s[i, j] }
        for d in 0..D { for j in 0..64 { acc[i, d] += s[i, j] * f32(V[jb * 64 + j, d]) } }
        mx[i] = mb[i]
      }
      for d in 0..D { O[i, d] = f16(acc[i, d] / sm[i]) }
    }
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.diagnostics import BadParameter

from . import _rewrite as R
from .params import Int, Keywords, Params
from .base import NothingToDo, Pass, PassError, TraceEntry, register
from transformer.targets import Target

_PAT = ("online_softmax needs attention's shape: row loops holding `MX = -inf; for j { MX max= Z }`, "
        "`SM = 0.0; for j { P = exp(Z - MX); SM += P }` and `for d { ACC = 0.0; for j { ACC += P * W } ... }`")


def _fail(msg: str, node: Any = None) -> PassError:
    """The kernel does not have the softmax shape this pass rewrites: nothing to do."""
    return NothingToDo("online_softmax", msg, getattr(node, "loc", None), hint=_PAT)


@register
@dataclass(frozen=True)
class OnlineSoftmax(Pass):
    """Rewrite max / exp-sum / normalise over the key axis into one streaming pass over blocks."""

    name: ClassVar[str] = "online_softmax"
    summary: ClassVar[str] = "stream softmax(S)V over key blocks with a running max and rescaled sum"
    params: ClassVar[Params] = Keywords({"block": Int(1)}, example="block=32", note="key-block size (default 64)")
    block: int = 64

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        return rewrite(kernel, self.block, trace)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        for b in (16, 32, 64, 128):
            try:
                rewrite(kernel, b, TraceEntry(""))
            except PassError:
                continue
            out.append(cls(block=b))
        return out


def _is_var(e: ir.Expr, v: str) -> bool:
    return isinstance(e, ir.Name) and e.name == v


def rewrite(kernel: ir.Kernel, block: int, trace: TraceEntry) -> ir.Kernel:
    sizes = kernel.known_sizes()
    if block < 1:
        raise BadParameter("online_softmax", f"block must be at least 1, got {block}", param="block", value=block)
    staged = next((t for t in kernel.buffers if t.kind == "local"), None)
    if staged is not None:
        raise NothingToDo("online_softmax", "looked for attention's untiled row loops; the kernel is already "
                          f"tiled (it stages tiles in locals such as `{staged.name}`), so its row max and sums are "
                          "inside tiled loops", staged.loc, hint="run `online_softmax` before `tile`")
    # ---- the row loops: every top-level statement, same bounds; merge their bodies
    if not kernel.body or not all(isinstance(s, ir.For) for s in kernel.body):
        raise _fail("the kernel's top level must be row loops", kernel.body[0] if kernel.body else kernel)
    depth = _row_depth(kernel)
    first = kernel.body[0]
    assert isinstance(first, ir.For)
    heads = _chain(first, depth)  # the row loops of the first nest, outermost first
    inner = {x.var for top in kernel.body for x in ir.iter_loops(_chain(top, depth)[-1].body)}  # type: ignore[arg-type]
    taken0 = R.used_names(kernel)
    ivs: list[str] = []
    for lp in heads:  # merging `for j {..}` with `for i { for j {..} }` would capture j: rename the rows
        v = lp.var if lp.var not in inner and lp.var not in ivs else R.fresh(lp.var, taken0 | set(ivs))
        ivs.append(v)
    rows: list[ir.Stmt] = []
    for s in kernel.body:
        chain = _chain(s, depth)
        for a, b in zip(chain, heads):
            lo, hi = R.eval_const(a.lo, sizes), R.eval_const(a.hi, sizes)
            if lo != R.eval_const(b.lo, sizes) or hi != R.eval_const(b.hi, sizes) or hi is None:
                raise _fail(f"row loops `{b.var}` and `{a.var}` have different bounds", a)
        sub = {lp.var: ir.Name(v) for lp, v in zip(chain, ivs) if lp.var != v}
        rows += [R.subst_stmt(b, sub, simplify=True) if sub else b for b in chain[-1].body]
    iv = ivs[-1]
    temps = {t.name: t for t in kernel.buffers if t.kind == "temp"}

    # ---- find the three parts
    def j_loop(s: ir.Stmt) -> bool:
        return isinstance(s, ir.For) and R.eval_const(s.lo, sizes) == 0 and R.eval_const(s.hi, sizes) is not None

    mx_stmt = next((s for s in rows for s in ([s] + (list(s.body) if isinstance(s, ir.For) else []))
                    if isinstance(s, ir.Assign) and s.op == "max="), None)
    if mx_stmt is None:
        deep = _deep_row_max(kernel)
        if deep is not None:
            raise _deep_row_max_refusal(*deep)
        raise _fail("looked for a row max (`MX max= ...`); the kernel has none", first)
    MX = _row_name(mx_stmt.target)
    # position of the exp loop
    exp_idx = None
    for n, s in enumerate(rows):
        if j_loop(s) and len(s.body) == 2 and isinstance(s.body[0], ir.Assign) and isinstance(s.body[0].value, ir.Call) \
                and s.body[0].value.func == "exp":
            exp_idx = n
            break
    if exp_idx is None:
        raise _fail("no exponential loop (`for j { P = exp(Z - MX); SM += P }`)", first)
    eloop = rows[exp_idx]
    assert isinstance(eloop, ir.For)
    jv = eloop.var
    N = R.eval_const(eloop.hi, sizes)
    assert N is not None
    pstmt, sstmt = eloop.body
    assert isinstance(pstmt, ir.Assign)
    if not (isinstance(sstmt, ir.Assign) and sstmt.op == "+=" and sstmt.value == pstmt.target):
        raise _fail("the exponential loop must be `P = exp(Z - MX); SM += P`", sstmt)
    SM = _row_name(sstmt.target)
    arg = pstmt.value.args[0]  # type: ignore[union-attr]
    if not (isinstance(arg, ir.Binary) and arg.op == "-" and _row_name(arg.rhs) == MX):
        raise _fail("the exponential must be `exp(Z - MX)` with the row max", pstmt)
    Z2 = arg.lhs
    # before the exp loop: MX init, SM init, producers and the max loop
    pre = rows[:exp_idx]
    producers: list[ir.Stmt] = []
    max_val: ir.Expr | None = None
    inits_seen: dict[str, ir.Assign] = {}
    for s in pre:
        if isinstance(s, ir.Assign) and s.op == "=" and _row_name(s.target) in (MX, SM):
            _check_row_init(s, MX, SM, inits_seen, after_max=max_val is not None)
            continue
        if not j_loop(s):
            raise _fail("before the exponentials only key loops and the MX / SM initialisation may appear", s)
        assert isinstance(s, ir.For)
        if R.eval_const(s.hi, sizes) != N:
            raise _fail("key loops must all run over the same extent", s)
        body = [R.subst_stmt(b, {s.var: ir.Name(jv)}, simplify=True) if s.var != jv else b for b in s.body]
        for b in body:
            if isinstance(b, ir.Assign) and b.op == "max=" and _row_name(b.target) == MX:
                max_val = b.value
            else:
                producers.append(b)
    if max_val is None or max_val != Z2:
        raise _fail("the row max must be taken over the same scores the exponentials use", mx_stmt)
    for name, what in ((MX, "-inf"), (SM, "0.0")):
        if name not in inits_seen:
            raise _fail(f"the row {'max' if name == MX else 'sum'} `{name}` must be initialised to {what} "
                        "before the key loops", mx_stmt if name == MX else sstmt)
    # after: the weighted sum loop
    post = rows[exp_idx + 1:]
    if len(post) != 1 or not isinstance(post[0], ir.For):
        raise _fail("after the exponentials exactly one loop `for d { ACC = 0.0; for j { ACC += P * W } ... }` "
                    "must follow", post[0] if post else eloop)
    dloop = post[0]
    inits = [b for b in dloop.body if isinstance(b, ir.Assign) and b.op == "=" and isinstance(b.value, ir.FloatLit)
             and b.value.value == 0.0]
    jl = [b for b in dloop.body if isinstance(b, ir.For)]
    if len(jl) != 1 or len(inits) != 1 or dloop.body[0] is not inits[0] or dloop.body[1] is not jl[0]:
        raise _fail("the weighted sum must be `for d { ACC = 0.0; for j { ACC += P * W }; ... }`", dloop)
    pvl = jl[0]
    if R.eval_const(pvl.lo, sizes) != 0 or R.eval_const(pvl.hi, sizes) != N or len(pvl.body) != 1:
        raise _fail(f"the weighted sum's key loop must run over the keys (`for {pvl.var} in 0..{N}`, the "
                    "exponentials' range) with one statement", pvl)
    pv = R.subst_stmt(pvl.body[0], {pvl.var: ir.Name(jv)}, simplify=True) if pvl.var != jv else pvl.body[0]
    if not (isinstance(pv, ir.Assign) and pv.op == "+=" and pv.target == inits[0].target
            and isinstance(pv.value, ir.Binary) and pv.value.op == "*"
            and (pv.value.lhs == pstmt.target or pv.value.rhs == pstmt.target)):
        raise _fail("the weighted sum must be `ACC += P * W`", pv)
    dpost = list(dloop.body[2:])
    Check_block_divides(block, N, eloop)

    # ---- build the streaming nest
    taken = R.used_names(kernel)
    jb = R.fresh(f"{jv}b", taken)
    dv = dloop.var
    D_hi = dloop.hi
    row_his = tuple(lp.hi for lp in heads)
    row_idx = tuple(ir.Name(v) for v in ivs)
    nb = N // block
    new_shapes: dict[str, tuple[ir.Expr, ...]] = {}
    dext = {dv: D_hi}

    def rowify(e: ir.Expr) -> ir.Expr:
        """Temps become row-private with block-sized key dims; key index j -> jb*B + j for
        every other tensor."""
        if isinstance(e, ir.Name) and e.name in temps and temps[e.name].rank == 0:
            new_shapes[e.name] = row_his
            return ir.Access(e.name, row_idx, e.loc)
        if isinstance(e, ir.Access):
            if e.tensor in temps:
                # the row indices, when there (`fuse` may have contracted them), come first
                lead = [x for x in e.indices if any(_is_var(x, v) for v in ivs)]
                if tuple(e.indices[:len(lead)]) != tuple(lead) or \
                        [x.name for x in lead] != [v for v in ivs if any(_is_var(x, v) for x in lead)]:  # type: ignore[attr-defined]
                    raise _fail(f"temp `{e.tensor}` must be indexed by the row loops "
                                f"{', '.join(f'`{v}`' for v in ivs)} first, in that order", e)
                rest = list(e.indices[len(lead):])
                if not all(isinstance(x, ir.Name) and (x.name == jv or x.name in dext) for x in rest):
                    raise _fail(f"temp `{e.tensor}` is indexed by something other than the row, key and "
                                "head loops", e)
                shape = row_his + tuple(R.lit(block) if x.name == jv else dext[x.name] for x in rest)  # type: ignore[union-attr]
                if new_shapes.setdefault(e.tensor, shape) != shape:
                    raise _fail(f"temp `{e.tensor}` is used with two different shapes", e)
                return ir.Access(e.tensor, row_idx + tuple(rest), e.loc)
            return ir.Access(e.tensor, tuple(R.simp(R.subst_expr(x, {jv: key})) for x in e.indices), e.loc)
        if isinstance(e, ir.Name) and e.name == jv:
            return key
        return R.map_children(e, rowify)

    key = R.add(R.mul(ir.Name(jb), R.lit(block)), ir.Name(jv))

    def rs(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.For):
            return dataclasses.replace(s, lo=rowify(s.lo), hi=rowify(s.hi), body=tuple(rs(b) for b in s.body))
        if isinstance(s, ir.Assign):
            return dataclasses.replace(s, target=rowify(s.target), value=rowify(s.value))  # type: ignore[arg-type]
        raise _fail("copies are not supported inside the softmax pattern", s)

    def row(n: str) -> ir.Access:
        return ir.Access(n, row_idx)

    mb, ms, al = (R.fresh(n, taken) for n in ("mb", "ms", "al"))
    mxr, smr = rowify(_as_expr(MX, temps, ivs)), rowify(_as_expr(SM, temps, ivs))
    neg_inf = ir.Unary("-", ir.FloatLit(math.inf))
    jloop = lambda body: ir.For(jv, R.lit(0), R.lit(block), tuple(body))  # noqa: E731
    dloop_ = lambda body: ir.For(dv, dloop.lo, D_hi, tuple(body))  # noqa: E731
    acc_t = rs(inits[0]).target  # type: ignore[union-attr]
    z = rowify(Z2)
    p_t = rowify(pstmt.target)
    kv_body: list[ir.Stmt] = []
    if producers:
        kv_body.append(jloop([rs(p) for p in producers]))
    kv_body += [
        ir.Assign(row(mb), "=", mxr),
        jloop([ir.Assign(row(mb), "max=", z)]),
        ir.Assign(row(ms), "=", ir.Call("select", (ir.Binary("==", row(mb), neg_inf), ir.FloatLit(0.0), row(mb)))),
        ir.Assign(row(al), "=", ir.Call("exp", (ir.Binary("-", mxr, row(ms)),))),
        ir.Assign(smr, "=", ir.Binary("*", smr, row(al))),  # type: ignore[arg-type]
        dloop_([ir.Assign(acc_t, "=", ir.Binary("*", acc_t, row(al)))]),
        jloop([ir.Assign(p_t, "=", ir.Call("exp", (ir.Binary("-", z, row(ms)),)), pstmt.loc),  # type: ignore[arg-type]
               ir.Assign(smr, "+=", p_t, sstmt.loc)]),  # type: ignore[arg-type]
        dloop_([jloop([rs(pv)])]),
        ir.Assign(mxr, "=", row(mb)),  # type: ignore[arg-type]
    ]
    body: list[ir.Stmt] = [
        ir.Assign(mxr, "=", neg_inf), ir.Assign(smr, "=", ir.FloatLit(0.0)),  # type: ignore[arg-type]
        dloop_([rs(inits[0])]),
        ir.For(jb, R.lit(0), R.lit(nb), tuple(kv_body), label=R.fresh("kv", taken)),
    ]
    if dpost:
        body.append(dloop_([rs(s) for s in dpost]))
    label = R.fresh("attn", taken)
    nest_body: tuple[ir.Stmt, ...] = tuple(body)
    for k in range(len(heads) - 1, 0, -1):  # the inner row loops (a KV head's group of query rows)
        nest_body = (ir.For(ivs[k], heads[k].lo, heads[k].hi, nest_body, loc=heads[k].loc),)
    nest = ir.For(ivs[0], first.lo, first.hi, nest_body, label=label, loc=first.loc)

    # ---- declarations: reshaped temps, new row temps; drop temps no longer used
    used = ir.names_used((nest,))
    f32 = "f32"
    buffers: list[ir.TensorDecl] = []
    for t in kernel.buffers:
        if t.name not in used:
            continue
        if t.name in new_shapes:
            buffers.append(dataclasses.replace(t, shape=new_shapes[t.name]))
        else:
            buffers.append(t)
    dt = temps[MX].dtype if MX in temps else f32
    for n in (mb, ms, al):
        buffers.append(ir.TensorDecl(n, dt, row_his, "temp"))
    trace.changes.append(f"streamed the softmax over key blocks of {block}: one nest `{label}` with block loop "
                         f"`{label}.{jb}` (label `{body[3].label}`), {nb} blocks")  # type: ignore[union-attr]
    trace.decisions.append(f"running max `{MX}`, rescaled sum `{SM}` and accumulator `{acc_t.tensor}` "  # type: ignore[union-attr]
                           f"with the safe max `{ms}` and rescale factor `{al}`")
    return dataclasses.replace(kernel, body=(nest,), buffers=tuple(buffers))


def _deep_row_max(kernel: ir.Kernel) -> tuple[ir.Assign, tuple[ir.For, ...]] | None:
    """The first `max=` of the kernel with the loops enclosing it (outermost first)."""

    def walk(stmts: tuple[ir.Stmt, ...], outer: tuple[ir.For, ...]) -> tuple[ir.Assign, tuple[ir.For, ...]] | None:
        for s in stmts:
            if isinstance(s, ir.Assign) and s.op == "max=":
                return s, outer
            if isinstance(s, ir.For):
                got = walk(s.body, outer + (s,))
                if got is not None:
                    return got
        return None

    return walk(kernel.body, ())


def _deep_row_max_refusal(stmt: ir.Assign, outer: tuple[ir.For, ...]) -> PassError:
    """Why a row max nested below the loops directly in the row loop is not rewritten:
    the rows are loops nested in one another (heads x query rows of grouped-query decode
    attention). A tiled kernel is refused earlier (it has staged locals)."""
    rows = outer[:-1]  # the innermost enclosing loop runs over the keys
    names = ", ".join(f"`{lp.var}`" for lp in rows)
    return NothingToDo("online_softmax", "looked for the row max (`MX max= ...`) in the row loop or the loops "
                       f"directly in it; it is {len(outer)} loops deep, in the row loops {names} nested in one "
                       "another, and online_softmax rewrites rows of one loop", stmt.loc,
                       hint="write the rows as one loop (one query row per iteration, its keys in the loops "
                       "directly inside it)")


def _check_row_init(s: ir.Assign, MX: str, SM: str, seen: dict[str, ir.Assign], after_max: bool) -> None:
    """The row max must start at -inf and the row sum at 0.0, once each and before the key loops:
    the streaming form starts from exactly those values, so any other start (or a start after the
    row max was taken) would change the result."""
    name = _row_name(s.target)
    is_max = name == MX
    want = "-inf" if is_max else "0.0"
    v = s.value
    ok = (isinstance(v, ir.Unary) and v.op == "-" and isinstance(v.operand, ir.FloatLit) and v.operand.value == math.inf) \
        if is_max else (isinstance(v, ir.FloatLit) and v.value == 0.0)
    if not ok:
        raise _fail(f"the row {'max' if is_max else 'sum'} `{name}` must start at {want} (the streaming form "
                    f"starts from it; another start value changes the result)", s)
    if name in seen or (is_max and after_max):
        raise _fail(f"`{name}` must be initialised once, before the row max is taken", s)
    seen[name] = s


def Check_block_divides(block: int, n: int, loop: ir.For) -> None:
    """Condition: n % block == 0 (the block loop has a concrete trip count n / block)."""
    if n % block:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        raise BadParameter("online_softmax", f"block {block} does not divide the key extent {n}", loop.loc,
                        hint="accepted blocks: " + ", ".join(map(str, divs[-6:])), param="block", value=block, accepted=divs)


def _row_name(e: ir.Expr) -> str:
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Access):
        return e.tensor
    raise _fail("expected a row value", e)


def _as_expr(n: str, temps: Mapping[str, ir.TensorDecl], ivs: list[str]) -> ir.Expr:
    t = temps.get(n)
    if t is None:
        raise _fail(f"`{n}` must be a temp")
    return ir.Name(n) if t.rank == 0 else ir.Access(n, tuple(ir.Name(v) for v in ivs[-t.rank:]))


def _chain(top: ir.For, depth: int) -> list[ir.For]:
    """The `depth` row loops of the nest `top`, outermost first (each the only statement of
    the one before it)."""
    out = [top]
    while len(out) < depth:
        (inner,) = out[-1].body
        assert isinstance(inner, ir.For)
        out.append(inner)
    return out


def _row_depth(kernel: ir.Kernel) -> int:
    """How many loops deep the rows are: 1 (one row per iteration of the top-level loops), or 2
    when every top-level nest is `for h { for g { ... } }` (a loop alone in a loop) and the row
    max lies below the inner loop rather than in a key loop of the outer one — the rows of
    grouped-query decode attention, query row `h * G + g` of KV head `h`: the rewrite treats
    the pair (h, g) as the row index, and every row temp gets both indices."""
    def perfect(s: ir.Stmt) -> bool:
        return isinstance(s, ir.For) and len(s.body) == 1 and isinstance(s.body[0], ir.For)

    if not all(perfect(s) for s in kernel.body):
        return 1
    for s in kernel.body:
        assert isinstance(s, ir.For)
        inner = s.body[0]
        assert isinstance(inner, ir.For)
        if any(isinstance(b, ir.Assign) and b.op == "max=" for b in inner.body):
            return 1  # `for i { for j { MX max= .. } }`: j is the key loop of row i
        if any(isinstance(b, ir.For) and any(isinstance(c, ir.Assign) and c.op == "max=" for c in b.body)
               for b in inner.body):
            return 2
    return 1
