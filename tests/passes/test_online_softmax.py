"""`online_softmax`: the streaming form of attention, fused or not, causal or not."""

from __future__ import annotations

import pytest

from passes_testutil import apply, equivalent, example, roundtrips
from passes.base import PassError, run_pipeline
from passes.online_softmax import OnlineSoftmax
from transformer import ir
from transformer.printer import print_kernel


@pytest.mark.parametrize("name", ["attention", "attention_causal"])
@pytest.mark.parametrize("pre", ["", "fuse,"])
@pytest.mark.parametrize("block", [4, 6, 12])
def test_verifies(name: str, pre: str, block: int) -> None:
    k = example(name, {"S": 12, "D": 4})
    out = apply(k, f"{pre}online_softmax{{block={block}}}")
    assert roundtrips(out)
    assert len(out.body) == 1 and out.body[0].label == "attn"
    assert equivalent(k, out) == []


def test_shape_of_result() -> None:
    k = example("attention", {"S": 16, "D": 4})
    out, trace = run_pipeline(k, "online_softmax{block=8}")
    text = print_kernel(out)
    assert "kv: for jb in 0..2 {" in text
    assert "temp s: f32[S, 8]" in text
    assert "ms[i] = select(mb[i] == -inf, 0.0, mb[i])" in text
    assert "al[i] = exp(mx[i] - ms[i])" in text
    assert "acc[i, d] += s[i, j] * f32(V[jb * 8 + j, d])" in text
    assert "streamed" in trace[0].changes[0]


def test_then_tile_stages_kv_per_block() -> None:
    k = example("attention_causal", {"S": 32, "D": 4})
    out = apply(k, "fuse,online_softmax{block=8},tile{attn.i=8}")
    text = print_kernel(out)
    assert "copy K_ub[0:8, 0:D] <- K[jb * 8:jb * 8 + 8, 0:D]" in text
    assert "copy Q_ub[0:8, 0:D] <- Q[i0 * 8:i0 * 8 + 8, 0:D]" in text
    assert equivalent(k, out) == []


def test_block_must_divide() -> None:
    with pytest.raises(PassError) as e:
        apply(example("attention", {"S": 12, "D": 4}), "online_softmax{block=5}")
    assert "does not divide" in str(e.value) and e.value.hint


@pytest.mark.parametrize("name", ["add", "softmax", "matmul", "layernorm"])
def test_refused_without_pattern(name: str) -> None:
    with pytest.raises(PassError) as e:
        apply(example(name), "online_softmax", strict=True)
    assert str(e.value).count("online_softmax") >= 1 and e.value.hint


def test_space() -> None:
    k = example("attention", {"S": 32, "D": 4})
    assert [p.block for p in OnlineSoftmax.space(k)] == [16, 32]


def test_refuses_a_row_loop_that_is_the_key_loop() -> None:
    """After `interchange{qk,qk.j}` the outer loop of `qk` runs over keys: the pass used it
    as the row loop, reordered `s[i, j]` into `s[j, i]` and computed something else (found
    by tests/codegen/test_fuzz_emitted.py); now refused, and not offered by `space`."""
    k = example("attention", {"S": 16, "D": 4})
    t = apply(k, "interchange{bias,bias.j},interchange{qk,qk.j}")
    assert OnlineSoftmax.space(t) == []
    with pytest.raises(PassError, match="must be indexed by the row loop"):
        apply(t, "online_softmax{block=8}", strict=True)


def test_row_variable_named_like_a_key_variable() -> None:
    """Rows of `qk` called `j` while `expo` runs keys over `j`: merging the row loops
    substituted `i -> j` under `for j` (an invalid kernel); the rows get a fresh name."""
    k = example("attention", {"S": 16, "D": 4})
    text = print_kernel(k).replace("qk: for i in 0..S {\n    for j in 0..S {\n      s[i, j] = 0.0",
                                   "qk: for j in 0..S {\n    for jj in 0..S {\n      s[j, jj] = 0.0")
    text = text.replace("s[i, j] += f32(Q[i, k]) * f32(K[j, k])", "s[j, jj] += f32(Q[j, k]) * f32(K[jj, k])")
    from transformer.parser import parse

    k2 = parse(text, "t.ir")
    assert equivalent(k, k2) == []
    out = apply(k2, "online_softmax{block=8}")
    assert roundtrips(out) and equivalent(k, out) == []


