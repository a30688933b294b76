"""The capacity proof covers what the emitted kernel allocates (issue 11): whenever
`ascx check` says a transformed kernel fits, the lowering reports no fallback caused by
capacity, and the UB (and L1/L0) the emitted plan allocates — TQue/TBuf sizes summed from
the plan — equals the total `ascx check` prints.  Over every example with its documented
pipelines (and `tile` alone), and over random elementwise/reduction kernels."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from allocation import capacity_fallbacks, plan_totals
from documented import ROWS
from small_kernels import SWIGLU
from passes.base import run_pipeline
from transformer.capacity import check_kernel_capacity, kernel_buffers
from transformer.lower import lower_kernel
from transformer.parser import parse, parse_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGET = "ascend910b2"


def assert_proof_matches_plan(kernel, what: str) -> str:
    """Check the kernel; when it fits, the plan has no capacity fallback and the same
    totals.  Returns the verdict."""
    res = check_kernel_capacity(kernel, TARGET)
    plan = lower_kernel(kernel, TARGET)
    if res.status != "sat":
        return res.status
    assert not capacity_fallbacks(plan), f"{what}: check says fits, but {capacity_fallbacks(plan)}"
    printed = {s: u.total for s, u in res.per_scope.items()}
    assert printed == plan_totals(plan, TARGET), f"{what}\n{res.format_table()}\n{plan.summary()}"
    return res.status


@pytest.mark.parametrize("name,pipeline", ROWS + [(n, "tile") for n in sorted(
    {n for n, _ in ROWS})], ids=lambda x: x)
def test_examples_plan_equals_proof(name: str, pipeline: str) -> None:
    k, _ = run_pipeline(parse_file(str(EXAMPLES / f"{name}.ir")), pipeline, TARGET)
    assert assert_proof_matches_plan(k, f"{name} `{pipeline}`") == "sat"


def test_swiglu_vectorises_under_tile_double_buffer_and_check_lists_temporaries() -> None:
    """The issue's kernel: the solver leaves room for the lowering's temporaries, so the
    nest is vectorised; `ascx check` lists them with their origin."""
    k, _ = run_pipeline(parse(SWIGLU), "tile,double_buffer", TARGET)
    plan = lower_kernel(k, TARGET)
    assert not [n for n in plan.nests if n.fallback], plan.summary()
    assert not plan.warnings
    bufs = kernel_buffers(k, TARGET)
    tmp = [b for b in bufs if b.origin.startswith("vector temporaries")]
    assert len(tmp) == 1 and "nest `t`" in tmp[0].origin and "Cast staging" in tmp[0].origin
    res = check_kernel_capacity(k, TARGET)
    assert res.status == "sat"
    assert tmp[0].name in [r.buffer for r in res.per_scope["ub"].rows]
    assert assert_proof_matches_plan(k, "swiglu") == "sat"


def test_largest_tiles_that_fit_without_temporaries_are_refused() -> None:
    """The tiles the old model chose (192 KiB of buffers, headroom 0): the proof now
    includes the 3 KiB of temporaries, says unsat, and the plan falls back for capacity —
    the two agree."""
    k, _ = run_pipeline(parse(SWIGLU), "tile{g.t=64,g.h=256},double_buffer", TARGET)
    res = check_kernel_capacity(k, TARGET)
    assert res.status == "unsat" and "tmpBuf0" in res.message
    assert capacity_fallbacks(lower_kernel(k, TARGET))


UNARY = ["exp({})", "-{}", "max({}, 0.0)", "({} * 0.5)", "({} + 1.0)", "abs({})"]


def random_kernel(rng: random.Random) -> tuple[str, str]:
    """A random elementwise or row-reduction kernel and a pipeline for it."""
    rows, cols = rng.choice([8, 32, 96, 256]), rng.choice([16, 40, 128, 512, 2048])
    dt = rng.choice(["f16", "f32"])
    x = f"f32(X[r, c])" if dt == "f16" else "X[r, c]"
    e = x
    for _ in range(rng.randint(1, 4)):
        e = rng.choice(UNARY).format(e)
    if rng.random() < 0.5:
        e = f"({e} * f32(W[r, c]))" if dt == "f16" else f"({e} * W[r, c])"
    out = f"{dt}({e})" if dt == "f16" else e
    if rng.random() < 0.5:
        body = f"for c in 0..C {{ Y[r, c] = {out} }}"
        outs, temps = f"Y: {dt}[R, C]", ""
    else:
        op = rng.choice(["max=", "+="])
        init = "-inf" if op == "max=" else "0.0"
        body = (f"m[r] = {init}\n    for c in 0..C {{ m[r] {op} {e} }}\n"
                f"    for c in 0..C {{ Y[r, c] = {dt}({x} - m[r]) }}")
        outs, temps = f"Y: {dt}[R, C]", "  temp m: f32[R]\n"
    src = (f"kernel rk(X: {dt}[R, C], W: {dt}[R, C]) -> ({outs}) {{\n  size R = {rows}\n"
           f"  size C = {cols}\n{temps}  n: for r in 0..R {{\n    {body}\n  }}\n}}\n")
    tr, tc = rng.choice([1, 2, 4, 8, 16, 32, rows]), rng.choice([8, 16, 32, cols])
    pipeline = rng.choice(["tile", "tile,double_buffer", f"tile{{n={min(tr, rows)}}},double_buffer",
                           f"tile{{n={min(tr, rows)},n.c={min(tc, cols)}}}"])
    return src, pipeline


def test_random_kernels_plan_equals_proof() -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    verdicts = []
    for i in range(12):
        src, pipeline = random_kernel(rng)
        try:
            k, _ = run_pipeline(parse(src), pipeline, TARGET)
        except Exception as e:  # a pass refusing the random request is fine
            from transformer.diagnostics import AscxError
            if not isinstance(e, AscxError):
                raise
            continue
        verdicts.append(assert_proof_matches_plan(k, f"seed {seed} case {i} `{pipeline}`:\n{src}"))
    assert "sat" in verdicts, f"seed {seed}: no case fitted"
