"""Independent numpy references for the kernels in `examples/`.

Each function takes the kernel's inputs by name (numpy arrays as the interpreter gets
them) and returns its outputs by name, computed *directly* with numpy -- never through
`transformer.interp` -- so that the interpreter is checked against something it does not
share code with.

The references are honest about precision: they compute in float32 wherever the IR
accumulates in f32 (the `temp ...: f32` buffers and the `f32(...)` casts) and round the
stored outputs to float16 exactly where the IR stores to an f16 tensor. What they cannot
reproduce bit for bit is the order of f32 summation, which is why tests compare within
a dtype-appropriate tolerance rather than exactly.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

F16 = np.float16
F32 = np.float32


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(F32)


def add(A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
    """C = A + B, computed in f16 (two f16 operands) and stored as f16."""
    # An f16 + f16 sum is exact in f32, so one rounding to f16 is the IEEE f16 sum.
    return {"C": (_f32(A) + _f32(B)).astype(F16)}


def softmax(X: np.ndarray) -> dict[str, np.ndarray]:
    """Row softmax; max, exp and sum in f32, result rounded to f16."""
    x = _f32(X)
    mx = x.max(axis=1, keepdims=True)
    e = np.exp(x - mx, dtype=F32)
    sm = e.sum(axis=1, keepdims=True, dtype=F32)
    return {"Y": (e / sm).astype(F16)}


def layernorm(X: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1.0e-5) -> dict[str, np.ndarray]:
    """LayerNorm over the last axis with biased variance; statistics in f32."""
    x = _f32(X)
    h = x.shape[1]
    mu = x.sum(axis=1, keepdims=True, dtype=F32) / F32(h)
    d = x - mu
    var = (d * d).sum(axis=1, keepdims=True, dtype=F32) / F32(h)
    rstd = F32(1.0) / np.sqrt(var + F32(eps), dtype=F32)
    y = d * rstd * _f32(gamma)[None, :] + _f32(beta)[None, :]
    return {"Y": y.astype(F16)}


def rmsnorm(X: np.ndarray, gamma: np.ndarray, eps: float = 1.0e-6) -> dict[str, np.ndarray]:
    """RMSNorm over the last axis; the sum of squares in f32."""
    x = _f32(X)
    h = x.shape[1]
    ms = (x * x).sum(axis=1, keepdims=True, dtype=F32) / F32(h)
    r = F32(1.0) / np.sqrt(ms + F32(eps), dtype=F32)
    return {"Y": (x * r * _f32(gamma)[None, :]).astype(F16)}


def matmul(A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
    """C = A @ B with f16 operands widened to f32, f32 accumulation, f16 result."""
    return {"C": (_f32(A) @ _f32(B)).astype(F16)}


def _attention_probs_times_v(s: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Unnormalised exp(s - rowmax) @ V divided by the row sum, in f32, rounded to f16."""
    mx = s.max(axis=1, keepdims=True)
    e = np.exp(s - mx, dtype=F32)
    sm = e.sum(axis=1, keepdims=True, dtype=F32)
    return ((e @ _f32(V)) / sm).astype(F16)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, M: np.ndarray, scale: float = 0.125) -> dict[str, np.ndarray]:
    """softmax(Q K^T * scale + M) V for one head; everything between the f16 inputs and
    the f16 output in f32."""
    s = (_f32(Q) @ _f32(K).T) * F32(scale) + _f32(M)
    return {"O": _attention_probs_times_v(s, V)}


def attention_causal(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float = 0.125) -> dict[str, np.ndarray]:
    """Causal attention: scores with key index j > query index i are -inf."""
    s = (_f32(Q) @ _f32(K).T) * F32(scale)
    n = s.shape[0]
    keep = np.arange(n)[None, :] <= np.arange(n)[:, None]  # [i, j]: j <= i
    s = np.where(keep, s, F32(-np.inf)).astype(F32)
    return {"O": _attention_probs_times_v(s, V)}


