"""The public Python API: parse, transform, check, emit, verify — for notebooks and scripts.

    from transformer import api
    k = api.parse("examples/softmax.ir", sizes={"R": 64})   # a path, or kernel text
    t = api.transform(k, "fuse,tile,double_buffer")          # a new Kernel (IR is immutable)
    print(api.print_kernel(t))
    api.check(t).status                                      # 'sat' | 'unsat' | 'unknown'
    print(api.emit(t).source)                                # Ascend C
    api.verify(k, t).ok                                      # interpreter before/after

Every function takes `target=` (a name such as "ascend310p", a `Target`, or None for the
default) and raises `AscxError` subclasses for bad input or refused passes
(`transformer/diagnostics.py`; `err.render()` prints the located message). The work is done
by `transformer/driver.py`, which the `ascx` commands call too. `profile` and `tune` are
added here by the timing model and the tuner.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping, Sequence

from . import driver
from .diagnostics import AscxError, PassError
from .driver import VerifyReport
from .ir import Kernel
from .printer import print_kernel
from .targets import Target

if TYPE_CHECKING:
    from passes.base import Pass, TraceEntry

    from .capacity.result import CapacityResult
    from .codegen import Emitted

__all__ = ["AscxError", "Kernel", "PassError", "Target", "VerifyReport", "check", "emit", "parse",
           "print_kernel", "transform", "verify"]


def parse(text_or_path: str, *, sizes: Mapping[str, int] | None = None) -> Kernel:
    """A kernel from `.ir` text, or from a file when the argument is an existing path
    (`-` is stdin); `sizes` overrides `size` defaults."""
    from .diagnostics import Source

    if "\n" not in text_or_path and (text_or_path == "-" or os.path.exists(text_or_path)):
        return driver.load(text_or_path, sizes).kernel
    return driver.load_text(Source("<string>", text_or_path), sizes).kernel


def transform(kernel: Kernel, pipeline: "str | Sequence[Pass]", target: "str | Target | None" = None, *,
              trace: "list[TraceEntry] | None" = None) -> Kernel:
    """Run a pass pipeline (`"fuse,tile{qk.i=64},double_buffer"` or pass instances). With
    `trace`, what each pass did is appended to that list (`entry.render()`)."""
    out, entries = driver.transform(kernel, pipeline, driver.resolve_target(target))
    if trace is not None:
        trace.extend(entries)
    return out


def check(kernel: Kernel, target: "str | Target | None" = None, *, timeout_ms: int | None = None) -> "CapacityResult":
    """The capacity proof: do the kernel's on-chip buffers fit the target? The result's
    `status` is 'sat', 'unsat' (with `explanations`) or 'unknown' (solver timeout)."""
    from .capacity.from_kernel import check_kernel_capacity
    from .capacity.solve import DEFAULT_TIMEOUT_MS

    return check_kernel_capacity(kernel, driver.resolve_target(target), timeout_ms=timeout_ms or DEFAULT_TIMEOUT_MS)


def emit(kernel: Kernel, target: "str | Target | None" = None, *, select: bool = True) -> "Emitted":
    """Ascend C for the kernel: `.source` (the kernel), `.harness` (a host main for the
    emulator), `.warnings`, `.plan` (the lowering plan)."""
    return driver.emit(kernel, driver.resolve_target(target), select=select)


def verify(original: Kernel, transformed: Kernel, *, trials: int = 3, seed: int | None = None,
           emitted: bool = False, target: "str | Target | None" = None) -> VerifyReport:
    """Compare `transformed` with `original` on random inputs (interpreted; with `emitted`,
    as Ascend C compiled against the emulator). `.ok`, per-output `.outputs`, `.seed`."""
    return driver.verify(original, transformed, trials=trials, seed=seed, emitted=emitted,
                         target=driver.resolve_target(target) if emitted else None)
