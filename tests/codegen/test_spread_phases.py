"""Multi-phase kernels on every core (issue 14, item 1): each phase is spread on its own
(`transformer/lower/spread.py`), a cross-block barrier separates only the phases that hand
data to each other through GM (`phase_barriers`), and a spread loop collapses with its
inner tile loop into one flat index when that balances the cores better (`collapsible`),
each worker taking a contiguous range of (outer, inner) pairs."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower.lower import lower_kernel
from transformer.lower.spread import phase_barriers, phase_spans

from small_kernels import COLSUM

from .conftest import apply, check_emitted, example, kernel_text

CONV_VECTOR = "layout{X=NHWC},tile,double_buffer"

# three phases: `make` fills the temp T, `other` shares nothing with it in GM, `use` reads T
HANDOFF = """
kernel handoff(X: f32[N, C]) -> (Y: f32[N, C], Z: f32[N, C]) {
  size N = 64
  size C = 32
  temp T: f32[N, C]
  make: for i in 0..N {
    for c in 0..C {
      T[i, c] = X[i, c] * 2.0
    }
  }
  other: for i in 0..N {
    for c in 0..C {
      Z[i, c] = X[i, c] + 1.0
    }
  }
  use: for i in 0..N {
    for c in 0..C {
      Y[N - 1 - i, c] = T[i, c] + X[N - 1 - i, c]
    }
  }
}
"""

# two phases that share no tensor they write: no barrier at all
DISJOINT = """
kernel disjoint(X: f32[N, C]) -> (Y: f32[N, C], Z: f32[N, C]) {
  size N = 64
  size C = 32
  first: for i in 0..N {
    for c in 0..C {
      Y[i, c] = X[i, c] * 2.0
    }
  }
  second: for i in 0..N {
    for c in 0..C {
      Z[i, c] = X[i, c] - 1.0
    }
  }
}
"""

# `read` uses T before `clobber` overwrites it: a write after read needs the barrier too
WAR = """
kernel war(X: f32[N, C], T: f32[N, C]) -> (Y: f32[N, C], T2: f32[N, C]) {
  size N = 64
  size C = 32
  temp U: f32[N, C]
  init: for i in 0..N {
    for c in 0..C {
      U[i, c] = T[i, c]
    }
  }
  read: for i in 0..N {
    for c in 0..C {
      Y[i, c] = U[N - 1 - i, c] + X[i, c]
    }
  }
  clobber: for i in 0..N {
    for c in 0..C {
      U[i, c] = X[i, c]
      T2[i, c] = U[i, c]
    }
  }
}
"""


def _stmts(kernel):  # type: ignore[no-untyped-def]
    return [kernel.body[a:b + 1] for a, b in phase_spans(kernel)]


def test_barrier_only_between_phases_that_hand_data_through_gm() -> None:
    k = kernel_text(HANDOFF)
    why = phase_barriers(k, _stmts(k), [48, 48, 48])
    assert why[0] == "" and why[1] == ""  # `other` reads only X: no barrier before it
    assert why[2] == "it reads `T`, which phase `make` writes"
    # phases that both run on worker 0 alone are ordered by program order
    assert phase_barriers(k, _stmts(k), [1, 1, 1]) == ["", "", ""]
    plan = lower_kernel(k)
    assert [p.cores for p in plan.phases] == [48, 48, 48]
    assert plan.mode == "MIX_MODE" and "cross-block barrier" in plan.phases[2].spread
    assert "barrier" not in plan.phases[1].spread
    src = emit_ascendc(k).source
    assert src.count("CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV)") == 1


def test_write_after_read_needs_a_barrier() -> None:
    k = kernel_text(WAR)
    why = phase_barriers(k, _stmts(k), [48, 48, 48])
    assert why[1] == "it reads `U`, which phase `init` writes"
    assert why[2] == "it writes `U`, which phase `read` uses"


def test_phases_sharing_nothing_written_stay_an_aiv_launch() -> None:
    k = kernel_text(DISJOINT)
    plan = lower_kernel(k)
    assert plan.mode == "AIV_MODE" and plan.block_dim == 48 and [p.cores for p in plan.phases] == [48, 48]
    assert "CrossCore" not in emit_ascendc(k).source


def test_conv2d_vector_pipeline_spreads_both_phases() -> None:
    plan = lower_kernel(apply(example("conv2d"), CONV_VECTOR))
    to_nhwc, conv = plan.phases
    assert (to_nhwc.cores, conv.cores) == (2, 8), plan.summary()
    # conv's n0 (2 tiles) x f0 (4 tiles) as one index over 8 cores, not 2
    assert "`conv` x `f0` collapsed into one index of 2 x 4 = 8 iterations" in conv.spread
    assert "a cross-block barrier before it: it reads `X_nhwc`, which phase `to_X_nhwc` writes" in conv.spread
    # why the layout phase is not collapsed
    assert "not collapsed with an inner loop: statements follow" in to_nhwc.spread
    assert plan.mode == "MIX_MODE" and plan.block_dim == 4


@pytest.mark.parametrize("sizes,tiles,workers,note", [
    # 8 x 8 tiles on 48 cores: 2 per core, not 8 with the row loop alone on 8 cores
    ({"M": 64, "N": 1024}, "tile{ew.i=8,ew.j=128}", 48, "2 for the first 16, 1 for the rest"),
    # 10 x 10 tiles: shares straddle rows of tiles
    ({"M": 20, "N": 160}, "tile{ew.i=2,ew.j=16}", 48, "3 for the first 4, 2 for the rest"),
])
def test_2d_tile_grid_collapses(sizes: dict[str, int], tiles: str, workers: int, note: str) -> None:
    plan = lower_kernel(apply(example("add", sizes), tiles + ",double_buffer"))
    assert plan.block_dim == workers and plan.phases[0].cores == workers
    assert "collapsed into one index" in plan.phases[0].spread and note in plan.phases[0].spread


def test_collapse_looks_through_a_one_iteration_point_loop() -> None:
    """Group norm after `fuse,tile`: `for n0 in 0..N { for n in 0..1 { for g in 0..G {..} } }`;
    the image x group pairs are shared out (issue 28: blockDim was N = 2). The emulator runs
    it at 56 pairs on 48 cores in the operators' bundle (test_operators.VARIANTS)."""
    sizes = {"N": 2, "C": 320, "HH": 64, "WW": 64, "G": 32}
    plan = lower_kernel(apply(example("group_norm", sizes), "fuse,tile,double_buffer"))
    assert plan.block_dim == 48 and plan.phases[0].cores == 48
    assert "`mean` x `g` collapsed into one index of 2 x 32 = 64" in plan.phases[0].spread
    assert "2 for the first 16, 1 for the rest" in plan.phases[0].spread


