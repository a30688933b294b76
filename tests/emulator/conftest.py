"""Shared fixtures for the emulator tests: compile each C++ case once per session.

Binaries are cached by content hash in a directory shared by all xdist workers (the parent
of the per-worker base temp dir), and written atomically, so ``pytest -n 2`` is safe.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from transformer.emulator import compile_source, run_binary

CASES = Path(__file__).parent / "cases"


@pytest.fixture(scope="session")
def emu_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Compile cache shared across xdist workers of one run."""
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if root.name.startswith("popen-gw") else root
    d = shared / "ascx_emu_cache"
    d.mkdir(parents=True, exist_ok=True)
    return d


def build(cache: Path, name: str, **kw: object) -> Path:
    """Compile ``cases/<name>.cpp`` with -Wall -Wextra -Werror into the cache."""
    return compile_source(CASES / f"{name}.cpp", cache_dir=cache, name=name, **kw)  # type: ignore[arg-type]


def parse_named_lines(text: str) -> dict[str, np.ndarray]:
    """Parse ``name v0 v1 ...`` lines into float arrays."""
    out: dict[str, np.ndarray] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts:
            out[parts[0]] = np.array([float(p) for p in parts[1:]], dtype=np.float64)
    return out


@pytest.fixture(scope="session")
def units(emu_cache: Path) -> dict[str, np.ndarray]:
    """Outputs of cases/units.cpp (all semantic unit checks in one program)."""
    # units.cpp reads vector results with GetValue without V_S flags: a semantic unit test,
    # not device-faithful code, so sync-hazard detection is off for it.
    r = run_binary(build(emu_cache, "units"), env={"ASCX_HAZARDS": "off"})
    assert r.returncode == 0, r.stderr
    return parse_named_lines(r.stdout)


@pytest.fixture(scope="session")
def negative_bin(emu_cache: Path) -> Path:
    return build(emu_cache, "negative")
