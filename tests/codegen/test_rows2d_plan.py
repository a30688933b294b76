"""Short rows, several rows per instruction (issue 14 item 2, `transformer/lower/rows2d.py`):
the typed plan of a row loop whose statistics run over the whole `[rows, C]` tile — no V -> S
flag, no scalar read per row, one `WholeReduce*` repeat per row, `Brcb` row broadcasts read at
block stride 0 — and the cost choice that keeps the per-row form for long rows. No compile
(the emitted runs: test_rows2d.py)."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel
from transformer.lower.instr import Flag, Loop, Operand, Placed, Repeat, ScalarStep, VecOp
from transformer.lower.price import Pricer, _number
from transformer.targets import resolve_target

from .conftest import apply, example, kernel_text

TAIL = "ascx_min<int32_t>("


def _most(x: int | str) -> int:
    """A count's largest value: a constant, or a C++ expression in which a tile tail's run-time
    row count `ascx_min<int32_t>(T, ..)` (the tile balance's tiles, passes/_balance.py) is at
    most `T`, the tile's row count."""
    if isinstance(x, int):
        return x
    while TAIL in x:
        i = x.index(TAIL)
        j, depth = i + len(TAIL), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(x[j], 0)
            j += 1
        x = x[:i] + x[i + len(TAIL):x.index(",", i)] + x[j:]
    return _number(x, -1)


SHORT = [("softmax", {"R": 4096, "C": 64}), ("softmax", {"R": 8192, "C": 32}), ("layernorm", {"N": 4096, "H": 64}),
         ("layernorm", {"N": 8192, "H": 32}), ("rmsnorm", {"N": 8192, "H": 64}), ("rmsnorm", {"N": 4096, "H": 128})]


def _tile(name: str, sizes: dict[str, int], pipeline: str = "fuse,tile,double_buffer"):  # type: ignore[no-untyped-def]
    plan = lower_kernel(apply(example(name, sizes), pipeline))
    rows = next(b.shape[0] for ph in plan.phases for b in ph.buffers if b.name == "X_ub")
    return plan, [n for n in plan.nests if "as one tile" in n.where], rows


@pytest.mark.parametrize("name,sizes", SHORT)
def test_short_rows_run_as_one_tile_without_a_per_row_round_trip(name: str, sizes: dict[str, int]) -> None:
    plan, tiles, rows = _tile(name, sizes)
    assert len(tiles) == 1, [n.where for n in plan.nests]
    (tile,) = tiles
    items = [p.item for p in tile.plan]
    assert all(isinstance(i, VecOp) for i in items)  # no Flag, ScalarStep or C++ loop over the rows
    assert not any(n.vs_round_trip for n in plan.nests) and "GetValue" not in tile.instructions
    cols = next(v for k, v in sizes.items() if k in ("C", "H"))
    red = [i for i in items if i.op.startswith("WholeReduce")]
    assert len(red) == (2 if name != "rmsnorm" else 1)
    for r in red:  # one repeat per row, the results contiguous (a row vector)
        assert r.repeat is not None and _most(r.repeat.times) == rows and r.repeat.rep[0] == 1
    brcb = [i for i in items if i.op == "Brcb"]
    assert brcb and all(b.repeat is not None and _most(b.repeat.times) == -(-rows // 8) for b in brcb)
    # a row-wise operation: one instruction per 256 B of the row, one repeat per row, the
    # broadcast operand at block stride 0 and repeat stride 1 block
    bcast = [i for i in items if i.repeat is not None and
             any(b == 0 and r == 1 for b, r in zip(i.repeat.blk[1:], i.repeat.rep[1:]))]
    assert bcast and all(_most(b.repeat.times) == rows and b.repeat.mask == min(cols, 64) for b in bcast)  # type: ignore[union-attr]
    assert len(bcast) == sum(b.op in ("Sub", "Mul", "Div", "Add") for b in bcast)
    # elementwise work over the whole tile: count form of rows x C elements
    assert any(i.op == "Cast" and _most(i.count) == rows * cols for i in items)
    src = emit_ascendc(apply(example(name, sizes), "fuse,tile,double_buffer")).source
    assert "HardEvent::V_S" not in src and ".GetValue(" not in src


def test_plan_shows_the_choice_and_its_price() -> None:
    """`ascx emit --plan` lists the whole-tile nest with both prices and its typed instructions."""
    plan, (tile,), rows = _tile("softmax", {"R": 4096, "C": 64})
    text = plan.summary()
    assert f"{rows} rows x 64 as one tile" in text and "row by row" in text
    assert "WholeReduceMax f16" in text and "Brcb f32" in text
    assert tile.temp_bytes > 0 and tile.temp_slots * tile.temp_elems * 4 == tile.temp_bytes


def test_long_rows_keep_the_per_row_form() -> None:
    """Rows of 8192, one per tile: the per-row count-form reductions and their round trips
    cost less than one mask/repeat instruction per 256 B of the row: kept."""
    plan, tiles, _ = _tile("softmax", {"R": 96, "C": 8192})
    assert not tiles
    ops = [p.item for n in plan.nests for p in n.plan]
    assert any(isinstance(i, VecOp) and i.op == "ReduceMax" for i in ops) and any(isinstance(i, Flag) for i in ops)


def test_reciprocal_softmax_multiplies_the_tile_by_a_broadcast_row() -> None:
    """`reciprocal` over short rows: the tile is multiplied (`Mul`, broadcast operand) by a row
    vector of reciprocals; the only `Div` is over the row vector (one element per row)."""
    k = apply(example("softmax", {"R": 4096, "C": 64}), "fuse,reciprocal,tile,double_buffer")
    plan = lower_kernel(k)
    (tile,) = [n for n in plan.nests if "as one tile" in n.where]
    rows = next(b.shape[0] for ph in plan.phases for b in ph.buffers if b.name == "X_ub")
    ops = [p.item for p in tile.plan if isinstance(p.item, VecOp)]
    assert any(o.op == "Mul" and o.repeat is not None and 0 in o.repeat.blk for o in ops)
    divs = [o for o in ops if o.op == "Div"]
    assert divs
    for o in divs:  # over the tile's row sums, not the tile
        assert (o.repeat is not None and o.repeat.mask * _most(o.repeat.times) <= rows) or \
            (o.repeat is None and _most(o.count) <= rows)


TILED = """
kernel rows(X: f16[R, C]) -> (Y: f16[R, C]{out}) {{
  size R = 64
  size C = 64
  temp mx: f32
  local X_ub: f16[64, 64] @ub
  local Y_ub: f16[64, 64] @ub
  tiles: for t in 0..1 {{
    copy X_ub[0:64, 0:C] <- X[0:64, 0:C]
    for r in 0..64 {{
      mx = -inf
      for c in 0..C {{ {reduce} }}
      for c in 0..C {{ Y_ub[r, c] = f16(f32(X_ub[r, c]) - mx) }}
    }}
    copy Y[0:64, 0:C] <- Y_ub[0:64, 0:C]
    {after}
  }}
}}
"""


@pytest.mark.parametrize("case,one_tile", [
    ("plain", True),
    ("read after the loop", False),  # the last row's statistic is used afterwards
    ("read while reduced", False),  # a running max is read in its own loop
])
def test_the_shape_is_refused_where_the_rows_are_not_independent(case: str, one_tile: bool) -> None:
    reduce = "mx max= f32(X_ub[r, c])"
    out, after = "", ""
    if case == "read after the loop":
        out, after = ", Z: f32[1]", "for z in 0..1 { Z[z] = mx }"
    if case == "read while reduced":
        reduce = "mx max= f32(X_ub[r, c])\n Y_ub[r, c] = f16(mx)"
    k = kernel_text(TILED.format(out=out, after=after, reduce=reduce))
    plan = lower_kernel(k)
    assert any("as one tile" in n.where for n in plan.nests) == one_tile, plan.summary()


def test_the_price_is_the_timing_model_formula() -> None:
    """price.py on the target's timing facts: head + repeats (+ transcendental, reduction,
    Cast, count-form tail); a V -> S flag its latency; a C++ loop its trips."""
    t = resolve_target("ascend910b2")
    p = Pricer(t, {"rt": 40})
    f = {n: float(t.value(f"timing_{n}")) for n in ("v_instr_cycles", "v_repeat_cycles", "v_transc_repeat_cycles",
                                                    "v_reduce_instr_cycles", "v_cast_instr_cycles", "v_count_tail_cycles",
                                                    "sync_latency_cycles", "s_issue_cycles")}
    a32, a16 = Operand("a", "f32"), Operand("b", "f16")
    assert p.vec(VecOp("Add", a32, (a32, a32), None, 100)) == \
        f["v_instr_cycles"] + 2 * f["v_repeat_cycles"] + f["v_count_tail_cycles"]  # 400 B: 2 repeats and a tail
    assert p.vec(VecOp("Exp", a32, (a32,), None, 0, Repeat(64, "rt", (1, 1), (8, 8)))) == \
        f["v_instr_cycles"] + 40 * (f["v_repeat_cycles"] + f["v_transc_repeat_cycles"])
    assert p.vec(VecOp("Cast", a32, (a16,), None, 4096, round="CAST_NONE")) == \
        f["v_instr_cycles"] + f["v_cast_instr_cycles"] + 64 * f["v_repeat_cycles"]
    assert p.vec(VecOp("WholeReduceSum", a32, (a32,), None, 0, Repeat(64, 8, (1, 1), (1, 8)))) == \
        f["v_instr_cycles"] + f["v_reduce_instr_cycles"] + 8 * f["v_repeat_cycles"]
    flag = Placed(Flag("V_S"))
    assert p.items([flag]) == f["sync_latency_cycles"] + 2 * f["s_issue_cycles"]
    loop = Placed(Loop("i", "0", "(rt) * 2", (flag,)))
    assert p.items([loop]) == 80 * p.items([flag])
    assert p.items([Placed(ScalarStep("GetValue", "x = t.GetValue(0) + t.GetValue(1);"))]) == \
        f["s_issue_cycles"] + 2 * float(t.value("timing_s_local_access_cycles"))


# tile sizes pinned (the tile pass's own choice follows the timing table, docs/timing.md)
@pytest.mark.parametrize("name,sizes,pipeline", [
    ("softmax", {"R": 65536, "C": 64}, "fuse,tile{rmax.r=171},double_buffer"),
    ("layernorm", {"N": 65536, "H": 64}, "fuse,tile{mean.n=171},double_buffer"),
    ("softmax", {"R": 32768, "C": 128}, "fuse,tile{rmax.r=86},double_buffer")])
def test_row_groups_where_the_whole_tile_scratch_does_not_fit(name: str, sizes: dict[str, int], pipeline: str) -> None:
    """Tiles of 171 / 86 rows: the whole tile's scratch does not fit UB beside the
    double-buffered locals, so the rows run in groups (a C++ loop over groups of a multiple of
    16 rows, the locals' operands moved by the group, the scratch reused) — no per-row round
    trip — and the capacity proof (Z3, `ascx check`) counts the groups' scratch and fits."""
    from transformer import api

    plan, tiles, rows = _tile(name, sizes, pipeline)
    (tile,) = tiles
    assert f"{rows} rows x" in tile.where and "in groups of" in tile.where, tile.where
    g = int(tile.where.split("in groups of ")[1].split()[0])
    assert g % 16 == 0 and g < rows
    (loop,) = [p.item for p in tile.plan if isinstance(p.item, Loop)]
    body = [p.item for p in loop.body]
    assert body and all(isinstance(i, VecOp) for i in body)
    assert not any(n.vs_round_trip for n in plan.nests)
    # the group's tiles move by whole groups: some X_ub operand is offset by the loop variable
    assert any(o.base.startswith("X_ub") and f"{loop.var} * " in o.offset for i in body for o in i.srcs)
    red = [i for i in body if i.op.startswith("WholeReduce")]
    assert red and all(_most(i.repeat.times) == g for i in red)  # type: ignore[union-attr]
    t = apply(example(name, sizes), pipeline)
    cap = api.check(t)
    assert cap.status == "sat"
    tmp = [r for r in cap.per_scope["ub"].rows if r.buffer.startswith("tmpBuf")]
    assert tmp and max(r.total for r in tmp) >= tile.temp_bytes


def test_a_whole_tile_that_fits_takes_no_groups() -> None:
    _, (tile,), rows = _tile("softmax", {"R": 8192, "C": 128})
    assert f"{rows} rows x 128 as one tile," in tile.where and not any(isinstance(p.item, Loop) for p in tile.plan)
