"""Strided operands and reductions over a non-unit-stride axis as vector code (issue 14:
conv2d's layout transpose `x3` and channel sum `s` under `layout{X=NHWC},tile,double_buffer`).

* `gather.offset_table`: the byte offsets a `Gather` reads, built by vector instructions —
  checked by running the typed instructions (`Duplicate` / `Adds`, count and mask forms) in a
  small model of their documented semantics, for many shapes (negative strides, padded rows).
* Plans (no compile): the transpose is one `Gather` over the 2-D nest; the channel sum is a
  2-D tile `[x, c]` accumulated over `r, s` and reduced per row by `WholeReduceSum`.
* Slow: emitted code of transposes (tails, odd sizes) and contractions (K not a multiple of
  8, several reduction loops, odd row counts) against the interpreter, under sanitizers.
"""

from __future__ import annotations

import itertools

import pytest

from transformer.lower import lower_kernel
from transformer.lower.gather import offset_table, table_shift
from transformer.lower.instr import Loop, Operand, Placed, VecOp

from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, check_emitted, example, kernel_text


def _run_table(items: list[VecOp], size: int) -> list[int | None]:
    """The int32 buffer after `items` (count-form and mask-form `Duplicate`/`Adds` on
    element offsets of one operand base; `None`: never written)."""
    buf: list[int | None] = [None] * size

    def off(o: Operand) -> int:
        return sum(int(t) for t in o.offset.split(" + "))

    for it in items:
        d = off(it.dst)
        n = it.count if it.repeat is None else it.repeat.mask
        assert isinstance(n, int) and (d * 4) % 32 == 0, it  # vector operands start 32 B aligned
        assert it.repeat is None or (it.repeat.times == 1 and it.repeat.mask <= 64), it
        v = int(it.scalar.removeprefix("int32_t(").removesuffix(")"))  # type: ignore[union-attr]
        for i in range(n):
            if it.op == "Duplicate":
                buf[d + i] = v
            else:
                assert it.op == "Adds"
                src = buf[off(it.srcs[0]) + i]
                assert src is not None, f"{it}: reads an unwritten offset"
                buf[d + i] = src + v
    return buf


@pytest.mark.parametrize("n0,n1,c_o,c_i,es,valid", [
    (1, 1, 0, 5, 2, None), (1, 3, 0, 7, 4, None), (1, 8, 0, 1, 2, None), (1, 37, 0, 48, 2, None),
    (34, 16, 1, 48, 2, None),  # conv2d's transpose X_ub[c, w] -> X_nhwc_ub[w, c]
    (32, 16, 0, 9, 2, None),  # the filter row Wt[f, c, r, s] over c, broadcast over x
    (5, 8, -3, 2, 4, None), (3, 24, 7, -1, 2, None), (4, 8, -8, -1, 4, None),
    (7, 8, 2, 16, 2, 3), (3, 16, 40, 1, 4, 13), (2, 8, 0, -2, 2, 5),  # padded rows
])
def test_offset_table_builds_the_affine_byte_offsets(n0: int, n1: int, c_o: int, c_i: int, es: int, valid: int | None) -> None:
    items = offset_table(Operand("t", "i32"), n0, n1, c_o, c_i, es, valid)
    buf = _run_table(items, n0 * n1)
    k_n = valid or n1
    sh = table_shift(n0, k_n, c_o, c_i)
    for o, j in itertools.product(range(n0), range(n1)):
        want = (c_o * o + c_i * (j if j < k_n else 0) - sh) * es
        assert buf[o * n1 + j] == want, (o, j, buf)
    assert min(b for b in buf if b is not None) >= 0  # a uint32 table: never negative
    # a handful of instructions: the first block, then doublings
    assert len(items) <= 2 + 7 + (n1 - 1).bit_length() + (n0 - 1).bit_length()


def _instrs(items: tuple[Placed, ...]) -> list[VecOp]:
    out: list[VecOp] = []
    for p in items:
        if isinstance(p.item, Loop):
            out += _instrs(p.item.body)
        elif isinstance(p.item, VecOp):
            out.append(p.item)
    return out


