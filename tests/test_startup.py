"""Start-up stays cheap: the CLI imports heavy libraries only in the commands that use
them, and the parser's LALR table comes from a cache that can never break parsing.

Timing itself is measured by `bench/bench_cli.py` (ratios in one run); these tests pin the
properties that make it fast, so they cannot silently regress.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transformer import parser as parser_mod
from transformer.diagnostics import ParseError
from transformer.parser import grammar_cache_path, parse
from transformer.printer import print_kernel

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ROOT / "examples" / "attention.ir"
HEAVY = ("networkx", "z3", "jinja2", "xml", "numpy")
PIPELINE = "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer"  # attention's documented one

_PROBE = """
import json, sys
from transformer.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.stdin.readline())))
print("\\nLOADED " + json.dumps(heavy))
"""


def _loaded_after(*argv: str, env: dict[str, str] | None = None) -> list[str]:
    """Heavy top-level modules in sys.modules after `ascx ARGV` ran in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], input=json.dumps(HEAVY) + "\n",
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    line = [l for l in proc.stdout.splitlines() if l.startswith("LOADED ")]
    assert line, proc.stdout + proc.stderr
    return json.loads(line[-1][len("LOADED "):])


def test_import_cli_loads_no_heavy_module() -> None:
    code = ("import sys, transformer.cli; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("argv", [("--help",), ("parse", str(ATTENTION)), ("parse", "--help"),
                                  ("transform", "--help"), ("emit", "--help")])
def test_light_commands_load_no_heavy_module(argv: tuple[str, ...]) -> None:
    assert _loaded_after(*argv) == []


@pytest.mark.parametrize("argv,allowed", [
    # a kernel that fits is proved by arithmetic, without starting Z3; the interpreter's
    # numpy is not needed to transform or emit; networkx only draws dependence graphs
    (("transform", str(ATTENTION), "--passes", PIPELINE), []),
    (("check", str(ATTENTION), "--passes", PIPELINE), []),
    (("emit", str(ATTENTION), "--passes", PIPELINE), ["jinja2"]),
])
def test_pipeline_commands_load_only_what_they_use(argv: tuple[str, ...], allowed: list[str]) -> None:
    assert _loaded_after(*argv) == allowed


def test_probe_sees_heavy_modules_when_used(tmp_path: Path) -> None:
    # the probe itself works: `run` interprets with numpy, an over-capacity `check` asks Z3
    assert "numpy" in _loaded_after("run", str(ROOT / "examples" / "add.ir"))
    big = tmp_path / "big.ir"
    big.write_text("kernel big(X: f32[N]) -> (Y: f32[N]) {\n  size N = 64\n  local t: f32[1048576] @ub\n"
                   "  for i in 0..N { t[i] = X[i]\n Y[i] = t[i] }\n}\n")
    assert "z3" in _loaded_after("check", str(big))


# --------------------------------------------------------------------------------------
# the grammar cache


@pytest.fixture
def fresh_parser(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The parser built anew in this test (its per-process memo cleared before and after)."""
    parser_mod._parser.cache_clear()
    yield monkeypatch
    parser_mod._parser.cache_clear()


def _grammar() -> str:
    from transformer.resources import grammars_dir

    return grammars_dir().joinpath("ir.lark").read_text()


def _check_parses() -> None:
    k = parse(ATTENTION.read_text(), str(ATTENTION))
    assert print_kernel(parse(print_kernel(k))) == print_kernel(k)
    with pytest.raises(ParseError, match="unexpected `{`") as e:
        parse("kernel k( {\n", "bad.ir")
    assert e.value.hint == "expected one of `)`, a name"  # terminal names from the table


def test_grammar_cache_written_then_used(fresh_parser: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fresh_parser.setenv("ASCX_CACHE_DIR", str(tmp_path))
    path = grammar_cache_path(_grammar())
    assert path is not None and path.parent == tmp_path / "parser"
    _check_parses()
    assert path.is_file()
    stamp = path.stat().st_mtime_ns
    parser_mod._parser.cache_clear()
    _check_parses()  # loaded from the file: parses and reports errors the same
    assert path.stat().st_mtime_ns == stamp  # not rebuilt
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_grammar_cache_corrupt_file_is_rebuilt(fresh_parser: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fresh_parser.setenv("ASCX_CACHE_DIR", str(tmp_path))
    path = grammar_cache_path(_grammar())
    assert path is not None
    path.parent.mkdir(parents=True)
    for junk in (b"", b"not a pickle", b"\x80\x04\x95garbage"):
        path.write_bytes(junk)
        parser_mod._parser.cache_clear()
        _check_parses()
        assert path.stat().st_size > 1000  # replaced by a good table
    parser_mod._parser.cache_clear()
    _check_parses()


def test_grammar_cache_unwritable_dir_still_parses(fresh_parser: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # a cache dir below a regular file cannot be created (even by root, unlike chmod)
    fresh_parser.setenv("ASCX_CACHE_DIR", str(blocker / "cache"))
    _check_parses()
    assert blocker.read_text() == ""


def test_grammar_cache_unreadable_entry_still_parses(fresh_parser: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fresh_parser.setenv("ASCX_CACHE_DIR", str(tmp_path))
    path = grammar_cache_path(_grammar())
    assert path is not None
    path.mkdir(parents=True)  # a directory where the file should be: cannot be read or replaced
    _check_parses()
    assert path.is_dir()


def test_grammar_cache_key_follows_grammar_and_default_location(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.delenv("ASCX_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    g = _grammar()
    a, b = grammar_cache_path(g), grammar_cache_path(g + "\n// changed\n")
    assert a is not None and b is not None and a != b
    assert a.parent == tmp_path / "ascx" / "parser"


def test_cli_parse_with_unwritable_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "ASCX_CACHE_DIR": str(blocker / "x")}
    out = subprocess.run([sys.executable, "-m", "transformer.cli", "parse", str(ATTENTION)],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout.startswith("kernel attention")
