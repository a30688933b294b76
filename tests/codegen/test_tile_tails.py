"""Tail-leaving tiles chosen by `tile` without parameters (issue 14 item 5) run correctly:
the emitted kernel (DataCopyPad and count-form vector code of run-time extents, spread over
the cores) matches the interpreter, hazard-free. The choices themselves are checked without
compiling in tests/passes/test_tile_speed.py."""

from __future__ import annotations

import pytest

from .conftest import check_emitted, example

pytestmark = pytest.mark.slow  # compiles C++ against the emulator (tests/conftest.py: the tiers)


@pytest.mark.parametrize("name,sizes,pipeline", [
    # 1030 = 2 x 5 x 103: 768-wide column tiles and a 262-wide tail, one row per tile (64 on 48 cores)
    ("add", {"M": 64, "N": 1030}, "tile,double_buffer"),
    # 101 rows over 48 cores: 2-row tiles and a 1-row tail; each 1000-wide row whole
    ("rmsnorm", {"N": 101, "H": 1000}, "fuse,tile,double_buffer"),
])
def test_automatic_tiles_with_a_tail_verify_emitted(name: str, sizes: dict[str, int], pipeline: str) -> None:
    from passes.base import run_pipeline
    from transformer.printer import print_kernel

    k = example(name, sizes)
    out, trace = run_pipeline(k, pipeline)
    chosen = next(d for e in trace for d in e.decisions if d.startswith("no sizes given: chose "))
    assert "min(" in print_kernel(out), f"{chosen}: no tail left, the test no longer covers tails"
    check_emitted(out, k, what=f"{name} {sizes} --passes {pipeline} ({chosen})")
