"""Wiring the capacity model to kernels: the `local` buffers of a `Kernel` -> `Buffer`s.

    from transformer.capacity.from_kernel import kernel_buffers, check_kernel_capacity
    bufs = kernel_buffers(kernel, "ascend910b2")          # list[Buffer], shapes evaluated
    res = check_kernel_capacity(kernel, "ascend910b2")    # CapacityResult (sat/unsat/unknown)
    capacity_gate(kernel, target)                          # raises KernelCapacityError unless sat

What is read from the kernel (see docs/capacity.md, "From a kernel"):

* every `local NAME: DTYPE[DIMS] @SCOPE`, dims evaluated with the kernel's `size` values
  (after `--size`); `temp`s are notionally in GM and are not counted;
* what the lowering allocates (`transformer.lower.allocation.ub_allocation`, the lowering
  itself): stages (queue depth), rows padded to 32 B, locals moved to the GM workspace, and
  per phase the vector temporaries TBuf (`tmpBuf<i>`: expression temporaries, Cast staging,
  reduction work areas) — so the proof and the emitted code cannot disagree.  Without a
  lowering (`free` sizes, or a kernel the code generator refuses): stages from
  `transformer.loops.buffer_stages(kernel)` (n for a buffer copied directly in the body of
  a `@pipeline(stages=n)` loop), no temporaries;
* TPosition (what the lowering will use): ub -> VECIN when filled by a copy from GM, VECOUT
  when copied out to GM, VECCALC otherwise; l1 -> B1 when it feeds an l0b buffer, else A1;
  l0a -> A2; l0b -> B2; l0c -> CO1.  l0a/l0b/l0c buffers are cube operands;
* copy lengths: for each `copy` touching the buffer, the innermost contiguous run (elements;
  the model checks that run x sizeof(dtype) is a multiple of 32 B, else DataCopyPad);
* liveness: the range of top-level statements that use the buffer, so buffers of different
  top-level nests need not fit at once;
* origin: `double_buffer on loop X` for staged buffers, `loop X` otherwise (X is the
  innermost loop enclosing its copies, named as passes name loops).

API temp (`api_temp=None`, automatic): the target's UB API temp area is reserved when the
lowering emits (or wants to emit) an instruction that takes it implicitly
(`transformer.lower.temporaries.API_TEMP_INSTRUCTIONS`); reductions pass their own work
slot, so no instruction selected today needs it.

Size: about 520 lines: one reading of a kernel's buffers for the solver (locals,
vector temporaries, gemm / conv / flash buffers); each part mirrors what the lowering
allocates, so they change together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from .. import ir
from ..affine import eval_int
from ..diagnostics import AscxError
from ..loops import buffer_stages, loop_names_by_path
from ..regions import max_slice_extent
from ..targets import Target
from ..walk import sites, uses
from .buffer import Buffer, CopyLen, Dim
from .result import CapacityResult
from .solve import DEFAULT_TIMEOUT_MS, check, resolve_target

GM_KINDS = frozenset({"input", "output", "temp"})
CUBE_SCOPES = frozenset({"l0a", "l0b", "l0c"})
FIXED_POSITION = {"l0a": "A2", "l0b": "B2", "l0c": "CO1"}


class KernelCapacityError(AscxError):
    """`capacity_gate` refused a kernel: `result` is the `CapacityResult` (unsat or
    unknown).  `ascx check` and `ascx transform` report it with exit code 1 (a check that
    failed), not 2 (bad input); see `transformer.cli_check.enforce_capacity`."""

    def __init__(self, message: str, result: CapacityResult, loc: ir.Loc | None = None,
                 **kw: Any) -> None:
        super().__init__(message, loc, **kw)
        self.result = result


class CapacityUnsatKernelError(KernelCapacityError):
    """The kernel's buffers provably do not fit the target."""


class CapacityUnknownKernelError(KernelCapacityError):
    """The solver gave up (timeout): the kernel is neither proven to fit nor not to."""


# --------------------------------------------------------------------------------------
# walking the kernel


@dataclass
class _Use:
    """What the kernel does with one local."""

    tops: set[int] = field(default_factory=set)          # top-level statements using it
    copies_in: list[tuple[ir.Copy, tuple[tuple[tuple[int, ...], ir.For], ...]]] = field(default_factory=list)
    copies_out: list[tuple[ir.Copy, tuple[tuple[tuple[int, ...], ir.For], ...]]] = field(default_factory=list)
    loops: list[tuple[tuple[tuple[int, ...], ir.For], ...]] = field(default_factory=list)


