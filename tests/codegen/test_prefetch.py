"""Prefetching the next tile's load (`transformer/lower/prefetch.py`): a double-buffered
loop whose compute stage waits V -> S on the scalar unit (long softmax rows: the max and the
sum passes) issues `CopyIn(i + 1)` before `Compute(i)`, and the compute stage no longer waits
for MTE2 on the scalar unit when its scalar reads are of V's results (that wait would also
wait for the prefetched load). Consecutive passes over a row are chained: the last tile of
one pass issues the first load of the next (`prefetch.chain`). The emitted long rows run on
the emulator, hazard-checked, in tests/passes/test_tile_rows.py and test_reciprocal.py
(slow); the chained and refused hand-written kernels below also run here (slow)."""

from __future__ import annotations

import re

import pytest

from transformer.codegen import emit_ascendc
from transformer.lower.lower import _scalar_sync
from transformer.lower.plan import Line

from .conftest import apply, check_emitted, example, kernel_text


def _process(src: str) -> str:
    return src[src.index("inline void Process()"):src.index("private:")]


def test_long_row_passes_prefetch_their_next_tile_and_chain_into_the_next_pass() -> None:
    k = apply(example("softmax", {"R": 2, "C": 65536}), "fuse,tile,double_buffer")
    src = emit_ascendc(k).source
    proc = _process(src)
    # the max pass: first tile before the loop, tile c + 1 before Compute(c), and in its last
    # iteration the sum pass's first tile; the sum pass likewise hands over to the
    # normalisation pass, which takes the prefetched form too
    chained = (("CopyIn", "Compute", "c0", "CopyIn2"), ("CopyIn2", "Compute2", "c0_1", "CopyIn3"),
               ("CopyIn3", "Compute3", "c0_2", None))
    for load, comp, var, nxt in chained:
        tail = rf"\}} else \{{\s*{nxt}\(r0, r, 0\);\s*\}}" if nxt else r"\}"
        pat = (rf"for \(int32_t {var} = 0; {var} < 8; \+\+{var}\) \{{\s*"
               rf"if \({var} \+ 1 < 8\) \{{\s*{load}\(r0, r, {var} \+ 1\);\s*{tail}\s*{comp}\(\);")
        assert re.search(pat, proc), (var, proc)
    # each pass's first tile is loaded exactly once: before the max pass, then in the pass before
    assert len(re.findall(r"CopyIn\(r0, r, 0\);", proc)) == 1
    assert len(re.findall(r"CopyIn2\(r0, r, 0\);", proc)) == 1
    assert len(re.findall(r"CopyIn3\(r0, r, 0\);", proc)) == 1
    assert re.search(r"CopyIn\(r0, r, 0\);\s*for \(int32_t c0 = 0;", proc), proc
    assert re.search(r"sm = 0\.0f;\s*for \(int32_t c0_1 = 0;", proc), proc
    # the statistics' compute stages read only V's results on the scalar unit: no MTE2 -> S wait
    for name in ("Compute", "Compute2"):
        body = src[src.index(f"inline void {name}()"):]
        body = body[:body.index("    }\n")]
        assert "WaitFlag<HardEvent::V_S>" in body and "MTE2_S" not in body, body


# Two passes over each row: a max pass that also writes T, then a pass loading `SRC`.
# Rewritten by hand (no passes), so the chain's refusal can be exercised.
_TWO_PASSES = """
kernel chained(X: f16[R, C]) -> (Y: f16[R, C]) {
  size R = 2
  size C = 2048

  temp T: f16[R, C]
  temp mx: f32
  local X_ub: f16[512] @ub
  local T_ub: f16[512] @ub
  local S_ub: f16[512] @ub
  local Y_ub: f16[512] @ub

  rows: for r in 0..R {
    mx = -inf
    @pipeline(stages=2)
    for c0 in 0..4 {
      copy X_ub[0:512] <- X[r, c0 * 512:c0 * 512 + 512]
      for c in 0..512 {
        mx max= f32(X_ub[c])
      }
      for c in 0..512 {
        T_ub[c] = X_ub[c] + X_ub[c]
      }
      copy T[r, c0 * 512:c0 * 512 + 512] <- T_ub[0:512]
    }
    @pipeline(stages=2)
    for c1 in 0..4 {
      copy S_ub[0:512] <- SRC[r, c1 * 512:c1 * 512 + 512]
      for c in 0..512 {
        Y_ub[c] = f16(f32(S_ub[c]) - mx)
      }
      copy Y[r, c1 * 512:c1 * 512 + 512] <- Y_ub[0:512]
    }
  }
}
"""


