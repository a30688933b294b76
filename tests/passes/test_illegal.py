"""Illegal requests: each is refused with a `PassError`/`PipelineError` naming the pass,
the reason and (where one exists) the location; through the CLI with exit 2 and no
traceback."""

from __future__ import annotations

import re

import pytest

from passes.base import PassError, PipelineError, run_pipeline
from passes_testutil import EXAMPLES, cli, example, kernel

STENCIL = """
kernel st(A: f32[N, N]) -> (B: f32[N, N]) {
  size N = 8
  temp x: f32[N, N]
  init: for i in 0..N {
    for j in 0..N {
      x[i, j] = A[i, j]
    }
  }
  wave: for i in 1..N {
    for j in 0..N - 1 {
      x[i, j] = x[i - 1, j + 1] * 0.5
    }
  }
  out: for i in 0..N {
    for j in 0..N {
      B[i, j] = x[i, j]
    }
  }
}
"""

BACKWARD = """
kernel bw(A: f32[N]) -> (B: f32[N]) {
  size N = 8
  temp t: f32[N]
  prod: for i in 0..N {
    t[i] = A[i] * 2.0
  }
  cons: for i in 0..N {
    B[i] = t[N - 1 - i]
  }
}
"""

SCAN = """
kernel scan(A: f32[N]) -> (B: f32[N]) {
  size N = 8
  B[0] = A[0]
  pre: for i in 1..N {
    B[i] = B[i - 1] + A[i]
  }
}
"""

TRI = """
kernel tri(A: f32[N, N]) -> (B: f32[N, N]) {
  size N = 6
  zero: for i in 0..N {
    for j in 0..N {
      B[i, j] = 0.0
    }
  }
  low: for i in 0..N {
    for j in 0..i + 1 {
      B[i, j] = A[i, j]
    }
  }
}
"""

SEPARATED = """
kernel sep(A: f32[N]) -> (B: f32[N], C: f32[N]) {
  size N = 8
  temp s: f32
  a: for i in 0..N {
    B[i] = A[i]
  }
  s = 1.0
  b: for i in 0..N {
    C[i] = A[i] + s
  }
}
"""

MISMATCH = """
kernel mis(A: f32[N]) -> (B: f32[N], C: f32[M]) {
  size N = 8
  size M = 4
  a: for i in 0..N {
    B[i] = A[i]
  }
  b: for i in 0..M {
    C[i] = A[i]
  }
}
"""