def _walk(kernel: ir.Kernel, locals_: set[str]) -> dict[str, _Use]:
    uses = {n: _Use() for n in locals_}

    def visit(stmts: tuple[ir.Stmt, ...], path: tuple[int, ...],
              outer: tuple[tuple[tuple[int, ...], ir.For], ...], top: int | None) -> None:
        for i, s in enumerate(stmts):
            p = path + (i,)
            t = i if top is None else top
            for n in ir.stmt_names(s) & locals_:
                uses[n].tops.add(t)
                uses[n].loops.append(outer)
            if isinstance(s, ir.Copy):
                if s.dst.tensor in uses:
                    uses[s.dst.tensor].copies_in.append((s, outer))
                if s.src.tensor in uses:
                    uses[s.src.tensor].copies_out.append((s, outer))
            if isinstance(s, ir.For):
                visit(s.body, p, outer + ((p, s),), t)

    visit(kernel.body, (), (), None)
    return uses


_ALLOC_CACHE: list[tuple[ir.Kernel, str, Any]] = []


def ub_allocation(kernel: ir.Kernel, target: Target) -> Any:
    """What the lowering allocates on chip (`transformer.lower.allocation.ub_allocation`),
    or None when the kernel cannot be lowered (the model then reads the IR alone).
    The last few results are kept (check, the gate and the table ask for the same kernel)."""
    for k, name, a in _ALLOC_CACHE:
        if k is kernel and name == target.name:
            return a
    from ..lower.allocation import ub_allocation as lowered

    try:
        a = lowered(kernel, target)
    except AscxError:
        a = None
    _ALLOC_CACHE.insert(0, (kernel, target.name, a))
    del _ALLOC_CACHE[8:]
    return a


# --------------------------------------------------------------------------------------
# sizes, extents and contiguous runs

Factor = Any  # int | str | tuple[int | str, ...]


def _dim(e: ir.Expr, env: Mapping[str, int], free: frozenset[str], what: str) -> Dim:
    """A concrete dim, or the name of a free (symbolic) size."""
    if isinstance(e, ir.Name) and e.name in free:
        return e.name
    try:
        return eval_int(e, env)
    except (KeyError, ValueError):
        from ..diagnostics import SemanticError
        raise SemanticError(f"{what}: cannot evaluate its extent"
                            + (" (a free size may only appear alone as a dim)" if free else ""),
                            getattr(e, "loc", None)) from None


def _extent(d: ir.Slice | ir.Expr, env: Mapping[str, int], free: frozenset[str]) -> Factor | None:
    """Extent of one region dim: int (the largest, for a tail tile: `regions.max_slice_extent`),
    a free size name, or None when it is not bounded."""
    if not isinstance(d, ir.Slice):
        return 1
    if free and isinstance(d.lo, ir.IntLit) and d.lo.value == 0 and isinstance(d.hi, ir.Name) \
            and d.hi.name in free:
        return d.hi.name
    return max_slice_extent(d, env)


def _full(t: ir.TensorDecl, env: Mapping[str, int], free: frozenset[str]) -> list[Factor | None]:
    out: list[Factor | None] = []
    for e in t.shape:
        if isinstance(e, ir.Name) and e.name in free:
            out.append(e.name)
        else:
            try:
                out.append(eval_int(e, env))
            except (KeyError, ValueError):
                out.append(None)
    return out


def _run(r: ir.Region, t: ir.TensorDecl, env: Mapping[str, int],
         free: frozenset[str]) -> tuple[Factor, ...] | None:
    """Innermost contiguous run of region `r` of row-major tensor `t`, as factors."""
    full = _full(t, env, free)
    factors: list[Factor] = []
    for d, f in zip(reversed(r.dims), reversed(full)):
        ext = _extent(d, env, free)
        if ext is None:
            return None
        factors.append(ext)
        if ext != f:
            break
    return tuple(factors)


def _value(fs: tuple[Factor, ...]) -> tuple[int, tuple[str, ...]]:
    k, syms = 1, []
    for f in fs:
        if isinstance(f, str):
            syms.append(f)
        else:
            k *= f
    return k, tuple(sorted(syms))


