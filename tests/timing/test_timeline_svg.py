"""The static SVG timeline (`ascx profile --svg`, transformer/timing/timeline_svg.py): lanes
per (core, pipe) with instructions, boxes at their times, arrows for sync edges."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.timing.timeline_svg import PIPE_COLOURS, render

NS = {"s": "http://www.w3.org/2000/svg"}


def _trace(cores: int = 3) -> dict:
    ev = []
    for pid in range(cores):
        ev.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"k b{pid}.aiv0"}})
        for tid, pipe in enumerate(("S", "V", "MTE2")):
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": pipe}})
        ev.append({"ph": "X", "name": "DataCopy", "pid": pid, "tid": 2, "ts": 1.0, "dur": 2.0, "args": {"line": 10}})
        ev.append({"ph": "X", "name": "Add", "pid": pid, "tid": 1, "ts": 3.0, "dur": 1.0, "args": {"line": 12}})
        ev.append({"ph": "s", "name": "sync", "id": pid, "pid": pid, "tid": 2, "ts": 3.0})
        ev.append({"ph": "f", "name": "sync", "id": pid, "pid": pid, "tid": 1, "ts": 3.0})
    return {"traceEvents": ev}


def _boxes(svg: str) -> list[ET.Element]:
    return [r for r in ET.fromstring(svg).iter(f"{{{NS['s']}}}rect") if r.find("s:title", NS) is not None]


def test_lanes_boxes_and_arrows_of_the_first_cores():
    svg = render(_trace(3), max_cores=2, width=1000)
    root = ET.fromstring(svg)  # well-formed XML
    labels = [t.text for t in root.iter(f"{{{NS['s']}}}text")]
    assert "b0.aiv0 MTE2" in labels and "b1.aiv0 V" in labels
    assert not any(lbl and lbl.startswith("b2.") for lbl in labels)  # only the first two cores
    assert not any(lbl and lbl.endswith(" S") for lbl in labels)      # a pipe without instructions has no lane
    boxes = _boxes(svg)
    assert len(boxes) == 4
    colours = {b.find("s:title", NS).text.split()[0]: b.get("fill") for b in boxes}
    assert colours == {"DataCopy": PIPE_COLOURS["MTE2"], "Add": PIPE_COLOURS["V"]}
    # the copy spans [1, 3) of a [1, 4) window: two thirds of the plot width, starting at its left
    copy = next(b for b in boxes if b.find("s:title", NS).text.startswith("DataCopy"))
    add = next(b for b in boxes if b.find("s:title", NS).text.startswith("Add"))
    assert float(add.get("x")) - float(copy.get("x")) == pytest.approx(2 * float(add.get("width")), rel=1e-3)
    arrows = [ln for ln in root.iter(f"{{{NS['s']}}}line") if ln.get("marker-end")]
    assert len(arrows) == 2 and all(float(a.get("y2")) < float(a.get("y1")) for a in arrows)  # MTE2 lane -> V lane above


def test_empty_trace_still_renders():
    assert "no instructions" in render({"traceEvents": []})


def test_svg_path_must_end_in_svg(tmp_path):
    r = CliRunner().invoke(main, ["profile", "examples/add.ir", "--svg", str(tmp_path / "x.png")])
    assert r.exit_code == 2 and "ending in .svg" in r.output
