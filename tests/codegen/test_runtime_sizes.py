"""Run-time sizes (docs/codegen.md, "Run-time sizes"): a kernel transformed once over its
size range is emitted once, reading its ranged sizes (and the tile count and per-core split
derived from them) from a `TilingData` struct that the emitted host tiling function fills;
ONE compiled binary (under sanitizers, hazard detection on) runs at every shape, given on
its command line, and matches the interpreter there: tails, sizes that are not multiples of
16, and the range's ends. Static sizes keep the fully specialised code (no struct)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from transformer.codegen import emit_ascendc

from .conftest import ROOT, apply, fresh_seed, kernel_text


def _ranged_add() -> tuple:  # type: ignore[type-arg]
    text = (ROOT / "examples" / "add.ir").read_text().replace("size M = 256", "size M = 256 in 1..4096")
    ranged = kernel_text(text)
    return ranged, apply(ranged, "tile,double_buffer")


def test_ranged_add_emits_a_tiling_struct_and_static_add_does_not() -> None:
    ranged, out = _ranged_add()
    em = emit_ascendc(out)
    assert em.plan is not None and em.plan.runtime_names == {"M": "M"}
    assert "struct TilingData" in em.source and "static constexpr int32_t M" not in em.source
    assert "GM_ADDR tiling)" in em.source and "M = tilingData->M;" in em.source
    assert "ComputeTiling(M, &blockDim)" in em.harness  # the harness calls the host tiling function
    static = emit_ascendc(apply(ranged.specialised(), "tile,double_buffer"))
    assert "TilingData" not in static.source and "static constexpr int32_t M = 256;" in static.source


def test_a_kernel_the_runtime_path_does_not_reach_is_specialised_with_a_note() -> None:
    text = (ROOT / "examples" / "add.ir").read_text().replace("size N = 1024", "size N = 1024 in 16..4096 multiple of 16")
    out = apply(kernel_text(text), "tile,double_buffer")  # N is a row's length: the GM strides depend on it
    em = emit_ascendc(out)
    assert "TilingData" not in em.source and "static constexpr int32_t N = 1024;" in em.source
    note = em.warnings[-1]
    assert "note: the ranged sizes are specialised at their values (N = 1024)" in note, note
    assert "`N` is not the outermost extent of the GM tensor `A`" in note, note
    assert "TilingData" not in emit_ascendc(out, runtime_sizes=False).source


def _ranged_matmul() -> tuple:  # type: ignore[type-arg]
    text = (ROOT / "examples" / "matmul.ir").read_text()
    for old, new in (("size M = 256", "size M = 256 in 1..300"), ("size N = 256", "size N = 256 in 1..300"),
                     ("size K = 512", "size K = 512 in 1..512")):
        text = text.replace(old, new)
    ranged = kernel_text(text)
    return ranged, apply(ranged, "gemm")


def test_ranged_gemm_reads_its_extents_and_c_tile_split_from_the_tiling_struct() -> None:
    ranged, out = _ranged_matmul()
    em = emit_ascendc(out)
    assert em.plan is not None and em.plan.kind == "cube" and em.plan.runtime_names == {"K": "K", "M": "M", "N": "N"}
    src = em.source
    for f in ("gemmMTiles", "gemmNTiles", "gemmTiles", "gemmKBlocks", "gemmCores"):
        assert f"{f} = tilingData->{f};" in src, f
    assert "tile < gemmTiles; tile += gemmCores" in src and "kb < gemmKBlocks" in src
    assert "ascx_min<int32_t>(128, M - m0)" in src and "Nd2NzParams(1, mLen, kLen, 0, K, mPad, 1, 0)" in src
    assert "InitConstValue" in src  # a run-time K may have a 16-row tail: its padding rows are zeroed
    assert "*blockDim = static_cast<uint32_t>(gemmCores);" in src and "static constexpr int32_t" not in src
    static = emit_ascendc(apply(ranged.specialised(), "gemm")).source
    assert "TilingData" not in static and "tile < 2; tile += 2" in static and "InitConstValue" not in static


def test_a_batched_gemm_with_run_time_sizes_is_specialised_with_a_note() -> None:
    text = (ROOT / "examples" / "bmm.ir").read_text()
    m = re.search(r"size M = (\d+)", text)
    assert m is not None
    out = apply(kernel_text(text.replace(m.group(0), f"{m.group(0)} in 1..1024")), "gemm")
    em = emit_ascendc(out)
    assert "TilingData" not in em.source and "a batched `@gemm` with run-time sizes" in em.warnings[-1], em.warnings


FLASH = "round_operand{pv.s=f16},flash_attention"


def _ranged_attention(example: str = "attention.ir", top: int = 640) -> tuple:  # type: ignore[type-arg]
    text = (ROOT / "examples" / example).read_text()
    m = re.search(r"size S = (\d+)", text)
    assert m is not None
    ranged = kernel_text(text.replace(m.group(0), f"size S = 512 in 128..{top} multiple of 128"))
    return ranged, apply(ranged, FLASH)


def test_ranged_flash_attention_reads_s_and_its_block_split_from_the_tiling_struct() -> None:
    ranged, out = _ranged_attention()
    em = emit_ascendc(out)
    assert em.plan is not None and em.plan.kind == "mix" and em.plan.runtime_names == {"S": "S"}
    src = em.source
    for f in ("S", "faKvBlocks", "faQTiles", "faCores"):
        assert f"{f} = tilingData->{f};" in src, f
    assert "*blockDim = static_cast<uint32_t>(faCores);" in src and "static constexpr int32_t S" not in src
    assert "faKey" not in src and "FlashCube2" not in src  # q = 64 and one tile per pass over all of 128..640: one path
    assert "(faQTiles - faBlk + faCores - 1) / faCores" in src  # round-robin over the blocks used, at run time
    assert "MGm.SetGlobalBuffer((__gm__ half *)M, (S) * (S));" in src and "(S - 128) * 2 / 32" in src  # M's row stride
    static = emit_ascendc(apply(ranged.specialised(), FLASH)).source
    assert "TilingData" not in static and "faTiles[" in static  # the emit-time schedule table


def _c_ternary(expr: str, env: dict[str, int]) -> int:
    """Evaluate the host tiling function's `S <= 1536 ? 0 : (S <= 3072 ? 1 : 2)` (integers,
    `<=`, `==` and right-nested `?:` only) at `env`."""
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    m = re.fullmatch(r"(\w+) (<=|==) (\d+) \? (\d+) : (.+)", expr)
    if m is None:
        return int(expr)
    a, op, b = env[m.group(1)], m.group(2), int(m.group(3))
    return int(m.group(4)) if (a <= b if op == "<=" else a == b) else _c_ternary(m.group(5), env)


def test_ranged_flash_attention_has_a_tiling_key_per_q_and_group_the_pass_would_choose() -> None:
    """S in 128..4096: the host picks the key of the (q, g) a static kernel gets at that S; the
    kernel branches once on it; each key's path has its own buffers (docs/codegen.md, "Tiling keys")."""
    import dataclasses

    from transformer.lower.flash import match_flash
    from transformer.lower.flash_keys import chosen
    from transformer.targets import resolve_target

    ranged, out = _ranged_attention(top=4096)
    src = emit_ascendc(out).source
    key_line = re.search(r"const int32_t faKey = (.+);", src)
    q_line = re.search(r"const int32_t faQTiles = S / \((.+)\);", src)
    assert key_line and q_line, src[:3000]
    assert src.count("faKey == ") >= 3  # two branches (AIC and AIV) on three keys, and the q of each key
    fa, target = match_flash(out.specialised()), resolve_target(None)
    assert not isinstance(fa, str)
    seen = set()
    for s in range(128, 4097, 128):
        key = _c_ternary(key_line.group(1), {"S": s})
        want = chosen(dataclasses.replace(fa, s=s), target)
        assert _c_ternary(q_line.group(1), {"faKey": key}) == want.q, (s, key, want)
        seen.add((key, want.q, want.g))
    assert seen == {(0, 64, 1), (1, 128, 1), (2, 64, 3)}, seen  # q = 128 from S = 1664, 3 tiles per pass from 3200
    assert "FlashCube2()" in src and "FlashCube3()" in src and "que_fa_q_l1_k2" in src