def _copy_len(c: ir.Copy, kernel: ir.Kernel, env: Mapping[str, int],
              free: frozenset[str]) -> CopyLen | None:
    """The copy's contiguous run: the shorter of the two sides' runs (elements)."""
    runs = []
    for r in (c.dst, c.src):
        t = kernel.tensor(r.tensor)
        if t is None:
            return None
        fs = _run(r, t, env, free)
        if fs is None:
            return None
        runs.append(_value(fs))
    # Prefer the side with fewer symbolic factors, then the smaller constant.
    k, syms = min(runs, key=lambda v: (len(v[1]), v[0]))
    if not syms:
        return k
    parts: tuple[Dim, ...] = ((k,) if k != 1 else ()) + syms
    return parts[0] if len(parts) == 1 else parts


# --------------------------------------------------------------------------------------
# the buffer list


def _position(t: ir.TensorDecl, u: _Use, kernel: ir.Kernel) -> str:
    scope = (t.scope or "").lower()
    if scope in FIXED_POSITION:
        return FIXED_POSITION[scope]
    if scope == "ub":
        def kind(name: str) -> str | None:
            x = kernel.tensor(name)
            return None if x is None else x.kind
        if any(kind(c.src.tensor) in GM_KINDS for c, _ in u.copies_in):
            return "VECIN"
        if any(kind(c.dst.tensor) in GM_KINDS for c, _ in u.copies_out):
            return "VECOUT"
        return "VECCALC"
    if scope == "l1":
        for c, _ in u.copies_out:
            d = kernel.tensor(c.dst.tensor)
            if d is not None and (d.scope or "").lower() == "l0b":
                return "B1"
        return "A1"
    return ""


def _innermost(chains: Iterable[tuple[tuple[tuple[int, ...], ir.For], ...]]
               ) -> tuple[tuple[int, ...], ir.For] | None:
    for chain in chains:
        if chain:
            return chain[-1]
    return None


def _pipeline_loop(chains: Iterable[tuple[tuple[tuple[int, ...], ir.For], ...]]
                   ) -> tuple[tuple[int, ...], ir.For, int] | None:
    """The innermost enclosing loop with @pipeline(stages=n) over the given copy sites
    (the largest n when they differ)."""
    best: tuple[tuple[int, ...], ir.For, int] | None = None
    for chain in chains:
        for path, loop in reversed(chain):
            a = loop.annotation("pipeline")
            if a is not None:
                n = int(a.get("stages", 2) or 2)
                if best is None or n > best[2]:
                    best = (path, loop, n)
                break
    return best


