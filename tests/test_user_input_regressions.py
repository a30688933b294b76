"""Regressions of issue 9 in the parser, checker and passes: input a user may write is a
located error (exit 2) or accepted and meant, never an internal error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from passes.base import parse_pipeline, run_pipeline
from transformer.cli import main
from transformer.diagnostics import AscxError
from transformer.parser import parse

from small_kernels import DECODE_GQA

ADD = """kernel k(x: f32[N]) -> (y: f32[N]) {
  size N = 4
  ew: for i in 0..N {
    y[i] = x[i]
  }
  z: for j in 0..0 {
    y[j] = x[j]
  }
}
"""


def test_multicore_on_a_loop_that_never_runs_is_refused() -> None:
    """Was an internal `AssertionError ... @cores(n=0)`."""
    k = parse(ADD)
    with pytest.raises(AscxError) as e:
        run_pipeline(k, parse_pipeline("multicore{z}"), None)
    assert "never runs" in str(e.value) and e.value.loc is not None and e.value.loc.line == 6


def test_cores_beyond_the_launch_limit_is_a_located_error() -> None:
    """`@cores(100000)` parsed, then the emulator refused blockDim 100000."""
    with pytest.raises(AscxError) as e:
        parse(ADD.replace("  ew: for", "  @cores(100000)\n  ew: for"))
    assert "65535" in str(e.value) and (e.value.loc.line, e.value.loc.col) == (3, 4)
    parse(ADD.replace("  ew: for", "  @cores(65535)\n  ew: for"))


def test_a_kernel_without_outputs_is_rejected() -> None:
    with pytest.raises(AscxError) as e:
        parse("kernel k(x: f32[4]) -> () {\n  for i in 0..4 {\n    x[i] = 1.0\n  }\n}\n".replace("x[i] = 1.0", ""))
    assert "no outputs" in str(e.value) and e.value.loc is not None and e.value.loc.line == 1


def _nested(depth: int) -> str:
    e = "x[i]"
    for _ in range(depth):
        e = f"-({e})"
    return f"kernel k(x: f32[4]) -> (y: f32[4]) {{\n  for i in 0..4 {{\n    y[i] = {e}\n  }}\n}}\n"


def test_an_expression_exactly_100_operators_deep_is_accepted() -> None:
    """docs/ir.md: "at most 100 operators deep"; 100 was rejected (the access counted)."""
    parse(_nested(100))
    with pytest.raises(AscxError, match="more than 100"):
        parse(_nested(101))


def test_deeply_nested_accesses_are_still_bounded() -> None:
    e = "i"
    for _ in range(150):
        e = f"x[{e}]"
    with pytest.raises(AscxError, match="more than 100"):
        parse(f"kernel k(x: i32[4]) -> (y: i32[4]) {{\n  for i in 0..4 {{\n    y[i] = {e}\n  }}\n}}\n")


def test_a_utf8_byte_order_mark_is_accepted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "bom.ir"
    f.write_bytes(b"\xef\xbb\xbf" + ADD.encode())
    r = CliRunner().invoke(main, ["check", str(f)])
    assert r.exit_code == 0, r.output


# ---- issue 9, item 7: a pass with nothing to do is a no-op with a note (--strict: an error)

def _note_run(args: list[str]):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, args)


def test_double_buffer_after_a_single_tile_is_a_noted_no_op(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`tile,double_buffer` where tiling left one tile said "run `tile` first" (with `tile`
    in the pipeline) and stopped."""
    args = ["transform", "examples/add.ir", "--size", "M=2", "--size", "N=16", "--passes",
            "tile{ew.i=2,ew.j=16},double_buffer"]  # one tile covers everything
    r = _note_run(args)
    assert r.exit_code == 0, r.output
    assert "note: double_buffer did nothing" in r.output and "run once" in r.output
    assert "run `tile` first" not in r.output
    r = _note_run(args + ["--strict"])
    assert r.exit_code == 2 and "error: double_buffer: looked for a loop" in r.output


def test_online_softmax_after_tile_says_to_run_it_before_tile() -> None:
    """`online_softmax` after `tile` said "no row max in the kernel" although there is one."""
    args = ["transform", "examples/attention.ir", "--passes", "tile,online_softmax", "--explain"]
    r = _note_run(args)
    assert r.exit_code == 0, r.output
    assert "run `online_softmax` before `tile`" in r.output and "no row max" not in r.output
    r = _note_run(args + ["--strict"])
    assert r.exit_code == 2 and "already tiled" in r.output


