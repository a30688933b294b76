"""Pattern `window` (transformer/lower/patterns/window.py): depthwise convolution and pooling
over staged tiles as Gathers of the shifted planes and one vector instruction per window
offset. The emitted kernels run on the emulator under sanitizers in
tests/codegen/test_operators.py (the one shared build: dwconv3x3 and maxpool at their small
sizes take this pattern, checked here); these tests check the selection and its refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from transformer import api
from transformer.codegen import emit_ascendc
from transformer.parser import parse, parse_file
from passes.base import parse_pipeline, run_pipeline

from documented import OPERATORS

ROOT = Path(__file__).resolve().parents[2]


def example(name: str, sizes: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    k = parse_file(str(ROOT / "examples" / f"{name}.ir"))
    return k.with_sizes(sizes) if sizes else k


def apply(k, pipeline: str):  # type: ignore[no-untyped-def]
    return run_pipeline(k, parse_pipeline(pipeline))[0]


def fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy % (2**63))


def _window_nests(k):  # type: ignore[no-untyped-def]
    em = emit_ascendc(k)
    return em, [n for n in em.plan.nests if n.pattern == "window"]


@pytest.mark.parametrize("name,sizes", [("dwconv3x3", None), ("maxpool", None),
                                        ("dwconv3x3", {"N": 2, "C": 8, "H": 58, "W": 58}),
                                        ("maxpool", {"N": 1, "C": 4, "H": 112, "W": 112})])
def test_operator_examples_take_the_window_pattern(name: str, sizes) -> None:  # type: ignore[no-untyped-def]
    k = apply(example(name, sizes), "tile,double_buffer")
    em, wins = _window_nests(k)
    assert len(wins) == 1 and not [n for n in em.plan.nests if n.fallback]
    ops = set(wins[0].instructions)
    assert "Gather" in ops and ({"Axpy", "Cast"} <= ops if name == "dwconv3x3" else "Max" in ops)
    assert "GetValue(" not in em.source.replace("Wt_ubLocal.GetValue(", "")  # only the weights are scalar reads


def test_the_bundled_operator_sizes_take_the_window_pattern() -> None:
    """tests/codegen/test_operators.py runs these on the emulator: they must exercise it."""
    for name in ("dwconv3x3", "maxpool"):
        pipeline, sizes = OPERATORS[name]
        _, wins = _window_nests(apply(example(name, sizes), pipeline))
        assert len(wins) == 1, name


def test_tile_stages_the_window_and_keeps_results() -> None:
    k = example("dwconv3x3", {"N": 1, "C": 3, "H": 7, "W": 12})
    t = apply(k, "tile,double_buffer")
    assert {"X_ub", "Wt_ub", "Y_ub"} <= {d.name for d in t.buffers if d.kind == "local"}
    assert api.verify(k, t, trials=2, seed=fresh_seed()).ok


_DW = """
kernel dw(X: {xt}[C, H, W], Wt: {wt}[C, 3, 3]) -> (Y: f16[C, H - 2, W - 2]) {{
  size C = 4
  size H = 10
  size W = 18
  temp acc: f32[C, H - 2, W - 2]
  dw: for c in 0..C {{
    for y in 0..H - 2 {{
      for x in 0..W - 2 {{
        acc[c, y, x] = 0.0
        for r in 0..3 {{
          for s in 0..3 {{ acc[c, y, x] += f32(X[c, y + r, x + s]) * f32(Wt[c, r, s]) }}
        }}
        Y[c, y, x] = f16(acc[c, y, x])
      }}
    }}
  }}
}}
"""


@pytest.mark.parametrize("xt,wt", [("f16", "f32"), ("f32", "f16")])
def test_refusals_say_why(xt: str, wt: str) -> None:
    """Not the exact Axpy form: the nest goes to another pattern, and its plan record keeps
    the `window` pattern's reason (`emit --plan` / `--explain` show it)."""
    k = parse(_DW.format(xt=xt, wt=wt), "dw.ir")
    em = emit_ascendc(apply(k, "tile"))
    reasons = [r for n in em.plan.nests for p, _, r in n.tried if p == "window"]
    assert reasons and all("no Axpy for this product" in r for r in reasons), reasons


def test_emitted_plane_offsets_follow_the_padded_rows() -> None:
    """W = 18 f16 rows are padded to 32 elements in UB: the Gather base moves by the padded
    row pitch per `r` (r * 32), and the accumulator is 16 x 16 f32."""
    k = parse(_DW.format(xt="f16", wt="f16"), "dw.ir")
    em = emit_ascendc(apply(k, "tile"))
    assert "r * 32 + s) * 2" in em.source and "Axpy(acc_ubLocal[c * 128]" in em.source


def test_same_padding_takes_the_window_pattern_through_a_bordered_plane() -> None:
    k = apply(example("dwconv3x3_same", {"N": 1, "C": 4, "H": 10, "W": 18}), "tile")
    em, wins = _window_nests(k)
    assert len(wins) == 1 and not [n for n in em.plan.nests if n.fallback]
    assert {"Duplicate", "Copy", "Gather", "Axpy", "Cast"} <= set(wins[0].instructions)
    assert "X_ubLocal.GetValue" not in em.source


def test_a_guard_that_is_not_the_bounds_is_refused() -> None:
    text = (ROOT / "examples" / "dwconv3x3_same.ir").read_text().replace("select(y + r <= H,", "select(y + r <= H - 1,")
    k = parse(text, "g.ir").with_sizes({"N": 1, "C": 4, "H": 10, "W": 18})
    em = emit_ascendc(apply(k, "tile"))
    reasons = [r for n in em.plan.nests for p, _, r in n.tried if p == "window"]
    assert reasons and all("guard does not say exactly" in r for r in reasons), reasons
    assert not [n for n in em.plan.nests if n.pattern == "window"]
