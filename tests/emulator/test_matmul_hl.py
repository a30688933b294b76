"""The high-level Matmul API (issue 26 item 1): a folder in the public matmul samples' style
(`cases/matmul_hl`: host tiling from `matmul_tiling::MultiCoreMatmulTiling` on the platform's
cores, `TCubeTiling` copied to the kernel, `REGIST_MATMUL_OBJ`, `SetTensorA/B`, `SetBias`,
`SetTail`, `IterateAll` and `Iterate` + `GetTensorC`, `End`) matches numpy, and the profile
prices it on the cube pipes (MTE2, MTE1, M, FIX of the AIC cores)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from transformer.cli import main as cli_main
from transformer.emulator.folder import build_folder, run_folder

pytestmark = pytest.mark.slow  # compiles C++ against the emulator
FOLDER = Path(__file__).parent / "cases" / "matmul_hl"


def _inputs(work: Path, m: int, n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    (work / "input").mkdir(exist_ok=True)
    a.tofile(work / "input" / "a.bin")
    b.tofile(work / "input" / "b.bin")
    bias.tofile(work / "input" / "bias.bin")
    return a.astype(np.float64) @ b.astype(np.float64) + bias


def test_matmul_high_level_api_matches_numpy_and_is_priced_on_the_cube(emu_cache, tmp_path):
    work = tmp_path / "mm"
    shutil.copytree(FOLDER, work)  # follows the data_utils.h link
    _, binary = build_folder(work, warnings_as_errors=True, cache_dir=emu_cache)
    # (M, N, K, cores): 2 x 2 cores with M and N tails; 3 cores along N with two base blocks each
    for m, n, k, dim, used, seed in ((200, 96, 80, 4, 4, 1), (300, 600, 64, 3, 3, 2)):
        want = _inputs(work, m, n, k, seed)
        r = run_folder(work, binary, [str(m), str(n), str(k), str(dim)], timeout=120)
        assert r.returncode == 0, r.stderr
        assert f"usedCoreNum {used} " in r.stdout, r.stdout
        for name in ("c.bin", "c_iter.bin", "c_mix.bin", "c_cube.bin"):
            got = np.fromfile(work / "output" / name, np.float32).reshape(m, n)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=name)
    _inputs(work, 200, 96, 80, 1)  # the host's default shape, for the profile
    res = CliRunner().invoke(cli_main, ["profile", str(work), "--json"])
    assert res.exit_code == 0, res.output
    prof = json.loads(res.output[res.output.index("{"):res.output.rindex("}") + 1])
    busy = {(p["pipe"], p["core_kind"]): p["busy_cycles"] for p in prof["pipe_detail"]}
    for pipe in ("MTE2", "MTE1", "M", "FIX"):
        assert busy.get((pipe, "aic"), 0) > 0, (pipe, busy)
    assert prof["hazards"] == []
