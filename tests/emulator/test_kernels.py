"""Whole kernels against the emulator: classic add sample, sanitizers, mix mode, traces, flags."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from transformer.emulator import (
    DEFAULT_SCOPE_BYTES, ERROR_EXIT, cflags, compile_source, include_dir, run_binary,
)
from transformer.emulator.trace import by_core, parse_lines, unmatched_edges

from .conftest import CASES, build, parse_named_lines

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


@pytest.fixture(scope="session")
def add_run(emu_cache):
    r = run_binary(build(emu_cache, "add_custom"), trace=True)
    assert r.returncode == 0, r.stderr
    return r


def test_add_sample_runs_unchanged(add_run):
    assert add_run.stdout.strip() == "max_abs_err 0"


def test_add_sample_under_sanitizers(emu_cache):
    binary = build(emu_cache, "add_custom", sanitize=True)
    r = run_binary(binary, env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1"})
    assert r.returncode == 0, r.stderr
    assert "runtime error" not in r.stderr and "AddressSanitizer" not in r.stderr


def test_add_trace_ops_per_pipe(add_run):
    events = add_run.trace
    cores = by_core(events)
    assert sorted(c for _, c in cores) == [f"b{i}.aiv0" for i in range(8)]
    for (_, core), evs in cores.items():
        assert [e.seq for e in evs] == list(range(len(evs)))
        ops = Counter((e.pipe, e.op) for e in evs)
        # 16 tiles: 2 loads on MTE2, 1 Add on V, 1 store on MTE3 each
        assert ops[("MTE2", "DataCopy")] == 32
        assert ops[("V", "Add")] == 16
        assert ops[("MTE3", "DataCopy")] == 16
        assert ops[("MTE2", "EnQue")] == 32 and ops[("V", "DeQue")] == 32
        assert ops[("V", "EnQue")] == 16 and ops[("MTE3", "DeQue")] == 16
        assert ops[("V", "FreeTensor")] == 32 and ops[("MTE3", "FreeTensor")] == 16
        add = next(e for e in evs if e.op == "Add")
        assert (add.elems, add.repeats, add.bytes, add.dtype) == (128, 1, 256, "half")
        load = next(e for e in evs if e.op == "DataCopy" and e.pipe == "MTE2")
        assert (load.src, load.dst, load.bytes) == ("GM", "UB", 256)
        assert add.loc.startswith("add_custom.cpp:")


def test_add_trace_sync_edges_match(add_run):
    events = add_run.trace
    dangling_sets, orphan_waits = unmatched_edges(events)
    assert orphan_waits == set()
    # only the final FreeTensor of each buffer (3 queues x 2 buffers per core) is never waited
    assert len(dangling_sets) == 8 * 6
    sets = {edge: e for e in events if e.sync == "set" for edge in e.edges}
    for w in (e for e in events if e.sync == "wait"):
        for edge in w.edges:
            s = sets[edge]
            assert s.core == w.core and s.seq < w.seq
            assert (s.from_pipe, s.to_pipe) == (w.from_pipe, w.to_pipe)
            assert s.pipe == s.from_pipe and w.pipe == w.to_pipe
    # double buffering: the 3rd AllocTensor of VECIN queue 0 waits for the 1st FreeTensor of buffer 0
    evs = by_core(events)[(0, "b0.aiv0")]
    allocs = [e for e in evs if e.op == "AllocTensor" and e.extra["que"] == 0]
    assert allocs[0].edges == () and allocs[1].edges == ()
    assert allocs[2].edges == ("b0.aiv0/q0/b0/free0",)


def test_mix_mode_matmul_relu(emu_cache, tmp_path):
    r = run_binary(build(emu_cache, "mix_matmul_relu"), trace=True)
    assert r.returncode == 0, r.stderr
    d = parse_named_lines(r.stdout)
    a = d["a"].reshape(2, 32, 32)
    b = d["b"].reshape(32, 32)
    np.testing.assert_array_equal(d["out"].reshape(2, 32, 32), np.maximum(2 * (a @ b), 0))
    cores = by_core(r.trace)
    assert sorted(c for _, c in cores) == ["b0.aic0", "b0.aiv0", "b0.aiv1", "b1.aic0", "b1.aiv0", "b1.aiv1"]
    xset = [e for e in r.trace if e.op == "CrossCoreSetFlag"]
    xwait = [e for e in r.trace if e.op == "CrossCoreWaitFlag"]
    assert len(xset) == 2 + 4 and len(xwait) == 4 + 2
    _, orphans = unmatched_edges(r.trace)
    assert orphans == set()
    aic = cores[(0, "b1.aic0")]
    assert {e.pipe for e in aic if e.op == "Mmad"} == {"M"}
    assert [e.fractals for e in aic if e.op == "Mmad"] == [8]
    assert {e.pipe for e in aic if e.op == "LoadData"} == {"MTE1"}
    assert {e.pipe for e in aic if e.op == "Fixpipe"} == {"FIX"}
    wait_aic = next(e for e in aic if e.op == "CrossCoreWaitFlag")
    assert len(wait_aic.edges) == 2  # one set from each AIV of the group


def test_cflags_shape():
    f = cflags()
    assert "-std=c++17" in f and f"-I{include_dir()}" in f and "-pthread" in f
    assert (include_dir() / "kernel_operator.h").is_file()
    f2 = cflags({"ub": 1024, "L0C": 256 * 1024})
    assert "-DASCX_EMU_UB_BYTES=1024" in f2 and "-DASCX_EMU_L0C_BYTES=262144" in f2
    with pytest.raises(ValueError):
        cflags({"L2": 5})
    assert DEFAULT_SCOPE_BYTES["UB"] == 192 * 1024


def test_header_defaults_are_the_target_tables() -> None:
    """mem_sizes.h's fallback sizes (a plain g++ build without -D flags) are the default
    target's physical scope sizes: the target table stays the one place they are written."""
    import re

    from transformer.targets import get_target

    text = (include_dir() / "ascx_emu" / "mem_sizes.h").read_text()
    scopes = get_target().scopes
    for scope, nbytes in DEFAULT_SCOPE_BYTES.items():
        m = re.search(rf"#define ASCX_EMU_{scope}_BYTES \(([0-9* ]+)\)", text)
        assert m, f"mem_sizes.h has no default for {scope}"
        assert eval(m.group(1)) == nbytes == scopes[scope.lower()].physical_bytes, scope  # noqa: S307 - digits and *


