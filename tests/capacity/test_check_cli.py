"""`ascx check` and `ascx targets`: exit codes, table, JSON, unknown; examples after their
documented pipelines fit, with totals equal to what the emitted plan allocates (TQue/TBuf
sizes summed from the plan); `tile` without
parameters (and `solver_tiles`) picks tiles `ascx check` accepts at two size settings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from allocation import kernel_plan_totals
from documented import OP_ROWS, ROWS
from solver_doubles import timing_out_solver
from transformer.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.ir"))
KiB = 1024

# Two --size settings per example (defaults, and another one).
SIZES: dict[str, list[dict[str, int]]] = {
    "add": [{}, {"M": 512, "N": 4096}],
    "attention": [{}, {"S": 512, "D": 128}],
    "attention_causal": [{}, {"S": 512, "D": 128}],
    "conv2d": [{}, {"N": 4, "H": 66, "W": 66, "F": 64}],
    "layernorm": [{}, {"N": 256, "H": 4096}],
    "matmul": [{}, {"M": 512, "N": 1024, "K": 2048}],
    "rmsnorm": [{}, {"N": 64, "H": 8192}],
    "softmax": [{}, {"R": 128, "C": 4096}],
    "embedding": [{}, {"V": 32000, "H": 4096, "N": 256}],
    "cross_entropy": [{}, {"R": 1024, "C": 4096}],
    "paged_attention": [{}, {"B": 8, "NH": 32, "D": 128, "BS": 16, "MB": 16, "NB": 256}],
}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def size_args(sizes: dict[str, int]) -> list[str]:
    return [a for k, v in sizes.items() for a in ("--size", f"{k}={v}")]


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


CUBE = """kernel mm(A: f16[M, K], B: f16[K, N]) -> (C: f32[M, N]) {{
  size M = {m}
  size N = 16
  size K = {k}
  local At: f16[{m}, {k}] @l0a
  local Ct: f32[{m}, 16] @l0c
  mm: for i0 in 0..1 {{
    copy At[0:{m}, 0:{k}] <- A[0:M, 0:K]
    for i in 0..{m} {{
      for j in 0..16 {{
        Ct[i, j] = 0.0
        for kk in 0..{k} {{ Ct[i, j] += f32(At[i, kk]) * f32(B[kk, j]) }}
      }}
    }}
    copy C[0:M, 0:N] <- Ct[0:{m}, 0:16]
  }}
}}
"""

VADD = """kernel vadd(X: f16[N], Y: f16[N]) -> (Z: f16[N]) {{
  size N = {n}
  local Xt: f16[{t}] @ub
  local Yt: f16[{t}] @ub
  local Zt: f16[{t}] @ub
  @pipeline(stages=2)
  blk: for b in 0..4 {{
    copy Xt[0:{t}] <- X[b * {t}:b * {t} + {t}]
    copy Yt[0:{t}] <- Y[b * {t}:b * {t} + {t}]
    for i in 0..{t} {{ Zt[i] = Xt[i] + Yt[i] }}
    copy Z[b * {t}:b * {t} + {t}] <- Zt[0:{t}]
  }}
}}
"""


# ---- exit codes, table, JSON ----------------------------------------------------------
def test_check_sat_prints_table_and_exits_0(tmp_path: Path) -> None:
    f = write(tmp_path, "mm.ir", CUBE.format(m=128, k=64))
    r = invoke("check", f)
    assert r.exit_code == 0, r.output + r.stderr
    out = r.output
    assert "L0A (ascend910b2)" in out and "L0C (ascend910b2)" in out
    assert re.search(r"At\s+f16\s+128x64\s+1\s+16 KiB", out)
    assert "total 16 KiB; usable 64 KiB; headroom 48 KiB" in out
    assert out.rstrip().endswith("sat: fits on ascend910b2")


def test_check_unsat_exits_1_with_explanation(tmp_path: Path) -> None:
    f = write(tmp_path, "mm.ir", CUBE.format(m=256, k=256))
    r = invoke("check", f)
    assert r.exit_code == 1
    assert "unsat: L0A: At (256x256 f16) 128 KiB > 64 KiB usable" in r.output
    assert "headroom -64 KiB" in r.output


def test_check_double_buffer_target_dependence(tmp_path: Path) -> None:
    f = write(tmp_path, "v.ir", VADD.format(n=4 * 18432, t=18432))
    r = invoke("check", f)                     # default target: ascend910b2
    assert r.exit_code == 1
    assert "double_buffer on loop blk" in r.output and "216 KiB > 192 KiB usable" in r.output
    r = invoke("check", f, "--target", "ascend310p")
    assert r.exit_code == 0 and "total 216 KiB; usable 256 KiB; headroom 40 KiB" in r.output


def test_check_json(tmp_path: Path) -> None:
    f = write(tmp_path, "mm.ir", CUBE.format(m=128, k=64))
    r = invoke("check", f, "--json")
    assert r.exit_code == 0
    d = json.loads(r.output)
    assert d["status"] == "sat" and d["target"] == "ascend910b2" and d["kernel"] == "mm"
    assert d["per_scope"]["l0a"]["total"] == 16 * KiB
    assert d["per_scope"]["l0a"]["headroom"] == 48 * KiB
    at = next(b for b in d["buffers"] if b["name"] == "At")
    assert at["position"] == "A2" and at["shape"] == [128, 64] and at["cube_operand"]
    bad = write(tmp_path, "big.ir", CUBE.format(m=256, k=256))
    r = invoke("check", bad, "--json")
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["status"] == "unsat" and d["explanations"][0]["scope"] == "l0a"
    assert d["explanations"][0]["buffers"] == ["At"] and d["explanations"][0]["value"] == 128 * KiB


def test_check_unknown_with_tiny_timeout_is_reported_as_unknown(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from transformer.capacity.solve import clear_cache

    sizes = "\n".join(f"  size a{i} = 16" for i in range(5))
    locs = "\n".join(f"  local T{i}: f16[a{i}, a{(i + 1) % 5}, a{(i + 2) % 5}] @{s}"
                     for i, s in enumerate(["l0a", "l0a", "l0b", "l0b", "l0c"]))
    f = write(tmp_path, "nl.ir", f"kernel nl(X: f16[N]) -> (Y: f16[N]) {{\n  size N = 64\n"
                                 f"{sizes}\n{locs}\n  for i in 0..N {{ Y[i] = X[i] }}\n}}\n")
    free = [a for i in range(5) for a in ("--free", f"a{i}")]
    clear_cache()  # a sat result cached by an earlier test would not reach the solver
    with timing_out_solver(monkeypatch) as budgets:
        r = invoke("check", f, *free, "--timeout-ms", "1")
        assert r.exit_code == 1
        assert "unknown (solver timeout after 1 ms)" in r.output
        assert "unsat" not in r.output and "sat: fits" not in r.output
        d = json.loads(invoke("check", f, *free, "--timeout-ms", "1", "--json").output)
        assert d["status"] == "unknown" and d["explanations"] == [] and d["core"] == []
        assert budgets == [1, 1]  # --timeout-ms reaches the solver
    # With a real budget the solver decides and picks the sizes; unknown was not cached.
    # (a generous ceiling: under heavy machine load 20 s of wall time was not always enough)
    r = invoke("check", f, *free, "--timeout-ms", "120000")
    assert r.exit_code == 0 and "chosen: a0=" in r.output


def test_check_no_locals_is_trivially_sat() -> None:
    r = invoke("check", str(EXAMPLES / "add.ir"))
    assert r.exit_code == 0
    assert "no on-chip buffers" in r.output and "sat: fits on ascend910b2" in r.output


@pytest.mark.parametrize("args, needle", [
    (["--target", "ascend999"], "unknown target"),
    (["--size", "Q=4"], "no size `Q`"),
    (["--size", "M=x"], "not an integer"),
    (["--passes", "nosuchpass"], "unknown pass"),
    (["--passes", "tile{nosuchloop=16}"], "no loop named"),
    (["--free", "Q"], "no size `Q`"),
])
def test_check_bad_input_exits_2(args: list[str], needle: str) -> None:
    r = invoke("check", str(EXAMPLES / "add.ir"), *args)
    assert r.exit_code == 2, r.output + r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_check_syntax_error_exits_2(tmp_path: Path) -> None:
    r = invoke("check", write(tmp_path, "bad.ir", "kernel k( {"))
    assert r.exit_code == 2 and "error" in r.stderr


def test_enforce_capacity_gate_exit_1(tmp_path: Path, capsys) -> None:
    from transformer.cli_check import enforce_capacity
    from transformer.cli_common import CheckFailed
    from transformer.parser import parse

    enforce_capacity(parse(CUBE.format(m=128, k=64)), "ascend910b2")  # fits: no output
    with pytest.raises(CheckFailed):
        enforce_capacity(parse(CUBE.format(m=256, k=256)), "ascend910b2")
    err = capsys.readouterr().err
    assert "does not fit ascend910b2" in err and "L0A" in err and "128 KiB" in err


# ---- ascx targets ---------------------------------------------------------------------
def test_targets_list_and_one() -> None:
    r = invoke("targets")
    assert r.exit_code == 0
    for n in ("ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4", "ascend310p"):
        assert n in r.output
    assert "ascend910b2 (default)" in r.output
    rows = json.loads(invoke("targets", "--json").output)
    assert {r["name"] for r in rows} >= {"ascend910b2", "ascend310p"}
    assert next(r for r in rows if r["name"] == "ascend310p")["ub_usable_bytes"] == 256 * KiB
    r = invoke("targets", "ascend310p")
    assert r.exit_code == 0 and "documented" in r.output and "assumed" in r.output
    assert "ub.usable_bytes" in r.output and "ascend-facts.md" in r.output
    d = json.loads(invoke("targets", "ascend910b2", "--json").output)
    ub = next(f for f in d["facts"] if f["name"] == "ub.usable_bytes")
    assert ub["value"] == 192 * KiB and ub["status"] == "documented" and ub["source"]
    r = invoke("targets", "nosuch")
    assert r.exit_code == 2 and "unknown target" in r.stderr


# ---- examples: totals equal what the emitted plan allocates ----------------------------
def printed_totals(out: str, target: str = "ascend910b2") -> dict[str, str]:
    totals, scope = {}, None
    for line in out.splitlines():
        m = re.match(rf"^(\w+) \({target}\)$", line)
        if m:
            scope = m.group(1).lower()
        m = re.match(r"^  total (.+?); usable", line)
        if m and scope:
            totals[scope] = m.group(1)
    return totals


def assert_check_matches_count(name: str, pipeline: str, sizes: dict[str, int]) -> None:
    from passes.base import run_pipeline

    from transformer.capacity import fmt_bytes
    from transformer.cli_common import load_kernel

    path = str(EXAMPLES / f"{name}.ir")
    r = invoke("check", path, "--passes", pipeline, *size_args(sizes))
    assert r.exit_code == 0, f"{name} {sizes} `{pipeline}`:\n{r.output}{r.stderr}"
    kernel, _ = run_pipeline(load_kernel(path, tuple(f"{k}={v}" for k, v in sizes.items())),
                             pipeline, "ascend910b2")
    want = {s: fmt_bytes(v) for s, v in kernel_plan_totals(kernel).items()}
    assert printed_totals(r.output) == want, r.output


def test_examples_readme_pipelines_pass_check_with_independent_totals() -> None:
    pairs = ROWS + OP_ROWS
    assert {name for name, _ in pairs} == set(NAMES), "every example needs a documented pipeline"
    for name, pipeline in pairs:
        assert_check_matches_count(name, pipeline, {})


@pytest.mark.parametrize("name", NAMES)
def test_tile_without_parameters_is_accepted_by_check(name: str) -> None:
    """`tile` alone (the pass's `choose_tiles`) at two size settings: `ascx check`
    accepts the result and its totals equal the independent count."""
    for sizes in SIZES.get(name, [{}]):
        assert_check_matches_count(name, "tile", sizes)


# Operators (issue 28) for which `solver_tiles` finds no tiles at the example's sizes yet (issue 28
# item 7, `tile` without sizes always chooses): strict, so the mark fails once they do.
SOLVER_GAPS = {"decode_attention": "NoFeasibleTilesError on the two-deep row loops (GQA)",
               "bmm": "NoFeasibleTilesError: no candidate tiles of mm, i fit (the batch loop staged as a 3-D tile)"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=SOLVER_GAPS[n], strict=True))
                                  if n in SOLVER_GAPS else n for n in NAMES])
def test_solver_tiles_are_accepted_by_check(name: str) -> None:
    """`solver_tiles` over the loops `tile` would pick, at two size settings: the chosen
    `tile{...}` is accepted by `ascx check` with totals equal to the independent count."""
    from passes._rewrite import loop_extent
    from passes.base import TraceEntry
    from passes.tile import _default_bands, tile_kernel

    from transformer.capacity import solver_tiles
    from transformer.cli_common import load_kernel

    def apply(k, req):
        return tile_kernel(k, tuple(req.items()), "ascend910b2", TraceEntry("tile"))

    for sizes in SIZES.get(name, [{}]):
        k = load_kernel(str(EXAMPLES / f"{name}.ir"), tuple(f"{a}={b}" for a, b in sizes.items()))
        loops = {n: loop_extent(lp, k.size_values()) for band in _default_bands(k)
                 for n, lp in band}
        nests = {n: i for i, band in enumerate(_default_bands(k)) for n, _ in band}
        best = solver_tiles(k, loops, "ascend910b2", apply=apply, nests=nests)
        assert set(best) == set(loops)
        pipeline = "tile{" + ",".join(f"{a}={b}" for a, b in best.items()) + "}"
        assert_check_matches_count(name, pipeline, sizes)