def test_causal_flash_attention_with_a_ranged_s_is_specialised_with_a_note() -> None:
    _, out = _ranged_attention("attention_causal.ir")
    em = emit_ascendc(out)
    assert "TilingData" not in em.source and "causal `@flash` at run time" in em.warnings[-1], em.warnings


VECTOR = {"softmax": "R", "rmsnorm": "N", "layernorm": "N"}  # a row-wise vector kernel -> its ranged row count


def _ranged_rows(example: str) -> tuple:  # type: ignore[type-arg]
    """`example` with its row count ranged over 1..300, through the documented `fuse,tile,double_buffer`."""
    size = VECTOR[example]
    text, n = re.subn(rf"^(\s*size {size} = \d+)\s*$", r"\1 in 1..300", (ROOT / "examples" / f"{example}.ir").read_text(),
                      count=1, flags=re.M)
    assert n == 1, example
    ranged = kernel_text(text)
    return ranged, apply(ranged, "fuse,tile,double_buffer")


@pytest.fixture(scope="module")
def ranged_bundle():  # type: ignore[no-untyped-def]
    """ONE sanitizer build of every ranged kernel below (bundle.py): each reads its sizes at run time."""
    from .bundle import build_bundle

    kernels = {"add": _ranged_add(), "matmul": _ranged_matmul(), "attention": _ranged_attention(top=1664),
               **{n: _ranged_rows(n) for n in VECTOR}}
    bundle = build_bundle({n: emit_ascendc(out) for n, (_, out) in kernels.items()}, sanitize=True)
    return bundle, {n: ranged for n, (ranged, _) in kernels.items()}


