"""The nest descriptor (`transformer/lower/desc.py`): loops with trips and tails, and each
operand's strides and form, computed once per nest."""

from __future__ import annotations

from transformer import ir
from transformer.lower.desc import describe
from transformer.parser import parse


def _nest(text: str, label: str = "n") -> tuple[ir.For, ir.Kernel]:
    k = parse(text)
    for s in k.body:
        if isinstance(s, ir.For) and s.label == label:
            return s, k
    raise AssertionError(f"no nest {label}")


def _describe(text: str):  # type: ignore[no-untyped-def]
    loop, k = _nest(text)
    sizes = {s.name: s.value for s in k.sizes}
    decls = {t.name: t for t in k.tensors()} if hasattr(k, "tensors") else {p.name: p for p in k.params}
    return describe(loop, sizes, decls=decls)


FORMS = """kernel f(X: f32[M, N], r: f32[M], c: f32[N], W: f32[M, P], G: f32[M, N]) -> (Y: f32[M, N]) {
  size M = 4
  size N = 8
  size P = 16
  n: for i in 0..M {
    for j in 0..N {
      Y[i, j] = X[i, j] + r[i] + c[j] + W[i, j] + G[j % 2, 2 * j] + X[0, 0]
    }
  }
}
"""


def test_forms_of_a_2d_nest() -> None:
    d = _describe(FORMS)
    assert [(lp.var, lp.trip, lp.tail) for lp in d.loops] == [("i", 4, False), ("j", 8, False)]
    f = d.forms()
    assert f["Y'"] == "contiguous" and f["X"] in ("contiguous", "invariant")
    forms = [(o.tensor, o.form) for o in d.operands]
    assert ("X", "contiguous") in forms and ("X", "invariant") in forms
    assert f["r"] == "row-broadcast"
    assert f["c"] == "column-broadcast"
    assert f["W"] == "block-strided"  # rows of 16 elements read 8 at a time
    assert f["G"] == "gather"  # j % 2 is not affine, 2 * j is a stride of 2
    w = next(o for o in d.operands if o.tensor == "W")
    assert w.strides == (("i", 16), ("j", 1)) and w.base is not None and w.base.const == 0
    assert d.only_assigns and d.leaves == 1 and d.depth == 2


TAIL = """kernel t(X: f32[N]) -> (Y: f32[N]) {
  size N = 100
  size T = 32
  n: for t in 0..4 {
    for j in 0..min(T, N - t * T) {
      Y[t * T + j] = X[t * T + j] * 2.0
    }
  }
}
"""


def test_a_tile_tail_has_its_largest_trip() -> None:
    d = _describe(TAIL)
    inner = d.loops[-1]
    assert inner.tail and inner.trip == 32
    y = next(o for o in d.operands if o.write)
    assert y.strides == (("t", 32), ("j", 1)) and y.form == "contiguous"


ROWS = """kernel r(X: f32[M, N]) -> (Y: f32[M]) {
  size M = 4
  size N = 8
  n: for i in 0..M {
    Y[i] = 0.0
    for j in 0..N {
      Y[i] += X[i, j]
    }
  }
}
"""


def test_an_imperfect_nest_describes_its_outer_loop() -> None:
    d = _describe(ROWS)
    assert d.depth == 1 and not d.only_assigns and d.leaves == 2
    assert d.forms() == {"Y'": "contiguous"}
    assert "i:4" in d.summary()
