"""Shared pieces of the tuner tests: a deterministic fake measurer and small kernels."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from transformer.parser import parse_file
from transformer.targets import get_target
from transformer.tune.measure import Measurement

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class FakeMeasurer:
    """time = the analytic estimate x a deterministic per-kernel factor in [1, 2): the
    estimate is an informative but imperfect prior, as against a real profiler."""

    name: str = "fake"
    version: str = "1"
    sleep: float = 0.0
    fail_on: str = ""  # a pipeline substring that makes the measurement fail
    log: str = ""  # a file each measurement appends its kernel's hash to (one line)

    def measure(self, kernel, target) -> Measurement:
        from transformer.printer import print_kernel
        from transformer.tune.estimate import estimate

        text = print_kernel(kernel)
        if self.log:
            with open(self.log, "a") as f:
                f.write(hashlib.sha256(text.encode()).hexdigest()[:16] + "\n")
        if self.sleep:
            time.sleep(self.sleep)
        if self.fail_on and self.fail_on in text:
            return Measurement.failure("emulator error: fake failure", backend=self.name)
        h = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32
        e = estimate(kernel, target)
        return Measurement(e.time_us * (1 + h), e.cycles, e.bound, e.pipes, e.roofline_us, True, None, 0.0, self.name)


def small(name: str, **sizes: int):
    from transformer.cli_common import load_kernel

    return load_kernel(str(ROOT / "examples" / f"{name}.ir"), tuple(f"{k}={v}" for k, v in sizes.items()))


@pytest.fixture
def target():
    return get_target("ascend910b2")


@pytest.fixture
def fake():
    return FakeMeasurer()


@pytest.fixture
def quick_agent(monkeypatch):
    """The agent with a small search effort: 12 staged nodes priced instead of 60, 4 random
    knob points and 4 children per generation instead of 16 and 8. For tests of the CLI,
    the DB, the reports and the plumbing, which need *an* agent run, not a good one (the
    search's quality is tested at full effort: test_strategies, test_knobs, test_costmodel)."""
    from transformer.tune.strategies import Agent

    monkeypatch.setattr(Agent, "PRICE_EXPANSIONS", 12)
    monkeypatch.setattr(Agent, "EVO_INIT", 4)
    monkeypatch.setattr(Agent, "EVO_CHILDREN", 4)
    monkeypatch.setattr(Agent, "EVO_PARENTS", 4)
