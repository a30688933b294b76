"""Render a profile's Chrome trace (`ascx profile --trace`) as a static SVG timeline.

Perfetto is the interactive viewer for the trace; this picture is for places where a browser
app cannot go: a docs page, a CI artifact, a terminal session without a display. It draws
what Perfetto's track view shows for the first few cores: one lane per (core, pipe) that has
instructions, each instruction a box on the time axis coloured by pipe (sync operations
thinner), and each sync edge an arrow from the producer pipe to the consumer pipe.

    ascx profile examples/add.ir --passes tile,double_buffer --svg add.svg

Only the standard library is used (the SVG is written as text).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

# one colour per pipe, as close as possible to the hue the pipe has in Perfetto's palette
PIPE_COLOURS: dict[str, str] = {
    "S": "#9e9e9e", "V": "#43a047", "M": "#e53935", "MTE1": "#fb8c00", "MTE2": "#1e88e5",
    "MTE3": "#8e24aa", "FIX": "#6d4c41",
}
SYNC_NAMES = frozenset({"set", "wait", "barrier", "SetFlag", "WaitFlag", "PipeBarrier"})


@dataclass(frozen=True)
class _Lane:
    pid: int
    tid: int
    label: str


def render(trace: dict[str, Any], *, max_cores: int = 2, width: int = 1100, lane_height: int = 22,
           title: str | None = None) -> str:
    """SVG text of the first `max_cores` cores of `trace` (a Chrome trace-event dict)."""
    events = trace.get("traceEvents", [])
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    keep = sorted(procs)[:max_cores]
    slices = [e for e in events if e.get("ph") == "X" and e.get("pid") in keep]
    used = sorted({(e["pid"], e["tid"]) for e in slices})
    lanes = [_Lane(p, t, f"{procs[p].split()[-1]} {threads.get((p, t), t)}") for p, t in used]
    if not lanes:
        return _svg(width, 60, ['<text x="10" y="30" font-size="13">no instructions in the trace</text>'])
    t0 = min(e["ts"] for e in slices)
    t1 = max(e["ts"] + e.get("dur", 0.0) for e in slices)
    span = max(t1 - t0, 1e-9)
    left, top, right = 130, 34, 20
    plot_w = width - left - right
    row = {(ln.pid, ln.tid): i for i, ln in enumerate(lanes)}

    def x(ts: float) -> float:
        return left + (ts - t0) / span * plot_w

    def y(key: tuple[int, int]) -> float:
        return top + row[key] * lane_height

    height = top + len(lanes) * lane_height + 34
    shown = ", ".join(procs[p].split()[-1] for p in keep)
    out = [f'<text x="{left}" y="18" font-size="13" font-weight="bold">{html.escape(title or "timeline")} ({shown})</text>']
    for i, ln in enumerate(lanes):  # lane backgrounds and labels
        yy = top + i * lane_height
        shade = "#f5f5f5" if i % 2 == 0 else "#ffffff"
        out.append(f'<rect x="{left}" y="{yy}" width="{plot_w}" height="{lane_height}" fill="{shade}"/>')
        out.append(f'<text x="{left - 6}" y="{yy + lane_height * 0.68:.1f}" font-size="11" text-anchor="end">'
                   f'{html.escape(ln.label)}</text>')
    for e in slices:  # instructions
        pipe = threads.get((e["pid"], e["tid"]), "")
        colour = PIPE_COLOURS.get(pipe, "#607d8b")
        sync = e.get("name") in SYNC_NAMES
        h = lane_height * (0.3 if sync else 0.7)
        yy = y((e["pid"], e["tid"])) + (lane_height - h) / 2
        w = max(e.get("dur", 0.0) / span * plot_w, 0.6)
        tip = html.escape(f'{e.get("name")} line {e.get("args", {}).get("line", "?")}: {e.get("dur", 0.0):.3f} us')
        out.append(f'<rect x="{x(e["ts"]):.2f}" y="{yy:.1f}" width="{w:.2f}" height="{h:.1f}" fill="{colour}" '
                   f'fill-opacity="{0.5 if sync else 0.9}"><title>{tip}</title></rect>')
    starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("pid") in keep}
    for e in events:  # sync edges
        if e.get("ph") != "f" or e.get("id") not in starts:
            continue
        s = starts[e["id"]]
        a, b = (s["pid"], s["tid"]), (e["pid"], e["tid"])
        if a not in row or b not in row:
            continue
        out.append(f'<line x1="{x(s["ts"]):.2f}" y1="{y(a) + lane_height / 2:.1f}" x2="{x(e["ts"]):.2f}" '
                   f'y2="{y(b) + lane_height / 2:.1f}" stroke="#37474f" stroke-width="0.7" marker-end="url(#arrow)"/>')
    axis_y = top + len(lanes) * lane_height + 4
    for k in range(6):  # time axis, microseconds from the first instruction shown
        tx = left + k * plot_w / 5
        out.append(f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 5}" stroke="#000"/>')
        out.append(f'<text x="{tx:.1f}" y="{axis_y + 17}" font-size="10" text-anchor="middle">'
                   f'{k * span / 5:.2f} us</text>')
    legend_x = width - right - 64 * len(PIPE_COLOURS)
    for i, (pipe, colour) in enumerate(PIPE_COLOURS.items()):
        lx = legend_x + i * 64
        out.append(f'<rect x="{lx}" y="8" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{lx + 14}" y="17" font-size="11">{pipe}</text>')
    return _svg(width, height, out)


def _svg(width: int, height: int, body: list[str]) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
            '<defs><marker id="arrow" markerWidth="6" markerHeight="6" refX="5" refY="3" orient="auto">'
            '<path d="M0,0 L6,3 L0,6 z" fill="#37474f"/></marker></defs>\n'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>\n')
    return head + "\n".join(body) + "\n</svg>\n"
