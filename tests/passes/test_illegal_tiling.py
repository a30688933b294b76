"""Illegal requests to tile, double_buffer, layout and online_softmax: each refused with
the pass name, the reason and a location, and no traceback through the CLI."""

from __future__ import annotations

import pytest

from passes_testutil import apply, cli, example, kernel
from passes.base import PassError, PipelineError
from test_double_buffer import CARRIED, GM_WAR

CAUSAL_BOUNDS = """
kernel tri(X: f32[N, N]) -> (Y: f32[N]) {
  size N = 8
  rows: for i in 0..N {
    Y[i] = 0.0
    for j in 0..i + 1 {
      Y[i] += X[i, j]
    }
  }
}
"""

CASES = [
    # (kernel, pipeline, pass name, words in the message)
    ("add", "tile{ew.i=0}", "tile", ["tile size 0", "`ew.i`", "at least 1"]),
    ("add", "tile{ew.j=11}", "tile", ["larger than the loop's extent 10"]),
    ("add", "tile{ew.q=4}", "tile", ["no loop named `ew.q`"]),
    ("add", "tile{ew.i=2,ew.i=2}", "tile", ["`ew.i` given twice"]),  # the schema (passes/params.py) refuses it
    ("add", "tile{ew.i=2,i=2}", "tile", ["named twice"]),  # two names of one loop: refused by the pass
    ("attention", "tile{qk.i=4,pv.i=4,pv.d=2,qk.k=2,bias.j=2,rmax.i=2,rmax.j=2,expo.i=0}", "tile", ["tile size 0"]),
    ("matmul", "tile{mm.i=99999}", "tile", ["larger than the loop's extent"]),
    (CAUSAL_BOUNDS, "tile{rows.j=2}", "tile", ["depend on other loops"]),
    (CARRIED, "double_buffer{loop=blk}", "double_buffer", ["`y_ub`", "read at line", "written at line"]),
    (GM_WAR, "double_buffer{loop=blk}", "double_buffer", ["`t`", "read at line 9:5", "written at line 13:5"]),
    ("add", "double_buffer", "double_buffer", ["run `tile` first"]),
    ("add", "tile{ew.i=2},double_buffer{loop=ew.j}", "double_buffer", ["stages no buffers"]),
    ("add", "layout{Z=NZ}", "layout", ["no tensor named `Z`"]),
    ("add", "layout{A=NHWC}", "layout", ["cannot convert `A` from ND to NHWC"]),
    ("conv2d", "layout{X=NZ}", "layout", ["cannot convert `X` from NCHW to NZ"]),
    ("conv2d", "layout{X=NC1HWC0}", "layout", ["not a multiple of 16"]),
    ("matmul", "layout{A=NZ}", "layout", ["not a multiple of 16"]),
    ("add", "online_softmax", "online_softmax", ["row max", "has none"]),
    ("softmax", "online_softmax", "online_softmax", ["weighted sum"]),
    ("attention", "online_softmax{block=5}", "online_softmax", ["does not divide"]),
]


@pytest.mark.parametrize("src,pipeline,pass_name,words", CASES)
def test_refused(src: str, pipeline: str, pass_name: str, words: list[str]) -> None:
    k = example(src) if "\n" not in src else kernel(src)
    with pytest.raises(PassError) as e:
        apply(k, pipeline, strict=True)  # a pass with nothing to do is an error only under --strict
    msg = str(e.value)
    assert f"{pass_name}: " in msg
    for w in words:
        assert w in msg, msg
    assert e.value.loc is not None or e.value.hint


def test_bad_tile_value_is_pipeline_error() -> None:
    with pytest.raises(PipelineError):
        apply(example("add"), "tile{ew.i=big}")
    with pytest.raises(PipelineError):
        apply(example("add"), "tile{ew.i}")


@pytest.mark.parametrize("pipeline", ["tile{ew.i=0}", "layout{A=NHWC}", "online_softmax", "double_buffer"])
def test_cli_no_traceback(pipeline: str) -> None:
    r = cli("transform", "examples/add.ir", "--passes", pipeline, "--strict")
    assert r.returncode != 0
    assert "Traceback" not in r.stderr + r.stdout
    assert "error:" in r.stderr + r.stdout
