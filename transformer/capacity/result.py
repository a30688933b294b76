"""What `check` returns: status, per-scope usage table, explanations, JSON and text forms."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .errors import CapacityUnknownError, CapacityUnsatError

Status = Literal["sat", "unsat", "unknown"]


def fmt_bytes(n: int | None) -> str:
    """`16 KiB`, `224 B`, `12.31 KiB (12600 B)`; exact when not a whole KiB."""
    if n is None:
        return "?"
    if n < 1024:
        return f"{n} B"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n / 1024:.2f} KiB ({n} B)"


@dataclass
class UsageRow:
    """One buffer in a scope: `bytes` is one stage rounded as InitBuffer does."""

    buffer: str
    dtype: str
    shape: str
    stages: int
    bytes: int | None
    total: int | None
    origin: str = ""


@dataclass
class ScopeUsage:
    """A scope's rows; `total` is the peak over simultaneously live sets."""

    scope: str
    rows: list[UsageRow]
    total: int | None
    usable: int
    physical: int
    reserved: int = 0

    @property
    def headroom(self) -> int | None:
        return None if self.total is None else self.usable - self.total


@dataclass
class Explanation:
    """One violated constraint as a sentence a user can act on, plus machine fields."""

    constraint: str
    kind: str
    sentence: str
    scope: str | None = None
    buffers: list[str] = field(default_factory=list)
    value: int | None = None
    limit: int | None = None
    hints: list[str] = field(default_factory=list)
    in_core: bool = True


@dataclass
class CapacityResult:
    """Outcome of `check`.

    status:        "sat" | "unsat" | "unknown" (solver timeout or gave up) — never conflated.
    per_scope:     usage table per on-chip scope (values from `sizes` and the model).
    model:         values the solver chose for unbound symbolic dims (sat only).
    sizes:         the bound symbolic dims.
    explanations:  unsat: one per violated constraint, unsat-core members first.
    core:          unsat: the constraint names in the Z3 unsat core.
    pad_required:  DataCopy runs that are not a multiple of 32 B (need DataCopyPad).
    reason:        unknown: why (e.g. "timeout after 1 ms").
    """

    status: Status
    target: str
    per_scope: dict[str, ScopeUsage]
    model: dict[str, int] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    explanations: list[Explanation] = field(default_factory=list)
    core: list[str] = field(default_factory=list)
    pad_required: list[str] = field(default_factory=list)
    reason: str = ""
    api_temp: bool = False
    elapsed_ms: float = 0.0
    cached: bool = False
    key: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "sat"

    @property
    def message(self) -> str:
        """One line: the first explanation, the unknown reason, or `fits`."""
        if self.status == "unsat":
            return self.explanations[0].sentence if self.explanations else "does not fit"
        if self.status == "unknown":
            return f"unknown: {self.reason}"
        return f"fits on {self.target}"

    def raise_for_status(self) -> "CapacityResult":
        """Raise `CapacityUnsatError` / `CapacityUnknownError` unless sat; returns self."""
        if self.status == "unsat":
            raise CapacityUnsatError(self)
        if self.status == "unknown":
            raise CapacityUnknownError(self)
        return self

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for name, su in self.per_scope.items():
            d["per_scope"][name]["headroom"] = su.headroom
        d["message"] = self.message
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **({"indent": 2} | kw))

    def format_table(self) -> str:
        """Human table per scope (buffer, dtype, shape, stages, bytes; total; usable;
        headroom), followed by the verdict and explanations."""
        out: list[str] = []
        cols = ("buffer", "dtype", "shape", "stages", "bytes", "total", "origin")
        for su in self.per_scope.values():
            rows = [(r.buffer, r.dtype, r.shape, str(r.stages), fmt_bytes(r.bytes),
                     fmt_bytes(r.total), r.origin) for r in su.rows]
            widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
                      for i, c in enumerate(cols)]
            out.append(f"{su.scope.upper()} ({self.target})")
            out.append("  " + "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
            for r in rows:
                out.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
            reserve = f" (after {fmt_bytes(su.reserved)} API temp)" if su.reserved else ""
            head = su.headroom
            out.append(f"  total {fmt_bytes(su.total)}; usable {fmt_bytes(su.usable)}{reserve}; "
                       f"headroom {fmt_bytes(head) if head is None or head >= 0 else '-' + fmt_bytes(-head)}")
        if self.model:
            out.append("chosen: " + ", ".join(f"{k}={v}" for k, v in sorted(self.model.items())))
        for p in self.pad_required:
            out.append(f"note: {p}")
        out.append(f"{self.status}: {self.message}")
        for e in self.explanations[1:]:
            out.append(f"  also: {e.sentence}")
        return "\n".join(out)