@pytest.mark.parametrize("old, new, reason", [
    ("mx[i] = -inf", "mx[i] = -i", "must start at -inf"),
    ("sm[i] = 0.0", "sm[i] = 1.0", "must start at 0.0"),
    ("for j in 0..S {\n        acc[i, d] +=", "for j in 1..S {\n        acc[i, d] +=", "must run over the keys"),
])
def test_refuses_other_starts_and_ranges(old: str, new: str, reason: str) -> None:
    """Found by tests/test_cli_fuzz.py (ASCX_CLI_FUZZ_SEED=280493658732336, case 1997): a
    row max starting at `-i` and a weighted sum over an empty key range were streamed as if
    they started at -inf and ran over every key (a MISMATCH after `fuse,online_softmax`).
    The streaming form starts from -inf / 0.0 over all keys, so anything else is refused;
    the untouched kernel is still transformed."""
    k = example("attention", {"S": 16, "D": 4})
    text = print_kernel(k)
    assert old in text
    bad = text.replace(old, new)
    for pre in ("", "fuse,"):
        with pytest.raises(PassError, match=reason):
            apply(bad, f"{pre}online_softmax{{block=8}}", strict=True)
    assert equivalent(k, apply(k, "fuse,online_softmax{block=8}")) == []


# Grouped-query decode attention (examples/decode_attention.ir): the rows are two loops deep,
# KV head `h` x query row `g` of its group (query head `h * G + g`); the pair is the row index.
GQA = {"HQ": 6, "HK": 2, "S": 24, "D": 4}


@pytest.mark.parametrize("pre", ["", "fuse,"])
def test_two_deep_rows_stream_as_one_row_index(pre: str) -> None:
    k = example("decode_attention", GQA)
    out = apply(k, f"{pre}online_softmax{{block=8}}")
    assert roundtrips(out)
    (nest,) = out.body
    assert isinstance(nest, ir.For) and nest.label == "attn" and nest.var == "h"
    (inner,) = nest.body
    assert isinstance(inner, ir.For) and inner.var == "g"
    text = print_kernel(out)
    assert "temp mx: f32[HK, G]" in text and "temp s: f32[HK, G, 8]" in text
    assert "al[h, g] = exp(mx[h, g] - ms[h, g])" in text
    assert "acc[h, g, d] += s[h, g, j] * f32(V[h, jb * 8 + j, d])" in text
    assert equivalent(k, out) == []


def test_two_deep_rows_then_tile_share_each_kv_block_across_the_group() -> None:
    """A tile of the whole group (`tile{g=3}`): the point loop `g` sinks below the K/V block
    loop, so K and V are staged once per block for the G rows of their KV head, Q as a G x D
    tile, O written back as one."""
    k = example("decode_attention", GQA)
    out = apply(k, "fuse,online_softmax{block=8},tile{g=3}")
    text = print_kernel(out)
    assert "copy K_ub[0:8, 0:D] <- K[h, jb * 8:jb * 8 + 8, 0:D]" in text
    assert "local Q_ub: f16[3, 4] @ub" in text and "local O_ub: f16[3, 4] @ub" in text
    assert equivalent(k, out) == []


def test_two_deep_rows_tile_without_sizes_gives_each_query_row_a_tile() -> None:
    """`tile` alone: 2 KV heads are fewer than the cores, so each group is cut into 1-row
    tiles (`_balance.group_rows_for_cores`), each staging its own K/V blocks."""
    k = example("decode_attention", GQA)
    out, trace = run_pipeline(k, "fuse,online_softmax{block=8},tile")
    text = print_kernel(out)
    assert "local Q_ub: f16[1, 4] @ub" in text and "copy O[h * G + g0:h * G + g0 + 1, 0:D] <- O_ub[0:1, 0:D]" in text
    assert any("`g` in tiles of 1 (not 3)" in d for t in trace for d in t.decisions)
    assert equivalent(k, out) == []


def test_three_deep_rows_are_refused_with_the_loops() -> None:
    """A batch loop around the (h, g) rows: the row max is three loops deep, refused with the
    loops named and a hint (not rewritten wrongly)."""
    k = example("decode_attention", GQA)
    batched = tuple(ir.For("b", ir.IntLit(0), ir.IntLit(1), (s,), label=s.label) for s in k.body)  # type: ignore[attr-defined]
    import dataclasses

    with pytest.raises(PassError) as e:
        apply(dataclasses.replace(k, body=batched), "online_softmax", strict=True)
    assert "3 loops deep" in str(e.value) or "row loops" in str(e.value)
    assert e.value.hint
