"""Pattern `gemm` (phases): a `@gemm` matmul nest (marked by the `gemm` pass; a batch loop
around it allowed) as a blocked cube kernel over every AIC (`gemm.py`: L1/L0 blocks, C
tiles round-robin). The nest is matched structurally (`gemm.match_gemm`), not by name; the
caller records the match (Lowering.gemms) and lowers the phase with gemm.py."""

from __future__ import annotations

from .base import MarkedPhase

PATTERN = MarkedPhase(
    name="gemm", module="gemm", matcher="match_gemm",
    marker="not marked @gemm (the gemm pass marks a matmul nest)",
    summary="a @gemm matmul nest (optionally batched) as a blocked cube kernel over every AIC")
