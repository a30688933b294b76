"""Capacity over size ranges (transformer/capacity/ranges.py, issue 24 item 3): the monotone
maximum proves the whole range; a range that does not fit is refused naming the size and its
first overflowing value, checked here against proofs at the neighbouring values."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.capacity import check_kernel_capacity
from transformer.capacity.from_kernel import CapacityUnsatKernelError, capacity_gate
from transformer.capacity.ranges import check_ranges, not_monotone
from transformer.cli import main
from transformer.parser import parse

TARGET = "ascend910b2"
ROWSCALE = """kernel rowscale(X: f32[N, H]) -> (Y: f32[N, H]) {
  size N = 8 in 1..1024
  size H = 1024 in 16..RANGE_END multiple of 16
  local row: f32[H] @ub
  local out: f32[H] @ub
  for n in 0..N {
    copy row[0:H] <- X[n, 0:H]
    for h in 0..H { out[h] = row[h] * 2.0 }
    copy Y[n, 0:H] <- out[0:H]
  }
}
"""


def decide(k):  # one proof at fixed sizes
    return check_kernel_capacity(k, TARGET)


def rowscale(end: int) -> str:
    return ROWSCALE.replace("RANGE_END", str(end))


def test_a_range_that_fits_is_proven_at_its_largest_values() -> None:
    k = parse(rowscale(24576))
    rc = check_ranges(k, decide)
    assert rc is not None and rc.status == "sat" and rc.at == {"N": 1024, "H": 24576}
    assert "fits for every size in its range (N in 1..1024, H in 16..24576 multiple of 16)" in rc.sentence(k)


def test_the_first_overflowing_value_is_the_boundary_between_fit_and_overflow() -> None:
    k = parse(rowscale(65536))
    rc = check_ranges(k, decide)
    assert rc is not None and (rc.status, rc.size, rc.first) == ("unsat", "H", 24592)
    status = {h: check_kernel_capacity(k.with_sizes({"H": h}), TARGET).status for h in (24576, 24592)}
    assert status == {24576: "sat", 24592: "unsat"}
    assert rc.sentence(k).startswith("size `H` overflows from H = 24592 (at N = 1024, H = 24592): UB: row 96.06 KiB")


def test_the_gate_refuses_at_the_range_of_the_size() -> None:
    k = parse(rowscale(65536))
    with pytest.raises(CapacityUnsatKernelError) as e:
        capacity_gate(k, TARGET)
    assert str(e.value.loc) == "3:20" and "for its whole range: size `H` overflows from H = 24592" in e.value.message
    assert "narrow the range of `H` to end below 24592" in (e.value.hint or "")
    assert capacity_gate(parse(rowscale(24576)), TARGET).status == "sat"


def test_check_cli_reports_the_range_verdict(tmp_path: Path) -> None:
    p = tmp_path / "k.ir"
    p.write_text(rowscale(65536))
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 1, r.output
    assert "sat: fits on ascend910b2\nunsat: size `H` overflows from H = 24592" in r.output
    p.write_text(rowscale(24576))
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 0 and "sat: fits for every size in its range" in r.output, r.output
    r = CliRunner().invoke(main, ["check", str(p), "--size", "H=64", "--size", "N=2"])
    assert r.exit_code == 0 and "for every size" not in r.output


def test_a_shape_that_shrinks_as_a_size_grows_is_not_monotone() -> None:
    k = parse(rowscale(4096).replace("local out: f32[H] @ub", "local out: f32[8192 - H] @ub")
              .replace("out[h] = row[h] * 2.0", "out[0] = row[h] * 2.0").replace("<- out[0:H]", "<- row[0:H]"))
    assert not_monotone(k) == "local `out` shrinks as `H` grows (H has coefficient -1)"
    rc = check_ranges(k, decide)
    assert rc is not None and rc.status == "unknown"
    assert check_ranges(parse(rowscale(4096)).specialised(), decide) is None
