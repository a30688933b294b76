"""Build and run a sample folder in the public CPU-debug layout against the emulator.

A public Ascend C kernel-launch sample keeps a host program (``main.cpp``, which defines
``main`` and includes ``data_utils.h`` / ``tikicpulib.h``) next to its kernels
(``*_custom.cpp``), reads ``input/*.bin`` and writes ``output/*.bin`` relative to the folder.
:func:`find_sources` picks those files, :func:`build_folder` compiles them together with the
emulator flags (the folder itself on the include path), :func:`run_folder` runs the binary in
the folder. ``ascx emulator build DIR`` is the command-line front end.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from . import RunResult, compile_files, default_cache_dir, run_binary
from .kernel_mode import mode_flags
from .launch_header import write_launch_headers
from .opproject import OpProjectError, is_op_project, op_project

__all__ = ["FolderSources", "FolderError", "find_sources", "build_folder", "make_output_dir", "run_folder"]

_LAUNCH_INCLUDE = re.compile(r'#\s*include\s+"aclrtlaunch_\w+\.h"')
_MAIN = re.compile(r"^\s*(?:int|int32_t|auto)\s+main\s*\(", re.MULTILINE)
_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx")


class FolderError(ValueError):
    """The folder is not a buildable sample (no host program, several, no kernel)."""


@dataclass(frozen=True)
class FolderSources:
    """The host program and the kernel sources of one sample folder."""

    root: Path
    main: Path
    kernels: tuple[Path, ...]
    include: tuple[Path, ...] = ()  # searched first (default: the folder itself)
    flags: tuple[str, ...] = ()     # extra compiler flags (an op project's -include / -DDTYPE_*)

    @property
    def all(self) -> tuple[Path, ...]:
        return (self.main, *self.kernels)


def find_sources(root: Path, driver_dir: Path | None = None) -> FolderSources:
    """The .cpp files directly in ``root``: the one defining ``main`` and the kernels.

    Subfolders (``scripts/``, ``cmake/``, ``input/``...) are not searched: the samples keep
    their sources at the top level. An op project (``op_host/`` and ``op_kernel/``) is built
    as :mod:`.opproject` describes (its generated driver, if any, goes to ``driver_dir``).
    """
    if not root.is_dir():
        raise FolderError(f"{root}: not a directory")
    if is_op_project(root):
        try:
            op = op_project(root, driver_dir if driver_dir is not None else default_cache_dir() / "op_drivers")
        except OpProjectError as e:
            raise FolderError(str(e)) from None
        return FolderSources(root, op.main, op.sources, op.include, op.flags)
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix in _SOURCE_SUFFIXES)
    mains = [p for p in files if _MAIN.search(p.read_text(errors="replace"))]
    if not mains:
        raise FolderError(f"{root}: no host program (a .cpp file defining main) among {[p.name for p in files]}")
    if len(mains) > 1:
        raise FolderError(f"{root}: several files define main: {[p.name for p in mains]}")
    kernels = tuple(p for p in files if p != mains[0])
    if not kernels:
        raise FolderError(f"{root}: {mains[0].name} has no kernel source next to it (*_custom.cpp)")
    return FolderSources(root, mains[0], kernels)


def _folder_key(src: FolderSources) -> str:
    """A directory name for the generated headers of one folder's kernels (by their text)."""
    h = hashlib.sha256()
    for p in src.kernels:
        h.update(str(p.resolve()).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def build_folder(root: Path, *, sanitize: bool = False, warnings_as_errors: bool = False,
                 extra_flags: Sequence[str] = (), cache_dir: Path | None = None,
                 scope_bytes: Mapping[str, int] | None = None,
                 infer_kernel_mode: bool = True) -> tuple[FolderSources, Path]:
    """Compile the folder's host program and kernels into one cached binary.

    ``scope_bytes`` sizes the local memories (a target table's, for a profile). With
    ``infer_kernel_mode`` each kernel launched without ``SetKernelMode`` runs in the mode its
    source asks for (:mod:`.kernel_mode`; off for a coupled chip, where every core is one).

    Raises :class:`FolderError` for a folder without a host program and
    :class:`transformer.emulator.CompileError` when g++ rejects the sources.
    """
    src = find_sources(root, None if cache_dir is None else Path(cache_dir) / "op_drivers")
    modes = mode_flags(src.kernels) if infer_kernel_mode else []
    include = list(src.include or (root.resolve(),))
    if _LAUNCH_INCLUDE.search(src.main.read_text(errors="replace")):
        # an NPU host: the aclrtlaunch_<kernel>.h headers its CANN build would generate
        gen = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "launch_headers" / _folder_key(src)
        write_launch_headers(src.kernels, gen)
        include.append(gen)
    binary = compile_files(list(src.all), include=include, cache_dir=cache_dir,
                           name=root.resolve().name or "sample", sanitize=sanitize, warnings_as_errors=warnings_as_errors,
                           extra_flags=[*src.flags, *modes, *extra_flags], scope_bytes=scope_bytes)
    return src, binary


def make_output_dir(root: Path) -> None:
    """Create the folder's ``output/`` (the sample hosts write there without creating it)."""
    (root / "output").mkdir(exist_ok=True)


def run_folder(root: Path, binary: Path, args: Sequence[str] = (), *, timeout: float = 300.0) -> RunResult:
    """Run a built sample in its folder (it reads ``input/`` and writes ``output/`` there).

    ``output/`` is created first, as the samples' run scripts do.
    """
    make_output_dir(root)
    return run_binary(binary, args, timeout=timeout, cwd=root)
