"""The small vector gaps of issue 14 item 2 (transformer/lower/vec_types.py):

- reductions into f16 / bf16 accumulators: the operand widened (`Cast`), one f32
  `ReduceSum` / `ReduceMax`, the combine with the old value rounded once to the target's
  dtype (the exact sum rounded once, not the interpreter's rounding after every step);
- integer vector arithmetic in i32 (`Add Sub Mul Max Min`, `Adds Muls Maxs Mins`), exact and
  wrapping like the IR; i8 arithmetic, integer division and integer reductions stay scalar
  with their reason;
- `select` of two literals (`select(x > 0.0, 1.0, 0.0)`) and nested selects (a combined
  condition: `select(c1, select(c2, x, y), y)` is `c1 and c2`).

Plan tests read the typed instructions without compiling; the slow tests run the emitted
code (odd sizes, tile tails) under sanitizers with hazard detection on.
"""

from __future__ import annotations

import numpy as np
import pytest

from transformer.codegen import build_and_run, emit_ascendc
from transformer.interp import convert, random_inputs, run
from transformer.lower import lower_kernel

from .conftest import apply, check_emitted, fresh_seed, kernel_text
from .test_vector_select_data import _nest_ops as _ops

RED = """
kernel red(X: f16[R, C], B: bf16[R, C], P: f16[R, C]) -> (Y: f16[R], Z: bf16[R], W: f16[R], V: bf16[R], Q: f16[R]) {
  size R = 5
  size C = 300
  temp s: f16[R]
  temp m: f16[R]
  temp b: bf16[R]
  temp bm: bf16[R]
  temp q: f16[R]
  rs: for r in 0..R {
    s[r] = 0.5
    m[r] = -inf
    b[r] = 1.0
    bm[r] = inf
    q[r] = 0.0
    for c in 0..C {
      s[r] += X[r, c]
      m[r] max= X[r, c]
      b[r] += B[r, c]
      bm[r] min= B[r, c] * 2.0
      q[r] += X[r, c] * P[r, c]
    }
    Y[r] = s[r]
    W[r] = m[r]
    Z[r] = b[r]
    V[r] = bm[r]
    Q[r] = q[r]
  }
}
"""
RED_PIPE = "tile{rs.r=1},double_buffer"  # whole rows of 300 (a ragged 32 B count)
RED_TAIL = "tile{rs.r=1,rs.c=128},double_buffer"  # column tiles of 128 and a tail of 44


def _ew(signature: str, *lines: str, rows: int = 5, cols: int = 200, decls: str = "") -> str:
    """The text of an elementwise kernel `signature` with sizes R = rows and C = cols, the
    declarations `decls`, and the nest `ew: for r in 0..R { for c in 0..C { lines } }`."""
    body = "".join(f"      {line}\n" for line in lines)
    return (f"\nkernel {signature} {{\n  size R = {rows}\n  size C = {cols}\n{decls}"
            f"  ew: for r in 0..R {{\n    for c in 0..C {{\n{body}    }}\n  }}\n}}\n")


INTS = _ew(
    "ints(A: i32[R, C], B: i32[R, C], X: f32[R, C]) -> (Y: i32[R, C], Z: i32[R, C], U: i32[R, C])",
    "Y[r, c] = A[r, c] + B[r, c] * 3 - k",
    "Z[r, c] = max(A[r, c] - B[r, c], 7) * min(B[r, c], A[r, c])",
    "U[r, c] = -A[r, c]",
    "U[r, c] += 5 - B[r, c]",
    decls="  const k: i32 = -2147483648\n",
)
INT_PIPE = "tile{ew.r=2,ew.c=72},double_buffer"

ICAST = _ew(
    "icast(A: i32[R, C], X: f32[R, C], H: f16[R, C], G: bf16[R, C]) -> (Y: f32[R, C], Z: i32[R, C], W: f16[R, C], V: i32[R, C])",
    "Y[r, c] = f32(A[r, c]) * 0.5 + X[r, c]",
    "Z[r, c] = i32(X[r, c]) + i32(G[r, c])",
    "W[r, c] = f16(A[r, c] * 7) + H[r, c]",
    "V[r, c] = i32(H[r, c] * f16(100.0)) - A[r, c]",
    rows=3,
    cols=100,
)

