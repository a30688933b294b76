"""The measurers, and which one to use.

- `EstimateMeasurer`: the analytic model of `estimate.py` (no compile; also the agent's
  pre-ranking prior).
- `EmulatorMeasurer` (`emulator.py`): emit -> compile (cached by content hash) -> run on
  the emulator with pipe accounting, via `transformer.timing.profile.profile_kernel`.
- `default_measurer()`: the emulator when this build has the profiler, else the estimate.
All are picklable, so a process pool or Ray can run them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import ir
from .measure import Measurement, Measurer
from ..targets import Target


@dataclass(frozen=True)
class EstimateMeasurer:
    """The analytic estimate as a measurer (`--measure estimate`): instant, approximate."""

    name: str = "estimate"

    @property
    def version(self) -> str:
        from .estimate import ESTIMATE_VERSION

        return ESTIMATE_VERSION

    def measure(self, kernel: ir.Kernel, target: Target) -> Measurement:
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
