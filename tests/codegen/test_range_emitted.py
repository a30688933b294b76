"""A kernel transformed once over its size range (`tests/test_range_passes.py`) and then
emitted at a size of the range other than its default, with a tail: the emitted code of
that one result matches the interpreter under sanitizers (one build; emission is still
specialised to the sizes, docs/ir.md "Sizes with ranges"). `multicore` over the range takes
the cores of the largest trip count: at R = 5 (2 tiles) 46 of its 48 cores get no tile."""

from __future__ import annotations

import pytest

from .conftest import ROOT, apply, check_emitted, kernel_text


@pytest.mark.slow
def test_softmax_transformed_over_its_rows_range_runs_emitted_at_a_tail() -> None:
    text = (ROOT / "examples" / "softmax.ir").read_text().replace("size R = 256", "size R = 256 in 1..512")
    ranged = kernel_text(text)
    out = apply(ranged, "fuse,tile,double_buffer,multicore{rmax}")
    assert out.size_ranges() == {"R": (1, 512, 1)} and out.body[0].annotation("cores").get("n") == 48
    at = {"R": 5}  # tiles of 3 rows at the default: one whole tile and a tail of 2
    check_emitted(out.with_sizes(at), ranged.with_sizes(at), sanitize=True, what="softmax over R in 1..512 at R = 5")