@pytest.mark.parametrize("sizes", [{"N": 1, "C": 2, "H": 6, "W": 5, "F": 3}, None])
def test_conv2d_nhwc_plan_is_a_gather_and_a_2d_tile_reduction(sizes: dict[str, int] | None) -> None:
    k = example("conv2d", sizes)
    plan = lower_kernel(apply(k, "layout{X=NHWC},tile,double_buffer"))
    assert not [n.fallback for n in plan.nests if n.fallback]
    C, W = (sizes or {"C": 16, "W": 34})["C"], (sizes or {"C": 16, "W": 34})["W"]
    # the transpose: one Gather writing the whole NHWC row tile, no scalar step
    tr = [n for n in plan.nests if n.plan and any(isinstance(p.item, VecOp) and p.item.op == "Gather" for p in n.plan)
          and "reduction" not in n.where]
    assert len(tr) == 1
    g = [i for i in _instrs(tr[0].plan) if i.op == "Gather"]
    # one Gather over the 2-D nest (rows of C = 16 offsets start aligned), else one per row
    assert len(g) == 1 and g[0].dst.base == "X_nhwc_ubLocal" and g[0].srcs[0].base == "X_ubLocal"
    assert g[0].count == (W * C if C % 8 == 0 else C)
    # the channel sum: a [x, c] tile (rows padded to 8 f32) accumulated under C++ loops over
    # the other reduction axes, reduced one row per repeat, added to acc
    red = [n for n in plan.nests if "a reduction over a nest as a 2-D tile" in n.where]
    assert len(red) == 1
    ops = _instrs(red[0].plan)
    loops = [p.item for p in red[0].plan if isinstance(p.item, Loop)]
    assert len(loops) == 1 and isinstance(loops[0].body[0].item, Loop)  # two C++ loops: the non-column axes
    K = max(C, 3)  # the column axis: the longest reduction loop (c, or r/s when C < 3)
    Kp = -(-K // 8) * 8
    wrs = [i for i in ops if i.op == "WholeReduceSum"]
    assert len(wrs) == 1 and wrs[0].repeat is not None
    assert (wrs[0].repeat.mask, wrs[0].repeat.times, wrs[0].repeat.rep) == (K, W - 2, (1, Kp // 8))
    assert not [i for i in ops if i.op in ("ReduceSum", "GetValue", "SetValue")]
    assert [i.count for i in ops if i.op == "Add" and i.dst.base == "acc_ubLocal"] == [W - 2]  # the row sums into acc
    assert all(n.vs_round_trip != "element" for n in plan.nests)


TRANSPOSE = """
kernel tr(X: f32[R, C], Z: f16[C, R]) -> (Y: f32[C, R], V: f16[C, R]) {
  size R = 24
  size C = 13
  t: for i in 0..C {
    for j in 0..R {
      Y[i, j] = X[j, i] * 2.0 - f32(Z[i, j])
      V[i, j] = f16(X[j, i])
    }
  }
}
"""

CONTRACT = """
kernel red(X: f16[D, T, K], W: f16[K, T], b: f32[D], Z: f32[D, K]) -> (Y: f32[D], Q: f32[D]) {
  size D = 37
  size T = 3
  size K = 5
  temp a: f32[D]
  r: for d in 0..D {
    a[d] = b[d]
    for t in 0..T {
      for k in 0..K {
        a[d] += f32(X[d, t, k]) * f32(W[k, t])
      }
    }
    Y[d] = a[d] * 0.5
    Q[d] = 0.0
    for k in 0..K {
      Q[d] += Z[d, k] - b[d]
    }
  }
}
"""


def test_contract_plan_picks_the_longest_axis_and_pads_rows() -> None:
    plan = lower_kernel(apply(kernel_text(CONTRACT).with_sizes({"D": 40}), "tile{r.d=8}"))
    assert not [n.fallback for n in plan.nests if n.fallback]
    red = [n for n in plan.nests if "a reduction over a nest as a 2-D tile" in n.where]
    assert len(red) == 1
    wrs = [i for i in _instrs(red[0].plan) if i.op == "WholeReduceSum"]
    # two reductions (over t, k and over k), both with K = 5 columns padded to 8: one row per repeat
    assert [(w.repeat.mask, w.repeat.times, w.repeat.rep) for w in wrs if w.repeat] == [(5, 8, (1, 1))] * 2
    assert all(n.vs_round_trip == "" for n in red)


TRANSPOSES = [("tile", None), ("tile{t.i=8}", {"R": 40, "C": 13}), ("tile{t.i=8,t.j=16},double_buffer", {"R": 37, "C": 11})]
CONTRACTIONS = [
    ("tile{r.d=8}", {"D": 40}), ("tile{r.d=100},double_buffer", {"D": 300, "T": 2, "K": 16}),
    ("tile{r.d=3}", {"D": 9, "T": 4, "K": 1}), ("tile{r.d=300}", {"D": 300, "T": 3, "K": 9}),  # 300 rows: two WholeReduceSums
]


def _original(text: str, sizes: dict[str, int] | None):  # type: ignore[no-untyped-def]
    k = kernel_text(text)
    return k.with_sizes(sizes) if sizes else k


@pytest.fixture(scope="module")
def gathers() -> Bundle:
    """The seven emitted cases below in ONE sanitizer build (tests/codegen/bundle.py)."""
    cases = {f"transpose{i}": apply(_original(TRANSPOSE, sz), p) for i, (p, sz) in enumerate(TRANSPOSES)}
    cases.update({f"contract{i}": apply(_original(CONTRACT, sz), p) for i, (p, sz) in enumerate(CONTRACTIONS)})
    return build_cases(cases, sanitize=True)


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(TRANSPOSES)), ids=[p for p, _ in TRANSPOSES])
def test_transposes_match_emitted(gathers: Bundle, i: int) -> None:
    pipeline, sizes = TRANSPOSES[i]
    plan = gathers.emitted[f"transpose{i}"].plan
    assert not [n.fallback for n in plan.nests if n.fallback] and "Gather" in plan.instructions()
    check_bundled(gathers, f"transpose{i}", _original(TRANSPOSE, sizes), what=f"transpose --passes {pipeline}")


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(CONTRACTIONS)), ids=[p for p, _ in CONTRACTIONS])
def test_contractions_match_emitted(gathers: Bundle, i: int) -> None:
    pipeline, sizes = CONTRACTIONS[i]
    plan = gathers.emitted[f"contract{i}"].plan
    assert "WholeReduceSum" in plan.instructions() and not [n.fallback for n in plan.nests if n.fallback]
    check_bundled(gathers, f"contract{i}", _original(CONTRACT, sizes), what=f"contraction --passes {pipeline} {sizes}")
