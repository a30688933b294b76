"""Hand-computed capacity cases from issue 4 and the constraint kinds."""

from __future__ import annotations

import json

import pytest

from transformer.capacity import (
    Buffer,
    CapacityUnknownError,
    CapacityUnsatError,
    InvalidBufferError,
    UnboundSizeError,
    check,
)
from transformer.targets import get_target

KiB = 1024
DB = "double_buffer on loop kv"


def attention(stages: int = 2) -> list[Buffer]:
    """Qt, Kt (f16, 64 wide) and St (f32 scores), all double buffered by default."""
    return [
        Buffer("Qt", "ub", "f16", ("q.i", 64), stages=stages, position="VECIN", origin=DB),
        Buffer("Kt", "ub", "f16", ("kv.j", 64), stages=stages, position="VECIN", origin=DB),
        Buffer("St", "ub", "f32", ("q.i", "kv.j"), stages=stages, position="VECOUT", origin=DB),
    ]


SIZES = {"q.i": 128, "kv.j": 128}


def test_fp16_128x64_in_l0a_fits() -> None:
    a = Buffer("A", "l0a", "f16", (128, 64), position="A2", cube_operand=True)
    res = check([a], "ascend910b2")
    assert res.status == "sat" and res.ok
    su = res.per_scope["l0a"]
    assert su.total == 128 * 64 * 2 == 16 * KiB
    assert su.usable == 64 * KiB and su.headroom == 48 * KiB
    assert "16 KiB" in res.format_table()


def test_fp16_256x256_in_l0a_refused_naming_scope_buffer_bytes() -> None:
    a = Buffer("A", "l0a", "f16", (256, 256), position="A2", cube_operand=True,
               origin="tile on loop m")
    res = check([a], "ascend910b2")
    assert res.status == "unsat"
    assert res.core == ["capacity:l0a"]
    msg = res.message
    assert msg.startswith("L0A:")
    assert "A (256x256 f16)" in msg and "128 KiB" in msg and "64 KiB usable" in msg
    with pytest.raises(CapacityUnsatError) as ei:
        res.raise_for_status()
    assert "L0A" in str(ei.value) and ei.value.detail()


def test_double_buffer_over_ub_names_origin_and_hints() -> None:
    single = check(attention(1), "ascend910b2", sizes=SIZES, api_temp=True)
    assert single.status == "sat"
    assert single.per_scope["ub"].total == 96 * KiB
    res = check(attention(2), "ascend910b2", sizes=SIZES, api_temp=True)
    assert res.status == "unsat"
    msg = res.message
    assert ("UB: Qt 2x16 KiB + Kt 2x16 KiB + St 2x64 KiB = 192 KiB > 184 KiB usable"
            in msg)
    assert "double_buffer on loop kv doubles" in msg
    assert "try tile{kv.j=64}" in msg
    ex = res.explanations[0]
    assert ex.kind == "capacity" and ex.scope == "ub"
    assert ex.value == 192 * KiB and ex.limit == 184 * KiB
    # Every hint it gives is actually accepted.
    assert check(attention(2), "ascend910b2", sizes={**SIZES, "kv.j": 64},
                 api_temp=True).ok
    assert any(h.startswith("single-buffer St") for h in ex.hints)


def test_api_temp_reserve_matters() -> None:
    # 192 KiB exactly fits the physical UB, but not once the 8 KiB API temp is reserved.
    assert check(attention(2), "ascend910b2", sizes=SIZES).ok
    assert not check(attention(2), "ascend910b2", sizes=SIZES, api_temp=True).ok


def test_fits_310p_not_910b2() -> None:
    bufs = attention(2) + [Buffer("Ot", "ub", "f32", ("q.i", 64), position="VECOUT")]
    assert check(bufs, "ascend310p", sizes=SIZES).status == "sat"
    res = check(bufs, "ascend910b2", sizes=SIZES)
    assert res.status == "unsat" and "UB:" in res.message
    assert res.per_scope["ub"].total == 192 * KiB + 32 * KiB


