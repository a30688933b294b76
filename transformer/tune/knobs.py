"""The parameter space as data: every pass parameter the lowering honours is a knob.

Why: the staged space (`space.py`) offers each pass mostly in its parameterless form (the
pass chooses), so the tuner could not reach what decides a real kernel's speed: the cube
blocks of `gemm` / `conv_gemm`, the flash schedule's query tile and group, the online-softmax
block, the tile size of every loop of a band (a batched matmul reaches the cube only through
explicit tiles of its batch, row, column and K loops), unroll factors, the core split, layouts
and the pipeline depth. Here each of them is a `Knob` with a domain of values; a point of the
space picks one value per knob, and `KnobSpace.realize` turns it into a pass pipeline applied
for real, in the fixed stage order `ORDER`.

Masking, in two steps:
- *statically* (when the space is built), each value must be legal and fit on its own:
  `gemm` / `conv_gemm` blocks are applied to the kernel (the pass's own checks and the
  capacity proof), tile sizes come from the capacity module's candidate grid below the loop's
  extent, unroll factors below its trip count, `flash_attention{q,g}` values the pass accepts;
- *when a point is realized*, its passes are applied through `space.apply_masked`: a refusal
  (legality) or a result the capacity proof does not show to fit prunes the point, with its
  one-line reason; a pass with nothing to do is skipped (the point equals the one without it).
So, as for the staged space, no point the tuner measures breaks a dependence or overflows a
buffer. Equivalent points are one candidate (`SearchSpace.add`: the canonical kernel key).

    ks = KnobSpace.build(kernel, target)
    ks.size                                  # points in the product of the domains
    ks.realize(ks.default())                 # (Candidate, None) or (None, reason)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .. import ir
from .space import Candidate, SearchSpace, apply_masked, is_flash

if TYPE_CHECKING:
    from ..targets import Target

SKIP = "skip"
TILE_SIZES = "sizes"  # the `tile` knob's value meaning "the sizes of the tile:LOOP knobs"
FULL = "full"  # a tile:LOOP value: the loop is not tiled
TILE_VALUES = 5  # sizes per loop: the largest candidates below the extent
TILE_LOOPS_PER_NEST = 4
TILE_KNOBS = 8
UNROLL_FACTORS = (2, 4)
UNROLL_KNOBS = 2
GEMM_MN = (32, 64, 128, 256)
GEMM_K = (64, 128, 256, 512)
GEMM_K0 = (32, 64, 128)
CONV_M = (16, 32, 64, 128)
CONV_ROWS = (1, 2, 4, 8)
CONV_K0 = (16, 32, 64, 128)
DB_STAGES = (2, 3)
# The stage order of a point's pipeline (a knob's pass runs at its stage).
ORDER = ("round_operand", "reciprocal", "fuse", "online_softmax", "flash_attention", "interchange", "layout",
         "gemm", "conv_gemm", "tile", "unroll", "double_buffer", "multicore")


@dataclass(frozen=True)
class Knob:
    """One tunable choice: `domain[0]` is the default (skip / the pass chooses)."""

    name: str  # "gemm", "tile", "tile:mm.i", "unroll:mm.k", ...
    stage: str  # the pass it parametrises (an ORDER entry)
    domain: tuple[str, ...]
    doc: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"knob": self.name, "pass": self.stage, "domain": list(self.domain), "doc": self.doc}


Point = tuple[int, ...]  # an index into each knob's domain


@dataclass
class KnobSpace:
    """The product of the knobs' domains over one kernel at its sizes on a target."""

    space: SearchSpace
    knobs: list[Knob]
    pruned: dict[Point, str] = field(default_factory=dict)
    _steps: dict[tuple[str, ...], ir.Kernel | str] = field(default_factory=dict, repr=False)
    _points: dict[Point, Candidate | None] = field(default_factory=dict, repr=False)

    # ---- building -------------------------------------------------------------------
    @classmethod
    def build(cls, kernel: ir.Kernel, target: "Target", allow: Sequence[str] = (),
              space: SearchSpace | None = None) -> "KnobSpace":
        """The knobs of `kernel` (the precision passes only when `allow` names them)."""
        sp = space if space is not None else SearchSpace(kernel, target)
        return cls(sp, _knobs(kernel, target, tuple(allow)))

    @property
    def size(self) -> int:
        """Points of the space: the product of the domains, the tile:LOOP knobs counted
        only under `tile=sizes` (they mean nothing otherwise)."""
        loops = [k for k in self.knobs if k.name.startswith("tile:")]
        rest = math.prod(len(k.domain) for k in self.knobs if k not in loops and k.name != "tile")
        tile = next((k for k in self.knobs if k.name == "tile"), None)
        if tile is None:
            return rest
        return rest * ((len(tile.domain) - 1) + math.prod(len(k.domain) for k in loops))

    def default(self) -> Point:
        return tuple(0 for _ in self.knobs)

    def describe(self) -> dict[str, Any]:
        return {"size": self.size, "knobs": [k.to_json() for k in self.knobs]}

    def values(self, point: Point) -> dict[str, str]:
        return {k.name: k.domain[i] for k, i in zip(self.knobs, point)}

    # ---- sampling (for the search) --------------------------------------------------
    def random_point(self, rng: random.Random) -> Point:
        return tuple(rng.randrange(len(k.domain)) for k in self.knobs)

    def mutate(self, point: Point, rng: random.Random, n: int = 1) -> Point:
        """`point` with `n` knobs (among those with a choice) set to another value."""
        free = [i for i, k in enumerate(self.knobs) if len(k.domain) > 1]
        if not free:
            return point
        out = list(point)
        for i in rng.sample(free, min(n, len(free))):
            out[i] = rng.choice([v for v in range(len(self.knobs[i].domain)) if v != out[i]])
        return tuple(out)

    def crossover(self, a: Point, b: Point, rng: random.Random) -> Point:
        """Each knob's value from `a` or `b` (uniform crossover)."""
        return tuple(x if rng.random() < 0.5 else y for x, y in zip(a, b))

    # ---- realizing --------------------------------------------------------------------
    def texts(self, point: Point, kernel: ir.Kernel, stage: str) -> list[str]:
        """The pass texts stage `stage` contributes for `point` on the current `kernel`."""
        v = self.values(point)
        if stage == "tile":
            mode = v.get("tile", SKIP)
            if mode == SKIP:
                return []
            if mode != TILE_SIZES:
                return [mode]
            from ..loops import loop_names

            names = loop_names(kernel)
            sizes, seen = [], set()
            for k, s in v.items():
                ref = names.get(k.split(":", 1)[1]) if k.startswith("tile:") and s != FULL else None
                if ref is None or ref.path in seen or _on_cube(kernel, ref.path[0]):
                    continue  # not in this kernel, named twice (after interchange), or on the cube
                seen.add(ref.path)
                sizes.append((k.split(":", 1)[1], s))
            return ["tile{" + ",".join(f"{n}={s}" for n, s in sizes) + "}"] if sizes else []
        if stage == "unroll":
            return [f"unroll{{{k.split(':', 1)[1]}={f}}}" for k, f in v.items()
                    if k.startswith("unroll:") and f != SKIP]
        val = v.get(stage, SKIP)
        return [] if val == SKIP else [val]

    def realize(self, point: Point) -> tuple[Candidate | None, str]:
        """The candidate `point` reaches (registered in `self.space`), or (None, why it was
        pruned). Steps are cached by pipeline prefix, so neighbouring points cost little."""
        if point in self._points:
            c = self._points[point]
            return c, self.pruned.get(point, "")
        from passes.base import parse_pipeline

        kernel = self.space.kernel
        done: tuple[str, ...] = ()
        for stage in ORDER:
            if is_flash(kernel):
                break
            for text in self.texts(point, kernel, stage):
                key = done + (text,)
                got = self._steps.get(key)
                if got is None:
                    try:
                        p = parse_pipeline(text)[0]
                    except Exception as e:  # a malformed text is a bug here: said, masked
                        got = f"bad pass text `{text}`: {e}"
                    else:
                        st = apply_masked(kernel, p, self.space.target)
                        skip = st.reason == "no change" or st.refusal == "UnknownLoop"
                        got = st.kernel if st.kernel is not None else ("" if skip else st.reason)
                    self._steps[key] = got
                if isinstance(got, str):
                    if got == "":
                        # nothing to do, or the loop it names is gone (an earlier knob fused
                        # or tiled it): the point is the one without this pass
                        continue
                    why = f"{','.join(key)}: {got}"
                    self.pruned[point] = why
                    self._points[point] = None
                    return None, why
                kernel, done = got, key
        c = self.space.add(kernel, done)
        self._points[point] = c
        return c, ""

    def point_of(self, c: Candidate) -> Point | None:
        """A point known to reach `c` (None if no realized point does)."""
        return next((p for p, x in self._points.items() if x is not None and x.key == c.key), None)