def kernel_buffers(kernel: ir.Kernel, target: Target | str | None = None, *,
                   free: Iterable[str] = ()) -> list[Buffer]:
    """Every `local` of `kernel` as a capacity `Buffer` (declaration order), then the vector
    temporaries of every phase that has some (`tmpBuf<i>`, origin "vector temporaries of
    nest `h`").

    Stages, row padding, liveness and the temporaries are what the lowering allocates
    (`ub_allocation`): a local the lowering moves to the GM workspace (used by several
    phases) is a `gm` buffer (not counted).  free: names of `size`s to keep symbolic (the
    solver chooses them); such a size may appear in a local's shape only as a whole dim, and
    the kernel is not lowered (stages from `@pipeline`, no temporaries: they depend on the
    size).  Other sizes take the kernel's values.
    """
    tgt = resolve_target(target)
    free_set = frozenset(free)
    env = {k: v for k, v in kernel.size_values().items() if k not in free_set}
    locals_ = [t for t in kernel.buffers if t.kind == "local"]
    gemm = _gemm_buffers(kernel, tgt)
    if not locals_:
        return gemm
    alloc = None if free_set else ub_allocation(kernel, tgt)
    uses = _walk(kernel, {t.name for t in locals_})
    names = loop_names_by_path(kernel)
    stages_of = buffer_stages(kernel) if alloc is None else {}
    if alloc is not None:
        tops = {n: alloc.phase_range[a.phase] for n, a in alloc.locals.items()}
        tops.update({f"\0{t.phase}": (t.first, t.last) for t in alloc.temporaries})
    else:
        tops = {n: (min(u.tops), max(u.tops)) for n, u in uses.items() if u.tops}
    # When every used local spans the same top-level range, liveness adds nothing.
    same = len(set(tops.values())) <= 1
    out: list[Buffer] = []
    for t in locals_:
        u = uses[t.name]
        shape = tuple(_dim(e, env, free_set, f"local `{t.name}`") for e in t.shape)
        copy_sites = [ch for _, ch in u.copies_in] or [ch for _, ch in u.copies_out]
        pl = _pipeline_loop(copy_sites)
        la = alloc.locals.get(t.name) if alloc is not None else None
        stages = max(1, la.depth if la is not None else int(stages_of.get(t.name, 1)))
        # origin
        site = (pl[0], pl[1]) if pl else _innermost(copy_sites) or _innermost(u.loops)
        loop_name = None
        if site is not None:
            loop_name = names.get(site[0]) or site[1].label or site[1].var
        if stages > 1:
            origin = f"double_buffer on loop {loop_name}" if loop_name else "double_buffer"
        else:
            origin = f"loop {loop_name}" if loop_name else ""
        loc = str(t.loc) if t.loc else None
        if alloc is not None and la is None:
            why = alloc.demoted.get(t.name)
            out.append(Buffer(name=t.name, scope="gm", dtype=t.dtype, shape=shape,
                              origin=f"GM workspace: {why}" if why else "unused: not allocated",
                              loc=loc))
            continue
        # a local the lowering allocates as a TBuf (no queue slot): staged once before the
        # tile loop, or demoted when its position already holds the queue limit
        tbuf = la is not None and la.kind == "buf"
        tbuf_why = alloc.tbufs.get(t.name, "") if alloc is not None else ""
        lens: list[CopyLen] = []
        for c, _ in u.copies_in + u.copies_out:
            n = _copy_len(c, kernel, env, free_set)
            if n is not None and n not in lens:
                lens.append(n)
        out.append(Buffer(
            name=t.name, scope=(t.scope or "ub").lower(), dtype=t.dtype, shape=shape,
            stages=stages, position=_position(t, u, kernel) or None,
            cube_operand=(t.scope or "").lower() in CUBE_SCOPES, copy_lengths=tuple(lens),
            origin=origin + (f"; a TBuf: {tbuf_why}" if tbuf_why else ""), loc=loc,
            row_align=32 if la is not None and la.padded else 0, tbuf=tbuf,
            live=None if same or t.name not in tops else tops[t.name]))
    out.extend(gemm)
    taken = {t.name for t in kernel.tensors()}
    for pt in alloc.temporaries if alloc is not None else ():
        name = f"tmpBuf{pt.phase}"
        while name in taken:
            name += "_"
        nests = list(dict.fromkeys(n for n, _ in pt.nests))
        what = ("nest " if len(nests) == 1 else "nests ") + ", ".join(f"`{n}`" for n in nests)
        out.append(Buffer(
            name=name, scope="ub", dtype="f32", shape=pt.shape, slots=max(1, pt.slots),
            position="VECCALC",
            origin=f"vector temporaries of {what} ({', '.join(pt.purposes)})",
            live=None if same else (pt.first, pt.last)))
    return out


def _gemm_buffers(kernel: ir.Kernel, target: Target) -> list[Buffer]:
    """The L1 / L0 queues of every `@gemm` nest (transformer/lower/gemm.py allocates them) and
    the buffers of a `@flash` mix kernel (transformer/lower/flash.py)."""
    from ..lower.gemm import gemm_buffers, gemm_phase

    out: list[Buffer] = []
    for i, s in enumerate(kernel.body):
        gp = gemm_phase(kernel, s)
        if gp is None:
            continue
        g, bl = gp
        for role, scope, dt, shape, stages, pos in gemm_buffers(bl, g.b_nk, g.dtype):
            out.append(Buffer(name=f"{g.label}_{role}", scope=scope, dtype=dt, shape=shape, stages=stages,
                              position=pos, cube_operand=scope in CUBE_SCOPES,
                              origin=f"@gemm(m={bl.m}, n={bl.n}, k={bl.k}, k0={bl.k0}) on `{g.label}`",
                              loc=str(s.loc) if s.loc else None, live=(i, i)))
    from ..lower.conv import conv_buffers, conv_phase

    for i, s in enumerate(kernel.body):
        cp = conv_phase(kernel, s)
        if cp is None:
            continue
        cv, cb = cp
        for role, scope, dt, shape, stages, pos in conv_buffers(cv, cb):
            out.append(Buffer(name=f"{cv.label}_{role}", scope=scope, dtype=dt, shape=shape, stages=stages,
                              position=pos, cube_operand=scope in CUBE_SCOPES,
                              origin=f"@conv(m={cb.m}, rows={cb.rows}, c={cb.c}, k0={cb.k0}) on `{cv.label}`",
                              loc=str(s.loc) if s.loc else None, live=(i, i)))
    first = kernel.body[0] if kernel.body else None
    if isinstance(first, ir.For) and first.annotation("flash") is not None:
        from ..lower.flash import flash_buffers, match_flash, with_annotation

        fa = match_flash(kernel)
        if not isinstance(fa, str):
            fa = with_annotation(fa, first.annotation("flash"))
            for role, scope, dt, shape, stages, pos in flash_buffers(fa, target):
                out.append(Buffer(name=f"fa_{role}", scope=scope, dtype=dt, shape=shape, stages=stages, position=pos,
                                  cube_operand=scope in CUBE_SCOPES, origin=f"@flash(q={fa.q}, kv=128, g={fa.g}) mix kernel",
                                  loc=str(first.loc) if first.loc else None))
    return out


