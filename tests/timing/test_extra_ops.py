"""The timing model prices every instruction of ascx_emu/ops_extra.h and highlevel.h (Fill,
mask/repeat reductions, GatherMask, Gather, Sort32, MrgSort, Copy, Transpose, Axpy, integer
ops, CompareScalar / Compare / Select, SoftMax, SimpleSoftMax, LayerNorm), reports their local
memory accesses to the hazard detector, and a timing-only run gives the same cycles
(cases/extra_ops.cpp: one compile, three runs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer.emulator import compile_source
from transformer.targets import get_target
from transformer.timing.profile import run_profiled

SRC = Path(__file__).parent / "cases" / "extra_ops.cpp"
pytestmark = pytest.mark.slow
T = get_target("ascend910b2")


def _op_lines() -> dict[int, str]:
    """Source line -> API name of every line marked `// op`."""
    out = {}
    for no, text in enumerate(SRC.read_text().splitlines(), start=1):
        if text.rstrip().endswith("// op"):
            out[no] = re.match(r"\s*(\w+)", text).group(1)
    return out


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_source(SRC, name="extra_ops")


@pytest.fixture(scope="module")
def full_run(binary: Path) -> dict:
    """The profile summary of `./extra_ops all` with the arithmetic (one run, two tests)."""
    return run_profiled(binary, T, ["all"])[0]


def _line_no(loc: str) -> int:
    return int(loc.rsplit(":", 1)[1])


def test_every_extra_op_is_priced_on_its_pipe(full_run: dict):
    summary = full_run
    priced = {}
    for h in summary["hot"]:
        if h["line"].rsplit(":", 1)[0].endswith("extra_ops.cpp"):
            priced.setdefault(_line_no(h["line"]), {})[h["pipe"]] = float(h["cycles"])
    ops = _op_lines()
    assert len(ops) == 28
    missing = {name: no for no, name in ops.items() if no not in priced}
    assert not missing, f"unpriced instructions: {missing}"
    for no, name in ops.items():
        pipe = "MTE3" if name == "Fill" else "V"
        assert priced[no].get(pipe, 0.0) > 0.0, (name, priced[no])
    # a high-level API costs several basic instructions: SoftMax more than one ReduceMax
    by_name = {name: sum(priced[no].values()) for no, name in ops.items()}
    assert by_name["SoftMax"] > 4 * by_name["ReduceMax"]
    assert not summary.get("hazards"), summary.get("hazards")


def test_timing_only_gives_the_same_cycles(binary: Path, full_run: dict):
    fast, _ = run_profiled(binary, T, ["all"], timing_only=True)
    assert fast["cycles"] == pytest.approx(full_run["cycles"])


def test_extra_op_accesses_reach_the_hazard_detector(binary: Path):
    summary, _ = run_profiled(binary, T, ["race"])
    text = " ".join(str(h) for h in summary["hazards"])
    race_line = next(no for no, t in enumerate(SRC.read_text().splitlines(), 1) if "race: no MTE2" in t)
    assert "RAW" in text and f"extra_ops.cpp:{race_line}" in text, text
