"""Issue 8: no module over ~500 lines without a reason stated in its docstring (a paragraph
starting `Size:`), so a long module is a decision someone wrote down, not drift."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 500


def test_long_modules_say_why_they_are_long() -> None:
    unexplained = []
    for folder in ("transformer", "passes"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text()
            if text.count("\n") <= LIMIT:
                continue
            doc = ast.get_docstring(ast.parse(text)) or ""
            if not any(line.startswith("Size:") for line in doc.splitlines()):
                unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert not unexplained, "modules over 500 lines without a `Size:` reason in their docstring: " + ", ".join(unexplained)
