"""Parse the emulator's instruction trace (JSON lines, one record per instruction).

The trace is written by a kernel built against the emulator headers when the environment
variable ``ASCX_TRACE`` names a file. Each line is one JSON object; the format is documented
in ``docs/emulator.md`` ("Trace format"). This module turns it into typed records so that the
timing model can replay it: every (run, core) is an independent in-order instruction stream
per pipe, and ``edges`` link a ``sync == "set"`` record to the ``sync == "wait"`` record(s)
that consume it (same edge id string).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

__all__ = ["TraceEvent", "parse_trace", "parse_lines", "by_core", "unmatched_edges", "PIPES"]

#: Pipe names that appear in the ``pipe`` field ("ALL" only on PipeBarrier<PIPE_ALL>).
PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL")

_KNOWN = {
    "run", "core", "block", "kind", "sub", "seq", "pipe", "op", "loc", "bytes", "elems", "repeats",
    "fractals", "blocks", "dtype", "src", "dst", "sync", "edges", "from", "to",
}


@dataclass(frozen=True)
class TraceEvent:
    """One emulated instruction or synchronisation event.

    ``core`` is ``b<block>.<aiv|aic><sub>`` (e.g. ``b3.aiv1``); ``seq`` is the program order
    within that core. Quantities that do not apply to an op are 0 / empty. ``sync`` is
    ``""`` for ordinary instructions, else ``"set"``, ``"wait"`` or ``"barrier"``; ``edges``
    are the edge ids produced (set) or consumed (wait); ``from_pipe`` / ``to_pipe`` are the
    producer and consumer pipes of the edge. Op-specific fields (``que``, ``buf``, ``event``,
    ``id``, ``m``, ``n``, ``k``, ``form``, ``src_dtype``, ``flag``, ``mode``...) are in ``extra``.
    """

    run: int
    core: str
    block: int
    kind: str
    sub: int
    seq: int
    pipe: str
    op: str
    loc: str = ""
    bytes: int = 0
    elems: int = 0
    repeats: int = 0
    fractals: int = 0
    blocks: int = 0
    dtype: str = ""
    src: str = ""
    dst: str = ""
    sync: str = ""
    edges: tuple[str, ...] = ()
    from_pipe: str = ""
    to_pipe: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "TraceEvent":
        """Build an event from one decoded JSON record (unknown keys go to ``extra``)."""
        return cls(
            run=int(obj.get("run", 0)),
            core=str(obj["core"]),
            block=int(obj.get("block", 0)),
            kind=str(obj.get("kind", "")),
            sub=int(obj.get("sub", 0)),
            seq=int(obj["seq"]),
            pipe=str(obj["pipe"]),
            op=str(obj["op"]),
            loc=str(obj.get("loc", "")),
            bytes=int(obj.get("bytes", 0)),
            elems=int(obj.get("elems", 0)),
            repeats=int(obj.get("repeats", 0)),
            fractals=int(obj.get("fractals", 0)),
            blocks=int(obj.get("blocks", 0)),
            dtype=str(obj.get("dtype", "")),
            src=str(obj.get("src", "")),
            dst=str(obj.get("dst", "")),
            sync=str(obj.get("sync", "")),
            edges=tuple(obj.get("edges", ())),
            from_pipe=str(obj.get("from", "")),
            to_pipe=str(obj.get("to", "")),
            extra={k: v for k, v in obj.items() if k not in _KNOWN},
        )


def parse_lines(lines: Iterable[str]) -> list[TraceEvent]:
    """Parse JSON-lines text (blank lines ignored) into events, in file order."""
    out: list[TraceEvent] = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            out.append(TraceEvent.from_json(json.loads(line)))
        except (ValueError, KeyError) as exc:  # malformed record: say where
            raise ValueError(f"trace line {n}: {exc}: {line[:200]}") from exc
    return out


def parse_trace(path: str | Path) -> list[TraceEvent]:
    """Read and parse a trace file written via ``ASCX_TRACE``."""
    with open(path, encoding="utf-8") as f:
        return parse_lines(f)


def by_core(events: Iterable[TraceEvent]) -> dict[tuple[int, str], list[TraceEvent]]:
    """Group events by (run, core), each list sorted by program order ``seq``."""
    groups: dict[tuple[int, str], list[TraceEvent]] = defaultdict(list)
    for e in events:
        groups[(e.run, e.core)].append(e)
    for v in groups.values():
        v.sort(key=lambda e: e.seq)
    return dict(groups)


def unmatched_edges(events: Iterable[TraceEvent]) -> tuple[set[str], set[str]]:
    """Return (edges set but never waited, edges waited but never set).

    Set-but-unwaited edges are normal for the last FreeTensor of each buffer; a waited edge
    that was never set indicates a bug in the emulator's trace.
    """
    sets: set[str] = set()
    waits: set[str] = set()
    for e in events:
        if e.sync == "set":
            sets.update(e.edges)
        elif e.sync == "wait":
            waits.update(e.edges)
    return sets - waits, waits - sets
