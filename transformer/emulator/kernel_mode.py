"""The kernel mode (AIV / AIC / MIX) of each kernel of a sample, read from its source.

On the device the bisheng compiler decides a kernel's type from what the kernel uses (when
the kernel does not fix it with ``KERNEL_TASK_TYPE_DEFAULT``): vector code alone runs on the
vector cores, cube code alone on the cube cores, and a kernel using both, or the high-level
``Matmul`` API (whose vector side drives the cube), is a mixed kernel (1 AIC + 2 AIV per
block on a split-architecture chip). The CPU-debug host names the mode with
``AscendC::SetKernelMode``; public matmul samples leave that call out, so the emulator build
infers the mode here and compiles it in (``-DASCX_EMU_INFERRED_MODES="name:mode;..."``,
read by ``ascx_emu/runtime.h``); an explicit ``SetKernelMode`` call still wins.

The reading is per source file (with the local headers it includes): every kernel defined in
one file gets the file's mode. It is a text scan, not a compiler: what it looks for is
listed in :data:`CUBE_POSITIONS`, :data:`VECTOR_POSITIONS`, :data:`MATMUL_API` and
:data:`TASK_TYPES`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["CUBE_POSITIONS", "VECTOR_POSITIONS", "infer_mode", "infer_modes", "kernel_texts", "mode_flags"]

#: Queue / buffer positions that live on the cube core (L1, L0A/B, L0C, bias table).
CUBE_POSITIONS = frozenset({"A1", "A2", "B1", "B2", "C1", "C2", "CO1"})
#: Positions on the vector core (the unified buffer).
VECTOR_POSITIONS = frozenset({"VECIN", "VECOUT", "VECCALC"})
_POSITION = re.compile(r"\b(?:TPosition|QuePosition)\s*::\s*(\w+)")
#: The high-level matmul object: mixed unless the kernel defines ASCENDC_CUBE_ONLY.
MATMUL_API = re.compile(r"\bREGIST_MATMUL_OBJ\b|\bMatmul(?:Impl)?\s*<")
_CUBE_ONLY = re.compile(r"^\s*#\s*define\s+ASCENDC_CUBE_ONLY\b", re.MULTILINE)
#: ``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_...)`` values and the launch they ask for.
TASK_TYPES = {
    "AIV_ONLY": "aiv", "MIX_AIV_1_0": "aiv", "AIC_ONLY": "aic", "MIX_AIC_1_0": "aic",
    "MIX_AIC_1_1": "mix", "MIX_AIC_1_2": "mix",
}
_TASK_TYPE = re.compile(r"\bKERNEL_TASK_TYPE_DEFAULT\s*\(\s*KERNEL_TYPE_(\w+)\s*\)")
_KERNEL = re.compile(r"__global__\s+__aicore__\s+void\s+(\w+)\s*\(|__aicore__\s+__global__\s+void\s+(\w+)\s*\(")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _text_with_local_headers(path: Path, seen: set[Path] | None = None) -> str:
    """The file's text (comments removed) followed by the texts of the quoted includes found
    next to it (recursively; system and emulator headers are not read)."""
    seen = set() if seen is None else seen
    path = path.resolve()
    if path in seen or not path.is_file():
        return ""
    seen.add(path)
    text = _COMMENT.sub(" ", path.read_text(errors="replace"))
    parts = [text]
    for inc in _INCLUDE.findall(text):
        parts.append(_text_with_local_headers(path.parent / inc, seen))
    return "\n".join(parts)


def infer_mode(text: str) -> str:
    """``aiv``, ``aic`` or ``mix`` for one kernel source text (as described in the module)."""
    text = _COMMENT.sub(" ", text)
    task = _TASK_TYPE.search(text)
    if task and task.group(1) in TASK_TYPES:
        return TASK_TYPES[task.group(1)]
    positions = set(_POSITION.findall(text))
    cube = bool(positions & CUBE_POSITIONS)
    vector = bool(positions & VECTOR_POSITIONS)
    if MATMUL_API.search(text):
        return "aic" if _CUBE_ONLY.search(text) else "mix"
    if cube and vector:
        return "mix"
    return "aic" if cube else "aiv"


def kernel_texts(kernels: Iterable[Path]) -> list[str]:
    """Each kernel file's text with its local headers, comments removed."""
    return [_text_with_local_headers(path) for path in kernels]


def infer_modes(kernels: Iterable[Path]) -> dict[str, str]:
    """Kernel name -> mode for every ``__global__ __aicore__`` function of the files."""
    modes: dict[str, str] = {}
    for text in kernel_texts(kernels):
        names = [a or b for a, b in _KERNEL.findall(text)]
        if names:
            mode = infer_mode(text)
            modes.update({n: mode for n in names})
    return modes


def mode_flags(kernels: Sequence[Path]) -> list[str]:
    """The compiler flag carrying :func:`infer_modes` to the emulator runtime (none if no
    kernel is found)."""
    modes = infer_modes(kernels)
    if not modes:
        return []
    return ['-DASCX_EMU_INFERRED_MODES="' + ";".join(f"{n}:{m}" for n, m in sorted(modes.items())) + '"']
