"""The timing model is deterministic: one binary, the same cycles on every run (slow: one
compile). A mix kernel whose 48 AIV cores meet at mode-0 cross-core barriers once gave
cycles that varied by up to 16 from run to run: each wait applied the barrier's edges in
the order the core threads happened to arrive, and every edge costs an issue slot."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from transformer.cli_common import load_kernel
from transformer.codegen import compile_emitted, emit_ascendc
from transformer.targets import get_target
from transformer.timing.profile import _write_inputs, run_profiled

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_a_mix_kernel_with_cross_core_barriers_gives_the_same_cycles_every_run():
    from passes.base import parse_pipeline

    target = get_target("ascend910b2")
    kernel = load_kernel(str(ROOT / "examples" / "attention.ir"), ("S=128", "D=64"))
    for p in parse_pipeline("gemm,tile,double_buffer"):
        kernel = p.apply(kernel, target)
    em = emit_ascendc(kernel, target)
    assert em.plan.kind == "mix" and "CrossCoreWaitFlag(SYNC_AIV)" in em.source
    binary = compile_emitted(em)
    with tempfile.TemporaryDirectory() as tmp:
        _write_inputs(em.plan, Path(tmp))
        cycles = {run_profiled(binary, target, [tmp], timing_only=True)[0]["cycles"] for _ in range(5)}
    assert len(cycles) == 1, sorted(cycles)
