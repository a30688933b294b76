"""Hardware target tables: the only place chip numbers live.

A target is a module in this package exposing `TARGET` (a `Target`); modules whose name
starts with `_` are helpers and are skipped.  Out-of-tree targets register an entry point in
the `ascx.targets` group pointing at a `Target` object, a module exposing `TARGET`, or a
zero-argument callable returning a `Target`.  `get_target(name)` looks in-tree first, then
entry points; in-tree targets cannot be shadowed.

    >>> from transformer.targets import get_target
    >>> get_target("ascend910b2").scope("ub").usable_bytes
    196608
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._base import (
    ARCH_FACTS,
    REQUIRED_FACTS,
    REQUIRED_SCOPES,
    Fact,
    InvalidTargetError,
    Scope,
    Target,
    UnknownTargetError,
)
from ._override import OverrideError, format_override, load_override

if TYPE_CHECKING:
    from importlib import metadata

__all__ = [
    "DEFAULT_TARGET",
    "ENTRY_POINT_GROUP",
    "ARCH_FACTS",
    "REQUIRED_FACTS",
    "REQUIRED_SCOPES",
    "Fact",
    "InvalidTargetError",
    "OverrideError",
    "Scope",
    "Target",
    "UnknownTargetError",
    "format_override",
    "get_target",
    "resolve_target",
    "list_targets",
    "load_override",
]

DEFAULT_TARGET = "ascend910b2"
ENTRY_POINT_GROUP = "ascx.targets"

_cache: dict[str, Target] = {}


def _in_tree_names() -> list[str]:
    """Target module names in this package (helpers start with `_`)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def _entry_points() -> dict[str, metadata.EntryPoint]:
    from importlib import metadata  # only for targets not in the tree: ~15 ms of start-up

    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # a broken installed distribution must not break the in-tree targets
        return {}
    return {ep.name: ep for ep in eps}


def _coerce(obj: Any, origin: str) -> Target:
    """A `Target` from a module (its TARGET), a Target, or a callable returning one."""
    if isinstance(obj, ModuleType):
        obj = getattr(obj, "TARGET", None)
    elif callable(obj) and not isinstance(obj, Target):
        obj = obj()
    if not isinstance(obj, Target):
        raise InvalidTargetError(f"{origin} does not provide a Target (expected TARGET)")
    obj.validate()
    return obj


def list_targets() -> list[str]:
    """Names of every known target: in-tree modules, then `ascx.targets` entry points."""
    names = _in_tree_names()
    return names + sorted(n for n in _entry_points() if n not in names)


def resolve_target(target: "Target | str | None") -> Target:
    """A `Target` from a Target, a name, or None (the default target, `DEFAULT_TARGET`):
    what entry points call once, so code below them always holds a typed `Target`."""
    return target if isinstance(target, Target) else get_target(target)


def get_target(name: str | None = None) -> Target:
    """The target called `name` (default `DEFAULT_TARGET`).

    Raises `UnknownTargetError` (a LookupError) listing the known targets.
    """
    name = (name or DEFAULT_TARGET).strip().lower()
    if name in _cache:
        return _cache[name]
    if name in _in_tree_names():
        target = _coerce(importlib.import_module(f"{__name__}.{name}"), f"module {name}")
    else:
        ep = _entry_points().get(name)
        if ep is None:
            raise UnknownTargetError(name, list_targets())
        target = _coerce(ep.load(), f"entry point {ENTRY_POINT_GROUP}:{name}")
    if target.name != name:
        raise InvalidTargetError(f"target module {name} defines a Target named {target.name!r}")
    _cache[name] = target
    return target
