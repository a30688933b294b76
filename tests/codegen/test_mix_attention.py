"""Attention as a mix kernel on 910B with both matmuls on the cube (issue 5: "cube for QKᵀ
and PV, vector for softmax"): `round_operand{pv.s=f16},tile` rounds P to f16 (as
FlashAttention kernels do), `tile` stages QKᵀ and P·V through l1 / l0a / l0b / l0c and
splits the normalisation off P·V. Checked here: two Mmads, no scalar fallback, the
AIV -> AIC and AIC -> AIV hand-offs through the GM workspace, and the emitted code
(g++ -Wall -Wextra -Werror, and once under ASan/UBSan) against the interpreter of the
ORIGINAL kernel on fresh random inputs; P·V's B operand (V stored [S, D], reduced over
its rows) pinned by a differential test at non-square sizes."""

from __future__ import annotations

import re

import pytest

from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, check_emitted, example, kernel_text

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


MIX = "round_operand{pv.s=f16},tile"  # examples/README.md: attention, mix kernel on 910B
CUBE = {"DataCopy(Nd2NzParams)", "LoadData", "LoadData(ifTranspose)", "Mmad", "Fixpipe"}
VECTOR = {"Exp", "Cast", "Div"}  # and the row max and sum: per row or as one tile (`_reductions`)


def _process(source: str) -> list[str]:
    body = source.split("void Process()", 1)[1].split("\n    }\n", 1)[0]
    return [ln.strip() for ln in body.splitlines() if ln.strip() and ln.strip() not in ("{", "}")]


def _mix(sizes: dict[str, int]):  # type: ignore[no-untyped-def]
    from transformer.targets import get_target

    target = get_target("ascend910b2")
    k = example("attention", sizes)
    t = apply(k, MIX, target)
    return k, t, emit_ascendc(t, target, pipeline=MIX), target


QK_SIZES = {"mix_64_32": {"S": 64, "D": 32}, "mix_128_64": {"S": 128, "D": 64}}


@pytest.mark.parametrize("case", QK_SIZES)
def test_qk_and_pv_on_the_cube(mix_bundle: Bundle, case: str) -> None:
    sizes = QK_SIZES[case]
    k, t, em, target = _mix(sizes)
    plan = em.plan
    assert plan is not None and plan.kind == "mix" and plan.mode == "MIX_MODE"
    cores = [(ph.label, ph.core) for ph in plan.phases]
    assert cores == [("qk", "cube"), ("bias", "vec"), ("rmax", "vec"), ("expo", "vec"), ("round_s", "vec"),
                     ("pv", "cube"), ("pv_epi", "vec")]
    assert em.warnings == [], em.warnings  # no scalar fallback anywhere
    assert em.source.count("Mmad(") == 2  # QKᵀ and P·V
    instrs = set(plan.instructions())
    assert CUBE | VECTOR <= instrs, instrs
    assert instrs & {"ReduceMax", "WholeReduceMax"} and instrs & {"ReduceSum", "WholeReduceSum"}, instrs
    # P as A (Zz, per K block), V as B through the transposing load (V is [K, N] = [S, D])
    assert re.search(r"LoadData\(s_f16_l0aLocal\[ascx_kb \* 256\], s_f16_l1Local\[.*, false, 0\)\);", em.source)
    assert re.search(r"LoadData\(V_l0bLocal\[ascx_kb \* \d+\], V_l1Local\[.*, true, 0\)\);", em.source)
    # scores and the P·V accumulator leave L0C as f32 (NoQuant) into the workspace; P comes
    # back from the vector cores as f16 through the workspace
    assert {s.name: s.dtype for s in plan.workspace} == {"s": "f32", "s_f16": "f16", "mx": "f32", "sm": "f32",
                                                         "acc": "f32"}
    check_bundled(mix_bundle, case, k, what=f"attention {sizes} --passes {MIX}")


