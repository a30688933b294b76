"""The extents of a `@gemm` cube kernel, fixed or read at run time (docs/codegen.md, "Run-time sizes").

`gemm.lower_gemm_phase` writes its loops over the C tiles, the L1 K blocks and the tails
from one `GemmDims`: at fixed sizes every field is an `int` (the C++ text is a constant, so
static kernels keep their fully specialised code byte for byte); when the lowering reads
ranged sizes at run time (`Lowering(runtime=...)`), the extents that depend on them are C++
names: a ranged size itself (a member read from the tiling struct), or a `TilingField` the
host tiling function computes from the sizes (the tile counts, the C tiles of the launch,
the AIC blocks used, which is the launch's blockDim). The tails stay in the kernel
(`mLen = min(BM, M - m0)`, ...): the padded-fractal tail handling of the static code
serves every size, so a run-time M, N or K needs no `multiple of 16`.

Why a module of its own: the static path and the run-time path differ only in where these
numbers come from; keeping that decision here leaves one emitter (gemm.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from .. import ir
from ..intexpr import names_in
from .plan import NoRuntimeLowering, TilingField

if TYPE_CHECKING:
    from .gemm import Blocks, GemmNest
    from .lower import Lowering

Dim = Union[int, str]  # a constant, or the C++ name of a run-time value
ANNOTATION = "gemm"
FRACTAL = 16


@dataclass(frozen=True)
class GemmDims:
    """M, N, K; the C tile counts along M and N; the C tiles of the launch; the L1 K blocks;
    the AIC blocks used; whether the last K block may have a 16-row padding tail."""

    m: Dim
    n: Dim
    k: Dim
    m_tiles: Dim
    n_tiles: Dim
    tiles: Dim
    k_blocks: Dim
    cores: Dim
    k_tail: bool


def gemm_only_tensors(kernel: ir.Kernel) -> set[str]:
    """The tensors used only by top-level `@gemm`-marked nests: their extents and strides are
    the cube kernel's own (`gemm_dims`), so a run-time size may be any of their extents."""
    inside: set[str] = set()
    outside: set[str] = set()
    for s in kernel.body:
        used = ir.names_used((s,))
        (inside if isinstance(s, ir.For) and s.annotation(ANNOTATION) is not None else outside).update(used)
    return inside - outside


def _ceil_div(x: Dim, b: int) -> Dim:
    return -(-x // b) if isinstance(x, int) else f"({x} + {b - 1}) / {b}"


def gemm_dims(low: "Lowering", nest: ir.Stmt, g: "GemmNest", bl: "Blocks", aic: int) -> GemmDims:
    """The dims of `g` (blocks `bl`, on up to `aic` AIC): constants at fixed sizes, run-time
    values (each size or tiling field that depends on a run-time size) otherwise."""
    assert isinstance(nest, ir.For)
    batched = (len(nest.body) == 1 and isinstance(nest.body[0], ir.For) and len(nest.body[0].body) == 1
               and isinstance(nest.body[0].body[0], ir.For))  # `for b { for i { for j {..} } }` (match_gemm)
    li = nest.body[0] if batched else nest
    assert isinstance(li, ir.For) and isinstance(li.body[0], ir.For)
    lj = li.body[0]
    lk = lj.body[1]
    assert isinstance(lk, ir.For)

    def extent(lp: ir.For, fixed: int) -> Dim:
        if not low.runtime or not set(names_in(lp.hi)) & low.runtime:
            return fixed
        return low.ex_index(lp.hi)

    m, n, k = extent(li, g.m), extent(lj, g.n), extent(lk, g.k)
    dims = (m, n, k, extent(nest, g.batch) if batched else 1)
    if all(isinstance(x, int) for x in dims):
        mt, nt = -(-g.m // bl.m), -(-g.n // bl.n)
        tiles = g.batch * mt * nt
        return GemmDims(g.m, g.n, g.k, mt, nt, tiles, -(-g.k // bl.k), max(1, min(aic, tiles)), g.k % FRACTAL != 0)
    if batched:
        raise NoRuntimeLowering(f"`{g.label}`: a batched `@gemm` with run-time sizes")

    def field(name: str, value: Dim, comment: str) -> Dim:
        if isinstance(value, int):
            return value
        f = low.names.fresh(name)
        low.tiling.append(TilingField(f, value, comment))
        return f

    mt = field("gemmMTiles", _ceil_div(m, bl.m), f"C tiles of {bl.m} rows along M")
    nt = field("gemmNTiles", _ceil_div(n, bl.n), f"C tiles of {bl.n} columns along N")
    tiles = field("gemmTiles", mt * nt if isinstance(mt, int) and isinstance(nt, int) else f"{mt} * {nt}",
                  "C tiles of the launch")
    kb = field("gemmKBlocks", _ceil_div(k, bl.k), f"L1 K blocks of {bl.k}")
    cores = field("gemmCores", max(1, min(aic, tiles)) if isinstance(tiles, int)
                  else f"ascx_max<int32_t>(ascx_min<int32_t>({tiles}, {aic}), 1)",
                  "AIC blocks used: the blockDim (block w runs tiles w, w + blockDim, ...)")
    k_tail = g.k % FRACTAL != 0 if isinstance(k, int) else True
    return GemmDims(m, n, k, mt, nt, tiles, kb, cores, k_tail)
