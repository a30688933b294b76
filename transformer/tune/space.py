"""The tuner's search space: legal pass sequences with their parameters, masked by
legality and capacity, deduplicated by the canonical kernel they produce.

Why this shape: a free sequence of passes is an unbounded space, and most orders are
meaningless (tiling before fusing loses the fusion). The space is *staged*: passes are
tried in a fixed order (`DEFAULT_STAGES`: fuse, online_softmax, interchange, gemm, conv_gemm,
tile, double_buffer, multicore); at each stage the action is "skip" or one instance of
that pass (hierarchical: which pass, then which parameters). The instances come from the
pass's own `space(kernel, target)` (legal by construction) plus the pass with no
parameters (the pass chooses, e.g. `tile` asks the capacity solver for the largest tiles),
plus, for `tile`, every Z3-feasible size of the band's outer loop from the capacity
module's candidate grid. Each instance is applied for real; an instance the pass refuses
(legality) or whose result does not fit on chip (`check_kernel_capacity` not sat) is
*pruned*, with its one-line reason kept for `--explain`. So no candidate the tuner can
propose breaks a dependence or overflows a buffer.

Equivalent kernels are measured once: a candidate is identified by `kernel_key`, the
SHA-256 of the canonical printed kernel + sizes + target name. Two pipelines reaching the
same kernel are one candidate (the first found is its pipeline, the others its aliases).

    space = SearchSpace.build(kernel, target)           # enumerates every candidate
    space.candidates[0].pipeline                         # "" (the untransformed kernel)
    space.pruned                                         # [(pipeline, reason), ...]
    node = space.root(); node.actions()                  # the masked actions at the root
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .. import ir
from ..printer import print_kernel
from ..targets import Target
from .memo import KernelMemo

DEFAULT_STAGES: tuple[str, ...] = ("fuse", "online_softmax", "interchange", "gemm", "conv_gemm", "tile",
                                   "double_buffer", "multicore")
MAX_CANDIDATES = 1500
MAX_TILE_OPTIONS = 3
# Passes whose parameterless form chooses for itself (`tile` asks the capacity solver,
# `fuse` is greedy, `double_buffer` pipelines every staging loop): offered as an action.
CHOOSES_ITSELF = frozenset({"fuse", "tile", "double_buffer", "online_softmax", "layout"})
# Passes offered only in their parameterless form: `double_buffer{loop=X}` per staging loop
# multiplies the space for little gain (pipelining every staging loop is what one wants).
AUTO_ONLY = frozenset({"double_buffer"})


def kernel_key(kernel: ir.Kernel, target: Target) -> str:
    """Canonical identity of a kernel at its sizes on a target (hex SHA-256)."""
    sizes = sorted(kernel.size_values().items())
    blob = json.dumps([print_kernel(kernel), sizes, _target_name(target)])
    return hashlib.sha256(blob.encode()).hexdigest()


def _target_name(target: Target | str) -> str:
    return target if isinstance(target, str) else getattr(target, "name", str(target))


@dataclass(frozen=True)
class Candidate:
    """One distinct kernel the tuner may measure: reached by `pipeline` (pass texts)."""

    key: str
    passes: tuple[str, ...]
    kernel: ir.Kernel = field(compare=False, repr=False)
    aliases: tuple[tuple[str, ...], ...] = field(default=(), compare=False)

    @property
    def pipeline(self) -> str:
        """`--passes` text ("" for the untransformed kernel)."""
        return ",".join(self.passes)

    def features(self) -> dict[str, float]:
        """Which passes (by name) the pipeline uses: the agent's coarse encoding."""
        out: dict[str, float] = {}
        for p in self.passes:
            name = p.split("{", 1)[0]
            out[name] = out.get(name, 0.0) + 1.0
        return out


@dataclass(frozen=True)
class Pruned:
    """A pass instance the mask removed, and why (one line)."""

    pipeline: str
    reason: str


