"""The public Python API (`transformer/api.py`) over the driver: what a notebook user does."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer import api
from transformer.diagnostics import AscxError, BadParameter, UsageError

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = str(ROOT / "examples" / "softmax.ir")


def test_parse_transform_check_verify_round_trip() -> None:
    k = api.parse(SOFTMAX, sizes={"R": 8, "C": 64})
    assert k.size_values()["C"] == 64
    trace: list = []
    t = api.transform(k, "fuse,tile", trace=trace)
    assert [e.pass_text.split("{")[0] for e in trace] == ["fuse", "tile"]
    assert "local" in api.print_kernel(t)  # tile staged on-chip buffers
    assert api.check(t).status == "sat"
    rep = api.verify(k, t, trials=1, seed=3)
    assert rep.ok and rep.seed == 3 and {o.name for o in rep.outputs} == {"Y"}


def test_parse_accepts_text_and_reports_located_errors() -> None:
    k = api.parse("kernel k(A: f32[N]) -> (B: f32[N]) {\n  size N = 4\n  for i in 0..N { B[i] = A[i] }\n}\n")
    assert k.name == "k"
    with pytest.raises(AscxError) as info:
        api.parse("kernel k(A: f32[N]) -> (B: f32[N]) {\n  size N = 4\n  for i in 0..N { B[i] = Q[i] }\n}\n")
    assert info.value.loc is not None and info.value.loc.line == 3
    assert "^" in info.value.render()


def test_emit_returns_ascend_c_for_the_named_target() -> None:
    k = api.parse(str(ROOT / "examples" / "add.ir"), sizes={"M": 16, "N": 64})
    em = api.emit(api.transform(k, "tile"), target="ascend310p")
    assert "__aicore__" in em.source and "TPipe" in em.source


def test_refusals_and_unknown_targets_are_typed() -> None:
    k = api.parse(str(ROOT / "examples" / "matmul.ir"))
    with pytest.raises(BadParameter) as info:
        api.transform(k, "unroll{mm.k=100000}")
    assert info.value.param == "factor"
    with pytest.raises(UsageError, match="unknown target"):
        api.check(k, target="ascend999")
