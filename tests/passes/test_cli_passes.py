"""`ascx transform`, `ascx verify`, `ascx passes` end to end."""

from __future__ import annotations

import json

from passes_testutil import EXAMPLES, cli, kernel
from transformer.parser import parse


def test_transform_prints_ir_and_explains_to_stderr() -> None:
    r = cli("transform", str(EXAMPLES / "attention.ir"), "--passes", "fuse", "--explain")
    assert r.returncode == 0, r.stderr
    k = parse(r.stdout)
    assert k.tensor("s").rank == 1
    assert "fuse:" in r.stderr and "contracted temp `s`" in r.stderr


def test_transform_output_file_and_overwrite_guard(tmp_path) -> None:
    src = tmp_path / "mm.ir"
    src.write_text((EXAMPLES / "matmul.ir").read_text())
    out = tmp_path / "out.ir"
    r = cli("transform", str(src), "--passes", "interchange{mm.i,mm.j}", "-o", str(out), "--explain")
    assert r.returncode == 0, r.stderr
    assert "mm: for j in 0..N" in out.read_text()
    assert "interchange{mm.i,mm.j}:" in r.stdout  # explanation on stdout when IR goes to a file
    r = cli("transform", str(src), "--passes", "interchange{mm.i,mm.j}", "-o", str(src))
    assert r.returncode == 2 and "overwrite the input" in r.stderr
    r = cli("transform", str(src), "--passes", "interchange{mm.i,mm.j}", "-o", str(src), "--force")
    assert r.returncode == 0 and "mm: for j in 0..N" in src.read_text()


def test_transform_output_reparses_identically() -> None:
    r = cli("transform", str(EXAMPLES / "attention.ir"), "--passes", "fuse,multicore{qk}")
    assert r.returncode == 0, r.stderr
    from transformer.printer import print_kernel

    assert print_kernel(parse(r.stdout)) == r.stdout


def test_verify_ok_text_json_junit(tmp_path) -> None:
    args = ("verify", str(EXAMPLES / "softmax.ir"), "--passes", "unroll{rmax.c=3},fuse", "--size", "R=5", "--size", "C=7")
    r = cli(*args, "--trials", "2", "--seed", "7")
    assert r.returncode == 0, r.stderr
    assert "seed 7" in r.stdout and "Y: max abs err" in r.stdout and r.stdout.strip().endswith("ok")
    junit = tmp_path / "v.xml"
    r = cli(*args, "--json", "--junit", str(junit))
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["ok"] and rep["outputs"][0]["name"] == "Y" and isinstance(rep["seed"], int)
    assert "<testsuite" in junit.read_text() and 'failures="0"' in junit.read_text()


def test_verify_reports_mismatch_exit_1(tmp_path, monkeypatch) -> None:
    # a plugin pass that breaks the kernel: verify must catch it (exit 1)
    plugin = tmp_path / "breaker_plugin.py"
    plugin.write_text(
        "import dataclasses\n"
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "from transformer import ir\n"
        "from passes.base import Pass, register\n"
        "@register\n@dataclass(frozen=True)\n"
        "class Breaker(Pass):\n"
        "    name: ClassVar[str] = 'breaker'\n"
        "    summary: ClassVar[str] = 'doubles every stored value (wrong on purpose)'\n"
        "    def run(self, kernel, target, trace):\n"
        "        def f(s):\n"
        "            if isinstance(s, ir.Assign) and s.op == '=':\n"
        "                return dataclasses.replace(s, value=ir.Binary('*', s.value, ir.FloatLit(2.0)))\n"
        "            if isinstance(s, ir.For):\n"
        "                return dataclasses.replace(s, body=tuple(f(b) for b in s.body))\n"
        "            return s\n"
        "        trace.changes.append('doubled stores')\n"
        "        return dataclasses.replace(kernel, body=tuple(f(s) for s in kernel.body))\n")
    _write_dist(tmp_path, "breaker_plugin", "breaker = breaker_plugin:Breaker")
    r = cli("verify", str(EXAMPLES / "add.ir"), "--passes", "breaker", "--size", "M=4", "--size", "N=4",
            "--seed", "3", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISMATCH" in r.stdout and "--seed 3" in r.stdout


def _write_dist(site, module: str, entry: str) -> None:
    """A minimal installed distribution in `site`: a .dist-info with an `ascx.passes`
    entry point, found by importlib.metadata when `site` is on sys.path."""
    d = site / f"{module}-0.1.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (d / "entry_points.txt").write_text(f"[ascx.passes]\n{entry}\n")


def test_plugin_pass_runs_through_transform(tmp_path) -> None:
    (tmp_path / "ascx_hello_plugin").mkdir()
    (tmp_path / "ascx_hello_plugin" / "__init__.py").write_text(
        "import dataclasses\n"
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "from passes.base import Pass, PassError, resolve_loop, replace_at\n"
        "from transformer import ir\n"
        "@dataclass(frozen=True)\n"
        "class Relabel(Pass):\n"
        "    '''Give a loop a new label.'''\n"
        "    name: ClassVar[str] = 'relabel'\n"
        "    summary: ClassVar[str] = 'give a loop a new label (plugin example)'\n"
        "    loop: str = ''\n"
        "    to: str = ''\n"
        "    def run(self, kernel, target, trace):\n"
        "        ref = resolve_loop(kernel, self.loop, self.name)\n"
        "        new = dataclasses.replace(ref.loop, label=self.to)\n"
        "        trace.changes.append(f'{self.loop} is now {self.to}')\n"
        "        return dataclasses.replace(kernel, body=replace_at(kernel.body, ref.path, [new]))\n")
    _write_dist(tmp_path, "ascx_hello_plugin", "relabel = ascx_hello_plugin:Relabel")
    env = {"PYTHONPATH": str(tmp_path)}
    r = cli("passes", env=env)
    assert r.returncode == 0 and "relabel" in r.stdout and "plugin example" in r.stdout
    r = cli("transform", str(EXAMPLES / "matmul.ir"), "--passes", "relabel{loop=mm,to=gemm},multicore{gemm=4}",
            "--explain", env=env)
    assert r.returncode == 0, r.stderr
    assert "@cores(4)\n  gemm: for i in 0..M" in r.stdout
    assert "mm is now gemm" in r.stderr
    r = cli("transform", str(EXAMPLES / "matmul.ir"), "--passes", "relabel{loop=zz,to=g}", env=env)
    assert r.returncode == 2 and "relabel: no loop named `zz`" in r.stderr


def test_passes_lists_every_pass() -> None:
    r = cli("passes")
    assert r.returncode == 0
    for name in ("fuse", "interchange", "unroll", "multicore"):
        assert any(line.startswith(name + " ") for line in r.stdout.splitlines()), r.stdout
    r = cli("passes", "--json")
    names = {p["name"] for p in json.loads(r.stdout)}
    assert {"fuse", "interchange", "unroll", "multicore"} <= names


def test_kernel_helper_sanity() -> None:
    assert kernel("kernel k(A: f32[2]) -> (B: f32[2]) {\n for i in 0..2 { B[i] = A[i] }\n}").name == "k"
