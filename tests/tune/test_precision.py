"""`ascx tune --allow PASS`: precision-changing passes only when asked, each candidate
verified against the interpreter, the winner's precision choice named."""

from __future__ import annotations

from click.testing import CliRunner

from transformer.cli import main
from transformer.parser import parse
from transformer.tune.db import TuningDB
from transformer.tune.measurers import EstimateMeasurer
from transformer.tune.tuner import tune

from .conftest import ROOT

ATTENTION = str(ROOT / "examples" / "attention.ir")
SIZES = ["--size", "S=256", "--size", "D=64"]


def _tune(db: str, *args: str):
    return CliRunner().invoke(main, ["tune", ATTENTION, *SIZES, "--measure", "estimate", "--db", db, *args],
                              catch_exceptions=False)


def test_allow_round_operand_finds_the_flash_kernel_and_says_so(tmp_path, target):
    from transformer.cli_common import load_kernel
    from transformer.cli_tune import _report

    k = load_kernel(ATTENTION, ("S=256", "D=64"))
    db = TuningDB(tmp_path / "t.sqlite")
    stages = ("fuse",)  # the default stages cost minutes of pricing here, not the point of this test
    r = tune(k, target, budget=5, measurer=EstimateMeasurer(), db=db, stages=stages, allow=("round_operand",))
    assert r.space.stages[:2] == ("round_operand", "flash_attention")
    assert r.best.pipeline == "round_operand{pv.s=f16},flash_attention"
    d = r.to_json()
    assert d["allow"] == ["round_operand"]
    assert d["precision"]["passes"] == ["round_operand{pv.s=f16}"] and d["precision"]["verified"]["ok"]
    assert "precision: round_operand{pv.s=f16} (allowed by --allow; verified against the interpreter: `O` max abs err" \
        in _report(r)
    # without --allow, the same DB never answers with a precision change (grid: no pricing)
    plain = tune(k, target, budget=5, strategy="grid", measurer=EstimateMeasurer(), db=db, stages=stages)
    assert "round_operand" not in plain.best.pipeline and plain.to_json()["precision"] is None


def test_without_allow_no_candidate_changes_precision(tmp_path, target):
    from transformer.cli_common import load_kernel

    r = tune(load_kernel(ATTENTION, ("S=256", "D=64")), target, budget=6, strategy="random", seed=1,
             measurer=EstimateMeasurer(), db=TuningDB(tmp_path / "t.sqlite"))
    assert "round_operand" not in r.space.stages and "flash_attention" not in r.space.stages
    assert not any("round_operand" in c.pipeline for c, _ in r.history)


def test_a_candidate_outside_the_tolerance_is_a_failure_never_measured(tmp_path, target):
    # f32 output: rounding an f32 operand to f16 is far outside f32's tolerance
    k = parse("""
kernel mm32(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  size M = 16
  size N = 16
  size K = 64
  mm: for i in 0..M {
    for j in 0..N {
      C[i, j] = 0.0
      for k in 0..K { C[i, j] += A[i, k] * B[k, j] }
    }
  }
}
""", "mm32.ir")
    calls = []

    class Counting(EstimateMeasurer):
        def measure(self, kernel, target):
            calls.append(kernel)
            return super().measure(kernel, target)

    r = tune(k, target, budget=12, strategy="grid", measurer=Counting(), db=TuningDB(tmp_path / "t.sqlite"),
             allow=("round_operand",), stages=("tile",))  # one stage after the precision ones: reached sooner
    bad = [(c, m) for c, m in r.history if "round_operand" in c.pipeline]
    assert bad and all(m.error.startswith("precision: ") and "rtol" in m.error for _, m in bad)
    assert all(not r.precision[c.key].ok for c, _ in bad)
    assert len(calls) == len(r.history) - len(bad)  # the refused ones were never measured
    assert "round_operand" not in r.best.pipeline


def test_allow_takes_only_precision_passes(tmp_path):
    r = _tune(str(tmp_path / "t.sqlite"), "--allow", "tile")
    assert r.exit_code == 2 and "not a precision-changing pass" in r.output and "round_operand" in r.output


def test_the_agent_prices_past_the_allowed_precision_stages(target):
    """P rounded to f16 but not yet flashed is priced worse than the untransformed kernel:
    best-first pricing alone never reaches the flash kernel; the `--allow` stages are
    expanded in full first (`space.eager`)."""
    from transformer.cli_common import load_kernel
    from transformer.tune.space import SearchSpace
    from transformer.tune.strategies import Agent

    class Short(Agent):
        PRICE_EXPANSIONS = 1

    k = load_kernel(ATTENTION, ("S=256", "D=64"))
    priced = {}
    for eager in (0, 2):
        sp = SearchSpace(k, target, ("round_operand", "flash_attention", "fuse"))
        sp.eager = eager
        a = Short(sp, 0)
        priced[eager] = {sp.by_key[key].pipeline for key in a.priced}
    flash = "round_operand{pv.s=f16},flash_attention"
    assert flash in priced[2] and flash not in priced[0]


def test_no_pass_is_searched_after_flash_attention(target):
    """After `flash_attention` a `multicore` changes the IR but not one line of the emitted
    kernel: the staged space stops at a `@flash` kernel instead of measuring copies of it."""
    from transformer.cli_common import load_kernel
    from transformer.tune.space import SearchSpace

    sp = SearchSpace.build(load_kernel(ATTENTION, ("S=256", "D=64")), target,
                           ("round_operand", "flash_attention", "multicore"))
    pipelines = {c.pipeline for c in sp.candidates}
    assert "round_operand{pv.s=f16},flash_attention" in pipelines
    assert not any(p.startswith("round_operand{pv.s=f16},flash_attention,") for p in pipelines)
    assert any(p.startswith("multicore") for p in pipelines)  # other kernels still get the stage
