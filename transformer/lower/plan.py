"""`KernelPlan`: what the code generator decided, before any C++ text is laid out.

The plan is the interface between lowering (`transformer.lower.lower_kernel`) and the
templates (`templates/kernel.cpp.j2`, `templates/harness.cpp.j2`). Every decision a reader
of the emitted Ascend C may ask about is here, as data:

- `params` / `workspace`: the GM arguments of the entry (`GM_ADDR` each) and the GM
  workspace slots that hold temps too large for a scalar;
- `phases`: one per top-level loop nest, each run on one core kind (`vec` = AIV, `cube` =
  AIC) by `cores` workers, with its `buffers` (queue or TBuf, `TPosition`, depth) and its
  `stages` (the CopyIn / Compute / CopyOut methods of every staged tile);
- `nests`: the instruction chosen for each innermost nest (or `scalar` with the reason);
- `kind` (`vector`, `cube` or `mix`), `mode` (the emulator's `KernelMode`), `block_dim`;
- `warnings`: every fallback to scalar code (slow, never wrong).

C++ statements are kept as `Line`s: text plus the IR location they came from, so a compiler
error in emitted code can be traced to the plan item and template that produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Line:
    """One line of C++ (no indentation of its own beyond `depth` levels) and its origin."""

    text: str
    depth: int = 0
    origin: str = ""


@dataclass
class GmParam:
    """A kernel argument: a GM tensor (input, output) or the workspace."""

    name: str  # IR name ("" for the workspace)
    cname: str  # C++ argument name
    dtype: str  # IR dtype ("u8" for the workspace)
    ctype: str
    shape: tuple[int, ...]
    role: str  # input | output | workspace
    elems: int = 0
    bytes_name: str = ""  # the harness's byte count of this argument
    gm_name: str = ""  # the GlobalTensor member over it (`xGm`)
    host_name: str = ""  # the NPU host program's host and device buffers (templates/npu_main.cpp.j2)
    device_name: str = ""
    elems_cpp: str = ""  # the element count as C++ over the run-time sizes ("": `elems`, fixed)

    @property
    def nbytes(self) -> int:
        from ..ir import DTYPE_BYTES

        return self.elems * (1 if self.role == "workspace" else DTYPE_BYTES[self.dtype])


class NoRuntimeLowering(Exception):
    """The run-time-size lowering does not handle this kernel yet (why): emission falls back
    to specialising the ranged sizes at their values (codegen.emit_ascendc)."""


@dataclass
class TilingField:
    """One derived field of a run-time-size kernel's `TilingData` (docs/codegen.md, "Run-time
    sizes"): computed by the host tiling function from the sizes (and earlier fields) by
    `expr` (C++), read by the kernel's Init."""

    name: str  # C++ member name (of TilingData and of the kernel class)
    expr: str  # C++ over the sizes' names and earlier fields' names
    comment: str = ""


@dataclass
class WorkspaceSlot:
    """A GM temp kept in the workspace argument, at a 512 B-aligned byte offset."""

    name: str
    cname: str  # GlobalTensor member
    dtype: str
    ctype: str
    shape: tuple[int, ...]
    elems: int
    offset: int
    copies: int = 1  # one copy per worker of the phase using it (`@cores`), `stride` bytes apart
    stride: int = 0


@dataclass
class Buffer:
    """An on-chip `local`: its queue (or TBuf), position and layout."""

    name: str  # IR name
    tensor: str  # LocalTensor member (C++)
    holder: str  # TQue / TBuf member (C++)
    dtype: str
    ctype: str
    scope: str  # ub | l1 | l0a | l0b | l0c
    position: str  # VECIN VECOUT VECCALC A1 B1 A2 B2 CO1
    depth: int  # buffers in the queue (2 = double buffering)
    shape: tuple[int, ...]  # declared (logical) shape
    strides: tuple[int, ...]  # physical element strides (row-major, rows padded to 32 B)
    layout: str  # "ND" (row-major) or a fractal layout: "Nz" (L1), "Zz" (L0A), "Zn" (L0B), "Nz" (L0C)
    nbytes: int  # bytes of one buffer
    kind: str  # "que" or "buf"
    roles: tuple[str, ...] = ()  # subset of ("in", "out")

    @property
    def que_type(self) -> str:
        if self.kind == "buf":
            return f"TBuf<TPosition::{self.position}>"
        depth = "BUFFER_NUM" if self.depth == 2 else str(self.depth)
        return f"TQue<TPosition::{self.position}, {depth}>"


