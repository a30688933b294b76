"""Data model of a hardware target: `Fact`, `Scope`, `Target`.

Why: every chip number the project uses (capacities, alignments, core counts, clocks,
bandwidths, unit throughputs, API limits) lives in one table per target, and every number
carries whether it is documented or assumed and where it came from, so that a user with real
hardware can correct the assumed ones.  Consumers read plain values through the helpers
(`Target.value`, `Scope.usable_bytes`, ...) and reach the `Fact` only when they need its
provenance (`Target.fact`, `Target.to_table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping

from ..diagnostics import AscxError

Status = Literal["documented", "assumed", "calibrated"]
# "calibrated": set by a target override file (`--target-file`, see override.py), e.g. fitted
# to measurements by `ascx calibrate`; its source names the file.
STATUSES: tuple[str, ...] = ("documented", "assumed", "calibrated")

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# The scopes every target must describe (extra scopes such as the bias table are allowed).
REQUIRED_SCOPES: tuple[str, ...] = ("gm", "ub", "l1", "l0a", "l0b", "l0c")

# Scalar facts every target must have, whatever its architecture.
REQUIRED_FACTS: tuple[str, ...] = (
    "clock_mhz",
    "hbm_bandwidth_gbps",
    "l2_bytes",
    "l2_read_bytes_per_cycle",
    "l2_write_bytes_per_cycle",
    "mte2_gm_to_ub_bytes_per_cycle",
    "mte2_gm_to_l1_bytes_per_cycle",
    "mte1_l1_to_l0a_bytes_per_cycle",
    "mte1_l1_to_l0b_bytes_per_cycle",
    "mte3_ub_to_gm_bytes_per_cycle",
    "fix_l0c_to_gm_bytes_per_cycle",
    "cube_m",
    "cube_n",
    "cube_k_f16",
    "cube_k_i8",
    "cube_fractals_per_cycle",
    "cube_macs_per_cycle_f16",
    "vector_block_bytes",
    "vector_bytes_per_repeat",
    "vector_repeats_per_cycle",
    "vector_max_repeat",
    "max_queue_buffers_per_position",
    "max_buffers_per_kernel",
    "datacopy_granularity_bytes",
    "datacopy_max_block_count",
    "mmad_max_dim",
    "user_event_ids",
    "gm_fast_alignment_bytes",
    "api_temp_bytes",
)
# Core-count facts by architecture: split chips have separate cube (AIC) and vector (AIV)
# cores; coupled chips have one kind of core holding both units.
ARCH_FACTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"split": ("aic_cores", "aiv_cores"), "coupled": ("cores",)}
)

# Units shown by `Target.to_table` (the fact name is the key).
UNITS: Mapping[str, str] = MappingProxyType(
    {
        "clock_mhz": "MHz",
        "hbm_bandwidth_gbps": "GB/s",
        "l2_bytes": "B",
        "aic_cores": "cores",
        "aiv_cores": "cores",
        "cores": "cores",
        "cube_fractals_per_cycle": "fractals/cycle",
        "cube_macs_per_cycle_f16": "MAC/cycle",
        "vector_block_bytes": "B",
        "vector_bytes_per_repeat": "B",
        "vector_repeats_per_cycle": "repeats/cycle",
        "vector_max_repeat": "repeats",
        "max_queue_buffers_per_position": "buffers",
        "max_buffers_per_kernel": "buffers",
        "datacopy_granularity_bytes": "B",
        "datacopy_max_block_count": "blocks",
        "mmad_max_dim": "elements",
        "user_event_ids": "ids",
        "gm_fast_alignment_bytes": "B",
        "api_temp_bytes": "B",
        "cube_m": "elements",
        "cube_n": "elements",
        "cube_k_f16": "elements",
        "cube_k_i8": "elements",
    }
)


@dataclass(frozen=True)
class Fact:
    """One number (or string) about a chip, with its provenance.

    `status` is "documented" (from vendor documentation or a quoted platform file),
    "assumed" (a placeholder or third-party figure a user should confirm) or "calibrated"
    (from a target override file, e.g. fitted to measurements by `ascx calibrate`).
    """

    value: int | float | str
    status: Status
    source: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Fact status must be one of {STATUSES}, got {self.status!r}")
        if not self.source:
            raise ValueError("Fact source must say where the number came from")


def doc(value: int | float | str, source: str) -> Fact:
    """A documented fact."""
    return Fact(value, "documented", source)


def assumed(value: int | float | str, source: str) -> Fact:
    """An assumed fact (placeholder or third-party figure)."""
    return Fact(value, "assumed", source)


@dataclass(frozen=True)
class Scope:
    """One memory scope of a core (GM, UB, L1, L0A, L0B, L0C, ...).

    `usable` is what allocations may use before target-specific reserves requested at check
    time (the UB API temp area is such a reserve: see `Target.api_temp_bytes`).
    `alignment` is the allocation granularity; `fractal` (L0 only) the size every buffer in
    the scope must be a whole number of.  `positions` are the Ascend C TPosition names that
    map to this scope.
    """

    name: str
    physical: Fact
    usable: Fact
    alignment: Fact
    positions: tuple[str, ...] = ()
    fractal: Fact | None = None
    description: str = ""

    @property
    def physical_bytes(self) -> int:
        return int(self.physical.value)

    @property
    def usable_bytes(self) -> int:
        return int(self.usable.value)

    @property
    def alignment_bytes(self) -> int:
        return int(self.alignment.value)

    @property
    def fractal_bytes(self) -> int | None:
        return None if self.fractal is None else int(self.fractal.value)

    def facts(self) -> dict[str, Fact]:
        """The scope's facts keyed `<scope>.<item>`."""
        out = {
            f"{self.name}.physical_bytes": self.physical,
            f"{self.name}.usable_bytes": self.usable,
            f"{self.name}.alignment_bytes": self.alignment,
        }
        if self.fractal is not None:
            out[f"{self.name}.fractal_bytes"] = self.fractal
        return out


