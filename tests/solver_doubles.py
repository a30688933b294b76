"""Test doubles for the Z3 solver: the capacity checker's `unknown` path, deterministically.

A real 1 ms budget races the machine's load (it decided, or failed differently, on a busy CI
machine); the double hands every constraint to a real solver but always answers as a
timeout does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


class TimingOutSolver:
    """A z3.Solver that is handed every constraint (kept in `tracked`, never given to a real
    solver: a real one built here left Z3 in a state where the same module's next real query
    ran its whole 120 s budget and came back unknown) but always gives up as a timeout does:
    the CLI's `unknown` path without racing a 1 ms budget against the machine's load."""

    budgets: list[int] = []

    def __init__(self) -> None:
        self.tracked: list[tuple[object, object]] = []

    def set(self, key: str, value: int) -> None:
        if key == "timeout":
            self.budgets.append(value)

    def assert_and_track(self, formula: object, name: object) -> None:
        self.tracked.append((formula, name))

    def check(self) -> object:
        import z3

        return z3.unknown

    def reason_unknown(self) -> str:
        return "timeout"


@contextmanager
def timing_out_solver(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Within the block every `z3.Solver` is a `TimingOutSolver`; yields the timeout
    budgets (ms) the code under test set on its solvers, in order."""
    import z3

    with monkeypatch.context() as m:
        m.setattr(TimingOutSolver, "budgets", [])
        m.setattr(z3, "Solver", TimingOutSolver)
        yield TimingOutSolver.budgets
