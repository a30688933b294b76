"""Cube instruction selection (`transformer/lower/cube.py`), pattern by pattern: each kernel
stages its operands through l1 / l0a / l0b / l0c (`tile`), must select exactly the listed
instructions with no scalar fallback, and must match the interpreter on fresh inputs."""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import DOCUMENTED, apply, check_emitted, example, kernel_text

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


MATMUL_PIPELINE = DOCUMENTED["matmul"][0]
CUBE = {"DataCopy(Nd2NzParams)", "LoadData", "Mmad", "Fixpipe"}


def _select(cube: Bundle, case: str):  # type: ignore[no-untyped-def]
    em = cube.emitted[case]
    assert em.plan is not None
    return em, set(em.plan.instructions())


DOC_SIZES = {"doc_a": {"M": 128, "N": 64, "K": 192}, "doc_b": {"M": 64, "N": 128, "K": 128}}


@pytest.mark.parametrize("case", DOC_SIZES)
def test_documented_matmul_is_cube_code(cube: Bundle, case: str) -> None:
    sizes = DOC_SIZES[case]
    em, instrs = _select(cube, case)
    assert em.warnings == []
    assert CUBE | {"LoadData(ifTranspose)", "Mmad(cmatrixInitVal)"} <= instrs
    assert "GetValue" not in em.source and "SetValue" not in em.source
    assert em.plan is not None and em.plan.kind == "cube"
    assert "cmatrixInitVal = (k0 == 0)" in em.source and "QuantMode_t::F322F16" in em.source
    layouts = {b.name: b.layout for ph in em.plan.phases for b in ph.buffers}
    assert layouts == {"A_l1": "Nz", "B_l1": "Nz", "A_l0a": "Zz", "B_l0b": "Zn", "acc_l0c": "Nz"}
    check_bundled(cube, case, REFERENCES[case](), what=f"matmul {sizes} (cube)")


MATMUL_RELU_FIX = """
kernel mm_relu(A: f16[M, K], B: f16[K, N]) -> (C: f16[M, N]) {
  size M = 64
  size N = 96
  size K = 128
  temp acc: f32[M, N]
  mm: for i in 0..M {
    for j in 0..N {
      acc[i, j] = 0.0
      for k in 0..K { acc[i, j] += f32(A[i, k]) * f32(B[k, j]) }
      C[i, j] = f16(max(acc[i, j], 0.0))
    }
  }
}
"""


def _relu_in_fixpipe():  # type: ignore[no-untyped-def]
    """The tiled plain matmul with the relu put back (`tile` splits such an epilogue off)."""
    from transformer.printer import print_kernel

    plain = kernel_text(MATMUL_RELU_FIX.replace("f16(max(acc[i, j], 0.0))", "f16(acc[i, j])"))
    staged = print_kernel(apply(plain, "tile{mm.i=32,mm.j=32,mm.k=64},double_buffer"))
    assert "f16(acc_l0c[i, j])" in staged
    return kernel_text(staged.replace("f16(acc_l0c[i, j])", "f16(max(acc_l0c[i, j], 0.0))"))


def test_relu_epilogue_runs_in_fixpipe(cube: Bundle) -> None:
    """`C = f16(max(acc, 0.0))` from L0C: Fixpipe with `reluEn`. (`tile` splits such an
    epilogue off into a vector nest, so the staged form here is the tiled plain matmul
    with the relu put back.)"""
    em, instrs = _select(cube, "relu_fix")
    assert em.warnings == [] and CUBE <= instrs
    assert "true);" in next(l for l in em.source.splitlines() if "FixpipeParamsV220" in l)  # reluEn
    check_bundled(cube, "relu_fix", REFERENCES["relu_fix"](), what="matmul + relu in Fixpipe")


BIAS_RELU_SIZES = {"M": 128, "N": 64, "K": 192}


def matmul_bias_relu():  # type: ignore[no-untyped-def]
    """test_examples.MATMUL_RELU (bias + relu epilogue nest) at a non-square size."""
    from .test_examples import MATMUL_RELU

    return kernel_text(MATMUL_RELU).with_sizes(BIAS_RELU_SIZES)


def test_bias_relu_epilogue_is_a_mix_kernel(cube: Bundle) -> None:
    """Cube phase: Mmad, Fixpipe f32 into the GM workspace; cross-core flag; vector phase:
    bias + relu + cast on the AIVs."""
    em, instrs = _select(cube, "bias_relu")
    assert em.plan is not None and em.plan.kind == "mix"
    assert em.warnings == []
    assert CUBE <= instrs and {"Add", "Maxs", "Cast"} <= instrs
    assert "CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V)" in em.source
    check_bundled(cube, "bias_relu", REFERENCES["bias_relu"](), what="matmul + bias + relu (mix)")


