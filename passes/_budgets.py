"""On-chip budgets for the passes that stage buffers (`tile`, `double_buffer`): usable
bytes per scope and the bytes of a declared buffer. Not a pass: the registry skips modules
starting with `_`.
"""

from __future__ import annotations

from typing import Mapping

from transformer import ir
from transformer.targets import Target, resolve_target

from ._rewrite import eval_const

def scope_budget(target: "Target | str | None", scope: str) -> int:
    """Usable bytes of `scope` from the target table (None: the default target). A scope
    the target does not have holds nothing (0), never another chip's numbers."""
    t = resolve_target(target)
    return int(t.scope(scope).usable_bytes) if scope in t.scopes else 0


def tensor_bytes(t: ir.TensorDecl, sizes: Mapping[str, int]) -> int:
    """Bytes of `t` at `sizes` (0 when a dimension does not evaluate)."""
    n = 1
    for d in t.shape:
        v = eval_const(d, sizes)
        n *= v if v is not None else 0
    return n * ir.DTYPE_BYTES[t.dtype]
