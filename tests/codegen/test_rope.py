"""RoPE (examples/rope.ir, half-split): one tensor read at two offsets (`X[.., d]`,
`X[.., d + Dh]`) and stored at two index patterns in one nest. `tile` stages both (the
footprint boxes merge with extents that are sizes, `Dh = D / 2`: regions.merge), and the
nest vectorises statement by statement because the two stores touch disjoint elements
(`vector._disjoint_stores`). The same box merge stages max-pool's `2 * y + r` reads and
interleaved RoPE's input. Interpreted before == after on fresh random inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer import api, ir
from transformer.codegen import emit_ascendc
from transformer.lower.vector import _disjoint_stores
from transformer.parser import parse

from .conftest import apply, example, fresh_seed

ROOT_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rope.ir"


def _ix(text: str) -> tuple[ir.Expr, ...]:
    k = parse(f"kernel f(X: f32[N]) -> (Y: f32[N]) {{\n  size N = 64\n  size H = 32\n  n: for d in 0..H {{\n"
              f"    Y[{text}] = X[d]\n  }}\n}}\n")
    st = k.body[0].body[0]  # type: ignore[attr-defined]
    return st.target.indices  # type: ignore[no-any-return]


@pytest.mark.parametrize("a,b,disjoint", [
    ("d", "d + H", True),          # half-split: [0, 32) and [32, 64)
    ("2 * d", "2 * d + 1", True),  # interleaved: even and odd
    ("d", "d + 1", False),         # overlapping ranges
    ("2 * d", "2 * d + 4", False),  # element 4 = 2*2 = 2*0 + 4
])
def test_store_patterns_are_disjoint_only_when_no_element_is_shared(a: str, b: str, disjoint: bool) -> None:
    assert _disjoint_stores({_ix(a), _ix(b)}, "d", 32, {"N": 64, "H": 32}) is disjoint


def test_half_split_rope_stages_x_and_y_and_vectorises() -> None:
    k = example("rope")
    t = apply(k, "tile,double_buffer")
    staged = {d.name for d in t.buffers if d.kind == "local"}
    assert {"X_ub", "Y_ub"} <= staged
    em = emit_ascendc(t)
    assert em.warnings == [] and "GetValue" not in em.source and "SetValue" not in em.source
    assert api.verify(k, t, trials=1, seed=fresh_seed()).ok


@pytest.mark.parametrize("name", ["maxpool", "rope_interleaved"])
def test_reads_at_offsets_of_a_size_are_staged(name: str) -> None:
    k = example(name)
    t = apply(k, "tile,double_buffer")
    assert "X_ub" in {d.name for d in t.buffers if d.kind == "local"}
    assert api.verify(k, t, trials=1, seed=fresh_seed()).ok


def test_tiled_rope_spreads_rows_over_the_cores() -> None:
    """The two stores of `Y_ub` cover it (deps.privatizable by `coverage.covered_by_union`), so
    the tile loop is parallel and multicore spreads it (refused before); interpreted before ==
    after multicore on fresh random inputs."""
    k = example("rope", {"S": 8, "H": 2, "D": 64})
    m = apply(k, "tile{rope.s=2},multicore{rope}")
    cores = m.body[0].annotation("cores")  # type: ignore[attr-defined]
    assert cores is not None and cores.get("n") == 4  # 4 tiles of 2 rows, one per core
    assert api.verify(k, m, trials=1, seed=fresh_seed()).ok


def test_rope_rows_are_one_mask_repeat_tile() -> None:
    """rows2d over partial rows: the row loop `h` of the tile is one tile of half rows, every
    instruction in the mask/repeat form (a count form would compute into the other half), the
    widened X halves computed once for both statements; interpreted before == after."""
    k = example("rope", {"S": 2, "H": 8, "D": 128})
    t = apply(k, "tile{rope.s=1,rope.h=8}")
    em = emit_ascendc(t)
    tiles = [n for n in em.plan.nests if n.pattern == "rows2d"]
    assert len(tiles) == 1
    ops = [p.item for p in tiles[0].plan if hasattr(p.item, "repeat")]
    assert len(ops) == 10 and all(op.repeat is not None and op.repeat.times == 8 and op.repeat.mask == 64 for op in ops)
    assert [op.op for op in ops].count("Cast") == 4
    assert api.verify(k, t, trials=1, seed=fresh_seed()).ok


def test_partial_rows_without_a_mask_repeat_form_stay_row_by_row() -> None:
    """An instruction rows2d has no mask/repeat form for (`Exp`) over partial rows: the whole
    tile is refused (a count form would compute into the other half) and the per-row plan
    runs; interpreted before == after."""
    text = (ROOT_EXAMPLE.read_text().replace("Y[s, h, d] = f16(", "Y[s, h, d] = f16(exp(", 1)
            .replace(" * Sn[s, d])\n        Y[s, h, d + Dh]", " * Sn[s, d]))\n        Y[s, h, d + Dh]", 1))
    k = parse(text)
    t = apply(k, "tile{rope.s=1,rope.h=4}")
    patterns = {n.pattern for n in emit_ascendc(t).plan.nests if n.pattern}
    assert patterns == {"vector-1d"}  # each (row, head) on its own, no whole-tile plan
    assert api.verify(k, t, trials=1, seed=fresh_seed()).ok


_PAIRS = """kernel k(X: f32[S, D]) -> (Y: f32[S, E]) {{
  size S = 16
  size D = 32
  size E = {e}
  n: for s in 0..S {{
    for k in 0..D {{
      Y[s, {a}] = X[s, k] * 2.0
      Y[s, {b}] = X[s, k] + 1.0
    }}
  }}
}}
"""


@pytest.mark.parametrize("a,b,staged", [("2 * k", "2 * k + 1", True), ("2 * k + 1", "2 * k", True),
                                        ("2 * k", "2 * k + 2", False), ("3 * k", "3 * k + 1", False)])
def test_interleaved_stores_stage_the_output_when_they_fill_it(a: str, b: str, staged: bool) -> None:
    """`regions.interleaved_box`: stores `2k` and `2k + 1` together fill their rows, so `tile`
    stages `Y` and copies it out in one DMA (interleaved RoPE); a gap (`2k + 2`) or a stride
    the writes do not fill (`3k`) leaves `Y` in GM. Staged: interpreted before == after."""
    k = parse(_PAIRS.format(a=a, b=b, e=64 if staged else 96))  # (the gaps leave Y partly unwritten)
    t = apply(k, "tile{n.s=4}")
    assert ("Y_ub" in {d.name for d in t.buffers if d.kind == "local"}) is staged
    if staged:
        assert api.verify(k, t, trials=1, seed=fresh_seed()).ok
