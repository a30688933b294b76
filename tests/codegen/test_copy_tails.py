"""UB <-> UB and GM -> L1 copies that no DMA form fits (issue 14 item 2; copies.py):

- UB -> UB with ragged rows or run-time extents (a tile tail): the vector `Copy` in its
  mask/repeat form — one repeat per row, the row's elements of each 256 B column chunk as
  the mask (computed at run time over a tail), or, for one row, whole repeats plus one
  masked repeat — writing nothing outside the region;
- GM -> L1 tile tails whose rows are whole 32 B blocks: `DataCopy` with a run-time count
  (a ragged GM -> L1 tail stays scalar with its reason: DataCopyPad has no path into L1).

No scalar loop remains for these; each runs emitted against the interpreter under
sanitizers with hazard detection on (the cube-side scalar code waits for MTE2 before it
reads an L1 queue buffer: `_scalar_sync`).
"""

from __future__ import annotations

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower import lower_kernel

from .bundle import Bundle, build_cases, check_bundled
from .conftest import kernel_text

# 2-D tails of f32 (rows of 32, tail 4) and f16 (rows of 40 in rows of 48: ragged), the
# destination's columns beyond the region written beforehand and read afterwards (a copy
# that wrote whole 32 B blocks would clobber them)
UU = """
kernel uu(X: f32[R, C], H: f16[R, C]) -> (Y: f32[R, C], G: f16[R, C]) {
  size R = 6
  size C = 100

  local X_ub: f32[4, 32] @ub
  local T_ub: f32[4, 32] @ub
  local Y_ub: f32[4, 32] @ub
  local H_ub: f16[4, 48] @ub
  local U_ub: f16[4, 48] @ub

  a: for r0 in 0..2 {
    for c0 in 0..4 {
      copy X_ub[0:min(4, R - r0 * 4), 0:min(32, C - c0 * 32)] <- X[r0 * 4:r0 * 4 + min(4, R - r0 * 4), c0 * 32:c0 * 32 + min(32, C - c0 * 32)]
      copy T_ub[0:min(4, R - r0 * 4), 0:min(32, C - c0 * 32)] <- X_ub[0:min(4, R - r0 * 4), 0:min(32, C - c0 * 32)]
      for r in 0..min(4, R - r0 * 4) {
        for c in 0..min(32, C - c0 * 32) {
          Y_ub[r, c] = T_ub[r, c] * 2.0
        }
      }
      copy Y[r0 * 4:r0 * 4 + min(4, R - r0 * 4), c0 * 32:c0 * 32 + min(32, C - c0 * 32)] <- Y_ub[0:min(4, R - r0 * 4), 0:min(32, C - c0 * 32)]
    }
  }
  b: for r0 in 0..2 {
    for c0 in 0..3 {
      copy H_ub[0:min(4, R - r0 * 4), 0:min(40, C - c0 * 40)] <- H[r0 * 4:r0 * 4 + min(4, R - r0 * 4), c0 * 40:c0 * 40 + min(40, C - c0 * 40)]
      for r in 0..4 {
        for c in 40..48 { U_ub[r, c] = f16(7.0) }
      }
      copy U_ub[0:min(4, R - r0 * 4), 0:min(40, C - c0 * 40)] <- H_ub[0:min(4, R - r0 * 4), 0:min(40, C - c0 * 40)]
      for r in 0..min(4, R - r0 * 4) {
        for c in 0..min(40, C - c0 * 40) {
          U_ub[r, c] = U_ub[r, c] + U_ub[r, 40] - f16(7.0)
        }
      }
      copy G[r0 * 4:r0 * 4 + min(4, R - r0 * 4), c0 * 40:c0 * 40 + min(40, C - c0 * 40)] <- U_ub[0:min(4, R - r0 * 4), 0:min(40, C - c0 * 40)]
    }
  }
}
"""