def test_a_pass_that_changes_nothing_is_noted_and_strict_refuses_it() -> None:
    k = parse(ADD)
    out, trace = run_pipeline(k, parse_pipeline("fuse"), None)
    assert out == k and trace[0].noop and "no change: " in trace[0].render()
    with pytest.raises(AscxError, match="nothing to do"):
        run_pipeline(k, parse_pipeline("fuse"), None, strict=True)


# ---- issue 9, item 8: `multicore` accepts buffers staged by `tile` (per-core private)

def _add(sizes: dict[str, int]):  # type: ignore[no-untyped-def]
    from transformer.parser import parse_file

    return parse_file("examples/add.ir").with_sizes(sizes)


def test_multicore_after_tile_treats_staged_buffers_as_private() -> None:
    """`tile,multicore{ew}` on add.ir was refused over an output dependence on `C_ub`
    (written by the compute nest, read by the copy-out region: the privatisation test
    did not know regions); docs/passes.md says staged buffers are per-core private."""
    import numpy as np

    from transformer.interp import compare_outputs, random_inputs, run

    k = _add({"M": 64, "N": 512})
    out, _ = run_pipeline(k, parse_pipeline("tile,multicore{ew}"), None)
    assert out.body[0].annotation("cores") is not None
    inputs = random_inputs(k, np.random.default_rng(0))
    assert all(d.ok for d in compare_outputs(k, run(k, inputs), run(out, inputs)))


@pytest.mark.slow
def test_multicore_after_tile_runs_on_the_emulator() -> None:
    from transformer.codegen import verify_emitted

    k = _add({"M": 64, "N": 512})
    out, _ = run_pipeline(k, parse_pipeline("tile,multicore{ew}"), None)
    assert all(d.ok for d in verify_emitted(out, None, trials=1, seed=3, reference=k))


# ---- issue 9, item 10: the queue-count constraint follows the lowering's per-phase lifetimes

def _independent_nests(n: int, same_extent: bool) -> str:
    ins = ", ".join(f"x{k}: f32[N{0 if same_extent else k}]" for k in range(n))
    outs = ", ".join(f"y{k}: f32[N{0 if same_extent else k}]" for k in range(n))
    sizes = "\n".join(f"  size N{k} = {1024 * (k + 1)}" for k in range(1 if same_extent else n))
    body = "\n".join(f"  e{k}: for i in 0..N{0 if same_extent else k} {{\n    y{k}[i] = x{k}[i] * 2.0\n  }}"
                     for k in range(n))
    return f"kernel eight({ins}) -> ({outs}) {{\n{sizes}\n{body}\n}}\n"


def _fits_and_queue_warnings(text: str, pipeline: str) -> tuple[bool, list[str]]:
    from transformer.capacity.from_kernel import check_kernel_capacity
    from transformer.codegen import emit_ascendc

    out, _ = run_pipeline(parse(text), parse_pipeline(pipeline), None)
    fits = check_kernel_capacity(out, None, use_cache=False).status == "sat"
    return fits, [w for w in emit_ascendc(out).warnings if "queue buffers" in w]


@pytest.mark.parametrize("same_extent", [False, True])
def test_independent_nests_each_within_the_queue_limit_fit(same_extent: bool) -> None:
    """8 independent nests under `[fuse,]tile,double_buffer` hold 16 VECIN queue buffers in
    all but 2 per phase; the constraint counted the whole kernel ("16 > 8") although the
    lowering plans each phase's queues on its own (`pipe.Reset()`). Proof and code agree
    now: it fits, and the lowering demotes no queue. `fuse` keeps nests that share no
    tensor apart (merged, their buffers would share one phase)."""
    text = _independent_nests(8, same_extent)
    for pipeline in ("tile,double_buffer", "fuse,tile,double_buffer"):
        fits, warned = _fits_and_queue_warnings(text, pipeline)
        assert fits and not warned, (pipeline, warned)


def test_one_phase_over_the_queue_limit_is_demoted_and_fits() -> None:
    """The other way: 9 inputs staged in one nest would be 9 VECIN queues in one phase: the
    lowering demotes the ninth to a TBuf (warned), and the constraint counts what the
    lowering allocates, 8 queues and a TBuf, so it fits (it said "9 > 8" before, and `tile`
    never chose such layouts)."""
    ins = ", ".join(f"x{k}: f32[N]" for k in range(9))
    text = (f"kernel nine({ins}) -> (y: f32[N]) {{\n  size N = 4096\n  e: for i in 0..N {{\n    y[i] = "
            + " + ".join(f"x{k}[i]" for k in range(9)) + "\n  }\n}\n")
    fits, warned = _fits_and_queue_warnings(text, "tile{e=256}")
    assert fits and len(warned) == 1, warned