SEL = _ew(
    "sel(X: f32[R, C], G: f16[R, C]) -> (Y: f32[R, C], Z: f16[R, C], V: f32[R, C], H: f16[R, C])",
    "Y[r, c] = select(X[r, c] > 0.0, 1.0, 0.0)",
    "H[r, c] = select(G[r, c] <= 0.25, 0.1, -3.0)",
    "Z[r, c] = select(G[r, c] > 0.0, select(G[r, c] < 0.5, G[r, c], f16(1.0)), select(G[r, c] < -0.5, f16(2.0), f16(0.0)))",
    "V[r, c] = select(X[r, c] > -0.5, select(X[r, c] < 0.5, X[r, c] * 2.0, 0.0), 0.0) + 1.0",
)
SEL_PIPE = "tile{ew.r=2,ew.c=72},double_buffer"


def _fallbacks(plan) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(n.where, n.fallback) for n in plan.nests if n.fallback]


def test_narrow_accumulators_reduce_in_f32_and_round_once() -> None:
    plan = lower_kernel(apply(kernel_text(RED), RED_PIPE))
    assert not _fallbacks(plan), _fallbacks(plan)
    ops = _ops(plan, "c")
    reds = [(o.op, o.dst.dtype, o.srcs[0].dtype) for o in ops if o.op.startswith("Reduce")]
    # s += X (f16): summed in f32; m max= X: in f16 (exact); b += B (bf16) and bm min= (bf16):
    # in f32 (no bf16 instruction); q += X * P: the f16 product, widened, summed in f32
    assert reds == [("ReduceSum", "f32", "f32"), ("ReduceMax", "f16", "f16"), ("ReduceSum", "f32", "f32"),
                    ("ReduceMin", "f32", "f32"), ("ReduceSum", "f32", "f32")], reds
    # the f16 product is rounded to f16 (a Mul in f16) before it is widened, as the IR computes it
    assert any(o.op == "Mul" and o.dst.dtype == "f16" for o in ops)
    (choice,) = [n for n in plan.nests if n.nest == "c"]
    # one rounding: the combine of the f32 sum with the old value converts once to f16
    steps = [p.item.code for p in choice.plan if type(p.item).__name__ == "ScalarStep"]
    assert len(steps) == 5
    assert steps[0].startswith("s = ascx_cvt<half>((ascx_cvt<float>(s) + ") and steps[0].count("ascx_cvt<half>") == 1, steps[0]


def test_integer_arithmetic_is_vector_code() -> None:
    plan = lower_kernel(apply(kernel_text(INTS), INT_PIPE))
    assert not _fallbacks(plan), _fallbacks(plan)
    ops = _ops(plan, "c")
    assert {o.op for o in ops} >= {"Add", "Sub", "Mul", "Muls", "Adds", "Maxs", "Min"}
    assert all(o.dst.dtype == "i32" for o in ops)
    # `x - k` negates the scalar with wrap-around (k = INT_MIN), never `-(k)` in C++
    assert any(o.op == "Adds" and o.scalar is not None and o.scalar.startswith("ascx_ineg<int32_t>(") for o in ops)


@pytest.mark.parametrize("expr, reason", [
    ("a[r, c] * b[r, c]", "vector arithmetic in i8"),
    ("a[r, c] / b[r, c]", "integer division in i32"),
    ("abs(a[r, c])", "`abs` of i32"),
    ("bf16(a[r, c])", "no vector Cast i32 -> bf16"),
    ("f32(a[r, c] * b[r, c])", "vector arithmetic in i8"),
])
def test_integer_forms_without_instruction_say_why(expr: str, reason: str) -> None:
    dt = "i8" if "*" in expr else "i32"
    out = expr.split("(")[0] if expr.split("(")[0] in ("f32", "bf16") else dt
    text = f"""
kernel k(a: {dt}[R, C], b: {dt}[R, C]) -> (y: {out}[R, C]) {{
  size R = 3
  size C = 64
  ew: for r in 0..R {{
    for c in 0..C {{ y[r, c] = {expr} }}
  }}
}}
"""
    plan = lower_kernel(apply(kernel_text(text), "tile,double_buffer"))
    fb = _fallbacks(plan)
    assert fb and all(reason in why for _, why in fb), fb


@pytest.mark.parametrize("stmt, reason", [
    # (`s[r] += y[r, c]`, i32 into i32, is vector code now: tests/codegen/test_vector_int.py)
    ("s[r] += x[r, c]", "rounds to i32 after every step; a vector sum rounds once"),
    ("p[r] *= x[r, c]", "no vector product reduction"),
])
def test_reductions_without_instruction_say_why(stmt: str, reason: str) -> None:
    text = f"""
kernel k(x: f32[R, C], y: i32[R, C]) -> (o: i32[R], q: f32[R]) {{
  size R = 3
  size C = 64
  temp s: i32[R]
  temp p: f32[R]
  rs: for r in 0..R {{
    s[r] = 0
    p[r] = 1.0
    for c in 0..C {{ {stmt} }}
    o[r] = s[r]
    q[r] = p[r]
  }}
}}
"""
    plan = lower_kernel(apply(kernel_text(text), "tile,double_buffer"))
    fb = _fallbacks(plan)
    assert fb and reason in fb[0][1], fb


