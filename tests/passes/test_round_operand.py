"""`round_operand`: golden text, differential tests (the one pass that changes precision:
results must stay within the tolerance of the narrower type, here f16 outputs), the
trace entry that says so, `space()`, and illegal requests (located, with alternatives)."""

from __future__ import annotations

import re

import pytest

from passes.base import PassError, PipelineError, TraceEntry, parse_pipeline, run_pipeline
from passes.round_operand import RoundOperand
from passes_testutil import EXAMPLES, apply, canon, cli, equivalent, example, kernel, roundtrips
from transformer.printer import print_kernel

PV = """
kernel pv(P: f32[M, K], V: f16[K, N], l: f32[M]) -> (O: f16[M, N]) {
  size M = 6
  size K = 10
  size N = 4
  temp acc: f32[M, N]
  pv: for i in 0..M {
    for d in 0..N {
      acc[i, d] = 0.0
      for j in 0..K {
        acc[i, d] += P[i, j] * f32(V[j, d])
      }
      O[i, d] = f16(acc[i, d] / l[i])
    }
  }
}
"""

PV_ROUNDED = """
kernel pv(P: f32[M, K], V: f16[K, N], l: f32[M]) -> (O: f16[M, N]) {
  size M = 6
  size K = 10
  size N = 4
  temp acc: f32[M, N]
  temp P_f16: f16[M, K]
  round_P: for i in 0..M {
    for j in 0..K {
      P_f16[i, j] = f16(P[i, j])
    }
  }
  pv: for i in 0..M {
    for d in 0..N {
      acc[i, d] = 0.0
      for j in 0..K {
        acc[i, d] += f32(P_f16[i, j]) * f32(V[j, d])
      }
      O[i, d] = f16(acc[i, d] / l[i])
    }
  }
}
"""

# a read at two index forms gets two rounding nests; bounds of copied loops are kept
SHIFTED = """
kernel sh(X: f32[N]) -> (Y: f16[N]) {
  size N = 8
  st: for i in 0..N - 1 {
    Y[i] = f16(X[i] * 0.5 + X[i + 1] * 0.25)
  }
  Y[N - 1] = f16(X[N - 1])
}
"""

SHIFTED_ROUNDED = """
kernel sh(X: f32[N]) -> (Y: f16[N]) {
  size N = 8
  temp X_f16: f16[N]
  round_X: for i in 0..N - 1 {
    X_f16[i] = f16(X[i])
  }
  round_X_1: for i in 0..N - 1 {
    X_f16[i + 1] = f16(X[i + 1])
  }
  st: for i in 0..N - 1 {
    Y[i] = f16(f32(X_f16[i]) * 0.5 + f32(X_f16[i + 1]) * 0.25)
  }
  Y[N - 1] = f16(X[N - 1])
}
"""


def test_golden_pv() -> None:
    out = apply(PV, "round_operand{pv.P=f16}")
    assert print_kernel(out) == canon(PV_ROUNDED)
    assert roundtrips(out)


def test_golden_two_index_forms() -> None:
    out = apply(SHIFTED, "round_operand{st.X=f16}")
    assert print_kernel(out) == canon(SHIFTED_ROUNDED)


def test_golden_attention_and_trace_says_precision_changes() -> None:
    k = example("attention")
    out, trace = run_pipeline(k, "round_operand{pv.s=f16}")
    text = print_kernel(out)
    assert "temp s_f16: f16[S, S]" in text
    assert re.search(r"round_s: for i in 0\.\.S \{\s+for j in 0\.\.S \{\s+s_f16\[i, j\] = f16\(s\[i, j\]\)", text)
    assert "acc[i, d] += f32(s_f16[i, j]) * f32(V[j, d])" in text
    # the nest is placed right before `pv`; nothing else changes
    labels = [s.label for s in out.body]
    assert labels == ["qk", "bias", "rmax", "expo", "round_s", "pv"]
    assert trace[0].changes[0] == "rounds s to f16 for the cube; results change within f16 tolerance"
    assert "CHANGES PRECISION" in RoundOperand.summary
    import passes.round_operand as mod

    assert "deliberately changes precision" in (mod.__doc__ or "")
    assert "It requires:" in (mod.__doc__ or "") and "->" in (mod.__doc__ or "")


