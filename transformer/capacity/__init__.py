"""Capacity proofs with Z3 over an abstract buffer list (independent of the IR).

    from transformer.capacity import Buffer, check, best_tiles
    bufs = [Buffer("Qt", "ub", "f16", ("q.i", 64), stages=2, origin="double_buffer on loop kv"),
            ...]
    res = check(bufs, "ascend910b2", sizes={"q.i": 128}, api_temp=True)
    res.status            # "sat" | "unsat" | "unknown"
    print(res.format_table())
    best = best_tiles(bufs, "ascend910b2", {"q.i": [64, 128, 256]})

Modules: `buffer` (Buffer), `model` (named constraints), `solve` (check, Z3), `explain`
(unsat core -> sentences and hints), `search` (feasible_tiles, best_tiles), `evaluate`
(compiled concrete evaluator), `result` (CapacityResult), `cache`, `errors`.
See docs/capacity.md.
"""

from .buffer import DTYPE_BYTES, Buffer
from .errors import (
    CapacityError,
    CapacityUnknownError,
    CapacityUnsatError,
    InvalidBufferError,
    NoFeasibleTilesError,
    UnboundSizeError,
)
from .model import Constraint, System, build_system
from .result import CapacityResult, Explanation, ScopeUsage, UsageRow, fmt_bytes
from .search import DEFAULT_CANDIDATES, best_tiles, certify_feasible, feasible_tiles
from .solve import DEFAULT_TIMEOUT_MS, check


def clear_caches() -> None:
    """Forget every in-process cached result (cold timings, tests)."""
    from . import evaluate, search, solve

    solve.clear_cache()
    search.clear_cache()
    evaluate._COMPILED.clear()


__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_TIMEOUT_MS",
    "DTYPE_BYTES",
    "Buffer",
    "CapacityError",
    "CapacityResult",
    "CapacityUnknownError",
    "CapacityUnsatError",
    "Constraint",
    "Explanation",
    "InvalidBufferError",
    "NoFeasibleTilesError",
    "ScopeUsage",
    "System",
    "UnboundSizeError",
    "UsageRow",
    "best_tiles",
    "build_system",
    "certify_feasible",
    "check",
    "clear_caches",
    "feasible_tiles",
    "fmt_bytes",
]
