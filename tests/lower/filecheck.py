"""A tiny FileCheck: `# CHECK:`, `# CHECK-NEXT:`, `# CHECK-SAME:` and `# CHECK-NOT:` lines of a file matched
against a text (substring match, in order), as LLVM's FileCheck does it.

- `CHECK: s` — a later line (after the previous match) contains `s`;
- `CHECK-NEXT: s` — the line right after the previous match contains `s`;
- `CHECK-SAME: s` — the line of the previous match contains `s` too;
- `CHECK-NOT: s` — no line between the previous match and the next match (or the end)
  contains `s`.

The directives sit in `#` comments (the IR's comment syntax), so the file stays a kernel."""

from __future__ import annotations

import re

_DIRECTIVE = re.compile(r"^\s*#\s*(CHECK|CHECK-NEXT|CHECK-SAME|CHECK-NOT):\s?(.*?)\s*$")


def directives(text: str) -> list[tuple[str, str]]:
    """(kind, pattern) of each directive of `text`, in order."""
    return [(m.group(1), m.group(2)) for line in text.splitlines() if (m := _DIRECTIVE.match(line))]


def check(checks: list[tuple[str, str]], output: str) -> str:
    """"" when `output` satisfies `checks`, else what failed (for the assertion message)."""
    lines = output.splitlines()
    pos = 0  # the first line a CHECK may match
    last = -1  # the line the previous CHECK / CHECK-NEXT matched
    nots: list[str] = []
    for kind, pat in checks:
        if kind == "CHECK-NOT":
            nots.append(pat)
            continue
        if kind == "CHECK-SAME":
            if last < 0 or pat not in lines[last]:
                return f"CHECK-SAME: {pat!r} not on the line of the previous match"
            continue
        if kind == "CHECK-NEXT":
            at = last + 1
            if last < 0 or at >= len(lines) or pat not in lines[at]:
                got = lines[at] if 0 <= at < len(lines) else "<end of output>"
                return f"CHECK-NEXT: {pat!r} not on the line after the previous match (got {got!r})"
        else:
            at = next((i for i in range(pos, len(lines)) if pat in lines[i]), -1)
            if at < 0:
                return f"CHECK: {pat!r} not found after line {pos}"
        for n in nots:
            bad = next((i for i in range(pos, at) if n in lines[i]), -1)
            if bad >= 0:
                return f"CHECK-NOT: {n!r} found on line {bad}: {lines[bad]!r}"
        nots = []
        last, pos = at, at + 1
    for n in nots:
        bad = next((i for i in range(pos, len(lines)) if n in lines[i]), -1)
        if bad >= 0:
            return f"CHECK-NOT: {n!r} found on line {bad}: {lines[bad]!r}"
    return ""
