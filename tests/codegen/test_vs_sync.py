"""`vs_sync`: a V_S flag pair before a scalar read of a local that vector code wrote, on
every path (straight line, loop-carried, branches), and none where an ordering exists."""

from __future__ import annotations

from transformer.lower.plan import Line
from transformer.lower.vs_sync import vs_sync


def _lines(src: str) -> list[Line]:
    out = []
    for raw in src.strip("\n").splitlines():
        body = raw.lstrip(" ")
        out.append(Line(body, (len(raw) - len(body)) // 2))
    return out


def _flags_before(lines: list[Line]) -> list[str]:
    """The statements a V_S wait directly precedes."""
    return [lines[k + 1].text for k, l in enumerate(lines[:-1]) if l.text == "WaitFlag<HardEvent::V_S>(0);"]


def test_read_after_a_vector_write_is_flagged() -> None:
    out = vs_sync(_lines("""
Adds(t_ubLocal[0], t_ubLocal[0], 1.0f, 3);
Duplicate(X_ubLocal[0], t_ubLocal.GetValue(2), 3);
"""))
    assert _flags_before(out) == ["Duplicate(X_ubLocal[0], t_ubLocal.GetValue(2), 3);"]


def test_an_existing_flag_or_barrier_orders_the_read() -> None:
    for order in ("SetFlag<HardEvent::V_S>(0);\nWaitFlag<HardEvent::V_S>(0);", "PipeBarrier<PIPE_ALL>();"):
        body = _lines(f"""
Adds(t_ubLocal[0], t_ubLocal[0], 1.0f, 3);
{order}
Duplicate(X_ubLocal[0], t_ubLocal.GetValue(2), 3);
""")
        assert vs_sync(body) == body


def test_reads_of_other_locals_and_dma_writes_are_not_flagged() -> None:
    body = _lines("""
Adds(t_ubLocal[0], t_ubLocal[0], 1.0f, 3);
DataCopy(a_ubLocal, aGm[0], 16);
Duplicate(X_ubLocal[0], a_ubLocal.GetValue(2), 3);
""")
    assert vs_sync(body) == body


def test_a_write_late_in_a_loop_reaches_a_read_early_in_the_next_iteration() -> None:
    out = vs_sync(_lines("""
for (int32_t i = 0; i < 4; ++i) {
  x = t_ubLocal.GetValue(i);
  Muls(t_ubLocal[8], t_ubLocal[8], x, 8);
}
"""))
    assert _flags_before(out) == ["x = t_ubLocal.GetValue(i);"]
    assert out[1].depth == 1  # inside the loop, before the read


def test_the_stage_is_called_again_so_its_last_write_reaches_its_first_read() -> None:
    out = vs_sync(_lines("""
x = t_ubLocal.GetValue(0);
Muls(t_ubLocal[8], t_ubLocal[8], x, 8);
"""))
    assert _flags_before(out) == ["x = t_ubLocal.GetValue(0);"]


def test_a_flag_in_one_branch_does_not_order_the_other() -> None:
    out = vs_sync(_lines("""
Muls(t_ubLocal[8], t_ubLocal[8], 2.0f, 8);
if (a) {
  SetFlag<HardEvent::V_S>(0);
  WaitFlag<HardEvent::V_S>(0);
} else {
  y = 1.0f;
}
z = t_ubLocal.GetValue(1);
"""))
    assert _flags_before(out)[-1] == "z = t_ubLocal.GetValue(1);"
