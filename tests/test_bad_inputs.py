"""The malformed-input corpus (`tests/bad_inputs/*.ir`): every file is rejected with a
located, typed error and never a traceback.

Each file holds ONE mistake. Its first line is `# expect: <substring of the message>`, its
second `# at: LINE:COL`, where the mistake is. Checked three ways:

* through the API: `parse` raises `AscxError`; `short()` is `FILE:LINE:COL: error: ...`
  with the expected substring and location; `render()` shows the source line and a caret
  under the reported column;
* through the click command in-process (every file, fast): exit code 2, a located
  `error:` line, no traceback;
* through a real `python -m transformer.cli parse FILE` subprocess for a representative
  ten (a subprocess per file for all of them would cost ~25 s).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from transformer.diagnostics import AscxError
from transformer.parser import parse

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "bad_inputs"
FILES = sorted(CORPUS.glob("*.ir"))
SHORT_RE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")

# One of each broad kind, for the subprocess check.
CLI_SAMPLE = [
    "syn_missing_close_brace", "syn_range_single_dot", "syn_stray_char", "syn_non_ascii_name",
    "syn_temp_with_scope", "sem_unknown_name", "sem_non_affine_index", "sem_copy_shape_mismatch",
    "sem_unknown_annotation", "sem_non_integer_i32_const",
]


def expectation(path: Path) -> tuple[str, int, int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    m1 = re.fullmatch(r"# expect: (.+)", lines[0])
    m2 = re.fullmatch(r"# at: (\d+):(\d+)", lines[1])
    assert m1 and m2, f"{path.name}: first lines must be `# expect: ...` and `# at: L:C`"
    return m1.group(1).strip(), int(m2.group(1)), int(m2.group(2))


def test_corpus_is_large_and_varied() -> None:
    assert len(FILES) >= 45
    expectations = [expectation(p)[0] for p in FILES]
    # syntax and semantic mistakes are both well represented
    assert sum(p.name.startswith("syn_") for p in FILES) >= 20
    assert sum(p.name.startswith("sem_") for p in FILES) >= 35
    assert len(set(p.read_text() for p in FILES)) == len(FILES)
    assert all(expectations)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_api_error_is_located(path: Path) -> None:
    expected, line, col = expectation(path)
    text = path.read_text(encoding="utf-8")
    with pytest.raises(AscxError) as info:
        parse(text, str(path))
    err = info.value
    short = err.short()
    m = SHORT_RE.match(short)
    assert m, f"not FILE:LINE:COL: error: ...: {short!r}"
    assert m.group("file") == str(path)
    assert expected in m.group("msg"), f"{short!r} lacks {expected!r}"
    assert (int(m.group("line")), int(m.group("col"))) == (line, col), short
    assert str(err) == short
    rendered = err.render()
    assert rendered.splitlines()[0] == short
    assert "Traceback" not in rendered
    # the source line is quoted and the caret sits under the reported column
    src_line = text.splitlines()[line - 1] if line <= len(text.splitlines()) else ""
    out = rendered.splitlines()
    assert out[1] == "  " + src_line.expandtabs(4), rendered
    caret = out[2]
    assert caret.strip() == "^", rendered
    assert caret.index("^") == 2 + len(src_line[: col - 1].expandtabs(4)), rendered


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_cli_command_in_process(path: Path) -> None:
    from click.testing import CliRunner

    from transformer.cli import main

    expected, line, col = expectation(path)
    result = CliRunner().invoke(main, ["parse", str(path)])
    out = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 2, out
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), out
    assert "Traceback" not in out
    assert f"{path}:{line}:{col}: error: " in out, out
    assert expected in out


@pytest.mark.parametrize("stem", CLI_SAMPLE)
def test_cli_subprocess(stem: str) -> None:
    path = CORPUS / f"{stem}.ir"
    expected, line, col = expectation(path)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ASCX_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "transformer.cli", "parse", str(path)],
                          capture_output=True, text=True, env=env, timeout=60)
    both = proc.stdout + proc.stderr
    assert proc.returncode == 2, both
    assert "Traceback" not in both
    lines = [ln for ln in both.splitlines() if SHORT_RE.match(ln)]
    assert lines and lines[0].startswith(f"{path}:{line}:{col}: error: "), both
    assert expected in lines[0]
    assert "^" in both


def test_cli_stdin_error_is_located() -> None:
    """`ascx parse -` reports errors against `<stdin>`."""
    from click.testing import CliRunner

    from transformer.cli import main

    result = CliRunner().invoke(main, ["parse", "-"], input="kernel k() -> () {\n  size N = 0\n}\n")
    assert result.exit_code == 2
    assert "<stdin>:2:8: error: size `N` must be positive" in result.output


def test_missing_file_is_a_usage_error() -> None:
    from click.testing import CliRunner

    from transformer.cli import main

    result = CliRunner().invoke(main, ["parse", str(CORPUS / "does_not_exist.ir")])
    assert result.exit_code == 2
    assert "error:" in result.output and "Traceback" not in result.output
