"""Prefetching the next tile's load (`transformer/lower/prefetch.py`): a double-buffered
loop whose compute stage waits V -> S on the scalar unit (long softmax rows: the max and the
sum passes) issues `CopyIn(i + 1)` before `Compute(i)`, and the compute stage no longer waits
for MTE2 on the scalar unit when its scalar reads are of V's results (that wait would also
wait for the prefetched load). No compile here; the emitted long rows run on the emulator,
hazard-checked, in tests/passes/test_tile_rows.py and test_reciprocal.py (slow)."""

from __future__ import annotations

import re

from transformer.codegen import emit_ascendc
from transformer.lower.lower import _scalar_sync
from transformer.lower.plan import Line

from .conftest import apply, example


def _process(src: str) -> str:
    return src[src.index("inline void Process()"):src.index("private:")]


def test_long_row_statistics_loops_prefetch_their_next_tile() -> None:
    k = apply(example("softmax", {"R": 2, "C": 65536}), "fuse,tile,double_buffer")
    src = emit_ascendc(k).source
    proc = _process(src)
    # the max pass and the sum pass: first tile before the loop, tile c + 1 before Compute(c)
    for load, comp, var in (("CopyIn", "Compute", "c0"), ("CopyIn2", "Compute2", "c0_1")):
        pat = (rf"{load}\(r0, r, 0\);\s*for \(int32_t {var} = 0; {var} < 8; \+\+{var}\) \{{\s*"
               rf"if \({var} \+ 1 < 8\) \{{\s*{load}\(r0, r, {var} \+ 1\);\s*\}}\s*{comp}\(\);")
        assert re.search(pat, proc), proc
    # the normalisation pass has no scalar read: the scalar unit runs ahead already, unchanged
    assert re.search(r"for \(int32_t c0_2 = 0; c0_2 < 8; \+\+c0_2\) \{\s*CopyIn3\(r0, r, c0_2\);\s*Compute3\(\);", proc)
    # the statistics' compute stages read only V's results on the scalar unit: no MTE2 -> S wait
    for name in ("Compute", "Compute2"):
        body = src[src.index(f"inline void {name}()"):]
        body = body[:body.index("    }\n")]
        assert "WaitFlag<HardEvent::V_S>" in body and "MTE2_S" not in body, body


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