# one long row with a run-time tail (4 whole repeats + a mask), and constant ragged rows of
# 200 halves (two 256 B column chunks, the second masked) in rows padded to 208
ROW = """
kernel row(X: f32[N], H: f16[M, K]) -> (Y: f32[N], G: f16[M, K]) {
  size N = 1000
  size M = 3
  size K = 200

  local X_ub: f32[300] @ub
  local T_ub: f32[300] @ub
  local H_ub: f16[3, 208] @ub
  local U_ub: f16[3, 208] @ub

  a: for i0 in 0..4 {
    copy X_ub[0:min(300, N - i0 * 300)] <- X[i0 * 300:i0 * 300 + min(300, N - i0 * 300)]
    copy T_ub[0:min(300, N - i0 * 300)] <- X_ub[0:min(300, N - i0 * 300)]
    copy Y[i0 * 300:i0 * 300 + min(300, N - i0 * 300)] <- T_ub[0:min(300, N - i0 * 300)]
  }
  b: for z in 0..1 {
    copy H_ub[0:3, 0:200] <- H[0:3, 0:200]
    copy U_ub[0:3, 0:200] <- H_ub[0:3, 0:200]
    copy G[0:3, 0:200] <- U_ub[0:3, 0:200]
  }
}
"""

# GM -> L1 with a row tail (rows of 64 halves: whole 32 B blocks), read by scalar AIC code
L1 = """
kernel l1t(X: f16[R, C]) -> (Y: f16[R, C]) {
  size R = 6
  size C = 64
  local A_l1: f16[4, 64] @l1
  a: for r0 in 0..2 {
    copy A_l1[0:min(4, R - r0 * 4), 0:64] <- X[r0 * 4:r0 * 4 + min(4, R - r0 * 4), 0:64]
    for r in 0..min(4, R - r0 * 4) {
      for c in 0..64 { Y[r0 * 4 + r, c] = A_l1[r, c] * 2.0 }
    }
  }
}
"""


def _copies(plan) -> dict[str, tuple[tuple[str, ...], str]]:  # type: ignore[no-untyped-def]
    return {n.where.split("copy ")[1]: (n.instructions, n.fallback) for n in plan.nests if " copy `" in n.where}


def test_ub_to_ub_tails_and_ragged_rows_are_vector_copies() -> None:
    for text in (UU, ROW):
        got = _copies(lower_kernel(kernel_text(text)))
        ub = {k: v for k, v in got.items() if all(side.strip("`").endswith("_ub") for side in k.split(" <- "))}
        assert ub and all(v == (("Copy",), "") for v in ub.values()), got


def test_copy_forms_in_the_emitted_code() -> None:
    src = emit_ascendc(kernel_text(ROW)).source
    # the long row: whole repeats, then the run-time masked rest
    assert "Copy(T_ubLocal[0], X_ubLocal[0], 64, ascx_f, CopyRepeatParams(1, 1, 8, 8));" in src
    # ragged constant rows of 200 halves: a loop over the two 256 B column chunks, 3 repeats,
    # row strides of 208 halves = 13 blocks
    assert "CopyRepeatParams(1, 1, 13, 13)" in src and "ascx_k < 2" in src
    assert ".SetValue(" not in src  # no scalar copy loop


def test_gm_to_l1_row_tail_is_a_dma_and_ragged_tail_says_why() -> None:
    got = _copies(lower_kernel(kernel_text(L1)))
    assert got["`A_l1 <- X`"] == (("DataCopy",), "")
    ragged = L1.replace("C = 64", "C = 60").replace("0:64]", "0:60]").replace("0..64", "0..60")
    got = _copies(lower_kernel(kernel_text(ragged)))
    instrs, why = got["`A_l1 <- X`"]
    assert instrs == ("GetValue", "SetValue") and "DataCopyPad has no path into L1" in why


CASES = {"ub_tails": UU, "ub_row_and_ragged": ROW, "gm_l1_tail": L1}


@pytest.fixture(scope="module")
def copies_bundle() -> Bundle:
    """The three kernels in ONE sanitizer build (tests/codegen/bundle.py)."""
    return build_cases({name: kernel_text(text) for name, text in CASES.items()}, sanitize=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_copies_match_the_interpreter_under_sanitizers(copies_bundle: Bundle, name: str) -> None:
    em = copies_bundle.emitted[name]
    assert not any("copy into" in w for w in em.warnings), em.warnings
    check_bundled(copies_bundle, name, kernel_text(CASES[name]), what=f"vector / DMA copies with tails ({name})")
