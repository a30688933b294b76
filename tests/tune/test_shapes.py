"""`ascx tune --shapes`: one pipeline for a set of sizes, re-checked at each, minimising the
weighted time; the DB keys record the distribution."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from passes.base import parse_pipeline, run_pipeline
from transformer.capacity import check_kernel_capacity
from transformer.cli import main
from transformer.tune.db import TuningDB
from transformer.tune.measurers import EstimateMeasurer
from transformer.tune.shapes import parse_shapes, shapes_key, tune_shapes

from .conftest import ROOT, FakeMeasurer, small


def test_parse_shapes_and_its_errors():
    assert parse_shapes("S=512,D=64:3; S=1024") == [(("S=512", "D=64"), 3.0), (("S=1024",), 1.0)]
    for bad in ("", "S=512:0", "S=512:x", "S:2"):
        with pytest.raises(ValueError):
            parse_shapes(bad)


def test_one_pipeline_fits_and_verifies_at_every_shape_and_minimises_the_weighted_time(tmp_path, target):
    kernels = [small("softmax", R=16, C=64), small("softmax", R=64, C=4096)]
    db = TuningDB(tmp_path / "s.sqlite")
    r = tune_shapes(kernels, [3.0, 1.0], target, budget=10, strategy="random", measurer=FakeMeasurer(), db=db, seed=2)
    assert r.best_pipeline is not None and r.evaluations == 10
    assert [e.weight for e in r.per_shape] == [0.75, 0.25]
    for k, e in zip(kernels, r.per_shape):  # the winner, re-checked at each shape
        out = run_pipeline(k, parse_pipeline(r.best_pipeline), target)[0] if r.best_pipeline else k
        if any(b.kind == "local" for b in out.buffers):
            assert check_kernel_capacity(out, target).status == "sat"
        assert not e.refused and e.m is not None and e.m.ok
    assert e.verified is None and r.per_shape[0].verified in (True, None)
    assert r.weighted_us == pytest.approx(sum(e.weight * e.m.time_us for e in r.per_shape))
    ok = [t for _, t in r.history if t is not None]
    assert r.weighted_us == min(ok) and r.baseline_us is not None and r.weighted_us <= r.baseline_us
    # the distribution is in the key: another weighting is another problem
    shapes = [(k.size_values(), w) for k, w in zip(kernels, (0.75, 0.25))]
    key = shapes_key(kernels[0], shapes, target)
    assert key != shapes_key(kernels[0], [(s, 0.5) for s, _ in shapes], target)
    run = db.run(r.run_id)
    assert run["source"] == key and run["strategy"].endswith("(shapes)")
    (d,) = [d for d in db.decisions(r.run_id) if d["kind"] == "shapes"]
    assert [x["weight"] for x in d["detail"]["shapes"]] == [0.75, 0.25]


def test_a_pipeline_refused_at_one_shape_is_a_failure_for_the_set(tmp_path, target, monkeypatch):
    """Explicit tiles that fit at the small shape overflow UB at the large one: the set
    records the failure with the shape, never a time."""
    import transformer.tune.strategies as strategies
    from transformer.tune.strategies import Strategy

    tiles = "tile{rmax.r=64,expo.r=64,norm.r=64}"

    class Fixed(Strategy):
        name = "fixed"

        def propose(self, busy):
            c = self.space.candidate_for(tiles)
            return None if c is None or c.key in self.seen else c

    monkeypatch.setattr(strategies, "make_strategy", lambda name, space, seed=None, **kw: Fixed(space, seed))
    kernels = [small("softmax", R=64, C=256), small("softmax", R=64, C=8192)]
    db = TuningDB(tmp_path / "f.sqlite")
    r = tune_shapes(kernels, [1, 1], target, budget=3, measurer=EstimateMeasurer(), db=db)
    assert dict(r.history)[tiles] is None and r.best_pipeline == ""
    (row,) = [e for e in db.evaluations(r.key) if e.pipeline == tiles]
    assert "at C=8192,R=64" in row.measurement.error and "ub" in row.measurement.error.lower()


def test_cli_shapes_json_and_usage_error(tmp_path):
    db = str(tmp_path / "c.sqlite")
    f = str(ROOT / "examples" / "add.ir")
    r = CliRunner().invoke(main, ["tune", f, "--shapes", "M=16,N=256:2;M=32,N=512", "--budget", "3", "--measure",
                                  "estimate", "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert [s["sizes"] for s in d["shapes"]] == [{"M": 16, "N": 256}, {"M": 32, "N": 512}] and d["weighted_us"] > 0
    r = CliRunner().invoke(main, ["tune", f, "--shapes", "M=16:-1", "--db", db])
    assert r.exit_code == 2 and "--shapes" in r.output and "positive" in r.output


def test_jobs_evaluate_the_same_pipelines_as_one_job(tmp_path, target):
    """`--shapes` with `--jobs 2`: the re-checks run in the driver, every shape's measurement
    in a pool; random search proposes the same points either way, so the same set wins."""
    kernels = [small("add", M=16, N=256), small("add", M=32, N=512)]
    got = []
    for jobs in (1, 2):
        r = tune_shapes(kernels, [2.0, 1.0], target, budget=3, strategy="random", measurer=FakeMeasurer(),
                        db=TuningDB(tmp_path / f"j{jobs}.sqlite"), seed=2, jobs=jobs)
        assert r.evaluations == 3
        got.append((r.best_pipeline, r.weighted_us, sorted(p for p, _ in r.history)))
    assert got[0] == got[1]


def test_cli_shapes_output_and_explain(tmp_path):
    """`-o` writes the winner at the heaviest shape; `--explain` ablates each of its passes on
    the weighted time (a pass the others need is "needed", never priced)."""
    db, out = str(tmp_path / "o.sqlite"), tmp_path / "tuned.ir"
    f = str(ROOT / "examples" / "add.ir")
    r = CliRunner().invoke(main, ["tune", f, "--shapes", "M=16,N=256;M=32,N=512:3", "--budget", "4", "--strategy",
                                  "random", "--seed", "1", "--measure", "estimate", "--db", db, "--explain", "-o",
                                  str(out), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["evaluations"] == 4 and d["written"]["sizes"] == {"M": 32, "N": 512}
    from transformer.parser import parse_file

    tuned = parse_file(str(out))
    assert tuned.size_values() == {"M": 32, "N": 512}
    passes = [p.to_text() for p in parse_pipeline(d["best_pipeline"])] if d["best_pipeline"] else []
    ab = d["explanation"]["ablation"]
    assert [a["dropped"] for a in ab] == passes
    for a in ab:  # a weighted slowdown, or why it cannot be dropped
        assert (a["slowdown"] is not None and a["time_us"] > 0) or a["note"], a
    text = CliRunner().invoke(main, ["tune", f, "--shapes", "M=16,N=256;M=32,N=512:3", "--budget", "4", "--strategy",
                                     "random", "--seed", "1", "--measure", "estimate", "--db", db, "--explain"]).output
    assert "weighted over the shapes" in text and "why `" in text