# ---- issue 29: what a new user trips on (items 2-5, 10; item 1 in tests/passes)

BMM = """kernel bmm(A: f16[B, M, K], W: f16[B, K, N]) -> (C: f32[B, M, N]) {
  size B = 2
  size M = 64
  size K = 32
  size N = 64
  mm: for b in 0..B {
    for i in 0..M {
      for j in 0..N {
        C[b, i, j] = 0.0
        for k in 0..K { C[b, i, j] += f32(A[b, i, k]) * f32(W[b, k, j]) }
      }
    }
  }
}
"""


def _write(tmp_path, name: str, text: str) -> str:  # type: ignore[no-untyped-def]
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def test_online_softmax_on_two_deep_row_loops_streams_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Item 3: after `fuse` on GQA decode attention (rows `g` x `r`) the note said the row max
    was "nested deeper, inside tiled loops; run `online_softmax` before `tile`": nothing was tiled.
    Then it said the rows were nested in one another; now (issue 28) the pair of row loops is the
    row index and the keys stream in blocks."""
    f = _write(tmp_path, "decode.ir", DECODE_GQA)
    r = _note_run(["transform", f, "--passes", "fuse,online_softmax"])
    assert r.exit_code == 0, r.output
    assert "did nothing" not in r.output
    assert "attn: for g in 0..G {" in r.output and "kv: for tb in 0..64 {" in r.output


def test_tile_of_a_batch_loop_is_not_a_fractal_dim(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Item 4: `tile{mm=1}` on a batched matmul failed with "A_l0a ... dim 0 = 1 is not a
    multiple of 16": the batch axis of a cube operand is not one of its matrix dims."""
    from transformer import api

    f = _write(tmp_path, "bmm.ir", BMM)
    r = _note_run(["transform", f, "--passes", "tile{mm=1}"])
    assert r.exit_code == 0, r.output
    k = parse(BMM)
    out, _ = run_pipeline(k, parse_pipeline("tile{mm=1}"), None)
    assert any(d.scope == "l0a" and len(d.shape) == 3 for d in out.buffers)
    assert api.check(out).status == "sat"
    assert api.verify(k, out, trials=1).ok


