"""Conformance suite: kernels in the public CPU-debug sample layout (``samples/<name>/``:
``main.cpp`` + ``*_custom.cpp`` + ``data_utils.h`` including ``acl/acl.h``), built with nothing
but the emulator flags, run like the samples (``input/*.bin`` in, ``output/*.bin`` out) and
compared with numpy. Each sample compiles once per flag set (content-hash cache shared by the
xdist workers); one parametrised test per sample so workers spread them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from transformer.cli import main as cli_main
from transformer.emulator import cflags
from transformer.emulator.folder import build_folder, find_sources, run_folder

from .sample_specs import SAMPLES, Sample

ROOT = Path(__file__).parent / "samples"
FOLDERS = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "common")
# An ASan/UBSan build costs about 8 CPU-s per sample against 3.5 for a plain one (measured,
# docs/emulator.md), so CI sanitizes one sample per API family; ASCX_SAMPLES_ASAN=all runs all.
SANITIZED_SUBSET = ["fill_gm_custom", "gather_mask_custom", "layernorm_custom", "matmul_custom", "pad_copy_custom",
                    "reduce_max_index_custom", "softmax_custom", "sort_custom", "syncall_custom"]
SANITIZED = FOLDERS if os.environ.get("ASCX_SAMPLES_ASAN") == "all" else SANITIZED_SUBSET


def run_sample(name: str, work: Path, cache: Path, *, sanitize: bool = False) -> None:
    spec: Sample = SAMPLES[name]
    _, binary = build_folder(ROOT / name, sanitize=sanitize, warnings_as_errors=True, cache_dir=cache)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # stable across processes
    inputs = spec.inputs(rng)
    (work / "input").mkdir(parents=True)
    for fname, arr in inputs.items():
        arr.tofile(work / "input" / fname)
    r = run_folder(work, binary, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    if sanitize:
        assert "runtime error" not in r.stderr, r.stderr
    for fname, want in spec.expect(inputs).items():
        got = np.fromfile(work / "output" / fname, dtype=want.dtype)
        assert got.shape == want.reshape(-1).shape, (fname, got.shape, want.shape)
        np.testing.assert_allclose(got.astype(np.float64), want.reshape(-1).astype(np.float64),
                                   rtol=spec.rtol, atol=spec.atol, err_msg=f"{name}: {fname}")


def test_every_sample_folder_has_a_spec_and_the_public_layout():
    assert len(FOLDERS) >= 15
    assert set(FOLDERS) == set(SAMPLES) and set(SANITIZED_SUBSET) <= set(FOLDERS)
    for name in FOLDERS:
        src = find_sources(ROOT / name)
        assert src.main.name == "main.cpp"
        assert all(k.name.endswith("_custom.cpp") for k in src.kernels), src.kernels
        assert '#include "acl/acl.h"' in (ROOT / name / "data_utils.h").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in FOLDERS if n not in SANITIZED])
def test_sample_matches_numpy(name, emu_cache, tmp_path):
    """The samples not run under sanitizers below (a sanitized run compares with numpy too)."""
    run_sample(name, tmp_path, emu_cache)


@pytest.mark.slow
@pytest.mark.parametrize("name", SANITIZED)
def test_sample_clean_under_asan_ubsan(name, emu_cache, tmp_path):
    run_sample(name, tmp_path, emu_cache, sanitize=True)


@pytest.mark.slow
def test_legacy_folder_builds_with_plain_gxx_and_the_cli(tmp_path):
    """The acceptance line: g++ $(ascx emulator --cflags) main.cpp kernel.cpp, unchanged."""
    work = tmp_path / "legacy"
    shutil.copytree(ROOT / "legacy_leakyrelu_custom", work)  # follows the data_utils.h link
    (work / "input").mkdir()
    x = np.linspace(-4, 4, 4096).astype(np.float16)
    x.tofile(work / "input" / "input_x.bin")
    (work / "output").mkdir()
    r = subprocess.run(["g++", *cflags(), "main.cpp", "leakyrelu_custom.cpp", "-o", "k"], cwd=work, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run(["./k"], cwd=work, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    want = np.where(x >= 0, x, (x.astype(np.float32) * np.float32(0.125)).astype(np.float16))
    np.testing.assert_array_equal(np.fromfile(work / "output" / "output_y.bin", np.float16), want)
    (work / "output" / "output_y.bin").unlink()
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(work)])
    assert res.exit_code == 0, res.output
    assert "ran" in res.output and "exit 0" in res.output
    np.testing.assert_array_equal(np.fromfile(work / "output" / "output_y.bin", np.float16), want)


@pytest.mark.slow
def test_cli_build_reports_a_kernel_stopped_by_a_check(tmp_path):
    work = tmp_path / "bad"
    shutil.copytree(ROOT / "legacy_leakyrelu_custom", work)
    (work / "input").mkdir()
    np.zeros(4096, np.float16).tofile(work / "input" / "input_x.bin")
    kernel = work / "leakyrelu_custom.cpp"
    kernel.write_text(kernel.read_text().replace("GetBlockNum() == BLOCK_DIM", "GetBlockNum() == 3"))
    res = CliRunner().invoke(cli_main, ["emulator", "build", str(work)])
    assert res.exit_code == 1, res.output
    assert "ASSERT: Assertion `GetBlockNum() == 3' failed. blockDim must be 4" in res.output
    assert "exit 3 (stopped by an emulator check)" in res.output
