"""`ascx emulator build` / `ascx profile` on folders and hand-written sources: the command-line
errors (fast: nothing here compiles) and the behaviour on user code (slow: one small build each)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from transformer.cli import main as cli_main


def _invoke(*args: str):
    return CliRunner().invoke(cli_main, list(args))


def test_build_of_a_folder_without_a_kernel_is_a_usage_error(tmp_path: Path) -> None:
    """Issue 29 item 14: this was `internal error: NameError: name 'UsageError'` with exit 3."""
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    res = _invoke("emulator", "build", str(tmp_path))
    assert res.exit_code == 2, res.output
    assert "has no kernel source next to it" in res.output
    assert "hint:" in res.output and "internal error" not in res.output


def test_build_of_a_missing_folder_and_a_folder_without_main(tmp_path: Path) -> None:
    res = _invoke("emulator", "build", str(tmp_path / "nothing"))
    assert res.exit_code == 2 and "not a directory" in res.output, res.output
    (tmp_path / "k_custom.cpp").write_text("void k() {}\n")
    res = _invoke("emulator", "build", str(tmp_path))
    assert res.exit_code == 2 and "no host program" in res.output, res.output


def test_cflags_with_a_subcommand_is_a_usage_error(tmp_path: Path) -> None:
    res = _invoke("emulator", "--cflags", "build", str(tmp_path))
    assert res.exit_code == 2, res.output
    assert "go without a subcommand" in res.output and "internal error" not in res.output
