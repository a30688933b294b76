"""Ping-pong TBufs (transformer/lower/tbuf_sync.py): a double-buffered kernel that needs more
than 8 queue buffers per TPosition demotes locals to TBufs; each demoted local of the
pipelined tile loop gets two halves used by tile parity, with split write-after-read flags
(one event id per half, set once at the phase start and waited once at its end), so its
copies overlap the compute of the other half as a queue's would.  Kernels of five inputs and
five outputs, `+=` outputs, and GM temps both loaded and stored; emitted code against the
interpreter under sanitizers (the emulator also stops on sync hazards and unbalanced
flags), and the timing model's overlap."""

from __future__ import annotations

import re

import pytest

from transformer.codegen import emit_ascendc

from .bundle import Bundle, build_cases, check_bundled
from .conftest import apply, check_emitted, kernel_text

PIPELINE = "tile{ew.i=8,ew.j=512},double_buffer"

FIVE = """
kernel five(A: f16[M, N], B: f16[M, N], C: f16[M, N], D: f16[M, N], E: f16[M, N])
    -> (P: f16[M, N], Q: f16[M, N], R: f16[M, N], S: f16[M, N], U: f16[M, N]) {
  size M = 40
  size N = 1024
  ew: for i in 0..M {
    for j in 0..N {
      P[i, j] = A[i, j] + B[i, j]
      Q[i, j] = A[i, j] - C[i, j]
      R[i, j] = B[i, j] * D[i, j]
      S[i, j] = max(C[i, j], D[i, j])
      U[i, j] = A[i, j] * 2.0
      U[i, j] += E[i, j]
    }
  }
}
"""

# a GM temp loaded and stored by the tiled nest (copied in and out), six inputs
TEMP_IO = """
kernel io(A: f16[M, N], B: f16[M, N], C: f16[M, N], D: f16[M, N], E: f16[M, N], F: f16[M, N])
    -> (G: f16[M, N], H: f16[M, N], K: f16[M, N], L: f16[M, N], O: f16[M, N]) {
  size M = 24
  size N = 1024
  temp T: f16[M, N]
  w: for i in 0..M {
    for j in 0..N {
      T[i, j] = A[i, j] * 2.0
    }
  }
  ew: for i in 0..M {
    for j in 0..N {
      T[i, j] += B[i, j] + C[i, j] + D[i, D_INDEX] + E[i, j] + F[i, j]
      G[i, j] = T[i, j] * 0.5
      K[i, j] = B[i, j] - C[i, j]
      L[i, j] = E[i, j] * F[i, j]
      O[i, j] = max(D[i, j], A[i, j])
    }
  }
  r: for i in 0..M {
    for j in 0..N {
      H[i, j] = T[i, j]
    }
  }
}
"""


# V-bound: every output of FIVE divided by exponentials (transcendental-rate vector work)
HEAVY = re.sub(r"(\[i, j\] \+?= )(.*)", lambda m: m.group(1) + "(" + m.group(2) + ") / (exp(B[i, j]) + 1.0)"
               " / (exp(C[i, j] * 0.5) + 2.0) / (exp(D[i, j] * 0.25) + 3.0)", FIVE.replace("size M = 40", "size M = 384"))


def _method(src: str, name: str) -> str:
    """The body of the first method named `name` (a phase suffix allowed: `CopyInEw`)."""
    m = re.search(rf"inline void {name}\w*\(", src)
    assert m is not None, name
    return src[m.end():].split("__aicore__", 1)[0]


def _flags(src: str) -> dict[tuple[str, str], int]:
    """(event, id expression) -> SetFlag count minus WaitFlag count, over the whole source."""
    out: dict[tuple[str, str], int] = {}
    for op, ev, arg in re.findall(r"(SetFlag|WaitFlag)<HardEvent::(\w+)>\(([^;]*)\);", src):
        out[(ev, arg)] = out.get((ev, arg), 0) + (1 if op == "SetFlag" else -1)
    return out


