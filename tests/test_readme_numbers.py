"""bench/readme_numbers.py's section replacement (fast: no profile; the drift check itself,
which profiles, is tests/timing/test_profile.py::test_readme_numbers_are_the_models)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "bench" / "readme_numbers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["readme_numbers"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_generated_replaces_only_the_section() -> None:
    b = _bench()
    doc = f"intro 17,183 cycles\n{b.BEGIN}\nold 17,183\n{b.END}\n\nafter\n"
    out = b.generated(doc, "new 45,993")
    assert out.startswith("intro 17,183 cycles\n" + b.BEGIN) and out.endswith(f"new 45,993\n{b.END}\n\nafter\n")
    assert "old" not in out and b.generated(out, "new 45,993") == out  # idempotent


def test_both_documents_have_one_section() -> None:
    b = _bench()
    for path in b.SECTIONS:
        text = path.read_text()
        assert text.count(b.BEGIN) == 1 and text.count(b.END) == 1, path
    with pytest.raises(ValueError, match="expected one"):
        b.generated("no markers", "x")
