"""Dependence analysis: vectors, kinds, reductions, exact vs Z3 paths, predicates."""

from __future__ import annotations

import networkx as nx

from passes_testutil import example, kernel
from transformer.deps import analyze, carries_dependence, fusion_conflict, is_parallel, privatizable


def _deps(text: str):
    return analyze(kernel(text)).deps


def test_uniform_distance_and_kind() -> None:
    ds = _deps("""
kernel k(A: f32[N]) -> (B: f32[N]) {
  size N = 8
  B[0] = A[0]
  L: for i in 1..N {
    B[i] = B[i - 1] + A[i]
  }
}""")
    carried = [d for d in ds if d.level == 0]
    assert len(carried) == 1
    d = carried[0]
    assert d.kind == "flow" and d.direction == ("<",) and d.distance == (1,)
    assert d.src.write and not d.dst.write and d.src.loc is not None and d.dst.loc is not None


def test_disjoint_strides_are_independent() -> None:
    ds = _deps("""
kernel k(A: f32[N]) -> (B: f32[N]) {
  size N = 8
  L: for i in 0..4 {
    B[2 * i] = A[i]
    B[2 * i + 1] = B[2 * i] * 2.0
  }
}""")
    assert all(d.level is None for d in ds)  # only same-iteration flow from the even write


def test_tiled_subscripts_go_through_z3_exactly() -> None:
    k = kernel("""
kernel k(A: f32[N]) -> (B: f32[N]) {
  size N = 16
  o: for i0 in 0..4 {
    for i1 in 0..4 {
      B[i0 * 4 + i1] = A[i0 * 4 + i1] * 2.0
    }
  }
}""")
    assert is_parallel(k, (0,)) and is_parallel(k, (0, 0))


def test_reductions_are_recognised_and_block_multicore() -> None:
    k = example("softmax")
    red = [d for d in analyze(k).deps if d.reduction]
    assert red and all(d.src.tensor in ("mx", "sm") for d in red)
    assert carries_dependence(k, (0, 1), include_reductions=False) is None
    assert not is_parallel(k, (0, 1))
    assert is_parallel(k, (0,))


def test_graph_edges_labelled_by_kind() -> None:
    g = analyze(example("attention")).graph
    assert isinstance(g, nx.DiGraph)
    kinds = set().union(*(data["kinds"] for _, _, data in g.edges(data=True)))
    assert kinds == {"flow", "anti", "output"}


def test_fusion_conflict_direction() -> None:
    k = kernel("""
kernel k(A: f32[N]) -> (B: f32[N]) {
  size N = 8
  temp t: f32[N]
  p: for i in 0..N {
    t[i] = A[i]
  }
  c: for i in 0..N - 1 {
    B[i] = t[i + 1]
  }
  B[N - 1] = 0.0
}""")
    assert fusion_conflict(k, (0,), (1,)) is not None  # c(i) reads what p writes at i + 1


def test_privatizable_row_buffer_after_fuse() -> None:
    from passes_testutil import apply

    k = apply(example("attention"), "fuse")
    assert privatizable(k, (0,), "s") and privatizable(k, (0,), "mx")
    assert is_parallel(k, (0,))
