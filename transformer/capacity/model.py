"""The constraint system: buffers + target -> named constraints.

Each constraint is named (the name is the Z3 tracking literal, so an unsat core is a list of
these names) and carries what an explanation needs (scope, buffers, dim).  The same
`Constraint` objects feed the Z3 encoding (`solve.py`) and the compiled evaluator used by
the tile search (`search.py`), so both agree by construction.

Formal conditions (b ranges over buffers, bytes(b) = sizeof(dtype) * prod(shape)):
  capacity:{s}[@p]   sum_{b in s, live at p} roundup(bytes(b), A_s) * stages(b) <= U_s
                     A_s = max(32, alignment of s) (InitBuffer rounds to 32 B; L0 to fractals)
                     U_s = usable(s) - (api_temp_bytes if s = ub and the API temp is reserved)
  fractal:{b}        bytes(b) mod F_s == 0          (L0A/L0B 512 B, L0C 16x16 fp32 = 1024 B)
  cube16:{b}[i]      shape(b)[i] mod 16 == 0         (cube operands are 16x16 fractals; i: the last two dims)
  cubemax:{b}[i]     shape(b)[i] <= 4095             (Mmad m, n, k <= 4095)
  copy32:{b}#k       sizeof(dtype) * len_k mod 32 == 0  (DataCopy; soft if DataCopyPad allowed)
  queue:{P}[@p]      sum_{queue buffers at TPosition P, live at p} stages(b) <= 8
  kernel_buffers[@p] sum_{on-chip b live at p} stages(b) <= 64
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..targets import Target
from . import expr as E
from .buffer import Buffer
from .errors import InvalidBufferError

ON_CHIP_EXCLUDED = frozenset({"gm"})


@dataclass(frozen=True)
class Constraint:
    """One named constraint `lhs REL rhs` with REL in {"le", "dvd"}.

    "le": lhs <= rhs;  "dvd": lhs mod rhs == 0.  `hard=False` marks a constraint that only
    flags (a ragged DataCopy that DataCopyPad can handle).
    """

    name: str
    kind: str
    lhs: E.Expr
    rel: str
    rhs: int
    hard: bool = True
    scope: str | None = None
    buffers: tuple[str, ...] = ()
    info: tuple[tuple[str, Any], ...] = ()

    def holds(self, value: int) -> bool:
        return value <= self.rhs if self.rel == "le" else value % self.rhs == 0

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.info).get(key, default)

    def python(self, names: Mapping[str, str]) -> str:
        src = E.to_python(self.lhs, names)
        return f"({src} <= {self.rhs})" if self.rel == "le" else f"({src} % {self.rhs} == 0)"

    def z3(self, zvars: Mapping[str, Any]) -> Any:
        t = E.to_z3(self.lhs, zvars)
        return t <= self.rhs if self.rel == "le" else t % self.rhs == 0


@dataclass(frozen=True)
class System:
    """All constraints of one buffer set on one target."""

    target: Target
    buffers: tuple[Buffer, ...]
    constraints: tuple[Constraint, ...]
    variables: tuple[str, ...]
    limits: Mapping[str, int]
    api_temp: bool
    _key: list[str] = field(default_factory=list, compare=False, repr=False)

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def key(self) -> str:
        """Stable hash of the constraint system (target facts included)."""
        if not self._key:
            payload = {
                "target": self.target.name,
                "facts": sorted((k, repr(f.value)) for k, f in self.target.all_facts().items()),
                "constraints": [(c.name, c.lhs, c.rel, c.rhs, c.hard) for c in self.constraints],
                "limits": sorted(self.limits.items()),
            }
            blob = json.dumps(payload, sort_keys=True, default=str).encode()
            self._key.append(hashlib.sha256(blob).hexdigest())
        return self._key[0]

    def hard(self) -> list[Constraint]:
        return [c for c in self.constraints if c.hard]

    def soft(self) -> list[Constraint]:
        return [c for c in self.constraints if not c.hard]


def bytes_expr(b: Buffer) -> E.Expr:
    """bytes(b) = sizeof(dtype) * prod(shape); with `row_align` a (rank >= 2), the innermost
    dim's bytes are rounded up to a: prod(shape[:-1]) * roundup(sizeof * shape[-1], a)."""
    dims = [E.var(d) if isinstance(d, str) else E.const(d) for d in b.shape]
    if b.row_align and len(dims) >= 2:
        row = E.roundup(E.prod(E.const(b.elem_bytes), dims[-1]), b.row_align)
        return E.prod(row, *dims[:-1])
    return E.prod(E.const(b.elem_bytes), *dims)


def alloc_alignment(target: Target, scope: str) -> int:
    """InitBuffer rounds each buffer to 32 B; scopes with coarser alignment round to it."""
    return max(32, target.scope(scope).alignment_bytes)


def alloc_expr(b: Buffer, target: Target) -> E.Expr:
    """roundup(bytes(b), A_scope) * slots(b): the bytes one stage of `b` occupies."""
    one = E.roundup(bytes_expr(b), alloc_alignment(target, b.scope))
    return one if b.slots == 1 else E.prod(one, E.const(b.slots))


def scope_limit(target: Target, scope: str, api_temp: bool) -> int:
    """U_s: usable bytes minus the API temp area in UB when it is reserved."""
    usable = target.scope(scope).usable_bytes
    if api_temp and scope == "ub":
        usable -= target.api_temp_bytes
    return usable


