"""Pattern `conv` (phases): a `@conv` convolution nest (marked by the `conv_gemm` pass) as an
implicit GEMM on the cube over every AIC (`conv.py`: img2col gathered during GM -> L1). The
nest is matched structurally (`conv.match_conv`); the caller records the match
(Lowering.convs) and lowers the phase with conv.py."""

from __future__ import annotations

from .base import MarkedPhase

PATTERN = MarkedPhase(
    name="conv", module="conv", matcher="match_conv",
    marker="not marked @conv (the conv_gemm pass marks a convolution nest)",
    summary="a @conv convolution nest as an implicit GEMM on the cube over every AIC")
