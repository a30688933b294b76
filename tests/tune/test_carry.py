"""Pipelines tuned at other sizes are re-checked (capacity, legality, the interpreter)
before the warm start proposes them, and a winner carried over says so (issue 29 item 8)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from transformer.cli import main
from transformer.tune.db import TuningDB
from transformer.tune.measure import Measurement
from transformer.tune.tuner import model_version, tune

from .conftest import ROOT, small

ADD = str(ROOT / "examples" / "add.ir")


def test_the_warm_start_never_proposes_what_does_not_fit_at_the_new_size(tmp_path, target, fake, quick_agent):
    db = TuningDB(tmp_path / "t.sqlite")
    tune(small("add", M=16, N=256), target, budget=4, strategy="grid", measurer=fake, db=db)
    # the fastest at 16 x 256: explicit 8-row tiles, which need 3 MiB of UB at 64 x 65536
    db.record(source="s16", candidate="k16", model_version=model_version(fake), kernel_name="add",
              sizes={"M": 16, "N": 256}, target=target.name, pipeline="tile{ew=8},double_buffer", m=Measurement(1e-6))
    r = tune(small("add", M=64, N=65536), target, budget=3, strategy="agent", measurer=fake, db=db)
    refused = next(c for c in r.carried if c.pipeline == "tile{ew=8},double_buffer")
    assert refused.tuned_at == {"M": 16, "N": 256}
    assert "more than the 196608 bytes usable" in refused.refused
    assert all("tile{ew=8}" not in c.pipeline for c, _ in r.history)  # never proposed
    kinds = {(d["kind"], d["detail"].get("pipeline")) for d in db.decisions(r.run_id)}
    assert ("carry-refused", "tile{ew=8},double_buffer") in kinds
    assert all(c.verified is None for c in r.carried)  # 4 Mi elements: too large to interpret


def test_a_winner_carried_from_other_sizes_says_so(tmp_path, quick_agent):
    db = str(tmp_path / "t.sqlite")

    def run(*sizes: str, budget: int) -> dict:
        r = CliRunner().invoke(main, ["tune", ADD, *sizes, "--budget", str(budget), "--measure", "estimate", "--db", db,
                                      "--json"], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    first = run("--size", "M=16", "--size", "N=256", budget=6)
    # no documented pipeline: the budget holds the baseline and the best carried over
    second = run("--size", "M=32", "--size", "N=256", "--documented", "", budget=2)
    carried = {c["pipeline"]: c for c in second["carried"]}
    assert first["best_pipeline"] in carried
    c = carried[first["best_pipeline"]]
    assert c["tuned_at"] == {"M": 16, "N": 256} and c["refused"] is None and c["verified"] is True
    assert second["best_carried_from"] == {"M": 16, "N": 256}
    text = CliRunner().invoke(main, ["tune", ADD, "--size", "M=32", "--size", "N=256", "--documented", "", "--budget", "2", "--measure",
                                     "estimate", "--db", db]).output
    assert "note: the best" in text and "was tuned at M=16,N=256; re-checked at these sizes: fits on chip, verified" in text