def _validate(buffers: Iterable[Buffer], target: Target) -> tuple[Buffer, ...]:
    out = tuple(buffers)
    seen: set[str] = set()
    for b in out:
        if not isinstance(b, Buffer):
            raise InvalidBufferError(f"expected Buffer, got {type(b).__name__}")
        if b.name in seen:
            raise InvalidBufferError(f"two buffers are called {b.name!r}")
        seen.add(b.name)
        if b.scope not in target.scopes:
            raise InvalidBufferError(
                f"buffer {b.name}: target {target.name} has no scope {b.scope!r}",
                f"scopes: {', '.join(target.scopes)}")
        if b.position is not None:
            try:
                mapped = target.scope_of_position(b.position).name
            except KeyError:
                raise InvalidBufferError(
                    f"buffer {b.name}: TPosition {b.position} is unknown on {target.name}") from None
            if mapped != b.scope:
                raise InvalidBufferError(
                    f"buffer {b.name}: TPosition {b.position} lives in {mapped.upper()}, "
                    f"not {b.scope.upper()}")
    return out


def _live_sets(bufs: list[Buffer]) -> list[tuple[int | None, list[Buffer]]]:
    """Maximal sets of simultaneously live buffers (checked at every live-range start)."""
    if all(b.live is None for b in bufs):
        return [(None, bufs)]
    points = sorted({b.live[0] for b in bufs if b.live is not None}) or [0]
    sets: list[tuple[int | None, list[Buffer]]] = []
    for p in points:
        live = [b for b in bufs if b.live is None or b.live[0] <= p <= b.live[1]]
        sets.append((p, live))
    names = [frozenset(b.name for b in s) for _, s in sets]
    keep = []
    for i, (p, s) in enumerate(sets):
        dominated = any(
            (names[i] < names[j]) or (names[i] == names[j] and j < i) for j in range(len(sets)))
        if not dominated:
            keep.append((p, s))
    return keep


def build_system(buffers: Iterable[Buffer], target: Target, *, api_temp: bool = False) -> System:
    """The named constraints of `buffers` on `target` (see the module docstring)."""
    bufs = _validate(buffers, target)
    cons: list[Constraint] = []
    on_chip = [b for b in bufs if b.scope not in ON_CHIP_EXCLUDED]
    limits: dict[str, int] = {}

    # capacity:{s}[@p]  sum roundup(bytes, A_s) * stages <= U_s
    by_scope: dict[str, list[Buffer]] = {}
    for b in on_chip:
        by_scope.setdefault(b.scope, []).append(b)
    for scope, members in by_scope.items():
        limit = scope_limit(target, scope, api_temp)
        limits[scope] = limit
        for point, live in _live_sets(members):
            name = f"capacity:{scope}" if point is None else f"capacity:{scope}@{point}"
            lhs = E.add(*(E.prod(alloc_expr(b, target), E.const(b.stages)) for b in live))
            cons.append(Constraint(name, "capacity", lhs, "le", limit, scope=scope,
                                   buffers=tuple(b.name for b in live),
                                   info=(("point", point),)))

    for b in bufs:
        sc = target.scope(b.scope)
        # fractal:{b}  bytes mod F_s == 0
        if sc.fractal_bytes:
            cons.append(Constraint(f"fractal:{b.name}", "fractal", bytes_expr(b), "dvd",
                                   sc.fractal_bytes, scope=b.scope, buffers=(b.name,)))
        # cube16 / cubemax: the two matrix dims of a cube operand (its last two) are
        # multiples of 16 and <= 4095; leading dims are batch dims (one matrix each)
        if b.cube_operand:
            for i, d in enumerate(b.shape):
                if i < len(b.shape) - 2:
                    continue
                de = E.var(d) if isinstance(d, str) else E.const(d)
                cons.append(Constraint(f"cube16:{b.name}[{i}]", "cube16", de, "dvd",
                                       target.cube_m, scope=b.scope, buffers=(b.name,),
                                       info=(("dim", i),)))
                cons.append(Constraint(f"cubemax:{b.name}[{i}]", "cubemax", de, "le",
                                       target.mmad_max_dim, scope=b.scope, buffers=(b.name,),
                                       info=(("dim", i),)))
        # copy32:{b}#k  sizeof * len mod 32 == 0 (hard only when DataCopyPad is not allowed)
        for k, c in enumerate(b.copy_lengths):
            parts = c if isinstance(c, tuple) else (c,)
            lhs = E.prod(E.const(b.elem_bytes),
                         *(E.var(p) if isinstance(p, str) else E.const(p) for p in parts))
            cons.append(Constraint(f"copy32:{b.name}#{k}", "copy32", lhs, "dvd",
                                   target.datacopy_granularity_bytes, hard=not b.pad_allowed,
                                   scope=b.scope, buffers=(b.name,), info=(("copy", k),)))

    # queue:{P}[@p]  sum of stages of queue buffers at TPosition P live at p <= 8
    # kernel_buffers[@p]  sum of stages of on-chip buffers live at p <= 64
    # (per live set: the lowering resets the pipe between top-level nests)
    for point, live in _live_sets(on_chip) if on_chip else []:
        at = "" if point is None else f"@{point}"
        by_pos: dict[str, list[Buffer]] = {}
        for b in live:
            if b.is_queue:
                by_pos.setdefault(b.position or "", []).append(b)
        for pos, members in sorted(by_pos.items()):
            cons.append(Constraint(f"queue:{pos}{at}", "queue",
                                   E.const(sum(b.stages for b in members)), "le",
                                   target.max_queue_buffers_per_position,
                                   scope=members[0].scope, buffers=tuple(b.name for b in members),
                                   info=(("position", pos), ("point", point))))
        cons.append(Constraint(f"kernel_buffers{at}", "kernel_buffers",
                               E.const(sum(b.stages for b in live)), "le",
                               target.max_buffers_per_kernel,
                               buffers=tuple(b.name for b in live), info=(("point", point),)))

    variables = sorted(set().union(*(b.symbols() for b in bufs))) if bufs else []
    return System(target, bufs, tuple(cons), tuple(variables), limits, api_temp)
