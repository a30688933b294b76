"""`ascx tune`, `ascx explain`, `ascx db`: keys, resume, outputs, bad input."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from transformer.cli import main

from .conftest import ROOT

SOFTMAX = str(ROOT / "examples" / "softmax.ir")
SMALL = ["--size", "R=32", "--size", "C=256"]
pytestmark = pytest.mark.usefixtures("quick_agent")  # these test the CLI and the DB, not the search


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_tune_json_keys_then_answers_from_the_db(tmp_path):
    db = str(tmp_path / "t.sqlite")
    r = _run("tune", SOFTMAX, *SMALL, "--budget", "6", "--measure", "estimate", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    for k in ("best_pipeline", "time_us", "baseline_us", "evaluations", "evaluations_new", "db"):
        assert k in d
    assert d["evaluations"] == 6 and d["evaluations_new"] == 6 and d["db"] == db
    assert d["documented_pipeline"] == "fuse,tile,double_buffer"  # from examples/README.md
    assert d["time_us"] <= d["documented_us"] and d["time_us"] < d["baseline_us"]
    r2 = _run("tune", SOFTMAX, *SMALL, "--budget", "6", "--measure", "estimate", "--db", db, "--json")
    d2 = json.loads(r2.output)
    assert d2["evaluations_new"] == 0 and d2["best_pipeline"] == d["best_pipeline"]


def test_tune_writes_the_tuned_kernel_and_explains(tmp_path):
    db = str(tmp_path / "t.sqlite")
    out = tmp_path / "tuned.ir"
    r = _run("tune", SOFTMAX, *SMALL, "--budget", "5", "--measure", "estimate", "--db", db, "-o", str(out), "--explain")
    assert r.exit_code == 0, r.output
    assert "best: " in r.output and "untransformed:" in r.output and "why `" in r.output
    assert "each pass's contribution" in r.output and "top alternatives measured" in r.output
    from transformer.parser import parse_file

    tuned = parse_file(str(out))
    assert tuned.name == "softmax"
    cpp = tmp_path / "tuned.cpp"
    r = _run("tune", SOFTMAX, *SMALL, "--budget", "5", "--measure", "estimate", "--db", db, "-o", str(cpp),
             "--emit", "ascendc")
    assert r.exit_code == 0, r.output
    assert "__aicore__" in cpp.read_text()


def test_db_list_show_export_and_explain(tmp_path):
    db = str(tmp_path / "t.sqlite")
    assert _run("tune", SOFTMAX, *SMALL, "--budget", "4", "--measure", "estimate", "--db", db).exit_code == 0
    r = _run("db", "list", "--db", db, "--json")
    runs = json.loads(r.output)
    assert len(runs) == 1 and runs[0]["status"] == "done" and runs[0]["kernel_name"] == "softmax"
    r = _run("db", "show", "1", "--db", db, "--json")
    shown = json.loads(r.output)
    assert len(shown["evaluations"]) == 4
    assert {d["kind"] for d in shown["decisions"]} >= {"price", "reference"}
    assert "decisions" in _run("db", "show", "1", "--db", db).output
    exp = json.loads(_run("db", "export", "--db", db, "--json").output)
    assert len(exp["evaluations"]) == 4 and len(exp["runs"]) == 1
    e = json.loads(_run("explain", "1", "--db", db, "--json").output)
    assert e["best_pipeline"] == runs[0]["best_pipeline"]
    assert e["bound_before"] and e["bound_after"]


def test_bad_input_is_exit_2_without_traceback(tmp_path):
    db = str(tmp_path / "t.sqlite")
    for args in (["--budget", "0"], ["--jobs", "0"], ["--documented", "fuse{"], ["--emit", "ascendc"],
                 ["-o", str(tmp_path / "missing" / "x.ir")]):
        r = _run("tune", SOFTMAX, *SMALL, "--measure", "estimate", "--db", db, *args)
        assert r.exit_code == 2, (args, r.output)
        assert "Traceback" not in r.output and "error" in r.output
    r = _run("db", "show", "99", "--db", db)
    assert r.exit_code == 2 and "no run 99" in r.output
    (tmp_path / "junk.sqlite").write_text("not a database")
    r = _run("db", "list", "--db", str(tmp_path / "junk.sqlite"))
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_db_show_and_explain_show_only_that_runs_evaluations(tmp_path):
    db = str(tmp_path / "t.sqlite")
    assert _run("tune", SOFTMAX, *SMALL, "--budget", "3", "--strategy", "grid", "--measure", "estimate",
                "--db", db).exit_code == 0
    assert _run("tune", SOFTMAX, *SMALL, "--budget", "8", "--measure", "estimate", "--db", db).exit_code == 0
    first = json.loads(_run("db", "show", "1", "--db", db, "--json").output)
    second = json.loads(_run("db", "show", "2", "--db", db, "--json").output)
    assert len(first["evaluations"]) == 3 and len(second["evaluations"]) == 8  # run 2 resumed run 1's three
    mine = {e["pipeline"] for e in first["evaluations"]}
    e = json.loads(_run("explain", "1", "--db", db, "--json").output)
    assert e["best_pipeline"] == first["run"]["best_pipeline"]
    assert {t["pipeline"] for t in e["top"]} <= mine  # no alternative run 1 never saw


def test_db_export_includes_each_runs_decisions(tmp_path):
    db = str(tmp_path / "t.sqlite")
    assert _run("tune", SOFTMAX, *SMALL, "--budget", "4", "--measure", "estimate", "--db", db).exit_code == 0
    exp = json.loads(_run("db", "export", "--db", db).output)
    (run,) = exp["runs"]
    assert {d["kind"] for d in run["decisions"]} >= {"price", "reference"}
    assert sorted(run["evaluation_ids"]) == sorted(e["id"] for e in exp["evaluations"])


def test_space_prints_knobs_domains_and_size_without_measuring(tmp_path):
    from transformer.tune.space import DEFAULT_STAGES

    db = tmp_path / "never.sqlite"
    add = str(ROOT / "examples" / "add.ir")
    r = _run("tune", add, "--size", "M=16", "--size", "N=256", "--space", "--json", "--db", str(db))
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    st = d["staged"]
    assert st["complete"] and st["size"] > 10
    assert [k["stage"] for k in st["knobs"]] == list(DEFAULT_STAGES)
    tile = next(k for k in st["knobs"] if k["stage"] == "tile")["domain"]
    assert tile[0] == "skip" and "tile" in tile and any(t.startswith("tile{") for t in tile)
    knobs = {k["knob"]: k["domain"] for k in d["knobs"]}
    assert knobs["tile"] == ["skip", "tile", "sizes"] and knobs["tile:ew.i"][0] == "full"
    assert d["size"] == math.prod(len(v) for k, v in knobs.items() if not k.startswith("tile")) * \
        (2 + math.prod(len(v) for k, v in knobs.items() if k.startswith("tile:")))
    assert not db.exists()  # nothing measured, nothing stored
    text = _run("tune", add, "--size", "M=16", "--size", "N=256", "--space", "--allow", "round_operand").output
    # add has nothing to round: the same candidates, one more (empty) stage in front
    assert f"{st['size']} distinct candidate kernels" in text and "\n  round_operand: 1 choices: skip\n" in text
    assert f"{d['size']:,} points" in text and "\n  tile:ew.j: " in text