# per kernel: tails of the tiles, sizes that are not multiples of 16, the range's ends
SHAPES = {
    "add": [{"M": m} for m in (100, 256, 1000, 1, 4096)],  # the 3-row tile's tails
    "matmul": [{"M": 1, "N": 1, "K": 1}, {"M": 300, "N": 300, "K": 512}, {"M": 256, "N": 256, "K": 512},
               {"M": 100, "N": 37, "K": 300}, {"M": 17, "N": 260, "K": 33}],  # 128 x 256 C tiles, K blocks of 256
    # S in 128..1664 multiple of 128 (the key block): both ends; tiling key 0 (q = 64: 2 to 10 query tiles,
    # one per AIC block) up to 1536, key 1 (q = 128, 13 tiles) at 1664
    "attention": [{"S": s} for s in (128, 1664, 640, 256, 384)],
    # rows in 1..300, tiles of 3 rows: both ends, the default, tails of 1 (100) and 2 (47) rows
    **{n: [{size: r} for r in (1, 300, 256 if n == "softmax" else 128, 100, 47)] for n, size in VECTOR.items()},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_one_build_of_ranged_kernels_runs_every_shape_under_sanitizers(ranged_bundle, name: str) -> None:  # type: ignore[no-untyped-def]
    from transformer import ir
    from transformer.interp import compare_outputs, random_inputs, run

    from .bundle import run_bundled

    bundle, ranged = ranged_bundle
    assert bundle.emitted[name].plan.runtime_names, name  # emitted once, with run-time sizes (not specialised)
    assert name != "attention" or "faKey = tilingData->faKey;" in bundle.emitted[name].source  # two keyed paths
    seed = fresh_seed()
    for shape in SHAPES[name]:
        ref = ranged[name].with_sizes(shape)
        inputs = random_inputs(ref, np.random.default_rng(seed))
        outs = {t.name: tuple(ir.eval_int_expr(d, ref.size_values()) for d in t.shape) for t in ref.outputs}
        actual = run_bundled(bundle, name, inputs, sizes=shape, out_shapes=outs)  # hazard or sanitizer: raises
        diffs = compare_outputs(ref, run(ref, inputs), actual)
        assert diffs and all(d.ok for d in diffs), (name, shape, seed, diffs)
        assert all(np.any(a != 0) for a in actual.values()), (name, shape)


@pytest.mark.slow
def test_profile_shapes_profiles_one_binary_at_each_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from transformer.cli import main

    p = tmp_path / "add.ir"
    p.write_text((ROOT / "examples" / "add.ir").read_text().replace("size M = 256", "size M = 256 in 1..4096"))
    r = CliRunner().invoke(main, ["profile", str(p), "--passes", "tile,double_buffer", "--shapes", "M=1;M=4096",
                                  "--json"])
    assert r.exit_code == 0, r.output
    import json

    rows = json.loads(r.stdout)
    assert [x["shape"] for x in rows] == ["M=1", "M=4096"]
    cycles = [x["cycles"] for x in rows]
    assert cycles[1] > cycles[0], cycles  # 4096 rows move 4096x the bytes of one: the run saw its size
    text = CliRunner().invoke(main, ["profile", str(p), "--passes", "tile,double_buffer", "--shapes", "M=1"])
    assert "compiled once: one binary for every shape" in text.output, text.output
