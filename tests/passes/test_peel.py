"""`peel` (passes/peel.py) and staging after it (issue 29, item 12): the first or last
iterations of a loop as a loop of their own, exact, refusals located; `tile`/`stage` copy a
temp's tile in only from what the statements before the nest really wrote."""

from __future__ import annotations

import pytest

from passes.base import PassError, registry
from passes_testutil import SMALL_SIZES, apply, equivalent, example, kernel, roundtrips

# a running sum down the rows, its first row peeled by hand: row 0 is written by `first`,
# rows 1.. by `rest`, which reads the row above (written by `first` only for row 0)
PEELED_SCAN = """
kernel scan(A: f32[M, N]) -> (C: f32[M, N]) {
  size M = 16
  size N = 8
  temp t: f32[M, N]
  first: for i in 0..1 {
    for j in 0..N { t[i, j] = A[i, j] }
  }
  rest: for i in 1..M {
    for j in 0..N { t[i, j] = t[i - 1, j] + A[i, j] }
  }
  out: for i in 0..M {
    for j in 0..N { C[i, j] = t[i, j] }
  }
}
"""

# the matmul whose first row block is its own nest (rows 0 in `mm0`, rows 1.. in `mm`)
PEELED_MATMUL = """
kernel matmul(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  size M = 17
  size N = 16
  size K = 16
  temp acc: f32[M, N]
  mm0: for i in 0..1 {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += A[i, k] * B[k, j] }
    }
  }
  mm: for i in 1..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += A[i, k] * B[k, j] }
    }
  }
  out: for i in 0..M {
    for j in 0..N { C[i, j] = acc[i, j] }
  }
}
"""


def test_peel_is_registered_and_offered() -> None:
    assert "peel" in registry()
    got = [p.to_text() for p in registry()["peel"].space(example("matmul"), None)]
    assert "peel{loop=mm,first=1}" in got and "peel{loop=mm,last=1}" in got


@pytest.mark.parametrize("name", sorted(SMALL_SIZES))
def test_every_offered_peel_preserves_outputs(name: str) -> None:
    k = example(name)
    offered = registry()["peel"].space(k, None)
    assert offered, name
    for p in offered:
        out = p.apply(k, None)
        assert out != k and roundtrips(out)
        assert equivalent(k, out, trials=1) == [], f"{name}: {p.to_text()}"


def test_peel_first_makes_a_nest_of_its_own() -> None:
    out = apply(example("matmul"), "peel{loop=mm,first=2}")
    labels = [s.label for s in out.body]
    assert labels == ["mm_peel", "mm"]
    assert out.body[0].hi.value == 2 and out.body[1].lo.value == 2  # type: ignore[union-attr]


def test_peel_last_of_an_inner_loop_stays_inside_its_parent() -> None:
    k = example("matmul")
    out = apply(k, "peel{loop=mm.k,last=3}")
    assert len(out.body) == 1
    j = out.body[0].body[0]  # type: ignore[union-attr]
    ks = [s for s in j.body if hasattr(s, "var") and s.var == "k"]
    assert len(ks) == 2
    assert equivalent(k, out, trials=2) == []


@pytest.mark.parametrize("pipeline,message", [
    ("peel{loop=mm}", "no count given"),
    ("peel{loop=mm,first=1,last=1}", "exactly one of"),
    ("peel{loop=mm,first=8}", "peels every iteration"),
    ("peel{loop=nope,first=1}", "nope"),
])
def test_peel_refusals_are_located(pipeline: str, message: str) -> None:
    with pytest.raises(PassError) as e:
        apply(example("matmul"), pipeline)
    assert message in e.value.message
    if "every iteration" in message:
        assert e.value.loc is not None  # the loop's line in the kernel


def test_peel_refuses_a_gemm_nest() -> None:
    k = apply(example("matmul", {"M": 32, "N": 32, "K": 32}), "gemm")
    with pytest.raises(PassError, match="lowered as a whole"):
        apply(k, "peel{loop=mm,first=1}")


def test_tile_does_not_copy_in_rows_nobody_wrote() -> None:
    """Before the fix `t` was copied in per tile of `rest` (the nest reads the row above each
    tile, so its tile is not written before it is read, and `first` writes `t`): tile 0
    copied rows 1..5, which nobody had written ("copy reads an unwritten element of `t`")."""
    k = kernel(PEELED_SCAN)
    out = apply(k, "tile{rest=5}")
    assert equivalent(k, out, trials=2) == []
    assert not any(d.name.startswith("t_") for d in out.buffers)  # `t` stays in GM


def test_tile_still_copies_in_what_an_earlier_nest_wrote_whole() -> None:
    # `first` writes every row of `t`: the tile of `rest` may be copied in from it
    k = kernel(PEELED_SCAN.replace("first: for i in 0..1 {", "first: for i in 0..M {")
               .replace("t[i, j] = t[i - 1, j] + A[i, j]", "t[i, j] = t[i - 1, j] + t[i, j]"))
    out = apply(k, "tile{rest=5}")
    assert any(d.name.startswith("t_") for d in out.buffers)
    assert equivalent(k, out, trials=2) == []


@pytest.mark.parametrize("pipeline", ["tile{mm=4}", "tile{mm=4,mm.j=8}", "tile", "peel{loop=mm,first=3},tile"])
def test_hand_peeled_matmul_tiles(pipeline: str) -> None:
    k = kernel(PEELED_MATMUL)
    out = apply(k, pipeline)
    assert equivalent(k, out, trials=2) == []


def test_stage_refuses_to_copy_in_rows_nobody_wrote() -> None:
    with pytest.raises(PassError, match="statements before the nest do not write all of it") as e:
        apply(kernel(PEELED_SCAN), "split{rest=5},stage{t=rest}")
    assert e.value.loc is not None
