"""Small IR kernels that tests in more than one folder use (`tests/` is on sys.path), each
as text; a test picks its own sizes with `Kernel.with_sizes`."""

from __future__ import annotations

# Elementwise add over two ranged sizes (issue 24): `M` any of 1..4096, `N` a multiple of 16.
ADD_RANGED = """kernel add(A: f16[M, N], B: f16[M, N]) -> (C: f16[M, N]) {
  size M = 256 in 1..4096
  size N = 1024 in 16..65536 multiple of 16

  ew: for i in 0..M {
    for j in 0..N {
      C[i, j] = A[i, j] + B[i, j]
    }
  }
}
"""


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


# Grouped-query decode attention (heads x group rows `g`, `r`; long keys `t`), unfused:
# `fuse` makes one nest with two-deep row loops (issue 29 items 1-3).
DECODE_GQA = """
kernel decode(Q: f16[G, R, D], K: f16[G, L, D], V: f16[G, L, D]) -> (O: f16[G, R, D]) {
  size G = 2
  size R = 4
  size L = 4096
  size D = 128
  const scale: f32 = 0.088
  temp s: f32[G, R, L]
  temp mx: f32[G, R]
  temp sm: f32[G, R]
  temp acc: f32[G, R, D]
  qk: for g in 0..G {
    for r in 0..R {
      for t in 0..L {
        s[g, r, t] = 0.0
        for d in 0..D { s[g, r, t] += f32(Q[g, r, d]) * f32(K[g, t, d]) }
        s[g, r, t] = s[g, r, t] * scale
      }
    }
  }
  rmax: for g in 0..G {
    for r in 0..R {
      mx[g, r] = -inf
      for t in 0..L { mx[g, r] max= s[g, r, t] }
    }
  }
  expo: for g in 0..G {
    for r in 0..R {
      sm[g, r] = 0.0
      for t in 0..L {
        s[g, r, t] = exp(s[g, r, t] - mx[g, r])
        sm[g, r] += s[g, r, t]
      }
    }
  }
  pv: for g in 0..G {
    for r in 0..R {
      for d in 0..D {
        acc[g, r, d] = 0.0
        for t in 0..L { acc[g, r, d] += s[g, r, t] * f32(V[g, t, d]) }
        O[g, r, d] = f16(acc[g, r, d] / sm[g, r])
      }
    }
  }
}
"""


# A 5-D group norm (N, G, C, H, W): a group's statistics run over C x H x W (issue 29 items 1, 2).
GROUP_NORM = """
kernel gnorm(X: f32[N, G, C, H, W]) -> (Y: f32[N, G, C, H, W]) {
  size N = 2
  size G = 32
  size C = 4
  size H = 64
  size W = 64
  const eps: f32 = 0.00001
  const inv: f32 = 0.00006103515625
  temp mu: f32[N, G]
  temp var: f32[N, G]
  mean: for n in 0..N {
    for g in 0..G {
      mu[n, g] = 0.0
      for c in 0..C {
        for h in 0..H {
          for w in 0..W { mu[n, g] += X[n, g, c, h, w] }
        }
      }
      mu[n, g] = mu[n, g] * inv
    }
  }
  vr: for n in 0..N {
    for g in 0..G {
      var[n, g] = 0.0
      for c in 0..C {
        for h in 0..H {
          for w in 0..W { var[n, g] += (X[n, g, c, h, w] - mu[n, g]) * (X[n, g, c, h, w] - mu[n, g]) }
        }
      }
    }
  }
  nm: for n in 0..N {
    for g in 0..G {
      for c in 0..C {
        for h in 0..H {
          for w in 0..W { Y[n, g, c, h, w] = (X[n, g, c, h, w] - mu[n, g]) * rsqrt(var[n, g] * inv + eps) }
        }
      }
    }
  }
}
"""
