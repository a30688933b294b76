"""The knob space (`transformer/tune/knobs.py`): every parameter the lowering honours is a
knob, each knob changes the emitted kernel, points are masked by legality and capacity, and
the search over it finds the cube for a batched matmul."""

from __future__ import annotations

import random

import pytest

from transformer.capacity import check_kernel_capacity
from transformer.codegen import emit_ascendc
from transformer.parser import parse
from transformer.tune.db import TuningDB
from transformer.tune.knobs import KnobSpace
from transformer.tune.measurers import EstimateMeasurer
from transformer.tune.tuner import tune

from .conftest import small

BMM = """kernel bmm(A: f16[B, M, K], W: f16[B, K, N]) -> (C: f32[B, M, N]) {
  size B = 4
  size M = 128
  size K = 64
  size N = 128
  mm: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        C[b, i, j] = 0.0
        for k in 0..K { C[b, i, j] += f32(A[b, i, k]) * f32(W[b, k, j]) }
      }
    }
  }
}
"""


def _emit(c, target) -> str:
    return emit_ascendc(c.kernel, target, source_name="k.ir", pipeline=c.pipeline).source


def _two_plans(ks: KnobSpace, i: int, rng: random.Random, tries: int = 40):
    """Two points differing only in knob `i` that reach two different candidates."""
    names = [k.name for k in ks.knobs]
    for t in range(tries):
        base = list(ks.default() if t == 0 else ks.random_point(rng))
        if ks.knobs[i].name.startswith("tile:"):
            base[names.index("tile")] = ks.knobs[names.index("tile")].domain.index("sizes")
        got = []
        for v in [base[i]] + rng.sample(range(len(ks.knobs[i].domain)), len(ks.knobs[i].domain)):
            p = list(base)
            p[i] = v
            c, _ = ks.realize(tuple(p))
            if c is not None and all(c.key != g.key for g in got):
                got.append(c)
            if len(got) == 2:
                return got
    return None


CASES = [
    ("bmm", lambda: parse(BMM, "bmm.ir"), ()),
    ("matmul", lambda: small("matmul", M=128, N=128, K=256), ()),
    # 21 knobs, each realized at several points of a flash kernel: ~4 s of CPU (S=64 is slower: fewer
    # legal values, more tries)
    pytest.param("attention", lambda: small("attention", S=128, D=64), ("round_operand",), marks=pytest.mark.slow),
    ("conv2d", lambda: small("conv2d", N=1, C=16, H=10, W=10, F=32), ()),
]


@pytest.mark.parametrize("name,make,allow", CASES, ids=["bmm", "matmul", "attention", "conv2d"])
def test_two_values_of_each_knob_give_different_emitted_kernels(name, make, allow, target):
    ks = KnobSpace.build(make(), target, allow)
    rng = random.Random(7)
    missing = []
    for i, knob in enumerate(ks.knobs):
        pair = _two_plans(ks, i, rng)
        if pair is None:
            missing.append(knob.name)
            continue
        a, b = pair
        assert _emit(a, target) != _emit(b, target), (knob.name, a.pipeline, b.pipeline)
    # a knob no two points can set differently here would be dead weight in the space
    assert not missing, missing


def test_the_knobs_cover_the_parameters_the_lowering_honours(target):
    mm = {k.name: k for k in KnobSpace.build(small("matmul", M=256, N=256, K=512), target).knobs}
    assert {"gemm", "tile", "tile:mm.i", "tile:mm.j", "tile:mm.k", "unroll:mm.k", "double_buffer", "multicore"} <= set(mm)
    assert any(v.startswith("gemm{m=") and "k0=" in v for v in mm["gemm"].domain)  # blocks and K steps
    assert "double_buffer{stages=3}" in mm["double_buffer"].domain  # the buffer depth
    assert any("=" in v for v in mm["multicore"].domain)  # the core split
    at = {k.name: k for k in KnobSpace.build(small("attention", S=4096, D=64), target, ("round_operand",)).knobs}
    assert {"flash_attention{q=64,g=1}", "flash_attention{q=128,g=1}", "flash_attention{q=64,g=2}"} <= \
        set(at["flash_attention"].domain)  # the flash schedule's query tile and group
    assert "online_softmax{block=32}" in at["online_softmax"].domain
    assert "flash_attention" not in {k.name for k in KnobSpace.build(small("attention", S=256, D=64), target).knobs}
    cv = {k.name: k for k in KnobSpace.build(small("conv2d", N=1, C=16, H=10, W=10, F=32), target).knobs}
    assert any(v.startswith("conv_gemm{m=") for v in cv["conv_gemm"].domain) and "layout" in cv


@pytest.mark.parametrize("name,make,allow", [
    ("matmul", lambda: small("matmul"), ()),
    ("attention", lambda: small("attention", S=1024, D=64), ("round_operand",)),
    ("conv2d", lambda: small("conv2d"), ()),
], ids=["matmul", "attention", "conv2d"])
def test_the_real_spaces_are_large(name, make, allow, target):
    assert KnobSpace.build(make(), target, allow).size >= 10 ** 4


def test_every_realized_point_is_legal_and_fits_and_pruned_points_say_why(target):
    ks = KnobSpace.build(parse(BMM, "bmm.ir"), target)
    rng = random.Random(3)
    reached = [ks.realize(ks.random_point(rng)) for _ in range(30)]
    cands = [c for c, _ in reached if c is not None]
    assert cands and ks.pruned
    for c in cands:
        if any(b.kind == "local" for b in c.kernel.buffers):
            assert check_kernel_capacity(c.kernel, target).status == "sat", c.pipeline
    assert all(why and "\n" not in why for why in ks.pruned.values())


@pytest.mark.slow  # the agent at full effort over a 10^6-point space: ~5 s of CPU
def test_bmm_finds_the_cube(tmp_path, target):
    """Acceptance: a batched matmul tuned at --budget 20 --measure estimate runs on the cube
    (the staged space's parameterless `tile` chooses nothing here: all of its evaluations
    were scalar code)."""
    k = parse(BMM, "bmm.ir")
    r = tune(k, target, budget=20, measurer=EstimateMeasurer(), db=TuningDB(tmp_path / "t.sqlite"), seed=0)
    scopes = {b.scope for b in r.best.kernel.buffers if b.kind == "local"}
    assert {"l0a", "l0b", "l0c"} <= scopes, r.best.pipeline
    assert r.best_m.time_us < r.baseline_m.time_us / 50
