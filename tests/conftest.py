"""Shared test setup: `tests/` is on sys.path (for `strategies`, `references`, `documented`)."""