def needs_api_temp(kernel: ir.Kernel, target: Target | str | None = None) -> bool:
    """Whether the emitted code uses an instruction that takes the UB shared temp area
    (`transformer.lower.temporaries.API_TEMP_INSTRUCTIONS`), vectorised or wanting to be."""
    if not any(t.kind == "local" and (t.scope or "ub") == "ub" for t in kernel.buffers):
        return False
    alloc = ub_allocation(kernel, resolve_target(target))
    return bool(alloc is not None and alloc.api_temp)


_POINT = re.compile(r"at program point (\d+)")


def _top_name(kernel: ir.Kernel, i: int) -> str:
    if 0 <= i < len(kernel.body):
        s = kernel.body[i]
        if isinstance(s, ir.For):
            return f"while top-level loop {s.label or s.var} runs"
    return f"at top-level statement {i + 1}"


def check_kernel_capacity(kernel: ir.Kernel, target: Target | str | None = None, *,
                          timeout_ms: int = DEFAULT_TIMEOUT_MS, api_temp: bool | None = None,
                          free: Iterable[str] = (), hints: bool = True,
                          use_cache: bool = True,
                          buffers: Sequence[Buffer] | None = None) -> CapacityResult:
    """`check(kernel_buffers(kernel, target), target, ...)`: does the kernel fit?

    api_temp None = automatic (`needs_api_temp`).  Kernels without locals are trivially
    sat (`per_scope` is empty; `format_kernel_report` says so).  Unsat explanations name
    the top-level loop instead of an internal program point.  `buffers`: the result of
    `kernel_buffers(kernel, target, free=free)` when the caller already has it.
    """
    tgt = resolve_target(target)
    bufs = list(buffers) if buffers is not None else kernel_buffers(kernel, tgt, free=free)
    reserve = needs_api_temp(kernel, tgt) if api_temp is None else bool(api_temp)
    res = check(bufs, tgt, timeout_ms=timeout_ms, api_temp=reserve, hints=hints,
                use_cache=use_cache)
    if res.explanations:
        res.explanations = [replace(e, sentence=_POINT.sub(
            lambda m: _top_name(kernel, int(m.group(1))), e.sentence)) for e in res.explanations]
    return res


# --------------------------------------------------------------------------------------
# reports and the gate


def verdict_line(res: CapacityResult) -> str:
    """`sat: fits on T` / `unsat: <sentence>` / `unknown (solver timeout after N ms)`."""
    if res.status == "unknown":
        return f"unknown ({res.reason or 'solver gave up'}): capacity not decided; " \
               f"raise --timeout-ms"
    return f"{res.status}: {res.message}"


def format_kernel_report(kernel: ir.Kernel, res: CapacityResult,
                         buffers: Sequence[Buffer] | None = None, *, pipeline: str = "") -> str:
    """The `ascx check` text: header, per-scope table (buffer, dtype, shape, stages, bytes;
    total; usable; headroom), pad notes, verdict, further explanations."""
    head = f"kernel {kernel.name} on {res.target}" + (f" after `{pipeline}`" if pipeline else "")
    if res.api_temp:
        head += " (UB API temp reserved)"
    lines = [head]
    if not res.per_scope:
        lines.append("no on-chip buffers (the kernel declares no `local`): nothing to fit")
        lines.append(verdict_line(res))
        return "\n".join(lines)
    table = res.format_table().split("\n")
    # format_table ends with "<status>: <message>" then "  also: ..." lines; rebuild those.
    cut = next(i for i, ln in enumerate(table) if ln.startswith(f"{res.status}: "))
    lines += table[:cut]
    lines.append(verdict_line(res))
    lines += table[cut + 1:]
    return "\n".join(lines)


