"""The static bounds proof (transformer/bounds.py): a transformed kernel given another size
is refused with a located error, never emitted with wrong counts (issue 24's regression:
`ascx transform swiglu_ew.ir --passes tile,double_buffer -o t.ir; ascx emit t.ir --size
M=128` once emitted a copy of `blockCount 65532`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from passes.base import run_pipeline
from small_kernels import SWIGLU
from documented import EXAMPLES, ROWS, SMALL
from transformer.bounds import check_bounds, out_of_bounds
from transformer.cli import main
from transformer.parser import parse, parse_file



def invoke(*args: str):
    r = CliRunner().invoke(main, list(args))
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    return r


@pytest.fixture(scope="module")
def tiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("swiglu")
    (d / "swiglu_ew.ir").write_text(SWIGLU)
    r = invoke("transform", str(d / "swiglu_ew.ir"), "--passes", "tile,double_buffer", "-o", str(d / "t.ir"))
    assert r.exit_code == 0, r.output
    return d / "t.ir"


def test_smaller_size_is_refused_at_the_copy_that_overruns(tiled: Path) -> None:
    text = tiled.read_text()
    r = invoke("emit", str(tiled), "--size", "M=128", "-o", str(tiled.parent / "k.cpp"))
    assert r.exit_code == 2, r.output
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "<- a[" in ln)
    col = text.splitlines()[line - 1].index("a[") + 1
    assert r.output.startswith(f"{tiled}:{line}:{col}: error: with --size M=128: the copy source `a` leaves "
                               "its dimension 0 (M = 128): `t0 * 8:t0 * 8 + 8` reaches "), r.output
    assert "\n" + " " * (col + 1) + "^\n" in r.output and "hint: if the kernel was transformed at other sizes, its loop bounds are the ones its passes derived" in r.output
    assert not (tiled.parent / "k.cpp").exists()


def test_larger_size_is_refused_as_an_output_never_written_to_its_end(tiled: Path) -> None:
    for cmd in ("emit", "check", "profile"):
        r = invoke(cmd, str(tiled), "--size", "M=1024")
        assert r.exit_code == 2, r.output
        assert "error: with --size M=1024: output `y` is not written to its end: no write reaches index 1023 " \
               "of dimension 0 (M = 1024)" in r.output, r.output


def test_same_size_and_passes_rederived_at_the_new_size_are_accepted(tiled: Path) -> None:
    assert invoke("emit", str(tiled), "--size", "M=512", "-o", str(tiled.parent / "a.cpp")).exit_code == 0
    src = tiled.parent / "swiglu_ew.ir"
    r = invoke("emit", str(src), "--size", "M=128", "--passes", "tile,double_buffer", "-o", str(tiled.parent / "b.cpp"))
    assert r.exit_code == 0, r.output


def test_the_witness_is_a_real_iteration() -> None:
    """The values quoted in the message put the copy past the end of `a`."""
    k, _ = run_pipeline(parse(SWIGLU), "tile,double_buffer", "ascend910b2")
    err = out_of_bounds(k, {"M": 100, "N": 2048})[0]
    t0 = int(err.message.split("when t0 = ")[1].split(",")[0])
    lo, hi = (int(x) for x in err.message.split("reaches ")[1].split(" ")[0].split(":"))
    assert (lo, hi) == (t0 * 8, t0 * 8 + 8) and hi > 100


@pytest.mark.parametrize("name,pipeline", ROWS, ids=[f"{n}-{p}" for n, p in ROWS])
def test_documented_pipelines_pass_the_proof_at_small_sizes(name: str, pipeline: str) -> None:
    """No false alarm: every documented pipeline at the small sizes (tails) keeps its
    accesses inside its tensors and writes its outputs to their ends (at the default sizes
    every emission proves it: the emitted-example tests of the slow tier)."""
    sizes = SMALL[name] | ({"D": 64} if "flash_attention" in pipeline else {})  # flash takes D = 64 or 128
    out, _ = run_pipeline(parse_file(str(EXAMPLES / f"{name}.ir")).with_sizes(sizes), pipeline, "ascend910b2")
    assert check_bounds(out) == [], [e.message for e in check_bounds(out)]


def test_hand_written_overrun_is_found_at_its_access() -> None:
    k = parse("kernel k(X: f32[N]) -> (Y: f32[N]) {\n  size N = 8\n  for i in 0..N { Y[i] = X[i + 1] }\n}\n")
    (e,) = check_bounds(k)
    assert str(e.loc) == "3:26" and "the read `X` leaves its dimension 0 (N = 8): `i + 1` reaches 8 when i = 7" in e.message


@pytest.mark.parametrize("name,pipeline", ROWS[:6], ids=[f"{n}-{p}" for n, p in ROWS[:6]])
def test_the_interval_fast_path_agrees_with_z3(name: str, pipeline: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the fast paths off, Z3 decides every access and output end: the same verdict
    (the intervals only ever skip what Z3 proves), at the small sizes (tails)."""
    from transformer import bounds

    k = parse_file(str(EXAMPLES / f"{name}.ir")).with_sizes(SMALL[name])
    out, _ = run_pipeline(k, pipeline, "ascend910b2")
    other = {n: v + 5 for n, v in SMALL[name].items()}  # the tiled kernel at other sizes: refused
    fast = [e.short() for e in check_bounds(out)], [e.short() for e in check_bounds(out, other)]
    monkeypatch.setattr(bounds, "_inside", lambda *a: False)
    monkeypatch.setattr(bounds, "_reaches_last", lambda *a: False)
    slow = [e.short() for e in check_bounds(out)], [e.short() for e in check_bounds(out, other)]
    assert fast[0] == [] and [e.split(": error: ")[0] for e in fast[1]] == [e.split(": error: ")[0] for e in slow[1]]
    assert slow[0] == []


