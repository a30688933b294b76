"""`double_buffer`: annotation and stages, unchanged meaning, hazards refused with both locations."""

from __future__ import annotations

import pytest

from passes_testutil import apply, canon, equivalent, example, kernel, roundtrips
from passes.base import PassError, run_pipeline
from passes.double_buffer import DoubleBuffer, buffer_stages
from transformer.printer import print_kernel

ROWSUM = """
kernel rs(X: f32[R, C]) -> (Y: f32[R]) {
  size R = 8
  size C = 16
  rows: for r in 0..R {
    Y[r] = 0.0
    for c in 0..C {
      Y[r] += X[r, c]
    }
  }
}
"""

ROWSUM_DB = """
kernel rs(X: f32[R, C]) -> (Y: f32[R]) {
  size R = 8
  size C = 16
  local X_ub: f32[4, 8] @ub
  local Y_ub: f32[4] @ub
  @pipeline(stages=2)
  rows: for r0 in 0..2 {
    for r in 0..4 {
      Y_ub[r] = 0.0
    }
    @pipeline(stages=2)
    for c0 in 0..2 {
      copy X_ub[0:4, 0:8] <- X[r0 * 4:r0 * 4 + 4, c0 * 8:c0 * 8 + 8]
      for r in 0..4 {
        for c in 0..8 {
          Y_ub[r] += X_ub[r, c]
        }
      }
    }
    copy Y[r0 * 4:r0 * 4 + 4] <- Y_ub[0:4]
  }
}
"""

CARRIED = """
kernel carried(X: f32[N]) -> (Y: f32[B]) {
  size N = 256
  size B = 64
  local x_ub: f32[64] @ub
  local y_ub: f32[64] @ub
  for i in 0..B {
    y_ub[i] = 0.0
  }
  blk: for b in 0..4 {
    copy x_ub[0:64] <- X[b * 64:b * 64 + 64]
    for i in 0..B {
      y_ub[i] += x_ub[i]
    }
    copy Y[0:64] <- y_ub[0:64]
  }
}
"""

GM_WAR = """
kernel war(X: f32[N]) -> (Y: f32[N]) {
  size N = 64
  temp t: f32[N]
  local t_ub: f32[64] @ub
  for i in 0..N {
    t[i] = X[i]
  }
  blk: for b in 0..4 {
    copy t_ub[0:64] <- t[0:64]
    for i in 0..64 {
      t_ub[i] = t_ub[i] * 2.0
    }
    copy t[0:64] <- t_ub[0:64]
  }
  for i in 0..N {
    Y[i] = t[i]
  }
}
"""


def test_golden_rowsum() -> None:
    out = apply(ROWSUM, "tile{rows.r=4,rows.c=8},double_buffer")
    assert print_kernel(out) == canon(ROWSUM_DB)
    assert roundtrips(out)
    assert equivalent(kernel(ROWSUM), out) == []
    st = buffer_stages(out)
    assert st == {"X_ub": 2, "Y_ub": 2}


def test_explicit_loop_and_stages() -> None:
    out = apply(ROWSUM, "tile{rows.r=4,rows.c=8},double_buffer{loop=rows.c0,stages=3}")
    assert buffer_stages(out) == {"X_ub": 3, "Y_ub": 1}
    assert equivalent(kernel(ROWSUM), out) == []


@pytest.mark.parametrize("name,tiles", [
    ("add", "tile{ew.i=4,ew.j=4}"),
    ("softmax", "tile{rmax.r=2,expo.r=2,norm.r=2}"),
    ("matmul", "tile{mm.i=4,mm.j=2,mm.k=4}"),
    ("attention", "tile{qk.i=4,qk.j=4,pv.i=4,pv.j=4}"),
    ("conv2d", "tile{conv.f=1,conv.y=2}"),
])
def test_examples_verify(name: str, tiles: str) -> None:
    k = example(name)
    out, trace = run_pipeline(k, tiles + ",double_buffer")
    assert "@pipeline(stages=2)" in print_kernel(out)
    assert any(v == 2 for v in buffer_stages(out).values())
    assert roundtrips(out)
    assert equivalent(k, out) == []


def test_carried_value_refused_with_both_locations() -> None:
    with pytest.raises(PassError) as e:
        apply(CARRIED, "double_buffer{loop=blk}")
    msg = str(e.value)
    assert "double_buffer" in msg and "`y_ub`" in msg and "carries a value" in msg
    assert "read at line 12:7" in msg and "written at line 12:7" in msg
    assert e.value.loc is not None


def test_gm_war_refused_with_both_locations() -> None:
    with pytest.raises(PassError) as e:
        apply(GM_WAR, "double_buffer{loop=blk}")
    msg = str(e.value)
    assert "`t`" in msg and "read at line 9:5" in msg and "written at line 13:5" in msg


def test_no_staged_loop() -> None:
    with pytest.raises(PassError) as e:
        apply(ROWSUM, "double_buffer", strict=True)
    assert "run `tile` first" in str(e.value)
    assert apply(ROWSUM, "double_buffer") == kernel(ROWSUM)  # without --strict: a no-op (noted)


def test_space() -> None:
    k = apply(example("add"), "tile{ew.i=2,ew.j=4}")
    sp = DoubleBuffer.space(k)
    assert sp and all(p.loop for p in sp)
