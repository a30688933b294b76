"""The typed result of profiling one kernel on one target: `ProfileResult`.

Why one type: `ascx profile`, `ascx tune`, the NPU backend and `ascx calibrate` all exchange
profiles. Whatever produced it (emulator accounting, plan-level model, msprof on a device),
a profile says how long the kernel took, which pipe bounded it, how close it is to the
roofline, and — for calibration — the per-pipe *features* (instruction counts, bytes,
repeats, fractals...) from which the model computed each pipe's busy cycles, so that the
model's parameters can be refitted linearly against measured busy times.

`to_json()` gives the keys `ascx profile --json` promises: kernel, target, backend, cycles,
time_us, roofline_us, ratio, bound, pipes, cores_used, hazards (plus the detail fields).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Backend = Literal["emulator", "model", "npu"]
PIPES: tuple[str, ...] = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")


@dataclass(frozen=True)
class PipeStats:
    """One pipe on one kind of core (`aiv` / `aic` / `core` on coupled chips).

    busy_cycles: cycles the pipe was executing, on the busiest core of that kind.
    utilisation: busy_cycles / kernel cycles (0..1).
    features: model inputs summed over the pipe's instructions on that core, e.g.
      {"instrs": 120, "bytes": 3.1e6, "blocks": 40} for MTE2 or {"repeats": 9000} for V;
      cycles = sum(parameter[k] * features[k]) is how the model priced it (calibration
      fits the parameters from this).
    """

    pipe: str
    core_kind: str
    busy_cycles: float
    utilisation: float
    features: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Hazard:
    """Two accesses to overlapping local-memory bytes from different pipes that no sync
    edge orders (RAW, WAR or WAW): correct on the emulator, wrong on the device."""

    kind: Literal["RAW", "WAR", "WAW"]
    buffer: str  # scope and byte range, e.g. "UB[0x200, 0x600)"
    core: int
    first_pipe: str
    first_line: str  # "kernel.cpp:41" (+ " (ir: attention.ir:12)" when known)
    second_pipe: str
    second_line: str

    def message(self) -> str:
        return (
            f"{self.kind} hazard on {self.buffer} (core {self.core}): {self.first_pipe} at "
            f"{self.first_line} and {self.second_pipe} at {self.second_line} are not ordered "
            "by any flag, queue or barrier"
        )


@dataclass(frozen=True)
class HotLine:
    """A source line by the pipe time its instructions cost (summed over cores)."""

    line: str  # "kernel.cpp:41"
    ir_line: str | None  # "softmax.ir:9" when the emitted line maps back to the IR
    pipe: str
    cycles: float


@dataclass(frozen=True)
class ProfileResult:
    """How fast one kernel ran (or would run) on one target."""

    kernel: str
    target: str
    backend: Backend
    cycles: float  # end-to-end, including launch overhead
    time_us: float  # cycles at the target clock (npu: measured)
    roofline_us: float  # max(GM bytes / HBM bw, cube work / cube peak, vector work / peak)
    bound: str  # the pipe (or "HBM") that limits: "MTE2", "V", "M", "HBM", "S", ...
    cores_used: int
    pipes: tuple[PipeStats, ...] = ()
    hazards: tuple[Hazard, ...] = ()
    hot_lines: tuple[HotLine, ...] = ()
    scalar_share: float = 0.0  # share of busy time spent in scalar-fallback code
    model_version: str = ""  # changes whenever the model's arithmetic or parameters change
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """Achieved time / roofline lower bound (>= 1 for an honest model)."""
        return self.time_us / self.roofline_us if self.roofline_us > 0 else float("inf")

    def pipe_busy(self) -> dict[str, float]:
        """pipe name -> busy cycles (max over core kinds when a pipe exists on several)."""
        out: dict[str, float] = {}
        for p in self.pipes:
            out[p.pipe] = max(out.get(p.pipe, 0.0), p.busy_cycles)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "target": self.target,
            "backend": self.backend,
            "cycles": self.cycles,
            "time_us": self.time_us,
            "roofline_us": self.roofline_us,
            "ratio": self.ratio,
            "bound": self.bound,
            "pipes": self.pipe_busy(),
            "pipe_detail": [asdict(p) for p in self.pipes],
            "cores_used": self.cores_used,
            "hazards": [asdict(h) | {"message": h.message()} for h in self.hazards],
            "hot_lines": [asdict(h) for h in self.hot_lines],
            "scalar_share": self.scalar_share,
            "model_version": self.model_version,
            "details": self.details,
        }
