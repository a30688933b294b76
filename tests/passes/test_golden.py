"""Golden tests, one file per case: `tests/passes/golden/<pass>/<case>.ir` holds the input
kernel, the pipeline (`# pipeline: ...`) and, after `# expected:`, the canonical text of the
result; every file there is collected. The result must also match the input under the
interpreter. Accept a legitimate change with `pytest tests/passes --update-golden` (and
explain it in the commit)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from passes_testutil import apply, equivalent
from transformer.parser import parse
from transformer.printer import print_kernel

GOLDEN = Path(__file__).parent / "golden"
SEPARATOR = "\n# expected:\n"


@dataclass(frozen=True)
class GoldenCase:
    """One `golden/<pass>/<case>.ir`: a `# pipeline: ...` line, the input kernel, then
    `# expected:` and the canonical text of the result."""

    path: Path
    pipeline: str
    before: str
    after: str

    @classmethod
    def read(cls, path: Path) -> "GoldenCase":
        text = path.read_text()
        m = re.search(r"^# pipeline: (.+)$", text, re.M)
        assert m and SEPARATOR in text, f"{path}: needs a `# pipeline: ...` line and a `# expected:` line"
        before, after = text.split(SEPARATOR, 1)
        return cls(path, m.group(1).strip(), before, after.lstrip("\n"))

    def write(self, after: str) -> None:
        self.path.write_text(self.before.rstrip("\n") + "\n" + SEPARATOR + "\n" + after)


CASES = sorted(GOLDEN.glob("*/*.ir"))


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_golden(path: Path, update_golden: bool) -> None:
    case = GoldenCase.read(path)
    before = parse(case.before, str(path))
    got = print_kernel(apply(before, case.pipeline))
    if update_golden and got != case.after:
        case.write(got)
        pytest.skip(f"updated {path}")
    assert got == case.after, f"{path}: `{case.pipeline}` printed otherwise (pytest --update-golden to accept)"
    out = parse(got, str(path))
    assert equivalent(before, out) == []


def test_every_pass_folder_names_a_pass_its_pipelines_run() -> None:
    from passes.base import registry, split_pipeline

    assert len(CASES) >= 15
    for path in CASES:
        case = GoldenCase.read(path)
        assert path.parent.name in registry(), path
        assert path.parent.name in [name for name, _ in split_pipeline(case.pipeline)], path


def test_fuse_keeps_layout_tagged_temps_whole() -> None:
    """Regression (property test seed 834243879): contracting the NHWC copy of a conv input
    dropped a dimension of a rank-4 layout."""
    from passes_testutil import example

    k = example("conv2d")
    out = apply(apply(k, "interchange{conv.f,conv.x},layout{X=NHWC}"), "fuse")
    assert out.tensor("X_nhwc").rank == 4 and out.tensor("X_nhwc").layout == "NHWC"