def test_inner_loop_of_a_fused_nest() -> None:
    """After `fuse`, `s` is a row buffer written in the same row iteration: the pass rounds
    it in the inner `d` loop, the rounding loop sits right before that loop."""
    k = example("attention")
    f = apply(k, "fuse")
    (inst,) = RoundOperand.space(f)
    assert inst.to_text() == "round_operand{d.s=f16}"
    out = inst.apply(f)
    qk = out.body[0]
    assert [getattr(s, "label", None) for s in qk.body][-2:] == ["round_s", None]
    assert equivalent(k, out, trials=2) == []


@pytest.mark.parametrize("name", ["attention", "attention_causal"])
def test_differential_on_attention(name: str) -> None:
    """Interpreter before vs after on fresh random inputs (seed from OS entropy, printed by
    `equivalent` on failure); the outputs are f16, so the tolerance is the f16 one."""
    for sizes in ({"S": 12, "D": 4}, {"S": 64, "D": 16}):
        k = example(name, sizes)
        out = apply(k, "round_operand{pv.s=f16}")
        assert equivalent(k, out, trials=2) == []


SOFTMAX_PV = """
kernel pv(X: f32[M, K], V: f16[K, N]) -> (O: bf16[M, N]) {
  size M = 6
  size K = 10
  size N = 4
  temp P: f32[M, K]
  temp l: f32[M]
  temp acc: f32[M, N]
  ex: for i in 0..M {
    l[i] = 0.0
    for j in 0..K {
      P[i, j] = exp(X[i, j])
      l[i] += P[i, j]
    }
  }
  pv: for i in 0..M {
    for d in 0..N {
      acc[i, d] = 0.0
      for j in 0..K {
        acc[i, d] += P[i, j] * f32(V[j, d])
      }
      O[i, d] = bf16(acc[i, d] / l[i])
    }
  }
}
"""


def test_differential_pv_bf16() -> None:
    """Rounding to bf16 keeps results within the bf16 tolerance (checked on a bf16 output).
    P is a softmax numerator (positive, normalised by its row sum) as in attention: with
    arbitrary signed P and a random divisor, cancellation would amplify any rounding."""
    out = apply(SOFTMAX_PV, "round_operand{pv.P=bf16}")
    assert "temp P_bf16: bf16[M, K]" in print_kernel(out)
    assert equivalent(kernel(SOFTMAX_PV), out, trials=3) == []


def test_result_really_changes() -> None:
    """Not a no-op: with an f32 output the rounding shows (and is about f16's precision)."""
    import numpy as np

    from transformer.interp import random_inputs, run

    text = PV.replace("-> (O: f16[M, N])", "-> (O: f32[M, N])").replace("O[i, d] = f16(acc[i, d] / l[i])",
                                                                    "O[i, d] = acc[i, d] / l[i]")
    k = kernel(text)
    out = apply(text, "round_operand{pv.P=f16}")
    inputs = random_inputs(k, np.random.default_rng())
    a, b = run(k, inputs)["O"], run(out, inputs)["O"]
    assert not np.array_equal(a, b)
    rel = np.abs(a - b).max() / np.abs(inputs["V"].astype(np.float32)).max() * np.abs(inputs["l"]).min()
    assert rel < 2.0 ** -11 * 10  # K = 10 terms, each off by at most 2^-11 relative


