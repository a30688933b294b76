"""Tiling keys of the run-time `@flash` kernel (docs/codegen.md, "Tiling keys").

With S read at run time, one code path would keep the query tile q and the group size g
chosen at the default S, which is up to 1.1x slower at other S (q = 64 at S = 1024, but the
kernel emitted at 2048 takes q = 128 and at 4096 groups 3 tiles per pass over K and V). As
Ascend C tiling keys do, the kernel instead holds one specialised path per (q, g) that the
`flash_attention` pass would choose somewhere in S's range (`choose_q`, `flash_group`, as
for a static kernel at that S); the host tiling function picks the key from S (`faKey`) and
the kernel branches once on it. A q or g asked for by the pass's parameters (not the chosen
one at the default S) keeps one path.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .flash import KV_BLOCK, FlashAttn, choose_q, flash_group

if TYPE_CHECKING:
    from ..targets import Target
    from .lower import Lowering


def chosen(fa: FlashAttn, target: "Target") -> FlashAttn:
    """`fa` with the q and g the `flash_attention` pass chooses at its S."""
    fq = dataclasses.replace(fa, q=choose_q(fa, target))
    return dataclasses.replace(fq, g=flash_group(fq, target))


def flash_keys(fa: FlashAttn, target: "Target", lo: int, hi: int) -> list[tuple[FlashAttn, list[tuple[int, int]]]]:
    """The variants (key 0, 1, ... in order of first S) with the S intervals each serves, for
    S in lo..hi (multiples of the key block); one variant when `fa`'s q and g were asked for."""
    if (chosen(fa, target).q, chosen(fa, target).g) != (fa.q, fa.g):
        return [(fa, [(lo, hi)])]
    out: dict[tuple[int, int], list[tuple[int, int]]] = {}
    prev: tuple[int, int] | None = None
    first = -(-lo // KV_BLOCK) * KV_BLOCK
    for s in range(first, hi + 1, KV_BLOCK):
        c = chosen(dataclasses.replace(fa, s=s), target)
        k = (c.q, c.g)
        spans = out.setdefault(k, [])
        if k == prev:
            spans[-1] = (spans[-1][0], s)
        else:
            spans.append((s, s))
        prev = k
    return [(dataclasses.replace(fa, q=q, g=g), spans) for (q, g), spans in out.items()]


def key_expr(size: str, keys: list[tuple[FlashAttn, list[tuple[int, int]]]]) -> str:
    """C++ for the key of S = `size`: the S intervals in order, each the key that serves it."""
    spans = sorted((a, b, k) for k, (_, sp) in enumerate(keys) for a, b in sp)
    expr = str(spans[-1][2])
    for _, b, k in reversed(spans[:-1]):
        expr = f"{size} <= {b} ? {k} : {expr if expr.isdigit() else f'({expr})'}"
    return expr


def by_key(key: str, values: list[int]) -> str:
    """C++ for `values[key]` (one value when they agree)."""
    if len(set(values)) == 1:
        return str(values[0])
    expr = str(values[-1])
    for k in range(len(values) - 2, -1, -1):
        expr = f"{key} == {k} ? {values[k]} : {expr if expr.isdigit() else f'({expr})'}"
    return expr


def keyed_workspace(fa: FlashAttn, target: "Target", lo: int, hi: int) -> list[tuple[str, str, int]]:
    """(role, dtype, elements) of the GM workspace that every key's path fits (S up to `hi`):
    each role's largest over the variants (`workspace_slots`)."""
    from .flash import workspace_slots

    per = [workspace_slots(f, target, hi) for f, _ in flash_keys(fa, target, lo, hi)]
    return [(role, dt, max(p[i][2] for p in per)) for i, (role, dt, _) in enumerate(per[0])]


def runtime_s(low: "Lowering", fa: FlashAttn) -> tuple[str, str, str, str, str, list[FlashAttn]] | None:
    """With S read at run time (docs/codegen.md, "Run-time sizes"): S's C++ name and the
    tiling fields the host computes from it, the key blocks (S / 128), the blocks used (the
    blockDim: min(AIC cores, S / q)), the query tiles (S / q) and the tiling key, with the
    variant (q, g) of each key's path (flash_keys.py: the ones the pass chooses over S's
    range, or `fa` alone); None at a fixed S. The buffers of each path are its variant's (the
    pass requires every S of the range to be a multiple of 128, so of q)."""
    from .plan import NoRuntimeLowering, TilingField

    size = fa.names["S"]
    if size not in low.runtime:
        return None
    if fa.names["D"] in low.runtime:
        raise NoRuntimeLowering("`@flash` with a run-time head dimension D")
    if fa.causal:
        raise NoRuntimeLowering("causal `@flash` at run time (its tiles are packed over the blocks by a table "
                                "built at emit time)")
    s = low.names(size)
    lo, hi = low.kernel.size_ranges()[size][:2]
    keys = flash_keys(fa, low.target, int(lo), int(hi))
    variants = [f for f, _ in keys]
    nb, qt, cores = (low.names.fresh(x) for x in ("faKvBlocks", "faQTiles", "faCores"))
    key = low.names.fresh("faKey") if len(keys) > 1 else ""
    aic = int(low.target.aic_cores or low.target.cores)
    if key:
        low.tiling.append(TilingField(key, key_expr(s, keys), "tiling key: the path of (q, g) " + ", ".join(
            f"{k}: ({f.q}, {f.g}) for S in " + ", ".join(f"{a}..{b}" for a, b in sp) for k, (f, sp) in enumerate(keys))))
    q = by_key(key, [f.q for f in variants])
    low.tiling += [TilingField(nb, f"{s} / {KV_BLOCK}", f"key blocks of {KV_BLOCK}"),
                   TilingField(qt, f"{s} / {q}" if q.isdigit() else f"{s} / ({q})",
                               f"query tiles of {q} rows" if q.isdigit() else "query tiles of the key's q rows"),
                   TilingField(cores, f"ascx_max<int32_t>(ascx_min<int32_t>({qt}, {aic}), 1)",
                               "AIC blocks used (each with its 2 AIV): the blockDim")]
    return s, nb, cores, qt, key, variants
