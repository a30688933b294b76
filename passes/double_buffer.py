"""`double_buffer`: give staged buffers two stages and pipeline the tile loop.

    double_buffer                 every loop whose body stages tiles (has `copy` statements)
    double_buffer{loop=kv}        one loop, by name
    double_buffer{stages=3}       more stages

The buffers a loop stages -- the destinations of its copy-ins and the sources of its
copy-outs, copied directly in its body -- get `stages` copies, and the loop is marked
`@pipeline(stages=2)`: the copy-in of tile n+1 (MTE2) overlaps the compute of tile n (V or
M) and the copy-out of tile n-1 (MTE3). This is the `BUFFER_NUM = 2` of hand-written Ascend C.

Stages are a *resource annotation*: the program text, and so its meaning under the
interpreter, is unchanged apart from the annotation. The stage count of every buffer is
read back with `buffer_stages(kernel)`, which is what the capacity model and the lowering
use (a buffer staged in a `@pipeline(stages=n)` loop has n stages, every other buffer 1).

It requires (each a named check below):
1) `Check_no_carried_value`: no staged buffer is read in an iteration before that iteration
   writes it (else iteration n would read stage n % 2, written two iterations ago);
2) `Check_no_gm_overlap`: a GM tensor both read (copy-in) and written in the loop touches
   disjoint regions in different iterations (else the early copy-in of tile n+1 reads
   what iteration n has not written yet: a read-after-write / write-after-read hazard);
3) the buffers of each nest, times their stages, fit the scope budgets.

Rewrite:

    for j0 in 0..4 {                              @pipeline(stages=2)
      copy A_ub[0:256] <- A[j0 * 256:...]   ->    for j0 in 0..4 {
      ...                                           copy A_ub[0:256] <- A[j0 * 256:...]
    }                                               ...
                                                  }
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from transformer import ir
from transformer.diagnostics import BadParameter, CapacityExceeded, DependenceViolation, NotApplicable
from transformer.affine import Affine, to_affine
from transformer.loops import buffer_stages, staged_buffers  # noqa: F401  (buffer_stages: re-export)

from . import _rewrite as R
from ._budgets import scope_budget, tensor_bytes
from .params import Int, Keywords, Loop, Params
from .base import NothingToDo, Pass, PassError, TraceEntry, all_loops, preferred_loop_names, register, replace_at, resolve_loop
from transformer.targets import Target

Path = tuple[int, ...]


@register
@dataclass(frozen=True)
class DoubleBuffer(Pass):
    """Two-stage (or n-stage) buffers for the tiles a loop stages; `@pipeline` on the loop."""

    name: ClassVar[str] = "double_buffer"
    summary: ClassVar[str] = "double-buffer staged tiles and mark the tile loop @pipeline(stages=2)"
    params: ClassVar[Params] = Keywords({"loop": Loop(), "stages": Int(2)}, example="loop=qk.i,stages=2",
                                        note="no loop: every staging loop that is safe; stages default 2")
    keeps_ranges: ClassVar[bool] = True  # a run-time trip count is pipelined as a constant one is
    loop: str = ""
    stages: int = 2

    def run(self, kernel: ir.Kernel, target: Target, trace: TraceEntry) -> ir.Kernel:
        if self.stages < 2:
            raise BadParameter("double_buffer", f"stages must be at least 2, got {self.stages}", hint="stages=2", param="stages", value=self.stages)
        if self.loop:
            ref = resolve_loop(kernel, self.loop, "double_buffer")
            if not staged_buffers(ref.loop, kernel):
                raise NotApplicable("double_buffer", f"loop `{self.loop}` stages no buffers (no `copy` in its body)",
                                ref.loop.loc, hint=_candidates_hint(kernel), loops=(self.loop,))
            _check_loop(kernel, ref.loop, self.loop)
            chosen = [(ref.path, ref.loop, self.loop)]
        else:
            chosen = []
            first_error: PassError | None = None
            for path, loop, name in _candidates(kernel):
                try:
                    _check_loop(kernel, loop, name)
                except PassError as e:
                    first_error = first_error or e
                    trace.decisions.append(f"skipped `{name}`: {e.message}")
                    continue
                chosen.append((path, loop, name))
            if not chosen:
                if first_error is not None:
                    raise NothingToDo("double_buffer", "looked for loops that stage buffers (copy tiles into "
                                      f"locals) and can overlap them; none can: {first_error.message}",
                                      first_error.loc, hint=first_error.hint)
                raise NothingToDo("double_buffer", _no_staging_loop_reason(kernel),
                                  hint="double buffering overlaps the copies of one tile with the compute of "
                                       "another; it needs `tile` to leave a tile loop (smaller tiles)")
        out = kernel
        for path, loop, name in chosen:
            ann = tuple(a for a in loop.annotations if a.name != "pipeline") + \
                (ir.Annotation("pipeline", (("stages", self.stages),)),)
            cand = dataclasses.replace(out, body=replace_at(out.body, path, [dataclasses.replace(loop, annotations=ann)]))
            try:
                _check_capacity(cand, target)
            except PassError as e:
                if self.loop:
                    raise
                trace.decisions.append(f"skipped `{name}`: {e.message}")
                continue
            out = cand
            bufs = sorted(staged_buffers(loop, kernel))
            trace.changes.append(f"pipelined `{name}` with {self.stages} stages for " + ", ".join(f"`{b}`" for b in bufs))
        if out is kernel:
            raise NothingToDo("double_buffer", "looked for staging loops whose buffers fit twice in their scopes; "
                              "none does: " + "; ".join(trace.decisions), hint="tile with smaller tiles first")
        return out

    @classmethod
    def space(cls, kernel: ir.Kernel, target: Target | None = None) -> list[Pass]:
        out: list[Pass] = []
        for _, loop, name in _candidates(kernel):
            p = DoubleBuffer(loop=name)
            try:
                p.run(kernel, target, TraceEntry(p.to_text()))
            except PassError:
                continue
            out.append(p)
        return out


# --------------------------------------------------------------------------------------
# what a loop stages


def _no_staging_loop_reason(kernel: ir.Kernel) -> str:
    """Why no loop stages buffers, from what the kernel holds."""
    locals_ = {t.name for t in kernel.buffers if t.kind == "local"}
    top = [s for s in kernel.body if isinstance(s, ir.Copy) and (s.dst.tensor in locals_ or s.src.tensor in locals_)]
    if top:
        return ("looked for a loop whose body copies tiles into locals; the kernel's copies into locals are outside "
                "every loop (a single tile, e.g. `tile` found that each tensor fits at once): there is no next "
                "tile to overlap")
    if not locals_:
        return "looked for a loop whose body copies tiles into locals; the kernel has no locals (run `tile` first)"
    sizes = kernel.known_sizes()
    once = [R.loop_header(lp) for lp in ir.iter_loops(kernel.body)
            if staged_buffers(lp, kernel) and (R.loop_extent(lp, sizes) or 0) < 2]
    if once:
        return ("looked for a loop whose body copies tiles into locals and runs more than once; the staging loops ("
                + ", ".join(f"`{h}`" for h in once[:3]) + ") run once (the whole extent is one tile): there is no "
                "next tile to overlap")
    return "looked for a loop whose body copies tiles into locals; no loop body has such a copy"


def _candidates(kernel: ir.Kernel) -> list[tuple[Path, ir.For, str]]:
    by_id = preferred_loop_names(kernel)
    sizes = kernel.known_sizes()
    out = []
    for path, loop, _ in all_loops(kernel):
        if not staged_buffers(loop, kernel):
            continue
        ext = R.loop_extent(loop, sizes)
        if ext is not None and ext < 2:
            continue
        if id(loop) in by_id:
            out.append((path, loop, by_id[id(loop)]))
    return out


def _candidates_hint(kernel: ir.Kernel) -> str:
    c = [n for _, _, n in _candidates(kernel)]
    return ("loops that stage buffers: " + ", ".join(f"`{n}`" for n in c)) if c else "run `tile` first"


# --------------------------------------------------------------------------------------
# legality


def _check_loop(kernel: ir.Kernel, loop: ir.For, name: str) -> None:
    for b in sorted(staged_buffers(loop, kernel)):
        Check_no_carried_value(kernel, loop, name, b)
    Check_no_gm_overlap(kernel, loop, name)


def _events(stmts: tuple[ir.Stmt, ...], buf: str, depth: int = 0) -> list[tuple[str, Any, int, ir.Stmt]]:
    """Accesses of `buf` in program order: (kind, access-or-region, depth, stmt), kind in
    read / write / copy_in (whole-buffer write) / copy_out (whole-buffer read)."""
    ev: list[tuple[str, Any, int, ir.Stmt]] = []
    for s in stmts:
        if isinstance(s, ir.For):
            ev += _events(s.body, buf, depth + 1)
        elif isinstance(s, ir.Copy):
            if s.src.tensor == buf:
                ev.append(("copy_out", s.src, depth, s))
            if s.dst.tensor == buf:
                ev.append(("copy_in", s.dst, depth, s))
        elif isinstance(s, ir.Assign):
            for a, w in R.stmt_accesses(s):
                if a.tensor == buf and not w:
                    ev.append(("read", a, depth, s))
            for a, w in R.stmt_accesses(s):
                if a.tensor == buf and w:
                    ev.append(("write" if s.op == "=" else "update", a, depth, s))
    return ev


def Check_no_carried_value(kernel: ir.Kernel, loop: ir.For, name: str, buf: str) -> None:
    """Condition: every read of staged buffer `buf` in an iteration of `loop` reads an
    element written earlier in the same iteration: either a copy into `buf` precedes it,
    or a plain write `buf[f] = ...` with the identical index f precedes it at the same or an
    enclosing depth, or (for whole-buffer reads by a copy-out) `buf` was written in the
    iteration. Otherwise the value flows from iteration n-1, which has another stage."""
    ev = _events(loop.body, buf)
    whole = False
    writes: list[tuple[ir.Access, int]] = []
    last_write: ir.Stmt | None = None
    for kind, x, depth, s in ev:
        if kind == "copy_in":
            whole = True
            last_write = s
        elif kind == "write":
            writes.append((x, depth))
            last_write = s
        elif kind in ("read", "update"):
            if kind == "update":
                last_write = s
                continue
            if whole or any(w == x and d <= depth for w, d in writes):
                continue
            src = _last_writer(ev)
            raise _carried(name, buf, loop, s, src)
        elif kind == "copy_out":
            if not (whole or writes):
                raise _carried(name, buf, loop, s, _last_writer(ev))


def _last_writer(ev: list[tuple[str, Any, int, ir.Stmt]]) -> ir.Stmt | None:
    for kind, _, _, s in reversed(ev):
        if kind in ("write", "update", "copy_in"):
            return s
    return None


def _where(s: ir.Stmt | None) -> str:
    loc = getattr(s, "loc", None)
    return f"line {loc.line}:{loc.col}" if loc is not None else "a statement made by a pass"


def _carried(name: str, buf: str, loop: ir.For, read: ir.Stmt, write: ir.Stmt | None) -> PassError:
    return DependenceViolation(
        "double_buffer",
        f"cannot double-buffer loop `{name}`: buffer `{buf}` carries a value from one iteration to the next "
        f"(read at {_where(read)} before this iteration writes it; written at {_where(write)} in the previous "
        f"iteration, which uses the other stage)",
        getattr(read, "loc", None),
        notes=[(getattr(write, "loc", None), f"`{buf}` written here")],
        hint="initialise the buffer inside the loop, or keep it single-buffered (it is not a staged tile)", loops=(name,))


def Check_no_gm_overlap(kernel: ir.Kernel, loop: ir.For, name: str) -> None:
    """Condition: for every GM tensor X that the loop body both reads (copy source or
    assignment read) and writes (copy destination or assignment target), the regions that
    two different iterations v != v' touch are disjoint: in some dimension both the read and
    the written index/region are `c*v + e` with the same c != 0, the same e, and an extent
    of at most |c|. Otherwise the copy-in of iteration v+1, issued early, may read X before
    iteration v writes it (or be overwritten by it)."""
    sizes = kernel.known_sizes()
    reads: dict[str, list[tuple[list[tuple[ir.Expr, ir.Expr]], ir.Stmt]]] = {}
    writes: dict[str, list[tuple[list[tuple[ir.Expr, ir.Expr]], ir.Stmt]]] = {}
    inner: dict[str, int | None] = {}
    for lp in ir.iter_loops(loop.body):
        ext = R.loop_extent(lp, sizes)
        inner[lp.var] = ext if ext is not None else R.tail_max_extent(lp, sizes)

    def region_dims(r: ir.Region) -> list[tuple[ir.Expr, ir.Expr]]:
        return [(d.lo, d.hi) if isinstance(d, ir.Slice) else (d, R.add(d, R.lit(1))) for d in r.dims]

    def access_dims(a: ir.Access) -> list[tuple[ir.Expr, ir.Expr]]:
        return [(i, R.add(i, R.lit(1))) for i in a.indices]

    for s in ir.iter_stmts(loop.body):
        if isinstance(s, ir.Copy):
            for r, dst in ((s.src, reads), (s.dst, writes)):
                t = kernel.tensor(r.tensor)
                if t is not None and t.kind != "local":
                    dst.setdefault(r.tensor, []).append((region_dims(r), s))
        elif isinstance(s, ir.Assign):
            for a, w in R.stmt_accesses(s):
                t = kernel.tensor(a.tensor)
                if t is not None and t.kind != "local":
                    (writes if w else reads).setdefault(a.tensor, []).append((access_dims(a), s))
    for x in sorted(set(reads) & set(writes)):
        for rd, rs in reads[x]:
            for wd, ws in writes[x]:
                if not _disjoint_across(rd, wd, loop.var, inner, sizes):
                    raise DependenceViolation(
                        "double_buffer",
                        f"cannot double-buffer loop `{name}`: `{x}` is read at {_where(rs)} and written at "
                        f"{_where(ws)}; with two stages the read for iteration n+1 is issued before iteration n's "
                        f"write, and the regions of different iterations overlap",
                        getattr(rs, "loc", None), notes=[(getattr(ws, "loc", None), f"`{x}` written here")],
                        hint="stage the tensor at an outer loop, or do not pipeline this loop", loops=(name,))


def _disjoint_across(rd: list[tuple[ir.Expr, ir.Expr]], wd: list[tuple[ir.Expr, ir.Expr]], v: str,
                     inner: Mapping[str, int | None], sizes: Mapping[str, int]) -> bool:
    """Some dimension where read and write are `c*v + e + (inner terms)` with the same c != 0
    and e, and the width of each (its extent plus the span of the inner loops) is <= |c|."""
    for (rlo, rhi), (wlo, whi) in zip(rd, wd):
        a_r, a_w = to_affine(rlo, sizes), to_affine(wlo, sizes)
        if a_r is None or a_w is None:
            continue
        c = a_r.coeff(v)
        if c == 0 or a_w.coeff(v) != c:
            continue
        strip = lambda a: Affine.make({k: x for k, x in a.coeffs if k not in inner}, a.const)  # noqa: E731
        if strip(a_r) != strip(a_w):
            continue
        ok = True
        for a, lo, hi in ((a_r, rlo, rhi), (a_w, wlo, whi)):
            ext = _max_ext(lo, hi, sizes)
            span = 0
            for w, cw in a.coeffs:
                if w in inner:
                    if inner[w] is None:
                        ok = False
                        break
                    span += abs(cw) * (inner[w] - 1)  # type: ignore[operator]
            if not ok or ext is None or ext + span > abs(c):
                ok = False
                break
        if ok:
            return True
    return False


def _max_ext(lo: ir.Expr, hi: ir.Expr, sizes: Mapping[str, int]) -> int | None:
    a, b = to_affine(lo, sizes), to_affine(hi, sizes)
    if a is not None and b is not None:
        d = b - a
        return d.const if d.is_const() else None
    # hi = lo + min(T, ...): at most T
    if isinstance(hi, ir.Binary) and hi.op == "+" and to_affine(hi.lhs, sizes) == a and isinstance(hi.rhs, ir.Call) \
            and hi.rhs.func == "min":
        cs = [R.eval_const(x, sizes) for x in hi.rhs.args]
        cs = [c for c in cs if c is not None]
        return min(cs) if cs else None
    return None


def _check_capacity(kernel: ir.Kernel, target: Target) -> None:
    """Condition: per nest and scope, sum(bytes x stages) of the locals used fits the budget."""
    sizes = kernel.known_sizes()
    stages = buffer_stages(kernel)
    decls = {t.name: t for t in kernel.buffers if t.kind == "local"}
    for nest in kernel.body:
        used = ir.names_used((nest,)) & set(decls)
        per: dict[str, int] = {}
        for b in used:
            per[str(decls[b].scope)] = per.get(str(decls[b].scope), 0) + tensor_bytes(decls[b], sizes) * stages[b]
        for scope, total in per.items():
            budget = scope_budget(target, scope)
            if total > budget:
                parts = ", ".join(f"`{b}` {tensor_bytes(decls[b], sizes)} B x {stages[b]}"
                                  for b in sorted(used) if str(decls[b].scope) == scope)
                raise CapacityExceeded("double_buffer", f"with stages the buffers of one nest need {total} bytes of "
                                f"{scope} ({parts}), more than the {budget} bytes usable",
                                getattr(nest, "loc", None), hint="tile with smaller tiles first", scope=scope, need_bytes=total, budget_bytes=budget)