def conv2d(X: np.ndarray, Wt: np.ndarray, bias: np.ndarray) -> dict[str, np.ndarray]:
    """Valid (unpadded) stride-1 NCHW convolution with an [F, C, R, S] filter and a bias;
    f32 accumulation, f16 result."""
    x = _f32(X)
    w = _f32(Wt)
    r, s = w.shape[2], w.shape[3]
    # windows[n, c, y, x, r, s] = X[n, c, y + r, x + s]
    windows = np.lib.stride_tricks.sliding_window_view(x, (r, s), axis=(2, 3))
    acc = np.einsum("ncyxrs,fcrs->nfyx", windows, w, dtype=F32, optimize=True)
    acc = acc + _f32(bias)[None, :, None, None]
    return {"Y": acc.astype(F16)}


# ---- integer vector code (issue 28 item 2): kernels of tests/codegen/test_vector_int.py ----

I32 = np.int32


def _wrap32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to int32 (the IR's i32 arithmetic)."""
    return ((np.asarray(x, dtype=np.int64) + 2**31) % 2**32 - 2**31).astype(I32)


def argmax_rows(X: np.ndarray) -> dict[str, np.ndarray]:
    """Row argmax and argmin, the first index on ties (numpy's own rule)."""
    x = np.asarray(X, dtype=F32)
    return {"I": np.argmax(x, axis=1).astype(I32), "J": np.argmin(x, axis=1).astype(I32)}


def int_vector(A: np.ndarray, B: np.ndarray, S: np.ndarray, X: np.ndarray) -> dict[str, np.ndarray]:
    """The `ivec` kernel of tests/codegen/test_vector_int.py in int64 numpy, wrapped to
    int32: an i32 select of two wrapping expressions, the six comparisons as bit flags,
    row sums (wrapping) of A and B, max and min, and row argmax / argmin."""
    a, b = np.asarray(A, dtype=np.int64), np.asarray(B, dtype=np.int64)
    c = np.arange(a.shape[1], dtype=np.int64)[None, :]
    y = np.where(a < b, _wrap32(_wrap32(a * 3) + np.asarray(S, dtype=np.int64)), _wrap32(b - c))
    q = (a <= b) * 1 + (a > b) * 2 + (a >= b) * 4 + (a == b) * 8 + (a != b) * 16 + (a < 5) * 32
    out = {"Y": y.astype(I32), "Q": q.astype(I32), "T": _wrap32(a.sum(axis=1)), "U": _wrap32(b.sum(axis=1)),
           "M": a.max(axis=1).astype(I32), "N": a.min(axis=1).astype(I32)}
    out.update(argmax_rows(X))
    return out


def embedding(table: np.ndarray, ids: np.ndarray) -> dict[str, np.ndarray]:
    """Row ids[t] of the table for every token (numpy fancy indexing)."""
    return {"out": np.asarray(table)[np.asarray(ids, np.int64)].astype(F16)}


def cross_entropy(X: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row cross-entropy: logsumexp of the row (stable, in f32) minus the label's logit,
    rounded to f16."""
    x = _f32(X)
    mx = x.max(axis=1)
    lse = np.log(np.exp(x - mx[:, None]).sum(axis=1, dtype=F32)) + mx
    picked = np.take_along_axis(x, np.asarray(labels, np.int64)[:, None], axis=1)[:, 0]
    return {"loss": (lse - picked).astype(F16)}


def paged_attention(Q: np.ndarray, Kc: np.ndarray, Vc: np.ndarray, table: np.ndarray,
                    scale: float = 0.125) -> dict[str, np.ndarray]:
    """Decode attention over a block-paged KV cache: each sequence's keys are its table's
    blocks laid end to end (K[b] = Kc[table[b]].reshape(MB * BS, NH, D)), then softmax(q K^T
    * scale) V per head, in f32, rounded to f16."""
    q, kc, vc = _f32(Q), _f32(Kc), _f32(Vc)
    t = np.asarray(table, np.int64)
    B, MB = t.shape
    BS, NH, D = kc.shape[1:]
    k = kc[t].reshape(B, MB * BS, NH, D)  # [b, j, n, d]
    v = vc[t].reshape(B, MB * BS, NH, D)
    s = np.einsum("bnd,bjnd->bnj", q, k, dtype=F32) * F32(scale)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    o = np.einsum("bnj,bjnd->bnd", p, v, dtype=F32) / p.sum(axis=2, dtype=F32)[:, :, None]
    return {"O": o.astype(F16)}


def int8_linear(A: np.ndarray, W: np.ndarray, scale: np.ndarray) -> dict[str, np.ndarray]:
    """examples/int8_linear.ir: acc = A @ Wᵀ exactly (int64: K int8 products fit i32 for
    K < 2^17), then f16(f32(acc) * scale[j]): the i32 -> f32 conversion and the product each rounded in f32."""
    acc = np.asarray(A, dtype=np.int64) @ np.asarray(W, dtype=np.int64).T
    return {"C": (acc.astype(F32) * _f32(scale)[None, :]).astype(F16)}


REFERENCES: dict[str, Callable[..., dict[str, np.ndarray]]] = {
    "add": add,
    "softmax": softmax,
    "layernorm": layernorm,
    "rmsnorm": rmsnorm,
    "matmul": matmul,
    "attention": attention,
    "attention_causal": attention_causal,
    "conv2d": conv2d,
    "embedding": embedding,
    "cross_entropy": cross_entropy,
    "paged_attention": paged_attention,
    "int8_linear": int8_linear,
}
"""Example file stem -> reference function (called with the inputs as keyword args)."""


def _elementwise(f: Callable[..., float], *xs: np.ndarray) -> np.ndarray:
    """`f` (Python's `math`, in f64) applied element by element, rounded once to f32."""
    out = [f(*map(float, v)) for v in zip(*[np.asarray(x, np.float64).reshape(-1) for x in xs])]
    return np.asarray(out, np.float64).astype(F32).reshape(np.shape(xs[0]))


def _math_or_nan(f: Callable[..., float]) -> Callable[..., float]:
    def g(*v: float) -> float:
        try:
            return f(*v)
        except ValueError:  # outside the domain (log1p(-2), sin(inf), ...): NaN, as numpy
            return math.nan
        except OverflowError:
            return math.inf
    return g


def _sigmoid(v: float) -> float:
    if v != v:
        return v
    return 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0


def _exp2(v: float) -> float:
    return v if v != v else (2.0 ** v if v < 1100 else math.inf)


def _pow(x: float, y: float) -> float:
    if y == 0:
        return 1.0
    if x != x or y != y:
        return math.nan
    if x < 0 and y != int(y) and math.isfinite(x):
        return math.nan
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf if x > 0 or y % 2 == 0 else -math.inf
    except ValueError:  # pow(0, negative)
        return math.inf


def _floor(v: float) -> float:
    return v if not math.isfinite(v) else float(math.floor(v))


# the intrinsics of `transformer/intrinsics.py`, each from Python's `math` (not numpy, not the
# table): f32 in, f32 out, computed in f64 and rounded once
INTRINSICS: dict[str, Callable[..., np.ndarray]] = {
    "erf": lambda x: _elementwise(_math_or_nan(math.erf), x),
    "sin": lambda x: _elementwise(_math_or_nan(math.sin), x),
    "cos": lambda x: _elementwise(_math_or_nan(math.cos), x),
    "sigmoid": lambda x: _elementwise(_sigmoid, x),
    "exp2": lambda x: _elementwise(_exp2, x),
    "log1p": lambda x: _elementwise(lambda v: v if v != v or v == math.inf else (
        -math.inf if v == -1 else (math.nan if v < -1 else math.log1p(v))), x),
    "floor": lambda x: _elementwise(_floor, x),
    "pow": lambda x, y: _elementwise(_pow, x, y),
}


# ---- the operators of issue 28 ----------------------------------------------------------


def _rope_rotate(x: np.ndarray, c: np.ndarray, s: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Rotate the pairs (x[..., first], x[..., second]) by the angles whose cos / sin are
    c, s [S, D/2] (broadcast over the heads); f32, rounded to f16."""
    x = _f32(x)
    a, b = x[:, :, first], x[:, :, second]
    cc, ss = _f32(c)[:, None, :], _f32(s)[:, None, :]
    y = np.empty_like(x)
    y[:, :, first] = a * cc - b * ss
    y[:, :, second] = b * cc + a * ss
    return y.astype(F16)


def rope(X: np.ndarray, Cs: np.ndarray, Sn: np.ndarray) -> dict[str, np.ndarray]:
    """Half-split RoPE: the pair of element d is d + D/2."""
    h = X.shape[2] // 2
    return {"Y": _rope_rotate(X, Cs, Sn, np.arange(h), np.arange(h) + h)}


def rope_interleaved(X: np.ndarray, Cs: np.ndarray, Sn: np.ndarray) -> dict[str, np.ndarray]:
    """Interleaved RoPE: the pairs are (2k, 2k + 1)."""
    h = X.shape[2] // 2
    return {"Y": _rope_rotate(X, Cs, Sn, 2 * np.arange(h), 2 * np.arange(h) + 1)}


def swiglu(X: np.ndarray, Wg: np.ndarray, Wu: np.ndarray) -> dict[str, np.ndarray]:
    """silu(X @ Wg) * (X @ Wu): f32 matmuls, f16 result."""
    g = _f32(X) @ _f32(Wg)
    u = _f32(X) @ _f32(Wu)
    return {"Y": (g / (F32(1.0) + np.exp(-g)) * u).astype(F16)}


def gelu(X: np.ndarray, k0: float = 0.7978845608028654, k1: float = 0.044715) -> dict[str, np.ndarray]:
    """GELU, tanh approximation, in f32."""
    x = _f32(X)
    return {"Y": (F32(0.5) * x * (F32(1.0) + np.tanh(F32(k0) * (x + F32(k1) * x ** 3)))).astype(F16)}


def gelu_erf(X: np.ndarray, rsqrt2: float = 0.7071067811865476) -> dict[str, np.ndarray]:
    """Exact GELU, 0.5 x (1 + erf(x / sqrt 2)); erf from Python's math (f64), rounded to f32."""
    x = _f32(X)
    e = INTRINSICS["erf"](x * F32(rsqrt2))
    return {"Y": (F32(0.5) * x * (F32(1.0) + e)).astype(F16)}


def add_rmsnorm(X: np.ndarray, Res: np.ndarray, gamma: np.ndarray, eps: float = 1.0e-6) -> dict[str, np.ndarray]:
    """H = X + Res (f16), Y = RMSNorm(H) * gamma computed from the stored H."""
    h = (_f32(X) + _f32(Res)).astype(F16)
    return {"H": h, "Y": rmsnorm(h, gamma, eps)["Y"]}


def log_softmax(X: np.ndarray) -> dict[str, np.ndarray]:
    """x - max - log(sum(exp(x - max))) per row, f32 out."""
    x = _f32(X)
    mx = x.max(axis=1, keepdims=True)
    lse = mx + np.log(np.exp(x - mx).sum(axis=1, keepdims=True, dtype=F32))
    return {"Y": (x - lse).astype(F32)}


def transpose(X: np.ndarray) -> dict[str, np.ndarray]:
    return {"Y": np.ascontiguousarray(np.asarray(X).T)}


def group_norm(X: np.ndarray, gamma: np.ndarray, beta: np.ndarray, G: int = 8, eps: float = 1.0e-5) -> dict[str, np.ndarray]:
    """GroupNorm over (channels of a group, H, W) per image, biased variance, then the per-channel affine."""
    x = _f32(X)
    n, c, h, w = x.shape
    g = x.reshape(n, G, c // G * h * w)
    mu = g.mean(axis=2, keepdims=True, dtype=F32)
    var = ((g - mu) ** 2).mean(axis=2, keepdims=True, dtype=F32)
    y = ((g - mu) / np.sqrt(var + F32(eps))).reshape(n, c, h, w)
    return {"Y": (y * _f32(gamma)[None, :, None, None] + _f32(beta)[None, :, None, None]).astype(F16)}


def dwconv3x3(X: np.ndarray, Wt: np.ndarray) -> dict[str, np.ndarray]:
    """Depthwise valid 3x3 convolution: each channel with its own filter."""
    windows = np.lib.stride_tricks.sliding_window_view(_f32(X), (3, 3), axis=(2, 3))  # [n, c, y, x, r, s]
    return {"Y": np.einsum("ncyxrs,crs->ncyx", windows, _f32(Wt), dtype=F32).astype(F16)}


def dwconv3x3_same(X: np.ndarray, Wt: np.ndarray) -> dict[str, np.ndarray]:
    """Depthwise 3x3 convolution with "same" zero padding: the valid one of X padded by one
    zero pixel on every side (np.pad), so the output keeps H x W."""
    return dwconv3x3(np.pad(np.asarray(X), ((0, 0), (0, 0), (1, 1), (1, 1))), Wt)


def cumsum(X: np.ndarray) -> dict[str, np.ndarray]:
    return {"Y": np.cumsum(_f32(X), axis=1, dtype=F32).astype(F16)}


def maxpool(X: np.ndarray) -> dict[str, np.ndarray]:
    """2x2 stride-2 max-pool (H and W even in the examples; an odd last row would be dropped)."""
    x = np.asarray(X)
    n, c, h, w = x.shape
    return {"Y": x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))}


def argmax(X: np.ndarray) -> dict[str, np.ndarray]:
    """numpy's argmax: the first index of the maximum."""
    return {"I": np.argmax(np.asarray(X), axis=1).astype(np.int32)}


def bmm(A: np.ndarray, B: np.ndarray) -> dict[str, np.ndarray]:
    return {"C": np.matmul(_f32(A), _f32(B)).astype(F16)}


def decode_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float = 0.125) -> dict[str, np.ndarray]:
    """One query row per head; query head q reads KV head q // (HQ / HK)."""
    hq, hk = Q.shape[0], K.shape[0]
    kv = np.arange(hq) // (hq // hk)
    s = np.einsum("qd,qsd->qs", _f32(Q), _f32(K)[kv], dtype=F32) * F32(scale)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    o = np.einsum("qs,qsd->qd", p, _f32(V)[kv], dtype=F32) / p.sum(axis=1, keepdims=True, dtype=F32)
    return {"O": o.astype(F16)}


def int8_matmul(A: np.ndarray, B: np.ndarray, scale: np.ndarray) -> dict[str, np.ndarray]:
    """Exact i32 matmul (int64 here, then checked to fit), per-column f32 scale, f16 result."""
    acc = np.asarray(A, np.int64) @ np.asarray(B, np.int64)
    assert np.abs(acc).max(initial=0) < 2**31
    return {"C": (acc.astype(np.int32).astype(F32) * _f32(scale)[None, :]).astype(F16)}


OPERATORS: dict[str, Callable[..., dict[str, np.ndarray]]] = {
    "rope": rope, "rope_interleaved": rope_interleaved, "swiglu": swiglu, "gelu": gelu, "gelu_erf": gelu_erf,
    "add_rmsnorm": add_rmsnorm, "log_softmax": log_softmax, "transpose": transpose, "group_norm": group_norm,
    "dwconv3x3": dwconv3x3, "dwconv3x3_same": dwconv3x3_same, "cumsum": cumsum, "maxpool": maxpool, "argmax": argmax,
    "decode_attention": decode_attention, "int8_matmul": int8_matmul,
}
"""The operators of issue 28 (examples/README.md, "Operators")."""
REFERENCES.update(OPERATORS)
REFERENCES["bmm"] = bmm  # a core example (examples/README.md, first table)
