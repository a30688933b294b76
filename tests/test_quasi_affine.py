"""Quasi-affine index arithmetic (issue 28 item 4): floor division `e / c` and the remainder
`e % c` by a positive constant (an integer literal, a size, or an expression of them) in
indices, loop bounds and shapes.

* the checker accepts them and refuses a divisor that is a loop variable, zero or negative,
  and `%` on data, each with a located error and a hint;
* constants fold (`D / 2` is a shape of 32), as do divisions whose every coefficient the
  divisor divides (`(2 * k + 1) / 2` is `k`);
* the interpreter takes floor semantics (a negative numerator rounds down);
* dependence analysis is exact (Z3: floor division and modulo by constants are Presburger);
* RoPE written with them (interleaved and half-split) matches an independent numpy
  reference, and the passes keep it correct (differential, fresh random inputs); the emitted
  code is checked on the emulator in one slow test.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from passes.base import parse_pipeline, run_pipeline
from transformer import ir
from transformer.affine import eval_int, to_affine
from transformer.cli import main
from transformer.deps import analyze, is_parallel
from transformer.interp import random_inputs, run
from transformer.parser import parse

ROPE_INTERLEAVED = """# RoPE, interleaved: the pair (x[2k], x[2k+1]) rotated by angle k
kernel rope_interleaved(X: f32[S, D], C: f32[S, D / 2], Sn: f32[S, D / 2]) -> (Y: f32[S, D]) {
  size S = 16
  size D = 64
  rope: for s in 0..S {
    for d in 0..D {
      Y[s, d] = X[s, d] * C[s, d / 2] + f32(2 * (d % 2) - 1) * X[s, d + 1 - 2 * (d % 2)] * Sn[s, d / 2]
    }
  }
}
"""
ROPE_HALF = """# RoPE, half-split: x[d] pairs with x[d + D / 2]
kernel rope_half(X: f32[S, D], C: f32[S, D / 2], Sn: f32[S, D / 2]) -> (Y: f32[S, D]) {
  size S = 16
  size D = 64
  rope: for s in 0..S {
    for d in 0..D {
      Y[s, d] = X[s, d] * C[s, d % (D / 2)] + f32(2 * (d / (D / 2)) - 1) * X[s, (d + D / 2) % D] * Sn[s, d % (D / 2)]
    }
  }
}
"""


def _rope_reference(X: np.ndarray, C: np.ndarray, Sn: np.ndarray, interleaved: bool) -> np.ndarray:
    """RoPE written directly in numpy (pairs rotated by (cos, sin)), in f32."""
    X, C, Sn = (np.asarray(a, np.float32) for a in (X, C, Sn))
    if interleaved:
        a, b = X[:, 0::2], X[:, 1::2]
        Y = np.empty_like(X)
        Y[:, 0::2] = a * C - b * Sn
        Y[:, 1::2] = b * C + a * Sn
        return Y
    h = X.shape[1] // 2
    a, b = X[:, :h], X[:, h:]
    return np.concatenate([a * C - b * Sn, b * C + a * Sn], axis=1)


@pytest.mark.parametrize("text,interleaved", [(ROPE_INTERLEAVED, True), (ROPE_HALF, False)], ids=["interleaved", "half"])
def test_rope_matches_an_independent_reference(text: str, interleaved: bool) -> None:
    k = parse(text, "rope.ir")
    assert [eval_int(d, k.size_values()) for d in k.inputs[1].shape] == [16, 32]
    ins = random_inputs(k, np.random.default_rng(7))
    got = run(k, ins)["Y"]
    want = _rope_reference(ins["X"], ins["C"], ins["Sn"], interleaved)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("text", [ROPE_INTERLEAVED, ROPE_HALF], ids=["interleaved", "half"])
@pytest.mark.parametrize("pipeline", ["tile", "tile{rope.s=4,rope.d=16},double_buffer",
                                      "interchange{rope.s,rope.d}", "multicore{rope=4}"])
def test_passes_keep_rope_correct(text: str, pipeline: str) -> None:
    k = parse(text, "rope.ir")
    t = run_pipeline(k, parse_pipeline(pipeline), None)[0]
    for seed in (1, 2):
        ins = random_inputs(k, np.random.default_rng(seed))
        np.testing.assert_allclose(run(t, ins)["Y"], run(k, ins)["Y"], rtol=1e-6, atol=1e-6)


def test_constants_fold_and_divisible_coefficients_simplify() -> None:
    sizes = {"D": 64, "CG": 4}
    k, c = ir.Name("k"), ir.Name("c")
    two = ir.IntLit(2)
    assert to_affine(ir.Binary("/", ir.Name("D"), two), sizes).const == 32
    odd = ir.Binary("+", ir.Binary("*", two, k), ir.IntLit(1))
    assert to_affine(ir.Binary("/", odd, two), sizes) == to_affine(k, sizes)
    assert to_affine(ir.Binary("%", odd, two), sizes).const == 1
    assert to_affine(ir.Binary("/", c, ir.Name("CG")), sizes) is None  # quasi-affine stays symbolic
    # floor semantics: a negative numerator rounds down, the remainder is in 0..c-1
    assert eval_int(ir.Binary("/", ir.Unary("-", ir.IntLit(3)), two), {}) == -2
    assert eval_int(ir.Binary("%", ir.Unary("-", ir.IntLit(3)), two), {}) == 1


def test_interpreter_uses_floor_division_in_indices() -> None:
    k = parse("""kernel k(X: f32[8]) -> (Y: f32[8]) {
  for i in 0..8 {
    Y[i] = X[(i - 3) / 2 + 2] + f32(i % 3)
  }
}""", "k.ir")
    x = np.arange(8, dtype=np.float32) * 10
    want = np.array([x[(i - 3) // 2 + 2] + i % 3 for i in range(8)], np.float32)
    np.testing.assert_array_equal(run(k, {"X": x})["Y"], want)


def _deps(text: str):  # type: ignore[no-untyped-def]
    return analyze(parse(text, "k.ir")).deps


def test_dependence_analysis_is_exact_for_division_and_modulo() -> None:
    # T[2 * (i / 2) + i % 2] is T[i]: nothing is carried (an approximation would say `*`)
    ident = """kernel k(A: f32[8]) -> (T: f32[8]) {
  L: for i in 0..8 {
    T[2 * (i / 2) + i % 2] = A[i]
    T[i] = T[i] * 2.0
  }
}"""
    assert all(d.level is None for d in _deps(ident))
    assert is_parallel(parse(ident, "k.ir"), (0,))
    # T[i / 2] is written by i = 2m and 2m + 1: an output dependence carried by i, distance 1
    halves = """kernel k(A: f32[8]) -> (T: f32[4]) {
  L: for i in 0..8 {
    T[i / 2] = A[i]
  }
}"""
    carried = [d for d in _deps(halves) if d.level == 0]
    assert carried and all(d.kind == "output" and d.direction == ("<",) for d in carried)
    assert not is_parallel(parse(halves, "k.ir"), (0,))
    # even and odd elements never meet
    parity = """kernel k(A: f32[8]) -> (T: f32[8]) {
  L: for i in 0..4 {
    T[2 * i] = A[i]
    T[2 * (i % 4) + 1] = T[2 * i] + 1.0
  }
}"""
    assert all(d.level is None for d in _deps(parity))


def _cli(tmp_path, text: str):  # type: ignore[no-untyped-def]
    f = tmp_path / "k.ir"
    f.write_text(text)
    return CliRunner().invoke(main, ["parse", str(f)])


@pytest.mark.parametrize("index,message,col", [
    ("x[i % j]", "the divisor of `%` depends on a loop variable", 20),
    ("x[i / (N - 4)]", "the divisor of `/` is 0; it must be positive", 21),
    ("x[i] + f32(i % 0)", "the divisor of `%` is 0", 29),
])
def test_bad_divisors_are_located_errors(tmp_path, index: str, message: str, col: int) -> None:  # type: ignore[no-untyped-def]
    r = _cli(tmp_path, "kernel k(x: f32[N]) -> (y: f32[N]) {\n  size N = 4\n  for i in 0..N {\n    for j in 1..N {\n"
                       f"      y[i] = {index}\n    }}\n  }}\n}}\n")
    assert r.exit_code == 2, r.output
    assert f"k.ir:5:{col}: error: {message}" in r.output and "hint: " in r.output


def test_modulo_of_data_is_refused_with_a_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = _cli(tmp_path, "kernel k(x: f32[4]) -> (y: f32[4]) {\n  for i in 0..4 {\n    y[i] = x[i] % 2.0\n  }\n}\n")
    assert r.exit_code == 2 and "k.ir:3:17: error: `%` takes loop variables, sizes and integer literals" in r.output
    assert "floor(x / c)" in r.output


def test_division_in_shapes_and_bounds_parses_and_prints_back() -> None:
    from transformer.printer import print_kernel

    k = parse(ROPE_HALF, "rope.ir")
    assert parse(print_kernel(k), "again.ir") == k
    assert "d % (D / 2)" in print_kernel(k)


def test_quasi_affine_reads_fall_back_to_scalar_code_with_the_reason() -> None:
    from transformer.lower import lower_kernel

    t = run_pipeline(parse(ROPE_INTERLEAVED, "rope.ir"), parse_pipeline("tile"), None)[0]
    whys = [n.fallback for n in lower_kernel(t).nests if n.fallback]
    assert whys and all("quasi-affine" in w for w in whys), whys


@pytest.mark.slow
def test_emitted_rope_matches_the_interpreter() -> None:
    """Both RoPE forms as emitted code on the emulator (floor division and modulo in the
    scalar index code), one build for both."""
    from transformer.codegen import verify_emitted

    body_h = ROPE_HALF.split("    for d in 0..D {\n")[1].split("\n")[0].replace("Y[s, d]", "Z[s, d]")
    text = ROPE_INTERLEAVED.replace("-> (Y: f32[S, D])", "-> (Y: f32[S, D], Z: f32[S, D])").replace(
        "Sn[s, d / 2]\n", "Sn[s, d / 2]\n" + body_h + "\n")  # both forms in one kernel: one build
    k = parse(text, "rope.ir").with_sizes({"S": 4, "D": 32})
    t = run_pipeline(k, parse_pipeline("tile,double_buffer"), None)[0]
    diffs = verify_emitted(t, None, trials=1, seed=3, reference=k)
    assert len(diffs) == 2 and all(d.ok for d in diffs), [d.describe() for d in diffs]


ROPE_DERIVED = """kernel rope_half(X: f32[S, D], C: f32[S, Dh], Sn: f32[S, Dh]) -> (Y: f32[S, D]) {
  size S = 16
  size D = 64
  size Dh = D / 2
  rope: for s in 0..S {
    for d in 0..Dh {
      Y[s, d] = X[s, d] * C[s, d] - X[s, d + Dh] * Sn[s, d]
      Y[s, d + Dh] = X[s, d + Dh] * C[s, d] + X[s, d] * Sn[s, d]
    }
  }
}
"""


def test_a_derived_size_follows_the_sizes_it_is_computed_from(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from transformer.printer import print_kernel

    k = parse(ROPE_DERIVED, "rope.ir")
    assert k.size_values()["Dh"] == 32 and "size Dh = D / 2" in print_kernel(k)
    assert parse(print_kernel(k), "again.ir") == k
    assert k.with_sizes({"D": 20}).size_values()["Dh"] == 10
    ins = random_inputs(k, np.random.default_rng(3))
    np.testing.assert_allclose(run(k, ins)["Y"], _rope_reference(ins["X"], ins["C"], ins["Sn"], False), rtol=1e-6, atol=1e-6)
    f = tmp_path / "rope.ir"
    f.write_text(ROPE_DERIVED)
    r = CliRunner().invoke(main, ["run", str(f), "--size", "D=32"])
    assert r.exit_code == 0 and "Y: float32[16, 32]" in r.output, r.output
    r = CliRunner().invoke(main, ["run", str(f), "--size", "Dh=8"])
    assert r.exit_code == 2 and "`Dh` is derived (`size Dh = D / 2`)" in r.output
    t = run_pipeline(k.with_sizes({"D": 32}), parse_pipeline("tile"), None)[0]
    ins = random_inputs(t, np.random.default_rng(4))
    np.testing.assert_allclose(run(t, ins)["Y"], run(k.with_sizes({"D": 32}), ins)["Y"], rtol=1e-6)


@pytest.mark.parametrize("decl,message,at", [
    ("  size H = N / 2\n  size N = 8\n", "size `H` uses `N`, which is not a size declared before it", "2:12"),
    ("  size N = 8\n  size H = N / 0\n", "the divisor of `/` is 0; it must be positive", "3:16"),
    ("  size N = 8\n  size H = N - 8\n", "size `H` must be positive, got 0", "3:8"),
    ("  size N = 8\n  size H = N / 2 in 1..8\n", "size `H` is derived (`N / 2`) and cannot have a range", "3:21"),
])
def test_bad_derived_sizes_are_located_errors(tmp_path, decl: str, message: str, at: str) -> None:  # type: ignore[no-untyped-def]
    r = _cli(tmp_path, "kernel k(x: f32[N]) -> (y: f32[N]) {\n" + decl + "  for i in 0..N {\n    y[i] = x[i]\n  }\n}\n")
    assert r.exit_code == 2 and f"k.ir:{at}: error: {message}" in r.output, r.output
