"""What a measurement is, and who makes it: the `Measurer` protocol.

A `Measurement` is the outcome of one candidate kernel on one target: its time and
per-pipe busy cycles, or the reason it failed (compile error, emulator error, hazard,
output mismatch, timeout). Failures are data: recorded in the DB, never raised, so one bad
candidate never stops a search.

The measurers themselves (`EstimateMeasurer`, `EmulatorMeasurer`, `default_measurer`)
are in `measurers.py` and `emulator.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# The error text of a measurement cut short by a time limit. Such a failure is *transient*:
# it says "slower than the limit under the load of that moment", not "this kernel is
# broken", so the DB never reuses it for another problem and a later run re-measures it.
TIMEOUT = "timeout"

from .. import ir
from ..targets import Target


@dataclass(frozen=True)
class Measurement:
    """One evaluation: a time (and profile summary) or an error."""

    time_us: float | None
    cycles: float | None = None
    bound: str = ""
    pipes: dict[str, float] = field(default_factory=dict)
    roofline_us: float = 0.0
    verified: bool = False
    error: str | None = None
    wall_s: float = 0.0
    backend: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.time_us is not None

    @property
    def transient(self) -> bool:
        """A failure by time limit (see `TIMEOUT`): not final, measured again later."""
        return self.error is not None and self.error.startswith(TIMEOUT)

    @staticmethod
    def failure(reason: str, *, backend: str = "", wall_s: float = 0.0) -> "Measurement":
        return Measurement(None, error=reason, backend=backend, wall_s=wall_s)

    @staticmethod
    def from_profile(p: Any, *, verified: bool, wall_s: float) -> "Measurement":
        """From a `transformer.timing.result.ProfileResult`; a profile with hazards is a
        failure (correct on the emulator, wrong on the device)."""
        if p.hazards:
            return Measurement.failure("hazard: " + p.hazards[0].message(), backend=p.backend, wall_s=wall_s)
        return Measurement(p.time_us, p.cycles, p.bound, p.pipe_busy(), p.roofline_us, verified,
                           None, wall_s, p.backend)


@runtime_checkable
class Measurer(Protocol):
    """Measures a candidate kernel on a target. `name` is the backend, `version` changes
    whenever the numbers it returns may change (part of the DB key)."""

    name: str
    version: str

    def measure(self, kernel: ir.Kernel, target: Target) -> Measurement: ...
