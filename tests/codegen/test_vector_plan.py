"""Instruction selection as data (issue 14 item 4): the typed instructions of a nest
(`NestChoice.plan`, `transformer/lower/instr.py`) checked without reading C++ — the
whole-tile forms of issue 14 item 2 on the documented pipelines. No compile."""

from __future__ import annotations

from transformer.lower import lower_kernel
from transformer.lower.instr import Flag, Loop, VecOp, repeat_chunks

from .conftest import apply, example


def _ops(plan, where: str) -> list[VecOp]:  # type: ignore[no-untyped-def]
    out = []
    for n in plan.nests:
        if where in n.where:
            for p in n.plan:
                items = p.item.body if isinstance(p.item, Loop) else (p,)
                out.extend(q.item for q in items if isinstance(q.item, VecOp))
    return out


def test_softmax_max_in_f16_and_division_by_a_broadcast_block() -> None:
    # rows of 4096, one per tile: the per-row form (short rows are one tile: test_rows2d_plan.py)
    plan = lower_kernel(apply(example("softmax", {"R": 64, "C": 4096}), "fuse,tile,double_buffer"))
    assert not any("as one tile" in n.where for n in plan.nests)
    ops = [o for n in plan.nests for p in n.plan for o in [p.item] if isinstance(o, VecOp)]
    rmax = [o for o in ops if o.op == "ReduceMax"]
    assert len(rmax) == 1 and rmax[0].dst.dtype == "f16" and rmax[0].srcs[0].dtype == "f16"  # no Cast before it
    assert sum(o.op == "Cast" and o.dst.dtype == "f32" for o in ops) == 1  # the row is widened once
    div = [o for o in ops if o.op == "Div"]
    assert div and all(o.repeat is not None and o.repeat.blk[2] == 0 and o.repeat.rep[2] == 0 for o in div)
    assert all(o.count == 0 or o.count * 4 >= 256 for o in ops if o.op == "Duplicate")  # no full-row Duplicate
    assert not any(o.op == "Duplicate" and o.count for o in ops)


def test_layernorm_casts_hoisted_and_row_shared() -> None:
    plan = lower_kernel(apply(example("layernorm"), "fuse,tile,double_buffer"))
    casts = [o for n in plan.nests for p in n.plan for o in [p.item] if isinstance(o, VecOp) and o.op == "Cast"]
    widened = sorted(o.srcs[0].base for o in casts if o.dst.dtype == "f32")
    # X's row once per row (shared by mean, variance and normalise), gamma and beta once per tile
    assert len(widened) == 3 and any("X_ub" in b for b in widened) and any("gamma" in b for b in widened)
    compute = next(m for ph in plan.phases for m in ph.methods if m.stage == "compute")
    text = [l.text for l in compute.body]
    row = next(i for i, t in enumerate(text) if t.startswith("for (int32_t n "))
    assert sum(t.startswith("Cast(") and "gamma_ubLocal" in t for t in text[:row]) == 1  # hoisted before the row loop
    assert not any(t.startswith("Cast(") and "gamma_ubLocal" in t for t in text[row:])
    # (x - mu) is computed once per row, though the variance squares it and Y scales it
    assert sum(o.op == "Adds" for n in plan.nests for p in n.plan for o in [p.item] if isinstance(o, VecOp)) == 1


def test_attention_scores_as_whole_tile_dot_products() -> None:
    k = example("attention", {"S": 128, "D": 128})
    plan = lower_kernel(apply(k, "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer"))
    dots = [n for n in plan.nests if "dot product" in n.where]
    assert len(dots) == 1 and dots[0].vs_round_trip == ""
    ops = [p.item for p in dots[0].plan if isinstance(p.item, VecOp)]
    red = [o for o in ops if o.op == "WholeReduceSum"]
    assert len(red) == 1 and red[0].repeat is not None and red[0].repeat.times == 64  # one sum per key
    mul = [o for o in ops if o.op == "Mul"]
    assert len(mul) == 2 and all(o.repeat is not None and o.repeat.rep[2] == 0 for o in mul)  # D = 128 f32: 2 x 256 B
    assert sum(o.op == "Add" and o.repeat is not None for o in ops) == 1  # the fold of the second 256 B
    assert not any(isinstance(p.item, Flag) for p in dots[0].plan)


def test_repeat_chunks() -> None:
    assert repeat_chunks(1024, 4) == [(0, 64, 16)]
    assert repeat_chunks(64 * 300 + 5, 4) == [(0, 64, 255), (64 * 255, 64, 45), (64 * 300, 5, 1)]
    assert repeat_chunks(100, 2) == [(0, 100, 1)]