def test_balanced_loop_is_not_collapsed() -> None:
    # 96 row tiles on 48 cores: 2 each already
    plan = lower_kernel(apply(example("add", {"M": 96, "N": 1024}), "tile{ew.i=1,ew.j=512},double_buffer"))
    assert plan.phases[0].cores == 48 and "collapsed" not in plan.phases[0].spread


def _flat_shares(trip: int, trip2: int, workers: int) -> list[list[tuple[int, int]]]:
    """The (outer, inner) pairs each worker visits, by the formulas `PhaseEmitter.collapsed` emits."""
    q, r = divmod(trip * trip2, workers)
    out = []
    for w in range(workers):
        begin = w * q + min(w, r)
        end = begin + q + (1 if w < r else 0)
        first, last = begin // trip2, (end - 1) // trip2
        out.append([(o, i) for o in range(first, last + 1)
                    for i in range(begin % trip2 if o == first else 0, (end - 1) % trip2 + 1 if o == last else trip2)])
    return out


def test_flat_shares_are_contiguous_and_cover_the_grid() -> None:
    for trip, trip2, n in [(10, 10, 48), (2, 4, 8), (11, 5, 48), (3, 7, 4), (8, 8, 48)]:
        shares = _flat_shares(trip, trip2, n)
        flat = [o * trip2 + i for s in shares for o, i in s]
        assert flat == list(range(trip * trip2))  # in order, each pair once
        assert max(map(len, shares)) - min(map(len, shares)) <= 1


@pytest.mark.slow
def test_phases_with_barrier_match_the_interpreter() -> None:
    k = kernel_text(HANDOFF)
    check_emitted(k, k, sanitize=True, what="three phases, one cross-block barrier")


@pytest.mark.slow
@pytest.mark.parametrize("name,sizes,pipeline", [
    # 11 x 5 conv tiles over 48 cores: shares straddle images (the input plane staged again)
    ("conv2d", {"N": 11, "C": 2, "H": 6, "W": 6, "F": 40}, "layout{X=NHWC},tile{n=1,f=8},double_buffer"),
    ("add", {"M": 20, "N": 160}, "tile{ew.i=2,ew.j=16},double_buffer"),
])
def test_collapsed_shares_match_the_interpreter(name: str, sizes: dict[str, int], pipeline: str) -> None:
    k = example(name, sizes)
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.plan is not None and any("collapsed" in p.spread for p in em.plan.phases)
    check_emitted(t, k, emitted=em, sanitize=True, what=f"{name} {sizes} --passes {pipeline}")


@pytest.mark.slow
@pytest.mark.parametrize("source,pipeline", [
    # the column sum's reduction loop split into 6 parts on 6 cores, a barrier, the combine
    (COLSUM, "rfactor{run=6},tile,double_buffer"),
    # softmax's row max in 2 parts per row: 100 rows x 2 parts collapsed over 48 cores
    ("softmax", "rfactor{rmax.c=2},rfactor{expo.c=2},tile,double_buffer"),
])
def test_rfactor_phases_match_the_interpreter(source: str, pipeline: str) -> None:
    k = example(source, {"R": 100, "C": 64}) if source == "softmax" else kernel_text(source).with_sizes({"N": 96, "C": 40})
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.plan is not None and len(em.plan.phases) >= 3 and em.plan.mode == "MIX_MODE"
    check_emitted(t, k, emitted=em, sanitize=True, what=f"--passes {pipeline}")
