"""The public-measurement dataset (transformer/timing/data/published.toml): every point is
cited and runnable, and the hand-written reproductions have the published load pattern."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer.timing.dataset import DATA, DatasetError, load_dataset, profile_point

HOLDOUT = Path(__file__).resolve().parents[2] / "bench" / "data" / "calibration_holdout.toml"


def test_every_point_is_cited_and_says_how_ascx_runs_it():
    points = load_dataset("published")
    assert len(points) >= 12
    for p in points:
        assert "/" in p.source["repo"] and p.source["path"], p.id
        assert p.measured_us > 0 and p.role in ("fit", "check")
        assert p.how()
    families = {p.family for p in points if p.role == "fit"}
    assert {"matmul", "flash_attention", "launch", "stream"} <= families
    ratios = [p for p in points if p.pipe_ratios]
    assert len(ratios) == 4 and all(0 < r <= 1 for p in ratios for r in p.pipe_ratios.values())


def test_holdout_points_are_not_shipped():
    shipped = {p.id for p in load_dataset("published")}
    held = load_dataset(HOLDOUT)
    assert held and all(p.role == "holdout" and p.id not in shipped for p in held)


def test_a_broken_dataset_is_refused_with_the_point_named(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[point]]\nid = "X1"\nfamily = "matmul"\n')
    with pytest.raises(DatasetError, match="point X1: missing role"):
        load_dataset(bad)
    text = (DATA / "published.toml").read_text().replace('pipe_ratios = { M = 0.545', 'pipe_ratios = { Q = 0.545', 1)
    bad.write_text(text)
    with pytest.raises(DatasetError, match="point M1: unknown pipe"):
        load_dataset(bad)


@pytest.mark.slow
def test_gemm_reproduction_has_the_published_load_pattern():
    """M1: each K step loads A 128x256 and B 256x256 (196,608 B in 384 bursts of 512 B) and
    the cube does M*N*K / 16^3 fractals over the 24 AIC."""
    m1 = next(p for p in load_dataset() if p.id == "M1")
    r = profile_point(m1)
    launch = r.details["launches"][0]
    assert launch["mode"] == "AIC" and launch["block_dim"] == 24
    mte2 = next(p for p in r.pipes if p.pipe == "MTE2")
    steps = (1536 // 128) * (1536 // 256) * (1536 // 256) // 24  # C tiles per core x K steps
    assert mte2.features["l1_byte"] == pytest.approx(196608 * steps)
    assert mte2.features["block"] == pytest.approx(384 * steps)
    m = next(p for p in r.pipes if p.pipe == "M")
    assert m.features["fractal"] == pytest.approx(96 ** 3 / 24)


def test_an_ir_point_without_the_examples_folder_is_a_dataset_error(tmp_path, monkeypatch):
    """An installed (non-editable) ascx has no examples/ next to the package: profiling a point
    that reproduces through an example says so instead of failing inside the driver."""
    from transformer.timing import dataset

    point = next(p for p in dataset.load_dataset("published") if p.ascx["kind"] == "ir")
    monkeypatch.setattr(dataset, "EXAMPLES", tmp_path)
    with pytest.raises(dataset.DatasetError, match=rf"point {point.id}: reproduces through examples/"):
        dataset.profile_point(point)
