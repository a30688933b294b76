"""Target override files (`--target-file`): facts replaced and marked calibrated, located
errors for every kind of bad file, accepted by every command that takes `--target`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.targets import get_target
from transformer.targets._override import OverrideError, format_override, load_override

ADD = str(Path(__file__).resolve().parents[2] / "examples" / "add.ir")


def _write(tmp_path: Path, text: str, name: str = "o.toml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_override_replaces_facts_and_marks_them_calibrated(tmp_path: Path) -> None:
    path = _write(tmp_path, 'target = "ascend910b2"\n[facts]\n'
                  'mte2_gm_to_ub_bytes_per_cycle = { value = 27.5, source = "12 kernels" }\n'
                  '"ub.usable_bytes" = 190464\n[facts.l1]\nusable_bytes = 500000\n')
    t = load_override(path)
    base = get_target("ascend910b2")
    assert t.name == base.name
    f = t.fact("mte2_gm_to_ub_bytes_per_cycle")
    assert (f.value, f.status) == (27.5, "calibrated") and f.source == f"{path}: 12 kernels"
    assert t.scope("ub").usable_bytes == 190464 and t.fact("ub.usable_bytes").status == "calibrated"
    assert t.scope("l1").usable_bytes == 500000
    # untouched facts keep their provenance; the registered target is unchanged
    assert t.fact("clock_mhz") == base.fact("clock_mhz")
    assert base.value("mte2_gm_to_ub_bytes_per_cycle") == 32


def test_format_override_round_trips(tmp_path: Path) -> None:
    text = format_override("ascend910b2", {"vector_repeats_per_cycle": (0.875, 'fit "x"'),
                                           "ub.usable_bytes": (180000, "by hand")}, comment="two lines\nof comment")
    t = load_override(_write(tmp_path, text))
    assert t.value("vector_repeats_per_cycle") == 0.875 and t.scope("ub").usable_bytes == 180000
    assert t.fact("vector_repeats_per_cycle").source.endswith('fit "x"')


@pytest.mark.parametrize("text,line,col,fragment", [
    ('[facts]\nmte2_gm_to_ub_bytes_per_cyle = 1\n', 2, 1, "has no fact `mte2_gm_to_ub_bytes_per_cyle`"),
    ('[facts]\ncube_m = 16.5\n', 2, 10, "takes an integer"),
    ('[facts]\nclock_mhz = -5\n', 2, 13, ">= 0"),
    ('[facts]\nclock_mhz = "fast"\n', 2, 13, "takes a number"),
    ('[facts]\nclock_mhz = true\n', 2, 13, "takes a int"),
    ('[facts]\nclock_mhz = { value = 1, unit = "MHz" }\n', 2, 13, "inline table"),
    ('[facts]\nclock_mhz = = 3\n', 2, 13, "not valid TOML"),
    ('target = "ascend999"\n[facts]\n', 1, 1, "unknown target"),
    ('target = "ascend910b2"\n', 1, 1, "no `[facts]` table"),
    ('targt = "ascend910b2"\n[facts]\n', 1, 1, "unknown key `targt`"),
    ('[facts]\n"ub.usable_bytes" = 999999999\n', 2, 1, "usable > physical"),
])
def test_bad_override_is_a_located_error(tmp_path: Path, text: str, line: int, col: int, fragment: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(OverrideError) as ei:
        load_override(path)
    e = ei.value
    assert fragment in e.message
    assert e.loc is not None and (e.loc.line, e.loc.col) == (line, col), e.render()
    assert e.render().startswith(f"{path}:{line}:{col}: error:")


def test_target_flag_must_agree_with_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, 'target = "ascend910b2"\n[facts]\nclock_mhz = 1700\n')
    with pytest.raises(OverrideError, match="not `ascend910b1`"):
        load_override(path, "ascend910b1")
    assert load_override(path, "ASCEND910B2").clock_mhz == 1700
    # no target anywhere: the default target
    assert load_override(_write(tmp_path, "[facts]\nclock_mhz = 1600\n", "d.toml")).name == "ascend910b2"


def test_every_target_command_accepts_target_file(tmp_path: Path) -> None:
    """check/parse/emit/transform/verify/targets/emulator take --target-file and apply it."""
    small = _write(tmp_path, '[facts]\n"ub.usable_bytes" = 4096\n', "small.toml")
    ok = _write(tmp_path, '[facts]\n"ub.usable_bytes" = 190464\n', "ok.toml")
    r = CliRunner()
    # the override changes the verdict: 48 KiB of tiles do not fit 4 KiB of UB
    tiles = "tile{ew.i=64,ew.j=128}"
    assert r.invoke(main, ["check", ADD, "--passes", tiles, "--target-file", ok]).exit_code == 0
    res = r.invoke(main, ["check", ADD, "--passes", tiles, "--target-file", small])
    assert res.exit_code == 2 and "more than the 4096 bytes usable" in res.output
    for cmd in (["parse", ADD, "-q"], ["emit", ADD], ["transform", ADD, "--passes", "tile"],
                ["verify", ADD, "--passes", "tile", "--seed", "1"]):
        assert r.invoke(main, cmd + ["--target-file", ok]).exit_code == 0, cmd
    res = r.invoke(main, ["targets", "--target-file", ok, "--json"])
    rows = {row["name"]: row for row in json.loads(res.output)["facts"]}
    assert rows["ub.usable_bytes"]["status"] == "calibrated" and rows["ub.usable_bytes"]["source"] == ok
    res = r.invoke(main, ["emulator", "--cflags", "--target-file", ok])
    assert "-DASCX_EMU_UB_BYTES=190464" in res.output


def test_bad_target_file_on_the_command_line_exits_2(tmp_path: Path) -> None:
    bad = _write(tmp_path, "[facts]\nnot_a_fact = 1\n")
    res = CliRunner().invoke(main, ["check", ADD, "--target-file", bad])
    assert res.exit_code == 2
    assert f"{bad}:2:1: error: target ascend910b2 has no fact `not_a_fact`" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(main, ["check", ADD, "--target-file", str(tmp_path / "missing.toml")])
    assert res.exit_code == 2 and "No such file" in res.output