def test_select_of_literals_and_nested_selects_are_vector_code() -> None:
    plan = lower_kernel(apply(kernel_text(SEL), SEL_PIPE))
    assert not _fallbacks(plan), _fallbacks(plan)
    ops = _ops(plan, "c")
    sels = [o for o in ops if o.op == "Select"]
    # Y: one; H: one (literals chosen in f16, the stored type); Z: three; V: one (an And of
    # its two masks: `select(c1, select(c2, x, 0.0), 0.0)` is `c1 and c2`)
    assert len(sels) == 6, [o.describe() for o in sels]
    assert [o.op for o in ops if o.op in ("And", "Or")] == ["And"]
    assert {o.dst.dtype for o in sels} == {"f16", "f32"}
    # the two literals of H are Duplicated / scalar in f16 (converted as the store converts them)
    h_sel = [o for o in sels if o.dst.dtype == "f16"]
    assert h_sel and any(o.scalar is not None for o in h_sel)


@pytest.mark.slow
def test_narrow_reductions_run_and_round_once() -> None:
    """Emitted under sanitizers on random inputs (odd sizes, a column tail of 300 - 2 * 128):
    each f16/bf16 result is the exact sum rounded once to the target's dtype (the f32 sum
    of at most 300 terms is exact to well under half an f16/bf16 ulp, so up to one ulp);
    max/min are exact; and it stays within the interpreter's tolerance of its
    every-step-rounded sum for a short row (the accuracy the IR's meaning allows)."""
    k = kernel_text(RED)
    rng = np.random.default_rng(fresh_seed())
    X = rng.uniform(-1, 1, (5, 300)).astype(np.float16)
    P = rng.uniform(-1, 1, (5, 300)).astype(np.float16)
    B = convert(rng.uniform(-1, 1, (5, 300)), "bf16")
    tail = apply(k, RED_TAIL)
    (c,) = [n for n in lower_kernel(tail).nests if n.nest == "c"]
    assert not c.fallback and "ReduceSum" in c.instructions  # over the run-time tail count
    for pipe, chunk in ((RED_PIPE, 300), (RED_TAIL, 128)):
        _check_narrow(build_and_run(apply(k, pipe), None, {"X": X, "B": B, "P": P}, sanitize=True), X, B, P, chunk)
    # against the interpreter: on values k / 8 every partial sum of a 12-term row is exact in
    # f16 and bf16, so the every-step rounding and the one rounding agree bit for bit
    short = kernel_text(RED.replace("size C = 300", "size C = 12"))
    ins = {"X": (rng.integers(-8, 9, (5, 12)) / 8).astype(np.float16), "P": (rng.integers(-8, 9, (5, 12)) / 8).astype(np.float16),
           "B": convert(rng.integers(-8, 9, (5, 12)) / 8, "bf16")}
    want, got = run(short, ins), build_and_run(apply(short, RED_PIPE), None, ins, sanitize=True)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def _check_narrow(got, X, B, P, chunk: int) -> None:  # type: ignore[no-untyped-def]
    """Each accumulator is rounded once per tile of `chunk` columns (the IR keeps it in its
    dtype between tiles): the exact sum of a tile added and rounded to the dtype."""
    def once(init: float, terms, dtype: str):  # type: ignore[no-untyped-def]
        acc = np.full(terms.shape[0], init)
        for c0 in range(0, terms.shape[1], chunk):
            acc = convert(acc + terms[:, c0:c0 + chunk].sum(1), dtype).astype(np.float64)
        return acc

    x64, b64 = X.astype(np.float64), B.astype(np.float64)
    ulp = lambda v, d: np.abs(v) * (2.0**-10 if d == "f16" else 2.0**-7) + 2.0**-24  # noqa: E731
    for name, want, d in (("Y", once(0.5, x64, "f16"), "f16"), ("Q", once(0.0, (X * P).astype(np.float64), "f16"), "f16"),
                          ("Z", once(1.0, b64, "bf16"), "bf16")):
        # the f32 sums of a tile differ from the exact one far below the dtype's ulp: at most
        # a rounding boundary moves (one ulp)
        err = np.abs(got[name].astype(np.float64) - want)
        assert np.all(err <= ulp(want, d)), (name, got[name], want)
    np.testing.assert_array_equal(got["W"], X.max(1))
    np.testing.assert_array_equal(got["V"].astype(np.float64), convert(b64 * 2.0, "bf16").astype(np.float64).min(1))


