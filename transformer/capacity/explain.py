"""Turn violated constraints (from the Z3 unsat core) into sentences a user can act on.

A capacity sentence names the scope, each live buffer with its stages and rounded bytes, the
sum, the usable capacity, which transformation multiplied the footprint (from `origin`), and
hints found by trying alternatives against the whole system:

  UB: Qt 2x16 KiB + Kt 2x16 KiB + St 2x64 KiB = 192 KiB > 184 KiB usable (192 KiB - 8 KiB
  API temp) (double_buffer on loop kv doubles Qt, Kt, St); try tile{kv.j=64}, or single-buffer St

Hints: for each bound tile variable of the failing constraint, the largest smaller value
with which *every* hard constraint holds (divisors of the current tile that are multiples of
16 first, then other multiples of 16); then dropping stages of
staged buffers in the failing set (one buffer, else all of them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from . import expr as E
from .evaluate import compile_checker, value, violated
from .model import Constraint, System, alloc_expr, build_system, bytes_expr
from .result import Explanation, fmt_bytes

_MULT = {2: "doubles", 3: "triples", 4: "quadruples"}


def _env_of(c: Constraint, env: Mapping[str, int]) -> bool:
    return E.symbols(c.lhs) <= set(env)


def explain(system: System, c: Constraint, env: Mapping[str, int], *, bound: set[str],
            hints: bool = True, prefix: str = "", in_core: bool = True) -> Explanation:
    """Explanation of constraint `c` violated under `env` (`bound` = user-bound sizes)."""
    if not _env_of(c, env):
        return Explanation(c.name, c.kind, f"{prefix}no allowed value of "
                           f"{', '.join(sorted(E.symbols(c.lhs) - set(env)))} satisfies "
                           f"{E.text(c.lhs)} {'<=' if c.rel == 'le' else 'mod'} {c.rhs}"
                           f"{'' if c.rel == 'le' else ' == 0'}",
                           scope=c.scope, buffers=list(c.buffers), in_core=in_core)
    v = value(c, env)
    if c.holds(v):
        # Violated only jointly with the domain constraints (symbolic case).
        return Explanation(c.name, c.kind, f"{prefix}{c.name} cannot hold together with the "
                           f"allowed sizes ({E.text(c.lhs)} {'<=' if c.rel == 'le' else 'mod'} "
                           f"{c.rhs})", scope=c.scope, buffers=list(c.buffers), value=v,
                           limit=c.rhs, in_core=in_core)
    fn = {"capacity": _capacity, "fractal": _fractal, "cube16": _cube16, "cubemax": _cubemax,
          "copy32": _copy32, "queue": _queue, "kernel_buffers": _kernel}[c.kind]
    sentence, hint_list = fn(system, c, env, v)
    if hints and c.kind == "capacity":
        hint_list = capacity_hints(system, c, env, bound)
    if hint_list:
        sentence += "; try " + ", or ".join(hint_list)
    return Explanation(c.name, c.kind, prefix + sentence, scope=c.scope,
                       buffers=list(c.buffers), value=v, limit=c.rhs, hints=hint_list,
                       in_core=in_core)


def note_pad(system: System, c: Constraint, env: Mapping[str, int]) -> str:
    """Note for a soft copy32 constraint that fails: DataCopyPad is needed."""
    b = system.buffer(c.buffers[0])
    n = value(c, env)
    return (f"{b.name}: DataCopy run #{c.get('copy')} is {n} B, not a multiple of 32 B; "
            f"it needs DataCopyPad (plain DataCopy would silently round down)")


# ---- sentences ------------------------------------------------------------------------
def _capacity(system: System, c: Constraint, env: Mapping[str, int], total: int
              ) -> tuple[str, list[str]]:
    scope = c.scope or ""
    bufs = [system.buffer(n) for n in c.buffers]
    terms = []
    for b in bufs:
        one = E.evaluate(alloc_expr(b, system.target), env)
        terms.append(f"{b.name} {b.stages}x{fmt_bytes(one)}" if b.stages > 1
                     else f"{b.name} {fmt_bytes(one)}")
    if len(bufs) == 1:
        b = bufs[0]
        lhs = f"{b.name} ({b.shape_text(dict(env))} {b.dtype}" + (
            f", {b.stages} stages)" if b.stages > 1 else ")") + f" {fmt_bytes(total)}"
    else:
        lhs = " + ".join(terms) + f" = {fmt_bytes(total)}"
    sc = system.target.scope(scope)
    reserve = ""
    if system.api_temp and scope == "ub":
        reserve = (f" ({fmt_bytes(sc.usable_bytes)} - "
                   f"{fmt_bytes(system.target.api_temp_bytes)} API temp)")
    point = c.get("point")
    where = f" at program point {point}" if point is not None else ""
    sentence = (f"{scope.upper()}: {lhs} > {fmt_bytes(c.rhs)} usable{reserve}{where}"
                f"{_origins(bufs, env, system)}")
    return sentence, []


def _origins(bufs: list, env: Mapping[str, int], system: System) -> str:
    """(double_buffer on loop kv doubles St) — what multiplied the footprint."""
    staged: dict[tuple[str, int], list[str]] = {}
    for b in bufs:
        if b.stages > 1:
            staged.setdefault((b.origin or "stages", b.stages), []).append(b.name)
    if staged:
        parts = [f"{o} {_MULT.get(s, f'makes {s} copies of')} {', '.join(ns)}"
                 if o != "stages" else f"{', '.join(ns)} with {s} stages"
                 for (o, s), ns in staged.items()]
        return " (" + "; ".join(parts) + ")"
    big = max(bufs, key=lambda b: E.evaluate(alloc_expr(b, system.target), env))
    return f" ({big.name} from {big.origin})" if big.origin else ""


def _fractal(system: System, c: Constraint, env: Mapping[str, int], v: int
             ) -> tuple[str, list[str]]:
    b = system.buffer(c.buffers[0])
    up = -(-v // c.rhs) * c.rhs
    return (f"{(c.scope or '').upper()}: {b.name} ({b.shape_text(dict(env))} {b.dtype}) is "
            f"{v} B, not a whole number of {c.rhs} B fractals", [f"dims multiple of 16 "
                                                              f"(pad to {up} B)"])


def _cube16(system: System, c: Constraint, env: Mapping[str, int], v: int
            ) -> tuple[str, list[str]]:
    b = system.buffer(c.buffers[0])
    i = c.get("dim")
    d = b.shape[i]
    lo, hi = (v // c.rhs) * c.rhs, -(-v // c.rhs) * c.rhs
    alts = [x for x in (lo, hi) if x > 0]
    hint = [f"tile{{{d}={x}}}" if isinstance(d, str) else str(x) for x in alts]
    origin = f", {b.origin}" if b.origin else ""
    return (f"{b.name} (cube operand{origin}) dim {i} = {v} is not a multiple of {c.rhs} "
            f"(cube fractals are 16x16)", hint)


def _cubemax(system: System, c: Constraint, env: Mapping[str, int], v: int
             ) -> tuple[str, list[str]]:
    b = system.buffer(c.buffers[0])
    return (f"{b.name} (cube operand) dim {c.get('dim')} = {v} > {c.rhs} "
            f"(Mmad m, n, k <= {c.rhs})", [])


def _copy32(system: System, c: Constraint, env: Mapping[str, int], v: int
            ) -> tuple[str, list[str]]:
    b = system.buffer(c.buffers[0])
    per = c.rhs // b.elem_bytes or 1
    return (f"{b.name}: DataCopy run #{c.get('copy')} is {v} B, not a multiple of {c.rhs} B, "
            f"and DataCopyPad is not allowed (DataCopy would silently round down)",
            [f"a length multiple of {per} {b.dtype} elements"])


def _queue(system: System, c: Constraint, env: Mapping[str, int], v: int
           ) -> tuple[str, list[str]]:
    parts = " + ".join(f"{n} x{system.buffer(n).stages}" for n in c.buffers)
    return (f"{c.get('position')}: {v} queue buffers ({parts}) > {c.rhs} per TPosition on "
            f"{system.target.name} (more hangs the device)", ["fewer stages"])


def _kernel(system: System, c: Constraint, env: Mapping[str, int], v: int
            ) -> tuple[str, list[str]]:
    return (f"kernel: {v} buffers (stages summed over {len(c.buffers)} allocations) > "
            f"{c.rhs} per kernel (InitBuffer limit)", ["fewer stages or buffers"])


# ---- hints ----------------------------------------------------------------------------
def _fits(system: System, env: Mapping[str, int]) -> bool:
    return not violated(system, env)


def _smaller(current: int) -> list[int]:
    """Candidate smaller tile values, in order of preference.

    First the divisors of `current` that are multiples of 16, largest first (a divisor of
    the current tile still divides the problem size, so no new tail appears); then every
    smaller multiple of 16; then any smaller value (for tiles under 16).
    """
    below = range(current - 1, 0, -1)
    div16 = [x for x in below if current % x == 0 and x % 16 == 0]
    m16 = [x for x in below if x % 16 == 0 and x not in div16]
    rest = [x for x in below if x % 16]
    return div16 + m16 + rest


def capacity_hints(system: System, c: Constraint, env: Mapping[str, int],
                   bound: set[str], limit: int = 2) -> list[str]:
    """Largest smaller tiles and dropped stages that make every hard constraint hold."""
    out: list[tuple[float, int, str]] = []
    for v in sorted(E.symbols(c.lhs) & bound):
        others = {k: val for k, val in env.items() if k != v}
        ok = compile_checker(system, [v], others)
        for x in _smaller(int(env[v])):
            if ok(x):
                trial = dict(env, **{v: x})
                out.append((x / env[v], _footprint(system, trial), f"tile{{{v}={x}}}"))
                break
    # Least drastic change first: the smallest relative cut of one tile, then the largest
    # remaining footprint.
    out.sort(key=lambda t: (-t[0], -t[1]))
    hints = [h for _, _, h in out[:limit]]
    staged = [system.buffer(n) for n in c.buffers if system.buffer(n).stages > 1]
    for b in sorted(staged, key=lambda b: -E.evaluate(bytes_expr(b), env)):
        if _fits(_with_stages(system, {b.name}), env):
            hints.append(f"single-buffer {b.name}" + (f" (undo {b.origin})" if b.origin else ""))
            break
    else:
        if len(staged) > 1 and _fits(_with_stages(system, {b.name for b in staged}), env):
            hints.append("single-buffer " + ", ".join(b.name for b in staged))
    return hints


def _footprint(system: System, env: Mapping[str, int]) -> int:
    return sum(E.evaluate(alloc_expr(b, system.target), env) * b.stages
               for b in system.buffers if b.scope != "gm")


def _with_stages(system: System, names: set[str]) -> System:
    bufs = [replace(b, stages=1) if b.name in names else b for b in system.buffers]
    return build_system(bufs, system.target, api_temp=system.api_temp)