class UnknownTargetError(AscxError, LookupError):
    """`get_target` was given a name no module or entry point provides (an `AscxError`,
    and a `LookupError` for code that catches that)."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(self.summary, hint="see `ascx targets`; docs/targets.md adds a target")

    def __str__(self) -> str:
        return self.summary

    @property
    def summary(self) -> str:
        return f"unknown target {self.name!r}; known targets: {', '.join(self.known)}"

    def detail(self) -> str:
        return (
            f"{self.summary}\n"
            "A target is a module in transformer/targets/ exposing TARGET, or an entry point "
            "in the 'ascx.targets' group (see docs/targets.md)."
        )


class InvalidTargetError(AscxError, ValueError):
    """A target table is missing a required scope or fact, or has an inconsistent one
    (an `AscxError`, and a `ValueError` for code that catches that)."""

    def __str__(self) -> str:
        return self.summary

    @property
    def summary(self) -> str:
        return str(self.args[0]) if self.args else "invalid target"

    def detail(self) -> str:
        return self.summary


@dataclass(frozen=True)
class Target:
    """A hardware target: architecture, scopes and scalar facts.

    Scalar facts live in `facts`; the common ones have typed properties returning plain
    values (`clock_mhz`, `aic_cores`, ...).  `fact(name)` returns the `Fact`, `value(name)`
    the plain value; both accept `<scope>.<item>` names too.
    """

    name: str
    arch: Literal["split", "coupled"]
    description: str
    scopes: Mapping[str, Scope]
    facts: Mapping[str, Fact] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scopes", MappingProxyType(dict(self.scopes)))
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Picklable (the read-only mapping proxies are not): process pools send targets,
        overridden ones included, to their workers."""
        return (Target, (self.name, self.arch, self.description, dict(self.scopes), dict(self.facts)))

    # ---- lookup helpers -------------------------------------------------------------
    def scope(self, name: str) -> Scope:
        """The scope called `name` (case-insensitive); KeyError naming the known ones."""
        key = name.lower()
        try:
            return self.scopes[key]
        except KeyError:
            raise KeyError(
                f"target {self.name} has no scope {name!r}; scopes: {', '.join(self.scopes)}"
            ) from None

    def scope_of_position(self, position: str) -> Scope:
        """The scope a TPosition (VECIN, A1, CO1, ...) maps to."""
        for s in self.scopes.values():
            if position.upper() in s.positions:
                return s
        raise KeyError(f"target {self.name} maps no scope to TPosition {position!r}")

    def fact(self, name: str) -> Fact:
        """The `Fact` called `name` (scalar fact or `<scope>.<item>`)."""
        if name in self.facts:
            return self.facts[name]
        if "." in name:
            scope, _, _item = name.partition(".")
            if scope in self.scopes:
                sf = self.scopes[scope].facts()
                if name in sf:
                    return sf[name]
        raise KeyError(f"target {self.name} has no fact {name!r}")

    def value(self, name: str) -> int | float | str:
        """Plain value of `fact(name)`."""
        return self.fact(name).value

    def has(self, name: str) -> bool:
        try:
            self.fact(name)
        except KeyError:
            return False
        return True

    def all_facts(self) -> dict[str, Fact]:
        """Every fact of the target: scalar ones, then per scope."""
        out = dict(self.facts)
        for s in self.scopes.values():
            out.update(s.facts())
        return out

    # ---- typed shortcuts (plain values) ---------------------------------------------
    def _int(self, name: str) -> int:
        return int(self.value(name))

    def _opt_int(self, name: str) -> int | None:
        return int(self.value(name)) if name in self.facts else None

    @property
    def clock_mhz(self) -> int:
        return self._int("clock_mhz")

    @property
    def aic_cores(self) -> int | None:
        return self._opt_int("aic_cores")

    @property
    def aiv_cores(self) -> int | None:
        return self._opt_int("aiv_cores")

    @property
    def aiv_per_aic(self) -> int | None:
        """Vector cores per cube core on a split chip (`aiv_cores / aic_cores`, 2 on the
        910B): a MIX launch's block is one AIC and this many AIV. None on a coupled chip."""
        if self.arch != "split":
            return None
        return self._int("aiv_cores") // self._int("aic_cores")

    @property
    def cores(self) -> int:
        """Cores a vector kernel can spread over (AIV on split chips, all on coupled)."""
        if self.arch == "split":
            return self._int("aiv_cores")
        return self._int("cores")

    @property
    def max_queue_buffers_per_position(self) -> int:
        return self._int("max_queue_buffers_per_position")

    @property
    def max_buffers_per_kernel(self) -> int:
        return self._int("max_buffers_per_kernel")

    @property
    def api_temp_bytes(self) -> int:
        return self._int("api_temp_bytes")

    @property
    def datacopy_granularity_bytes(self) -> int:
        return self._int("datacopy_granularity_bytes")

    @property
    def datacopy_max_block_count(self) -> int:
        return self._int("datacopy_max_block_count")

    @property
    def vector_max_repeat(self) -> int:
        return self._int("vector_max_repeat")

    @property
    def mmad_max_dim(self) -> int:
        return self._int("mmad_max_dim")

    @property
    def cube_m(self) -> int:
        return self._int("cube_m")

    # ---- validation and printing ----------------------------------------------------
    def validate(self) -> None:
        """Raise `InvalidTargetError` if a required scope or fact is missing or odd."""
        if self.arch not in ARCH_FACTS:
            raise InvalidTargetError(f"{self.name}: arch must be split or coupled")
        missing = [s for s in REQUIRED_SCOPES if s not in self.scopes]
        missing += [f for f in REQUIRED_FACTS + ARCH_FACTS[self.arch] if f not in self.facts]
        if missing:
            raise InvalidTargetError(f"{self.name}: missing {', '.join(missing)}")
        if self.arch == "split" and (self._int("aic_cores") < 1 or self._int("aiv_cores") % self._int("aic_cores")):
            raise InvalidTargetError(f"{self.name}: aiv_cores must be a multiple of aic_cores (a MIX block is one AIC "
                                     "and aiv_cores / aic_cores AIV)")
        for s in self.scopes.values():
            if s.usable_bytes > s.physical_bytes:
                raise InvalidTargetError(f"{self.name}.{s.name}: usable > physical")
            if s.alignment_bytes <= 0 or s.alignment_bytes % 32:
                raise InvalidTargetError(f"{self.name}.{s.name}: alignment must be k*32 B")

    def to_table(self) -> list[dict[str, object]]:
        """Rows `{name, value, unit, status, source}` for every fact (for `ascx targets`)."""
        rows: list[dict[str, object]] = [
            {"name": "arch", "value": self.arch, "unit": "", "status": "documented",
             "source": "ascend-facts.md: architecture"},
        ]
        for key, f in self.facts.items():
            rows.append({"name": key, "value": f.value, "unit": UNITS.get(key, "B/cycle"
                         if key.endswith("bytes_per_cycle") else ""),
                         "status": f.status, "source": f.source})
        for s in self.scopes.values():
            for key, f in s.facts().items():
                rows.append({"name": key, "value": f.value, "unit": "B",
                             "status": f.status, "source": f.source})
            rows.append({"name": f"{s.name}.positions", "value": ",".join(s.positions) or "-",
                         "unit": "", "status": "documented", "source": "Ascend C TPosition"})
        return rows

    def format_table(self) -> str:
        """`to_table` as aligned text."""
        rows = self.to_table()
        cols = ["name", "value", "unit", "status", "source"]
        widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        lines = [f"{self.name} ({self.arch}): {self.description}",
                 "  ".join(c.ljust(widths[c]) for c in cols)]
        for r in rows:
            lines.append("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
        return "\n".join(lines)