MATMUL_BT = """
kernel mm_bt(A: f16[M, K], Bt: f16[N, K]) -> (C: f32[M, N]) {
  size M = 64
  size N = 128
  size K = 64
  mm: for i in 0..M {
    for j in 0..N {
      C[i, j] = 0.0
      for k in 0..K { C[i, j] += f32(A[i, k]) * f32(Bt[j, k]) }
    }
  }
}
"""


def test_transposed_b_operand_loads_without_transpose(cube: Bundle) -> None:
    """`B[j, k]` (Kᵀ in attention): the Nz tile of Bᵀ in L1 is already the Zn layout of B."""
    em, instrs = _select(cube, "bt")
    assert em.warnings == [] and CUBE <= instrs and "LoadData(ifTranspose)" not in instrs
    check_bundled(cube, "bt", REFERENCES["bt"](), what="matmul with a transposed B operand")


def test_unaligned_tiles_fall_back_to_scalar_with_a_warning(cube: Bundle) -> None:
    """Tiles that are not multiples of 16 (the capacity gate would refuse them; lowering
    must still be correct): the whole cube phase is scalar AIC code, warned."""
    em, instrs = _select(cube, "unaligned")
    assert any("no cube instruction selection" in w and "multiples of 16" in w for w in em.warnings)
    assert "Mmad" not in instrs
    check_bundled(cube, "unaligned", REFERENCES["unaligned"](), what="matmul with 8x8 tiles (scalar fallback)")


def test_cube_matmul_under_sanitizers() -> None:
    k = example("matmul", {"M": 32, "N": 32, "K": 64})
    t = apply(k, "tile{mm.i=16,mm.j=32,mm.k=32},double_buffer")
    em = emit_ascendc(t)
    assert em.plan is not None
    instrs = set(em.plan.instructions())
    assert em.warnings == [] and CUBE <= instrs
    check_emitted(t, k, emitted=em, sanitize=True, what="cube matmul under -fsanitize=address,undefined")


FUSED_SIZES = {"fused_a": {"M": 32, "N": 32, "K": 32}, "fused_b": {"M": 64, "N": 32, "K": 48}}


@pytest.mark.parametrize("case", FUSED_SIZES)
def test_store_fused_in_the_matmul_nest(cube: Bundle, case: str) -> None:
    """`tile` alone keeps `acc = 0; for k {..}; C = f16(acc)` in one (i, j) nest: Mmad
    (cmatrixInitVal = true) then Fixpipe, with the L0C queue allocated around them."""
    em, instrs = _select(cube, case)
    assert em.warnings == [] and CUBE <= instrs
    assert "que_acc_l0c.AllocTensor" in em.source and "cmatrixInitVal = true" in em.source
    check_bundled(cube, case, REFERENCES[case](), what=f"matmul {FUSED_SIZES[case]} --passes tile (fused store)")


def test_relu_epilogue_in_the_matmul_nest_is_split_off_by_tile(cube: Bundle) -> None:
    """`tile` splits `C = f16(max(acc, 0.0))` (not a plain cast) off the matmul nest: the
    matmul runs on the cube (Fixpipe f32 into the workspace), the relu on the vector cores."""
    em, instrs = _select(cube, "relu_split")
    assert em.plan is not None and em.plan.kind == "mix"
    assert [(ph.label, ph.core) for ph in em.plan.phases] == [("mm", "cube"), ("mm_epi", "vec")]
    assert em.warnings == [] and CUBE <= instrs and {"Maxs", "Cast"} <= instrs
    check_bundled(cube, "relu_split", REFERENCES["relu_split"](), what="matmul with relu in its nest, split by tile")


# case -> (the original kernel, its transformed form), built lazily by the module's bundle
CASES = {
    **{c: (lambda s=s: example("matmul", s), MATMUL_PIPELINE) for c, s in DOC_SIZES.items()},
    "relu_fix": (lambda: kernel_text(MATMUL_RELU_FIX), _relu_in_fixpipe),
    "bias_relu": (matmul_bias_relu, "tile"),
    "bt": (lambda: kernel_text(MATMUL_BT), "tile"),
    "unaligned": (lambda: example("matmul", {"M": 32, "N": 32, "K": 32}), "tile{mm.i=8,mm.j=8,mm.k=8}"),
    **{c: (lambda s=s: example("matmul", s), "tile") for c, s in FUSED_SIZES.items()},
    "relu_split": (lambda: kernel_text(MATMUL_RELU_FIX), "tile"),
}
REFERENCES = {c: ref for c, (ref, _) in CASES.items()}


@pytest.fixture(scope="module")
def cube() -> Bundle:
    """Every unsanitized case of this file in ONE build (tests/codegen/bundle.py)."""
    built = {c: (how() if callable(how) else apply(ref(), how)) for c, (ref, how) in CASES.items()}
    return build_cases(built, sanitize=False)
