"""A progress line on stderr for a long emulator run (`ascx profile`; the commands share it).

A run of a scalar kernel at a realistic size can take minutes; without a word the command
looks hung. `ProgressLine` is the `progress` callback of `emulator.run_binary` (called with
the elapsed seconds about once a second): on a terminal it rewrites one line in place from
the first second on and erases it when the run ends; elsewhere (a log, CI) it prints a
line after `QUIET_S` seconds and then every `EVERY_S` seconds, so short runs stay silent
and long ones leave a few lines, each saying how to change the time limit.
"""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressLine:
    """Report `what` is still running, and the limit (`--timeout`) it runs under."""

    QUIET_S = 5.0
    EVERY_S = 30.0

    def __init__(self, what: str, limit_s: float | None, stream: TextIO | None = None) -> None:
        self.what = what
        self.limit_s = limit_s
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._next = 1.0 if self.tty else self.QUIET_S
        self._drawn = False

    def text(self, elapsed: float) -> str:
        limit = f"limit {self.limit_s:g} s, --timeout SECONDS" if self.limit_s else "no time limit"
        return f"ascx: {self.what}: still running after {elapsed:.0f} s ({limit})"

    def __call__(self, elapsed: float) -> None:
        if elapsed < self._next:
            return
        if self.tty:
            self.stream.write("\r\x1b[K" + self.text(elapsed))
            self._drawn = True
            self._next = elapsed + 1.0
        else:
            self.stream.write(self.text(elapsed) + "\n")
            self._next = elapsed + self.EVERY_S
        self.stream.flush()

    def close(self) -> None:
        """Erase the terminal line (the report follows on a clean line)."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
