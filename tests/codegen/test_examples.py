"""Every example, as written and under its documented pipeline, emits Ascend C that
compiles with `g++ -std=c++17 -Wall -Wextra -Werror` against the emulator and matches the
interpreter on fresh random inputs; one run per kernel kind under ASan/UBSan; attention on
ascend910b2 is a mix kernel (here `tile` alone: QKᵀ on the cube; with P rounded to f16
both matmuls are, test_mix_attention.py); matmul with a fused epilogue matches."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, check_emitted, example, kernel_text

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


AS_WRITTEN_SIZES: dict[str, dict[str, int]] = {
    "add": {"M": 4, "N": 24}, "softmax": {"R": 4, "C": 24}, "layernorm": {"N": 4, "H": 24},
    "rmsnorm": {"N": 4, "H": 24}, "matmul": {"M": 16, "N": 16, "K": 32}, "attention": {"S": 16, "D": 8},
    "attention_causal": {"S": 16, "D": 8}, "conv2d": {"N": 1, "C": 2, "H": 5, "W": 6, "F": 2},
}


# Each example's documented pipeline (its first README row, at the sizes of DOCUMENTED) is
# built and checked against the interpreter under sanitizers in test_sanitize_examples.py
# (test_first_rows_are_the_documented_pipelines_at_their_sizes): a second, unsanitized build
# of the same kernel would add its compile time to the full tier for nothing.


@pytest.fixture(scope="module")
def as_written() -> Bundle:
    """Every example as written (untransformed: scalar GM code), in ONE build."""
    return build_cases({name: example(name, sizes) for name, sizes in AS_WRITTEN_SIZES.items()}, sanitize=False)


@pytest.mark.parametrize("name", sorted(AS_WRITTEN_SIZES))
def test_as_written_matches_interpreter(as_written: Bundle, name: str) -> None:
    assert as_written.emitted[name].warnings, "an untiled kernel runs scalar GM code and must say so"
    check_bundled(as_written, name, example(name, AS_WRITTEN_SIZES[name]), what=f"{name} as written")


@pytest.mark.parametrize("name,pipeline,sizes,kind", [
    ("softmax", "fuse,tile,double_buffer", {"R": 6, "C": 12}, "vector"),
    ("matmul", "tile", {"M": 32, "N": 32, "K": 32}, "cube"),
    ("attention", "tile", {"S": 32, "D": 16}, "mix"),  # QKᵀ on the cube, P·V (f32 P) on the vector cores
])
def test_sanitized_run_per_kernel_kind(name: str, pipeline: str, sizes: dict[str, int], kind: str) -> None:
    k = example(name, sizes)
    t = apply(k, pipeline)
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.kind == kind
    check_emitted(t, k, emitted=em, sanitize=True, what=f"{name} under -fsanitize=address,undefined")


def test_attention_on_910b2_is_a_mix_kernel() -> None:
    from transformer.targets import get_target

    target = get_target("ascend910b2")
    k = example("attention", {"S": 64, "D": 32})
    t = apply(k, "tile", target)
    em = emit_ascendc(t, target)
    plan = em.plan
    assert plan is not None and plan.kind == "mix" and plan.mode == "MIX_MODE"
    cores = {ph.label: ph.core for ph in plan.phases}
    assert cores["qk"] == "cube" and cores["rmax"] == "vec" and cores["expo"] == "vec"
    assert "CrossCoreSetFlag" in em.source and "CrossCoreWaitFlag" in em.source
    # QKᵀ on the cube (Kᵀ needs no transposing load), softmax and P·V on the vector cores
    assert em.warnings == []
    instrs = set(plan.instructions())
    assert {"DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe", "Exp"} <= instrs
    assert instrs & {"ReduceMax", "WholeReduceMax"} and instrs & {"ReduceSum", "WholeReduceSum"}  # per row or one tile
    check_emitted(t, k, target=target, emitted=em, what="attention (mix) on ascend910b2")


MATMUL_RELU = """
kernel mm_bias_relu(A: f16[M, K], B: f16[K, N], bias: f16[N]) -> (C: f16[M, N]) {
  size M = 32
  size N = 32
  size K = 64
  temp acc: f32[M, N]
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += f32(A[i, k]) * f32(B[k, j]) }
    }
  }
  epi: for i in 0..M {
    for j in 0..N {
      C[i, j] = f16(max(acc[i, j] + f32(bias[j]), 0.0))
    }
  }
}
"""


@pytest.mark.parametrize("pipeline", ["fuse,tile", "tile"])
def test_matmul_with_fused_epilogue(pipeline: str) -> None:
    k = kernel_text(MATMUL_RELU)
    t = apply(k, pipeline)
    check_emitted(t, k, what=f"matmul + bias + relu --passes {pipeline}")


def test_multicore_split_and_barriers() -> None:
    k = example("softmax", {"R": 16, "C": 32})
    t = apply(k, "multicore{expo=2},tile")
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.block_dim >= 1
    assert "workerIdx" in em.source
    check_emitted(t, k, emitted=em, what="softmax with one nest split over 2 cores")