def _two_passes(src: str):  # type: ignore[no-untyped-def]
    return kernel_text(_TWO_PASSES.replace("SRC", src))


def test_chain_issues_the_next_pass_first_load_in_the_last_iteration() -> None:
    proc = _process(emit_ascendc(_two_passes("X")).source)
    assert re.search(r"if \(c0 \+ 1 < 4\) \{\s*CopyIn\(r, c0 \+ 1\);\s*\} else \{\s*CopyIn2\(r, 0\);\s*\}", proc), proc
    # the second pass (no scalar read: not prefetched on its own) takes the prefetched form
    assert re.search(r"for \(int32_t c1 = 0; c1 < 4; \+\+c1\) \{\s*if \(c1 \+ 1 < 4\) \{\s*CopyIn2\(r, c1 \+ 1\);", proc), proc
    assert len(re.findall(r"CopyIn2\(", proc)) == 2


def test_chain_refused_when_the_first_pass_writes_what_the_next_loads() -> None:
    """The first pass stores T tile by tile; a load of T moved before the first pass's last
    compute and store could read a tile not stored yet, so the chain is not made (the
    second pass, which does not wait on the scalar unit, keeps its plain form)."""
    proc = _process(emit_ascendc(_two_passes("T")).source)
    assert "else" not in proc, proc
    assert re.search(r"for \(int32_t c1 = 0; c1 < 4; \+\+c1\) \{\s*CopyIn2\(r, c1\);\s*Compute2\(\);", proc), proc


@pytest.mark.slow
@pytest.mark.parametrize("src", ["X", "T"])
def test_chained_and_refused_passes_run_exactly_under_sanitizers(src: str) -> None:
    k = _two_passes(src)
    check_emitted(k, k, sanitize=True, what=f"two passes loading {src}")


def test_row_tiles_spread_over_the_cores_prefetch_within_each_worker() -> None:
    """Rows that fit UB, long enough to keep their per-row statistics (4096 columns): the
    pipelined loop is the row-tile loop split over the workers; each worker loads its first
    tile before its loop and tile r0 + 1 before computing r0."""
    src = emit_ascendc(apply(example("softmax", {"R": 96, "C": 4096}), "fuse,tile,double_buffer")).source
    pat = (r"CopyIn\(r0Begin\);\s*for \(int32_t r0 = r0Begin; r0 < r0End; \+\+r0\) \{\s*"
           r"if \(r0 \+ 1 < r0End\) \{\s*CopyIn\(r0 \+ 1\);\s*\}\s*Compute\(\);\s*CopyOut\(r0\);")
    assert re.search(pat, _process(src)), _process(src)
    # short rows run as one tile (rows2d.py): no V -> S wait in the compute stage, no prefetch
    short = emit_ascendc(apply(example("softmax", {"R": 64, "C": 256}), "fuse,tile,double_buffer")).source
    assert "HardEvent::V_S" not in short and "+ 1 <" not in _process(short)
    # a kernel whose compute never waits on the scalar unit is left as it was (add)
    add = emit_ascendc(apply(example("add", {"M": 64, "N": 256}), "tile,double_buffer")).source
    assert "+ 1 <" not in _process(add)


def test_scalar_reads_of_loaded_tiles_still_wait_for_mte2() -> None:
    """The MTE2 -> S wait stays where the scalar unit reads what MTE2 wrote: a dequeued input
    tile (also through a sub-tensor or a reinterpretation) or an input-queue tensor."""
    def sync(*text: str, in_queued: tuple[str, ...] = ()) -> bool:
        out = _scalar_sync([Line(t) for t in text], (), in_queued)
        return any("MTE2_S" in l.text for l in out)

    deq = "X_ubLocal = inQueue_X_ub.DeQue<half>();"
    assert sync(deq, "a = X_ubLocal.GetValue(3);")
    assert sync(deq, "a = X_ubLocal[r * 16].GetValue(0);")
    assert sync(deq, "a = X_ubLocal.ReinterpretCast<float>()[8].GetValue(0);")
    assert sync("a = B_ubLocal.GetValue(0);", in_queued=("B_ubLocal",))
    # a reduction's result in scratch after its V -> S flag: no MTE2 wait
    assert not sync(deq, "SetFlag<HardEvent::V_S>(0);", "WaitFlag<HardEvent::V_S>(0);",
                    "mx = tmp0.ReinterpretCast<half>().GetValue(0);")
    assert not sync(deq, "a = XGm.GetValue(0);")
