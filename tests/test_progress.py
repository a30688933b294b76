"""The progress line of long emulator runs and the time limit of `run_binary` (issue 29
item 7), on `sleep` instead of a kernel: no compile, fast tier."""

from __future__ import annotations

import io
import shutil
import subprocess
import time

import pytest

from transformer.progress import ProgressLine
from transformer.emulator import run_binary

SLEEP = shutil.which("sleep") or "/bin/sleep"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_after_a_few_seconds_then_one_every_half_minute() -> None:
    s = io.StringIO()
    p = ProgressLine("profiling `k` on the emulator", 300.0, stream=s)
    for t in (1.0, 4.9):
        p(t)
    assert s.getvalue() == ""  # a short run says nothing
    for t in (5.0, 6.0, 34.0, 35.1, 40.0):
        p(t)
    lines = s.getvalue().splitlines()
    assert lines == ["ascx: profiling `k` on the emulator: still running after 5 s (limit 300 s, --timeout SECONDS)",
                     "ascx: profiling `k` on the emulator: still running after 35 s (limit 300 s, --timeout SECONDS)"]
    p.close()
    assert s.getvalue().count("\n") == 2


def test_a_terminal_line_is_rewritten_in_place_and_erased() -> None:
    s = _Tty()
    p = ProgressLine("profiling `k` on the emulator", None, stream=s)
    for t in (0.5, 1.0, 1.4, 2.0):
        p(t)
    text = s.getvalue()
    assert "\n" not in text and text.count("\r\x1b[K") == 2, repr(text)
    assert text.endswith("still running after 2 s (no time limit)")
    p.close()
    assert s.getvalue().endswith("\r\x1b[K")


def test_run_binary_reports_progress_while_the_binary_runs() -> None:
    seen: list[float] = []
    r = run_binary(SLEEP, ["0.7"], timeout=30, progress=seen.append, tick=0.1)
    assert r.returncode == 0
    assert len(seen) >= 3 and seen == sorted(seen) and 0 < seen[0] < seen[-1] < 0.7 + 0.5


def test_run_binary_stops_a_run_past_its_time_limit() -> None:
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_binary(SLEEP, ["30"], timeout=0.3, progress=lambda _: None, tick=0.1)
    assert time.monotonic() - t0 < 5  # killed, not waited for
