"""Typed errors of the capacity model.

Every error has a one-line form (`summary`, also `str(err)`) and a detailed form
(`detail()`), so a CLI can print the line and `--verbose` the rest.  `CapacityError` is the
small base class, itself an `AscxError` (one error hierarchy, `transformer/diagnostics.py`):
`str(err)` stays the summary, `render()` adds the details as the hint.
"""

from __future__ import annotations

from ..diagnostics import AscxError


class CapacityError(AscxError):
    """Base class: `summary` (one line) and `detail()` (several lines)."""

    def __init__(self, summary: str, details: str = "") -> None:
        super().__init__(summary, hint=details or None)
        self.summary = summary
        self.details = details

    def __str__(self) -> str:
        return self.summary

    def detail(self) -> str:
        return self.summary if not self.details else f"{self.summary}\n{self.details}"


class InvalidBufferError(CapacityError, ValueError):
    """A `Buffer` is malformed (unknown dtype or scope, non-positive dim, bad stages...)."""


class UnboundSizeError(CapacityError, ValueError):
    """A size binding or candidate list names no symbolic dim, or gives a bad value."""


class CapacityUnsatError(CapacityError):
    """Raised by `CapacityResult.raise_for_status()` when the buffers do not fit."""

    def __init__(self, result: "object") -> None:
        self.result = result
        expl = getattr(result, "explanations", [])
        head = expl[0].sentence if expl else "buffers do not fit"
        super().__init__(head, "\n".join(e.sentence for e in expl[1:]))


class CapacityUnknownError(CapacityError):
    """Raised by `CapacityResult.raise_for_status()` when the solver gave up (timeout)."""

    def __init__(self, result: "object") -> None:
        self.result = result
        super().__init__(f"capacity unknown: {getattr(result, 'reason', 'solver gave up')}",
                         "raise timeout_ms or bind more sizes (--size NAME=INT)")


class NoFeasibleTilesError(CapacityError):
    """`best_tiles` found no candidate assignment that fits; `result` explains the smallest."""

    def __init__(self, summary: str, details: str = "", result: "object | None" = None) -> None:
        super().__init__(summary, details)
        self.result = result
