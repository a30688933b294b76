"""A process-wide memo of pure functions of (kernel, target): the analytic estimate and one
masked pass application (`space.apply_masked`: apply, then the capacity proof).

Why: every search prices and realizes candidates by applying passes and proving their
buffers fit, and the same kernels come back again and again: neighbouring knob points share
pipeline prefixes, and every `tune` call (a resumed run, each seed and strategy of
`bench/bench_tune.py --large`, each shape of `--shapes`, the tests) builds its space from
scratch. Both results depend only on the canonical kernel (its printed text and sizes, what
`space.kernel_key` hashes) and the target, and the IR is immutable (frozen dataclasses), so a
result computed once can be handed out again.

The key holds the target object's identity besides its name: a target built by hand
(`dataclasses.replace` of a table entry, in tests) never sees another's results; the memo
keeps a reference to the target so its id is not reused. At most `LIMIT` entries per memo
(least recently used dropped first).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Callable, Generic, TypeVar

from .. import ir
from ..printer import print_kernel

if TYPE_CHECKING:
    from ..targets import Target

T = TypeVar("T")
LIMIT = 8192


class KernelMemo(Generic[T]):
    """`memo.get(kernel, target, extra, compute)`: compute() once per (canonical kernel,
    target, extra)."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._d: OrderedDict[tuple[str, tuple[tuple[str, int], ...], int, str], tuple[object, T]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, kernel: ir.Kernel, target: "Target | str | None", extra: str, compute: Callable[[], T]) -> T:
        # the canonical kernel as `space.kernel_key` hashes it: the printed text and the sizes
        key = (print_kernel(kernel), tuple(sorted(kernel.size_values().items())), id(target), extra)
        got = self._d.get(key)
        if got is not None:
            self._d.move_to_end(key)
            self.hits += 1
            return got[1]
        self.misses += 1
        value = compute()
        self._d[key] = (target, value)
        if len(self._d) > self.limit:
            self._d.popitem(last=False)
        return value

    def clear(self) -> None:
        self._d.clear()
        self.hits = self.misses = 0
