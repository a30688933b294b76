"""Vector instruction selection (placeholder; filled in below)."""

from __future__ import annotations


def select_vector(pe, loop, depth):  # type: ignore[no-untyped-def]
    return None