def report_dict(kernel: ir.Kernel, res: CapacityResult, buffers: Sequence[Buffer],
                *, pipeline: str = "") -> dict[str, Any]:
    """JSON form: `CapacityResult.to_dict()` plus kernel, pipeline, buffers, verdict."""
    d = res.to_dict()
    d["kernel"] = kernel.name
    d["pipeline"] = pipeline
    d["verdict"] = verdict_line(res)
    d["buffers"] = [{
        "name": b.name, "scope": b.scope, "dtype": b.dtype, "shape": list(b.shape),
        "stages": b.stages, "position": b.position, "cube_operand": b.cube_operand,
        "copy_lengths": [list(c) if isinstance(c, tuple) else c for c in b.copy_lengths],
        "origin": b.origin, "loc": b.loc, "live": list(b.live) if b.live else None,
        "row_align": b.row_align, "slots": b.slots,
    } for b in buffers]
    if not buffers:
        d["note"] = "no on-chip buffers (the kernel declares no `local`): nothing to fit"
    return d


def capacity_gate(kernel: ir.Kernel, target: Target | str | None = None, *,
                  timeout_ms: int = DEFAULT_TIMEOUT_MS,
                  api_temp: bool | None = None) -> CapacityResult:
    """Refuse an over-capacity kernel: returns the sat `CapacityResult`, else raises
    `CapacityUnsatKernelError` (with the explanation, located at the first named buffer's
    declaration, hints as `hint`) or `CapacityUnknownKernelError` (solver timeout).
    Both are `KernelCapacityError(AscxError)`; the CLI maps them to exit 1."""
    res = check_kernel_capacity(kernel, target, timeout_ms=timeout_ms, api_temp=api_temp)
    if res.status == "sat":
        return range_gate(kernel, target, res, timeout_ms=timeout_ms, api_temp=api_temp)
    if res.status == "unknown":
        raise CapacityUnknownKernelError(
            f"capacity of kernel `{kernel.name}` on {res.target} is unknown "
            f"({res.reason or 'solver gave up'})", res,
            hint="raise the solver budget (--timeout-ms) or run `ascx check`")
    e0 = res.explanations[0] if res.explanations else None
    loc = _buffer_loc(kernel, e0.buffers[0]) if e0 is not None and e0.buffers else None
    msg = f"kernel `{kernel.name}` does not fit {res.target}: {res.message}"
    notes = [(None, f"also: {e.sentence}") for e in res.explanations[1:]]
    return _raise(CapacityUnsatKernelError(
        msg, res, loc, notes=notes,
        hint="`ascx check` prints the per-scope table; pick smaller tiles or fewer stages"))


def _buffer_loc(kernel: ir.Kernel, name: str) -> ir.Loc | None:
    """Where to point at buffer `name`: its declaration when it has a source location,
    else (a local `tile` staged) the first located statement that uses it, or the
    top-level nest that holds that use (the loop written in the source)."""
    t = kernel.tensor(name)
    if t is not None and t.loc is not None:
        return t.loc
    for top in kernel.body:
        for site in sites((top,)):
            if any(u.tensor == name for u in uses(site.stmt)):
                return getattr(site.stmt, "loc", None) or top.loc
    return None


def range_gate(kernel: ir.Kernel, target: Target | str | None, res: CapacityResult, *,
               timeout_ms: int = DEFAULT_TIMEOUT_MS, api_temp: bool | None = None) -> CapacityResult:
    """`res` (the kernel fits at its sizes' values) when it also fits for every value of its
    ranged sizes (`ranges.check_ranges`); else the refusal, located at the range of the size
    that overflows, naming its first overflowing value."""
    from .ranges import check_ranges

    rc = check_ranges(kernel, lambda k: check_kernel_capacity(
        k, target, timeout_ms=timeout_ms, api_temp=api_temp, hints=False))
    if rc is None or rc.status == "sat":
        return res
    decl = next((s for s in kernel.sizes if s.name == rc.size), None)
    loc = (decl.range_loc or decl.loc) if decl is not None else None
    if rc.status == "unknown":
        raise CapacityUnknownKernelError(f"kernel `{kernel.name}`: {rc.sentence(kernel)}", rc.result or res, loc,
                                         hint="narrow the size ranges, or raise the solver budget (--timeout-ms)")
    return _raise(CapacityUnsatKernelError(
        f"kernel `{kernel.name}` does not fit {res.target} for its whole range: {rc.sentence(kernel)}",
        rc.result or res, loc, hint=f"narrow the range of `{rc.size}` to end below {rc.first}, or tile the kernel"))


def _raise(e: Exception) -> CapacityResult:
    raise e
