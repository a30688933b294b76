"""What a measurement is, and who makes it: the `Measurer` protocol.

A `Measurement` is the outcome of one candidate kernel on one target: its time and
per-pipe busy cycles, or the reason it failed (compile error, emulator error, hazard,
output mismatch, timeout). Failures are data: recorded in the DB, never raised, so one bad
candidate never stops a search.

Measurers (all picklable, so a process pool or Ray can run them):
- `EstimateMeasurer`: the analytic model of `estimate.py` (no compile; also the agent's
  pre-ranking prior).
- `EmulatorMeasurer`: emit -> compile (cached by content hash) -> run on the emulator
  with pipe accounting, via `transformer.timing.profile.profile_kernel`; correctness is
  verified once per distinct kernel at small sizes before a result counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .. import ir


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

    def measure(self, kernel: ir.Kernel, target: Any) -> Measurement: ...


@dataclass(frozen=True)
class EstimateMeasurer:
    """The analytic estimate as a measurer (`--measure estimate`): instant, approximate."""

    name: str = "estimate"

    @property
    def version(self) -> str:
        from .estimate import ESTIMATE_VERSION

        return ESTIMATE_VERSION

    def measure(self, kernel: ir.Kernel, target: Any) -> Measurement:
        from .estimate import estimate

        t0 = time.perf_counter()
        try:
            m = estimate(kernel, target)
        except Exception as e:  # the model must not stop a search either
            return Measurement.failure(f"estimate error: {type(e).__name__}: {e}", backend=self.name)
        return Measurement(m.time_us, m.cycles, m.bound, m.pipes, m.roofline_us, False, None,
                           time.perf_counter() - t0, self.name)


def default_measurer() -> Measurer:
    """The emulator profile when the timing model is available, else the estimate."""
    try:
        import transformer.timing.profile  # noqa: F401
    except ImportError:
        return EstimateMeasurer()
    from .emulator import EmulatorMeasurer

    return EmulatorMeasurer()


def measurer_for(model_version: str) -> Measurer:
    """The measurer that produced `model_version` (`backend:version`)."""
    backend = model_version.split(":", 1)[0]
    if backend == "estimate":
        return EstimateMeasurer()
    return default_measurer()
