"""Inputs and numpy references of the conformance samples (tests/emulator/samples/<name>/).

Each spec says which ``input/*.bin`` files the sample's host program reads and what each
``output/*.bin`` must contain (the expected array's dtype is the file's element type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class Sample:
    inputs: Callable[[np.random.Generator], Arrays]
    expect: Callable[[Arrays], Arrays]
    rtol: float = 0.0
    atol: float = 0.0


def f16(rng: np.random.Generator, n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float16)


def f32(rng: np.random.Generator, n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(np.float32)


def _syncall(i: Arrays) -> Arrays:
    w = (i["input_x.bin"] * np.float32(2)).reshape(8, 64)
    return {"output_z.bin": (w + w[::-1]).astype(np.float32)}


def _softmax(i: Arrays) -> Arrays:
    x = i["input_x.bin"].astype(np.float64).reshape(64, 64)
    e = np.exp(x - x.max(1, keepdims=True))
    return {"output_y.bin": (e / e.sum(1, keepdims=True)).astype(np.float32)}


def _layernorm(i: Arrays) -> Arrays:
    x = i["input_x.bin"].astype(np.float64).reshape(16, 32)
    g, b = i["input_gamma.bin"].astype(np.float64), i["input_beta.bin"].astype(np.float64)
    mean, var = x.mean(1), x.var(1)  # biased variance, as documented
    y = (x - mean[:, None]) / np.sqrt(var[:, None] + np.float64(np.float32(1e-5))) * g + b
    return {"output_y.bin": y.astype(np.float32), "output_mean.bin": mean.astype(np.float32),
            "output_var.bin": var.astype(np.float32)}


def _matmul(i: Arrays) -> Arrays:
    a = i["input_a.bin"].astype(np.float64).reshape(64, 64)
    b = i["input_b.bin"].astype(np.float64).reshape(64, 32)
    # two Mmads over K = 0..31 and 32..63: the first result is rounded to float in L0C, the
    # second adds to it (cmatrixInitVal = false); Fixpipe F322F16 rounds to half
    c = (a[:, :32] @ b[:32]).astype(np.float32)
    c = (c.astype(np.float64) + a[:, 32:] @ b[32:]).astype(np.float32)
    return {"output_c.bin": c.astype(np.float16)}


def _argmax_rows(i: Arrays) -> Arrays:
    x = i["input_x.bin"].reshape(4, 256)
    out = np.zeros((4, 16), np.uint16)
    out[:, 0] = x.max(1).view(np.uint16)
    out[:, 1] = x.argmax(1)
    return {"output_y.bin": out}


def _distinct_halves(r: np.random.Generator) -> np.ndarray:
    return ((r.permutation(1024) - 512) / 16).astype(np.float16)  # exact in binary16, no ties


def _sorted_pairs(i: Arrays) -> Arrays:
    x = i["input_x.bin"]
    order = np.argsort(-x, kind="stable")
    out = np.empty((64, 2), np.uint32)
    out[:, 0] = x[order].view(np.uint32)
    out[:, 1] = order
    return {"output_y.bin": out}


def _compare_select(i: Arrays) -> Arrays:
    x = i["input_x.bin"]
    step = np.where(x >= np.float32(0.25), x, np.float32(-1))
    half = x * np.float32(0.5)
    return {"output_y.bin": np.where(step > half, step, half).astype(np.float32)}


def _bitwise(i: Arrays) -> Arrays:
    x = i["input_x.bin"]
    shl = (x.astype(np.int32) << 3).astype(np.int16)
    return {"output_y.bin": ((x >> 2) & np.int16(0x0FF0)) | ~shl}


def _fill_atomic(i: Arrays) -> Arrays:
    x = i["input_x.bin"]
    y = np.repeat(np.arange(8, dtype=np.float32), 64)
    for _ in range(8):  # 8 blocks add x in turn, each sum rounded to float
        y = (y + x).astype(np.float32)
    return {"output_y.bin": y}


def _block_reduce(i: Arrays) -> Arrays:
    x = i["input_x.bin"].astype(np.float64)
    blocks = x.reshape(128, 8)
    return {"output_y.bin": np.r_[blocks.sum(1).reshape(64, 2).sum(1), blocks.max(1)].astype(np.float32)}


SAMPLES: dict[str, Sample] = {
    "softmax_custom": Sample(lambda r: {"input_x.bin": f32(r, 4096, -3, 3)}, _softmax, rtol=1e-6),
    "layernorm_custom": Sample(
        lambda r: {"input_x.bin": f32(r, 512, -2, 2), "input_gamma.bin": f32(r, 32, 0.5, 1.5), "input_beta.bin": f32(r, 32)},
        _layernorm, rtol=1e-6, atol=1e-6),
    "matmul_custom": Sample(lambda r: {"input_a.bin": f16(r, 4096), "input_b.bin": f16(r, 2048)}, _matmul),
    "reduce_sum_custom": Sample(lambda r: {"input_x.bin": f32(r, 6400)},
                                lambda i: {"output_y.bin": i["input_x.bin"].astype(np.float64).reshape(32, 200).sum(1).astype(np.float32)},
                                rtol=1e-5, atol=1e-5),
    "reduce_max_index_custom": Sample(lambda r: {"input_x.bin": _distinct_halves(r)}, _argmax_rows),
    "gather_mask_custom": Sample(lambda r: {"input_x.bin": f32(r, 512)},
                                 lambda i: {"output_y.bin": np.r_[i["input_x.bin"][0::2], i["input_x.bin"][1::2]]}),
    "sort_custom": Sample(lambda r: {"input_x.bin": (r.permutation(64) * 0.25 - 8).astype(np.float32)}, _sorted_pairs),
    "compare_select_custom": Sample(lambda r: {"input_x.bin": f32(r, 1024)}, _compare_select),
    "transpose_custom": Sample(lambda r: {"input_x.bin": f16(r, 1024)},
                               lambda i: {"output_y.bin": i["input_x.bin"].reshape(4, 16, 16).transpose(0, 2, 1).copy()}),
    "bitwise_custom": Sample(lambda r: {"input_x.bin": r.integers(-32768, 32767, 1024, dtype=np.int16)}, _bitwise),
    "axpy_custom": Sample(lambda r: {"input_x.bin": f16(r, 2048), "input_y.bin": f32(r, 2048)},
                          lambda i: {"output_y.bin": (i["input_x.bin"].astype(np.float64) * 1.5
                                                      + i["input_y.bin"].astype(np.float64)).astype(np.float32)}),
    "pad_copy_custom": Sample(lambda r: {"input_x.bin": f16(r, 24 * 13, -8, 8)},
                              lambda i: {"output_y.bin": (i["input_x.bin"].astype(np.float64) + 1).astype(np.float16)}),
    "fill_gm_custom": Sample(lambda r: {"input_x.bin": f32(r, 512)}, _fill_atomic),
    "block_reduce_custom": Sample(lambda r: {"input_x.bin": f32(r, 1024)}, _block_reduce, rtol=1e-6, atol=1e-6),
    "add_custom": Sample(
        lambda r: {"input_x.bin": f16(r, 16384), "input_y.bin": f16(r, 16384)},
        lambda i: {"output_z.bin": i["input_x.bin"] + i["input_y.bin"]}),
    "legacy_leakyrelu_custom": Sample(
        lambda r: {"input_x.bin": f16(r, 4096, -4, 4)},
        lambda i: {"output_y.bin": np.where(i["input_x.bin"] >= 0, i["input_x.bin"],
                                            (i["input_x.bin"].astype(np.float32) * np.float32(0.125)).astype(np.float16))}),
    "syncall_custom": Sample(lambda r: {"input_x.bin": f32(r, 512)}, _syncall),
}
