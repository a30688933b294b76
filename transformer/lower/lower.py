"""Lowering: a (transformed) kernel -> `KernelPlan`.

The pipeline, one step per function:

    phases      = split_phases(kernel)          # one per top-level nest
    core kind   = classify(phase)                # l1/l0 locals -> AIC (cube), else AIV (vec)
    kind, mode  = kernel_kind(phases)            # vector / cube / mix, blockDim from @cores
    buffers     = plan_buffers(phase)            # TPosition, queue or TBuf, depth, layout
    cube        = select_cube(phase)             # LoadData + Mmad + Fixpipe, else None
    body        = PhaseEmitter(...).emit()       # CopyIn / Compute / CopyOut per staged tile;
                                                 # vector instructions per innermost nest,
                                                 # scalar GetValue/SetValue fallback (warned)

Correctness first: every nest has a scalar fallback that computes exactly what the
interpreter computes; instruction selection (`vector.py`, `cube.py`) only replaces a nest
when its pattern is recognised and its preconditions (alignment, dtypes, capacity) hold.

Size: about 1,000 lines in one module on purpose. Its steps run in order over one
phase and share the `PhaseEmitter`'s state (buffers, names, flags, pipeline stages, the
plan being built); the parts with a vocabulary of their own already live beside it
(`vector.py`, `cube.py`, `gemm.py`, `flash.py`, `conv.py`, `spread.py`, `instr.py`,
`temporaries.py`). Splitting the emitter further would thread that state through every
function.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .. import ir
from ..affine import Affine, to_affine
from ..diagnostics import AscxError
from ..dtypes import Ty, promote
from ..intexpr import affine_extent, loop_var_bounds, names_in
from .cexpr import C_GLOBALS, CTYPE, INT32_MAX, ExprEmitter, Names, affine_cpp, const_value, wide_stride, wide_term
from .plan import (Buffer, GmParam, KernelPlan, Line, Method, NestChoice, NoRuntimeLowering, Phase, Scalar, TilingField,
                   WorkspaceSlot)
from . import tbuf_sync, temporaries, ub_place
from .prefetch import chain, form
from .vs_sync import GET_BASE as _GET_BASE, vs_sync
from ..emulator import MIX_AIV_PER_BLOCK
from ..targets import Target

CUBE_SCOPES = frozenset({"l1", "l0a", "l0b", "l0c"})
WS_ALIGN = 512


class LoweringError(AscxError):
    """The kernel cannot be lowered to Ascend C (a construct the code generator lacks)."""


def flash_tensors(kernel: ir.Kernel) -> set[str]:
    """Every tensor of a `@flash`-marked kernel: the mix kernel (flash.py) takes their extents
    and strides from the sizes, so a run-time S may be any of their extents."""
    first = kernel.body[0] if kernel.body else None
    if isinstance(first, ir.For) and first.annotation("flash") is not None:
        return {t.name for t in kernel.tensors()}
    return set()


def _ceil_to(x: int, m: int) -> int:
    return -(-x // m) * m


def _camel(label: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in label.split("_") if p) or "Phase"


# --------------------------------------------------------------------------------------
# facts about the kernel


@dataclass
class TensorInfo:
    """Where a tensor lives in the emitted code and how it is addressed."""

    name: str
    kind: str  # gm | local | scalar
    cname: str  # GlobalTensor / LocalTensor member, or scalar variable
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    scope: str = "gm"

    @property
    def esize(self) -> int:
        return ir.DTYPE_BYTES[self.dtype]


def dense_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    st = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        st[d] = st[d + 1] * shape[d + 1]
    return tuple(st)


def padded_strides(shape: tuple[int, ...], esize: int) -> tuple[int, ...]:
    """Row-major with the innermost dimension padded to 32 B (so every row starts aligned)."""
    if len(shape) < 2:
        return dense_strides(shape)
    st = [1] * len(shape)
    st[-2] = _ceil_to(shape[-1], 32 // esize)
    for d in range(len(shape) - 3, -1, -1):
        st[d] = st[d + 1] * shape[d + 1]
    return tuple(st)


def extent_bytes(shape: tuple[int, ...], strides: tuple[int, ...], esize: int) -> int:
    if not shape:
        return _ceil_to(esize, 32)
    return _ceil_to(shape[0] * strides[0] * esize, 32)


# --------------------------------------------------------------------------------------
# the lowering


@dataclass
class _PhaseSrc:
    index: int
    label: str
    stmts: tuple[ir.Stmt, ...]
    core: str = "vec"
    cores: int = 1
    loc: ir.Loc | None = None
    spread: str = ""  # how the outermost loop is shared among cores, or why not (spread.py)
    inner: tuple[int, ...] | None = None  # the inner loop (path from the loop's body) collapsed with it (spread.py)
    tried: tuple[tuple[str, float | None, str], ...] = ()  # the `phase` (or `kernel`) site's patterns


class Lowering:
    @functools.cached_property
    def var_bounds(self) -> dict[str, tuple[int, int]]:
        """Every loop variable's value range (`intexpr.loop_var_bounds`): an index vector
        is emitted only when its values provably fit i32 (vector.index_vector)."""
        if self.runtime:  # a run-time size may take any value of its range: bound at its top
            return loop_var_bounds(self.kernel.with_sizes({n: self.widest_sizes[n] for n in self.runtime}))
        return loop_var_bounds(self.kernel)

    def __init__(self, kernel: ir.Kernel, target: Target | None = None, *, select: bool = True, source_name: str = "",
                 spread: bool = True, runtime: frozenset[str] = frozenset()) -> None:
        from ..targets import resolve_target

        self.kernel = kernel
        self.target = resolve_target(target)
        self.select = select
        self.bank_place = True  # UB placement against bank conflicts (ub_place.py); off for dry runs
        self.spread = spread  # split the outermost loop over the cores when no `@cores` says (spread.py)
        self.source_name = source_name or f"{kernel.name}.ir"
        self.names = Names(kernel)
        # `runtime`: the ranged sizes read from the tiling struct (runtime.py): they stay
        # symbols in every index, bound and count; width proofs use the range's top (the widest case)
        self.runtime = runtime
        self.sizes = {n: v for n, v in kernel.size_values().items() if n not in runtime}
        self.shape_sizes = kernel.size_values()  # a run-time size's default: the harness's shape without arguments
        self.widest_sizes = {**kernel.size_values(), **{n: r[1] for n, r in kernel.size_ranges().items() if n in runtime}}
        self.tiling: list[TilingField] = []  # the run-time derived values (a runtime split's share)
        self.decls = {t.name: t for t in kernel.tensors()}
        self.warnings: list[str] = []
        self.nests: list[NestChoice] = []
        self.info: dict[str, TensorInfo] = {}
        self.method_names: set[str] = self.names.used  # one registry: methods, members, user names
        self.scope_cap = {s: int(self.target.scopes[s].usable.value) for s in ("ub", "l1", "l0a", "l0b", "l0c")}
        self.demoted: dict[str, str] = {}  # local -> why it lives in the GM workspace
        self.tbufs: dict[str, str] = {}  # staged local -> why it is a TBuf, not a queue (`plan_buffers`)
        self.halves: list[Scalar] = []  # the tile-parity members of ping-pong TBufs (tbuf_sync.py)
        self.phase_range: dict[int, tuple[int, int]] = {}  # phase -> first, last top-level stmt
        self.cross: list[str] = []  # phase -> why a cross-block barrier precedes it ("": none)
        self.gemms: dict[int, Any] = {}  # phase -> (GemmNest, Blocks) of a `@gemm` nest (gemm.py)
        self.convs: dict[int, Any] = {}  # phase -> (ConvNest, ConvBlocks) of a `@conv` nest (conv.py)
        self.flash: Any = None  # the FlashAttn of a `@flash` kernel: one mix phase (flash.py)
        # AIV per block of a MIX launch: the chip's aiv_cores / aic_cores. A coupled chip has no
        # such ratio; there a MIX launch is only the emulator's all-core barrier for multi-phase
        # vector kernels, whose blocks hold the emulator's MIX_AIV_PER_BLOCK vector cores.
        self.mix_vectors = self.target.aiv_per_aic or MIX_AIV_PER_BLOCK

    # ---- helpers ----------------------------------------------------------------------
    def shape_of(self, t: ir.TensorDecl, widest: bool = False) -> tuple[int, ...]:
        """`t`'s shape at the sizes' values (`widest`: a run-time size at its range's top)."""
        from ..affine import eval_int

        return tuple(eval_int(d, self.widest_sizes if widest else self.shape_sizes) for d in t.shape)

    def elems_cpp(self, t: ir.TensorDecl) -> str:
        """A GM tensor's element count as C++ over the run-time sizes ("" when all are fixed)."""
        if not self.runtime or not {n for d in t.shape for n in names_in(d)} & self.runtime:
            return ""
        return " * ".join(f"({self.ex_index(d)})" for d in t.shape)

    def ex_index(self, e: ir.Expr) -> str:
        return ExprEmitter(self.kernel, self.names, lambda *_: "", lambda n: n, sizes=self.sizes).index(e)

    def where(self, node: Any) -> str:
        loc = getattr(node, "loc", None)
        if loc is None and isinstance(node, ir.For):  # loops made by passes have no location
            loc = next((x.loc for x in ir.iter_stmts(node.body) if x.loc is not None), None)
        return f"{self.source_name}:{loc}" if loc else self.source_name

    def warn(self, node: Any, msg: str) -> None:
        self.warnings.append(f"{self.where(node)}: warning: {msg}")

    def wide_tensors(self, stmts: tuple[ir.Stmt, ...]) -> str:
        """Why the statements cannot take a whole-nest cube lowering (`@gemm`, `@conv`,
        `@flash`: their tile offsets are int32_t) because they use a GM tensor of 2^31
        elements or more, or "" when they use none. The generic lowering computes the offsets
        into such a tensor in int64_t (`cexpr.wide_stride`)."""
        big = sorted(t for t in ir.names_used(stmts) if t in self.decls and self.decls[t].kind != "local"
                     and math.prod(self.shape_of(self.decls[t], widest=True)) > INT32_MAX)
        if not big:
            return ""
        return (f"`{big[0]}` has 2^31 elements or more: the nest is lowered by the generic path (64-bit GM "
                "offsets), not as a whole-nest cube kernel, whose tile offsets are 32-bit")

    # ---- phases -----------------------------------------------------------------------
    def split_phases(self) -> list[_PhaseSrc]:
        from .spread import phase_spans

        phases: list[_PhaseSrc] = []
        self.phase_range = {}
        body = self.kernel.body
        for first, last in phase_spans(self.kernel):
            s = body[last]
            self.phase_range[len(phases)] = (first, last)
            if isinstance(s, ir.For):  # a loop, after the copies staged once before it (spread.py)
                label = s.label or f"loop{len(phases)}"
                a = s.annotation("cores")
                n = int(a.get("n", 1) or 1) if a else 1
                phases.append(_PhaseSrc(len(phases), label, body[first:last + 1], cores=max(1, n), loc=s.loc))
            else:
                phases.append(_PhaseSrc(len(phases), f"stmts{len(phases)}", body[first:last + 1], loc=body[first].loc))
        from .patterns.base import Ctx
        from .patterns.select import select

        first = self.kernel.body[0] if self.kernel.body else None
        if isinstance(first, ir.For):  # the whole kernel as one mix phase (pattern flash)
            from .flash import flash_cores

            ksel = select("kernel", Ctx(None, first, 0, low=self))
            wide = self.wide_tensors(self.kernel.body)
            if wide and any(r.text == wide for r in ksel.refusals):
                self.warn(first, wide)
            if ksel.chosen is not None:
                fa = ksel.chosen.data
                self.flash = fa
                self.phase_range = {0: (0, len(self.kernel.body) - 1)}
                return [_PhaseSrc(0, first.label or "attention", tuple(self.kernel.body), "mix",
                                  flash_cores(fa, self.target), first.loc, tried=ksel.tried())]
        from .conv import conv_cores
        from .gemm import gemm_cores

        self.gemms = {}
        self.convs = {}
        for ph in phases:
            if len(ph.stmts) == 1 and isinstance(ph.stmts[0], ir.For):
                # a nest a pass marked for a whole-phase cube kernel (patterns gemm, conv)
                psel = select("phase", Ctx(None, ph.stmts[0], 0, low=self))
                ph.tried = psel.tried()
                wide = self.wide_tensors(ph.stmts)
                if psel.chosen is not None and wide:
                    self.warn(ph.stmts[0], wide)
                elif psel.chosen is not None and psel.chosen.pattern == "gemm":  # gemm.py
                    gp = psel.chosen.data
                    self.gemms[ph.index] = gp
                    ph.core, ph.cores = "cube", gemm_cores(gp[0], gp[1], self.target)
                    continue
                elif psel.chosen is not None:  # conv.py
                    cp = psel.chosen.data
                    self.convs[ph.index] = cp
                    ph.core, ph.cores = "cube", conv_cores(cp[0], cp[1], self.target)
                    continue
            used = ir.names_used(ph.stmts)
            ph.core = "cube" if any(self.decls[t].scope in CUBE_SCOPES for t in used
                                    if t in self.decls and self.decls[t].kind == "local") else "vec"
        if self.spread:
            from .spread import decide

            for ph in phases:
                if ph.index in self.gemms:  # gemm.py shares its C tiles among the AIC itself
                    ph.spread = f"C tiles of the `@gemm` nest round-robin over {ph.cores} AIC (gemm.py)"
                    continue
                if ph.index in self.convs:
                    ph.spread = f"C tiles of the `@conv` nest round-robin over {ph.cores} AIC (conv.py)"
                    continue
                sp = decide(self.kernel, ph.stmts[-1], self.phase_range[ph.index][1], ph.core, self.target)
                ph.cores, ph.spread, ph.inner = sp.cores, sp.note, sp.inner
        self.cross = self.phase_barriers(phases)
        return phases

    def phase_barriers(self, phases: list[_PhaseSrc]) -> list[str]:
        """Why a cross-block barrier precedes each phase ("" for none), noted in the plan: only
        between phases that hand data to each other through GM (`spread.phase_barriers`); a
        phase of another core kind (cube <-> vector) always waits for the one before it."""
        from .spread import phase_barriers

        why = phase_barriers(self.kernel, [p.stmts for p in phases], [p.cores for p in phases])
        for i, ph in enumerate(phases):
            if i and not why[i] and ph.core != phases[i - 1].core:
                why[i] = f"it runs on {ph.core} cores after a {phases[i - 1].core} phase"
        if self.flash is None:  # a barrier waits for every block: the launch must be one wave
            from .spread import kind_cores, one_wave

            caps = one_wave([p.cores for p in phases], [p.core for p in phases], any(why),
                            kind_cores(self.target, "vec")[0], kind_cores(self.target, "cube")[0])
            for ph, n in zip(phases, caps):
                if n < ph.cores:
                    ph.spread += (f"; {ph.cores} workers capped at {n}, the cores that run at once: a cross-block "
                                  "barrier cannot wait for blocks of a later wave")
                    ph.cores = n
            if why[i] and max(p.cores for p in phases) > 1:
                ph.spread += f"; a cross-block barrier before it: {why[i]}"
        return why

    # ---- main -------------------------------------------------------------------------
    def demote_locals(self, phases: list[_PhaseSrc]) -> bool:
        """Locals that cannot stay on chip become GM workspace temps (warned): a local used by
        several phases (each phase plans its own buffers and `pipe.Reset()`s them, and the
        phases may run on different cores or workers), and a `ub` local used in a cube phase
        (the AIC has no UB on the split architecture). Returns whether any was demoted."""
        use: dict[str, list[_PhaseSrc]] = {}
        for ph in phases:
            for t in ir.names_used(ph.stmts):
                use.setdefault(t, []).append(ph)
        demote: dict[str, str] = {}
        for t in self.kernel.buffers:
            if t.kind != "local":
                continue
            phs = use.get(t.name, [])
            if len(phs) > 1:
                demote[t.name] = "used by phases " + ", ".join(f"`{p.label}`" for p in phs)
            elif (t.scope or "ub") == "ub" and any(p.core == "cube" for p in phs):
                demote[t.name] = f"used in the cube phase `{phs[0].label}` (the AIC has no UB)"
        if not demote:
            return False
        self.demoted.update(demote)
        import dataclasses

        bufs = []
        for t in self.kernel.buffers:
            if t.name in demote:
                self.warn(t, f"local `{t.name}` is {demote[t.name]}: it lives in the GM workspace, "
                             "not on chip (slow, never wrong)")
                t = dataclasses.replace(t, kind="temp", scope=None)
            bufs.append(t)
        self.kernel = dataclasses.replace(self.kernel, buffers=tuple(bufs))
        self.decls = {t.name: t for t in self.kernel.tensors()}
        return True

    def check_runtime(self) -> None:
        """The run-time path's precondition: a run-time size is only ever the outermost
        extent of a GM tensor (strides, and on-chip shapes, stay constants), except in
        tensors only a `@gemm` nest uses: its cube kernel takes every extent and stride
        from the sizes (gemm.py, `runtime_extents`)."""
        from .gemm_runtime import gemm_only_tensors

        exempt = gemm_only_tensors(self.kernel) | flash_tensors(self.kernel)
        for t in self.kernel.tensors():
            if t.name in exempt:
                continue
            for i, d in enumerate(t.shape):
                inner = {n for n in names_in(d)} & self.runtime
                if inner and (i > 0 or t.kind == "local"):
                    raise NoRuntimeLowering(f"the run-time size `{sorted(inner)[0]}` is not the outermost extent of the "
                                            f"GM tensor `{t.name}` (strides would depend on it)" if t.kind != "local" else
                                            f"the local `{t.name}` has a run-time extent `{sorted(inner)[0]}`")

    def run(self) -> KernelPlan:
        if self.runtime:
            self.check_runtime()
        phases = self.split_phases()
        if self.demote_locals(phases):
            phases = self.split_phases()
        if self.runtime:  # the tensors check_runtime let through are the gemm kernel's own
            from .gemm_runtime import gemm_only_tensors

            others = {t for ph in phases if ph.index not in self.gemms for t in ir.names_used(ph.stmts)}
            if others & gemm_only_tensors(self.kernel):
                raise NoRuntimeLowering("a `@gemm` nest is not emitted as the cube kernel (its tensors' strides "
                                        "would depend on run-time sizes)")
            if flash_tensors(self.kernel) and self.flash is None:
                raise NoRuntimeLowering("a `@flash` kernel is not emitted as the mix kernel")
        k = self.kernel
        cores_of = {"vec": [p for p in phases if p.core == "vec"], "cube": [p for p in phases if p.core == "cube"]}
        has_cube = bool(cores_of["cube"])
        kind = ("mix" if cores_of["vec"] else "cube") if has_cube else "vector"
        if self.flash is not None:
            kind, block_dim = "mix", phases[0].cores
            mode = "MIX_MODE"
        else:
            # phases that hand data through GM need an all-core barrier between them; the
            # emulator runs AIV_MODE blocks one after another, so the barrier runs as a mix launch
            from .spread import launch_shape

            mode, block_dim = launch_shape([p.cores for p in phases], [p.core for p in phases], any(self.cross),
                                           self.mix_vectors)
        self.kind, self.mode, self.block_dim = kind, mode, block_dim

        # GM parameters, workspace, scalars
        params: list[GmParam] = []
        for t in k.inputs:
            shp = self.shape_of(t)
            params.append(GmParam(t.name, self.names(t.name), t.dtype, CTYPE[t.dtype], shp, "input", math.prod(shp)))
        for t in k.outputs:
            shp = self.shape_of(t)
            params.append(GmParam(t.name, self.names(t.name), t.dtype, CTYPE[t.dtype], shp, "output", math.prod(shp)))
        for t, p in zip((*k.inputs, *k.outputs), params):
            p.elems_cpp = self.elems_cpp(t)
        for p in params:
            p.bytes_name = self.names.derived(p.name, "{}Bytes")
            p.gm_name = self.names.derived(p.name, "{}Gm")
            p.host_name = self.names.derived(p.name, "{}Host")
            p.device_name = self.names.derived(p.name, "{}Device")
            self.info[p.name] = TensorInfo(p.name, "gm", p.gm_name, p.dtype, p.shape,
                                           dense_strides(p.shape))
        phase_use: dict[str, set[int]] = {}
        for ph in phases:
            for t in ir.names_used(ph.stmts):
                phase_use.setdefault(t, set()).add(ph.index)
        scalars: list[Scalar] = []
        slots: list[WorkspaceSlot] = []
        off = 0
        # the accumulator of a `@gemm` phase that no other phase reads lives in L0C only
        gemm_private = {g.acc for i, (g, _) in [*self.gemms.items(), *self.convs.items()]
                        if phase_use.get(g.acc, set()) == {i}}
        for t in k.buffers:
            if t.kind != "temp" or t.name in gemm_private or self.flash is not None:
                continue
            shp = self.shape_of(t)
            if not shp and len(phase_use.get(t.name, ())) <= 1:
                sc = Scalar(t.name, self.names(t.name), CTYPE[t.dtype])
                scalars.append(sc)
                self.info[t.name] = TensorInfo(t.name, "scalar", sc.cname, t.dtype, (), ())
                continue
            n = max(1, math.prod(shp))
            # a temp of one phase split over workers (`@cores`, parallel iterations) is private
            # to each worker: one copy each, so workers do not race on a shared row buffer
            users = phase_use.get(t.name, set())
            copies = phases[next(iter(users))].cores if len(users) == 1 else 1
            nbytes = _ceil_to(n * ir.DTYPE_BYTES[t.dtype], WS_ALIGN)
            slots.append(WorkspaceSlot(t.name, self.names.derived(t.name, "{}Gm"), t.dtype, CTYPE[t.dtype], shp, n, off,
                                       copies, nbytes if copies > 1 else 0))
            self.info[t.name] = TensorInfo(t.name, "gm", self.names.derived(t.name, "{}Gm"), t.dtype, shp, dense_strides(shp))
            off += nbytes * copies
        if self.flash is not None:  # the mix kernel's own slots: S, P, O per AIC block (flash.py)
            from .flash import workspace_slots
            from .flash_keys import keyed_workspace

            size = self.flash.names["S"]
            lo, hi = self.kernel.size_ranges()[size][:2] if size in self.runtime else (0, 0)
            for role, dt, n in (keyed_workspace(self.flash, self.target, lo, hi) if size in self.runtime
                                else workspace_slots(self.flash, self.target)):
                key = f"\0flash_{role}"
                nbytes = _ceil_to(n * ir.DTYPE_BYTES[dt], WS_ALIGN)
                slots.append(WorkspaceSlot(key, self.names.fresh(f"fa{role}Ws"), dt, CTYPE[dt], (n,), n, off))
                self.info[key] = TensorInfo(key, "gm", slots[-1].cname, dt, (n,), (1,))
                off += nbytes
        for i, (cv, cb) in self.convs.items():  # a conv phase's own slots (conv.py: shifted path)
            from .conv import conv_workspace

            for role, dt, n in conv_workspace(cv, cb, self.target):
                key = f"\0conv{i}_{role}"
                nbytes = _ceil_to(n * ir.DTYPE_BYTES[dt], WS_ALIGN)
                slots.append(WorkspaceSlot(key, self.names.fresh(f"conv{role.capitalize()}Ws"), dt, CTYPE[dt], (n,), n, off))
                self.info[key] = TensorInfo(key, "gm", slots[-1].cname, dt, (n,), (1,))
                off += nbytes
        ws_bytes = off
        if slots:
            params.append(GmParam("", "workspace", "u8", "uint8_t", (ws_bytes,), "workspace", ws_bytes,
                                  self.names.fresh("workspaceBytes"), host_name=self.names.fresh("workspaceHost"),
                                  device_name=self.names.fresh("workspaceDevice")))

        # locals -> phases
        local_phase: dict[str, set[int]] = {t.name: phase_use.get(t.name, set()) for t in k.buffers if t.kind == "local"}
        self.shared_locals = {n for n, ps in local_phase.items() if len(ps) > 1}

        out_phases: list[Phase] = []
        for ph in phases:
            out_phases.append(self.lower_phase(ph))

        # the entry is a global function: it must also miss the C library's global names
        entry = k.name
        if entry in self.names.used or entry in C_GLOBALS:
            entry = self.names.fresh(entry + "_kernel")
        self.names.used.add(entry)
        plan = KernelPlan(
            name=k.name,
            entry=entry,
            class_name=self.names.fresh("Kernel" + _camel(k.name)),
            target=self.target.name,
            kind=kind, mode=mode, block_dim=block_dim,
            params=params, workspace=slots, workspace_bytes=ws_bytes,
            sizes=[(self.names(s.name), s.value) for s in k.sizes if s.name not in self.runtime],
            consts=[(self.names(c.name), CTYPE[c.dtype], const_value(c)) for c in k.consts],
            scalars=scalars + self.halves, phases=out_phases, nests=self.nests, warnings=self.warnings,
            scope_bytes={s.upper(): self.scope_cap[s] for s in self.scope_cap},
        )
        plan.process = self.process_lines(out_phases)
        if self.runtime:
            if self.flash is None and (len(out_phases) > 1 or self.kind not in ("vector", "cube") or slots or (
                    self.kind == "cube" and not self.gemms)):
                raise NoRuntimeLowering("only one-phase vector kernels without a GM workspace, one-phase "
                                        "`@gemm` kernels and `@flash` kernels read their sizes at run time yet")
            plan.tiling_names = (self.names.fresh("TilingData"), self.names.fresh("tiling"),
                                 self.names.fresh("ComputeTiling"))
            plan.runtime_sizes = [(self.names(n), *k.size_ranges()[n][:2], self.kernel.size_values()[n])
                                  for n in sorted(self.runtime)]
            plan.runtime_names = {n: self.names(n) for n in sorted(self.runtime)}
            plan.tiling = list(self.tiling)
            cores = [f.name for f in self.tiling if f.name.endswith("Cores")]
            plan.block_dim_cpp = cores[0] if cores else str(block_dim)
        return plan

    # ---- Process(): phases in order, barriers between them ------------------------------
    def process_lines(self, phases: list[Phase]) -> list[Line]:
        out: list[Line] = []
        mix = self.mode == "MIX_MODE"
        for i, ph in enumerate(phases):
            guard = ("ASCEND_IS_AIC" if ph.core == "cube" else "ASCEND_IS_AIV") if mix and ph.core != "mix" else None
            call = f"{_phase_method(ph)}();"
            if len(phases) == 1 and not mix:
                out.extend(ph.body)
                continue
            out.append(Line(f"// phase {i}: `{ph.label}` on {dict(cube='AIC', mix='AIC + AIV').get(ph.core, 'AIV')}"))
            out.append(Line(f"if {guard} {{ {call} }}" if guard else call))
            if i + 1 < len(phases):
                out.extend(self.barrier(ph.core, phases[i + 1].core, i + 1 >= len(self.cross) or bool(self.cross[i + 1])))
        return out

    def barrier(self, a: str, b: str, cross: bool = True) -> list[Line]:
        """Make every write of phase kind `a` visible to every core before phase kind `b`
        (`cross`: the two phases hand data through GM, `phase_barriers`); without `cross`
        only this core's pipes are drained."""
        if self.mode != "MIX_MODE":
            return [Line("PipeBarrier<PIPE_ALL>();")]
        if not cross and a == b == "vec":
            return [Line("if ASCEND_IS_AIV { PipeBarrier<PIPE_ALL>(); }")]
        lines: list[Line] = []
        if a == "cube":
            if self.block_dim > 1:
                lines.append(Line("if ASCEND_IS_AIC { CrossCoreSetFlag<0x0, PIPE_FIX>(SYNC_AIC); CrossCoreWaitFlag(SYNC_AIC); }"))
            if b == "vec":
                lines.append(Line("if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }"))
                lines.append(Line("if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }"))
        else:
            lines.append(Line("if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }"))
            if b == "cube":
                lines.append(Line("if ASCEND_IS_AIV { CrossCoreSetFlag<0x2, PIPE_MTE3>(SYNC_V2C); }"))
                lines.append(Line("if ASCEND_IS_AIC { CrossCoreWaitFlag(SYNC_V2C); }"))
        return lines

    # ---- one phase --------------------------------------------------------------------
    def lower_phase(self, src: _PhaseSrc) -> Phase:
        ph = Phase(src.index, src.label, src.core, src.cores, spread=src.spread)
        ph.tried = src.tried
        # labels that differ only in underscores (`G`, `_G`) must not share method names
        ph.camel = cand = _camel(src.label)
        while "Process" + ph.camel in self.method_names:
            ph.camel = f"{cand}{src.index}" if ph.camel == cand else ph.camel + "_"
        self.method_names.add("Process" + ph.camel)
        ph.tmp_name = self.names.fresh(f"tmp{src.index}")
        ph.tmp_buf_name = self.names.fresh(f"tmpBuf{src.index}")
        if self.flash is not None:
            from .flash import lower_flash_phase
            from .flash_keys import runtime_s

            lower_flash_phase(self, src, ph, self.flash, _phase_method(ph), runtime_s(self, self.flash))
            return ph
        if src.index in self.gemms:
            from .gemm import lower_gemm_phase

            lower_gemm_phase(self, src, ph, *self.gemms[src.index], _phase_method(ph))
            return ph
        if src.index in self.convs:
            from .conv import lower_conv_phase

            lower_conv_phase(self, src, ph, *self.convs[src.index], _phase_method(ph))
            return ph
        buffers = self.plan_buffers(src)
        cube = None
        if self.select and src.core == "cube":
            from .cube import select_cube

            cube = select_cube(self, src, buffers)
        ph.buffers = list(buffers.values())
        for b in ph.buffers:
            self.info[b.name] = TensorInfo(b.name, "local", b.tensor, b.dtype, b.shape, b.strides, b.scope)
        em = PhaseEmitter(self, src, ph, buffers, cube)
        em.emit()
        return ph

    def plan_buffers(self, src: _PhaseSrc) -> dict[str, Buffer]:
        used = ir.names_used(src.stmts)
        locals_ = [t for t in self.kernel.buffers if t.kind == "local" and t.name in used]
        roles: dict[str, set[str]] = {t.name: set() for t in locals_}
        feeds: dict[str, set[str]] = {t.name: set() for t in locals_}
        depth: dict[str, int] = {t.name: 1 for t in locals_}

        def walk(stmts: tuple[ir.Stmt, ...], stages: int) -> None:
            for s in stmts:
                if isinstance(s, ir.Copy):
                    d, sname = s.dst.tensor, s.src.tensor
                    if d in roles:
                        roles[d].add("in")
                        depth[d] = max(depth[d], stages)
                    if sname in roles and self.decls[d].kind != "local":
                        roles[sname].add("out")
                        depth[sname] = max(depth[sname], stages)
                    if sname in feeds and d in roles:
                        feeds[sname].add(self.decls[d].scope or "")
                elif isinstance(s, ir.For):
                    a = s.annotation("pipeline")
                    walk(s.body, int(a.get("stages", 2) or 2) if a else 1)

        walk(src.stmts, 1)
        # a local filled only by the phase's prologue (an input staged once before the loop,
        # `spread.is_prologue_copy`) is a TBuf: written once, read by every tile
        once = {s.dst.tensor for s in src.stmts if isinstance(s, ir.Copy)}
        once -= {c.dst.tensor for c in ir.iter_stmts(tuple(x for x in src.stmts if isinstance(x, ir.For)))
                 if isinstance(c, ir.Copy)}
        out: dict[str, Buffer] = {}
        for t in locals_:
            r = roles[t.name]
            shp = self.shape_of(t)
            es = ir.DTYPE_BYTES[t.dtype]
            scope = t.scope or "ub"
            if scope == "ub":
                pos = "VECIN" if "in" in r else "VECOUT" if "out" in r else "VECCALC"
            elif scope == "l1":
                pos = "B1" if "l0b" in feeds[t.name] else "A1"
            else:
                pos = {"l0a": "A2", "l0b": "B2", "l0c": "CO1"}[scope]
            kind = "que" if r else "buf"
            if t.name in self.shared_locals or t.name in once:
                kind = "buf"
            st = padded_strides(shp, es)
            holder = self.names.derived(t.name, ("inQueue" if pos == "VECIN" else "outQueue" if pos == "VECOUT" else "que")
                                        + "_{}") if kind == "que" else self.names.derived(t.name, "buf_{}")
            out[t.name] = Buffer(t.name, self.names.derived(t.name, "{}Local"), holder, t.dtype, CTYPE[t.dtype], scope, pos,
                                 depth[t.name] if kind == "que" else 1, shp, st, "ND",
                                 extent_bytes(shp, st, es), kind, tuple(sorted(r)))
        # capacity: padded rows must still fit, else keep those scopes dense
        for scope in {b.scope for b in out.values()}:
            total = sum(_ceil_to(b.nbytes, 32) * b.depth for b in out.values() if b.scope == scope)
            if total > self.scope_cap[scope]:
                for b in out.values():
                    if b.scope == scope:
                        b.strides = dense_strides(b.shape)
                        b.nbytes = extent_bytes(b.shape, b.strides, ir.DTYPE_BYTES[b.dtype])
        # at most 8 queue buffers per position: demote the rest to TBufs (explicit flags)
        limit = int(self.target.value("max_queue_buffers_per_position")) if hasattr(self.target, "value") else 8
        count: dict[str, int] = {}
        for b in out.values():
            if b.kind != "que":
                continue
            if count.get(b.position, 0) + b.depth > limit:
                # double-buffered: two halves in ping-pong where the lowering can (tbuf_sync.py)
                halves = b.depth >= 2 and b.scope == "ub" and src.core == "vec" \
                    and tbuf_sync.ping_pong_loop(src.stmts, b.name, self.decls, split_stages)
                b.kind, b.depth, b.holder = "buf", 2 if halves else 1, self.names.derived(b.name, "buf_{}")
                self.tbufs[b.name] = f"more than {limit} queue buffers on {b.position}" + (
                    ", two halves in ping-pong" if halves else "")
                self.warn(src.stmts[0], f"more than {limit} queue buffers on {b.position}: `{b.name}` uses a TBuf with explicit flags"
                          + (" (two halves in ping-pong)" if halves else ""))
            else:
                count[b.position] = count.get(b.position, 0) + b.depth
        return out


def _phase_method(ph: Phase) -> str:
    return f"Process{ph.camel or _camel(ph.label)}"


# --------------------------------------------------------------------------------------
# emitting one phase


@dataclass
class _Staged:
    copy_in: list[ir.Copy]
    compute: tuple[ir.Stmt, ...]
    copy_out: list[ir.Copy]


def split_stages(stmts: tuple[ir.Stmt, ...], decls: dict[str, ir.TensorDecl]) -> _Staged | None:
    if not any(isinstance(s, ir.Copy) for s in stmts):
        return None
    i = 0
    cin: list[ir.Copy] = []
    while i < len(stmts) and isinstance(stmts[i], ir.Copy) and decls[stmts[i].dst.tensor].kind == "local":  # type: ignore[union-attr]
        cin.append(stmts[i])  # type: ignore[arg-type]
        i += 1
    j = len(stmts)
    cout: list[ir.Copy] = []
    while j > i and isinstance(stmts[j - 1], ir.Copy) and decls[stmts[j - 1].dst.tensor].kind != "local":  # type: ignore[union-attr]
        j -= 1
        cout.insert(0, stmts[j])  # type: ignore[arg-type]
    return _Staged(cin, stmts[i:j], cout)


_IDENT = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z_0-9]*")  # not the `f` of `1.0f`, not a member after `.`


