"""The pattern registry and selector (`transformer/lower/patterns/`): every pattern of a
site is tried, refusals keep their reasons, the price chooses (ties by name, not by list
order), and the documented example pipelines pick the patterns they always did."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from transformer import ir
from transformer.driver import emit, load, resolve_target, transform
from transformer.lower import patterns
from transformer.lower.patterns.base import Ctx, Match, Reason
from transformer.lower.patterns.select import select
from transformer.parser import parse


@dataclass
class _Fake:
    name: str
    cost: float | None  # None: refuses
    site: str = "nest"
    summary: str = "a test pattern"

    def match(self, desc, ctx):  # type: ignore[no-untyped-def]
        return Reason(self.name, f"{self.name} refuses") if self.cost is None else Match(self.name, desc)

    def price(self, m, ctx):  # type: ignore[no-untyped-def]
        return self.cost

    def emit(self, m, ctx):  # type: ignore[no-untyped-def]
        return [self.name]


class _Low:
    sizes = {"N": 8}
    info: dict = {}
    decls: dict = {}


class _Pe:
    low = _Low()


def _loop() -> ir.For:
    k = parse("kernel f(X: f32[N]) -> (Y: f32[N]) {\n  size N = 8\n  n: for j in 0..N {\n    Y[j] = X[j]\n  }\n}\n")
    return k.body[0]  # type: ignore[return-value]


@pytest.mark.parametrize("fakes,chosen", [
    ([_Fake("b", 5.0), _Fake("a", 9.0), _Fake("c", None)], "b"),  # the cheaper, not the first
    ([_Fake("z", 3.0), _Fake("m", 3.0)], "m"),  # a tie: the name order
    ([_Fake("x", None), _Fake("y", None)], None),
])
def test_the_price_chooses_and_every_refusal_is_kept(fakes, chosen, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(patterns, "REGISTRY", fakes)
    sel = select("nest", Ctx(_Pe(), _loop(), 0))  # type: ignore[arg-type]
    assert (sel.chosen.pattern if sel.chosen else None) == chosen
    assert {r.pattern for r in sel.refusals} == {f.name for f in fakes if f.cost is None}
    assert all(r.text.endswith("refuses") for r in sel.refusals)
    assert [t[0] for t in sel.tried()] == [f.name for f in fakes]  # registry order in the record


def test_registry_names_are_unique_and_every_pattern_is_described() -> None:
    names = [p.name for p in patterns.REGISTRY]
    assert len(names) == len(set(names)) >= 10
    for p in patterns.REGISTRY:
        assert p.site in patterns.SITES and p.summary and p.summary[0].islower()


# What each documented pipeline's nests chose before the selector existed (the lowering then
# picked by call order): the selector must pick the same pattern for each — but attention's
# P·V, once `interchanged` (a C++ loop over the keys), is `vecmat` since issue 28 (d28).
ROOT = Path(__file__).resolve().parents[2]
PINNED = {
    ("attention", "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer"):
        ["rows2d", "distributed", "vector-1d", "vector-1d", "vector-1d", "vecmat", "rows2d"],
    ("conv2d", "layout{X=NHWC},tile,double_buffer"): ["collapsed-2d", "distributed"],
    ("softmax", "fuse,tile,double_buffer"): ["rows2d"],
    ("attention", "tile"): ["cube-mmad", "collapsed-2d", "rows2d", "vector-1d", "distributed"],
    ("layernorm", "fuse,tile,double_buffer"): ["vector-1d", "vector-1d", "vector-1d"],
    ("rmsnorm", "fuse,tile,double_buffer"): ["vector-1d", "vector-1d"],
    ("matmul", "tile{mm.i=64,mm.j=64,mm.k=64},double_buffer"): ["cube-mmad", "cube-mmad", "cube-mmad"],
    ("softmax", "fuse,reciprocal,tile,double_buffer"): ["rows2d"],
}


@pytest.mark.parametrize("name,pipeline", sorted(PINNED))
def test_examples_pick_the_patterns_they_always_did(name: str, pipeline: str) -> None:
    t = resolve_target(None)
    k, _ = transform(load(str(ROOT / "examples" / f"{name}.ir")).kernel, pipeline, t)
    plan = emit(k, t).plan
    assert plan is not None
    assert [n.pattern for n in plan.nests if n.pattern] == PINNED[(name, pipeline)]
    assert not any(n.fallback for n in plan.nests)


def test_a_scalar_fallback_keeps_every_refusal_and_explain_names_them() -> None:
    """An untiled nest (GM operands) goes scalar: its plan record keeps each `nest` pattern's
    reason, `--plan` prints them and `--explain` lists them under the fallback."""
    from transformer.cli_emit import refusal_lines

    t = resolve_target(None)
    k = parse("kernel f(X: f32[M, N]) -> (Y: f32[M, N]) {\n  size M = 4\n  size N = 64\n  n: for i in 0..M {\n"
              "    for j in 0..N {\n      Y[i, j] = X[i, j] * 2.0\n    }\n  }\n}\n")
    plan = emit(k, t).plan
    assert plan is not None
    (nest,) = [n for n in plan.nests if n.fallback]
    refused = {name: why for name, price, why in nest.tried if price is None}
    assert set(refused) == {p.name for p in patterns.REGISTRY if p.site == "nest"}
    assert refused["vector-1d"] == nest.fallback and "not a UB local" in nest.fallback
    assert "refused by vector-1d: `Y` is not a UB local" in plan.summary()
    text = "\n".join(refusal_lines(nest.tried, ""))
    assert text.startswith("no pattern applies") and "collapsed-2d: " in text and "distributed: " in text


def test_ascx_patterns_lists_the_registry_and_a_file_s_choices() -> None:
    from click.testing import CliRunner

    from transformer.cli import main

    r = CliRunner().invoke(main, ["patterns"])
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert [ln.split()[0] for ln in lines] == [p.name for p in patterns.REGISTRY]
    r = CliRunner().invoke(main, ["patterns", str(ROOT / "examples" / "softmax.ir"), "--passes", "fuse,tile,double_buffer"])
    assert r.exit_code == 0, r.output
    assert ": rows2d" in r.output and "row-context    matches, about" in r.output


def test_a_distributed_nest_records_what_each_inner_pattern_said() -> None:
    """P·V of attention after `tile`: the key loop `j` takes `axpy`; `dot` says why not (its
    old bail-out was a silent `return None`)."""
    t = resolve_target(None)
    k, _ = transform(load(str(ROOT / "examples" / "attention.ir"), {"S": 128, "D": 16}).kernel, "tile", t)
    plan = emit(k, t).plan
    assert plan is not None
    (pv,) = [n for n in plan.nests if n.pattern == "distributed"]
    (var, tried), = pv.inner_tried
    said = {name: (price, why) for name, price, why in tried}
    assert var == "j" and pv.inner == ("axpy",)
    assert said["axpy"][0] is not None and said["dot"][0] is None and "V_ub" in said["dot"][1]
    assert said["contract"][1] == "the distributed loop holds no reduction over a nest of loops"


def test_explain_lists_the_refusals_under_each_fallback(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`emit --explain`'s report (the profile replaced by fixed costs: the listing is tested here,
    the shares in tests/codegen/test_vector_whole_tile.py)."""
    from types import SimpleNamespace

    from transformer import cli_emit
    from transformer.timing import explain

    tried = (("vector-1d", None, "`Y` is not a UB local"), ("collapsed-2d", None, "not a perfect 2-D nest"))
    costs = [explain.FallbackCost("k.ir:3:5 `j`", "`Y` is not a UB local", 900.0, 0.9, tried)]
    run = SimpleNamespace(details={"busy_cycles_all_cores": 1000.0, "cores_run": 1}, cycles=1200.0)
    monkeypatch.setattr(explain, "fallback_costs", lambda em, target: (costs, run))
    text = cli_emit.explain_fallbacks(None, resolve_target(None))
    lines = text.splitlines()
    assert "k.ir:3:5 `j`: `Y` is not a UB local" in lines[1]
    assert lines[2].strip().startswith("no pattern applies")
    assert lines[3].strip() == "vector-1d: `Y` is not a UB local" and lines[4].strip() == "collapsed-2d: not a perfect 2-D nest"


def test_ascx_patterns_shows_the_nest_descriptor() -> None:
    from click.testing import CliRunner

    from transformer.cli import main

    r = CliRunner().invoke(main, ["patterns", str(ROOT / "examples" / "add.ir"), "--passes", "tile", "--size", "M=64", "--size", "N=64"])
    assert r.exit_code == 0, r.output
    assert "shape: loops i:" in r.output and "C_ub= contiguous (ub f16)" in r.output
