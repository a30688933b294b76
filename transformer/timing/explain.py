"""What the remaining scalar fallbacks of an emitted kernel cost (`ascx emit --explain`).

Every line the lowering emits for a scalar fallback (a nest with no vector instruction, a
copy with no DMA form) carries its nest as origin (`NestChoice.where`), so the profile's
hot lines (the emulator's 40 costliest (line, pipe) pairs, cycles summed over cores) map
back to the nest. A fallback's *share* is its lines' cycles over the busy cycles of every
pipe of every core, both summed over the cores of the same run: the emulator adds each
instruction's cost to its line and to its pipe's busy time at once, so a share is within
[0, 1] and the shares sum to at most 1. (Dividing the summed-over-cores line cycles by the
run's elapsed cycles, as this once did, gave 4077 % on a transpose spread over 40 cores.)
A fallback too cheap to reach the hottest lines shows 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from ..targets import Target


@dataclass(frozen=True)
class FallbackCost:
    """One scalar fallback: where, why, and its profiled cycles and share of the run."""

    where: str
    reason: str
    cycles: float
    share: float
    # what each instruction-selection pattern said at this nest (`NestChoice.tried`)
    tried: tuple[tuple[str, float | None, str], ...] = ()


def fallback_costs(emitted: Any, target: Target, *, timeout: float | None = None) -> tuple[list[FallbackCost], Any]:
    """Profile `emitted` (timing-only) and price each scalar fallback of its plan.
    Returns the costs (costliest first) and the `ProfileResult` (None when nothing fell back)."""
    from .profile import profile_kernel

    plan = emitted.plan
    falls = [n for n in plan.nests if n.fallback] if plan is not None else []
    if not falls:
        return [], None
    r = profile_kernel(None, target, emitted=emitted, timeout=timeout)
    _, tmap = emitted.combined()
    return price_fallbacks(falls, r, tmap), r


def price_fallbacks(falls: list[Any], r: Any, tmap: dict[int, str]) -> list[FallbackCost]:
    """The cost of each fallback nest of `falls` in the profile `r`, its hot lines mapped to
    their origins by `tmap` (emitted line -> origin), costliest first."""
    cycles = {n.where: 0.0 for n in falls}
    for line, _pipe, c in r.details.get("hot_all", []):
        try:
            origin = tmap.get(int(str(line).rsplit(":", 1)[1]), "")
        except ValueError:
            continue
        for w in cycles:
            if origin.endswith(" <- " + w):
                cycles[w] += c
    total = r.details.get("busy_cycles_all_cores") or 1.0
    out = [FallbackCost(n.where, n.fallback, cycles[n.where], cycles[n.where] / total, n.tried) for n in falls]
    return sorted(out, key=lambda f: -f.cycles)
