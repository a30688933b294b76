"""Coverage of a read by the union of several writes (privatisation, `deps.privatizable`).

A buffer is private to each iteration of a loop L when every read of it is covered by
writes earlier in the same iteration. `deps._covers` asks that of one write at a time;
this module answers it for several writes together, the shape a nest takes when it stores
one tensor at several disjoint index patterns: RoPE's `Y_ub[s, h, d]` and
`Y_ub[s, h, d + Dh]` (two halves), or `Y_ub[s, h, 2 * k]` and `Y_ub[s, h, 2 * k + 1]`
(interleaved pairs), read back whole by the copy-out `copy Y <- Y_ub[0:1, 0:H, 0:D]`.

The test is by enumeration of small index sets, no solver: in each dimension a write
touches either one index over the loops it shares with the read (then it must be the
read's index), or the set `{c + a1*v1 + a2*v2 + ...}` over loops of its own with constant
bounds (each such loop in one dimension only), or a constant copy range. The writes cover
the read when, for one dimension `d`, the writes whose other dimensions each contain the
read's interval there jointly hold the read's whole interval in `d`. That is sufficient
(never claims coverage it has not shown) and exact for the two RoPE forms.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Mapping, Sequence

from . import ir

from .affine import Affine, to_affine

if TYPE_CHECKING:
    from .deps import AccessInfo

MAX_ELEMENTS = 1 << 16  # per dimension: larger index sets are not enumerated (no coverage shown)

# one dimension of one write: ("eq", affine over the shared loops) or ("set", indices)
_Desc = tuple[str, object]


def covered_by_union(writes: Sequence["AccessInfo"], r: "AccessInfo", sizes: dict[str, int]) -> bool:
    """Whether the writes `writes` (each `=` or a copy destination, each before `r` in the
    same iteration of the loop asked about) together write every element read `r` reads."""
    if len(writes) < 2 or any(_gathered(d) for d in r.dims):
        return False
    env = _loop_intervals(r, sizes)
    want: list[tuple[int, int]] = []  # per dimension: the closed interval of indices R reads
    for dr in r.dims:
        ends = [_interval(to_affine(e, sizes), env) for e in dr[1:]]
        if any(x is None for x in ends):
            return False
        iv = (ends[0][0], ends[0][1] if dr[0] == "pt" else ends[1][1] - 1)  # type: ignore[index]
        if iv[1] - iv[0] + 1 > MAX_ELEMENTS:
            return False
        want.append(iv)
    descs = [d for d in (_write_sets(w, r, sizes) for w in writes) if d is not None]
    for split in range(len(r.dims)):
        got: set[int] = set()
        for desc in descs:
            if all(_holds(desc[k], want[k], dr, sizes) for k, dr in enumerate(r.dims) if k != split):
                if desc[split][0] == "set":
                    got |= desc[split][1]  # type: ignore[arg-type]
                elif _holds(desc[split], want[split], r.dims[split], sizes):
                    return True
        lo, hi = want[split]
        if got and all(x in got for x in range(lo, hi + 1)):
            return True
    return False


def _gathered(d: tuple) -> bool:
    return d[0] == "pt" and isinstance(d[1], ir.Access)


def _loop_intervals(a: "AccessInfo", sizes: dict[str, int]) -> dict[str, tuple[int, int]]:
    """The closed interval of each loop variable of `a`'s statement (outermost first; a loop
    whose bounds are not affine in the loops outside it is left out)."""
    env: dict[str, tuple[int, int]] = {}
    for lc in a.stmt.loops:
        lo, hi = _interval(to_affine(lc.loop.lo, sizes), env), _interval(to_affine(lc.loop.hi, sizes), env)
        if lo is not None and hi is not None:
            env[lc.loop.var] = (lo[0], hi[1] - 1)
    return env


def _interval(f: "Affine | None", env: Mapping[str, tuple[int, int]]) -> tuple[int, int] | None:
    if f is None or any(v not in env for v in f.vars):
        return None
    lo = hi = f.const
    for v, c in f.coeffs:
        lo += min(c * env[v][0], c * env[v][1])
        hi += max(c * env[v][0], c * env[v][1])
    return lo, hi


def _holds(desc: _Desc, want: tuple[int, int], dr: tuple, sizes: dict[str, int]) -> bool:
    """Does one write dimension hold every index the read takes in that dimension?"""
    if desc[0] == "eq":  # the same index over the shared loops: only a point read of it
        return dr[0] == "pt" and to_affine(dr[1], sizes) == desc[1]
    lo, hi = want
    s = desc[1]
    return all(x in s for x in range(lo, hi + 1))  # type: ignore[operator]


def _write_sets(w: "AccessInfo", r: "AccessInfo", sizes: dict[str, int]) -> list[_Desc] | None:
    """Per dimension of `w`, what it writes (see the module docstring), or None when some
    dimension is of no such form."""
    shared = 0
    for lw, lr in zip(w.stmt.loops, r.stmt.loops):
        if lw.path != lr.path:
            break
        shared += 1
    shared_names = {lc.loop.var for lc in w.stmt.loops[:shared]}
    private = {lc.loop.var: lc.loop for lc in w.stmt.loops[shared:]}
    used: set[str] = set()
    out: list[_Desc] = []
    for dw in w.dims:
        if _gathered(dw):
            return None
        if dw[0] == "rng":
            lo, hi = to_affine(dw[1], sizes), to_affine(dw[2], sizes)
            if lo is None or hi is None or not lo.is_const() or not hi.is_const():
                return None
            if hi.const - lo.const > MAX_ELEMENTS:
                return None
            out.append(("set", set(range(lo.const, hi.const))))
            continue
        f = to_affine(dw[1], sizes)
        if f is None:
            return None
        if f.vars <= shared_names:
            out.append(("eq", f))
            continue
        if f.vars & shared_names or f.vars & used or not f.vars <= set(private):
            return None
        s = _enumerate(f, private, sizes)
        if s is None:
            return None
        used |= f.vars
        out.append(("set", s))
    return out


def _enumerate(f: "Affine", private: Mapping[str, ir.For], sizes: dict[str, int]) -> set[int] | None:
    """The values of `f` over its loops (each from a constant to a constant), or None."""
    ranges = []
    count = 1
    for v in sorted(f.vars):
        loop = private[v]
        lo, hi = to_affine(loop.lo, sizes), to_affine(loop.hi, sizes)
        if lo is None or hi is None or not lo.is_const() or not hi.is_const():
            return None
        count *= max(0, hi.const - lo.const)
        if count > MAX_ELEMENTS:
            return None
        ranges.append((f.coeff(v), range(lo.const, hi.const)))
    return {f.const + sum(c * x for (c, _), x in zip(ranges, xs)) for xs in itertools.product(*(r for _, r in ranges))}