@dataclass
class Method:
    """A member function of the kernel class (CopyIn / Compute / CopyOut / a phase body)."""

    name: str
    params: tuple[str, ...]  # C++ parameter names (int32_t each)
    body: list[Line]
    stage: str = ""  # copy_in | compute | copy_out | phase


@dataclass
class NestChoice:
    """The instruction selected for one innermost nest (`scalar` when none applies)."""

    where: str  # label / location of the nest
    instructions: tuple[str, ...]
    fallback: str = ""  # why scalar code was emitted ("" when an instruction was chosen)
    # vector temporaries (`temporaries.py`): what the nest needs, vectorised or not
    phase: int = -1
    nest: str = ""  # loop label or variable
    temp_bytes: int = 0  # slots x slot bytes
    temp_elems: int = 0
    temp_slots: int = 0
    temp_purposes: tuple[str, ...] = ()
    capacity: bool = False  # the fallback is caused by UB capacity (temporaries do not fit)
    api_temp: bool = False  # its instructions take the UB API temp area (temporaries.py)
    temp_shape: tuple[int, ...] = ()  # elements per slot: (n,) per row, (rows, n) for a 2-D nest
    plan: tuple[Any, ...] = ()  # the typed instructions (`instr.Placed`), in order; () for scalar code
    # how often a V->S round trip (flag + scalar read) runs: "" none, "row" once per row of
    # a tile (a row statistic), "element" once per element of a 2-D result (a dot product
    # reduced one score at a time)
    vs_round_trip: str = ""
    # instruction selection (lower/patterns/): the pattern chosen ("" for a scalar fallback
    # or a record made outside the selector) and each pattern tried at this nest:
    # (name, price in cycles or None when it refused, its reason or "")
    pattern: str = ""
    tried: tuple[tuple[str, float | None, str], ...] = ()
    inner: tuple[str, ...] = ()  # the `inner` site's pattern for each inner loop (a `distributed` nest)
    shape: str = ""  # the nest descriptor's summary (lower/desc.py) the `nest` site's patterns read
    inner_tried: tuple[tuple[str, tuple[tuple[str, float | None, str], ...]], ...] = ()  # per inner loop: its `tried`
    # the `rows` site's record when this is the first nest of a row loop kept row by row
    rows: tuple[tuple[str, float | None, str], ...] = ()


@dataclass
class Phase:
    index: int
    label: str
    core: str  # "vec" (AIV) or "cube" (AIC)
    cores: int  # workers splitting the outermost loop (1 = one worker)
    buffers: list[Buffer] = field(default_factory=list)
    methods: list[Method] = field(default_factory=list)
    body: list[Line] = field(default_factory=list)  # what Process runs for this phase
    init: list[Line] = field(default_factory=list)  # InitBuffer calls of this phase
    tmp_bytes: int = 0
    camel: str = ""  # the label in CamelCase, unique among phases: `Process<camel>`, `CopyIn<camel>`
    tmp_name: str = ""  # the phase's VECCALC scratch tensor and its TBuf (vector intermediates)
    tmp_buf_name: str = ""
    spread: str = ""  # how `cores` was decided, or why the phase is not split over cores (spread.py)
    # the `phase` / `kernel` site's patterns at this phase (lower/patterns/: gemm, conv, flash)
    tried: tuple[tuple[str, float | None, str], ...] = ()
    pads: list[str] = field(default_factory=list)  # TBufs that only move the next UB buffer (ub_place.py)


@dataclass
class Scalar:
    """A rank-0 temp kept in a scalar member variable."""

    name: str
    cname: str
    ctype: str


