"""Every pipeline documented in examples/README.md verifies, at small sizes and at the
default sizes; the attention pipeline's CLI output re-parses and prints identically and
ends as one fused nest over K/V blocks."""

from __future__ import annotations

import re

import pytest

from passes_testutil import ROOT, apply, cli, equivalent, example, parse, print_kernel, roundtrips
from documented import ALL_MAIN
from transformer import ir

PIPELINES = ALL_MAIN  # name -> (first documented pipeline, small sizes), the operators included


def test_readme_documents_a_pipeline_for_every_example() -> None:
    assert set(PIPELINES) == {p.stem for p in (ROOT / "examples").glob("*.ir")}


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("which", ["small", "default"])
def test_pipeline_verifies(name: str, which: str) -> None:
    pipeline, small = PIPELINES[name]
    k = example(name, small if which == "small" else {})
    out = apply(k, pipeline)
    assert roundtrips(out)
    assert equivalent(k, out, trials=1) == []


def test_attention_is_one_fused_nest_over_kv_blocks() -> None:
    pipeline, small = PIPELINES["attention"]
    out = apply(example("attention", small), pipeline)
    assert len(out.body) == 1
    nest = out.body[0]
    assert isinstance(nest, ir.For) and nest.label == "attn"
    kv = [lp for lp in ir.iter_loops(nest.body) if lp.label == "kv"]
    assert len(kv) == 1 and kv[0].annotation("pipeline") is not None
    assert all(b.kind == "local" for b in out.buffers)  # every temp contracted on chip


def test_cli_transform_output_reparses_identically() -> None:
    pipeline, _ = PIPELINES["attention"]
    r = cli("transform", "examples/attention.ir", "--passes", pipeline)
    assert r.returncode == 0, r.stderr
    k = parse(r.stdout, "out.ir")
    assert print_kernel(k) == r.stdout


def test_cli_verify_attention_small() -> None:
    pipeline, small = PIPELINES["attention"]
    args = ["verify", "examples/attention.ir", "--passes", pipeline, "--trials", "1"]
    for n, v in small.items():
        args += ["--size", f"{n}={v}"]
    r = cli(*args)
    assert r.returncode == 0, r.stdout + r.stderr
