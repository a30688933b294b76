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
(compiled concrete evaluator), `result` (CapacityResult), `cache`, `errors`; kernel wiring:
`from_kernel` (kernel_buffers, check_kernel_capacity, capacity_gate), `tiles` (solver_tiles).
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

# Kernel wiring (imports the IR; the modules above stay IR-independent).
from .from_kernel import (  # noqa: E402
    CapacityUnknownKernelError,
    CapacityUnsatKernelError,
    KernelCapacityError,
    capacity_gate,
    check_kernel_capacity,
    kernel_buffers,
)
from .tiles import solver_tiles  # noqa: E402


def clear_caches() -> None:
    """Forget every in-process cached result (cold timings, tests)."""
    from . import evaluate, search, solve, tiles

    solve.clear_cache()
    tiles.clear_cache()
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
    "CapacityUnknownKernelError",
    "CapacityUnsatKernelError",
    "CapacityUnsatError",
    "Constraint",
    "Explanation",
    "InvalidBufferError",
    "KernelCapacityError",
    "NoFeasibleTilesError",
    "ScopeUsage",
    "System",
    "UnboundSizeError",
    "UsageRow",
    "best_tiles",
    "build_system",
    "capacity_gate",
    "certify_feasible",
    "check",
    "check_kernel_capacity",
    "clear_caches",
    "feasible_tiles",
    "fmt_bytes",
    "kernel_buffers",
    "solver_tiles",
]
