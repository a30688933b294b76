"""Cube instruction selection (placeholder)."""

from __future__ import annotations


def select_cube(low, src, buffers):  # type: ignore[no-untyped-def]
    return None
