"""GM tensors of 2^31 elements or more (issue 29, item 17): they were refused ("emitted Ascend
C indexes with int32_t"); the offsets into them are now computed in int64_t for the index
terms whose span needs it, and stay 32-bit everywhere else (`lower/cexpr.wide_stride`)."""

from __future__ import annotations

import re

import pytest

from transformer.check import check_kernel
from transformer.codegen import emit_ascendc
from transformer.lower.cexpr import wide_stride

from .conftest import apply, kernel_text

# a sum over the last axis of 128 x 4096 x 4096 f32 (8 GiB, 2^31 elements)
ROWSUM = """
kernel rowsum(X: f32[B, M, N]) -> (Y: f32[B, M]) {
  size B = 128
  size M = 4096
  size N = 4096
  sum: for b in 0..B {
    for i in 0..M {
      Y[b, i] = 0.0
      for j in 0..N {
        Y[b, i] += X[b, i, j]
      }
    }
  }
}
"""


def test_wide_stride_is_the_first_dimension_whose_span_overflows() -> None:
    assert wide_stride((128, 4096, 4096), (2**24, 4096, 1)) == 2**24
    assert wide_stride((64, 4096, 4096), (2**24, 4096, 1)) is None  # 2^30 elements fit
    assert wide_stride((3, 2**30), (2**30, 1)) == 2**30
    assert wide_stride((2**31 - 1, 2), (2, 1)) == 2  # the rows' span overflows, the columns' does not


def test_a_tensor_of_2_31_elements_is_accepted() -> None:
    assert check_kernel(kernel_text(ROWSUM)) == []


def test_tiled_sum_offsets_x_in_64_bit_and_y_in_32_bit() -> None:
    src = emit_ascendc(apply(kernel_text(ROWSUM), "tile,double_buffer")).source
    x_offsets = re.findall(r"XGm\[([^\]]*)\]", src)
    y_offsets = re.findall(r"YGm\[([^\]]*)\]", src)
    assert x_offsets and y_offsets
    # only X's outer index term (stride 2^24, span 2^31) is 64-bit
    assert all(re.search(r"static_cast<int64_t>\(\w+\) \* 16777216", o) for o in x_offsets), x_offsets
    assert all(o.count("int64_t") == 1 for o in x_offsets), x_offsets
    assert not any("int64_t" in o for o in y_offsets), y_offsets
    assert "XGm.SetGlobalBuffer((__gm__ float *)X, 2147483648);" in src


def test_scalar_code_offsets_x_in_64_bit() -> None:
    src = emit_ascendc(kernel_text(ROWSUM), select=False).source
    reads = re.findall(r"XGm\.GetValue\(([^;]*)\)", src)
    assert reads and all("static_cast<int64_t>(b) * 16777216" in r for r in reads), reads
    y_offsets = re.findall(r"YGm\.(?:GetValue|SetValue)\(([^,)]*)", src)
    assert y_offsets and not any("int64_t" in o for o in y_offsets), y_offsets


def test_smaller_tensors_keep_32_bit_offsets() -> None:
    k = kernel_text(ROWSUM.replace("size B = 128", "size B = 64"))
    src = emit_ascendc(apply(k, "tile,double_buffer")).source
    offsets = re.findall(r"[XY]Gm\[([^\]]*)\]", src)
    assert offsets and not any("int64_t" in o for o in offsets), offsets


# the last row of each of 129 blocks of 4096 x 4096: 2^31 + 2^24 elements, of which the
# kernel reads 129 rows; block 64 on starts at element 2^31 (a 32-bit offset wraps there)
LAST_ROW = """
kernel lastrow(X: f32[B, M, N]) -> (Y: f32[B, N]) {
  size B = 129
  size M = 4096
  size N = 4096
  pick: for b in 0..B {
    for j in 0..N {
      Y[b, j] = X[b, M - 1, j]
    }
  }
}
"""


@pytest.mark.slow
def test_timing_only_profile_of_a_tensor_over_2_31_elements() -> None:
    """The emitted kernel runs on the emulator (timing-only: the 8 GiB input is reserved, not
    allocated); the GM bounds check would stop a wrapped 32-bit offset."""
    from transformer.timing.profile import profile_kernel

    res = profile_kernel(apply(kernel_text(LAST_ROW), "tile,double_buffer"), "ascend910b2", timeout=120)
    assert res.cycles > 0
