"""`ascx emulator --cflags`, `ascx emit` (kernel, harness, build script), and how a compiler
error in emitted code is reported (the emitted line and the template it came from)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from transformer.codegen import EmittedCodeError, _compile_error, emit_ascendc
from transformer.emulator import cflags, include_dir

from .conftest import ROOT, apply, example


def ascx(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transformer.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_emulator_cflags_prints_the_flags() -> None:
    r = ascx("emulator", "--cflags")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == cflags()


def test_emit_stdout_and_warnings() -> None:
    r = ascx("emit", "examples/add.ir", "--size", "M=4", "--size", "N=16")
    assert r.returncode == 0, r.stderr
    assert 'extern "C" __global__ __aicore__ void add(GM_ADDR A, GM_ADDR B, GM_ADDR C)' in r.stdout
    assert "falls back to scalar" in r.stderr


def _assert_no_path_of_this_checkout(script: Path) -> None:
    text = script.read_text()
    for path in (str(ROOT), str(include_dir()), str(Path(sys.executable).parent)):
        assert path not in text, f"{script} names {path} of the machine that emitted it:\n{text}"


def _env_with_ascx(path: str | None = None) -> dict[str, str]:
    """The environment with PATH = `path` (default: this one's), plus the folder of this
    Python's `ascx` (the test's virtualenv, which a plain `pytest` may not have on PATH)."""
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    elif (Path(sys.executable).parent / "ascx").exists():
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_harness_build_script_without_ascx_on_path_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = ascx("emit", "examples/add.ir", "--passes", "tile", "--size", "M=16", "--size", "N=64",
             "-o", str(tmp_path / "kernel.cpp"), "--harness", str(tmp_path))
    assert r.returncode == 0, r.stderr
    _assert_no_path_of_this_checkout(tmp_path / "build.sh")
    assert "ascx emulator --cflags" in (tmp_path / "build.sh").read_text()
    bare = os.pathsep.join(d for d in ("/usr/bin", "/bin") if not (Path(d) / "ascx").exists())
    b = subprocess.run(["sh", str(tmp_path / "build.sh")], capture_output=True, text=True, env=_env_with_ascx(bare))
    assert b.returncode == 2, b.stderr
    assert "build.sh: error: `ascx` is not on PATH" in b.stderr and "hint: install ascx" in b.stderr, b.stderr
    assert not (tmp_path / "kernel").exists()


@pytest.mark.slow  # builds and runs the kernel with g++
def test_emit_harness_builds_and_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "kernel.cpp"
    r = ascx("emit", "examples/add.ir", "--passes", "tile", "--size", "M=16", "--size", "N=64",
             "-o", str(out), "--harness", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "main.cpp").is_file() and (tmp_path / "build.sh").is_file()
    _assert_no_path_of_this_checkout(tmp_path / "build.sh")
    # built as elsewhere: the include path comes from `ascx emulator --cflags` on PATH
    b = subprocess.run(["sh", str(tmp_path / "build.sh")], capture_output=True, text=True, env=_env_with_ascx())
    assert b.returncode == 0, b.stderr
    a = np.linspace(-1, 1, 16 * 64).astype(np.float16)
    c = np.linspace(2, -3, 16 * 64).astype(np.float16)
    a.tofile(tmp_path / "A.bin")
    c.tofile(tmp_path / "B.bin")
    run = subprocess.run([str(tmp_path / "kernel"), str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.fromfile(tmp_path / "C.bin", np.float16)
    assert np.array_equal(got, (a + c).astype(np.float16))


def test_compiler_error_names_emitted_line_and_template() -> None:
    em = emit_ascendc(apply(example("add", {"M": 16, "N": 64}), "tile"))
    text, tmap = em.combined()
    n = next(i for i, l in enumerate(text.split("\n"), start=1) if "Add(C_ubLocal" in l)

    class FakeCompileError(Exception):
        stderr = f"/tmp/x/kernel.cpp:{n}:9: error: no matching function for call to 'Add'\n"

    err = _compile_error(FakeCompileError(), text, tmap)
    assert isinstance(err, EmittedCodeError)
    msg = err.message
    assert f"line {n}" in msg and "Add(C_ubLocal" in msg
    assert "templates/kernel.cpp.j2" in msg and "method Compute" in msg