def _one_line(msg: str) -> str:
    line = msg.strip().splitlines()[0] if msg.strip() else "refused"
    # drop a `file:line:col: error: ` prefix: the reason is what matters here
    if ": error: " in line:
        line = line.split(": error: ", 1)[1]
    return line[:200]


def _instances(name: str, kernel: ir.Kernel, target: Target) -> list[Any]:
    """Instances of pass `name` to try on `kernel`: its `space()`, the parameterless pass,
    and for `tile` the feasible sizes of each band's outer loop."""
    from passes.base import registry

    cls = registry().get(name)
    if cls is None:
        return []
    out: list[Any] = []
    seen: set[str] = set()

    def add(p: Any) -> None:
        t = p.to_text()
        if t not in seen:
            seen.add(t)
            out.append(p)

    if name in CHOOSES_ITSELF:
        add(cls())
    if name not in AUTO_ONLY:
        for p in cls.space(kernel, target):
            add(p)
    if name == "tile":
        for p in _tile_grid(kernel):
            add(p)
    return out


def _tile_grid(kernel: ir.Kernel) -> list[Any]:
    """`tile{A=t,B=t,...}`: the outer loop of every band tiled by the same `t`, for `t` from
    the capacity module's candidate grid (`tile_candidates` of the smallest extent), largest
    first; the caller checks capacity and the tuner keeps the MAX_TILE_OPTIONS largest
    that fit (smaller tiles only add overhead per tile)."""
    from passes import _rewrite as R
    from passes.tile import Tile, _default_bands

    from ..capacity.tiles import tile_candidates

    sizes = kernel.size_values()
    outer = []
    for band in _default_bands(kernel):
        name0, loop0 = band[0]
        ext = R.loop_extent(loop0, sizes) or 0
        if ext > 1:
            outer.append((name0, ext))
    if not outer:
        return []
    smallest = min(e for _, e in outer)
    vals = sorted((v for v in tile_candidates(smallest) if v < smallest or len(outer) == 1), reverse=True)
    return [Tile(tuple((n, t) for n, _ in outer)) for t in vals]


def is_flash(kernel: ir.Kernel) -> bool:
    """The kernel is marked `@flash` (the `flash_attention` pass)."""
    first = kernel.body[0] if kernel.body else None
    return isinstance(first, ir.For) and first.annotation("flash") is not None


@dataclass
class Step:
    """The result of applying one instance at a node: a new kernel, or a prune reason."""

    text: str
    kernel: ir.Kernel | None
    reason: str = ""
    refusal: str = ""  # the refusal's class (`UnknownLoop`, `CapacityExceeded`, ...), "" when none


def apply_masked(kernel: ir.Kernel, p: Any, target: Target) -> Step:
    """Apply pass instance `p`; refuse (with the reason) if it is illegal, changes
    nothing, or the result does not fit the target's on-chip memories. Computed once per
    canonical kernel, pass text and target in a process (`memo.py`)."""
    return _APPLIED.get(kernel, target, p.to_text(), lambda: _apply_masked(kernel, p, target))


def _apply_masked(kernel: ir.Kernel, p: Any, target: Target) -> Step:
    from passes.base import PipelineError

    from ..capacity import check_kernel_capacity
    from ..diagnostics import AscxError

    text = p.to_text()
    try:
        out = p.apply(kernel, target)
    except (AscxError, PipelineError) as e:
        return Step(text, None, f"illegal: {_one_line(str(e))}", type(e).__name__)
    except (AssertionError, ValueError, KeyError, IndexError, TypeError) as e:  # a pass bug: masked, said
        return Step(text, None, f"pass error: {_one_line(f'{type(e).__name__}: {e}')}")
    if print_kernel(out) == print_kernel(kernel):
        return Step(text, None, "no change")
    if out.buffers and any(b.kind == "local" for b in out.buffers):
        try:
            res = check_kernel_capacity(out, target, hints=False)
        except AscxError as e:
            return Step(text, None, f"capacity: {_one_line(str(e))}")
        if res.status != "sat":
            return Step(text, None, f"capacity {res.status}: {_one_line(res.message)}")
    return Step(text, out)


