"""`reciprocal`: golden text, differential tests (a pass that changes precision on purpose:
results stay within f32 rounding of the division, far inside the f16 output tolerance), the
trace entry that says so, `space()`, named loops, and what it leaves alone or refuses."""

from __future__ import annotations

import numpy as np
import pytest

from passes.base import PassError, run_pipeline
from passes.reciprocal import Reciprocal
from passes_testutil import apply, canon, equivalent, example, kernel, roundtrips
from transformer.interp import run as run_kernel
from transformer.printer import print_kernel

NORM = """
kernel norm(X: f32[M, N], s: f32[M]) -> (Y: f32[M, N], Z: f32[M, N]) {
  size M = 5
  size N = 7
  rows: for i in 0..M {
    for j in 0..N {
      Y[i, j] = X[i, j] / s[i]
      Z[i, j] = (X[i, j] + 1.0) / s[i] - X[i, j] / s[i]
    }
  }
}
"""

NORM_RCP = """
kernel norm(X: f32[M, N], s: f32[M]) -> (Y: f32[M, N], Z: f32[M, N]) {
  size M = 5
  size N = 7
  temp s_rcp: f32
  rows: for i in 0..M {
    s_rcp = 1.0 / s[i]
    for j in 0..N {
      Y[i, j] = X[i, j] * s_rcp
      Z[i, j] = (X[i, j] + 1.0) * s_rcp - X[i, j] * s_rcp
    }
  }
}
"""

SOFTMAX_FUSED_RCP_TAIL = """
    sm_rcp = 1.0 / sm
    for c in 0..C {
      Y[r, c] = f16(e[c] * sm_rcp)
    }
"""


def test_golden_one_reciprocal_per_row_shared_by_every_division() -> None:
    out, trace = run_pipeline(kernel(NORM), "reciprocal")
    assert print_kernel(out) == canon(NORM_RCP)
    assert roundtrips(out)
    assert trace[0].changes[0].startswith("divides by reciprocals: results change within f32 rounding")
    assert "3 division(s)" in trace[0].changes[1]


def test_softmax_after_fuse_divides_by_the_row_reciprocal() -> None:
    k = example("softmax")
    out = apply(k, "fuse,reciprocal")
    text = print_kernel(out)
    assert "temp sm_rcp: f32" in text
    assert SOFTMAX_FUSED_RCP_TAIL in text
    assert "/" not in text.split("sm_rcp = 1.0 / sm")[1]  # no division is left after the reciprocal
    # before `fuse` the divisor is `sm[r]`; the reciprocal is still one scalar per row
    assert "sm_rcp = 1.0 / sm[r]" in print_kernel(apply(k, "reciprocal"))
    assert "CHANGES PRECISION" in Reciprocal.summary
    import passes.reciprocal as mod

    assert "changes results" in (mod.__doc__ or "") and "It requires:" in (mod.__doc__ or "")


@pytest.mark.parametrize("name,sizes", [("softmax", {"R": 6, "C": 12}), ("softmax", {"R": 3, "C": 300}),
                                        ("softmax", {"R": 2, "C": 65536}), ("attention", {"S": 12, "D": 4})])
@pytest.mark.parametrize("pipeline", ["reciprocal", "fuse,reciprocal", "fuse,reciprocal,tile,double_buffer"])
def test_differential(name: str, sizes: dict[str, int], pipeline: str) -> None:
    """Interpreter before vs after on fresh random inputs (seed from OS entropy, printed by
    `equivalent` on failure); the outputs are f16: the f16 tolerance."""
    k = example(name, sizes)
    assert equivalent(k, apply(k, pipeline), trials=2) == []


def test_f32_results_differ_from_the_division_by_f32_rounding_only() -> None:
    """On an f32 output the change is a couple of units in the last place, never more."""
    k = kernel(NORM)
    out = apply(k, "reciprocal")
    rng = np.random.default_rng(np.random.SeedSequence().entropy)
    x = rng.uniform(-100, 100, (5, 7)).astype(np.float32)
    s = rng.uniform(0.01, 50, 5).astype(np.float32) * rng.choice([-1, 1], 5).astype(np.float32)
    a = run_kernel(k, {"X": x, "s": s})["Y"]
    b = run_kernel(out, {"X": x, "s": s})["Y"]
    assert np.all(np.abs(b - a) <= 2.0 ** -22 * np.abs(a) + 1e-45)
    assert np.any(a != b) or np.all(a == x / s[:, None])  # computed by the multiplication, not copied
    # zeros and infinities behave as the division does
    s2 = np.array([0.0, -0.0, np.inf, 2.0, -np.inf], np.float32)
    x2 = np.zeros((5, 7), np.float32)
    x2[:, 1:] = 3.0
    with np.errstate(divide="ignore", invalid="ignore"):
        a2 = run_kernel(k, {"X": x2, "s": s2})["Y"]
        b2 = run_kernel(out, {"X": x2, "s": s2})["Y"]
    np.testing.assert_array_equal(a2, b2)


