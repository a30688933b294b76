"""What `tile` says when it cannot stage a nest (used by `tile.py`), so that a refusal
is true and its advice works:

* `row_refusal` — one row of the nest does not fit: what it needs (each staged local of a
  one-row tile), what the scope holds (the target table), and what would work;
* `checked_suggestion` — the `tile{...}` sizes a hint names, clamped to the loops' extents
  and checked by applying them (the same legality and capacity code): a hint never names
  sizes `tile` then refuses (issue 29 item 2);
* `order_hint` — a nest that does not fit because one of its loops is not tiled yet: the
  order of the `tile` passes matters, and which loop to tile first (issue 29 item 5).

Each check applies `tile`: `apply` is `tile.tile_kernel` (passed in, since `tile.py` imports
this module).
"""

from __future__ import annotations

from typing import Callable

from transformer import ir
from transformer.diagnostics import CapacityExceeded
from transformer.targets import Target

from . import _rewrite as R
from ._budgets import scope_budget, tensor_bytes
from ._rows import resolve_tiled
from .base import PassError, TraceEntry, preferred_loop_names

Apply = Callable[..., ir.Kernel]  # tile.apply(kernel, tiles, target, trace, *, reserve=1)


def row_refusal(kernel: ir.Kernel, band: list[tuple[str, ir.For]], err: CapacityExceeded,
                rows: tuple[str, int] | None, target: Target | None, apply: Apply) -> CapacityExceeded:
    """`tile` cannot stage the nest: say what one row needs (the largest local of a
    one-row tile, and all of them), what the scope holds (the target table), and what would
    work."""
    name0, loop0 = band[0]
    sizes = kernel.known_sizes()
    one = apply(kernel, ((name0, 1),), target, TraceEntry("tile"), reserve=0)
    new = [d for d in one.buffers if d.kind == "local" and d.scope == err.scope]
    usable = scope_budget(target, err.scope)
    scope = err.scope.upper()
    twice = " (twice that, to leave room for double buffering)" if rows is not None else ""
    big = max(new, key=lambda d: tensor_bytes(d, sizes)) if new else None
    if big is not None and tensor_bytes(big, sizes) > usable:
        n = 1
        for d in big.shape:
            n *= R.eval_const(d, sizes) or 1
        what = (f"a row of {n} {big.dtype} (`{big.name}`) needs {_kib(tensor_bytes(big, sizes))}, "
                f"{scope} has {_kib(usable)} usable")
    elif new:
        what = (f"one row needs {_kib(sum(tensor_bytes(d, sizes) for d in new))} of {scope} ("
                + ", ".join(f"`{d.name}` {_kib(tensor_bytes(d, sizes))}" for d in new)
                + f"){twice}, {scope} has {_kib(usable)} usable")
    else:
        what = f"one row needs {_kib(err.need_bytes)} of {scope}, which has {_kib(usable)} usable"
    label = loop0.label or name0
    names = preferred_loop_names(kernel)
    inner = [s for s in loop0.body if isinstance(s, ir.For)]
    groups = [rows[0]] if rows is not None else sorted({names[id(lp)] for lp in inner if id(lp) in names})
    ask = checked_suggestion(kernel, name0, groups, target, apply)
    explicit = f"tile explicitly: `tile{{{ask}}}`" if ask else ""
    if rows is not None:
        hint = ("even the smallest tiles of the loops over the row do not fit; stage fewer tensors per nest "
                "(run `tile` before `fuse`)" + (f", or {explicit}" if ask else ""))
    elif ask:
        hint = f"tile the loops over the row explicitly: `tile{{{ask}}}`"
    else:
        hint = ("tile the loops over the row explicitly (`tile{LOOP=1,ROW_LOOP=SIZE}`; loops over one row "
                f"with one variable are named together as `{label}.VAR`), or label the nest's loops so they can be named")
    out = CapacityExceeded("tile", f"cannot stage `{label}`: {what}; its loops over the row cannot be tiled "
                           "automatically, and `tile` does not leave a nest running from GM silently",
                           loop0.loc, hint=hint, scope=err.scope, need_bytes=err.need_bytes,
                           budget_bytes=usable, loops=(name0,))
    out.what = what  # type: ignore[attr-defined]
    return out


SUGGESTED_CAPS = (1024, 256, 64, 16, 4, 1)  # row-loop tile sizes a refusal may suggest, largest first


def checked_suggestion(kernel: ir.Kernel, name0: str, loops: list[str], target: Target | None,
                       apply: Apply) -> str | None:
    """The `tile{...}` parameters a refusal suggests: `name0` tiled by 1 and every loop of
    `loops` by the largest of `SUGGESTED_CAPS` (clamped to its extent) for which `tile`
    with those sizes succeeds — the same legality and capacity checks applying it runs —
    or None when none does (a hint never names sizes `tile` would then refuse)."""
    if not loops:
        return None
    sizes = kernel.known_sizes()
    ext: dict[str, int] = {}
    for n in loops:
        try:
            refs = resolve_tiled(kernel, n)
        except PassError:
            return None
        ext[n] = min(R.loop_extent(r.loop, sizes) or 1 for r in refs)
    tried: set[tuple[tuple[str, int], ...]] = set()
    for cap in SUGGESTED_CAPS:
        req = ((name0, 1), *((n, min(cap, ext[n])) for n in loops))
        if req in tried:
            continue
        tried.add(req)
        try:
            apply(kernel, req, target, TraceEntry("tile"))
        except PassError:
            continue
        return ",".join(f"{n}={v}" for n, v in req)
    return None


def _kib(n: int) -> str:
    return f"{n / 1024:g} KiB" if n >= 1024 else f"{n} B"


def order_hint(err: CapacityExceeded, kernel: ir.Kernel, tiles: tuple[tuple[str, int], ...], top: int,
               target: Target | None, reserve: int, apply: Apply) -> None:
    """When the nest does not fit because one of its loops is not tiled yet (the V loop of
    attention written as separate labelled loops, tiled in a later `tile` pass), say that
    the order of the `tile` passes matters and which loop to tile first: a named loop of
    the nest, not requested, by the largest requested size (clamped to its extent), for
    which `tile{LOOP=T}` and then this request succeed (checked by applying both)."""
    names = preferred_loop_names(kernel)
    asked = {id(r.loop) for n, _ in tiles for r in resolve_tiled(kernel, n)}
    size = max((v for _, v in tiles), default=1)
    sizes = kernel.known_sizes()
    this = ",".join(f"{n}={v}" for n, v in tiles)
    for lp in ir.iter_loops((kernel.body[top],)):
        name = names.get(id(lp))
        ext = R.loop_extent(lp, sizes) or 1
        if name is None or id(lp) in asked or ext < 2 or any(id(x) in asked for x in ir.iter_loops(lp.body)):
            continue
        first = ((name, min(size, ext)),)
        try:
            apply(apply(kernel, first, target, TraceEntry("tile"), reserve=reserve),
                        tiles, target, TraceEntry("tile"), reserve=reserve)
        except PassError:
            continue
        err.hint = (f"the order of `tile` passes matters here: loop `{name}` is not tiled yet, so this pass "
                    f"stages all {ext} of its iterations; tile it first: "
                    f"`tile{{{first[0][0]}={first[0][1]}}},tile{{{this}}}`")
        return
