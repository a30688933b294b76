"""The distribution ships what the tool needs at run time (grammar, templates, emulator
headers) so that `pip install .` (not only `pip install -e .`) works."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _data_files() -> set[str]:
    """Files the wheel must carry, as paths inside the wheel."""
    want = {"transformer/grammars/ir.lark"}
    for p in (ROOT / "templates").rglob("*"):
        if p.is_file() and "__pycache__" not in p.parts:
            want.add("transformer/templates/" + p.relative_to(ROOT / "templates").as_posix())
    inc = ROOT / "transformer" / "emulator" / "include"
    for p in inc.rglob("*.h") if inc.is_dir() else ():
        want.add(p.relative_to(ROOT).as_posix())
    return want


def test_wheel_contains_grammar_templates_and_headers(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", ".hypothesis", ".pytest_cache"))
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp_path / "dist").glob("ascx-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _data_files() - names
    assert not missing, f"wheel lacks {sorted(missing)}"
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "ascx = transformer.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
    assert any(n.startswith("passes/") for n in names)
