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


def _all_loop_paths(stmts, prefix=()):  # type: ignore[no-untyped-def]
    from transformer import ir

    for i, s in enumerate(stmts):
        if isinstance(s, ir.For):
            yield prefix + (i,)
            yield from _all_loop_paths(s.body, prefix + (i,))


def _answers(k):  # type: ignore[no-untyped-def]
    from transformer import deps

    deps.analyze.cache_clear()
    out = []
    for path in _all_loop_paths(k.body):
        ds = deps.carried_dependences(k, path, include_reductions=True)
        out.append((path, sorted((d.kind, d.src.tensor, d.direction, d.distance) for d in ds)))
        out.append((path, [(t.name, privatizable(k, path, t.name)) for t in k.buffers]))
    return out


def test_solver_free_paths_agree_with_z3(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The interval fast paths (tile ranges of one tile loop, coverage by a copy range or a
    private loop) give exactly the answers of the Z3 paths on every documented pipeline."""
    from documented import ROWS, SMALL

    from passes_testutil import apply
    from transformer import deps

    flash = {"S": 128, "D": 64}  # flash_attention takes D = 64 or 128
    kernels = [apply(example(name, flash if "flash" in pipeline else SMALL[name]), pipeline) for name, pipeline in ROWS]
    kernels += [apply(example(name, {"M": 256, "N": 1024}), "tile,double_buffer") for name in ("add",)]
    used = {"range": 0, "cover": 0}
    real_range, real_cover = deps._range_distance, deps._covers_by_intervals

    def count_range(*a):  # type: ignore[no-untyped-def]
        r = real_range(*a)
        used["range"] += r is not None
        return r

    def count_cover(*a):  # type: ignore[no-untyped-def]
        r = real_cover(*a)
        used["cover"] += r
        return r

    monkeypatch.setattr(deps, "_range_distance", count_range)
    monkeypatch.setattr(deps, "_covers_by_intervals", count_cover)
    fast = [_answers(k) for k in kernels]
    assert used["range"] and used["cover"], used  # the fast paths decided something
    monkeypatch.setattr(deps, "_range_distance", lambda *a: None)
    monkeypatch.setattr(deps, "_covers_by_intervals", lambda *a: False)
    slow = [_answers(k) for k in kernels]
    deps.analyze.cache_clear()
    assert fast == slow


_TWO_STORES = """
kernel k(X: f32[S, D]) -> (Y: f32[S, D]) {{
  size S = 6
  size D = 8
  local Y_ub: f32[1, 8] @ub
  L: for s0 in 0..S {{
    for s in 0..1 {{
      for d in 0..4 {{
        Y_ub[s, {a}] = X[s0, d] * 2.0
        Y_ub[s, {b}] = X[s0, d] + 1.0
      }}
    }}
    copy Y[s0:s0 + 1, 0:8] <- Y_ub[0:1, 0:8]
  }}
}}"""


def test_two_store_patterns_that_cover_the_tile_make_it_private() -> None:
    """RoPE's stores (`coverage.covered_by_union`): halves `d`, `d + 4` and interleaved pairs
    `2 * d`, `2 * d + 1` together write the whole tile the copy-out reads, so each iteration
    of `L` owns its tile (multicore may split `L`); a gap (element 4 or the odd ones never
    written) keeps the dependence."""
    for a, b, private in [("d", "d + 4", True), ("2 * d", "2 * d + 1", True),
                          ("d", "d + 5", False), ("2 * d", "2 * d + 2", False)]:
        k = kernel(_TWO_STORES.format(a=a, b=b))
        assert privatizable(k, (0,), "Y_ub") is private, (a, b)
        assert is_parallel(k, (0,)) is private, (a, b)


def test_tiled_half_split_rope_is_parallel() -> None:
    from passes_testutil import apply

    k = apply(example("rope"), "tile")
    assert privatizable(k, (0,), "Y_ub") and is_parallel(k, (0,))
