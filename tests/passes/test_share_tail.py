"""`share_tail` (passes/share_tail.py): the rows of a row loop's last, partial wave over the cores
shared among several cores, each recomputing the row's statistics and writing a part of its
last loop. Exact: the interpreter gives bit-identical outputs; the lowering spreads the new
phase one (row, part) per core; refusals say why; emitted code runs under sanitizers (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from passes.base import PassError
from passes_testutil import apply, equivalent, example, kernel
from transformer.interp import random_inputs, run
from transformer.lower.lower import lower_kernel
from transformer.printer import print_kernel

# long rows at test sizes: one row per tile loop iteration, the row in tiles of 256
LONG = "fuse,tile{rmax=1,rmax.c=256},double_buffer"


def _bit_identical(a, b) -> None:  # type: ignore[no-untyped-def]
    """`a` and `b` give the same outputs bit for bit on fresh random inputs."""
    seed = int(np.random.SeedSequence().entropy % (2**32))
    inputs = random_inputs(a, np.random.default_rng(seed))
    want, got = run(a, inputs), run(b, inputs)
    for name in want:
        assert np.array_equal(want[name], got[name], equal_nan=True), f"{name} differs (seed {seed})"


@pytest.mark.parametrize("rows", [50, 20, 100])
def test_softmax_tail_is_bit_identical(rows: int) -> None:
    k = example("softmax", {"R": rows, "C": 1024})
    before = apply(k, LONG)
    out = apply(before, "share_tail")
    _bit_identical(before, out)  # the same statements, the same values
    assert not equivalent(k, out)
    tail = out.body[-1]
    assert tail.label == "rmax_tail"
    # rows % 48 rows (all of them when fewer than 48) shared among up to 48 // t cores,
    # at most one part per tile of the last loop (4 tiles of 256)
    t = rows % 48 if rows >= 48 else rows
    per = -(-4 // min(48 // t, 4))
    assert print_kernel(out).count(f"for p in 0..{-(-4 // per)} {{") == 1
    assert len(out.body) == (2 if rows > 48 else 1)


def test_rmsnorm_tail_is_bit_identical() -> None:
    k = example("rmsnorm", {"N": 50, "H": 1024})
    before = apply(k, "fuse,tile{sumsq=1,sumsq.h=256},double_buffer")
    out = apply(before, "share_tail")
    assert any(getattr(s, "label", "") and s.label.endswith("_tail") for s in out.body), print_kernel(out)
    _bit_identical(before, out)
    assert not equivalent(k, out)


def test_the_tail_phase_runs_one_row_part_per_core() -> None:
    out = apply(example("softmax", {"R": 64, "C": 1024}), LONG + ",share_tail")
    text = print_kernel(out)
    # 64 rows over 48 cores: the first 48 rows one per core, the last 16 by 3 cores each
    assert "rmax: for r0 in 0..48 {" in text and "rmax_tail: for r0 in 48..64 {" in text
    assert "for c0_2 in p * 2..min(p * 2 + 2, 4) {" in text, text
    plan = lower_kernel(out)
    assert [p.label for p in plan.phases] == ["rmax", "rmax_tail"]
    assert plan.phases[0].cores == 48 and plan.phases[1].cores == 32, plan.summary()
    assert "collapsed into one index of 16 x 2 = 32 iterations" in plan.phases[1].spread or \
        "collapsed into one index of 16 x 3 = 48 iterations" in plan.phases[1].spread, plan.phases[1].spread
    # the row's private names are its own in the new phase (a local of two phases would live in GM)
    assert out.tensor("X_ub_1") is not None and out.tensor("mx_1") is not None


@pytest.mark.parametrize("rows,pipeline,message", [
    (96, LONG + ",share_tail{rmax}", "its 96 rows are a multiple of the 48 cores"),
    (50, "fuse,tile,double_buffer,share_tail{rmax}", "does not end with a loop over the row"),
    (50, "fuse,share_tail{nope}", "`nope` is not a top-level loop"),
    (47, LONG + ",share_tail{rmax}", "47 rows in the last wave leave fewer than 2 cores per row"),
])
def test_refusals_say_why(rows: int, pipeline: str, message: str) -> None:
    with pytest.raises(PassError) as e:
        apply(example("softmax", {"R": rows, "C": 1024}), pipeline)
    assert message in str(e.value), str(e.value)


def test_a_row_reading_what_its_last_loop_writes_is_refused() -> None:
    k = kernel("""
    kernel k(X: f32[R, C]) -> (Y: f32[R, C]) {
      size R = 50
      size C = 8
      temp s: f32
      rows: for r in 0..R {
        s = Y[r, 0]
        for c in 0..C {
          Y[r, c] = X[r, c] + s
        }
      }
    }""")
    with pytest.raises(PassError, match="reads `Y` before its last loop"):
        apply(k, "share_tail{rows}")
    # unnamed, the pass leaves it and says so
    assert apply(k, "share_tail") == k


def test_space_is_empty() -> None:
    from passes.share_tail import ShareTail

    assert ShareTail.space(example("softmax", {"R": 50, "C": 1024})) == []


@pytest.mark.slow
def test_emitted_tail_runs_exactly_under_sanitizers() -> None:
    from codegen.conftest import check_emitted

    k = example("softmax", {"R": 50, "C": 1024})
    check_emitted(apply(k, LONG + ",share_tail"), k, sanitize=True, what="softmax R=50 share_tail")
