"""Loop addressing: how passes, analyses and users name the loops of a kernel.

Node identity for loops is their name (see `shared/design/architecture.md`, "The IR"): a
loop is named by its label, by `label.var` when it sits in (or is) a labelled loop, or by
its variable when that variable is unique in the kernel. A `LoopRef` pairs a name with the
loop's path (body indices from the kernel body), which `get_at` / `replace_at` follow.

This is an IR concept, so it lives in layer 1 (`docs/architecture.md`): dependence analysis
(`transformer/deps.py`), the capacity model (`transformer/capacity/from_kernel.py`), the
lowering and every pass read it; nothing here imports `passes/`.

Also here: the `@pipeline(stages=n)` stage query (`staged_buffers`, `buffer_stages`), which
the `double_buffer` pass writes and the capacity model and lowering read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from . import ir
from .diagnostics import UnknownLoop, did_you_mean

Path = tuple[int, ...]


@dataclass(frozen=True)
class LoopRef:
    """Where a loop is: `path` is the sequence of body indices from the kernel body."""

    path: Path
    loop: ir.For
    name: str


def all_loops(kernel: ir.Kernel) -> list[tuple[Path, ir.For, tuple[ir.For, ...]]]:
    """(path, loop, enclosing loops outermost first) for every loop, in program order."""
    out: list[tuple[Path, ir.For, tuple[ir.For, ...]]] = []

    def walk(stmts: tuple[ir.Stmt, ...], path: Path, outer: tuple[ir.For, ...]) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, ir.For):
                out.append((path + (i,), s, outer))
                walk(s.body, path + (i,), outer + (s,))

    walk(kernel.body, (), ())
    return out


def loop_names(kernel: ir.Kernel) -> dict[str, LoopRef]:
    """Every unambiguous name of every loop: its label, `label.var` for loops nested in a
    labelled loop, and its variable when that variable is unique in the kernel."""
    loops = all_loops(kernel)
    var_count: dict[str, int] = {}
    for _, loop, _ in loops:
        var_count[loop.var] = var_count.get(loop.var, 0) + 1
    names: dict[str, LoopRef] = {}
    for path, loop, outer in loops:
        if loop.label:
            names[loop.label] = LoopRef(path, loop, loop.label)
            names[f"{loop.label}.{loop.var}"] = LoopRef(path, loop, f"{loop.label}.{loop.var}")
        for o in outer:
            if o.label:
                key = f"{o.label}.{loop.var}"
                # ambiguous if two loops of the same var sit under one label: keep neither
                names[key] = LoopRef(path, loop, key) if key not in names else LoopRef((), loop, "")
        if var_count[loop.var] == 1:
            names.setdefault(loop.var, LoopRef(path, loop, loop.var))
    return {k: v for k, v in names.items() if v.name}


def _preference(name: str, loop: ir.For) -> tuple[bool, int, str]:
    """The one loop-naming rule: a loop's own label first, then its shortest name, ties
    broken alphabetically (every name `loop_names` lists is unambiguous, so the shortest
    is as good as any for messages and generated parameters, and the easiest to read)."""
    return (name != loop.label, len(name), name)


def preferred_loop_names(kernel: ir.Kernel) -> dict[int, str]:
    """`id(loop)` -> the preferred name of that loop (`_preference`). Loops without an
    unambiguous name are absent."""
    out: dict[int, str] = {}
    for n, ref in sorted(loop_names(kernel).items(), key=lambda kv: _preference(kv[0], kv[1].loop)):
        out.setdefault(id(ref.loop), n)
    return out


def loop_names_by_path(kernel: ir.Kernel) -> dict[Path, str]:
    """path -> the preferred name of the loop there (`_preference`)."""
    out: dict[Path, str] = {}
    for n, ref in sorted(loop_names(kernel).items(), key=lambda kv: _preference(kv[0], kv[1].loop)):
        out.setdefault(ref.path, n)
    return out


def name_of_loop(kernel: ir.Kernel, path: Path) -> str | None:
    """The preferred name of the loop at `path` (`_preference`); None if it has none."""
    return loop_names_by_path(kernel).get(path)


def resolve_loop(kernel: ir.Kernel, name: str, pass_name: str) -> LoopRef:
    """The loop a name designates, or `UnknownLoop` (a `PassError`) listing candidates."""
    names = loop_names(kernel)
    if name in names:
        return names[name]
    label, _, var = name.rpartition(".")
    matches = []  # loops the name could mean
    for path, l, outer in all_loops(kernel):
        if l.var != var:
            continue
        if not label or any(o.label == label for o in outer) or l.label == label:
            matches.append((path, l, outer))
    if len(matches) > 1:
        def where(l: ir.For, outer: tuple[ir.For, ...]) -> str:
            enclosing = " in ".join(f"`{o.label or o.var}`" for o in reversed(outer)) or "the kernel body"
            at = f" at line {l.loc.line}" if l.loc else ""
            head = f"{l.label}: for {l.var}" if l.label else f"for {l.var}"
            return f"`{head}` inside {enclosing}{at}"
        raise UnknownLoop(pass_name, f"loop name `{name}` is ambiguous: it matches {len(matches)} loops",
                          matches[0][1].loc, name=name, candidates=[where(l, o) for _, l, o in matches],
                        hint="candidates: " + "; ".join(where(l, o) for _, l, o in matches)
                        + ". Name a loop by its label, or `label.var` under a label that holds one such loop")
    raise UnknownLoop(pass_name, f"no loop named `{name}`", name=name, hint=did_you_mean(name, names) or
                      ("loops: " + ", ".join(f"`{n}`" for n in sorted(names))))


def get_at(stmts: tuple[ir.Stmt, ...], path: Path) -> ir.Stmt:
    """The statement at `path` (body indices, outermost first)."""
    s: ir.Stmt = stmts[path[0]]
    for i in path[1:]:
        assert isinstance(s, ir.For)
        s = s.body[i]
    return s


def replace_at(stmts: tuple[ir.Stmt, ...], path: Path, new: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """Replace the statement at `path` by zero or more statements."""
    i = path[0]
    if len(path) == 1:
        return stmts[:i] + tuple(new) + stmts[i + 1:]
    s = stmts[i]
    assert isinstance(s, ir.For)
    return stmts[:i] + (dataclasses.replace(s, body=replace_at(s.body, path[1:], new)),) + stmts[i + 1:]


# --------------------------------------------------------------------------------------
# the @pipeline(stages=n) stage query


def staged_buffers(loop: ir.For, kernel: ir.Kernel) -> set[str]:
    """Locals that are the destination of a copy-in or the source of a copy-out written
    directly in the loop's body."""
    out = set()
    for s in loop.body:
        if isinstance(s, ir.Copy):
            for r in (s.dst, s.src):
                t = kernel.tensor(r.tensor)
                if t is not None and t.kind == "local":
                    out.add(r.tensor)
    return out


def buffer_stages(kernel: ir.Kernel) -> dict[str, int]:
    """Stages of every `local` buffer: n for a buffer staged (copied in or out) directly in
    the body of a loop marked `@pipeline(stages=n)`, else 1. The capacity model multiplies
    a buffer's bytes by this number."""
    out = {t.name: 1 for t in kernel.buffers if t.kind == "local"}
    for loop in ir.iter_loops(kernel.body):
        ann = loop.annotation("pipeline")
        if ann is None:
            continue
        n = ann.get("stages", 2) or 2
        for b in staged_buffers(loop, kernel):
            out[b] = max(out.get(b, 1), n)
    return out
