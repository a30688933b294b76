"""Why the tuner chose what it chose: `ascx tune --explain` and `ascx explain RUN`.

For the winner:
- each pass's contribution, by ablation: drop that pass from the pipeline, re-evaluate
  (DB first, else measured with the same measurer, and stored), report the slowdown; a
  pass whose removal makes a later pass refuse or do nothing (`double_buffer` without
  `tile` has nothing to pipeline) is "needed", never priced as the kernel the other
  passes happen to leave;
- the bound before (untransformed kernel) and after (e.g. `S-bound -> V-bound`);
- the alternatives the mask pruned along the winner's path, each with its one-line reason
  (illegal: the pass's refusal; capacity: the solver's verdict);
- the top five measured alternatives with their times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .db import TuningDB
from .measure import Measurement, Measurer
from .space import Candidate, SearchSpace
from .tuner import TuneResult, _store


@dataclass
class Ablation:
    dropped: str
    pipeline: str
    time_us: float | None
    slowdown: float | None  # time without the pass / time of the winner
    note: str = ""


@dataclass
class Explanation:
    best: str
    time_us: float | None
    bound_before: str
    bound_after: str
    ablations: list[Ablation] = field(default_factory=list)
    pruned: list[tuple[str, str]] = field(default_factory=list)
    top: list[tuple[str, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"best_pipeline": self.best, "time_us": self.time_us, "bound_before": self.bound_before,
                "bound_after": self.bound_after,
                "ablation": [a.__dict__ for a in self.ablations],
                "pruned": [{"pipeline": p, "reason": r} for p, r in self.pruned],
                "top": [{"pipeline": p, "time_us": t} for p, t in self.top]}

    def render(self) -> str:
        out = [f"why `{self.best or '(no passes)'}`:",
               f"  bound: {self.bound_before or '?'}-bound untransformed -> {self.bound_after or '?'}-bound tuned"]
        if self.ablations:
            out.append("  each pass's contribution (drop it, re-measure):")
            for a in self.ablations:
                if a.slowdown is not None:
                    out.append(f"    - {a.dropped}: without it {a.time_us:.3f} us ({a.slowdown:.2f}x slower)")
                else:
                    out.append(f"    - {a.dropped}: {a.note}")
        if self.pruned:
            out.append("  alternatives pruned on the way (never measured):")
            out += [f"    - {p}: {r}" for p, r in self.pruned]
        if self.top:
            out.append("  top alternatives measured:")
            out += [f"    {i}. {p or '(no passes)'}  {t:.3f} us" for i, (p, t) in enumerate(self.top, 1)]
        return "\n".join(out)


def explain(res: TuneResult, measurer: Measurer, db: TuningDB, *, max_pruned: int = 8) -> Explanation:
    space = res.space
    assert space is not None
    best = res.best
    if best is None or res.best_m is None:
        return Explanation("", None, _bound(res.baseline_m), "", top=[])
    ex = Explanation(best.pipeline, res.best_m.time_us, _bound(res.baseline_m), res.best_m.bound)
    base_t = res.best_m.time_us or math.nan
    for i, text in enumerate(best.passes):
        rest = best.passes[:i] + best.passes[i + 1:]
        c, why = _without(space, rest)
        if c is None:
            ex.ablations.append(Ablation(text, ",".join(rest), None, None, f"needed: without it {why}"))
            continue
        m = _measure(c, res, measurer, db)
        if not m.ok or m.time_us is None:
            ex.ablations.append(Ablation(text, c.pipeline, None, None, f"without it the kernel fails: {m.error}"))
        else:
            ex.ablations.append(Ablation(text, c.pipeline, m.time_us, m.time_us / base_t))
    # the mask along the winner's path: expand each stage from the root
    node = space.root()
    seen: set[str] = set()
    for stage in range(len(space.stages)):
        before = len(space.pruned)
        steps = node.actions()
        for p in space.pruned[before:]:
            if p.pipeline not in seen:
                seen.add(p.pipeline)
                ex.pruned.append((p.pipeline, p.reason))
        nxt = next((s for s in steps if node.passes + (s.text,) == best.passes[:len(node.passes) + 1]), None)
        node = node.child(nxt)
    if not ex.pruned:  # the stages were expanded before (cached): report what the space saw
        ex.pruned = [(p.pipeline, p.reason) for p in space.pruned]
    ex.pruned = ex.pruned[:max_pruned]
    ex.top = [(c.pipeline, m.time_us or math.nan) for c, m in res.top(6) if c.key != best.key][:5]
    return ex


def _without(space: SearchSpace, passes: tuple[str, ...]) -> tuple[Candidate | None, str]:
    """The candidate `passes` reach when every one of them still applies, else (None, why)."""
    kernel, _, refused = space.apply_all(passes, strict=True)
    if refused is not None:
        what = "does nothing" if refused.reason == "no change" else f"is refused ({refused.reason})"
        return None, f"`{refused.text}` {what}"
    return space.add(kernel, passes), ""


def _bound(m: Measurement | None) -> str:
    return m.bound if m is not None and m.ok else ""


def _measure(c: Candidate, res: TuneResult, measurer: Measurer, db: TuningDB) -> Measurement:
    for hc, hm in res.history:
        if hc.key == c.key:
            return hm
    hit = db.lookup(c.key, res.model_version)
    if hit is not None:
        return hit
    m = measurer.measure(c.kernel, res.space.target if res.space else None)
    space: SearchSpace = res.space  # type: ignore[assignment]
    _store(db, res.source, res.model_version, space.kernel, getattr(space.target, "name", str(space.target)),
           c, m, res.run_id, measured=True)
    return m