# --------------------------------------------------------------------------------------
# the knobs of a kernel


def _knobs(kernel: ir.Kernel, target: "Target", allow: tuple[str, ...]) -> list[Knob]:
    from passes.base import registry

    from .precision import PRECISION_PASSES

    reg = registry()
    fused = _after(kernel, "fuse", target)
    out: list[Knob] = []

    def pass_knob(name: str, on: Sequence[ir.Kernel], extra: Sequence[str] = (), doc: str = "") -> None:
        cls = reg.get(name)
        if cls is None:
            return
        vals: dict[str, None] = {}
        for k in on:
            for p in cls.space(k, target):
                vals.setdefault(p.to_text())
        for e in extra:
            vals.setdefault(e)
        if vals:
            out.append(Knob(name, name, (SKIP, *vals), doc))

    for name in PRECISION_PASSES:
        if name in allow:
            pass_knob(name, [kernel, fused], doc="changes results within the outputs' tolerance (verified)")
    pass_knob("fuse", [kernel], extra=["fuse"] if fused is not kernel else [], doc="merge producer/consumer nests")
    pass_knob("online_softmax", [kernel, fused], doc="stream softmax over key blocks of this size")
    if "round_operand" in allow:
        flash = _flash_values(kernel, target)
        if flash:
            out.append(Knob("flash_attention", "flash_attention", (SKIP, *flash),
                            "one FlashAttention mix kernel: query tile q, tiles g per pass over K and V"))
    pass_knob("interchange", [kernel], doc="swap two loops of a perfect nest")
    pass_knob("layout", [kernel], doc="a tensor's layout")
    gemm = _gemm_values(kernel, fused, target)
    if gemm:
        out.append(Knob("gemm", "gemm", (SKIP, *gemm), "matmul nests on the cube: blocks m, n (C tile), k (L1), k0 (L0)"))
    conv = _conv_values(kernel, target)
    if conv:
        out.append(Knob("conv_gemm", "conv_gemm", (SKIP, *conv),
                        "convolutions on the cube: filters m, output rows, channels c per L1 block, L0 slice k0"))
    loops = _tile_loops([kernel] + ([fused] if fused is not kernel else []))
    out.append(Knob("tile", "tile", (SKIP, "tile") + ((TILE_SIZES,) if loops else ()),
                    "stage tiles on chip: skip, the capacity solver's sizes, or the tile:LOOP sizes"))
    for name, vals in loops:
        out.append(Knob(f"tile:{name}", "tile", (FULL, *map(str, vals)), f"tile size of loop `{name}` (full: untiled)"))
    for name, vals in _unroll_loops(kernel):
        out.append(Knob(f"unroll:{name}", "unroll", (SKIP, *map(str, vals)), f"unroll factor of loop `{name}`"))
    out.append(Knob("double_buffer", "double_buffer",
                    (SKIP, "double_buffer", *(f"double_buffer{{stages={s}}}" for s in DB_STAGES if s != 2)),
                    "pipeline the staging loops, with this many buffers"))
    mc = _multicore_values(kernel, target)
    if mc:
        out.append(Knob("multicore", "multicore", (SKIP, *mc), "split a parallel loop over this many cores"))
    return out


