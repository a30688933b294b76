"""The primitives `tile` is composed of, as passes of their own: `split` (strip-mine with
tails), `stage` (copy what one iteration of a loop touches into an on-chip buffer) and
`fission` (split the epilogue off a cube matmul nest). Differential tests on fresh random
inputs, every instance of their `space()` on every example, refusals by class and fields,
and `tile` = `split` + `stage` where no sinking is involved. Golden text:
`tests/passes/golden/{split,stage,fission}/`."""

from __future__ import annotations

import pytest

from passes.base import registry
from passes.fission import Fission
from passes.split import Split
from passes.stage import Stage
from passes_testutil import SMALL_SIZES, apply, equivalent, example, kernel, roundtrips
from test_tile import ROWSUM  # rows: for r { Y[r] = 0.0; for c { Y[r] += X[r, c] } }, R = 8, C = 16
from transformer.diagnostics import (BadParameter, CapacityExceeded, DependenceViolation, NotApplicable,
                                     UnknownLoop)
from transformer.printer import print_kernel

PV = """
kernel pv(P: f16[S, S], V: f16[S, D], sm: f32[S]) -> (O: f16[S, D]) {
  size S = 4
  size D = 2
  temp acc: f32[S, D]
  pv: for i in 0..S {
    for d in 0..D {
      acc[i, d] = 0.0
      for j in 0..S { acc[i, d] += f32(P[i, j]) * f32(V[j, d]) }
      O[i, d] = f16(acc[i, d] / sm[i])
    }
  }
}
"""

# the epilogue reads the accumulator of the *next* row: running it after the whole matmul
# would read finished sums where the original read partial ones
PV_BACKWARD = PV.replace("O[i, d] = f16(acc[i, d] / sm[i])", "O[i, d] = f16(acc[S - 1 - i, d] / sm[i])")

DIFFERENTIAL = [
    ("add", "split{ew.i=4}"), ("add", "split{ew.i=4,ew.j=3}"), ("add", "split{ew.j=10}"),
    ("softmax", "fuse,split{rmax.c=5}"), ("matmul", "split{mm.k=3},interchange{mm,mm.j}"),
    ("attention", "split{qk.j=5}"), ("conv2d", "split{conv.x=2}"),
    ("add", "split{ew.i=4},stage{A=ew,C=ew}"), ("add", "split{ew.i=4},stage{B=ew.i}"),
    ("softmax", "fuse,split{rmax=4},stage{X=rmax,Y=rmax}"), ("layernorm", "split{mean=4},stage{X=mean}"),
    ("matmul", "split{mm.i=4},stage{A=mm}"), ("attention", "round_operand{pv.s=f16},fission"),
    ("attention", "round_operand{pv.s=f16},fission{pv},split{pv_epi=5}"),
]


@pytest.mark.parametrize("name,pipeline", DIFFERENTIAL)
def test_primitives_preserve_outputs(name: str, pipeline: str) -> None:
    k = example(name)
    out = apply(k, pipeline)
    assert out != k
    assert roundtrips(out)
    assert equivalent(k, out, trials=2) == []


def test_registered_with_a_schema() -> None:
    reg = registry()
    for name, cls in (("split", Split), ("stage", Stage), ("fission", Fission)):
        assert reg[name] is cls and cls.params is not None
        assert cls.params_doc == cls.schema().doc() and cls.params.example in cls.params_doc


@pytest.mark.parametrize("cls", [Split, Stage, Fission], ids=lambda c: c.name)
def test_every_space_instance_applies_and_preserves_outputs(cls: type) -> None:
    """What the tuner and the property test draw: every instance on every example applies,
    round-trips its text, and keeps the outputs."""
    seen = 0
    for name in sorted(SMALL_SIZES):
        k = example(name)
        if cls is Fission:
            k = apply(k, "round_operand{pv.s=f16}") if name == "attention" else k
        for p in cls.space(k, None):
            assert p.check_params(k) == [], p
            assert type(p).from_args(list(_items(p))) == p
            out = p.apply(k, None)
            assert out != k, p.to_text()
            assert equivalent(k, out, trials=1) == [], f"{name}: {p.to_text()}"
            seen += 1
    assert seen >= (1 if cls is Fission else 10)


def _items(p):  # type: ignore[no-untyped-def]
    from passes.base import split_pipeline

    ((_, args),) = split_pipeline(p.to_text())
    return args