@pytest.mark.slow
def test_integer_arithmetic_matches_the_interpreter_bit_for_bit() -> None:
    k = kernel_text(INTS)
    t = apply(k, INT_PIPE)
    em = emit_ascendc(t)
    assert not em.warnings
    rng = np.random.default_rng(fresh_seed())
    edges = np.array([0, 1, -1, 2**31 - 1, -(2**31), 46341, -46341, 65536, 7, -3], np.int64)
    inputs = random_inputs(k, rng)
    for name in ("A", "B"):  # random ints mixed with the extremes (wrap-around on purpose)
        v = rng.integers(-(2**31), 2**31, inputs[name].shape)
        mask = rng.random(v.shape) < 0.3
        v[mask] = rng.choice(edges, mask.sum())
        inputs[name] = v.astype(np.int32)
    want = run(k, inputs)
    got = build_and_run(t, None, inputs, sanitize=True, emitted=em)
    for name in ("Y", "Z", "U"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


ANDOR = _ew(
    "andor(X: f32[R, C], G: f16[R, C]) -> (Y: f32[R, C], Z: f16[R, C], V: f32[R, C], U: f32[R, C])",
    "Y[r, c] = select(X[r, c] > -0.5, select(X[r, c] < 0.5, X[r, c], 0.0), 0.0)",
    "Z[r, c] = select(G[r, c] < f16(-0.5), G[r, c] * f16(2.0), select(G[r, c] > f16(0.5), G[r, c] * f16(2.0), f16(0.0)))",
    "V[r, c] = select(X[r, c] > 0.0, select(f32(G[r, c]) > X[r, c], 1.0, 2.0), 2.0)",
    "U[r, c] = select(X[r, c] > 0.0, select(f32(G[r, c]) > X[r, c], 1.0, 2.0), 3.0)",
)


def test_combined_conditions_are_one_select_of_anded_or_ored_masks() -> None:
    plan = lower_kernel(apply(kernel_text(ANDOR), SEL_PIPE))
    assert not _fallbacks(plan), _fallbacks(plan)
    ops = _ops(plan, "c")
    logic = [(o.op, o.dst.dtype) for o in ops if o.op in ("And", "Or")]
    # Y: c1 and c2; Z: c1 or c2 (same `then`); V: and (a two-vector Compare inside); U: the
    # else-branches differ, so two Selects
    assert logic == [("And", "u16"), ("Or", "u16"), ("And", "u16")], logic
    assert len([o for o in ops if o.op == "Select"]) == 5


@pytest.mark.slow
@pytest.mark.parametrize("text", [SEL, ANDOR], ids=["literals-nested", "and-or"])
def test_selects_of_literals_and_nested_match_the_interpreter(text: str) -> None:
    k = kernel_text(text)
    t = apply(k, SEL_PIPE)
    em = emit_ascendc(t)
    assert "Select(" in em.source and not em.warnings
    check_emitted(t, k, emitted=em, sanitize=True, what="select of literals / nested selects")


@pytest.mark.slow
def test_integer_casts_match_the_interpreter_bit_for_bit() -> None:
    """f32 <-> i32 (`Cast`, nearest even, saturating, NaN to 0), f16/bf16 -> i32 and
    i32 -> f16 through the exact f32, on edge values (ties, beyond the i32 range, NaN,
    integers f32 rounds)."""
    k = kernel_text(ICAST)
    t = apply(k, INT_PIPE)
    plan = lower_kernel(t)
    assert not _fallbacks(plan), _fallbacks(plan)
    assert any(o.op == "Cast" and o.dst.dtype == "i32" for o in _ops(plan, "c"))
    rng = np.random.default_rng(fresh_seed())
    shape = (3, 100)
    f_edges = np.array([0.5, 1.5, 2.5, -2.5, -0.5, 3e9, -3e9, np.nan, np.inf, -np.inf, 2147483520.0, 1e-3])
    i_edges = np.array([2**31 - 1, -(2**31), 16777217, -16777219, 65519, 65521, 0, -1])

    def mix(v: np.ndarray, edges: np.ndarray) -> np.ndarray:
        m = rng.random(v.shape) < 0.4
        v = v.copy()
        v[m] = rng.choice(edges, m.sum())
        return v

    inputs = {"A": mix(rng.integers(-1000, 1000, shape), i_edges).astype(np.int32),
              "X": mix(rng.uniform(-100, 100, shape), f_edges).astype(np.float32),
              "H": mix(rng.uniform(-100, 100, shape), f_edges[:5]).astype(np.float16),
              "G": convert(mix(rng.uniform(-100, 100, shape), f_edges), "bf16")}
    want = run(k, inputs)
    got = build_and_run(t, None, inputs, sanitize=True)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