def test_hand_offs_between_the_cores() -> None:
    """AIC (QKᵀ) -> AIV (softmax, rounding P) -> AIC (P·V) -> AIV (O = f16(acc / sm))."""
    _, _, em, _ = _mix({"S": 64, "D": 32})
    lines = _process(em.source)
    want = [
        "if ASCEND_IS_AIC { ProcessQk(); }",
        "if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }",
        "if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }",
        "if ASCEND_IS_AIV { ProcessRoundS(); }",
        "if ASCEND_IS_AIV { CrossCoreSetFlag<0x0, PIPE_MTE3>(SYNC_AIV); CrossCoreWaitFlag(SYNC_AIV); }",
        "if ASCEND_IS_AIV { CrossCoreSetFlag<0x2, PIPE_MTE3>(SYNC_V2C); }",
        "if ASCEND_IS_AIC { CrossCoreWaitFlag(SYNC_V2C); }",
        "if ASCEND_IS_AIC { ProcessPv(); }",
        "if ASCEND_IS_AIC { CrossCoreSetFlag<0x2, PIPE_FIX>(SYNC_C2V); }",
        "if ASCEND_IS_AIV { CrossCoreWaitFlag(SYNC_C2V); }",
        "if ASCEND_IS_AIV { ProcessPvEpi(); }",
    ]
    at = 0
    for w in want:  # in this order (other lines may come between)
        assert w in lines[at:], f"`{w}` missing after line {at} of Process():\n" + "\n".join(lines)
        at = lines.index(w, at) + 1
    # the vector cores write s_f16 to GM (Cast then DataCopy out) before the flag; the cube
    # reads it with Nd2Nz; acc goes out by Fixpipe and comes back by DataCopy
    assert re.search(r"Cast\(s_f16_ubLocal, \w+, RoundMode::CAST_RINT", em.source)
    assert re.search(r"DataCopy\(s_f16Gm\[", em.source)
    assert re.search(r"DataCopy\(s_f16_l1Local, s_f16Gm\[.*Nd2NzParams", em.source)
    assert re.search(r"Fixpipe\(accGm\[", em.source) and re.search(r"DataCopy\(acc_ubLocal, accGm\[", em.source)


def test_sanitized_small() -> None:
    k, t, em, target = _mix({"S": 32, "D": 16})
    assert em.warnings == [] and em.source.count("Mmad(") == 2
    check_emitted(t, k, target=target, emitted=em, sanitize=True, what=f"attention --passes {MIX} under ASan/UBSan")


PV = """
kernel pv(P: f32[M, K], V: f16[K, N], l: f32[M]) -> (O: f16[M, N]) {
  size M = 32
  size K = 64
  size N = 48
  temp acc: f32[M, N]
  pv: for i in 0..M {
    for d in 0..N {
      acc[i, d] = 0.0
      for j in 0..K { acc[i, d] += P[i, j] * f32(V[j, d]) }
      O[i, d] = f16(acc[i, d] * l[i])
    }
  }
}
"""


PV_CASES = {
    "pv_16x48x64": ({"M": 32, "K": 64, "N": 48}, "round_operand{pv.P=f16},tile"),                            # 16 x 48 x 64
    "pv_32x48x64": ({"M": 32, "K": 64, "N": 48}, "round_operand{pv.P=f16},tile{round_P=16,pv.i=32,pv.d=48}"),  # 32 x 48 x 64
    "pv_48x80x32": ({"M": 48, "K": 32, "N": 80}, "round_operand{pv.P=f16},tile{round_P=16,pv.i=48,pv.d=80}"),  # 48 x 80 x 32
}


@pytest.fixture(scope="module")
def mix_bundle() -> Bundle:
    """The unsanitized emitted cases of this file in ONE build (tests/codegen/bundle.py)."""
    from transformer.targets import get_target

    cases: dict[str, object] = {case: (_mix(sizes)[1], get_target("ascend910b2")) for case, sizes in QK_SIZES.items()}
    cases.update({case: apply(kernel_text(PV).with_sizes(sizes), pipeline) for case, (sizes, pipeline) in PV_CASES.items()})
    return build_cases(cases, sanitize=False)


@pytest.mark.parametrize("case", PV_CASES)
def test_pv_operand_layouts_at_non_square_sizes(mix_bundle: Bundle, case: str) -> None:
    """P·V with P [M, K] as A (Zz) and V [K, N] row-major as B: the transposing LoadData of
    each K block (Nz of [K, N] -> Zn). M, N, K all different and N1 > 1, so a wrong
    orientation, stride or fractal order shows. Reference: the interpreter of the rounded
    kernel (the cube is exact on f16 operands up to summation order), and of the original."""
    sizes, pipeline = PV_CASES[case]
    k = kernel_text(PV).with_sizes(sizes)
    rounded = apply(k, pipeline.split(",tile")[0])
    em = mix_bundle.emitted[case]
    assert em.plan is not None and em.plan.kind == "mix"
    assert em.warnings == [] and em.source.count("Mmad(") == 1
    assert {"LoadData(ifTranspose)", "Mmad", "Fixpipe", "DataCopy(Nd2NzParams)"} <= set(em.plan.instructions())
    check_bundled(mix_bundle, case, rounded, what=f"P·V {sizes} --passes {pipeline} vs the rounded kernel")
