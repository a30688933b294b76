"""`layout`: permutations, fractal layouts on split loops, conversion nests for parameters."""

from __future__ import annotations

import pytest

from passes_testutil import apply, canon, equivalent, example, kernel, roundtrips
from passes.base import PassError
from transformer.printer import print_kernel

TEMP_NCHW = """
kernel t(X: f32[N, C, H, W] layout NCHW) -> (Y: f32[N, C, H, W] layout NCHW) {
  size N = 2
  size C = 3
  size H = 4
  size W = 5
  temp T: f32[N, C, H, W] layout NCHW
  a: for n in 0..N {
    for c in 0..C {
      for h in 0..H {
        for w in 0..W {
          T[n, c, h, w] = X[n, c, h, w] * 2.0
          Y[n, c, h, w] = T[n, c, h, w] + 1.0
        }
      }
    }
  }
}
"""

TEMP_NHWC = TEMP_NCHW.replace("temp T: f32[N, C, H, W] layout NCHW", "temp T: f32[N, H, W, C] layout NHWC") \
    .replace("T[n, c, h, w]", "T[n, h, w, c]")


def test_golden_temp_permutation() -> None:
    out = apply(TEMP_NCHW, "layout{T=NHWC}")
    assert print_kernel(out) == canon(TEMP_NHWC)
    assert equivalent(kernel(TEMP_NCHW), out) == []


def test_parameter_gets_conversion_nest() -> None:
    out = apply(TEMP_NCHW, "layout{X=NHWC,Y=NHWC}")
    text = print_kernel(out)
    assert "X: f32[N, C, H, W] layout NCHW" in text  # signature unchanged
    assert "temp X_nhwc: f32[N, H, W, C] layout NHWC" in text
    assert "to_X_nhwc: for" in text and "from_Y_nhwc: for" in text
    assert roundtrips(out)
    assert equivalent(kernel(TEMP_NCHW), out) == []


@pytest.mark.parametrize("pipeline", ["layout{X=NHWC}", "layout{Y=NHWC}", "layout{X=NHWC,Wt=NHWC}"])
def test_conv2d_verifies(pipeline: str) -> None:
    k = example("conv2d")
    out = apply(k, pipeline)
    assert equivalent(k, out) == []


def test_nc1hwc0() -> None:
    k = example("conv2d", {"N": 1, "C": 16, "H": 5, "W": 5, "F": 2})
    out = apply(k, "layout{X=NC1HWC0}")
    text = print_kernel(out)
    assert "X_nc1hwc0: f16[N, 1, H, W, 16] layout NC1HWC0" in text
    assert "X_nc1hwc0[n, 0, y + r, x + s, c]" in text
    assert equivalent(k, out) == []


def test_nz_on_fractal_tiles() -> None:
    k = example("matmul", {"M": 32, "N": 16, "K": 32})
    out = apply(k, "tile{mm.i=16,mm.j=16,mm.k=16},layout{A_l0a=NZ,B_l0b=NZ}")
    text = print_kernel(out)
    assert "local A_l0a: f16[1, 1, 16, 16] layout NZ @l0a" in text
    assert "A_l0a[0, 0, i, k]" in text
    assert roundtrips(out)
    assert equivalent(k, out) == []


def test_nz_back_to_nd_through_copies_refused() -> None:
    k = example("matmul", {"M": 32, "N": 16, "K": 32})
    with pytest.raises(PassError) as e:
        apply(k, "tile{mm.i=16,mm.j=16,mm.k=16},layout{A_l0a=NZ},layout{A_l0a=ND}")
    assert "cannot be converted back to ND" in str(e.value)


def test_nz_needs_split_loops() -> None:
    with pytest.raises(PassError) as e:
        apply(example("matmul", {"M": 32, "N": 16, "K": 32}), "layout{A=NZ}")
    assert "cannot be split into 16-element fractals" in str(e.value) and "tile" in e.value.hint
    assert e.value.loc is not None


def test_permuting_an_extent_1_slice_of_a_staged_copy_is_refused() -> None:
    """conv2d with C = 1 after `tile{y=4}` stages `X_ub[0:C, 0:6, 0:3] <- X[n, 0:C, ...]`;
    NHWC would make the source [6, 3, 1] against [1, 6, 3]. The pass once let it through
    (it ignored extent-1 slices) and produced a kernel `check` rejects (fuzz seed
    1381771294); it now refuses, and `space()` does not offer it."""
    from passes.layout import Layout
    from transformer.targets import get_target

    k = apply(example("conv2d", {"N": 1, "C": 1, "H": 6, "W": 3, "F": 1}), "tile{y=4}")
    with pytest.raises(PassError, match="a copy does not convert"):
        apply(k, "layout{X=NHWC}")
    assert "layout{X=NHWC}" not in [p.to_text() for p in Layout.space(k, get_target())]


@pytest.mark.parametrize("pipeline", ["tile{y=4}", "tile{x=2}", "tile{y=2}"])
def test_permuting_a_staged_copy_with_equal_extents_is_refused(pipeline: str) -> None:
    """conv2d with C = 3 after tiling stages `Wt_ub[0:C, 0:3, 0:3] <- Wt[f, 0:C, 0:3, 0:3]`;
    NHWC would make the source `Wt_nhwc[f, 0:3, 0:3, 0:C]`: the same shape [3, 3, 3] by
    coincidence, but a copy pairs slices in order, so the DMA would transpose the filter.
    The pass let it through and the emitted kernel computed a wrong convolution (fuzz seed
    2943229462, `tile{y=4},unroll{r=2},layout{Wt=NHWC}`); it now refuses, and `space()`
    does not offer it. Converting before tiling still works (the copy is then made of the
    converted tensor)."""
    from passes.layout import Layout
    from transformer.targets import get_target

    small = example("conv2d", {"N": 1, "C": 3, "H": 6, "W": 5, "F": 1})
    k = apply(small, pipeline)
    with pytest.raises(PassError, match="would have to move a sliced dimension") as e:
        apply(k, "layout{Wt=NHWC}")
    assert "before tiling" in e.value.hint
    assert "layout{Wt=NHWC}" not in [p.to_text() for p in Layout.space(k, get_target())]
    assert not equivalent(small, apply(small, f"layout{{Wt=NHWC}},{pipeline}"))
