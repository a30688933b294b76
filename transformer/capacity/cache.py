"""Result caches keyed by a hash of the constraint system.

In-process: a small LRU (`LRU`).  On disk (optional): one JSON file per key under
`cache_dir(...)`: the `cache_dir` argument, else `$ASCX_CACHE_DIR`, else nothing (disk
caching is opt-in; pass `cache_dir=True` for `$XDG_CACHE_HOME/ascx/capacity` or
`~/.cache/ascx/capacity`).  Writes are atomic (temp file + rename), so concurrent test
workers and processes can share a directory.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """A tiny least-recently-used map."""

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self._d: OrderedDict[str, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> V | None:
        if key in self._d:
            self._d.move_to_end(key)
            self.hits += 1
            return self._d[key]
        self.misses += 1
        return None

    def put(self, key: str, value: V) -> None:
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.maxsize:
            self._d.popitem(last=False)

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


def cache_dir(arg: str | os.PathLike[str] | bool | None) -> Path | None:
    """Resolve the on-disk cache directory (None = no disk cache)."""
    if arg is False:
        return None
    if arg is None:
        env = os.environ.get("ASCX_CACHE_DIR")
        return Path(env) / "capacity" if env else None
    if arg is True:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "ascx" / "capacity"
    return Path(arg)


def disk_get(directory: Path | None, key: str) -> Any | None:
    if directory is None:
        return None
    try:
        return json.loads((directory / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def disk_put(directory: Path | None, key: str, value: Any) -> None:
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(value, f)
        os.replace(tmp, directory / f"{key}.json")
    except OSError:
        pass  # a cache that cannot be written is only slower