def test_a_cube_capacity_error_on_a_staged_local_is_located(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Item 4: the capacity error about a local `tile` made had no FILE:LINE:COL (the local
    has no declaration in the source): it points at the nest now."""
    f = _write(tmp_path, "bmm.ir", BMM)
    r = _note_run(["transform", f, "--passes", "tile{mm.i=8}"])
    assert r.exit_code == 1, r.output
    assert f"{f}:6:3: error: kernel `bmm` does not fit" in r.output and "dim 0 = 8 is not a multiple of 16" in r.output
    assert "dim 0 = 1" not in r.output


GQA_LABELLED = """kernel gqa(Q: f16[G, R, D], K: f16[G, L, D], V: f16[G, L, D]) -> (O: f16[G, R, D]) {
  size G = 1
  size R = 2
  size L = 1024
  size D = 128
  const scale: f32 = 0.088
  temp s: f32[L]
  temp mx: f32
  temp sm: f32
  temp acc: f32[D]
  attn: for g in 0..G {
    for r in 0..R {
      mx = -inf
      kj: for t in 0..L {
        s[t] = 0.0
        for d in 0..D { s[t] += f32(Q[g, r, d]) * f32(K[g, t, d]) }
        s[t] = s[t] * scale
        mx max= s[t]
      }
      sm = 0.0
      ej: for t in 0..L {
        s[t] = exp(s[t] - mx)
        sm += s[t]
      }
      for d in 0..D {
        acc[d] = 0.0
        vj: for t in 0..L { acc[d] += s[t] * f32(V[g, t, d]) }
        O[g, r, d] = f16(acc[d] / sm)
      }
    }
  }
}
"""


def test_tile_passes_whose_order_matters_say_which_loop_to_tile_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Item 5: `tile{attn=1,kj=128},tile{vj=128}` failed on capacity (the first pass stages
    all of V: `vj` is not tiled yet) while the other order works, and the message did not
    say so. Each pass stages the whole nest, so the order matters; the hint says which
    loop to tile first, and that pipeline works."""
    f = _write(tmp_path, "gqa.ir", GQA_LABELLED)
    r = _note_run(["transform", f, "--passes", "tile{attn=1,kj=128},tile{vj=128}"])
    assert r.exit_code == 2 and "error: tile: the tiles of `attn` need" in r.output, r.output
    assert "the order of `tile` passes matters" in r.output and "loop `vj` is not tiled yet" in r.output
    fix = r.output.split("tile it first: `")[1].split("`")[0]
    assert fix == "tile{vj=128},tile{attn=1,kj=128}"
    r = _note_run(["verify", f, "--passes", fix])
    assert r.exit_code == 0 and r.output.rstrip().endswith("ok"), r.output

# ---- issue 29, item 6: messages in the user's terms, with real hints ------------------------

def _cli(tmp_path, text: str, *args: str):  # type: ignore[no-untyped-def]
    f = tmp_path / "k.ir"
    f.write_text(text)
    return CliRunner().invoke(main, [*args, str(f)] if args else ["parse", str(f)])


def test_loop_variable_as_a_value_vectorises_instead_of_naming_a_class(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Was scalar code with "no vector instruction for `Name`" (a select comparing f32 of a
    label with f32(c)): the loop variable is an index vector now (`CreateVecIndex`)."""
    text = ("kernel k(x: f32[R, C], lab: i32[R]) -> (y: f32[R, C]) {\n  size R = 8\n  size C = 64\n"
            "  for r in 0..R {\n    for c in 0..C {\n"
            "      y[r, c] = select(f32(c) == f32(lab[r]), x[r, c] - 1.0, x[r, c])\n    }\n  }\n}\n")
    from transformer.lower import lower_kernel

    k = run_pipeline(parse(text, "k.ir"), parse_pipeline("tile"), None)[0]
    plan = lower_kernel(k)
    assert not [n.fallback for n in plan.nests if n.fallback]
    assert any("CreateVecIndex" in n.instructions for n in plan.nests)


def test_no_fallback_reason_names_an_internal_class() -> None:
    from transformer.lower.vector import _no_instruction

    e = parse("kernel k(x: f32[4]) -> (y: f32[4]) {\n  for i in 0..4 {\n    y[i] = x[i] * 2.0\n  }\n}\n").body[0].body[0].value
    assert _no_instruction(e) == "no vector instruction for `x[i] * 2.0`"


def test_unknown_function_lists_the_intrinsics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = _cli(tmp_path, "kernel k(x: f32[4]) -> (y: f32[4]) {\n  for i in 0..4 {\n    y[i] = gelu(x[i])\n  }\n}\n")
    assert r.exit_code == 2 and "k.ir:3:12: error: unknown function `gelu`" in r.output
    assert "intrinsics: exp(x)" in r.output and "erf(x)" in r.output and "casts: " in r.output


def test_division_in_a_shape_is_legal_and_a_bad_divisor_has_a_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`D / 2` in a shape was "must be affine in sizes and integers" with no hint: it is a
    quasi-affine shape now (issue 28 item 4); a division that cannot be has a real hint."""
    r = _cli(tmp_path, "kernel k(x: f32[D]) -> (y: f32[D / 2]) {\n  size D = 64\n  for i in 0..D / 2 {\n"
                       "    y[i] = x[2 * i] + x[2 * i + 1]\n  }\n}\n", "run")
    assert r.exit_code == 0 and "y: float32[32]" in r.output, r.output
    r = _cli(tmp_path, "kernel k(x: f32[8]) -> (y: f32[8]) {\n  for i in 1..8 {\n    y[i] = x[8 / i]\n  }\n}\n")
    assert r.exit_code == 2 and "k.ir:3:18: error: the divisor of `/` depends on a loop variable" in r.output
    assert "hint: divide by an integer literal or a size" in r.output


def test_modulo_has_a_hint_not_a_token_list(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`%` listed grammar tokens; it is index arithmetic now, and on data a located error
    with a real hint."""
    r = _cli(tmp_path, "kernel k(x: f32[4]) -> (y: f32[4]) {\n  for i in 0..4 {\n    y[i] = x[i % 2]\n  }\n}\n")
    assert r.exit_code == 0, r.output
    r = _cli(tmp_path, "kernel k(x: f32[4]) -> (y: f32[4]) {\n  for i in 0..4 {\n    y[i] = x[i] % 2.0\n  }\n}\n")
    assert r.exit_code == 2 and "k.ir:3:17: error: `%` takes loop variables, sizes and integer literals" in r.output
    assert "expected one of" not in r.output and "floor(x / c)" in r.output