def test_named_loop_and_what_is_left_alone() -> None:
    src = """
kernel k(X: f32[M, N], s: f32[M, N], h: f16[M], t: f32[M]) -> (Y: f32[M, N], Z: f16[M, N], W: f32[M, N]) {
  size M = 4
  size N = 6
  a: for i in 0..M {
    for j in 0..N {
      Y[i, j] = X[i, j] / s[i, j]
      Z[i, j] = f16(X[i, j]) / h[i]
      W[i, j] = X[i, j] / 3.0
    }
  }
  b: for i in 0..M {
    for j in 0..N {
      W[i, j] = W[i, j] / t[i]
    }
  }
}
"""
    k = kernel(src)
    out = apply(k, "reciprocal")
    text = print_kernel(out)
    # a per-element divisor, an f16 divisor and a literal are left alone; `t[i]` is hoisted
    assert "X[i, j] / s[i, j]" in text and "f16(X[i, j]) / h[i]" in text and "X[i, j] / 3.0" in text
    assert "t_rcp = 1.0 / t[i]" in text and "W[i, j] * t_rcp" in text
    assert equivalent(k, out) == []
    # naming a loop restricts the rewrite to it
    assert print_kernel(apply(k, "reciprocal{b.j}")) == text
    with pytest.raises(PassError) as e:
        apply(k, "reciprocal{a}")
    assert "no division to rewrite inside `a`" in str(e.value)
    assert "changes inside" in str(e.value) or "not f32" in str(e.value)


def test_divisor_written_in_the_loop_is_not_hoisted_past_the_write() -> None:
    src = """
kernel k(X: f32[N]) -> (Y: f32[N]) {
  size N = 8
  temp s: f32
  l: for i in 0..N {
    s = X[i] + 2.0
    Y[i] = X[i] / s
  }
}
"""
    k = kernel(src)
    out, trace = run_pipeline(k, "reciprocal")  # nothing to do: a note, the kernel unchanged
    assert print_kernel(out) == print_kernel(k)
    assert "changes inside `l: for i in 0..N`" in (trace[0].noop or "")
    assert Reciprocal.space(k) == []
    with pytest.raises(PassError) as e:
        apply(k, "reciprocal{l}")
    assert "changes inside `l: for i in 0..N`" in str(e.value)


def test_space_offers_the_pass_where_it_applies() -> None:
    assert [p.to_text() for p in Reciprocal.space(example("softmax"))] == ["reciprocal"]
    assert Reciprocal.space(example("add")) == []
    assert Reciprocal.space(example("layernorm")) == []


@pytest.mark.parametrize("sizes", [{"R": 64, "C": 4096}, {"R": 2, "C": 65536}])
def test_lowered_softmax_multiplies_by_a_scalar_instead_of_dividing(sizes: dict[str, int]) -> None:
    """The point of the pass: the vector plan has a `Muls` by the row's reciprocal and no
    `Div` (nor the `Duplicate` that fed the divisor to it); the rows of 65536 are tiled.
    (Long rows: the per-row form. Short rows, one tile: tests/codegen/test_rows2d_plan.py.)"""
    from transformer.lower import lower_kernel
    from transformer.lower.instr import Loop, VecOp

    def ops(k):  # type: ignore[no-untyped-def]
        out = []
        for n in lower_kernel(k).nests:
            for p in n.plan:
                for q in (p.item.body if isinstance(p.item, Loop) else (p,)):
                    if isinstance(q.item, VecOp):
                        out.append(q.item.op)
        return out

    exact = ops(apply(example("softmax", sizes), "fuse,tile,double_buffer"))
    rcp = ops(apply(example("softmax", sizes), "fuse,reciprocal,tile,double_buffer"))
    assert "Div" in exact and "Div" not in rcp and "Duplicate" not in rcp
    assert rcp.count("Muls") == exact.count("Muls") + 1
    assert rcp.count("Exp") == exact.count("Exp")


SMALL_UB = """
target = "ascend910b2"
[facts]
"ub.usable_bytes" = 16384
"""


@pytest.mark.slow
def test_emitted_long_rows_with_reciprocal_match_the_interpreter_under_a_small_ub(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 16 KiB UB (override) tiles rows of 4096 along the row; the emitted kernel with the
    reciprocal matches the interpreter of the ORIGINAL (dividing) kernel within f16."""
    from transformer.capacity import check_kernel_capacity
    from transformer.codegen import verify_emitted
    from transformer.targets._override import load_override

    f = tmp_path / "small_ub.toml"
    f.write_text(SMALL_UB)
    tgt = load_override(f)
    k = example("softmax", {"R": 3, "C": 4096})
    out, trace = run_pipeline(k, "fuse,reciprocal,tile,double_buffer", tgt)
    assert sum(c.startswith("split `rmax.c`") for c in trace[2].changes) >= 2  # the row is tiled
    assert check_kernel_capacity(out, tgt).status == "sat"
    diffs = verify_emitted(out, tgt, trials=1, reference=k)
    assert diffs and all(d.ok for d in diffs), [d.describe() for d in diffs]
