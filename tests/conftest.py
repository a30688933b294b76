"""Shared test setup: `tests/` is on sys.path (for `strategies`, `references`, `documented`).

Two tiers: `pytest -m "not slow"` is the fast tier (no C++ compiles); the default run (CI,
`.ci/run`) runs everything. A test that compiles C++ (emitted kernels, emulator cases) must
be marked `@pytest.mark.slow` (or its module `pytestmark = pytest.mark.slow`): the
`_compiles_only_when_slow` fixture fails an unmarked test that calls the compiler, with
that instruction, so the fast tier stays fast as tests are added. (It sees compiles in the
test's own process; a test that runs `g++` or `ascx verify --emitted` in a subprocess must be
marked by hand.)
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest


@pytest.fixture(autouse=True)
def _compiles_only_when_slow(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if request.node.get_closest_marker("slow") is None:
        import transformer.emulator as emu

        def refuse(*args: Any, **kwargs: Any) -> Any:
            pytest.fail(f"{request.node.nodeid} compiles C++: mark it @pytest.mark.slow "
                        "(the fast tier, `pytest -m 'not slow'`, never compiles)", pytrace=False)

        monkeypatch.setattr(emu, "compile_source", refuse)
    yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite golden files (tests/passes/golden/, tests/codegen/golden/) to the "
                          "current output instead of comparing; explain each change in the commit.")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True under `pytest --update-golden`."""
    return bool(request.config.getoption("--update-golden"))
