"""Differential fuzz of emitted scalar arithmetic over dtype mixes and edge values.

Each case is one kernel over inputs of every dtype (i8, i32, f16, bf16, f32) and consts of
every dtype, with a few dozen outputs of random dtypes, each a random expression: `+ - * /`,
unary minus, `max min abs sqrt rsqrt`, casts, `select` with comparisons, weak literals,
the loop variable, and reductions (`+= *= max= min=`) into rank-0 outputs. Inputs are
drawn from edge values (0, -0.0, +-1, the integer extremes, the f16 maximum, division by
zero on purpose). The kernel compiles once; every output of the emitted code must equal
the interpreter's, run in program order, exactly (NaN matches NaN): these operations are correctly rounded on
both sides, so no tolerance is needed (`exp log tanh` are left to test_fuzz_emitted.py,
which compares within tolerances, since libm and numpy may differ by an ulp).

    ASCX_DTYPE_FUZZ_CASES=20 python -m pytest tests/codegen/test_dtype_fuzz.py -q   # hunt
    ASCX_DTYPE_FUZZ_SEED=123 ...                                                    # replay

`test_tiled_integer_arithmetic_equals_the_interpreter` does the same for i32 kernels after
`tile,double_buffer`, so the expressions run as vector code (issue 14: i32 `Add Sub Mul Max
Min`, their scalar forms, f32 <-> i32 `Cast`): wrap-around
and saturation on edge values, bit for bit, over a tile tail.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from transformer.codegen import build_and_run
from transformer.diagnostics import AscxError
from transformer.interp import run
from transformer.parser import parse

pytestmark = pytest.mark.slow

CASES = int(os.environ.get("ASCX_DTYPE_FUZZ_CASES", "2"))
SEED = int(os.environ.get("ASCX_DTYPE_FUZZ_SEED") or np.random.SeedSequence().entropy % (2**32))
N = 24
OUTPUTS = 32
DTYPES = ("i8", "i32", "f16", "bf16", "f32")
INPUTS = {"a": "i8", "b": "i8", "c": "i32", "d": "i32", "e": "f16", "f": "bf16", "g": "f32"}
EDGES = {
    "i8": [0, 1, -1, 2, -2, 3, 7, 100, -100, 127, -128, -127, 64, -64],
    "i32": [0, 1, -1, 2, -3, 7, 46341, -46341, 65536, 2**31 - 1, -(2**31), 100000, -100000, 2**30],
    "f16": [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 65504.0, -65504.0, 1e-3, 3.0, 100.0, 127.5],
    "bf16": [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.5, 1e30, -1e30, 1e-3, 3.0, 128.0, 3.0e38],
    "f32": [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.4e38, -3.4e38, 1e-3, 2147483520.0, -129.5, 1e-40],
}
INT_LITERALS = [0, 1, 2, 3, 7, 100, 127, 128, 255, 1000, 2147483647]
FLOAT_LITERALS = ["0.5", "1.0", "2.0", "0.1", "1.0e-3", "3.0e38", "65504.0", "inf"]


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def leaf(self) -> str:
        r = self.r.random()
        if r < 0.55:
            name = self.r.choice(sorted(INPUTS))
            return f"{name}[{self.r.choice(['i', 'N - 1 - i'])}]"
        if r < 0.7:
            return self.r.choice(["k_" + d for d in DTYPES])
        if r < 0.8:
            return "i"
        if r < 0.92:
            return str(self.r.choice(INT_LITERALS))
        return self.r.choice(FLOAT_LITERALS)

    def expr(self, depth: int) -> str:
        if depth == 0 or self.r.random() < 0.25:
            return self.leaf()
        r = self.r.random()
        sub = lambda: self.expr(depth - 1)  # noqa: E731
        if r < 0.45:
            return f"({sub()} {self.r.choice('+-*/')} {sub()})"
        if r < 0.55:
            return f"-{sub()}"
        if r < 0.7:
            return f"{self.r.choice(['max', 'min'])}({sub()}, {sub()})"
        if r < 0.8:
            return f"{self.r.choice(DTYPES)}({sub()})"
        if r < 0.88:
            return f"{self.r.choice(['abs', 'sqrt', 'rsqrt', 'abs'])}({sub()})"
        cmp = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        return f"select({sub()} {cmp} {sub()}, {sub()}, {sub()})"


def _kernel_text(rng: random.Random) -> tuple[str, int]:
    """A checked kernel with up to OUTPUTS outputs (statements the checker refuses, such
    as a literal that does not fit the type it takes, are drawn again)."""
    g = _Gen(rng)
    consts = [f"  const k_{d}: {d} = {rng.choice(EDGES[d][:8]) if d in ('i8', 'i32') else rng.choice(['0.5', '-1.5', '3.0', '-0.0'])}"
              for d in DTYPES]
    ins = ", ".join(f"{n}: {d}[N]" for n, d in INPUTS.items())
    outs: list[str] = []
    body: list[str] = []
    inits: list[str] = []
    tries = 0
    while len(outs) < OUTPUTS and tries < 10 * OUTPUTS:
        tries += 1
        dt = rng.choice(DTYPES)
        name = f"o{len(outs)}"
        e = g.expr(3)
        if rng.random() < 0.25:
            op = rng.choice(["+=", "*=", "max=", "min="])
            decl, init, stmt = f"{name}: {dt}", f"  {name} = {rng.choice(['0', '1', '-1', '2'])}", f"    {name} {op} {e}"
        else:
            decl, init, stmt = f"{name}: {dt}[N]", None, f"    {name}[i] = {e}"
        text = _assemble(ins, outs + [decl], consts, inits + ([init] if init else []), body + [stmt])
        try:
            parse(text, "fuzz.ir")
        except AscxError:
            continue
        outs.append(decl)
        body.append(stmt)
        if init:
            inits.append(init)
    return _assemble(ins, outs, consts, inits, body), len(outs)


def _assemble(ins: str, outs: list[str], consts: list[str], inits: list[str], body: list[str]) -> str:
    return (f"kernel fuzz({ins}) -> ({', '.join(outs)}) {{\n  size N = {N}\n" + "\n".join(consts) + "\n"
            + "\n".join(inits) + ("\n" if inits else "") + "  for i in 0..N {\n" + "\n".join(body) + "\n  }\n}\n")


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    from transformer.interp import convert

    return {n: convert(np.array([EDGES[d][j] for j in rng.integers(0, len(EDGES[d]), N)]), d)
            for n, d in INPUTS.items()}


@pytest.mark.parametrize("case", range(CASES))
def test_emitted_arithmetic_equals_the_interpreter(case: str) -> None:
    rng = random.Random(SEED * 1000 + int(case))
    text, n = _kernel_text(rng)
    assert n >= OUTPUTS // 2, f"generator produced only {n} checked statements (seed {SEED})"
    k = parse(text, "fuzz.ir")
    inputs = _inputs(np.random.default_rng([SEED, int(case)]))
    # The emitted code is scalar and runs in program order; the IR lets f32 `+=` / `*=`
    # reassociate (docs/ir.md), and the vectorised interpreter sums pairwise, which differs
    # in the last bits on cancelling sums (seed 2062953921: `o21 += c[N - 1 - i]`). The
    # exact reference for program order is the interpreter run iteration by iteration.
    want = run(k, inputs, vectorise=False)
    got = build_and_run(k, None, inputs)
    bad = []
    for t in k.outputs:
        w, o = np.asarray(want[t.name], np.float64), np.asarray(got[t.name], np.float64)
        same = (w == o) | (np.isnan(w) & np.isnan(o))
        if not same.all():
            j = int(np.argmin(same.reshape(-1)))
            bad.append(f"{t.name} ({t.dtype}) element {j}: emitted {o.reshape(-1)[j]!r}, interpreter {w.reshape(-1)[j]!r}")
    where = "\n".join(f"  {n}: {inputs[n].tolist()}" for n in INPUTS)
    assert not bad, (f"emitted code differs from the interpreter (ASCX_DTYPE_FUZZ_SEED={SEED}, case {case}):\n"
                     + "\n".join(bad) + f"\nkernel:\n{text}\ninputs:\n{where}")


TILED_N = 37  # a tail for every tile size `tile` picks


def _int_kernel_text(rng: random.Random) -> str:
    """i32 outputs of random expressions over two i32 inputs and an f32 input: `+ - *`,
    unary minus, `max min`, i32 literals and a const, `i32(g[i])`, `f32(..)` round trips
    (no division: it has no vector form, and one would make the whole nest scalar)."""
    def expr(depth: int) -> str:
        if depth == 0 or rng.random() < 0.25:
            return rng.choice(["c[i]", "d[i]", "c[i]", "k", "3", "100", "2147483647", "i32(g[i])"])
        r = rng.random()
        if r < 0.5:
            return f"({expr(depth - 1)} {rng.choice('+-*')} {expr(depth - 1)})"
        if r < 0.6:
            return f"-{expr(depth - 1)}"
        if r < 0.8:
            return f"{rng.choice(['max', 'min'])}({expr(depth - 1)}, {expr(depth - 1)})"
        return f"i32(f32({expr(depth - 1)}) * 0.5)"

    outs = [f"o{j}: i32[N]" for j in range(8)]
    body = [f"    o{j}[i] = {expr(3)}" for j in range(8)]
    return (f"kernel ifuzz(c: i32[N], d: i32[N], g: f32[N]) -> ({', '.join(outs)}) {{\n  size N = {TILED_N}\n"
            f"  const k: i32 = {rng.choice(EDGES['i32'])}\n  for i in 0..N {{\n" + "\n".join(body) + "\n  }\n}\n")


@pytest.mark.parametrize("case", range(CASES))
def test_tiled_integer_arithmetic_equals_the_interpreter(case: str) -> None:
    from passes.base import parse_pipeline, run_pipeline

    rng = random.Random(SEED * 1000 + 500 + int(case))
    text = _int_kernel_text(rng)
    k = parse(text, "ifuzz.ir")
    t = run_pipeline(k, parse_pipeline("tile,double_buffer"), None)[0]
    g = np.random.default_rng([SEED, 500 + int(case)])
    pick = lambda d: np.array([EDGES[d][j] for j in g.integers(0, len(EDGES[d]), TILED_N)])  # noqa: E731
    inputs = {"c": pick("i32").astype(np.int32), "d": pick("i32").astype(np.int32), "g": pick("f32").astype(np.float32)}
    want = run(k, inputs)
    from transformer.lower import lower_kernel

    assert not [n.fallback for n in lower_kernel(t).nests if n.fallback], "the tiled i32 nest is not vector code"
    got = build_and_run(t, None, inputs)
    bad = [f"{n}[{int(np.argmax(got[n] != want[n]))}]" for n in want if not np.array_equal(got[n], want[n])]
    assert not bad, (f"tiled i32 code differs from the interpreter (ASCX_DTYPE_FUZZ_SEED={SEED}, case {case}): {bad}\n"
                     f"kernel:\n{text}\ninputs:\n" + "\n".join(f"  {n}: {v.tolist()}" for n, v in inputs.items()))
