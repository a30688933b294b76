"""Sizes with ranges (issue 24 item 1): `size S = 1024 in 1..65536 multiple of 16` parses,
prints back the same, is checked (default inside, multiple respected, accesses inside their
tensors for every value of the range), `--size` outside the range is a located error and
`--size` inside specialises; a pass that does not keep ranges specialises them, with a note. The
malformed declarations are in the bad-input corpus (tests/bad_inputs/sem_size_*.ir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from passes.base import run_pipeline
from transformer import ir
from transformer.cli import main
from transformer.interp import run as run_kernel
from transformer.parser import parse
from transformer.printer import print_kernel

from small_kernels import ADD_RANGED as ADD



def invoke(*args: str):
    r = CliRunner().invoke(main, list(args))
    assert "Traceback" not in r.output and "internal error" not in (r.stderr or ""), r.output
    return r


@pytest.fixture()
def add_file(tmp_path: Path) -> Path:
    p = tmp_path / "add.ir"
    p.write_text(ADD)
    return p


def test_ranges_parse_and_print_back_identically() -> None:
    k = parse(ADD)
    assert k.sizes[0] == ir.SizeDecl("M", 256, lo=1, hi=4096)
    assert k.sizes[1] == ir.SizeDecl("N", 1024, lo=16, hi=65536, multiple=16)
    assert k.size_ranges() == {"M": (1, 4096, 1), "N": (16, 65536, 16)}
    assert print_kernel(k) == ADD and parse(print_kernel(k)) == k
    alone = parse(ADD.replace(" in 16..65536", ""))
    assert alone.sizes[1].multiple == 16 and not alone.sizes[1].ranged and "N" not in alone.size_ranges()


def test_interpreter_runs_a_ranged_kernel_at_its_default() -> None:
    k = parse(ADD).with_sizes({"M": 3, "N": 32})
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((3, 32)).astype(np.float16) for _ in range(2))
    out = run_kernel(k, {"A": a, "B": b})
    np.testing.assert_array_equal(out["C"], (a + b).astype(np.float16))


@pytest.mark.parametrize("size,message", [
    ("M=5000", "error: with --size M=5000: size `M` = 5000 is outside its range 1..4096"),
    ("N=1000", "error: with --size N=1000: size `N` = 1000 is not a multiple of 16"),
    ("N=8", "error: with --size N=8: size `N` = 8 is outside its range 16..65536"),
])
def test_size_outside_the_range_is_a_located_error(add_file: Path, size: str, message: str) -> None:
    r = invoke("run", str(add_file), "--size", size)
    assert r.exit_code == 2
    line = 2 if size[0] == "M" else 3
    assert r.stderr.startswith(f"{add_file}:{line}:8: {message}"), r.stderr
    assert "\n         ^\nhint: " in r.stderr


def test_size_inside_the_range_specialises(add_file: Path) -> None:
    r = invoke("parse", str(add_file), "--size", "N=48")
    assert r.exit_code == 0, r.stderr
    assert "  size M = 256 in 1..4096\n  size N = 48\n" in r.stdout


def test_a_pass_that_does_not_keep_ranges_specialises_and_says_so(add_file: Path) -> None:
    """`interchange` does not keep ranges (`Pass.keeps_ranges`): the sizes are fixed at
    their values before it, with a note naming it (the passes that keep ranges are in
    tests/test_range_passes.py)."""
    k, trace = run_pipeline(parse(ADD), "interchange{ew.i,ew.j}", "ascend910b2")
    assert not k.size_ranges() and k.size_values() == {"M": 256, "N": 1024}
    assert trace[0].pass_text == "specialise" and "(M = 256, N = 1024) before `interchange`" in trace[0].note
    r = invoke("transform", str(add_file), "--passes", "interchange{ew.i,ew.j}")
    assert r.exit_code == 0
    assert (f"{add_file}: note: the passes specialise the ranged sizes to their values (M = 256, N = 1024) before "
            "`interchange`, which does not keep ranges") in r.stderr
    assert " in " not in r.stdout.split("{", 1)[1].split("ew:")[0]
    kept, trace = run_pipeline(parse(ADD), "tile{ew.i=8},interchange{ew.i,ew.j}", "ascend910b2")
    assert [t.pass_text for t in trace] == ["tile{ew.i=8}", "specialise", "interchange{ew.i,ew.j}"]
    assert not kept.size_ranges()
    unchanged, trace = run_pipeline(parse(ADD), [], "ascend910b2")
    assert unchanged == parse(ADD) and trace == []


def test_a_bound_written_as_a_number_fails_for_some_value_of_the_range() -> None:
    """Valid at the default (256 = M), not at M = 1 (out of bounds) nor M = 4096 (rows
    never written): the kernel does not serve its range."""
    from transformer.diagnostics import SemanticError

    with pytest.raises(SemanticError, match=r"the write `C` leaves its dimension 0 \(M = \d+\): `i` reaches \d+ when M = "):
        parse(ADD.replace("for i in 0..M", "for i in 0..256"))
    with pytest.raises(SemanticError, match=r"at M = 4096, N = 65536: output `C` is not written to its end: no write "
                                            r"reaches index 4095 of dimension 0"):
        parse(ADD.replace("size M = 256 in 1..4096", "size M = 256 in 256..4096").replace("0..M", "0..256"))


def test_verify_runs_each_shape_and_checks_each_against_the_range(add_file: Path) -> None:
    """`verify --shapes`: tails (250 rows of 6-row tiles), N not a multiple of the tile,
    the range's ends; each shape is loaded with the checks of `--size`."""
    shapes = "M=1,N=16;M=250,N=48;M=7,N=4096;M=4096,N=16;M=3,N=65536"
    r = invoke("verify", str(add_file), "--passes", "tile,double_buffer", "--shapes", shapes, "--trials", "1",
               "--seed", "5", "--json")
    assert r.exit_code == 0, r.output
    import json

    reps = json.loads(r.stdout)
    assert [x["shape"] for x in reps] == shapes.split(";") and all(x["ok"] for x in reps)
    bad = invoke("verify", str(add_file), "--passes", "tile", "--shapes", "M=8,N=16;M=8,N=40")
    assert bad.exit_code == 2 and "with --size M=8 --size N=40: size `N` = 40 is not a multiple of 16" in bad.stderr
    empty = invoke("verify", str(add_file), "--passes", "tile", "--shapes", "M=8;;")
    assert empty.exit_code == 2 and "--shapes M=8;;: an empty shape" in empty.stderr
