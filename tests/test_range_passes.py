"""Passes that keep size ranges (issue 24 item 2): `split`, `tile`, `double_buffer`, `fuse`,
`multicore`, `gemm`, `round_operand` and `flash_attention` on a kernel with `size M = 256 in 1..4096` give a kernel that serves every
value of the range — trip counts and tails are run-time expressions of the sizes
(`(M + 7) / 8` tiles, a point loop `min(8, M - i0 * 8)`), dependences are analysed with the
sizes free — and the printer keeps the ranges. Each result is run by the interpreter at
several sizes of the range (both ends, tails, N not a multiple of the tile) against the
untransformed kernel at the same sizes, on fresh random inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from passes.base import run_pipeline
from transformer import ir
from transformer.cli import main
from transformer.interp import compare_outputs, random_inputs, run
from transformer.parser import parse
from transformer.printer import print_kernel

from small_kernels import ADD_RANGED

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# the ranges narrowed so the interpreter runs their ends quickly
ADD = ADD_RANGED.replace("size M = 256 in 1..4096", "size M = 256 in 1..600").replace("16..65536", "16..4096")


def _ranged(example: str, *edits: tuple[str, str]) -> str:
    text = (EXAMPLES / example).read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return text


SOFTMAX_ROWS = _ranged("softmax.ir", ("size R = 256", "size R = 256 in 1..512"))
SOFTMAX_BOTH = _ranged("softmax.ir", ("size R = 256", "size R = 256 in 1..512"),
                       ("size C = 1024", "size C = 1024 in 16..4096 multiple of 16"))
RMSNORM = _ranged("rmsnorm.ir", ("size N = 128", "size N = 128 in 1..300"))
LAYERNORM = _ranged("layernorm.ir", ("size N = 128", "size N = 128 in 1..300"))
MATMUL = _ranged("matmul.ir", ("size M = 256", "size M = 256 in 1..1024"),
                 ("size N = 256", "size N = 256 in 16..1024 multiple of 16"))
ATTENTION = _ranged("attention.ir", ("size S = 1024", "size S = 1024 in 128..4096 multiple of 128"))

ADD_SHAPES = ({"M": 1, "N": 16}, {"M": 250, "N": 48}, {"M": 7, "N": 1040}, {"M": 600, "N": 16}, {"M": 2, "N": 4096})
ROWS = tuple({"R": r} for r in (1, 5, 255, 256, 512))
NORM_ROWS = tuple({"N": n} for n in (1, 7, 129, 300))

CASES = [
    ("add", ADD, "split{ew.i=64,ew.j=32}", ADD_SHAPES),
    ("add", ADD, "tile{ew.i=8,ew.j=16}", ADD_SHAPES),  # 16 divides every N: no tail on j
    ("add", ADD, "tile,double_buffer", ADD_SHAPES),
    ("add", ADD, "tile,multicore{ew}", ADD_SHAPES),
    ("softmax", SOFTMAX_ROWS, "fuse,tile,double_buffer", ROWS),
    ("softmax", SOFTMAX_BOTH, "fuse,tile{rmax.r=4}", ({"R": 1, "C": 16}, {"R": 5, "C": 1040}, {"R": 512, "C": 64},
                                                     {"R": 3, "C": 4096})),
    ("rmsnorm", RMSNORM, "fuse,tile,double_buffer", NORM_ROWS),
    ("layernorm", LAYERNORM, "fuse,tile,double_buffer", NORM_ROWS),
    ("matmul", MATMUL, "gemm", ({"M": 1, "N": 16}, {"M": 5, "N": 48}, {"M": 256, "N": 256}, {"M": 1000, "N": 1024},
                                {"M": 1024, "N": 16})),
    ("attention", ATTENTION, "round_operand{pv.s=f16},flash_attention", ({"S": 128}, {"S": 384}, {"S": 512})),
]


def _same_at(original: ir.Kernel, transformed: ir.Kernel, sizes: dict[str, int], seed: int) -> None:
    k0, k1 = original.with_sizes(sizes), transformed.with_sizes(sizes)
    inputs = random_inputs(k0, np.random.default_rng(seed))
    assert all(np.any(v != 0) for v in inputs.values() if v.size > 4)
    for d in compare_outputs(k0, run(k0, inputs), run(k1, inputs)):
        assert d.ok, f"{d.name} at {sizes}: max rel err {d.max_rel}"


@pytest.mark.parametrize("name,text,pipeline,shapes", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_the_result_keeps_the_ranges_and_matches_at_every_shape(name: str, text: str, pipeline: str,
                                                               shapes: tuple[dict[str, int], ...]) -> None:
    kernel = parse(text)
    out, trace = run_pipeline(kernel, pipeline, "ascend910b2")
    assert out.size_ranges() == kernel.size_ranges(), [t.pass_text for t in trace]
    assert "specialise" not in [t.pass_text for t in trace]
    assert parse(print_kernel(out)) == out  # the printer keeps the symbolic sizes and ranges
    seed = int(np.random.SeedSequence().entropy % 2**32)
    for sizes in shapes:
        _same_at(kernel, out, sizes, seed)


def test_trip_counts_and_tails_are_expressions_of_the_sizes() -> None:
    out, trace = run_pipeline(parse(ADD), "tile{ew.i=8,ew.j=16}", "ascend910b2")
    text = print_kernel(out)
    assert "ew: for i0 in 0..(M + 7) / 8 {" in text and "for j0 in 0..N / 16 {" in text
    assert "for i in 0..min(8, M - i0 * 8) {" in text and "for j in 0..16 {" in text  # N is a multiple of 16
    assert "local A_ub: f16[8, 16] @ub" in text  # buffers are the constant tile
    assert any("run-time (M + 7) / 8 tiles of 8" in c and "a tail where 8 does not divide M" in c
               for c in trace[0].changes), trace[0].changes


def test_flash_attention_needs_every_sequence_length_of_the_range_a_multiple_of_the_key_block() -> None:
    from passes.base import PassError

    loose = ATTENTION.replace("in 128..4096 multiple of 128", "in 1..4096")
    with pytest.raises(PassError, match=r"`S` ranges over 1..4096: the mix kernel needs every value a multiple of 128"):
        run_pipeline(parse(loose), "round_operand{pv.s=f16},flash_attention", "ascend910b2")
    head = ATTENTION.replace("size D = 64", "size D = 64 in 64..128 multiple of 64")
    with pytest.raises(PassError, match=r"the head dimension `D` has a range"):
        run_pipeline(parse(head), "round_operand{pv.s=f16},flash_attention", "ascend910b2")


def test_a_tile_larger_than_every_extent_of_the_range_is_refused() -> None:
    from passes.base import PassError

    small = ADD.replace("size M = 256 in 1..600", "size M = 32 in 1..64")
    with pytest.raises(PassError, match=r"tile size 128 for loop `ew.i` is larger than the loop's extent 64"):
        run_pipeline(parse(small), "tile{ew.i=128}", "ascend910b2")


def test_multicore_takes_no_more_cores_than_the_largest_trip_count() -> None:
    """At smaller sizes the cores past the trip count get no iteration (the lowering gives
    them none: `@cores(48)` over 5 rows emits and runs, tests/codegen/test_range_emitted.py)."""
    from passes.base import PassError

    narrow = ADD.replace("size M = 256 in 1..600", "size M = 64 in 1..100")
    out, trace = run_pipeline(parse(narrow), "tile{ew.i=8},multicore{ew}", "ascend910b2")
    loop = out.body[0]
    assert isinstance(loop, ir.For) and loop.annotation("cores").get("n") == 13  # (100 + 7) / 8 tiles at M = 100
    assert "capped at the trip count 13 (its largest trip count over the size ranges" in trace[-1].decisions[0]
    with pytest.raises(PassError, match="14 cores for .* which has only 13 iterations"):
        run_pipeline(parse(narrow), "tile{ew.i=8},multicore{ew=14}", "ascend910b2")


def test_a_dependence_at_some_size_of_the_range_is_refused() -> None:
    """`X[i + K]` read, `X[i]` written: a dependence carried by `i` for every K of the range
    (the sizes are free in the dependence test): `multicore` refuses it."""
    from passes.base import PassError

    text = """kernel shift(A: f32[M]) -> (X: f32[M]) {
  size M = 64 in 16..1024
  init: for i in 0..M {
    X[i] = A[i]
  }
  sh: for i in 0..M - 8 {
    X[i] = X[i + 8] * 2.0
  }
}
"""
    with pytest.raises(PassError, match="not parallel"):
        run_pipeline(parse(text), "multicore{sh}", "ascend910b2")


def test_verify_shapes_transforms_once_when_every_pass_keeps_ranges(tmp_path: Path) -> None:
    p = tmp_path / "add.ir"
    p.write_text(ADD)
    r = CliRunner().invoke(main, ["verify", str(p), "--passes", "tile,double_buffer", "--shapes",
                                  "M=1,N=16;M=250,N=48;M=600,N=16", "--trials", "1"])
    assert r.exit_code == 0, r.output
    assert "3 shape(s), 1 trial(s) each" in r.stdout and "; transformed once over the size ranges" in r.stdout
    assert r.stdout.count(": ok (") == 3
    per_shape = CliRunner().invoke(main, ["verify", str(p), "--passes", "interchange{ew.i,ew.j}", "--shapes",
                                          "M=1,N=16;M=250,N=48", "--trials", "1"])
    assert per_shape.exit_code == 0, per_shape.output
    assert "transformed once" not in per_shape.stdout and per_shape.stdout.count(": ok (") == 2


def test_profile_shapes_refuses_what_profiles_one_shape_only(tmp_path: Path) -> None:
    p = tmp_path / "add.ir"
    p.write_text(ADD)
    r = CliRunner().invoke(main, ["profile", str(p), "--passes", "tile", "--shapes", "M=1,N=16", "--trace",
                                  str(tmp_path / "t.json")])
    assert r.exit_code == 2 and "--shapes does not go with --trace" in r.stderr, r.output
    bad = CliRunner().invoke(main, ["profile", str(p), "--passes", "tile", "--shapes", "M=1,N=40"])
    assert bad.exit_code == 2 and "size `N` = 40 is not a multiple of 16" in bad.stderr, bad.output


@pytest.mark.slow
def test_profile_shapes_emits_the_one_transformed_kernel_at_each_shape(tmp_path: Path) -> None:
    """One small shape (one build): the line names the shape, its cycles and no hazards."""
    p = tmp_path / "add.ir"
    p.write_text(ADD)
    r = CliRunner().invoke(main, ["profile", str(p), "--passes", "tile,double_buffer", "--shapes", "M=5,N=48", "--json"])
    assert r.exit_code == 0, r.output
    import json

    (row,) = json.loads(r.stdout)
    assert row["shape"] == "M=5,N=48" and row["cycles"] > 0 and not row["hazards"]