def _after(kernel: ir.Kernel, text: str, target: "Target") -> ir.Kernel:
    """`kernel` after pass `text` (itself when the pass refuses or does nothing)."""
    from passes.base import parse_pipeline

    st = apply_masked(kernel, parse_pipeline(text)[0], target)
    return st.kernel if st.kernel is not None else kernel


def _masked(kernel: ir.Kernel, texts: Sequence[str], target: "Target") -> list[str]:
    """The texts whose pass applies to `kernel` and fits (the static mask)."""
    from passes.base import parse_pipeline

    return [t for t in texts if apply_masked(kernel, parse_pipeline(t)[0], target).kernel is not None]


def _gemm_values(kernel: ir.Kernel, fused: ir.Kernel, target: "Target") -> list[str]:
    from passes.gemm import Gemm
    from transformer.lower.gemm import match_gemm

    for k in (kernel, fused):
        if not Gemm.space(k, target):
            continue
        dims = [g for s in k.body if isinstance(s, ir.For) and not isinstance(g := match_gemm(k, s), str)]
        mx = max((max(g.m, g.n) for g in dims), default=256)
        kk = max((g.k for g in dims), default=512)
        texts = [f"gemm{{m={m},n={n},k={kb},k0={k0}}}" for m in GEMM_MN for n in GEMM_MN for kb in GEMM_K for k0 in GEMM_K0
                 if m <= _up16(mx) and n <= _up16(mx) and kb <= _up16(kk) and k0 <= kb and kb % k0 == 0]
        return ["gemm", *_masked(k, texts, target)]
    return []


