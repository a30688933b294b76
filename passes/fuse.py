"""`fuse`: merge adjacent loop nests with matching bounds, then contract intermediates.

args:
    `fuse`          fuse greedily, outermost first, in program order: every loop with the
                    next sibling loop when legal, repeatedly, then inside each loop. Plain
                    statements between two fusable loops (e.g. `mx[i] = -inf`) are moved
                    before the first loop when no dependence links them to it.
    `fuse{a,b}`     fuse loop `a` with loop `b`, which must follow it immediately; then fuse
                    the loops that meet at the seam (last loop of `a`'s body, first of
                    `b`'s) when they match too, and so on down.

The fused loop keeps `a`'s variable, label and annotations (`b`'s variable is renamed;
`b`'s label is dropped, or kept when `a` has none).

It requires:
    1) both loops exist, are named unambiguously, and `b` immediately follows `a` in the
       same body;
    2) their bounds are equal (as affine forms over sizes and enclosing loop variables)
       and their annotations agree;
    3) no dependence would be reversed (`transformer.deps.fusion_conflict`): no statement
       instance of `b` at iteration i conflicts with an instance of `a` at a later
       iteration i' > i (fused, b(i) would run before a(i'), while originally every
       instance of `a` ran first). Producer -> consumer at the same iteration is fine.

Contraction rule (after fusion). A `temp` T that both fused loops touched is shrunk when,
for some loop L enclosing every access to T, dimension d of T is indexed by exactly L's
variable in every access (and T is never a copy operand): then each iteration of L touches
only its own slice T[.., v, ..], so one slice serves all iterations and dimension d is
dropped (a rank-0 temp is written as a plain name). Proof sketch: iteration v reads only
elements written in iteration v (elements written in other iterations lie in other
slices, and nothing outside L accesses T), so reusing one slice, overwritten each
iteration, gives the same values; `tests/passes` checks it differentially.

rewrite (fuse):
    p: for i in 0..N {               p: for i in 0..N {
      t[i] = A[i] * 2.0                t = A[i] * 2.0
    }                         ->       B[i] = t + 1.0
    c: for k in 0..N {               }
      B[k] = t[k] + 1.0              (temp t: f32[N] -> temp t: f32)
    }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from transformer import ir
from transformer.diagnostics import BadParameter, DependenceViolation, NotApplicable
from transformer.affine import Affine, to_affine
from transformer.deps import _dir, accesses, fusion_conflict, raw_vectors, statements
from transformer.printer import format_type

from ._rewrite import fresh, loop_header, map_expr, map_loops, map_stmt_exprs, same_bound, subst_stmt, used_names
from .params import Loop, Names, Params
from .base import Pass, PassError, TraceEntry, get_at, name_of_loop, register, replace_at, resolve_loop
from transformer.targets import Target

Path = tuple[int, ...]


@dataclass
class _State:
    kernel: ir.Kernel
    trace: TraceEntry
    taken: set[str]
    shared: set[str] = field(default_factory=set)  # temps touched by both sides of a fusion
    fusions: int = 0


def _body_at(kernel: ir.Kernel, parent: Path) -> tuple[ir.Stmt, ...]:
    if not parent:
        return kernel.body
    s = get_at(kernel.body, parent)
    assert isinstance(s, ir.For)
    return s.body


# ---- legality (named checks) ----------------------------------------------------------


def matching_bounds(a: ir.For, b: ir.For) -> bool:
    """Legality 2: same bounds (affine equality, sizes symbolic) and same annotations."""
    return same_bound(a.lo, b.lo) and same_bound(a.hi, b.hi) and a.annotations == b.annotations


def adjacent(pa: Path, pb: Path) -> bool:
    """Legality 1: `b` immediately follows `a` in the same body."""
    return pa[:-1] == pb[:-1] and pb[-1] == pa[-1] + 1


def hoist_conflict(kernel: ir.Kernel, loop_path: Path, stmt_paths: list[Path]) -> bool:
    """May the plain statements at `stmt_paths` (right after the loop) move before it?
    Condition: no access of theirs conflicts with an access of the loop's statements at
    the same iteration of the loops enclosing both (those are the instances whose order
    the move swaps)."""
    sizes = kernel.known_sizes()
    stmts = statements(kernel)
    n = len(loop_path)
    in_loop = [s for s in stmts if s.path[:n] == loop_path]
    moved = [s for s in stmts if s.path in stmt_paths]
    depth = len(loop_path) - 1
    pairs = [(k, k) for k in range(depth)]
    for sa in in_loop:
        for sb in moved:
            for a in accesses(kernel, sa):
                for b in accesses(kernel, sb):
                    if a.tensor != b.tensor or not (a.write or b.write):
                        continue
                    for vec in raw_vectors(a, b, pairs, sizes):
                        if all(_dir(c) in ("=", "*") for c in vec):
                            return True
    return False


# ---- the rewrite ----------------------------------------------------------------------


def _fuse_pair(st: _State, pa: Path, pb: Path) -> None:
    """Merge the loop at `pb` into the loop at `pa` (legality already checked)."""
    k = st.kernel
    a, b = get_at(k.body, pa), get_at(k.body, pb)
    assert isinstance(a, ir.For) and isinstance(b, ir.For)
    body_b = b.body
    if b.var != a.var:
        inner_vars = {l.var for l in ir.iter_loops(body_b)}
        if a.var in inner_vars:  # an inner loop of b uses a's variable: rename it first
            new = fresh(a.var, st.taken, sep="", first=2)

            def ren(l: ir.For) -> ir.For:
                if l.var != a.var:
                    return l
                return dataclasses.replace(l, var=new, body=tuple(subst_stmt(s, {a.var: ir.Name(new)}) for s in l.body))

            body_b = tuple(map_loops(s, ren) for s in body_b)
        body_b = tuple(subst_stmt(s, {b.var: ir.Name(a.var)}) for s in body_b)
    shared = ir.names_used(a.body) & ir.names_used(b.body)
    st.shared |= {t.name for t in k.buffers if t.kind == "temp" and t.name in shared}
    label = a.label or b.label
    fused = dataclasses.replace(a, body=a.body + body_b, label=label)
    body = replace_at(k.body, pb, [])
    st.kernel = dataclasses.replace(k, body=replace_at(body, pa, [fused]))
    st.fusions += 1
    at = lambda l: f" (line {l.loc.line})" if l.loc else ""  # noqa: E731
    note = f"fused `{loop_header(a)}`{at(a)} with `{loop_header(b)}`{at(b)}"
    if b.label and a.label:
        note += f" (label `{b.label}` merged into `{a.label}`)"
    if b.var != a.var:
        note += f", `{b.var}` renamed to `{a.var}`"
    st.trace.changes.append(note)


def _shared_tensors(k: ir.Kernel, a: ir.For, b: ir.For) -> set[str]:
    tensors = {t.name for t in k.tensors()}
    return ir.names_used((a,)) & ir.names_used((b,)) & tensors


def _try_fuse_next(st: _State, pa: Path, *, allow_hoist: bool) -> bool:
    """Fuse the loop at `pa` with the next loop in its body if legal (moving plain
    statements between them before it when `allow_hoist`). True if it fused."""
    body = _body_at(st.kernel, pa[:-1])
    a = body[pa[-1]]
    assert isinstance(a, ir.For)
    j = pa[-1] + 1
    while allow_hoist and j < len(body) and not isinstance(body[j], ir.For):
        j += 1
    if j >= len(body) or not isinstance(body[j], ir.For):
        return False
    b = body[j]
    if not matching_bounds(a, b):
        return False
    parent = pa[:-1]
    if not parent and not _shared_tensors(st.kernel, a, b):
        # two top-level nests that share no tensor gain no reuse from fusing, and the fused
        # nest would hold both nests' buffers at once (one phase: more queues, more UB)
        st.trace.decisions.append(f"kept `{loop_header(a)}` and `{loop_header(b)}` apart: they share no tensor")
        return False
    between = [parent + (x,) for x in range(pa[-1] + 1, j)]
    if between:
        if hoist_conflict(st.kernel, pa, between):
            return False
        moved = [body[x] for x in range(pa[-1] + 1, j)]
        new_body = body[:pa[-1]] + tuple(moved) + (a,) + body[j:]
        trial = _with_body(st.kernel, parent, new_body)
        pa2 = parent + (pa[-1] + len(moved),)
        if fusion_conflict(trial, pa2, parent + (j,)) is not None:
            return False
        st.kernel = trial
        st.trace.decisions.append(f"moved {len(moved)} statement(s) before `{loop_header(a)}` to make it adjacent "
                                  f"to `{loop_header(b)}` (no dependence links them)")
        _fuse_pair(st, pa2, parent + (j,))
        return True
    if fusion_conflict(st.kernel, pa, parent + (j,)) is not None:
        return False
    _fuse_pair(st, pa, parent + (j,))
    return True


def _with_body(k: ir.Kernel, parent: Path, body: tuple[ir.Stmt, ...]) -> ir.Kernel:
    if not parent:
        return dataclasses.replace(k, body=body)
    loop = get_at(k.body, parent)
    return dataclasses.replace(k, body=replace_at(k.body, parent, [dataclasses.replace(loop, body=body)]))


def _greedy(st: _State, parent: Path) -> None:
    i = 0
    while i < len(_body_at(st.kernel, parent)):
        path = parent + (i,)
        s = _body_at(st.kernel, parent)[i]
        if isinstance(s, ir.For):
            # stmts may have been hoisted before the loop: find it again by identity
            if _try_fuse_next(st, path, allow_hoist=True):
                i = _index_of_loop(st.kernel, parent, i)
                continue
            _greedy(st, path)
        i += 1


def _index_of_loop(k: ir.Kernel, parent: Path, start: int) -> int:
    body = _body_at(k, parent)
    for x in range(start, len(body)):
        if isinstance(body[x], ir.For):
            return x
    return start


def _fuse_seam(st: _State, fused: Path, n_a: int) -> None:
    body = _body_at(st.kernel, fused)
    if n_a == 0 or n_a >= len(body):
        return
    x, y = body[n_a - 1], body[n_a]
    if isinstance(x, ir.For) and isinstance(y, ir.For) and matching_bounds(x, y):
        pa, pb = fused + (n_a - 1,), fused + (n_a,)
        conflict = fusion_conflict(st.kernel, pa, pb)
        if conflict is None:
            inner_n = len(x.body)
            _fuse_pair(st, pa, pb)
            _fuse_seam(st, pa, inner_n)
        else:
            st.trace.decisions.append(f"kept `{loop_header(x)}` and `{loop_header(y)}` apart: {conflict.describe()}")


# ---- contraction ----------------------------------------------------------------------


def contractible_dims(kernel: ir.Kernel, tensor: str) -> list[tuple[int, str]]:
    """(dimension, loop variable) pairs of `tensor` that the contraction rule allows to drop.
    A temp with a layout tag (other than ND) is never contracted: the tag fixes its rank
    and arrangement (e.g. the NHWC copy `layout` made for a conv input)."""
    decl = kernel.tensor(tensor)
    if decl is None or decl.kind != "temp" or decl.rank == 0:
        return []
    if decl.layout not in (None, "ND"):
        return []
    accs = [a for st in statements(kernel) for a in accesses(kernel, st) if a.tensor == tensor]
    if not accs or any(isinstance(a.stmt.stmt, ir.Copy) for a in accs):
        return []
    common = list(accs[0].stmt.loops)
    for a in accs[1:]:
        n = 0
        while n < min(len(common), len(a.stmt.loops)) and common[n].path == a.stmt.loops[n].path:
            n += 1
        common = common[:n]
    out = []
    for lc in common:
        v = Affine(((lc.loop.var, 1),), 0)
        for d in range(decl.rank):
            if d in [x for x, _ in out]:
                continue
            if all(a.dims[d][0] == "pt" and to_affine(a.dims[d][1], {}) == v for a in accs):
                out.append((d, lc.loop.var))
    return sorted(out)


def _contract(st: _State) -> None:
    for name in sorted(st.shared):
        dims = contractible_dims(st.kernel, name)
        if not dims:
            continue
        drop = {d for d, _ in dims}
        k = st.kernel
        decl = k.tensor(name)
        assert decl is not None
        new_decl = dataclasses.replace(decl, shape=tuple(s for i, s in enumerate(decl.shape) if i not in drop))

        def contract(e: ir.Expr) -> ir.Expr:
            if isinstance(e, ir.Access) and e.tensor == name:
                idx = tuple(x for i, x in enumerate(e.indices) if i not in drop)
                return dataclasses.replace(e, indices=idx) if idx else ir.Name(name, e.loc)
            return e

        st.kernel = dataclasses.replace(
            k, buffers=tuple(new_decl if b.name == name else b for b in k.buffers),
            body=tuple(map_stmt_exprs(s, lambda e: map_expr(e, contract)) for s in k.body))
        why = ", ".join(f"dimension {d} is always `{v}`" for d, v in dims)
        st.trace.changes.append(f"contracted temp `{name}`: {format_type(decl)} -> {format_type(new_decl)}")
        st.trace.decisions.append(f"`{name}`: {why} of a loop enclosing every access, so each iteration uses its own slice")


# ---- the pass -------------------------------------------------------------------------


@register
@dataclass(frozen=True)
class Fuse(Pass):
    name: ClassVar[str] = "fuse"
    summary: ClassVar[str] = "merge adjacent loop nests with matching bounds when no dependence reverses; contract temps that become iteration-local"
    params: ClassVar[Params] = Names(("first", "second"), Loop(), optional=True, distinct=False,
                                     noun="adjacent loop", example="qk,bias",
                                     note="none: fuse greedily; two: the adjacent pair, in order")
    keeps_ranges: ClassVar[bool] = True  # bounds compared as expressions; dependences with the sizes free
    first: str = ""
    second: str = ""

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        st = _State(kernel, trace, used_names(kernel) | {kernel.name})
        if not self.first:
            _greedy(st, ())
            if not st.fusions:
                trace.decisions.append("no adjacent loops with matching bounds could be fused legally")
        else:
            self._fuse_named(st)
        _contract(st)
        return st.kernel

    def _fuse_named(self, st: _State) -> None:
        k = st.kernel
        ra, rb = resolve_loop(k, self.first, self.name), resolve_loop(k, self.second, self.name)
        if ra.path == rb.path:
            raise BadParameter(self.name, f"`{self.first}` and `{self.second}` are the same loop", loc=ra.loop.loc, param="second", value=self.second, loops=(self.first, self.second))
        if not adjacent(ra.path, rb.path):
            if ra.path[:-1] == rb.path[:-1] and rb.path[-1] > ra.path[-1]:
                n = rb.path[-1] - ra.path[-1] - 1
                why = f"{n} statement(s) stand between them"
            elif ra.path[:-1] == rb.path[:-1]:
                why = f"`{self.second}` comes before `{self.first}`; write `fuse{{{self.second},{self.first}}}`"
            else:
                why = "they are not in the same loop body"
            raise NotApplicable(self.name, f"`{self.first}` and `{self.second}` are not adjacent: {why}", loc=rb.loop.loc,
                            notes=[(ra.loop.loc, f"`{self.first}` is here")],
                            hint=_alternatives(k) + "; plain `fuse` also moves independent statements out of the way", loops=(self.first, self.second))
        a, b = ra.loop, rb.loop
        if not (same_bound(a.lo, b.lo) and same_bound(a.hi, b.hi)):
            raise NotApplicable(self.name, f"bounds differ: `{loop_header(a)}` and `{loop_header(b)}`", loc=b.loc,
                            notes=[(a.loc, "first loop")], hint=_alternatives(k), loops=(self.first, self.second))
        if a.annotations != b.annotations:
            raise NotApplicable(self.name, f"annotations differ between `{self.first}` and `{self.second}`", loc=b.loc, loops=(self.first, self.second))
        conflict = fusion_conflict(k, ra.path, rb.path)
        if conflict is not None:
            raise DependenceViolation(self.name, f"cannot fuse `{self.first}` and `{self.second}`: {conflict.describe()}, "
                            "so fusion would reverse that dependence", loc=b.loc, notes=conflict.notes(),
                            hint=_alternatives(k), dependence=conflict, loops=(self.first, self.second))
        n_a = len(a.body)
        _fuse_pair(st, ra.path, rb.path)
        _fuse_seam(st, ra.path, n_a)

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        from passes.base import all_loops

        for path, loop, _ in all_loops(kernel):
            body = _body_at(kernel, path[:-1])
            nxt = path[-1] + 1
            if nxt < len(body) and isinstance(body[nxt], ir.For) and matching_bounds(loop, body[nxt]):  # type: ignore[arg-type]
                pb = path[:-1] + (nxt,)
                na, nb = name_of_loop(kernel, path), name_of_loop(kernel, pb)
                if fusion_conflict(kernel, path, pb) is None:
                    if not out or out[0] != cls():
                        out.insert(0, cls())
                    if na and nb:
                        out.append(cls(na, nb))
        return out


def _alternatives(kernel: ir.Kernel) -> str:
    named = [p.to_text() for p in Fuse.space(kernel) if isinstance(p, Fuse) and p.first]
    return ("legal fusions here: " + ", ".join(f"`{t}`" for t in named)) if named else "no adjacent pair can be fused here"
