"""Each instruction-selection pattern shown by a FileCheck-style `.ir` file in
tests/lower/patterns/: the kernel, its `# PASSES:` (and `# SIZES:`), and `# CHECK:` lines
matched against `ascx emit --plan` (filecheck.py). Plus the checker's own rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from transformer.cli import main
from transformer.lower.patterns import REGISTRY

from .filecheck import check, directives

HERE = Path(__file__).resolve().parent / "patterns"
FILES = sorted(HERE.glob("*.ir"))


def _plan(path: Path) -> str:
    text = path.read_text()
    args = ["emit", str(path), "--plan", "-o", "/dev/null"]
    if m := re.search(r"^# PASSES: (.+)$", text, re.M):
        args += ["--passes", m.group(1).strip()]
    if m := re.search(r"^# SIZES: (.+)$", text, re.M):
        for kv in m.group(1).split():
            args += ["--size", kv]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_pattern_file(path: Path) -> None:
    checks = directives(path.read_text())
    assert checks, f"{path.name} has no CHECK lines"
    out = _plan(path)
    why = check(checks, out)
    assert not why, f"{path.name}: {why}\n--- ascx emit --plan:\n{out}"


def test_every_pattern_has_its_file() -> None:
    named = {p.stem.replace("_", "-") for p in FILES}
    assert {p.name for p in REGISTRY} <= named, sorted({p.name for p in REGISTRY} - named)


@pytest.mark.parametrize("checks,ok", [
    ([("CHECK", "b"), ("CHECK-NEXT", "c")], True),
    ([("CHECK", "b"), ("CHECK-NEXT", "d")], False),  # d is two lines on
    ([("CHECK", "a"), ("CHECK-NOT", "b"), ("CHECK", "c")], False),
    ([("CHECK", "a"), ("CHECK-NOT", "x"), ("CHECK", "d")], True),
    ([("CHECK", "c"), ("CHECK", "a")], False),  # in order
    ([("CHECK", "d"), ("CHECK-NOT", "a")], True),  # only after the last match
    ([("CHECK", "b"), ("CHECK-SAME", "b")], True),
    ([("CHECK", "b"), ("CHECK-SAME", "c")], False),
])
def test_the_checker(checks: list[tuple[str, str]], ok: bool) -> None:
    assert (check(checks, "a\nb\nc\nd") == "") == ok