def test_cli_verify_attention() -> None:
    """`ascx verify` of the pass on attention (f16 outputs, f16 tolerance; fresh seed)."""
    r = cli("verify", str(EXAMPLES / "attention.ir"), "--passes", "round_operand{pv.s=f16}",
            "--size", "S=64", "--size", "D=16", "--trials", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "O:" in r.stdout and "ok" in r.stdout and "rtol 0.01" in r.stdout


def test_cli_explain_says_precision_changes() -> None:
    r = cli("transform", str(EXAMPLES / "attention.ir"), "--passes", "round_operand{pv.s=f16}", "--explain")
    assert r.returncode == 0, r.stderr
    assert "rounds s to f16 for the cube; results change within f16 tolerance" in r.stdout + r.stderr


def test_pipeline_text_round_trips() -> None:
    (p,) = parse_pipeline("round_operand{pv.s=f16}")
    assert p == RoundOperand("pv", "s", "f16")
    assert p.to_text() == "round_operand{pv.s=f16}"
    (q,) = parse_pipeline("round_operand{qk.d.s=bf16}")
    assert (q.loop, q.tensor, q.dtype) == ("qk.d", "s", "bf16")


def test_space() -> None:
    assert [p.to_text() for p in RoundOperand.space(example("attention"))] == ["round_operand{pv.s=f16}"]
    for name in ("add", "softmax", "layernorm", "rmsnorm", "matmul", "conv2d"):
        assert RoundOperand.space(example(name)) == [], name  # no f32 operand of a `+=` product
    # every offered instance is accepted
    for name in ("attention", "attention_causal"):
        k = example(name)
        for p in RoundOperand.space(k):
            p.apply(k)


ILLEGAL = [
    ("nest writes the tensor", "attention", "round_operand{expo.s=f16}", r"`expo` writes `s`", True),
    ("nest accumulates into it", "attention", "round_operand{qk.s=f16}", r"`qk` writes `s`", True),
    ("not read there", "attention", "round_operand{rmax.V=f16}", r"`V` is not read in `rmax`", True),
    ("unknown loop", "attention", "round_operand{nope.s=f16}", r"no loop named `nope`", False),
    ("unknown tensor", "attention", "round_operand{pv.x=f16}", r"no tensor named `x`", True),
    ("unknown dtype", "attention", "round_operand{pv.s=f8}", r"unknown dtype `f8`", True),
    ("not narrower", "attention", "round_operand{pv.s=f32}", r"f32 is not narrower than `s`'s f32", True),
    ("same width", "attention", "round_operand{pv.V=bf16}", r"bf16 is not narrower than `V`'s f16", True),
    ("integer target", "attention", "round_operand{pv.s=i8}", r"both types must be floating-point", True),
    ("a local", "attention", "tile,round_operand{pv.s_ub_3=f16}", r"on-chip `local`", True),
    ("a scalar", "attention", "fuse,round_operand{qk.d.sm=f16}", r"scalar \(rank 0\)", True),
]


@pytest.mark.parametrize("case", ILLEGAL, ids=[c[0] for c in ILLEGAL])
def test_refused(case) -> None:  # type: ignore[no-untyped-def]
    _, name, pipeline, pattern, located = case
    k = example(name)
    with pytest.raises(PassError) as info:
        run_pipeline(k, pipeline)
    err = info.value
    assert err.message.startswith("round_operand:") or "round_operand" in err.message
    assert re.search(pattern, err.message), err.render()
    if located:
        assert err.loc is not None, err.render()
    if "tile" not in pipeline and "nope" not in pipeline:
        legal = "round_operand{d.s=f16}" if pipeline.startswith("fuse") else "round_operand{pv.s=f16}"
        assert err.hint and f"legal here: `{legal}`" in err.hint, err.render()  # the legal alternative


def test_bounds_using_an_unindexed_loop_are_refused() -> None:
    text = """
kernel tri(A: f32[N, N], B: f16[N]) -> (C: f16[N]) {
  size N = 6
  temp c: f32[N]
  t: for i in 0..N {
    c[i] = 0.0
    for j in 0..N {
      for k in 0..j {
        c[i] += A[i, k] * f32(B[k])
      }
    }
    C[i] = f16(c[i])
  }
}
"""
    with pytest.raises(PassError, match=r"bounds of `for k in 0\.\.j` use `j`"):
        apply(text, "round_operand{t.A=f16}")
    # the `k` loop itself is fine: `j` is outside it
    out = apply(text, "round_operand{t.k.A=f16}")
    assert equivalent(kernel(text), out, trials=2) == []


@pytest.mark.parametrize("pipeline,pattern", [
    ("round_operand{pv=f16}", r"must name a loop and a tensor"),
    ("round_operand{pv.s}", r"needs a dtype"),
    ("round_operand{pv.s=f16,pv.sm=f16}", r"exactly one"),
])
def test_bad_parameters(pipeline: str, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        parse_pipeline(pipeline)


def test_cli_refusal_is_located() -> None:
    r = cli("transform", str(EXAMPLES / "attention.ir"), "--passes", "round_operand{expo.s=f16}")
    assert r.returncode == 2
    assert re.search(r"attention.ir:\d+:\d+: error: round_operand: `expo` writes `s`", r.stderr), r.stderr
    assert "hint:" in r.stderr and "Traceback" not in r.stderr


def test_trace_entry_type() -> None:
    e = TraceEntry("x")
    RoundOperand("pv", "s", "f16").run(example("attention"), None, e)
    assert any("results change within f16 tolerance" in c for c in e.changes)
    assert any("relative error <= 2^-11" in d for d in e.decisions)