# (id, kernel text or example name, pipeline, pass name, regex the message must match,
#  whether a source location is expected)
CASES = [
    ("interchange across a carried dependence", STENCIL, "interchange{wave.i,wave.j}", "interchange",
     r"flow dependence .* direction \(<, >\).*lexicographically negative", True),
    ("interchange of a non-perfect nest", "matmul", "interchange{mm.i,mm.k}", "interchange", r"not a perfect nest", True),
    ("interchange of a triangular nest", TRI, "interchange{low.i,low.j}", "interchange", r"depend on `i`.*rectangular", True),
    ("interchange of loops in different nests", "attention", "interchange{qk.i,bias.j}", "interchange",
     r"not nested in one another", True),
    ("interchange with one loop", "matmul", "interchange{mm.i}", "interchange", r"at least two loop names", False),
    ("interchange same loop twice", "matmul", "interchange{mm.i,mm.i}", "interchange", r"names a loop twice", False),
    ("interchange unknown loop", "matmul", "interchange{mm.i,mm.q}", "interchange", r"no loop named `mm.q`", False),
    ("interchange ambiguous loop", "attention", "interchange{i,j}", "interchange", r"ambiguous.*5 loops", True),
    ("fusion across a backward dependence", BACKWARD, "fuse{prod,cons}", "fuse",
     r"read of t\[N - 1 - i\].*later iteration i' > i.*reverse", True),
    ("fusion of non-adjacent loops", SEPARATED, "fuse{a,b}", "fuse", r"not adjacent: 1 statement", True),
    ("fusion in the wrong order", SEPARATED.replace("  s = 1.0\n", ""), "fuse{b,a}", "fuse", r"comes before", True),
    ("fusion with different bounds", MISMATCH, "fuse{a,b}", "fuse", r"bounds differ", True),
    ("fusion of a loop with itself", MISMATCH, "fuse{a,a}", "fuse", r"same loop", True),
    ("fusion with one name", MISMATCH, "fuse{a}", "fuse", r"two adjacent loop names", False),
    ("fusion of a nested and a top loop", "attention", "fuse{qk.j,bias}", "fuse", r"not in the same loop body", True),
    ("multicore on a dependent loop", SCAN, "multicore{pre}", "multicore", r"not parallel: it carries a dependence", True),
    ("multicore on a reduction loop", "softmax", "multicore{rmax.c}", "multicore", r"nested inside", True),
    ("multicore on a top-level reduction", """
kernel red(A: f32[N]) -> (B: f32[1]) {
  size N = 16
  temp s: f32
  s = 0.0
  sum: for i in 0..N {
    s += A[i]
  }
  B[0] = s
}
""", "multicore{sum}", "multicore", r"\+= reduction into `s`.*cross-core", True),
    ("multicore with zero cores", "add", "multicore{ew=0}", "multicore", r"at least 1", False),
    ("multicore with more cores than iterations", "add", "multicore{ew=100}", "multicore", r"only 6 iterations", True),
    ("multicore twice", "add", "multicore{ew},multicore{ew}", "multicore", r"already split", True),
    ("unroll factor 0", "matmul", "unroll{mm.k=0}", "unroll", r"at least 2, got 0", False),
    ("unroll factor not a number", "matmul", "unroll{mm.k=four}", "unroll", r"integer >= 2 or `full`", False),
    ("unroll factor above trip", "matmul", "unroll{mm.k=64}", "unroll", r"exceeds the trip count 10", True),
    ("unroll of a variable-trip loop", TRI, "unroll{low.j=2}", "unroll", r"not a compile-time constant", True),
    ("unroll without factor", "matmul", "unroll{mm.k}", "unroll", r"needs a factor", False),
    ("unroll unknown loop", "matmul", "unroll{zz=2}", "unroll", r"no loop named `zz`", False),
    ("unknown pass", "matmul", "fuse,frobnicate", "", r"unknown pass `frobnicate`", False),
    ("unknown parameter style", "matmul", "interchange{mm.i=2,mm.j}", "interchange", r"takes loop names", False),
    ("malformed pipeline", "matmul", "fuse,,unroll{mm.k=2}", "", r"cannot read the pipeline", False),
]


def _kernel(src: str):
    return example(src) if "\n" not in src else kernel(src)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refused(case) -> None:
    _, src, pipeline, pass_name, pattern, located = case
    k = _kernel(src)
    with pytest.raises((PassError, PipelineError)) as info:
        run_pipeline(k, pipeline)
    err = info.value
    assert re.search(pattern, err.message, re.S), err.render()
    if pass_name:
        assert pass_name in err.message
    if located:
        assert err.loc is not None, err.render()
    assert "Traceback" not in err.render()


def test_at_least_twenty() -> None:
    assert len(CASES) >= 20


@pytest.mark.parametrize("example_name,pipeline,pattern", [
    ("matmul", "interchange{mm.i,mm.k}", r"examples/matmul.ir:\d+:\d+: error: interchange: .*not a perfect nest"),
    ("softmax", "multicore{rmax.c}", r"softmax.ir:\d+:\d+: error: multicore: "),
    ("attention", "fuse{qk,rmax}", r"error: fuse: .*not adjacent"),
    ("matmul", "unroll{mm.k=0}", r"--passes:1:13: error: unroll: the value of `mm.k` must be at least 2, got 0"),
    ("matmul", "interchange{mm.i,mm.j", r"--passes:1:12: error: unclosed"),
    ("matmul", "nope", r"unknown pass `nope`"),
])
def test_cli_refusals(example_name: str, pipeline: str, pattern: str) -> None:
    r = cli("transform", str(EXAMPLES / f"{example_name}.ir"), "--passes", pipeline)
    assert r.returncode == 2, r.stderr
    assert re.search(pattern, r.stderr), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_cli_dependence_notes(tmp_path) -> None:
    p = tmp_path / "st.ir"
    p.write_text(STENCIL.strip() + "\n")
    r = cli("transform", str(p), "--passes", "interchange{wave.i,wave.j}")
    assert r.returncode == 2
    # both accesses of the dependence are located, with the source line and a caret
    assert re.search(r"st.ir:11:\d+: note: source: write of x\[i, j\]", r.stderr), r.stderr
    assert re.search(r"st.ir:11:\d+: note: sink: read of x\[i - 1, j \+ 1\]", r.stderr), r.stderr
    assert "^" in r.stderr