def test_a_tiled_kernel_whose_size_was_edited_in_the_file_is_not_emitted(tiled: Path) -> None:
    """The same bug through the other door: `size M = 512` edited to 128 in t.ir. The
    emitter proves the bounds first (codegen.emit_ascendc), so emit and profile refuse."""
    edited = tiled.parent / "t128.ir"
    edited.write_text(tiled.read_text().replace("size M = 512", "size M = 128"))
    for cmd in ("emit", "profile"):
        r = invoke(cmd, str(edited))
        assert r.exit_code == 2, r.output
        assert f"{edited}:12:33: error: the copy source `a` leaves its dimension 0 (M = 128)" in r.output


def test_a_kernel_tiled_over_its_range_is_emitted_at_another_size_of_it(tmp_path: Path) -> None:
    """The issue's command with `M` ranged: `tile,double_buffer` keeps the range (run-time
    tile counts and tails), so the tiled file emits at `--size M=128` (and at a tail, 100)
    with counts derived from M, and a size outside the range is still a located error."""
    (tmp_path / "swiglu_ew.ir").write_text(SWIGLU.replace("size M = 512", "size M = 512 in 1..4096"))
    r = invoke("transform", str(tmp_path / "swiglu_ew.ir"), "--passes", "tile,double_buffer", "-o", str(tmp_path / "t.ir"))
    assert r.exit_code == 0, r.output
    text = (tmp_path / "t.ir").read_text()
    assert "size M = 512 in 1..4096" in text and "min(" in text and "(M + " in text
    for m in ("128", "100"):
        r = invoke("emit", str(tmp_path / "t.ir"), "--size", f"M={m}", "-o", str(tmp_path / f"k{m}.cpp"))
        assert r.exit_code == 0, r.output
        assert f"static constexpr int32_t M = {m};" in (tmp_path / f"k{m}.cpp").read_text()
    r = invoke("emit", str(tmp_path / "t.ir"), "--size", "M=5000")
    assert r.exit_code == 2 and "size `M` = 5000 is outside its range 1..4096" in r.output