def test_demoted_locals_of_a_pipelined_loop_are_two_halves_in_ping_pong() -> None:
    em = emit_ascendc(apply(kernel_text(FIVE), PIPELINE))
    src = em.source
    assert any("two halves in ping-pong" in w for w in em.warnings), em.warnings
    tbufs = re.findall(r"TBuf<TPosition::(VECIN|VECOUT)> (\w+);", src)
    assert {p for p, _ in tbufs} == {"VECIN", "VECOUT"}, tbufs
    for _, holder in tbufs:
        size = int(re.search(rf"InitBuffer\({holder}, (\d+)\)", src).group(1))
        half = re.search(rf"{holder}\.GetWithOffset<half>\((\d+), tbufHalf \* (\d+)\)", src)
        assert half is not None, holder
        assert int(half.group(2)) * 2 == size and int(half.group(2)) % 32 == 0
        assert int(half.group(1)) * 2 <= int(half.group(2))  # elements of one half fit it
    copy_in, compute, copy_out = (_method(src, m) for m in ("CopyIn", "Compute", "CopyOut"))
    # the load into a half waits only for that half's reader (tile i - 2), not for all of V
    assert "WaitFlag<HardEvent::V_MTE2>(1 + tbufHalf);" in copy_in
    assert "WaitFlag<HardEvent::V_MTE2>(0)" not in copy_in
    assert "SetFlag<HardEvent::V_MTE2>(1 + tbufHalf);" in compute
    # V writes the output half after that half's previous CopyOut read it
    assert compute.index("WaitFlag<HardEvent::MTE3_V>(1 + tbufHalf);") < compute.index("Muls(U_ub")
    assert compute.index("Max(S_ub") < compute.index("WaitFlag<HardEvent::MTE3_V>")  # queue outputs first
    assert "SetFlag<HardEvent::MTE3_V>(1 + tbufHalf);" in copy_out
    # ids 1 and 2 (the block's two halves), each preset once at the phase start and
    # waited once at its end
    process = _method(src, "Process")
    assert "tbufHalf ^= 1;" in copy_out and "tbufHalf = 0;" in process
    for ev in ("V_MTE2", "MTE3_V"):
        for h in (1, 2):
            assert process.count(f"SetFlag<HardEvent::{ev}>({h});") == 1
            assert process.count(f"WaitFlag<HardEvent::{ev}>({h});") == 1
    assert all(v == 0 for (ev, arg), v in _flags(src).items() if "tbufHalf" not in arg), _flags(src)


def test_a_temp_copied_in_and_out_also_waits_for_its_halfs_copy_out() -> None:
    src = emit_ascendc(apply(kernel_text(TEMP_IO.replace("D_INDEX", "j")), PIPELINE)).source
    copy_in = _method(src, "CopyIn")
    assert re.search(r"WaitFlag<HardEvent::MTE3_MTE2>\(\d \+ tbufHalf\);", copy_in), copy_in
    assert re.search(r"SetFlag<HardEvent::MTE3_MTE2>\(\d \+ tbufHalf\);", _method(src, "CopyOut"))


def test_demoted_tbuf_is_not_counted_as_a_queue_buffer() -> None:
    """A staged local the lowering demotes to a TBuf takes UB (both halves) but no queue
    slot, so `ascx check` does not count it against the 8-per-position limit (before, every
    size of such a kernel was unsat)."""
    from transformer.capacity import check, kernel_buffers
    from transformer.targets import resolve_target

    bufs = [b for b in kernel_buffers(apply(kernel_text(FIVE), PIPELINE), "ascend910b2") if b.scope == "ub"]
    tbufs = [b for b in bufs if b.tbuf]
    assert tbufs and all("queue buffers on" in b.origin for b in tbufs), bufs
    limit = resolve_target("ascend910b2").max_queue_buffers_per_position
    for pos in ("VECIN", "VECOUT"):
        assert sum(b.stages for b in bufs if b.is_queue and b.position == pos) <= limit
    assert check(bufs, "ascend910b2").status == "sat"


def test_tile_without_sizes_stages_a_kernel_with_five_inputs_and_outputs() -> None:
    """`tile` (sizes from the capacity solver) now stages such a kernel instead of leaving
    it running from GM."""
    from transformer.capacity import check, kernel_buffers

    k = apply(kernel_text(FIVE.replace("size M = 40", "size M = 512")), "tile,double_buffer")
    assert len([t for t in k.buffers if t.kind == "local"]) == 10, k.buffers
    bufs = kernel_buffers(k, "ascend910b2")
    assert check(bufs, "ascend910b2").status == "sat" and any(b.tbuf for b in bufs)


def test_capacity_counts_both_halves_of_a_ping_pong_tbuf() -> None:
    from transformer.capacity import kernel_buffers

    bufs = {b.name: b for b in kernel_buffers(apply(kernel_text(FIVE), PIPELINE), "ascend910b2")}
    pp = [b for b in bufs.values() if b.tbuf]
    assert pp and all(b.stages == 2 and not b.is_queue for b in pp), pp


