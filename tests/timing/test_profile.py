"""`ascx profile` and the Python API on emitted kernels (slow: compiles; two compiles of
examples/add.ir serve every test here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main

ROOT = Path(__file__).resolve().parents[2]
# relative, as a user types it, from the repository root (`_at_root`): the emitted source names
# its file, so these runs and bench/readme_numbers.py's share the compiled kernels
ADD = "examples/add.ir"
KEYS = ("kernel", "target", "backend", "cycles", "time_us", "roofline_us", "ratio", "bound", "pipes", "cores_used", "hazards")
pytestmark = pytest.mark.slow
ONE_CORE = "tile,double_buffer,multicore{ew=1}"


def _profile(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["profile", *args])
    return r.exit_code, r.output


@pytest.fixture(scope="module", autouse=True)
def _at_root():  # type: ignore[no-untyped-def]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        yield


@pytest.fixture(scope="module")
def add_profiles(tmp_path_factory):
    trace = tmp_path_factory.mktemp("trace") / "add.json"
    # on one core (`multicore{ew=1}`), so each core's 16 tiles show the pipeline; emitted
    # kernels spread over the cores by default (8 row tiles: 2 tiles per core)
    code1, single = _profile(ADD, "--passes", "tile,multicore{ew=1}", "--json")
    code2, double = _profile(ADD, "--passes", ONE_CORE, "--json", "--trace", str(trace))
    assert code1 == 0 and code2 == 0, single + double
    return json.loads(single), json.loads(double[: double.rindex("}") + 1]), trace


def test_double_buffering_is_faster_because_pipes_overlap(add_profiles):
    single, double, _ = add_profiles
    for j in (single, double):
        assert all(k in j for k in KEYS)
        assert j["backend"] == "emulator" and j["hazards"] == []
    assert double["cycles"] < single["cycles"]
    # same work on every pipe, less elapsed time: MTE2, V and MTE3 overlap
    assert double["pipes"] == pytest.approx(single["pipes"])
    crit = double["details"]["critical_core"]
    assert sum(crit["busy"].values()) > 1.3 * crit["end"]
    assert double["bound"] == "MTE2"


def test_placed_add_pays_no_bank_beats(add_profiles):
    """The UB bank placement (lower/ub_place.py) puts B 256 B into the bank groups and C in
    the next 64 KB section: the Add's repeats pay no extra beat (x, y and z at the plain
    InitBuffer offsets paid 2 a repeat, V.bank_beat 4,096 on this kernel)."""
    for j in add_profiles[:2]:
        (v,) = [p for p in j["pipe_detail"] if p["pipe"] == "V"]
        assert v["features"]["repeat"] > 0
        assert v["features"]["bank_beat"] == 0


def test_human_report_explains(add_profiles):
    code, out = _profile(ADD, "--passes", ONE_CORE)
    assert code == 0
    for phrase in ("total", "cycles", "us at 1800 MHz", "bound        MTE2", "roofline", "achieved/roofline", "overlap",
                   "hottest lines", "examples/add.ir:9:7", "scalar", "hazards      none"):
        assert phrase in out, out


def test_trace_has_core_pipe_tracks_and_flows(add_profiles):
    *_, trace = add_profiles
    ev = json.loads(trace.read_text())["traceEvents"]
    threads = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"S", "V", "MTE2", "MTE3"} <= threads
    slices = [e for e in ev if e["ph"] == "X"]
    assert {e["tid"] for e in slices if e["name"] == "DataCopy"} == {4, 5}  # MTE2 and MTE3 tracks
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    assert starts and set(starts) == set(ends)
    # a queue edge MTE2 -> V: arrow from the MTE2 track to the V track, not backwards in time
    assert any(starts[i]["tid"] == 4 and ends[i]["tid"] == 1 for i in starts)
    assert all(ends[i]["ts"] >= starts[i]["ts"] - 1e-9 for i in starts)


def test_timing_only_gives_the_same_cycles(tmp_path):
    """Full run (arithmetic) and timing-only run of the same binary: identical accounting."""
    from transformer.cli_common import load_kernel
    from transformer.cli_common import transform_kernel
    from transformer.targets import get_target
    from transformer.timing.profile import profile_kernel

    t = get_target(None)
    k, _ = transform_kernel(ADD, load_kernel(ADD), "tile,double_buffer", t)
    full = profile_kernel(k, t, timing_only=False)
    fast = profile_kernel(k, t, timing_only=True)
    assert full.details["timing_only"] is False and fast.details["timing_only"] is True
    assert full.cycles == fast.cycles
    assert full.pipes == fast.pipes


def test_hazard_makes_profile_exit_1(tmp_path):
    """A hand-written source with a missing flag: `ascx profile kernel.cpp` reports and exits 1."""
    src = tmp_path / "k.cpp"
    text = (Path(__file__).parent / "cases" / "hazards.cpp").read_text()
    src.write_text(text.replace('g_case = argc > 1 ? argv[1] : "fixed_flags";', 'g_case = "v_mte3"; (void)argc; (void)argv;'))
    code, out = _profile(str(src))
    assert code == 1
    assert "RAW hazard on UB" in out and "V at k.cpp:" in out and "MTE3 at k.cpp:" in out


def test_flag_dropped_from_emitted_kernel_is_caught(monkeypatch):
    """Test-only switch: the second wait of each core (DeQue of B: MTE2 -> V; the first, of A,
    is covered by B's edge, MTE2 being in order) orders nothing, as if the emitted kernel lacked
    that flag; `ascx verify --emitted` and `ascx profile` fail."""
    monkeypatch.setenv("ASCX_EMU_TEST_DROP_WAIT", "2")
    r = CliRunner().invoke(main, ["verify", ADD, "--passes", "tile,double_buffer", "--emitted", "--trials", "1"])
    assert r.exit_code == 1, r.output
    assert "sync hazard: RAW on UB" in r.output and "MTE2 at" in r.output and "V at" in r.output
    code, out = _profile(ADD, "--passes", "tile,double_buffer")
    assert code == 1 and "RAW hazard on UB" in out


def test_svg_timeline_of_an_emitted_kernel(tmp_path):
    import xml.etree.ElementTree as ET

    svg = tmp_path / "add.svg"
    code, out = _profile(ADD, "--passes", ONE_CORE, "--svg", str(svg))
    assert code == 0, out
    root = ET.fromstring(svg.read_text())
    labels = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"b0.aiv0 MTE2", "b0.aiv0 V", "b0.aiv0 MTE3"} <= labels
    assert any(ln.get("marker-end") for ln in root.iter("{http://www.w3.org/2000/svg}line"))  # queue edges


def test_readme_numbers_are_the_models(add_profiles):  # type: ignore[no-untyped-def]
    """Issue 29 item 9: the profile README.md and docs/timing.md show, and every number said
    about it, are what the model gives now (the same pipelines as `add_profiles`: cached
    binaries, only runs). On failure: `python bench/readme_numbers.py --write`."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "bench" / "readme_numbers.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["readme_numbers"] = bench
    spec.loader.exec_module(bench)
    assert (bench.DOUBLE, bench.SINGLE) == (ONE_CORE, "tile,multicore{ew=1}")  # what add_profiles compiled
    m = bench.measure()
    single, double, _ = add_profiles
    assert (m.single["cycles"], m.double["cycles"]) == (single["cycles"], double["cycles"])
    assert m.single["cycles"] > m.double["cycles"]  # the example shows what it claims: double buffering helps
    assert bench.drifted(m) == [], "the documents drifted from the model: run python bench/readme_numbers.py --write"
