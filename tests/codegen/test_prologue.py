"""Inputs staged once before their nest (`tile`: layernorm's gamma/beta, a bias) are the
*prologue* of the nest's phase (`transformer/lower/spread.py`): the kernel stays one phase,
spread over every vector core; every worker copies them once into a TBuf of its own UB
before its share of the tile loop. Plan checks without a compile, and emitted kernels
against the interpreter (remainder split, tails; under the sanitizers)."""

from __future__ import annotations

import pytest

from transformer import ir
from transformer.codegen import emit_ascendc
from transformer.lower.lower import lower_kernel
from transformer.lower.spread import kernel_spread, phase_spans
from transformer.targets import get_target

from .conftest import apply, check_emitted, example, kernel_text


def test_layernorm_with_its_prologue_is_one_phase_over_every_core() -> None:
    k = apply(example("layernorm", {"N": 1024, "H": 1024}), "fuse,tile,double_buffer")
    assert [type(s).__name__ for s in k.body] == ["Copy", "Copy", "For"]
    assert phase_spans(k) == [(0, 2)]
    plan = lower_kernel(k)
    assert len(plan.phases) == 1 and plan.block_dim == 48 and plan.phases[0].cores == 48
    assert kernel_spread(k, get_target("ascend910b2"))[2].cores == 48  # the tuner's estimate agrees
    bufs = {b.name: b for b in plan.phases[0].buffers}
    assert bufs["gamma_ub"].kind == bufs["beta_ub"].kind == "buf"  # written once: a TBuf, no queue
    assert bufs["X_ub"].kind == "que" and bufs["X_ub"].depth == 2
    # the copies run before the worker's loop, once
    text = [l.text for l in plan.phases[0].body]
    first_loop = next(i for i, t in enumerate(text) if t.startswith("for ("))
    assert sum("DataCopy(gamma_ubLocal" in t for t in text[:first_loop]) == 1
    assert not any("DataCopy(gamma_ubLocal" in t for t in text[first_loop:])
    assert not any("gamma" in l.text for m in plan.phases[0].methods if m.stage == "copy_in" for l in m.body)


PRO_TWO = """
kernel two(X: f32[N, C], b: f32[C]) -> (Y: f32[N, C], Z: f32[N, C]) {
  size N = 64
  size C = 64
  first: for i in 0..N {
    for c in 0..C {
      Y[i, c] = X[i, c] + b[c]
    }
  }
  second: for i in 0..N {
    for c in 0..C {
      Z[i, c] = X[i, c] * b[c]
    }
  }
}
"""


def test_each_nest_keeps_its_own_prologue() -> None:
    k = apply(kernel_text(PRO_TWO), "tile{first=8,second=8}")
    kinds = [type(s).__name__ for s in k.body]
    assert kinds == ["Copy", "For", "Copy", "For"]
    assert phase_spans(k) == [(0, 1), (2, 3)]
    plan = lower_kernel(k)
    assert len(plan.phases) == 2  # two phases, each with its own copy of `b`, each spread over the cores
    assert [ph.cores for ph in plan.phases] == [8, 8]
    # they write different outputs and only read the same inputs: no cross-block barrier
    assert plan.mode == "AIV_MODE" and "barrier" not in plan.phases[1].spread


@pytest.mark.slow
@pytest.mark.parametrize("name,sizes", [
    ("layernorm", {"N": 100, "H": 64}),   # 100 rows over 48 cores: a remainder
    ("rmsnorm", {"N": 37, "H": 48}),      # rows of 48 elements (not a multiple of a 256 B repeat)
])
def test_prologue_kernels_match_the_interpreter(name: str, sizes: dict[str, int]) -> None:
    k = example(name, sizes)
    t = apply(k, "fuse,tile,double_buffer")
    assert any(isinstance(s, ir.Copy) for s in t.body)
    em = emit_ascendc(t)
    assert em.plan is not None and em.plan.block_dim > 1
    check_emitted(t, k, emitted=em, sanitize=True, what=f"{name} {sizes} prologue")


@pytest.mark.slow
def test_two_phases_with_prologues_match_the_interpreter() -> None:
    k = kernel_text(PRO_TWO)
    t = apply(k, "tile{first=8,second=8},double_buffer")
    check_emitted(t, k, sanitize=True, what="two phases with prologues")
