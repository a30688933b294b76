"""Shared test setup: `tests/` is on sys.path (for `strategies`, `references`, `documented`).

Two tiers: `pytest -m "not slow"` is the fast tier (no C++ compiles); the default run (CI,
`.ci/run`) runs everything. A test that compiles C++ (emitted kernels, emulator cases) must
be marked `@pytest.mark.slow` (or its module `pytestmark = pytest.mark.slow`): the
`_compiles_only_when_slow` fixture fails an unmarked test that calls the compiler, with
that instruction, so the fast tier stays fast as tests are added. (It sees compiles in the
test's own process; a test that runs `g++` or `ascx verify --emitted` in a subprocess must be
marked by hand.)

Balance under xdist (`pytest -n 2`): the slow tests are collected first, so the run ends with
short tests that keep both workers busy instead of one worker finishing a long compile alone,
and an idle worker steals queued tests from the other (`--dist worksteal`).
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


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Under `-n N`, steal work (pytest-xdist's default `load` keeps a queue per worker)."""
    opt = config.option
    if getattr(opt, "numprocesses", None) and getattr(opt, "dist", None) == "no":
        opt.dist = "worksteal"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first (stable: each tier keeps its order), so the run ends with short ones."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite golden files (tests/passes/golden/, tests/codegen/golden/) to the "
                          "current output instead of comparing; explain each change in the commit.")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True under `pytest --update-golden`."""
    return bool(request.config.getoption("--update-golden"))
