"""Run-time sizes (docs/codegen.md, "Run-time sizes"): a kernel transformed once over its
size range is emitted once, reading its ranged sizes (and the tile count and per-core split
derived from them) from a `TilingData` struct that the emitted host tiling function fills;
ONE compiled binary (under sanitizers, hazard detection on) runs at every shape, given on
its command line, and matches the interpreter there: tails, sizes that are not multiples of
16, and the range's ends. Static sizes keep the fully specialised code (no struct)."""

from __future__ import annotations

import numpy as np
import pytest

from transformer.codegen import compile_emitted, emit_ascendc, verify_emitted

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


@pytest.mark.slow
def test_one_build_of_ranged_add_runs_every_shape_under_sanitizers() -> None:
    ranged, out = _ranged_add()
    em = emit_ascendc(out)
    compile_emitted(em, sanitize=True, optimize="-O0")  # the one build; verify_emitted reuses it (cache)
    seed = fresh_seed()
    for m in (100, 256, 1000, 1, 4096):  # tails of the 3-row tile, non-multiples of 16, both ends
        diffs = verify_emitted(out, seed=seed, reference=ranged.with_sizes({"M": m}), sanitize=True, emitted=em,
                               at_sizes=True)
        assert diffs and all(d.ok for d in diffs), (m, seed, diffs)
    assert np.isfinite([d.max_abs for d in diffs]).all()


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