class PhaseEmitter:
    """Writes the C++ of one phase: Process body, staged-tile methods, buffer setup."""

    def __init__(self, low: Lowering, src: _PhaseSrc, ph: Phase, buffers: dict[str, Buffer], cube: Any) -> None:
        self.low = low
        self.src = src
        self.ph = ph
        self.buffers = buffers
        self.cube = cube
        self.state: dict[str, str] = {n: "none" for n, b in buffers.items() if b.kind == "que"}
        self.ping_pongs: list[tbuf_sync.PingPong] = []  # staged blocks with ping-pong TBufs
        self.method_names = low.method_names  # kernel-wide: methods of all phases share the class
        self.ex = ExprEmitter(low.kernel, low.names, self.load, self.scalar_ref, sizes=low.sizes)
        self.tmp_counter = 0
        self.no_vector_reason = ""
        self.no_vector_need: Any = None  # the vector selection that did not fit in UB (temporaries.py)
        self.selection: Any = None  # the last `nest` site selection (patterns/select.py), for the scalar record
        # (window-shaped loop, the `window` pattern's refusal there): the scalar nests inside it
        # list that refusal instead of their own "not a window" (patterns/window.py)
        self.window_refusal: tuple[ir.For, list[Any]] | None = None
        self.row_ctx: Any = None  # the row loop's shared vector values (vector.RowCtx), while in its body
        self.clip: dict[int, tuple[str, str]] = {}  # id(loop) -> C++ (lo, hi) of a collapsed inner loop
        self.prefetch_forms: dict[int, Any] = {}  # id(tile loop) -> prefetch.Form (prefetch.chain)

    # ---- naming -----------------------------------------------------------------------
    def method_name(self, base: str) -> str:
        multi = len(self.low.phase_range) > 1 or self.low.mode == "MIX_MODE"
        name = base + (self.ph.camel if multi else "")
        k, cand = 1, name
        while cand in self.method_names:
            k += 1
            cand = f"{name}{k}"
        self.method_names.add(cand)
        return cand

    # ---- memory access ----------------------------------------------------------------
    def offset(self, tensor: str, indices: tuple[ir.Expr, ...]) -> str:
        """The element offset of `tensor[indices]` as C++ (64-bit terms where a GM tensor of
        2^31 elements or more needs them: `cexpr.wide_stride`)."""
        info = self.low.info[tensor]
        wide = wide_stride(info.shape, info.strides) if info.kind == "gm" else None
        total = Affine((), 0)
        parts: list[str] = []
        for e, st in zip(indices, info.strides):
            a = to_affine(e, self.low.sizes)
            if a is None:
                parts.append(wide_term(f"({self.ex.index(e)})", st, wide))
            else:
                total = total + a.scale(st)
        s = affine_cpp(total, self.low.names, wide)
        return " + ".join([s] + parts) if parts else s

    def load(self, tensor: str, indices: tuple[ir.Expr, ...]) -> str:
        info = self.low.info[tensor]
        return f"{info.cname}.GetValue({self.offset(tensor, indices)})"

    def scalar_ref(self, name: str) -> str:
        info = self.low.info[name]
        if info.kind == "scalar":
            return info.cname
        return f"{info.cname}.GetValue(0)"

    # ---- queue protocol -----------------------------------------------------------------
    def ensure_ready(self, name: str, out: list[Line], depth: int) -> None:
        b = self.buffers.get(name)
        if b is None or b.kind != "que":
            return
        st = self.state[name]
        if st == "queued":
            out.append(Line(f"{b.tensor} = {b.holder}.DeQue<{b.ctype}>();", depth))
            self.state[name] = "ready"
        elif st == "none":
            out.append(Line(f"{b.tensor} = {b.holder}.AllocTensor<{b.ctype}>();", depth))
            self.state[name] = "ready"

    def ensure_alloc(self, name: str, out: list[Line], depth: int) -> bool:
        b = self.buffers.get(name)
        if b is None or b.kind != "que":
            return False
        if self.state[name] == "none":
            out.append(Line(f"{b.tensor} = {b.holder}.AllocTensor<{b.ctype}>();", depth))
            self.state[name] = "filling"
            return True
        if self.state[name] == "queued":
            self.ensure_ready(name, out, depth)
        return False

    # ---- top ----------------------------------------------------------------------------
    def emit(self) -> None:
        low, ph = self.low, self.ph
        # buffers: InitBuffer + TBuf Get
        init: list[Line] = []
        for b in ph.buffers:
            if b.kind == "que":
                init.append(Line(f"pipe.InitBuffer({b.holder}, {'BUFFER_NUM' if b.depth == 2 else b.depth}, {b.nbytes});"))
            elif b.depth == 2:  # a ping-pong TBuf: two 32 B-aligned halves (tbuf_sync.py)
                init.append(Line(f"pipe.InitBuffer({b.holder}, {2 * tbuf_sync.half_bytes(b)});"))
            else:
                init.append(Line(f"pipe.InitBuffer({b.holder}, {b.nbytes});"))
        body: list[Line] = []
        gets = [Line(f"{b.tensor} = {b.holder}.Get<{b.ctype}>();") for b in ph.buffers if b.kind == "buf"]
        tmp_lines: list[Line] = []
        main: list[Line] = []
        for s in self.src.stmts:
            main.extend(self.stmt(s, 0, [], top=True))
        if self.serial_on_worker0():
            # a phase not split over workers runs on worker 0 alone: the other workers must
            # not repeat its read-modify-writes of shared GM (a race, not just wasted work)
            main = [Line("if (workerIdx == 0) {")] + [Line(x.text, x.depth + 1, x.origin) for x in main] + [Line("}")]
        if ph.tmp_bytes:
            init.append(Line(f"pipe.InitBuffer({ph.tmp_buf_name}, {ph.tmp_bytes});"))
            tmp_lines.append(Line(f"{ph.tmp_name} = {ph.tmp_buf_name}.Get<uint8_t>();"))
        init = self.place_ub(init)
        # ping-pong TBufs: every half's flags set once first and waited once last (balanced)
        main = [x for pp in self.ping_pongs for x in pp.preset()] + main + \
            [x for pp in self.ping_pongs for x in pp.drain()]
        single = len(low.phase_range) == 1 and low.mode != "MIX_MODE"
        if single:
            ph.init = init
            body = gets + tmp_lines + main
            ph.body = body
        else:
            body = init + gets + tmp_lines + main
            if ph.buffers or ph.tmp_bytes:
                # the next phase reuses this phase's local memory: drain every pipe first
                body.append(Line("PipeBarrier<PIPE_ALL>();"))
                body.append(Line("pipe.Reset();"))
            ph.methods.append(Method(_phase_method(ph), (), body, "phase"))
            ph.body = [Line(f"{_phase_method(ph)}();")]

    def place_ub(self, init: list[Line]) -> list[Line]:
        """`init` with a pad TBuf before each UB buffer the bank placement moves (ub_place.py):
        the phase's UB buffers in allocation order, the phase's selected vector instructions,
        and the UB left free (minus the API temp reserve when an instruction takes it)."""
        low, ph = self.low, self.ph
        if not low.bank_place:
            return init
        ub = [b for b in ph.buffers if b.scope == "ub"]
        slabs = [ub_place.Init(b.holder, 2 if b.kind == "buf" and b.depth == 2 else b.depth,
                               -(-b.nbytes // 32) * 32, (b.tensor,)) for b in ub]
        if ph.tmp_bytes:
            slabs.append(ub_place.Init(ph.tmp_buf_name, 1, -(-ph.tmp_bytes // 32) * 32, (ph.tmp_name,)))
        nests = [n for n in low.nests if n.phase == ph.index and n.plan]
        used = sum(s.nbytes * s.slots for s in slabs)
        free = temporaries.ub_limit(self, [i for n in nests for i in n.instructions]) - used
        buffers_left = low.target.max_buffers_per_kernel - len(ph.buffers) - (1 if ph.tmp_bytes else 0)
        pads = ub_place.phase_pads(ub_place.Banks.of(low.target), slabs, [n.plan for n in nests], free)
        if sum(1 for p in pads if p) > buffers_left:
            return init
        at, out, k = 0, [], 0
        holders = {s.holder: (s, pad) for s, pad in zip(slabs, pads)}
        for line in init:
            holder = line.text.partition("(")[2].partition(",")[0]
            if holder in holders:
                s, pad = holders[holder]
                if pad:
                    name = f"ubPad{ph.index}_{k}"
                    k += 1
                    ph.pads.append(name)
                    out.append(Line(ub_place.pad_line(name, pad, holder, at + pad), line.depth, line.origin))
                at += pad + s.nbytes * s.slots
            out.append(line)
        return out

    # ---- statements -----------------------------------------------------------------------
    def stmt(self, s: ir.Stmt, depth: int, loop_vars: list[str], top: bool = False) -> list[Line]:
        if isinstance(s, ir.For):
            return self.for_(s, depth, loop_vars, top)
        if isinstance(s, ir.Assign):
            return self.assign(s, depth)
        return self.copy_inline(s, depth)

    def block(self, stmts: tuple[ir.Stmt, ...], depth: int, loop_vars: list[str]) -> list[Line]:
        st = split_stages(stmts, self.low.decls)
        if st is None:
            parts: list[list[Line]] = []
            ctx = self.row_ctx
            for s in stmts:
                parts.append(self.stmt(s, depth, loop_vars))
                if ctx is not None:
                    ctx.after(s)
            chain(self, stmts, parts)
            return [l for p in parts for l in p]
        return self.staged(st, depth, loop_vars)

    def for_(self, s: ir.For, depth: int, loop_vars: list[str], top: bool) -> list[Line]:
        v = self.low.names(s.var)
        lo, hi = self.ex.index(s.lo), self.ex.index(s.hi)
        out: list[Line] = []
        split_here = top and self.ph.cores > 1 or id(s) in self.clip
        vector = not split_here and (not any(isinstance(x, (ir.For, ir.Copy)) for x in s.body) or _perfect2(s)
                                     or _distributable(s) or window_shape(s))
        self.selection = None
        if vector:
            self.no_vector_reason = "instruction selection disabled" if not self.low.select else ""
            self.no_vector_need = None
        if self.cube is not None or (vector and self.low.select):
            got = self.select_nest(s, depth, loop_vars, vector)
            if got is not None:
                return got
            if self.selection is not None and window_shape(s):  # its refusal, for the scalar nests inside
                self.window_refusal = (s, [t for t in self.selection.tried() if t[0] == "window"])
        if top:
            workers = self.ph.cores
            total_workers = self.workers_available()
            if workers > 1:
                a, b = to_affine(s.lo, self.low.sizes), to_affine(s.hi, self.low.sizes)
                if a is not None and b is not None and a.is_const() and b.is_const() and self.src.inner is not None:
                    return self.collapsed(s, a.const, b.const - a.const, workers, depth, loop_vars)
                if a is not None and b is not None and a.is_const() and b.is_const():
                    from .spread import worker_bounds

                    q, r, how = worker_bounds(a.const, b.const - a.const, workers)
                    out.append(Line(f"// {workers} workers (GetBlockIdx): {how}", depth))
                    out.append(Line(f"if (workerIdx < {workers}) {{", depth))
                    begin, end = self.low.names.fresh(f"{v}Begin"), self.low.names.fresh(f"{v}End")
                    if r == 0:
                        out.append(Line(f"int32_t {begin} = {a.const} + workerIdx * {q};", depth + 1))
                        out.append(Line(f"int32_t {end} = {begin} + {q};", depth + 1))
                    else:
                        out.append(Line(f"int32_t {begin} = {a.const} + workerIdx * {q} + ascx_min<int32_t>(workerIdx, {r});", depth + 1))
                        out.append(Line(f"int32_t {end} = {begin} + {q} + (workerIdx < {r} ? 1 : 0);", depth + 1))
                    inner = self.block(s.body, depth + 2, loop_vars + [v])
                    out.extend(self.loop_lines(s, v, begin, end, inner, depth + 1))
                    out.append(Line("}", depth))
                    return out
                if self.low.runtime:
                    if self.src.inner is not None:
                        raise NoRuntimeLowering(f"`{s.label or v}` collapses with an inner loop (not at run time yet)")
                    return self.runtime_split(s, v, workers, depth, loop_vars)
                self.low.warn(s, f"@cores({workers}) on a loop without constant bounds: runs on one core")
                if total_workers > 1:
                    out.append(Line("if (workerIdx == 0) {", depth))
                    out.append(Line(f"for (int32_t {v} = {lo}; {v} < {hi}; ++{v}) {{", depth + 1))
                    out.extend(self.block(s.body, depth + 2, loop_vars + [v]))
                    out.append(Line("}", depth + 1))
                    out.append(Line("}", depth))
                    return out
        innermost = not any(isinstance(x, ir.For) for x in s.body)
        if innermost and not any(isinstance(x, ir.Copy) for x in s.body):
            self.record_scalar(s, self.no_vector_reason)
            # every line of a scalar fallback names its nest (`ascx emit --explain` prices it)
            where = self.low.nests[-1].where
            touches_ub, writes_ub = self.ub_locals_touched(s)
            if touches_ub:
                # the scalar unit reads (or overwrites) UB that vector instructions before it
                # wrote (or read): order S after V; the hazard detector's RAW/WAR otherwise
                out += [Line("SetFlag<HardEvent::V_S>(0);", depth, where), Line("WaitFlag<HardEvent::V_S>(0);", depth, where)]
            out.extend(Line(l.text, l.depth, where) for l in self.row_loop(s, depth, loop_vars))
            if writes_ub:
                # ... and vector instructions after it read what the scalar unit wrote
                out += [Line("SetFlag<HardEvent::S_V>(0);", depth, where), Line("WaitFlag<HardEvent::S_V>(0);", depth, where)]
            return out
        out.extend(self.row_loop(s, depth, loop_vars))
        return out

    def collapsed(self, s: ir.For, lo: int, trip: int, workers: int, depth: int, loop_vars: list[str]) -> list[Line]:
        """The loop `s` and its inner loop (`spread.collapsible`) shared among `workers` as one
        flat index k over trip x trip2 (k = (outer - lo) * trip2 + (inner - lo2)): worker w
        takes a contiguous range [begin, end) of k, visiting the outer iterations
        begin / trip2 .. (end - 1) / trip2 and, in the first and the last of them, only its
        part of the inner loop. Everything else of the outer body runs on every visit."""
        from .spread import inner_loop, worker_bounds

        inner = inner_loop(s, self.src.inner)  # type: ignore[arg-type]
        assert isinstance(inner, ir.For)
        a2 = to_affine(inner.lo, self.low.sizes)
        assert a2 is not None and a2.is_const()
        lo2 = a2.const
        trip2 = to_affine(inner.hi, self.low.sizes).const - lo2  # type: ignore[union-attr]
        v, v2 = self.low.names(s.var), self.low.names(inner.var)
        q, r, how = worker_bounds(0, trip * trip2, workers)
        begin, end = self.low.names.fresh(f"{v}{_camel(v2)}Begin"), self.low.names.fresh(f"{v}{_camel(v2)}End")
        out = [Line(f"// {workers} workers (GetBlockIdx): `{v}` x `{v2}` as one index k = ({v} - {lo}) * {trip2} + "
                    f"({v2} - {lo2}); {how}", depth),
               Line(f"if (workerIdx < {workers}) {{", depth)]
        if r == 0:
            out.append(Line(f"int32_t {begin} = workerIdx * {q};", depth + 1))
            out.append(Line(f"int32_t {end} = {begin} + {q};", depth + 1))
        else:
            out.append(Line(f"int32_t {begin} = workerIdx * {q} + ascx_min<int32_t>(workerIdx, {r});", depth + 1))
            out.append(Line(f"int32_t {end} = {begin} + {q} + (workerIdx < {r} ? 1 : 0);", depth + 1))
        def plus(base: int, e: str) -> str:
            return f"{base} + {e}" if base else e

        first, last = plus(lo, f"{begin} / {trip2}"), plus(lo, f"({end} - 1) / {trip2}")
        self.clip[id(inner)] = (f"({v} == {first} ? {plus(lo2, f'{begin} % {trip2}')} : {lo2})",
                                f"({v} == {last} ? {plus(lo2 + 1, f'({end} - 1) % {trip2}')} : {lo2 + trip2})")
        try:
            body = self.block(s.body, depth + 2, loop_vars + [v, begin, end])
        finally:
            del self.clip[id(inner)]
        out.extend(self.loop_lines(s, v, first, f"{last} + 1", body, depth + 1))
        out.append(Line("}", depth))
        return out

    def select_nest(self, s: ir.For, depth: int, loop_vars: list[str], vector: bool) -> list[Line] | None:
        """The lines of the cheapest `nest` pattern that matches `s` (patterns/), or None;
        the selection (every pattern's price or reason) is kept for the plan record."""
        from .patterns.base import Ctx
        from .patterns.select import emit_chosen, select

        ctx = Ctx(self, s, depth, {"vector": vector, "loop_vars": loop_vars,
                                   "why_not_vector": "the loop is split over the workers here" if vector is False else ""})
        sel = select("nest", ctx)
        self.selection = sel
        if sel.chosen is None:
            why = sel.fallback_reason()
            if why:
                self.no_vector_reason = why
            return None
        mark = len(self.low.nests)
        lines = emit_chosen(sel, ctx)
        for n in self.low.nests[mark:mark + 1]:
            n.pattern, n.tried, n.shape = sel.chosen.pattern, self.with_window_refusal(s, sel.tried()), sel.desc.summary()
        return lines  # type: ignore[return-value]

    def ub_locals_touched(self, s: ir.For) -> tuple[bool, bool]:
        """(touches, writes): whether a scalar nest reads or writes a UB local, and writes one."""
        def ub(name: str) -> bool:
            info = self.low.info.get(name)
            return info is not None and info.kind == "local" and info.scope == "ub"

        written = {st.target.tensor for st in s.body if isinstance(st, ir.Assign) and isinstance(st.target, ir.Access)}
        return any(ub(n) for n in ir.names_used((s,))), any(ub(n) for n in written)

    def serial_on_worker0(self) -> bool:
        """Whether this phase runs on one worker of several (it is not split with `@cores`)."""
        return self.ph.cores <= 1 and self.workers_available() > 1

    def row_loop(self, s: ir.For, depth: int, loop_vars: list[str]) -> list[Line]:
        """A C++ loop over `s`; its nests share values through a row context (`vector.RowCtx`:
        casts and subexpressions computed once per row, row-independent ones hoisted before
        the loop). When a nest does not fit UB with the context's pinned slots, the loop is
        lowered again with fewer of them (the most used kept: a whole 8192-element layernorm
        row keeps its widened row), and at last without any."""
        from .instr import render
        from .vector import RowCtx

        v = self.low.names(s.var)
        mark = (len(self.low.nests), len(self.low.warnings), self.ph.tmp_bytes)
        state = dict(self.state)
        saved = self.row_ctx
        ctx = RowCtx.build(self, s)
        while True:
            self.row_ctx = ctx
            try:
                body = self.block(s.body, depth + 1, loop_vars + [v])
            finally:
                self.row_ctx = saved
            if ctx is None or not ctx.overflow:
                break
            del self.low.nests[mark[0]:], self.low.warnings[mark[1]:]
            self.ph.tmp_bytes = mark[2]
            fewer = len(ctx.pinned) - 1
            ctx = RowCtx.build(self, s, fewer) if fewer else None
        if self.low.select:  # the rows as one tile when cheaper (patterns rows2d, row-context)
            from .patterns.base import Ctx
            from .patterns.select import emit_chosen, select

            rctx = Ctx(self, s, depth, {"per_row": self.low.nests[mark[0]:], "pre": ctx.pre if ctx is not None else [],
                                        "tmp_before": mark[2], "same_queues": state == self.state})
            rsel = select("rows", rctx)
            if rsel.chosen is not None and rsel.chosen.pattern == "row-context" and self.ph.core == "vec" and \
                    len(self.low.nests) > mark[0]:
                self.low.nests[mark[0]].rows = rsel.tried()  # the row loop's choice, on its first nest
            if rsel.chosen is not None and rsel.chosen.pattern == "rows2d":
                tiled = emit_chosen(rsel, rctx)
                del self.low.nests[mark[0]:], self.low.warnings[mark[1]:]
                tiled[0].pattern, tiled[0].tried = "rows2d", rsel.tried()  # type: ignore[index]
                self.low.nests.append(tiled[0])  # type: ignore[index]
                self.ph.tmp_bytes = max(mark[2], tiled[2])  # type: ignore[index]
                return tiled[1]  # type: ignore[index,no-any-return]
        pre = render(ctx.pre, depth) if ctx is not None else []
        lo, hi = self.clip.get(id(s), (self.ex.index(s.lo), self.ex.index(s.hi)))
        return pre + self.loop_lines(s, v, lo, hi, body, depth)

    def runtime_split(self, s: ir.For, v: str, workers: int, depth: int, loop_vars: list[str]) -> list[Line]:
        """The contiguous split of a loop whose trip count is known at run time only (a
        run-time size's tile count) over up to `workers` cores: the host tiling function
        computes the trip, the cores used (the launch's blockDim), and each core's share
        (`q`, `r`: core w runs q + 1 iterations if w < r, else q); the kernel reads them."""
        if len(self.low.tiling) or len(self.low.phase_range) > 1:
            raise NoRuntimeLowering(f"`{s.label or v}`: a second split loop (one run-time split per kernel)")
        lo, hi = self.ex.index(s.lo), self.ex.index(s.hi)
        trip, cores, q, r = (self.low.names.fresh(f"{v}{x}") for x in ("Trip", "Cores", "Share", "Extra"))
        self.low.tiling += [
            TilingField(trip, f"ascx_max<int32_t>(static_cast<int32_t>({hi}) - static_cast<int32_t>({lo}), 0)", f"iterations of `{s.label or v}`"),
            TilingField(cores, f"ascx_max<int32_t>(ascx_min<int32_t>({trip}, {workers}), 1)", "cores used: the blockDim"),
            TilingField(q, f"{trip} / {cores}", "iterations of every core"),
            TilingField(r, f"{trip} % {cores}", "the first this many cores run one more"),
        ]
        out = [Line(f"// up to {workers} workers (GetBlockIdx), the split from the tiling struct: worker w runs "
                    f"{q} + 1 iterations if w < {r}, else {q}, contiguous from {lo}", depth),
               Line(f"if (workerIdx < {cores}) {{", depth)]
        begin, end = self.low.names.fresh(f"{v}Begin"), self.low.names.fresh(f"{v}End")
        out.append(Line(f"int32_t {begin} = {lo} + workerIdx * {q} + ascx_min<int32_t>(workerIdx, {r});", depth + 1))
        out.append(Line(f"int32_t {end} = {begin} + {q} + (workerIdx < {r} ? 1 : 0);", depth + 1))
        inner = self.block(s.body, depth + 2, loop_vars + [v])
        out.extend(self.loop_lines(s, v, begin, end, inner, depth + 1))
        out.append(Line("}", depth))
        return out

    def loop_lines(self, s: ir.For, v: str, lo: str, hi: str, body: list[Line], depth: int) -> list[Line]:
        """The C++ loop `v` over `lo..hi` around `body` (lowered at `depth + 1`), with the next
        tile's load issued before the compute when `prefetch.prefetched` applies."""
        return form(self, s, split_stages(s.body, self.low.decls), v, lo, hi, body, depth)

    def workers_available(self) -> int:
        if self.low.mode == "MIX_MODE" and self.ph.core == "vec":
            return self.low.mix_vectors * self.low.block_dim
        return self.low.block_dim

    def with_window_refusal(self, s: ir.For, tried: Any) -> Any:
        """`tried` of a nest inside a window-shaped loop, with the `window` pattern's refusal
        at that loop in place of its own ("not a window" at the inner loop says nothing)."""
        wr = self.window_refusal
        if wr is None or not wr[1] or wr[0] is s or not any(x is s for x in ir.iter_stmts((wr[0],))):
            return tried
        return tuple(wr[1][0] if t[0] == "window" else t for t in tried)

    def record_scalar(self, s: ir.For, reason: str = "") -> None:
        why = reason or "no vector instruction matches"
        name = s.label or s.var
        where = f"{self.low.where(s)} `{name}`"
        need = self.no_vector_need
        if need is not None and reason:
            # the selection matched but its temporaries did not fit: record what it needs
            choice = need.choice(where, why, capacity=True)
            self.low.nests.append(NestChoice(where, ("GetValue", "SetValue"), why, choice.phase, name, choice.temp_bytes,
                                             choice.temp_elems, choice.temp_slots, choice.temp_purposes, True,
                                             choice.api_temp, choice.temp_shape))
        else:
            self.low.nests.append(NestChoice(where, ("GetValue", "SetValue"), why, self.ph.index, name))
        if self.selection is not None:
            self.low.nests[-1].tried, self.low.nests[-1].shape = self.selection.tried(), self.selection.desc.summary()
            self.low.nests[-1].tried = self.with_window_refusal(s, self.low.nests[-1].tried)
        self.low.warn(s, f"nest `{name}` falls back to scalar GetValue/SetValue code ({why}): slow, never wrong")

    def assign(self, s: ir.Assign, depth: int) -> list[Line]:
        t = s.target
        name = t.tensor if isinstance(t, ir.Access) else t.name
        # a queue local first touched by a statement outside a staged block (a top-level
        # statement left by `unroll{..=full}` of a staged nest) is allocated / dequeued here, as
        # an inline copy does, not later at its first copy (fuzzer: SetValue on an uninitialised
        # LocalTensor under `stage{X=s},unroll{s=full}`)
        pre: list[Line] = []
        for n in sorted(ir.names_used((s,))):
            if n in self.buffers:
                self.ensure_ready(n, pre, depth)
        decl = self.low.decls[name]
        dt = Ty(decl.dtype)
        val, vt = self.ex.value(s.value)
        info = self.low.info[name]
        old = self.load(name, t.indices) if isinstance(t, ir.Access) else self.scalar_ref(name)
        if s.op == "=":
            new = self.ex.conv(val, vt, dt)
        else:
            comp = promote(dt, vt)
            a = self.ex.conv(old, dt, comp)
            b = self.ex.conv(val, vt, comp)
            cc = CTYPE[comp.dtype] if not comp.weak else "float"
            if comp.is_int and s.op in ("+=", "*="):
                r = self.ex.int_op(s.op[0], a, b, comp)
            else:
                r = {"+=": f"({a} + {b})", "*=": f"({a} * {b})", "max=": f"ascx_max<{cc}>({a}, {b})",
                     "min=": f"ascx_min<{cc}>({a}, {b})"}[s.op]
            new = self.ex.conv(r, comp, dt)
        if info.kind == "scalar":
            return pre + [Line(f"{info.cname} = {new};", depth)]
        off = self.offset(name, t.indices) if isinstance(t, ir.Access) else "0"
        return pre + [Line(f"{info.cname}.SetValue({off}, {new});", depth)]

    # ---- staged tiles ---------------------------------------------------------------------
    def staged(self, st: _Staged, depth: int, loop_vars: list[str]) -> list[Line]:
        calls: list[Line] = []
        # which locals belong to this block (copied here)
        mine_in = [c.dst.tensor for c in st.copy_in]
        mine_out = [c.src.tensor for c in st.copy_out if c.src.tensor in self.buffers]
        # reserve method names outer-first (inner staged blocks are emitted while the
        # compute body is generated)
        names = {stage: self.method_name(base) for stage, base, present in (
            ("copy_in", "CopyIn", bool(st.copy_in)), ("compute", "Compute", True), ("copy_out", "CopyOut", bool(st.copy_out)))
            if present}
        pp = self.ping_pong(mine_in + mine_out)
        # CopyIn: AllocTensor, copy, EnQue (a local source is DeQue'd first)
        if st.copy_in:
            body: list[Line] = [] if pp is None else pp.select(pp.ins)
            waited = False
            later = ir.names_used(st.compute) | {c.src.tensor for c in st.copy_out}
            for c in _tbuf_loads_last(st.copy_in, self.buffers):
                if c.src.tensor in self.buffers:
                    self.ensure_ready(c.src.tensor, body, 0)
                fresh = self.ensure_alloc(c.dst.tensor, body, 0)
                dst = self.buffers.get(c.dst.tensor)
                if pp is not None and dst in pp.bufs:
                    body.extend([] if waited else pp.before_loads())
                    waited = True
                elif dst is not None and dst.kind == "buf":
                    body.extend(tbuf_sync.before_load(dst, self.ph.core))
                body.extend(self.copy(c, 0))
                if fresh:
                    b = self.buffers[c.dst.tensor]
                    body.append(Line(f"{b.holder}.EnQue({b.tensor});"))
                    self.state[c.dst.tensor] = "queued"
            # local sources used only by this copy-in group are released here
            for c in st.copy_in:
                sn = c.src.tensor
                b = self.buffers.get(sn)
                if b is not None and b.kind == "que" and self.state.get(sn) == "ready" and sn not in later and sn in mine_in:
                    body.append(Line(f"{b.holder}.FreeTensor({b.tensor});"))
                    self.state[sn] = "none"
            body.extend(tbuf_sync.after_loads([self.buffers[n] for n in dict.fromkeys(mine_in)
                                               if n in self.buffers and self.buffers[n].kind == "buf"], self.ph.core))
            calls.extend(self.method(names["copy_in"], body, depth, loop_vars, "copy_in"))
        # Compute
        body = [] if pp is None else pp.select(pp.bufs)
        used = ir.names_used(st.compute) | {c.src.tensor for c in st.copy_out}
        for n in dict.fromkeys(mine_in + mine_out):
            if n in used:
                self.ensure_ready(n, body, 0)
        # queue locals copied in the middle of the body (after `fuse` of two staged nests)
        # may be written or read before that copy: allocate them before any statement, free
        # them after the last (the method runs once per iteration of the tile loop)
        inline = [n for c in st.compute if isinstance(c, ir.Copy) for n in (c.src.tensor, c.dst.tensor)
                  if n in used and n not in mine_in and n not in mine_out]
        inline = [n for n in dict.fromkeys(inline) if n in self.buffers and self.state.get(n) == "none"]
        for n in inline:
            self.ensure_ready(n, body, 0)
        acquired = len(body)
        for s in st.compute:
            body.extend(self.stmt(s, 0, loop_vars))
        # a TBuf copied out is one slot: V overwrites it after the previous CopyOut read it
        halves = pp.bufs if pp is not None else []
        body = tbuf_sync.before_writes(body, [self.buffers[n] for n in dict.fromkeys(mine_out)
                                              if self.buffers[n].kind == "buf" and self.buffers[n] not in halves],
                                       self.ph.core, acquired)
        if pp is not None:
            body = tbuf_sync.before_writes(body, pp.outs, self.ph.core, acquired, pp.before_writes())
        for n in dict.fromkeys(mine_out):
            b = self.buffers[n]
            if b.kind == "que" and "in" not in b.roles and self.state[n] == "ready":
                body.append(Line(f"{b.holder}.EnQue({b.tensor});"))
                self.state[n] = "queued"
        for n in dict.fromkeys(mine_in + inline):
            b = self.buffers.get(n)
            if b is not None and b.kind == "que" and n not in mine_out and self.state[n] == "ready":
                body.append(Line(f"{b.holder}.FreeTensor({b.tensor});"))
                self.state[n] = "none"
        if any(self.buffers[n].kind == "buf" or "in" in self.buffers[n].roles for n in mine_out):
            body.append(Line("SetFlag<HardEvent::V_MTE3>(0);" if self.ph.core == "vec" else "PipeBarrier<PIPE_ALL>();"))
            if self.ph.core == "vec":
                body.append(Line("WaitFlag<HardEvent::V_MTE3>(0);"))
        if pp is not None:
            body.extend(pp.after_compute() + (pp.advance() if not st.copy_out else []))
        calls.extend(self.method(names["compute"], body, depth, loop_vars, "compute"))
        # CopyOut
        if st.copy_out:
            body = [] if pp is None else pp.select(pp.outs)
            for c in st.copy_out:
                self.ensure_ready(c.src.tensor, body, 0)
                body.extend(self.copy(c, 0))
            if pp is not None:
                body.extend(pp.after_copy_out() + pp.advance())
            synced = False
            for n in dict.fromkeys(mine_out):
                b = self.buffers[n]
                if b.kind == "que" and self.state[n] == "ready":
                    if b.holder.startswith("inQueue_") and not synced:
                        # an in-place VECIN buffer was read by MTE3: its FreeTensor signals
                        # from V, so V must first wait for MTE3 (else the next load races)
                        body += [Line("SetFlag<HardEvent::MTE3_V>(0);"), Line("WaitFlag<HardEvent::MTE3_V>(0);")]
                        synced = True
                    body.append(Line(f"{b.holder}.FreeTensor({b.tensor});"))
                    self.state[n] = "none"
            calls.extend(self.method(names["copy_out"], body, depth, loop_vars, "copy_out"))
        return calls

    def ping_pong(self, mine: list[str]) -> "tbuf_sync.PingPong | None":
        """The ping-pong TBufs of a staged block (its locals `mine`) with their event ids, or
        None when it has none or the phase's ids are spent (then the halves' tensors stay on
        the first half with the one-slot syncs: correct, single-buffered)."""
        bufs = [self.buffers[n] for n in dict.fromkeys(mine)
                if n in self.buffers and self.buffers[n].kind == "buf" and self.buffers[n].depth == 2]
        base = 1 + 2 * len(self.ping_pongs)
        if not bufs or base + 1 > tbuf_sync.MAX_PING_PONG_EVENT:
            return None
        half = Scalar("", self.low.names.fresh("tbufHalf"), "int32_t")
        self.low.halves.append(half)
        pp = tbuf_sync.PingPong(bufs, half.cname, base)
        self.ping_pongs.append(pp)
        return pp

    def method(self, name: str, body: list[Line], depth: int, loop_vars: list[str], stage: str) -> list[Line]:
        if stage == "compute":
            # (TBufs copied in or out need the same scalar flags as the queues: tbuf_sync.py)
            out_queued = tuple(b.tensor for b in self.buffers.values() if b.kind == "que" and b.holder.startswith("outQueue_")
                               or b.kind == "buf" and "out" in b.roles)
            in_queued = tuple(b.tensor for b in self.buffers.values() if b.kind == "que" and b.holder.startswith("inQueue_")
                              or b.kind == "buf" and "in" in b.roles)
            body = vs_sync(_scalar_sync(body, out_queued, in_queued))
        text = "\n".join(l.text for l in body)
        idents = set(_IDENT.findall(text))
        params = tuple(v for v in loop_vars if v in idents)
        self.ph.methods.append(Method(name, params, body, stage))
        return [Line(f"{name}({', '.join(params)});", depth)]

    # ---- copies ---------------------------------------------------------------------------
    def copy_inline(self, c: ir.Copy, depth: int) -> list[Line]:
        out: list[Line] = []
        for n in (c.dst.tensor, c.src.tensor):
            if n in self.buffers:
                self.ensure_ready(n, out, depth)
        if "local" in (self.low.info[c.dst.tensor].kind, self.low.info[c.src.tensor].kind):
            # an inline copy overwrites an on-chip buffer that an earlier instruction on
            # another pipe may still read (e.g. an unrolled reload of L1 after MTE1 LoadData:
            # WAR), or reads one that an earlier instruction may still write (an unrolled
            # copy-out of a tile the vector unit just computed: RAW): drain first
            out.append(Line("PipeBarrier<PIPE_ALL>();", depth))
        out.extend(self.copy(c, depth))
        out.append(Line("PipeBarrier<PIPE_ALL>();", depth))
        return out

    def region(self, r: ir.Region) -> tuple[str, Affine | None, list[tuple[str, int | None, int]]]:
        """(start offset C++, start as Affine or None, [(extent C++, extent int or None, stride)])."""
        info = self.low.info[r.tensor]
        wide = wide_stride(info.shape, info.strides) if info.kind == "gm" else None
        total: Affine | None = Affine((), 0)
        parts: list[str] = []
        dims: list[tuple[str, int | None, int]] = []
        for d, st in zip(r.dims, info.strides):
            lo = d.lo if isinstance(d, ir.Slice) else d
            a = to_affine(lo, self.low.sizes)
            if a is None or total is None:
                total = None
                parts.append(wide_term(f"({self.ex.index(lo)})", st, wide))
            else:
                total = total + a.scale(st)
            if isinstance(d, ir.Slice):
                n = affine_extent(d.lo, d.hi, self.low.sizes)
                if n is not None:
                    dims.append((str(n), n, st))
                else:
                    dims.append((f"({self.ex.index(d.hi)} - ({self.ex.index(d.lo)}))", None, st))
        if total is not None:
            start = affine_cpp(total, self.low.names, wide)
        else:
            start = " + ".join(parts)
        return start, total, dims

    def copy(self, c: ir.Copy, depth: int) -> list[Line]:
        from .copies import emit_copy

        if self.cube is not None:
            lines = self.cube.copy(self, c, depth)
            if lines is not None:
                return lines
        return emit_copy(self, c, depth)


def _tbuf_loads_last(copies: list[ir.Copy], buffers: dict[str, Buffer]) -> list[ir.Copy]:
    """A CopyIn group with its loads into TBufs moved last (their MTE2 waits for the previous
    compute, `tbuf_sync.before_load`; the queue loads before them still overlap it), unless
    a copy reads a local loaded in the same group (the order is kept then)."""
    dsts = {c.dst.tensor for c in copies}
    if any(c.src.tensor in dsts for c in copies):
        return copies
    def is_buf(c: ir.Copy) -> bool:
        b = buffers.get(c.dst.tensor)
        return b is not None and b.kind == "buf"
    return [c for c in copies if not is_buf(c)] + [c for c in copies if is_buf(c)]


def _distributable(s: ir.For) -> bool:
    """`for d { assigns and one-level loops of assigns }` (the P·V shape `acc = 0; for j { acc += ..}; O = ..`),
    or with perfect nests of loops around one assign (a reduction over several loops: conv2d's `c, r, s`)."""
    from .contract import perfect_nest

    return any(isinstance(x, ir.For) for x in s.body) and all(
        isinstance(x, ir.Assign) or (isinstance(x, ir.For) and x.body and all(isinstance(y, ir.Assign) for y in x.body))
        or (isinstance(x, ir.For) and perfect_nest(x) is not None)
        for x in s.body)


def window_shape(s: ir.For) -> bool:
    """A window nest's loops (pattern `window`: depthwise conv, pooling)."""
    from .patterns.window import shape

    return shape(s)


def _perfect2(s: ir.For) -> bool:
    return len(s.body) == 1 and isinstance(s.body[0], ir.For) and not any(isinstance(x, (ir.For, ir.Copy)) for x in s.body[0].body)


def lower_kernel(kernel: ir.Kernel, target: Target | None = None, *, select: bool = True, source_name: str = "",
                 runtime: frozenset[str] = frozenset()) -> KernelPlan:
    """Lower a (transformed) kernel to a `KernelPlan` for `target` (default ascend910b2).

    select=False disables instruction selection (every nest scalar): the reference path.
    runtime: ranged sizes read at run time from a tiling struct (raises NoRuntimeLowering
    where that path does not reach yet).
    """
    return Lowering(kernel, target, select=select, source_name=source_name, runtime=runtime).run()


_LOCAL_SET = re.compile(r"(?<!Gm)\.SetValue\(")


def _scalar_sync(body: list[Line], out_queued: tuple[str, ...] = (), in_queued: tuple[str, ...] = ()) -> list[Line]:
    """A compute stage whose scalar code reads a VECIN buffer (written by MTE2) or writes a
    VECOUT buffer (read by the previous MTE3) must order S after those pipes: the queues'
    DeQue / AllocTensor only make V wait. Inserted after the stage's buffer acquisitions.
    `out_queued`: the tensors of the phase's output queues; a stage that writes one with
    SetValue waits for MTE3 even when its AllocTensor is in the calling stage (a compute
    stage nested in another: WAR found by the fuzzer on add M=6 N=1 under
    `stage{A=j},stage{C=ew},split{ew=2},stage{B=ew}`). `in_queued` likewise: a stage that
    reads an input-queue tensor with GetValue waits MTE2 -> S even when its DeQue is in the
    calling stage (RAW found by the fuzzer: `stage{_f6rkp=_u30D2},stage{B=p0AQ},...`)."""
    text = "\n".join(l.text for l in body)
    flags = []
    # only scalar reads of a tensor MTE2 wrote need it: a VECIN tensor dequeued here or an
    # input-queue tensor (a reduction's result in a VECCALC scratch is ordered by its V -> S
    # flag, and waiting for MTE2 there would also wait for the next tile's prefetched load)
    read = set(_GET_BASE.findall(text))
    # (`que_` holders: the cube-side queues, A1/B1 loaded by MTE2 and read by scalar AIC code)
    if read & (set(re.findall(r"\b(\w+) = (?:inQueue|que)_\w+\.DeQue<", text)) | set(in_queued)):
        flags.append("MTE2_S")
    if _LOCAL_SET.search(text) and (re.search(r"\boutQueue_\w+\.AllocTensor<", text)
                                    or any(f"{t}.SetValue(" in text for t in out_queued)):
        flags.append("MTE3_S")
    if not flags:
        return body
    i = 0
    while i < len(body) and (".DeQue<" in body[i].text or ".AllocTensor<" in body[i].text):
        i += 1
    depth = body[i - 1].depth if i else 0
    sync = [Line(f"{op}<HardEvent::{f}>(0);", depth) for f in flags for op in ("SetFlag", "WaitFlag")]
    return body[:i] + sync + body[i:]
