"""Small IR kernels that tests in more than one folder use (`tests/` is on sys.path), each
as text; a test picks its own sizes with `Kernel.with_sizes`."""

from __future__ import annotations

# A column sum: the reduction loop `run` is the outermost loop, so as written it cannot be
# spread over the cores (`rfactor{run=H}` splits it into H parallel partial sums).
COLSUM = """
kernel colsum(X: f32[N, C]) -> (Y: f32[C]) {
  size N = 64
  size C = 32
  init: for c in 0..C {
    Y[c] = 0.0
  }
  run: for i in 0..N {
    for c in 0..C {
      Y[c] += X[i, c]
    }
  }
}
"""


# SwiGLU's elementwise part with casts (issue 24's kernel): f16 in and out, computed in f32.
SWIGLU = """kernel swiglu(a: f16[M, N], b: f16[M, N]) -> (y: f16[M, N]) {
  size M = 512
  size N = 2048
  g: for t in 0..M {
    for h in 0..N {
      y[t, h] = f16(f32(a[t, h]) / (1.0 + exp(-f32(a[t, h]))) * f32(b[t, h]))
    }
  }
}
"""
