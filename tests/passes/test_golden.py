"""Golden tests: kernel text in, kernel text out, for each of interchange, unroll, fuse and
multicore. Expected texts are canonical printer output."""

from __future__ import annotations

import pytest

from passes_testutil import apply, canon, equivalent, kernel
from transformer.printer import print_kernel

PRODUCER_CONSUMER = """
kernel pc(A: f32[N]) -> (B: f32[N]) {
  size N = 10
  temp t: f32[N]
  p: for i in 0..N {
    t[i] = A[i] * 2.0
  }
  c: for k in 0..N {
    B[k] = t[k] + 1.0
  }
}
"""

PRODUCER_CONSUMER_FUSED = """
kernel pc(A: f32[N]) -> (B: f32[N]) {
  size N = 10
  temp t: f32
  p: for i in 0..N {
    t = A[i] * 2.0
    B[i] = t + 1.0
  }
}
"""

ROWS = """
kernel rows(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 4
  size C = 6
  temp m: f32[R]
  temp e: f32[R, C]
  mx: for r in 0..R {
    m[r] = -inf
    for c in 0..C {
      m[r] max= X[r, c]
    }
  }
  ex: for r in 0..R {
    for c in 0..C {
      e[r, c] = exp(X[r, c] - m[r])
    }
  }
  out: for r in 0..R {
    for c in 0..C {
      Y[r, c] = e[r, c] * 2.0
    }
  }
}
"""

ROWS_FUSED = """
kernel rows(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 4
  size C = 6
  temp m: f32
  temp e: f32
  mx: for r in 0..R {
    m = -inf
    for c in 0..C {
      m max= X[r, c]
    }
    for c in 0..C {
      e = exp(X[r, c] - m)
      Y[r, c] = e * 2.0
    }
  }
}
"""

ROWS_FUSED_NAMED = """
kernel rows(X: f32[R, C]) -> (Y: f32[R, C]) {
  size R = 4
  size C = 6
  temp m: f32[R]
  temp e: f32
  mx: for r in 0..R {
    m[r] = -inf
    for c in 0..C {
      m[r] max= X[r, c]
    }
  }
  ex: for r in 0..R {
    for c in 0..C {
      e = exp(X[r, c] - m[r])
      Y[r, c] = e * 2.0
    }
  }
}
"""

MATMUL = """
kernel mm(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  size M = 4
  size N = 3
  size K = 5
  mm: for i in 0..M {
    for j in 0..N {
      C[i, j] = 0.0
    }
  }
  acc: for i in 0..M {
    for j in 0..N {
      for k in 0..K {
        C[i, j] += A[i, k] * B[k, j]
      }
    }
  }
}
"""

MATMUL_IKJ = """
kernel mm(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  size M = 4
  size N = 3
  size K = 5
  mm: for i in 0..M {
    for j in 0..N {
      C[i, j] = 0.0
    }
  }
  acc: for i in 0..M {
    for k in 0..K {
      for j in 0..N {
        C[i, j] += A[i, k] * B[k, j]
      }
    }
  }
}
"""

MATMUL_KJI = """
kernel mm(A: f32[M, K], B: f32[K, N]) -> (C: f32[M, N]) {
  size M = 4
  size N = 3
  size K = 5
  mm: for i in 0..M {
    for j in 0..N {
      C[i, j] = 0.0
    }
  }
  acc: for k in 0..K {
    for j in 0..N {
      for i in 0..M {
        C[i, j] += A[i, k] * B[k, j]
      }
    }
  }
}
"""

SUM = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 7
  sum: for k in 0..N {
    B[k] = A[k] * 3.0
  }
}
"""

SUM_UNROLL3 = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 7
  sum: for ku in 0..2 {
    B[3 * ku] = A[3 * ku] * 3.0
    B[3 * ku + 1] = A[3 * ku + 1] * 3.0
    B[3 * ku + 2] = A[3 * ku + 2] * 3.0
  }
  sum_rem: for k in 6..7 {
    B[k] = A[k] * 3.0
  }
}
"""

SMALL = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 3
  sum: for k in 0..N {
    B[k] = A[k] * 3.0
  }
}
"""

SMALL_FULL = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 3
  B[0] = A[0] * 3.0
  B[1] = A[1] * 3.0
  B[2] = A[2] * 3.0
}
"""

SUM_CORES = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 7
  @cores(4)
  sum: for k in 0..N {
    B[k] = A[k] * 3.0
  }
}
"""

SUM_CORES_DEFAULT = """
kernel s(A: f32[N]) -> (B: f32[N]) {
  size N = 7
  @cores(7)
  sum: for k in 0..N {
    B[k] = A[k] * 3.0
  }
}
"""

NESTED_LABEL = """
kernel n(A: f32[N, M]) -> (B: f32[N, M]) {
  size N = 5
  size M = 2
  outer: for i in 0..N {
    inner: for j in 0..M {
      B[i, j] = A[i, j]
    }
  }
}
"""

NESTED_LABEL_UNROLL2 = """
kernel n(A: f32[N, M]) -> (B: f32[N, M]) {
  size N = 5
  size M = 2
  outer: for iu in 0..2 {
    inner: for j in 0..M {
      B[2 * iu, j] = A[2 * iu, j]
    }
    inner2: for j in 0..M {
      B[2 * iu + 1, j] = A[2 * iu + 1, j]
    }
  }
  outer_rem: for i in 4..5 {
    inner3: for j in 0..M {
      B[i, j] = A[i, j]
    }
  }
}
"""

CASES = [
    ("fuse producer->consumer, contract t", PRODUCER_CONSUMER, "fuse", PRODUCER_CONSUMER_FUSED),
    ("fuse{p,c}", PRODUCER_CONSUMER, "fuse{p,c}", PRODUCER_CONSUMER_FUSED),
    ("fuse greedy rows", ROWS, "fuse", ROWS_FUSED),
    ("fuse{ex,out} with seam", ROWS, "fuse{ex,out}", ROWS_FUSED_NAMED),
    ("interchange swap", MATMUL, "interchange{acc.j,acc.k}", MATMUL_IKJ),
    ("interchange order of three", MATMUL, "interchange{acc.k,acc.j,acc.i}", MATMUL_KJI),
    ("unroll by 3 with remainder", SUM, "unroll{sum=3}", SUM_UNROLL3),
    ("unroll full", SMALL, "unroll{sum=full}", SMALL_FULL),
    ("unroll factor = trip is full", SMALL, "unroll{sum=3}", SMALL_FULL),
    ("unroll relabels copies", NESTED_LABEL, "unroll{outer=2}", NESTED_LABEL_UNROLL2),
    ("multicore explicit", SUM, "multicore{sum=4}", SUM_CORES),
    ("multicore default capped at trip", SUM, "multicore{sum}", SUM_CORES_DEFAULT),
]


@pytest.mark.parametrize("title,before,pipeline,after", CASES, ids=[c[0] for c in CASES])
def test_golden(title: str, before: str, pipeline: str, after: str) -> None:
    got = apply(before, pipeline)
    assert print_kernel(got) == canon(after)
    assert equivalent(kernel(before), got) == []


def test_fuse_keeps_layout_tagged_temps_whole() -> None:
    """Regression (property test seed 834243879): contracting the NHWC copy of a conv input
    dropped a dimension of a rank-4 layout."""
    from passes_testutil import example

    k = example("conv2d")
    out = apply(apply(k, "interchange{conv.f,conv.x},layout{X=NHWC}"), "fuse")
    assert out.tensor("X_nhwc").rank == 4 and out.tensor("X_nhwc").layout == "NHWC"