@dataclass
class KernelPlan:
    name: str  # IR kernel name
    entry: str  # C++ entry function name
    class_name: str
    target: str
    kind: str  # vector | cube | mix
    mode: str  # AIV_MODE | AIC_MODE | MIX_MODE
    block_dim: int
    params: list[GmParam]
    workspace: list[WorkspaceSlot]
    workspace_bytes: int
    sizes: list[tuple[str, int]]
    consts: list[tuple[str, str, str]]  # (cname, ctype, C++ value)
    scalars: list[Scalar]
    phases: list[Phase]
    nests: list[NestChoice]
    warnings: list[str]
    buffer_num: int = 2
    process: list[Line] = field(default_factory=list)
    init: list[Line] = field(default_factory=list)
    scope_bytes: dict[str, int] = field(default_factory=dict)
    # run-time sizes (runtime.py): the ranged sizes the kernel reads from its tiling struct,
    # (cname, lo, hi, default), and the derived fields; empty for a fully specialised kernel
    runtime_sizes: list[tuple[str, int, int, int]] = field(default_factory=list)
    tiling: list[TilingField] = field(default_factory=list)
    tiling_names: tuple[str, str, str] = ("", "", "")  # C++ struct, kernel argument, host tiling function
    runtime_names: dict[str, str] = field(default_factory=dict)  # IR size name -> C++ name
    block_dim_cpp: str = ""  # the launch's block count as C++ over sizes and fields ("": block_dim)

    @property
    def inputs(self) -> list[GmParam]:
        return [p for p in self.params if p.role == "input"]

    @property
    def outputs(self) -> list[GmParam]:
        return [p for p in self.params if p.role == "output"]

    def instructions(self) -> list[str]:
        """Every distinct instruction the nests use, in first-use order."""
        seen: dict[str, None] = {}
        for n in self.nests:
            for i in n.instructions:
                seen.setdefault(i, None)
        return list(seen)

    def summary(self) -> str:
        lines = [f"kernel {self.name}: {self.kind} ({self.mode}, block_dim {self.block_dim}) on {self.target}"]
        for ph in self.phases:
            lines.append(f"  phase {ph.index} `{ph.label}`: {'AIC' if ph.core == 'cube' else 'AIV'}, {ph.cores} worker(s)")
            if ph.spread:
                lines.append(f"    cores: {ph.spread}")
            lines.extend(_phase_patterns(ph.tried, "    "))
            for b in ph.buffers:
                lines.append(f"    {b.name}: {b.que_type} {b.dtype}{list(b.shape)} {b.layout} {b.nbytes} B")
        for n in self.nests:
            what = ", ".join(n.instructions) if n.instructions else "scalar"
            lines.append(f"  nest {n.where}: {what}" + (f" (fallback: {n.fallback})" if n.fallback else ""))
            lines.extend(_patterns(n, "      "))
            lines.extend(_describe(n.plan, "      "))
        return "\n".join(lines)


def _phase_patterns(tried: tuple[tuple[str, float | None, str], ...], indent: str) -> list[str]:
    """A phase's whole-phase pattern (gemm, conv, flash), or why one that its pass marked
    the nest for refused (an unmarked nest's refusals are not news)."""
    out = [indent + f"pattern {name}" for name, c, _ in tried if c is not None]
    out += [indent + f"refused by {name}: {why}" for name, c, why in tried if c is None and not why.startswith("not marked @")]
    return out


def _patterns(n: NestChoice, indent: str) -> list[str]:
    """The selector's record of a nest (lower/patterns/): the pattern chosen, its price and
    the other matches; for a scalar fallback, each pattern's refusal."""
    out = []
    if n.rows:
        price = next((c for name, c, _ in n.rows if name == "row-context"), None)
        out.append(indent + "row loop: pattern row-context" + (f", about {price:,.0f} cycles" if price else "") + "; "
                   + "; ".join(f"{name} {'matched, about ' + format(c, ',.0f') + ' cycles' if c is not None else 'refused: ' + why}"
                               for name, c, why in n.rows if name != "row-context"))
    return _nest_patterns(n, indent) + out


def _nest_patterns(n: NestChoice, indent: str) -> list[str]:
    if n.pattern:
        price = next((c for name, c, _ in n.tried if name == n.pattern), None)
        others = [f"{name} {c:,.0f}" for name, c, _ in n.tried if c is not None and name != n.pattern]
        return [indent + f"pattern {n.pattern}" + (f", about {price:,.0f} cycles" if price is not None else "")
                + (f" (also matched: {', '.join(others)})" if others else "")
                + (f"; inner loops: {', '.join(n.inner)}" if n.inner else "")]
    return [indent + f"refused by {name}: {why}" for name, c, why in n.tried if c is None]


def _describe(items: tuple[Any, ...], indent: str) -> list[str]:
    """One line per typed instruction (`instr.Placed`), a loop's body indented below it."""
    out: list[str] = []
    for p in items:
        out.append(indent + p.item.describe())
        out.extend(_describe(getattr(p.item, "body", ()), indent + "  "))
    return out