FIVE_PIPELINES = {"five_hand": PIPELINE, "five_auto": "tile,double_buffer", "five_rows3": "tile{ew.i=3,ew.j=512},double_buffer"}
TEMP_IO_INDEX = {"temp_io_vector": "j", "temp_io_scalar": "N - 1 - j"}


def _temp_io(case: str):  # type: ignore[no-untyped-def]
    return kernel_text(TEMP_IO.replace("D_INDEX", TEMP_IO_INDEX[case]))


@pytest.fixture(scope="module")
def ping_pong() -> Bundle:
    """The five emitted cases below in ONE sanitizer build (tests/codegen/bundle.py)."""
    cases = {c: apply(kernel_text(FIVE), p) for c, p in FIVE_PIPELINES.items()}
    cases.update({c: apply(_temp_io(c), PIPELINE) for c in TEMP_IO_INDEX})
    return build_cases(cases, sanitize=True)


@pytest.mark.slow
@pytest.mark.parametrize("case", FIVE_PIPELINES)
def test_five_outputs_with_ping_pong_tbufs_match_the_interpreter_under_sanitizers(ping_pong: Bundle, case: str) -> None:
    em = ping_pong.emitted[case]
    assert "GetWithOffset" in em.source, em.source
    check_bundled(ping_pong, case, kernel_text(FIVE), what=f"five outputs --passes {FIVE_PIPELINES[case]}")


@pytest.mark.slow
@pytest.mark.parametrize("case", TEMP_IO_INDEX, ids=["vector", "scalar"])
def test_temp_loaded_and_stored_through_ping_pong_halves_matches_the_interpreter(ping_pong: Bundle, case: str) -> None:
    assert "GetWithOffset" in ping_pong.emitted[case].source
    check_bundled(ping_pong, case, _temp_io(case), what=f"T += ... --passes {PIPELINE}")


@pytest.mark.slow
def test_ping_pong_overlaps_the_copies_with_the_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same V-heavy kernel with one-slot TBufs and with ping-pong halves: the critical
    core's time drops to about its busiest pipe (V), and no hazard is reported."""
    from transformer.lower import tbuf_sync
    from transformer.timing.profile import profile_kernel

    t = apply(kernel_text(HEAVY), "tile{ew.i=2},double_buffer")
    both = profile_kernel(t, "ascend910b2", timing_only=True)
    monkeypatch.setattr(tbuf_sync, "ping_pong_loop", lambda *a, **k: False)
    single = profile_kernel(t, "ascend910b2", timing_only=True)
    assert not both.hazards and not single.hazards
    end = [r.details["critical_core"]["end"] for r in (both, single)]
    busiest = max(both.details["critical_core"]["busy"].values())
    assert both.details["critical_core"]["busy"]["V"] == busiest  # V-bound: copies can hide
    assert end[0] < end[1], end
    # what is not overlapped (beyond the busiest pipe) shrinks by at least a quarter
    # what is not overlapped (beyond the busiest pipe) is about one tile's copies (the first
    # load and the last store cannot hide): 384 rows / 2 = 192 tiles over 48 cores, 4 a core.
    # One-slot TBufs leave more (since the UB bank model made V 3x busier, the queues' own
    # double buffering hides most copies either way, so a fixed fraction no longer holds)
    busy = both.details["critical_core"]["busy"]
    one_tile = (busy["MTE2"] + busy["MTE3"]) / 4
    assert end[0] - busiest <= 1.1 * one_tile < end[1] - busiest, (end, busiest, one_tile)


@pytest.mark.slow
def test_single_buffered_kernel_with_nine_inputs_keeps_one_slot_tbufs() -> None:
    """Without `double_buffer` nothing is pipelined: the ninth VECIN local is a one-slot TBuf
    with the one-slot flag pairs (id 0), and no halves."""
    names = "ABCDEFGHJ"
    text = ("kernel nine(" + ", ".join(f"{n}: f16[M, N]" for n in names) + ") -> (Y: f16[M, N]) {\n"
            "  size M = 16\n  size N = 512\n  ew: for i in 0..M {\n    for j in 0..N {\n"
            "      Y[i, j] = " + " + ".join(f"{n}[i, j]" for n in names) + "\n    }\n  }\n}\n")
    k = kernel_text(text)
    t = apply(k, "tile{ew.i=4}")
    em = emit_ascendc(t)
    assert "TBuf<TPosition::VECIN>" in em.source and "GetWithOffset" not in em.source, em.source
    assert "WaitFlag<HardEvent::V_MTE2>(0);" in _method(em.source, "CopyIn")
    check_emitted(t, k, emitted=em, sanitize=True, what="nine inputs --passes tile{ew.i=4}")