def _conv_values(kernel: ir.Kernel, target: "Target") -> list[str]:
    from passes.conv_gemm import ConvGemm
    from transformer.lower.conv import match_conv

    if not ConvGemm.space(kernel, target):
        return []
    cv = next(c for s in kernel.body if isinstance(s, ir.For) and not isinstance(c := match_conv(kernel, s), str))
    chans = sorted({c for c in (cv.c, cv.c // 2, cv.c // 4, 16, 8) if 1 <= c <= cv.c}, reverse=True)[:3]
    texts = [f"conv_gemm{{m={m},rows={r},c={c},k0={k0}}}" for m in CONV_M for r in CONV_ROWS for c in chans for k0 in CONV_K0
             if m <= _up16(cv.f) and r <= cv.oh]
    return ["conv_gemm", *_masked(kernel, texts, target)]


def _flash_values(kernel: ir.Kernel, target: "Target") -> list[str]:
    """`flash_attention` and its q / g choices the pass accepts on the rounded kernel."""
    from passes.base import parse_pipeline
    from passes.round_operand import RoundOperand

    for p in RoundOperand.space(kernel, target):
        st = apply_masked(kernel, p, target)
        if st.kernel is None:
            continue
        texts = ["flash_attention"] + [f"flash_attention{{q={q},g={g}}}" for q in (64, 128) for g in (1, 2, 3, 4)]
        ok = [t for t in texts if apply_masked(st.kernel, parse_pipeline(t)[0], target).kernel is not None]
        if ok:
            return ok
    return []


def _multicore_values(kernel: ir.Kernel, target: "Target") -> list[str]:
    from passes.multicore import Multicore

    out = []
    n = int(target.cores)
    for p in Multicore.space(kernel, target):
        out.append(p.to_text())
        out += [f"multicore{{{p.loop}={c}}}" for c in (n // 2, n // 4) if c >= 2]  # type: ignore[attr-defined]
    return _masked(kernel, out, target)


def _on_cube(kernel: ir.Kernel, i: int) -> bool:
    """Top-level statement `i` is a `@gemm` / `@conv` nest (`tile` refuses its loops)."""
    s = kernel.body[i] if i < len(kernel.body) else None
    return isinstance(s, ir.For) and (s.annotation("gemm") is not None or s.annotation("conv") is not None)


def _qualified_names(kernel: ir.Kernel) -> dict[tuple[int, ...], str]:
    """path -> a name of the loop there, `label.var` when it has one (it survives
    `interchange`, where a bare label moves with the nest's outer position)."""
    from ..loops import loop_names, loop_names_by_path

    out = dict(loop_names_by_path(kernel))
    for n, ref in sorted(loop_names(kernel).items()):
        if "." in n and "." not in out.get(ref.path, ""):
            out[ref.path] = n
    return out


def _up16(v: int) -> int:
    return -(-v // 16) * 16


def _tile_loops(kernels: Sequence[ir.Kernel]) -> list[tuple[str, list[int]]]:
    """(loop name, sizes) of the loops `tile` may take: per nest the first
    TILE_LOOPS_PER_NEST loops with a constant extent > 1, depth first; sizes: the largest
    TILE_VALUES of the capacity module's candidates below the extent."""
    from passes import _rewrite as R

    from ..capacity.tiles import tile_candidates

    out: dict[str, list[int]] = {}
    for k in kernels:
        sizes = k.size_values()
        names = _qualified_names(k)
        per_nest: dict[int, int] = {}
        for path, name in sorted(names.items()):
            if name in out or per_nest.get(path[0], 0) >= TILE_LOOPS_PER_NEST:
                continue
            loop = _loop_at(k, path)
            ext = R.loop_extent(loop, sizes) if loop is not None else None
            if not ext or ext <= 1:
                continue
            vals = sorted((v for v in tile_candidates(ext) if v < ext), reverse=True)[:TILE_VALUES]
            if vals:
                out[name] = vals
                per_nest[path[0]] = per_nest.get(path[0], 0) + 1
            if len(out) >= TILE_KNOBS:
                return list(out.items())
    return list(out.items())


def _unroll_loops(kernel: ir.Kernel) -> list[tuple[str, list[int]]]:
    """(loop, factors) for the innermost loops (UNROLL_KNOBS of them) with constant trips."""
    from passes import _rewrite as R

    sizes = kernel.size_values()
    out: list[tuple[str, list[int]]] = []
    for path, name in sorted(_qualified_names(kernel).items(), key=lambda kv: -len(kv[0])):
        loop = _loop_at(kernel, path)
        if loop is None or any(isinstance(s, ir.For) for s in loop.body) or "." not in name:
            continue
        ext = R.loop_extent(loop, sizes)
        fs = [f for f in UNROLL_FACTORS if ext and f < ext]
        if fs and all(n != name for n, _ in out):
            out.append((name, fs))
        if len(out) >= UNROLL_KNOBS:
            break
    return out


def _loop_at(kernel: ir.Kernel, path: tuple[int, ...]) -> ir.For | None:
    stmts: Sequence[ir.Stmt] = kernel.body
    node: ir.Stmt | None = None
    for i in path:
        if i >= len(stmts):
            return None
        node = stmts[i]
        stmts = node.body if isinstance(node, ir.For) else ()
    return node if isinstance(node, ir.For) else None