def test_scope_override_reaches_the_header(emu_cache):
    # the add sample needs 3 queues x 2 x 256 B = 1536 B of UB: too much for a 1 KiB UB
    binary = build(emu_cache, "add_custom", scope_bytes={"UB": 1024})
    r = run_binary(binary)
    assert r.returncode == ERROR_EXIT
    assert "UB over-allocation" in r.stderr and "capacity is 1024 bytes" in r.stderr


def test_plain_gxx_command_line(tmp_path):
    """The documented `g++ $(flags) kernel.cpp -o k && ./k` path, without the helpers."""
    out = tmp_path / "k"
    cmd = ["g++", *cflags(), "-Wall", "-Wextra", "-Werror", str(CASES / "add_custom.cpp"), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    r = subprocess.run([str(out)], capture_output=True, text=True)
    assert r.returncode == 0 and "max_abs_err 0" in r.stdout


def test_trace_parser_handles_records():
    lines = [
        '{"run":0,"core":"b0.aiv0","block":0,"kind":"AIV","sub":0,"seq":0,"pipe":"MTE2","op":"EnQue",'
        '"sync":"set","edges":["e1"],"from":"MTE2","to":"V","que":0,"buf":1,"loc":"k.cpp:3"}',
        "",
        '{"run":0,"core":"b0.aiv0","block":0,"kind":"AIV","sub":0,"seq":1,"pipe":"V","op":"DeQue",'
        '"sync":"wait","edges":["e1"],"from":"MTE2","to":"V","que":0,"buf":1,"loc":"k.cpp:4"}',
    ]
    ev = parse_lines(lines)
    assert len(ev) == 2 and ev[0].edges == ("e1",) and ev[0].extra == {"que": 0, "buf": 1}
    assert unmatched_edges(ev) == (set(), set())
    with pytest.raises(ValueError, match="trace line 1"):
        parse_lines(["{not json"])


def test_mix_mode_under_sanitizers(emu_cache):
    r = run_binary(build(emu_cache, "mix_matmul_relu", sanitize=True))
    assert r.returncode == 0, r.stderr
    assert "runtime error" not in r.stderr and "AddressSanitizer" not in r.stderr
