"""Patterns `row-gather` and `row-scatter-add` (transformer/lower/patterns/row_gather.py):
rows picked by an index tensor move as one DMA per row at a run-time GM offset.

Fast: the plan of the tiled nests names the pattern and its DMA (DataCopy for whole 32 B
blocks, DataCopyPad otherwise), and what does not match says why. Slow (one build): a kernel
with both a gather and a scatter-add with repeated indices matches the interpreter on the
emulator, fenced so that the emulator's hazard checks pass."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel

from .conftest import apply, check_emitted, kernel_text

BOTH = """kernel both(T: f32[V, H], x: f32[N, H], ids: i32[N]) -> (out: f32[N, H], acc: f32[V, H]) {{
  size V = 6
  size H = {h}
  size N = 20
  look: for t in 0..N {{
    for h in 0..H {{
      out[t, h] = T[ids[t], h]
    }}
  }}
  init: for v in 0..V {{
    for h in 0..H {{
      acc[v, h] = 0.0
    }}
  }}
  sc: for t in 0..N {{
    for h in 0..H {{
      acc[ids[t], h] += x[t, h]
    }}
  }}
}}
"""


def _choices(k, pipeline: str):  # type: ignore[no-untyped-def]
    return lower_kernel(apply(k, pipeline)).nests


@pytest.mark.parametrize("h,api", [(32, "DataCopy"), (20, "DataCopyPad")])
def test_tiled_gather_and_scatter_add_are_one_dma_per_row(h: int, api: str) -> None:
    k = kernel_text(BOTH.format(h=h))
    nests = _choices(k, "tile{look.t=4,init.v=2,sc.t=4}")
    by = {n.pattern: n for n in nests if n.pattern in ("row-gather", "row-scatter-add")}
    assert set(by) == {"row-gather", "row-scatter-add"}, [(n.nest, n.pattern, n.fallback) for n in nests]
    assert by["row-gather"].instructions == (api,) and by["row-scatter-add"].instructions == (api,)
    assert not [n for n in nests if n.fallback], [(n.nest, n.fallback) for n in nests if n.fallback]
    code = emit_ascendc(apply(k, "tile{look.t=4,init.v=2,sc.t=4}")).combined()[0]
    assert "SetAtomicAdd<float>();" in code and "SetAtomicNone();" in code
    assert "static_cast<int32_t>(ids_ubLocal.GetValue(t))" in code


def test_a_gather_with_arithmetic_is_scalar_and_says_why() -> None:
    k = kernel_text(BOTH.format(h=32).replace("out[t, h] = T[ids[t], h]", "out[t, h] = T[ids[t], h] * 2.0"))
    nests = _choices(k, "tile{look.t=4,init.v=2,sc.t=4}")
    look = [n for n in nests if n.fallback and "`T` is read through the index tensor" in n.fallback]
    assert look, [(n.nest, n.pattern, n.fallback) for n in nests]
    rg = dict((p, why) for p, _, why in look[0].tried)["row-gather"]
    assert "not a row copy" in rg


@pytest.mark.slow  # one build on the emulator
def test_gather_and_scatter_add_match_the_interpreter_on_the_emulator() -> None:
    k = kernel_text(BOTH.format(h=20))  # ragged rows: DataCopyPad both ways
    check_emitted(apply(k, "tile{look.t=4,init.v=2,sc.t=4},double_buffer"), k, what="row gather + scatter-add")