_APPLIED: KernelMemo[Step] = KernelMemo()


class Node:
    """A state of the staged search: the kernel after `passes`, at stage `stage`."""

    def __init__(self, space: "SearchSpace", kernel: ir.Kernel, passes: tuple[str, ...], stage: int) -> None:
        self.space = space
        self.kernel = kernel
        self.passes = passes
        self.stage = stage

    @property
    def done(self) -> bool:
        """Past the last stage, or a `@flash` kernel: the lowering emits a flash kernel whole
        (`lower/flash.py`), so a later pass either leaves its code unchanged (`multicore`:
        the same Ascend C, measured again for nothing) or undoes the flash form."""
        return self.stage >= len(self.space.stages) or is_flash(self.kernel)

    def actions(self) -> list[Step]:
        """The legal actions at this stage (pruned ones are recorded in the space)."""
        if self.done:
            return []
        return self.space._expand(self.kernel, self.passes, self.stage)

    def child(self, step: Step | None) -> "Node":
        """Take `step` (None = skip this stage)."""
        if step is None:
            return Node(self.space, self.kernel, self.passes, self.stage + 1)
        assert step.kernel is not None
        return Node(self.space, step.kernel, self.passes + (step.text,), self.stage + 1)


class SearchSpace:
    """Every distinct candidate kernel reachable through the staged pass sequence."""

    def __init__(self, kernel: ir.Kernel, target: Target, stages: Sequence[str] = DEFAULT_STAGES) -> None:
        self.kernel = kernel
        self.target = target
        self.stages = tuple(stages)
        self.candidates: list[Candidate] = []
        self.by_key: dict[str, Candidate] = {}
        self.pruned: list[Pruned] = []
        self._expanded: dict[tuple[str, int], list[Step]] = {}
        self._index: dict[str, int] = {}
        self.truncated = False
        self.complete = False  # every candidate enumerated (`build`)
        self.eager = 0  # leading stages a strategy should expand in full (the `--allow` precision stages)

    # ---- building -----------------------------------------------------------------
    @classmethod
    def build(cls, kernel: ir.Kernel, target: Target, stages: Sequence[str] = DEFAULT_STAGES,
              max_candidates: int = MAX_CANDIDATES) -> "SearchSpace":
        sp = cls(kernel, target, stages)
        sp._enumerate(max_candidates)
        sp.complete = not sp.truncated
        return sp

    def root(self) -> Node:
        return Node(self, self.kernel, (), 0)

    def _expand(self, kernel: ir.Kernel, passes: tuple[str, ...], stage: int) -> list[Step]:
        key = (kernel_key(kernel, self.target), stage)
        if key in self._expanded:
            return self._expanded[key]
        steps = []
        grid_ok = 0
        name = self.stages[stage]
        for p in _instances(name, kernel, self.target):
            is_grid = name == "tile" and p.to_text() not in self._space_texts(name, kernel)
            if is_grid and grid_ok >= MAX_TILE_OPTIONS:
                break
            st = apply_masked(kernel, p, self.target)
            if st.kernel is None:
                self.pruned.append(Pruned(",".join(passes + (st.text,)), st.reason))
            else:
                grid_ok += is_grid
                steps.append(st)
        self._expanded[key] = steps
        return steps

    def _space_texts(self, name: str, kernel: ir.Kernel) -> set[str]:
        from passes.base import registry

        return {p.to_text() for p in registry()[name].space(kernel, self.target)} | {name}

    def add(self, kernel: ir.Kernel, passes: tuple[str, ...]) -> Candidate:
        """The candidate for `kernel` (reached by `passes`), registered on first sight;
        another pipeline reaching the same kernel becomes an alias."""
        key = kernel_key(kernel, self.target)
        if key in self.by_key:
            c = self.by_key[key]
            if passes != c.passes and passes not in c.aliases:
                i = self._index[key]
                c = Candidate(c.key, c.passes, c.kernel, c.aliases + (passes,))
                self.candidates[i] = c
                self.by_key[key] = c
            return c
        c = Candidate(key, passes, kernel)
        self._index[key] = len(self.candidates)
        self.candidates.append(c)
        self.by_key[key] = c
        return c

    def reach(self, node: Node) -> Candidate:
        return self.add(node.kernel, node.passes)

    def walk(self, choose: Any) -> Candidate:
        """Follow one trajectory from the root: at each stage `choose(node, options)`
        returns an index into options (None = skip, then the legal actions)."""
        node = self.root()
        while not node.done:
            options: list[Step | None] = [None, *node.actions()]
            node = node.child(options[choose(node, options)])
        return self.reach(node)

    def _enumerate(self, limit: int, deadline: float | None = None) -> None:
        import time

        for _ in self.iter_dfs():
            if len(self.candidates) >= limit or (deadline is not None and time.monotonic() > deadline):
                self.truncated = True
                return

    def describe(self, limit: int = MAX_CANDIDATES, seconds: float | None = None) -> dict[str, Any]:
        """The space as data, without measuring: enumerate it (at most `limit` candidates,
        `seconds` of wall time) and give each stage's knob, the domain of pass instances
        the mask let through anywhere in the tree ("skip" first), the candidates' count
        (`size`, exact when `complete`) and how many instances the mask pruned."""
        import time

        self._enumerate(limit, None if seconds is None else time.monotonic() + seconds)
        self.complete = not self.truncated
        domains: dict[int, dict[str, None]] = {i: {"skip": None} for i in range(len(self.stages))}
        for (_, stage), steps in self._expanded.items():
            for st in steps:
                domains[stage].setdefault(st.text)
        knobs = [{"stage": name, "pass": name, "domain": list(domains[i])} for i, name in enumerate(self.stages)]
        return {"size": len(self.candidates), "complete": self.complete, "knobs": knobs, "pruned": len(self.pruned)}

    # ---- queries --------------------------------------------------------------------
    def candidate_for(self, pipeline: str | Iterable[str]) -> Candidate | None:
        """The candidate a pipeline text reaches (applied for real, capacity checked;
        None when a pass refuses or the result does not fit)."""
        texts = pipeline if not isinstance(pipeline, str) else ([pipeline] if pipeline else [])
        try:
            kernel, done, refused = self.apply_all(texts, strict=False)
        except Exception:
            return None
        if refused is not None:
            return None
        key = kernel_key(kernel, self.target)
        if key in self.by_key:
            return self.by_key[key]
        return self.add(kernel, tuple(done))

    def apply_all(self, texts: Iterable[str], *, strict: bool) -> tuple[ir.Kernel, list[str], Step | None]:
        """Apply pipeline texts to the space's kernel, masked: (kernel, the instances that
        applied, the first step refused or None). A pass that changes nothing is skipped,
        unless `strict` (then it is the refused step, reason "no change")."""
        from passes.base import parse_pipeline

        kernel = self.kernel
        done: list[str] = []
        for t in texts:
            for p in parse_pipeline(t):
                st = apply_masked(kernel, p, self.target)
                if st.kernel is None:
                    if st.reason == "no change" and not strict:
                        continue
                    return kernel, done, st
                kernel = st.kernel
                done.append(st.text)
        return kernel, done, None

    def iter_dfs(self) -> Any:
        """Candidates in depth-first order of the staged tree (skip first), lazily."""
        seen: set[tuple[str, int]] = set()
        stack = [self.root()]
        yield self.reach(stack[0])
        while stack:
            node = stack.pop()
            if node.done:
                continue
            k = (kernel_key(node.kernel, self.target), node.stage)
            if k in seen:
                continue
            seen.add(k)
            children = [node.child(None)] + [node.child(st) for st in node.actions()]
            for c in children[1:]:
                yield self.reach(c)
            stack.extend(reversed(children))

    def pruned_reasons(self) -> dict[str, str]:
        """pipeline -> reason, first reason per pipeline."""
        out: dict[str, str] = {}
        for p in self.pruned:
            out.setdefault(p.pipeline, p.reason)
        return out
