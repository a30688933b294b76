"""Differential tests: each pass (and contraction in particular) on every example, the
transformed kernel interpreted against the original on fresh random inputs."""

from __future__ import annotations

import pytest

from passes_testutil import SMALL_SIZES, apply, equivalent, example, roundtrips

PIPELINES = {
    "add": ["interchange{ew,ew.j}", "unroll{ew.j=3}", "multicore{ew=4}", "unroll{ew=full}"],
    "softmax": ["fuse", "fuse{rmax,expo}", "fuse{expo,norm}", "fuse,multicore{rmax=3}", "unroll{norm.c=5},fuse"],
    "layernorm": ["fuse", "fuse,multicore{mean}", "unroll{mean.h=5}", "interchange{norm,norm.h}"],
    "rmsnorm": ["fuse", "fuse{sumsq,scale}", "unroll{scale.h=4},fuse"],
    "matmul": ["interchange{mm,mm.j}", "unroll{mm.k=3}", "unroll{mm.k=full}", "multicore{mm}"],
    "attention": ["fuse", "fuse{qk,bias}", "fuse,multicore{qk=4}", "interchange{qk,qk.j},fuse", "unroll{pv.j=5}"],
    "attention_causal": ["fuse", "fuse{qk,mask}", "fuse,unroll{qk=3}"],
    "conv2d": ["interchange{conv.c,conv.s}", "interchange{conv,conv.x}", "unroll{conv.r=full}", "multicore{conv}",
               "conv_gemm"],
    "embedding": ["interchange{look,look.h}", "multicore{look=4}", "unroll{look.h=3}"],
    "cross_entropy": ["fuse", "fuse{rmax,rsum}", "fuse,multicore{rmax=3}", "unroll{pick=2}"],
    "paged_attention": ["fuse", "fuse{qk,rmax}", "fuse,multicore{qk=2}", "unroll{pv.j=5}"],
}


@pytest.mark.parametrize("name,pipeline", [(n, p) for n, ps in PIPELINES.items() for p in ps])
def test_pipeline_preserves_outputs(name: str, pipeline: str) -> None:
    k = example(name)
    out = apply(k, pipeline)
    assert out != k
    assert roundtrips(out)
    assert equivalent(k, out, trials=2) == []


def test_every_example_covered() -> None:
    assert set(PIPELINES) == set(SMALL_SIZES)


def test_attention_fuse_contracts_to_row_buffers() -> None:
    out = apply(example("attention"), "fuse")
    shapes = {t.name: t.rank for t in out.buffers}
    assert shapes == {"s": 1, "mx": 0, "sm": 0, "acc": 2}
    assert len(out.body) == 1


def test_contraction_keeps_buffers_read_outside_the_fused_loop() -> None:
    text = """
kernel k(A: f32[N]) -> (B: f32[N], C: f32[N]) {
  size N = 6
  temp t: f32[N]
  p: for i in 0..N {
    t[i] = A[i] + 1.0
  }
  c: for i in 0..N {
    B[i] = t[i] * 2.0
  }
  late: for i in 0..N {
    C[i] = t[N - 1 - i]
  }
}
"""
    from passes_testutil import kernel

    out = apply(text, "fuse{p,c}")
    assert out.tensor("t").rank == 1  # t is still read by `late` at other indices
    assert equivalent(kernel(text), out) == []