def test_table_totals_equal_independent_count() -> None:
    bufs = attention(2) + [Buffer("odd", "ub", "f16", (17,), position="VECCALC")]
    res = check(bufs, "ascend910b2", sizes={"q.i": 64, "kv.j": 32})
    indep = 0
    for b in bufs:
        n = b.elem_bytes
        for d in b.shape:
            n *= {"q.i": 64, "kv.j": 32}.get(d, d) if isinstance(d, str) else d
        indep += -(-n // 32) * 32 * b.stages
    assert res.per_scope["ub"].total == indep
    odd = [r for r in res.per_scope["ub"].rows if r.buffer == "odd"][0]
    assert odd.bytes == 64  # 34 B rounded up to 32 B granules, as InitBuffer does


def test_l0_fractals_and_cube_dims() -> None:
    res = check([Buffer("A", "l0a", "f16", (1, 16), position="A2")], "ascend910b2")
    assert res.status == "unsat" and res.core == ["fractal:A"]
    assert "512 B fractals" in res.message
    res = check([Buffer("B", "l0b", "f16", (40, 64), position="B2", cube_operand=True)],
                "ascend910b2")
    assert res.status == "unsat" and "cube16:B[0]" in res.core
    assert "multiple of 16" in res.message and "32" in res.message
    res = check([Buffer("B", "l0b", "f16", ("n", 16), cube_operand=True)], "ascend910b2",
                sizes={"n": 40})
    assert any("tile{n=32}" in e.sentence for e in res.explanations)


def test_l0c_conservative_alignment() -> None:
    c = Buffer("C", "l0c", "f32", (16, 16), position="CO1")
    assert check([c], "ascend910b2").per_scope["l0c"].total == 1024
    full = Buffer("C", "l0c", "f32", (256, 128), position="CO1")
    assert check([full], "ascend910b2").ok  # exactly 128 KiB
    assert not check([Buffer("C", "l0c", "f32", (256, 144))], "ascend910b2").ok


def test_copy_lengths_pad_or_refuse() -> None:
    ragged = Buffer("x", "ub", "f16", (7,), copy_lengths=(7,), position="VECIN")
    res = check([ragged], "ascend910b2")
    assert res.status == "sat" and res.pad_required
    assert "DataCopyPad" in res.pad_required[0]
    strict = Buffer("x", "ub", "f16", (7,), copy_lengths=(7,), pad_allowed=False)
    res = check([strict], "ascend910b2")
    assert res.status == "unsat" and res.core == ["copy32:x#0"]
    assert "16 f16 elements" in res.message
    ok = Buffer("x", "ub", "f16", ("n",), copy_lengths=("n",), pad_allowed=False)
    assert check([ok], "ascend910b2", sizes={"n": 48}).ok


def test_queue_and_kernel_buffer_limits() -> None:
    bufs = [Buffer(f"q{i}", "ub", "f16", (16,), stages=3, position="VECIN") for i in range(3)]
    res = check(bufs, "ascend910b2")
    assert res.status == "unsat" and res.core == ["queue:VECIN"]
    assert "9 queue buffers" in res.message and "> 8" in res.message
    # VECCALC is a TBuf, not a queue: same buffers there fit the queue limit.
    calc = [Buffer(f"t{i}", "ub", "f16", (16,), stages=3, position="VECCALC") for i in range(3)]
    assert check(calc, "ascend910b2").ok
    many = [Buffer(f"t{i}", "ub", "f16", (16,), position="VECCALC") for i in range(65)]
    res = check(many, "ascend910b2")
    assert res.status == "unsat" and res.core == ["kernel_buffers"]
    assert "65 buffers" in res.message


def test_liveness_only_simultaneous_buffers_share() -> None:
    a = Buffer("a", "ub", "f32", (128, 256), live=(0, 1))  # 128 KiB
    b = Buffer("b", "ub", "f32", (128, 256), live=(2, 3))
    assert check([a, b], "ascend910b2").ok
    b2 = Buffer("b", "ub", "f32", (128, 256), live=(1, 3))
    res = check([a, b2], "ascend910b2")
    assert res.status == "unsat" and "at program point 1" in res.message


def test_all_violations_reported_core_first() -> None:
    bufs = [Buffer("A", "l0a", "f16", (256, 256)), Buffer("B", "l0b", "f16", (256, 256))]
    res = check(bufs, "ascend910b2")
    kinds = {e.constraint for e in res.explanations}
    assert kinds == {"capacity:l0a", "capacity:l0b"}
    assert res.explanations[0].in_core


def test_symbolic_dims_solver_picks_model() -> None:
    res = check(attention(2), "ascend910b2", domains={"q.i": [64, 128, 256], "kv.j": (16, 512)},
                api_temp=True)
    assert res.status == "sat"
    env = res.model
    assert env["q.i"] in (64, 128, 256) and 16 <= env["kv.j"] <= 512
    assert check(attention(2), "ascend910b2", sizes=env, api_temp=True).ok


def test_symbolic_unsat_explains_at_smallest() -> None:
    bufs = [Buffer("A", "l0a", "f16", ("m", "k"), cube_operand=True)]
    res = check(bufs, "ascend910b2", domains={"m": (300, 4000), "k": (300, 4000)})
    assert res.status == "unsat"
    assert "smallest allowed" in res.message and "m=304" in res.message


def test_json_and_table() -> None:
    res = check(attention(2), "ascend910b2", sizes=SIZES, api_temp=True)
    d = json.loads(res.to_json())
    assert d["status"] == "unsat" and d["per_scope"]["ub"]["total"] == 192 * KiB
    assert d["per_scope"]["ub"]["headroom"] == -8 * KiB
    assert d["explanations"][0]["kind"] == "capacity"
    text = res.format_table()
    assert "UB (ascend910b2)" in text and "headroom -8 KiB" in text and "unsat:" in text


def test_cache_hits() -> None:
    bufs = attention(1)
    first = check(bufs, "ascend910b2", sizes={"q.i": 32, "kv.j": 48})
    again = check(bufs, "ascend910b2", sizes={"q.i": 32, "kv.j": 48})
    assert again.cached and again.status == first.status and again.key == first.key
    other = check(bufs, "ascend910b4", sizes={"q.i": 32, "kv.j": 48})
    assert other.key != first.key


def test_typed_errors() -> None:
    with pytest.raises(InvalidBufferError) as ei:
        Buffer("x", "ub", "f64", (16,))
    assert "f64" in ei.value.summary and "f16" in ei.value.detail()
    with pytest.raises(InvalidBufferError):
        check([Buffer("x", "hbm", "f16", (16,))], "ascend910b2")
    with pytest.raises(InvalidBufferError, match="lives in L0A"):
        check([Buffer("x", "ub", "f16", (16,), position="A2")], "ascend910b2")
    with pytest.raises(InvalidBufferError, match="two buffers"):
        check([Buffer("x", "ub", "f16", (16,)), Buffer("x", "ub", "f16", (16,))])
    with pytest.raises(UnboundSizeError):
        check(attention(1), "ascend910b2", sizes={"nope": 3})
    with pytest.raises(InvalidBufferError):
        Buffer("x", "ub", "f16", (0,))


def test_unknown_result_raises_typed() -> None:
    from transformer.capacity import CapacityResult

    r = CapacityResult("unknown", "ascend910b2", {}, reason="solver timeout after 1 ms")
    with pytest.raises(CapacityUnknownError, match="timeout"):
        r.raise_for_status()


def test_target_object_or_name() -> None:
    t = get_target("ascend910b2")
    assert check(attention(1), t, sizes=SIZES).key == check(attention(1), None, sizes=SIZES).key