def test_tile_is_split_then_stage_when_nothing_sinks() -> None:
    """One loop tiled: `tile` is `split` and then `stage` at the tile loop, text for text."""
    assert print_kernel(apply(ROWSUM, "tile{rows=4}")) == print_kernel(apply(ROWSUM, "split{rows=4},stage{X=rows,Y=rows}"))
    add = example("add")
    assert print_kernel(apply(add, "tile{ew.i=2}")) == print_kernel(apply(add, "split{ew.i=2},stage{A=ew,B=ew,C=ew}"))


def test_tile_runs_fission_first() -> None:
    k = apply(kernel(PV), "fission")
    assert [s.label for s in k.body] == ["pv", "pv_epi"]
    tiled = apply(kernel(PV), "tile{pv.i=2}")
    assert [s.label for s in tiled.body] == ["pv", "pv_epi"]


# --------------------------------------------------------------------------------------
# refusals: class and fields


def _refusal(text_or_kernel, pipeline: str, cls: type):  # type: ignore[no-untyped-def]
    with pytest.raises(cls) as info:
        apply(text_or_kernel, pipeline, strict=True)
    return info.value


def test_split_refusals() -> None:
    e = _refusal(ROWSUM, "split{rows.q=4}", UnknownLoop)
    assert (e.pass_name, e.name) == ("split", "rows.q") and "rows" in " ".join(e.hint.split())
    e = _refusal(ROWSUM, "split{rows.c=17}", BadParameter)
    assert (e.pass_name, e.param, e.value, e.loops) == ("split", "rows.c", 17, ("rows.c",))
    assert e.accepted == (8, 16) and e.loc is not None
    e = _refusal(ROWSUM, "split{rows=0}", BadParameter)  # the kind Int(1), at the pipeline column
    assert e.pass_name == "split" and e.value == "0"
    e = _refusal(ROWSUM, "split{rows=2,r=2}", BadParameter)
    assert e.param == "r" and "named twice" in e.message
    tri = ROWSUM.replace("for c in 0..C", "for c in 0..r")
    e = _refusal(tri, "split{rows.c=2}", NotApplicable)
    assert e.loops == ("rows.c",) and "depend on other loops" in e.message
    gemm = apply(example("matmul"), "gemm")
    e = _refusal(gemm, "split{mm.k=4}", NotApplicable)
    assert e.loops == ("mm.k",) and "@gemm" in e.message


def test_stage_refusals() -> None:
    split = apply(ROWSUM, "split{rows=4}")
    e = _refusal(split, "stage{X=rows.q}", UnknownLoop)
    assert (e.pass_name, e.name) == ("stage", "rows.q")
    e = _refusal(split, "stage{Q=rows}", NotApplicable)
    assert (e.pass_name, e.loops) == ("stage", ("rows",)) and "not accessed" in e.message
    e = _refusal(split, "stage{Y=rows.c}", NotApplicable)  # `Y[r] = 0.0` is outside the `c` loop
    assert e.loops == ("c",) and "outside that loop" in e.message
    rev = apply(ROWSUM.replace("X[r, c]", "X[R - 1 - r, c]"), "split{rows=4}")  # rows walked backwards
    e = _refusal(rev, "stage{X=rows}", NotApplicable)
    assert (e.pass_name, e.loops) == ("stage", ("rows",)) and "not a box" in e.message
    big = example("add", {"M": 2, "N": 1 << 20})
    e = _refusal(big, "stage{A=ew}", CapacityExceeded)
    assert (e.pass_name, e.scope) == ("stage", "ub") and e.need_bytes == 2 * (1 << 20) > e.budget_bytes  # one row of f16 per `i`


def test_fission_refusals() -> None:
    e = _refusal(example("add"), "fission{ew}", NotApplicable)
    assert (e.pass_name, e.loops) == ("fission", ("ew",)) and "no epilogue" in e.message
    e = _refusal(kernel(PV_BACKWARD), "fission{pv}", DependenceViolation)
    assert (e.pass_name, e.loops) == ("fission", ("pv",))
    e = _refusal(example("matmul"), "fission{mm.j}", NotApplicable)
    assert "not a nest" in e.message
    # without names, nothing to do is a no-op (an error only under strict)
    assert apply(kernel(PV_BACKWARD), "fission") == kernel(PV_BACKWARD)
