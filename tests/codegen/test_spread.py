"""Emitted kernels use every core (issue 14, item 1): the outermost parallel loop of a
single-phase kernel is split over the target's vector cores (AIC cores for a cube kernel)
with GetBlockIdx, blockDim from the target table, contiguous shares with remainders; a
kernel that is not spread says why in the plan; `multicore` still decides when given."""

from __future__ import annotations

import re

import pytest

from documented import ROWS
from transformer.codegen import emit_ascendc
from transformer.lower.lower import lower_kernel
from transformer.lower.spread import worker_bounds
from transformer.targets import get_target

from .conftest import apply, check_emitted, example, kernel_text

# Sizes at which the outermost tile loop of each documented pipeline has more iterations
# than the largest core count of the targets below (48), so every core gets work.
LARGE: dict[str, dict[str, int]] = {
    "add": {"M": 2048, "N": 1024},
    "softmax": {"R": 1024, "C": 1024},
    "layernorm": {"N": 1024, "H": 1024},
    "rmsnorm": {"N": 1024, "H": 1024},
    "attention": {"S": 4096, "D": 64},
    "attention_causal": {"S": 4096, "D": 64},
    "embedding": {"V": 32000, "H": 4096, "N": 4096},
    "cross_entropy": {"R": 4096, "C": 1000},
    "paged_attention": {"B": 240, "NH": 8, "D": 64, "BS": 16, "MB": 8, "NB": 512},
}
VECTOR_ROWS = [(n, p) for n, p in ROWS if n in LARGE and "round_operand" not in p]


def test_every_single_phase_vector_pipeline_is_covered() -> None:
    """The documented vector pipelines are the ones listed in LARGE (a new one must be added)."""
    single = set()
    for name, pipeline in ROWS:
        plan = lower_kernel(apply(example(name), pipeline))
        if plan.kind == "vector" and len(plan.phases) == 1:
            single.add(name)
    assert single == set(LARGE)


@pytest.mark.parametrize("target", ["ascend910b2", "ascend910b4"])
@pytest.mark.parametrize("name,pipeline", VECTOR_ROWS)
def test_documented_vector_pipeline_uses_every_vector_core(name: str, pipeline: str, target: str) -> None:
    tgt = get_target(target)
    k = apply(example(name, LARGE[name]), pipeline, tgt)
    plan = lower_kernel(k, tgt)
    assert plan.kind == "vector" and plan.mode == "AIV_MODE"
    assert plan.block_dim == tgt.aiv_cores, plan.summary()
    assert plan.phases[0].cores == tgt.aiv_cores
    assert f"over {tgt.aiv_cores} of {tgt.aiv_cores} AIV cores" in plan.phases[0].spread


def test_cube_kernel_spreads_over_the_aic_cores() -> None:
    tgt = get_target("ascend910b2")
    k = apply(example("matmul", {"M": 2048, "N": 128, "K": 128}), "tile{mm.i=64,mm.j=64,mm.k=64},double_buffer", tgt)
    plan = lower_kernel(k, tgt)
    assert plan.kind == "cube" and plan.mode == "AIC_MODE"
    assert plan.block_dim == tgt.aic_cores == 24


def test_small_loop_uses_one_core_per_iteration() -> None:
    plan = lower_kernel(apply(example("add", {"M": 256, "N": 1024}), "tile{ew.i=32},double_buffer"))
    assert plan.block_dim == 8
    assert "8 iterations, 1 each" in plan.phases[0].spread


def test_worker_shares_are_contiguous_and_cover_the_loop() -> None:
    for trip, n in [(100, 48), (48, 48), (7, 3), (256, 40), (5, 5)]:
        q, r, _ = worker_bounds(3, trip, n)
        seen: list[int] = []
        for w in range(n):  # the emitted formula: begin = lo + w*q + min(w, r), end = begin + q + (w < r)
            begin = 3 + w * q + min(w, r)
            seen.extend(range(begin, begin + q + (1 if w < r else 0)))
        assert seen == list(range(3, 3 + trip))


def test_explicit_multicore_decides() -> None:
    plan = lower_kernel(apply(example("add", {"M": 2048, "N": 1024}), "tile,double_buffer,multicore{ew=1}"))
    assert plan.block_dim == 1
    assert "@cores(1)" in plan.phases[0].spread
    plan = lower_kernel(apply(example("add", {"M": 2048, "N": 1024}), "tile,double_buffer,multicore{ew=5}"))
    assert plan.block_dim == 5


TWO_PHASES = """
kernel prefix(X: f32[N, C]) -> (Y: f32[N, C]) {
  size N = 64
  size C = 32
  init: for c in 0..C {
    Y[0, c] = X[0, c]
  }
  run: for i in 1..N {
    for c in 0..C {
      Y[i, c] = X[i, c] * 2.0
    }
  }
}
"""

COLSUM = """
kernel colsum(X: f32[N, C]) -> (Y: f32[C]) {
  size N = 64
  size C = 32
  run: for i in 0..N {
    for c in 0..C {
      Y[c] += X[i, c]
    }
  }
}
"""


def test_a_kernel_that_is_not_spread_says_why() -> None:
    # each phase of a multi-phase kernel is spread on its own (tests/codegen/test_spread_phases.py)
    plan = lower_kernel(kernel_text(TWO_PHASES))
    assert [p.cores for p in plan.phases] == [32, 48]
    plan = lower_kernel(kernel_text(COLSUM))
    assert plan.block_dim == 1
    assert re.search(r"not split over cores: `run` carries a \+= reduction into `Y`", plan.phases[0].spread), plan.phases[0].spread


@pytest.mark.slow
@pytest.mark.parametrize("name,pipeline,sizes", [
    # 53 row tiles over 48 cores: 5 workers take 2, the rest 1
    ("softmax", "fuse,tile{rmax.r=2},double_buffer", {"R": 106, "C": 64}),
    # 50 row tiles of an add, under the sanitizers
    ("add", "tile{ew.i=2},double_buffer", {"M": 100, "N": 64}),
])
def test_remainder_split_matches_interpreter(name: str, pipeline: str, sizes: dict[str, int]) -> None:
    k = example(name, sizes)
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.block_dim == 48 and "for the first" in em.plan.phases[0].spread
    assert "GetBlockIdx()" in em.source
    check_emitted(t, k, emitted=em, sanitize=(name == "add"), what=f"{name} {sizes} --passes {pipeline}")
