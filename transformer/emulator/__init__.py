"""Clean-room Ascend C emulator: compile flags and small compile/run helpers.

The emulator is a header-only C++17 implementation of a subset of the Ascend C basic API
(``include/kernel_operator.h``), written from the public documentation. A kernel source plus
its CPU-debug host harness (``ICPU_RUN_KF``, ``GmAlloc``...) builds with plain g++::

    g++ $(ascx emulator --cflags) my_kernel.cpp -o k && ./k

This module finds the headers, produces those flags (:func:`cflags`), and offers cached
compile / run helpers used by the tests and by ``ascx verify``. See ``docs/emulator.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

from .trace import TraceEvent, parse_trace

if TYPE_CHECKING:
    from ..diagnostics import ResourceError

__all__ = [
    "DEFAULT_SCOPE_BYTES", "EMU_SCOPES", "MIX_AIV_PER_BLOCK", "ERROR_EXIT", "RESOURCE_EXIT", "CompileError", "RunResult",
    "include_dir", "cflags", "scope_flags", "compile_source", "compile_files", "build_warnings", "build_flags", "run_binary",
    "compile_and_run", "TraceEvent",
]

#: The local memory scopes the headers size (`-DASCX_EMU_<SCOPE>_BYTES`).
EMU_SCOPES = ("UB", "L1", "L0A", "L0B", "L0C", "BT")

#: Vector cores per block of the emulator's MIX launch (`ascx_emu/runtime.h`: the AIV `sub` of
#: block `b` reports `GetBlockIdx() == b * 2 + sub`), the 910B's aiv_cores / aic_cores. The
#: lowering takes the ratio from the target (`Target.aiv_per_aic`) and uses this only on a
#: coupled chip, where a MIX launch is the emulator's all-core barrier, not a chip feature.
MIX_AIV_PER_BLOCK = 2


def _default_scope_bytes() -> dict[str, int]:
    """Physical local memory sizes of the default target, from the target table (the one
    place chip numbers live). The headers fall back to the same numbers (`ascx_emu/mem_sizes.h`) for
    a plain g++ build without flags; a test keeps the two in step."""
    from ..targets import get_target

    scopes = get_target().scopes
    return {s: scopes[s.lower()].physical_bytes for s in EMU_SCOPES}


#: Local memory sizes compiled into the headers by default (the default target's).
DEFAULT_SCOPE_BYTES: dict[str, int] = _default_scope_bytes()
#: Exit status of a kernel stopped by an emulator check (message on stderr).
ERROR_EXIT = 3
#: Exit status when the host refuses what the run needs (`GmAlloc`: a GM reservation).
RESOURCE_EXIT = 5


def include_dir() -> Path:
    """Directory holding ``kernel_operator.h`` (works installed and editable)."""
    try:
        from importlib.resources import files

        p = Path(str(files(__package__) / "include"))
        if (p / "kernel_operator.h").is_file():
            return p
    except (ImportError, TypeError, ModuleNotFoundError):  # pragma: no cover - fallback
        pass
    return Path(__file__).resolve().parent / "include"


def cflags(scope_bytes: Mapping[str, int] | None = None) -> list[str]:
    """Compiler flags that build an Ascend C source against the emulator.

    ``scope_bytes`` overrides local memory sizes by scope name (``UB``, ``L1``, ``L0A``,
    ``L0B``, ``L0C``; case-insensitive), e.g. from a target table; omitted scopes keep the
    910B defaults. ``-pthread`` is included because mix-mode kernels run cores as threads.
    ``ASCENDC_CPU_DEBUG`` and ``__CCE_KT_TEST__`` are defined so sample harnesses take their
    CPU path (older samples hide their NPU launch behind ``#ifndef __CCE_KT_TEST__``).
    """
    flags = ["-std=c++17", f"-I{include_dir()}", "-DASCENDC_CPU_DEBUG=1", "-D__CCE_KT_TEST__=1", "-pthread"]
    return flags + scope_flags(scope_bytes)


def scope_flags(scope_bytes: Mapping[str, int] | None) -> list[str]:
    """The `-DASCX_EMU_<SCOPE>_BYTES=N` part of :func:`cflags`: no path in it, so a build
    script can write it down and take the rest from `ascx emulator --cflags` where it runs."""
    flags = []
    for name, value in (scope_bytes or {}).items():
        key = name.upper()
        if key not in DEFAULT_SCOPE_BYTES:
            raise ValueError(f"unknown memory scope {name!r}; expected one of {sorted(DEFAULT_SCOPE_BYTES)}")
        if int(value) <= 0:
            raise ValueError(f"scope {name} size must be positive, got {value}")
        flags.append(f"-DASCX_EMU_{key}_BYTES={int(value)}")
    return flags


class CompileError(RuntimeError):
    """g++ rejected a source; ``stderr`` holds the compiler output."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(f"{message}\n{stderr}")
        self.stderr = stderr


@dataclass
class RunResult:
    """Outcome of running an emulated kernel binary."""

    returncode: int
    stdout: str
    stderr: str
    trace: list[TraceEvent] | None = None
    binary: Path | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def host_resource_error(result: RunResult) -> "ResourceError | None":
    """The `ResourceError` of a run the host could not give its GM (`RESOURCE_EXIT`:
    `GmAlloc` refused, with the emulator's reason), or None for any other outcome."""
    from ..diagnostics import ResourceError

    if result.returncode != RESOURCE_EXIT:
        return None
    why = next((l for l in result.stderr.splitlines() if "GmAlloc" in l), result.stderr.strip()[:500])
    return ResourceError(why.replace("ascx-emu: error: ", "the emulator run stopped: "),
                         hint="raise the host's limit (ulimit -v, vm.overcommit_memory) or use smaller sizes "
                              "(--size NAME=INT)")


def _headers_digest() -> str:
    """Hash of all emulator headers, so cached binaries are rebuilt when they change."""
    h = hashlib.sha256()
    root = include_dir()
    for p in sorted(root.rglob("*.h")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$ASCX_EMU_CACHE`` or ``~/.cache/ascx/emulator``."""
    env = os.environ.get("ASCX_EMU_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ascx" / "emulator"


def build_flags(
    *,
    extra_flags: Sequence[str] = (),
    warnings_as_errors: bool = True,
    sanitize: bool = False,
    optimize: str | None = None,
    scope_bytes: Mapping[str, int] | None = None,
    include: Sequence[Path] = (),
) -> list[str]:
    """The full g++ flag list used by :func:`compile_source` and :func:`compile_files`.

    ``optimize`` defaults to ``-O1``, and to ``-O0`` with ``sanitize``: an ASan/UBSan build
    spends most of its compile in the optimiser (about half of it saved at -O0, measured on
    emitted kernels), its checks are run-time ones that -O0 keeps whole, and sanitized runs
    are at small sizes, where the unoptimised code costs little."""
    flags = [*cflags(scope_bytes), optimize or ("-O0" if sanitize else "-O1"), "-g0"]
    if warnings_as_errors:
        flags += ["-Wall", "-Wextra", "-Werror"]
    if sanitize:
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    flags += [f"-I{d}" for d in include]
    return flags + list(extra_flags)


def _cached_build(sources: Sequence[tuple[str, str]], flags: list[str], key_extra: Sequence[str], cxx: str,
                  cache_dir: str | Path | None, name: str, in_place: Sequence[Path] = ()) -> Path:
    """Compile (file name, text) sources together into a binary cached by content hash.

    ``in_place`` lists the real files behind ``sources`` (same order): they are compiled
    where they are, so diagnostics and emulator locations name the user's files; without it
    the texts are compiled from a temporary copy.
    """
    parts = [cxx, *flags, _headers_digest(), *key_extra]
    for fname, text in sources:
        parts += [fname, text]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    out = cdir / key / name
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(out.parent):
        if out.is_file():  # another process built it while this one waited
            return out
        _compile_into(sources, flags, cxx, name, in_place, out)
    return out


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` (POSIX `flock`; none elsewhere): processes that need the
    same binary at once (test workers, parallel `ascx` runs) compile it once, the others wait
    for it instead of compiling it again."""
    try:
        import fcntl
    except ImportError:  # not POSIX: each process compiles its own copy (written atomically)
        yield
        return
    with open(folder / ".lock", "w") as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _compile_into(sources: Sequence[tuple[str, str]], flags: list[str], cxx: str, name: str,
                  in_place: Sequence[Path], out: Path) -> None:
    """Run the compiler on `sources` and move the binary to `out` atomically."""
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        paths = [p.resolve() for p in in_place]
        for fname, text in sources if not in_place else ():
            src = Path(tmp) / fname
            src.write_text(text)
            paths.append(src)
        tmp_bin = Path(tmp) / name
        proc = subprocess.run([cxx, *flags, *map(str, paths), "-o", str(tmp_bin)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"{cxx} failed (exit {proc.returncode}) for {name}", proc.stderr)
        # kept next to the binary, so a cached build still shows its warnings
        (out.parent / _WARNINGS).write_text(proc.stderr)
        os.replace(tmp_bin, out)
        for (fname, _), src in zip(sources, paths):
            shutil.copyfile(src, out.parent / fname)


_WARNINGS = "compiler-warnings.txt"


def build_warnings(binary: Path) -> str:
    """The compiler's diagnostics of the (successful, possibly cached) build of ``binary``:
    without ``-Werror`` a user's source may warn, and a caller shows the warnings."""
    p = Path(binary).parent / _WARNINGS
    return p.read_text() if p.is_file() else ""


def compile_source(
    source: str | Path,
    *,
    cache_dir: str | Path | None = None,
    extra_flags: Sequence[str] = (),
    warnings_as_errors: bool = True,
    sanitize: bool = False,
    optimize: str | None = None,
    scope_bytes: Mapping[str, int] | None = None,
    compiler: str | None = None,
    name: str = "kernel",
) -> Path:
    """Compile ``source`` (C++ text, or a path to a .cpp file) to a cached binary.

    The cache key covers the source text, all flags and the emulator headers; the binary is
    written atomically, so concurrent test workers may share ``cache_dir``. Raises
    :class:`CompileError` on compiler failure.
    """
    if isinstance(source, Path):
        text = source.read_text()
        include = [source.resolve().parent]
    else:
        text, include = source, []
    cxx = compiler or os.environ.get("CXX") or "g++"
    flags = build_flags(extra_flags=extra_flags, warnings_as_errors=warnings_as_errors, sanitize=sanitize,
                        optimize=optimize, scope_bytes=scope_bytes, include=include)
    return _cached_build([(f"{name}.cpp", text)], flags, [], cxx, cache_dir, name)


def compile_files(
    paths: Sequence[Path],
    *,
    include: Sequence[Path] = (),
    cache_dir: str | Path | None = None,
    compiler: str | None = None,
    name: str = "kernel",
    **flag_kw: object,
) -> Path:
    """Compile several .cpp files into one cached binary (a sample folder: main + kernels).

    ``include`` directories (the folder itself, for its own headers) are searched first; the
    cache key also covers every header in them. Keyword arguments go to :func:`build_flags`.
    """
    cxx = compiler or os.environ.get("CXX") or "g++"
    flags = build_flags(include=include, **flag_kw)  # type: ignore[arg-type]
    key_extra = [f"{h}:{h.read_text(errors='replace')}" for d in include for h in sorted(Path(d).rglob("*.h"))]
    names = [p.name for p in paths]
    # an op project has op_host/x.cpp next to op_kernel/x.cpp: name those by their folder too
    names = [f"{p.parent.name}_{p.name}" if names.count(p.name) > 1 else p.name for p in paths]
    sources = list(zip(names, (p.read_text() for p in paths)))
    if len(set(names)) != len(names):
        raise ValueError("source files must have distinct names")
    return _cached_build(sources, flags, key_extra, cxx, cache_dir, name, in_place=paths)


def run_binary(
    binary: str | Path,
    args: Sequence[str] = (),
    *,
    trace: bool | str | Path = False,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 120.0,
    cwd: str | Path | None = None,
    progress: Callable[[float], None] | None = None,
    tick: float = 1.0,
) -> RunResult:
    """Run an emulated kernel binary; with ``trace`` collect and parse its instruction trace.

    ``trace`` may be True (temporary file) or a path to keep the trace there; ``cwd`` is the
    working directory (sample hosts read ``input/`` and write ``output/`` relative to it).
    ``timeout`` (None: no limit) kills the run and raises ``subprocess.TimeoutExpired``;
    ``progress``, if given, is called with the elapsed seconds every ``tick`` seconds while
    the binary runs (a progress line for long runs).
    """
    run_env = dict(os.environ)
    run_env.pop("ASCX_TRACE", None)
    run_env.update(env or {})
    tmpdir = None
    trace_path: Path | None = None
    if trace:
        if trace is True:
            tmpdir = tempfile.TemporaryDirectory()
            trace_path = Path(tmpdir.name) / "trace.jsonl"
        else:
            trace_path = Path(trace)
        run_env["ASCX_TRACE"] = str(trace_path)
    try:
        cmd = [str(binary), *args]
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=run_env,
                              cwd=cwd) as proc:
            stdout, stderr = _communicate(proc, cmd, timeout, progress, tick)
        events = parse_trace(trace_path) if trace_path is not None and trace_path.exists() else None
        return RunResult(proc.returncode, stdout, stderr, events, Path(binary))
    finally:
        if tmpdir is not None:
            tmpdir.cleanup()


def _communicate(proc: subprocess.Popen[str], cmd: list[str], timeout: float | None,
                 progress: Callable[[float], None] | None, tick: float) -> tuple[str, str]:
    """Wait for `proc` (collecting its output) in steps of `tick` seconds, calling
    `progress` between steps; past `timeout` kill it and raise `TimeoutExpired`."""
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            proc.kill()
            proc.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout)
        step = None if progress is None else tick
        if deadline is not None:
            step = deadline - now if step is None else min(step, deadline - now)
        try:
            return proc.communicate(timeout=step)
        except subprocess.TimeoutExpired:
            if progress is not None and (deadline is None or time.monotonic() < deadline):
                progress(time.monotonic() - start)


def compile_and_run(
    source: str | Path,
    args: Sequence[str] = (),
    *,
    trace: bool | str | Path = False,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    **compile_kw: object,
) -> RunResult:
    """:func:`compile_source` then :func:`run_binary` (keyword arguments go to the compiler)."""
    binary = compile_source(source, **compile_kw)  # type: ignore[arg-type]
    return run_binary(binary, args, trace=trace, env=env, timeout=timeout)
