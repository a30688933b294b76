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


SAMPLES: dict[str, Sample] = {
    "add_custom": Sample(
        lambda r: {"input_x.bin": f16(r, 16384), "input_y.bin": f16(r, 16384)},
        lambda i: {"output_z.bin": i["input_x.bin"] + i["input_y.bin"]}),
    "legacy_leakyrelu_custom": Sample(
        lambda r: {"input_x.bin": f16(r, 4096, -4, 4)},
        lambda i: {"output_y.bin": np.where(i["input_x.bin"] >= 0, i["input_x.bin"],
                                            (i["input_x.bin"].astype(np.float32) * np.float32(0.125)).astype(np.float16))}),
    "syncall_custom": Sample(lambda r: {"input_x.bin": f32(r, 512)}, _syncall),
}
