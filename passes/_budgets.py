"""On-chip budgets for the passes that stage buffers (`tile`, `double_buffer`): usable
bytes per scope and the bytes of a declared buffer. Not a pass: the registry skips modules
starting with `_`.
"""

from __future__ import annotations

from typing import Any, Mapping

from transformer import ir

from ._rewrite import eval_const

# Usable bytes per scope on the Atlas A2 / 910B when no target table is given.
DEFAULT_BUDGETS: dict[str, int] = {
    "ub": 192 * 1024,
    "l1": 512 * 1024,
    "l0a": 64 * 1024,
    "l0b": 64 * 1024,
    "l0c": 128 * 1024,
}


def scope_budget(target: Any, scope: str) -> int:
    """Usable bytes of `scope`: from the target table when one is given (a `Target` or a
    target name), else the 910B numbers in `DEFAULT_BUDGETS`."""
    if target is not None:
        try:
            if isinstance(target, str):
                from transformer.targets import get_target

                target = get_target(target)
            return int(target.scope(scope).usable_bytes)
        except Exception:  # unknown scope on this target: fall back
            pass
    return DEFAULT_BUDGETS.get(scope, 0)


def tensor_bytes(t: ir.TensorDecl, sizes: Mapping[str, int]) -> int:
    """Bytes of `t` at `sizes` (0 when a dimension does not evaluate)."""
    n = 1
    for d in t.shape:
        v = eval_const(d, sizes)
        n *= v if v is not None else 0
    return n * ir.DTYPE_BYTES[t.dtype]
