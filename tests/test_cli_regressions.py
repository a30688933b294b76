"""Regression tests for crashes found by `tests/test_cli_fuzz.py`: each input once made a
command print a traceback or an internal error; now it is a clear error (exit 2)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from transformer.cli import main


def invoke(*args: str, input: bytes | str | None = None):
    r = CliRunner().invoke(main, list(args), input=input)
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    return r


def test_non_utf8_kernel_is_located(tmp_path: Path) -> None:
    p = tmp_path / "k.ir"
    p.write_bytes(b"kernel k() -> () {\n  size N = 4 \xff\n}\n")
    for cmd in (["parse"], ["run"], ["check"], ["emit"], ["transform", "--passes", "tile"]):
        r = invoke(cmd[0], str(p), *cmd[1:])
        assert r.exit_code == 2, r.output
        assert r.output.startswith(f"{p}:2:14: error: not UTF-8 text: byte 0xff is not part of a UTF-8 character\n"
                                   "    size N = 4 \ufffd\n               ^\n"
                                   "hint: ascx reads kernels as UTF-8; save the file in that encoding"), r.output


def test_non_utf8_stdin_is_located() -> None:
    r = invoke("parse", "-", input=b"kernel \xc3(")
    assert r.exit_code == 2
    assert r.output.startswith("<stdin>:1:8: error: not UTF-8 text: byte 0xc3 is not part of a UTF-8 character")


def test_click_usage_errors_read_like_ascx_errors(tmp_path: Path) -> None:
    """Bad option values, unknown options and extra arguments were click's own
    `Usage: ... Error: ...` block; now `ascx: error: ...` with the usage as the hint."""
    r = invoke("run", str(tmp_path / "k.ir"), "--seed", "abc")
    assert r.exit_code == 2
    assert r.output == ("ascx: error: invalid value for '--seed': 'abc' is not a valid integer\n"
                        "hint: usage: ascx run [OPTIONS] FILE; see `ascx run --help`\n")
    r = invoke("passes", "%")
    assert r.exit_code == 2
    assert r.output.startswith("ascx: error: got unexpected extra argument (%)\n")
    r = invoke("verify", "k.ir", "--trials", "0")
    assert r.exit_code == 2
    assert r.output.startswith("ascx: error: invalid value for '--trials': 0 is not in the range x>=1\n")
    r = invoke("nosuch")
    assert r.exit_code == 2
    assert r.output.startswith("ascx: error: no such command 'nosuch'\n")


def test_negative_seed_is_a_usage_error(tmp_path: Path) -> None:
    """`--seed -1` was an internal ValueError from numpy (seeds are non-negative)."""
    p = tmp_path / "k.ir"
    p.write_text("kernel k(X: f32[4]) -> (Y: f32[4]) {\n  for i in 0..4 { Y[i] = X[i] }\n}\n")
    r = invoke("run", str(p), "--seed", "-1")
    assert r.exit_code == 2
    assert r.output.startswith("ascx: error: invalid value for '--seed': must be a non-negative integer, got -1\n")
    r = invoke("verify", str(p), "--passes", "tile", "--seed", "-1")
    assert r.exit_code == 2
    assert r.output.startswith("ascx: error: invalid value for '--seed': must be a non-negative integer, got -1\n")
    assert invoke("run", str(p), "--seed", "99999999999999999999999").exit_code == 0


def _add(tmp_path: Path) -> Path:
    p = tmp_path / "add.ir"
    p.write_text("kernel add(A: f32[4], B: f32[4]) -> (C: f32[4]) {\n  for i in 0..4 { C[i] = A[i] + B[i] }\n}\n")
    return p


def test_bad_npz_inputs_are_usage_errors(tmp_path: Path) -> None:
    """An .npz member that is not an .npy (np.load hands back bytes) was an internal
    AttributeError; pickled objects, a bare .npy and a non-zip file get their own message."""
    import pickle
    import zipfile

    import numpy as np

    k = _add(tmp_path)
    raw = tmp_path / "raw.npz"
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("A.npy", pickle.dumps([1, 2, 3]))
    obj = tmp_path / "obj.npz"
    np.savez(obj, A=np.array([{"x": 1}], dtype=object))
    bare = tmp_path / "bare.npz"
    with open(bare, "wb") as f:
        np.save(f, np.zeros(4, np.float32))
    text = tmp_path / "text.npz"
    text.write_text("not an npz")
    hint = "hint: write inputs with np.savez(PATH, NAME=array, ...) (plain numeric arrays)"
    for path, msg in [
        (raw, f"ascx: error: `{raw}`: member `A` is not an .npy array"),
        (obj, f"ascx: error: `{obj}`: input `A` holds Python objects (pickled data), which ascx never loads"),
        (bare, f"ascx: error: `{bare}` is not an .npz file (a zip of .npy arrays)"),
        (text, f"ascx: error: `{text}` is not an .npz file (a zip of .npy arrays)"),
    ]:
        r = invoke("run", str(k), "--inputs", str(path))
        assert r.exit_code == 2, r.output
        assert r.output == f"{msg}\n{hint}\n"
    r = invoke("run", str(k), "--inputs", str(tmp_path))
    assert r.exit_code == 2
    assert r.output == f"ascx: error: cannot read inputs from `{tmp_path}`: Is a directory\n"


def _deep(expr_depth: int, loop_depth: int) -> str:
    """A kernel with a left-deep sum of `expr_depth` nested operators inside `loop_depth`
    nested loops (the innermost over `i`)."""
    outer = "".join(f"for l{n} in 0..1 {{\n" for n in range(loop_depth - 1))
    expr = "X[i]" + " + X[i]" * expr_depth
    return ("kernel deep(X: f32[16]) -> (Y: f32[16]) {\n" + outer
            + f"for i in 0..16 {{\n  Y[i] = {expr}\n}}\n" + "}\n" * (loop_depth - 1) + "}\n")


def test_nesting_limits(tmp_path: Path) -> None:
    """Deeply nested expressions or loops were an internal RecursionError (in the parser,
    the interpreter or code generation); past the limits they are an error at the
    expression or loop, and kernels at the limits go through every command."""
    from transformer.parser import MAX_EXPR_DEPTH, MAX_LOOP_DEPTH

    at = tmp_path / "at.ir"
    at.write_text(_deep(MAX_EXPR_DEPTH, MAX_LOOP_DEPTH))
    for args in (["parse"], ["run"], ["check"], ["emit"], ["transform", "--passes", "tile"],
                 ["verify", "--passes", "unroll{i=4}", "--trials", "1"]):
        r = invoke(args[0], str(at), *args[1:])
        assert r.exit_code == 0, (args, r.output)
    expr = tmp_path / "expr.ir"
    expr.write_text(_deep(MAX_EXPR_DEPTH + 1, 1))
    r = invoke("run", str(expr))
    assert r.exit_code == 2
    assert r.output.startswith(f"{expr}:3:10: error: expression nested more than 100 operators deep\n"
                               "    Y[i] = X[i] + X[i]"), r.output
    assert r.output.endswith("\n           ^\nhint: compute it in steps through a temp\n")
    deep = tmp_path / "deep.ir"
    deep.write_text("kernel k(X: f32[4]) -> (Y: f32[4]) {\n  Y[0] = " + "-(" * 5000 + "X[0]" + ")" * 5000 + "\n}\n")
    r = invoke("parse", str(deep))
    assert r.exit_code == 2
    assert r.output.startswith(f"{deep}:2:10: error: expression nested more than 100 operators deep\n")
    loops = tmp_path / "loops.ir"
    loops.write_text(_deep(1, MAX_LOOP_DEPTH + 1))
    r = invoke("emit", str(loops))
    assert r.exit_code == 2
    assert r.output == f"{loops}:34:5: error: loops nested more than 32 deep\n  for i in 0..16 {{\n      ^\n"


def test_int32_limits(tmp_path: Path) -> None:
    """A size of 10^20 reached numpy as a shape (internal ValueError `Maximum allowed
    dimension exceeded`) and was emitted as an int32_t loop bound; sizes, element counts,
    integer literals and annotation arguments are now at most 2^31 - 1. A tensor may hold
    more elements (issue 29, item 17: GM offsets are 64-bit where they need it); the
    interpreter's memory budget refuses what it cannot hold."""
    add = ("kernel add(A: f16[M, N]) -> (C: f16[M, N]) {\n  size M = SIZE\n  size N = 1024\n"
           "  for i in 0..M {\n    for j in 0..N { C[i, j] = A[i, j] * LIT }\n  }\n}\n")
    p = tmp_path / "k.ir"
    p.write_text(add.replace("SIZE", "99999999999999999999").replace("LIT", "2"))
    for cmd in ("parse", "run", "emit", "check"):
        r = invoke(cmd, str(p))
        assert r.exit_code == 2
        assert r.output == (f"{p}:2:8: error: size `M` is 99999999999999999999, more than 2147483647 (2^31 - 1)\n"
                            "    size M = 99999999999999999999\n         ^\n"
                            "hint: emitted Ascend C indexes with int32_t\n")
    p.write_text(add.replace("SIZE", "4").replace("LIT", "2"))
    r = invoke("run", str(p), "--size", "M=100000000")
    assert r.exit_code == 2
    assert r.output.startswith(f"{p}:1:12: error: interpreting `add` needs 1.2 TiB for its tensors (largest `A`: "
                               "f16[100000000, 1024]), more than the limit of"), r.output
    p.write_text(add.replace("SIZE", "4").replace("LIT", "2147483648"))
    r = invoke("run", str(p))
    assert r.exit_code == 2
    assert r.output == (f"{p}:5:41: error: integer literal 2147483648 is more than 2147483647 (2^31 - 1)\n"
                        "      for j in 0..N { C[i, j] = A[i, j] * 2147483648 }\n"
                        "                                          ^\n"
                        "hint: for a float value write `2147483648.0`\n")
    p.write_text(add.replace("SIZE", "4").replace("LIT", "2").replace("  for i", "  @cores(99999999999)\n  for i"))
    r = invoke("emit", str(p))
    assert r.exit_code == 2
    assert r.output.startswith(f"{p}:4:4: error: `@cores(n=99999999999)` must be at most 2147483647\n")
    p.write_text(add.replace("SIZE", "2147483647").replace("N = 1024", "N = 1").replace("LIT", "2"))
    assert invoke("parse", str(p)).exit_code == 0  # at the limit


def test_interpreter_memory_limit(tmp_path: Path, monkeypatch) -> None:
    """`run --size M=100000` (within int32 elements, but 2^31 f32 elements per tensor) was
    an internal MemoryError; the interpreter now refuses before allocating."""
    p = tmp_path / "k.ir"
    p.write_text("kernel k(A: f32[M, N]) -> (C: f32[M, N]) {\n  size M = 4\n  size N = 16384\n"
                 "  for i in 0..M {\n    for j in 0..N { C[i, j] = A[i, j] }\n  }\n}\n")
    r = invoke("run", str(p), "--size", "M=100000")
    assert r.exit_code == 2
    assert r.output == (f"{p}:1:10: error: interpreting `k` needs 25.9 GiB for its tensors "
                        "(largest `A`: f32[100000, 16384]), more than the limit of 4.0 GiB\n"
                        "  kernel k(A: f32[M, N]) -> (C: f32[M, N]) {\n           ^\n"
                        "hint: interpret at smaller sizes with --size, or raise ASCX_INTERP_MAX_BYTES\n")
    r = invoke("verify", str(p), "--passes", "tile", "--size", "M=100000")
    assert r.exit_code == 2 and "error: interpreting `k` needs 25.9 GiB" in r.output
    monkeypatch.setenv("ASCX_INTERP_MAX_BYTES", "100000")
    r = invoke("run", str(p))
    assert r.exit_code == 2 and "needs 1.1 MiB for its tensors (largest `A`: f32[4, 16384]), " \
                                "more than the limit of 97.7 KiB" in r.output


def test_output_paths_are_checked_before_any_work(tmp_path: Path) -> None:
    """`run --save-inputs S -o DIR` wrote S and then failed on DIR; `emit -o`, `verify
    --junit` and `--harness` could overwrite the kernel file itself. Every path a command
    will write is now checked first, and nothing is written when one is bad."""
    k = _add(tmp_path)
    saved = tmp_path / "saved.npz"
    r = invoke("run", str(k), "--save-inputs", str(saved), "-o", str(tmp_path))
    assert r.exit_code == 2
    assert r.output == f"ascx: error: -o {tmp_path}: give a path ending in .npz\n"
    assert not saved.exists()
    sub = tmp_path / "sub.npz"
    sub.mkdir()
    r = invoke("run", str(k), "--save-inputs", str(saved), "-o", str(sub))
    assert r.output == f"ascx: error: -o {sub}: is a directory\nhint: give a file path\n"
    r = invoke("run", str(k), "-o", str(tmp_path / "no" / "out.npz"))
    assert r.output == f"ascx: error: -o {tmp_path / 'no' / 'out.npz'}: folder `{tmp_path / 'no'}` does not exist\n"
    ins = tmp_path / "in.npz"
    assert invoke("run", str(k), "--save-inputs", str(ins)).exit_code == 0
    r = invoke("run", str(k), "--inputs", str(ins), "-o", str(ins))
    assert r.output == f"ascx: error: -o {ins} would overwrite the input file\nhint: write elsewhere\n"
    assert not saved.exists()
    before = k.read_bytes()
    r = invoke("emit", str(k), "-o", str(k))
    assert r.output == f"ascx: error: -o {k} would overwrite the input file\nhint: write elsewhere\n"
    r = invoke("verify", str(k), "--passes", "tile", "--junit", str(k))
    assert r.output == f"ascx: error: --junit {k} would overwrite the input file\nhint: write elsewhere\n"
    r = invoke("emit", str(k), "-o", str(tmp_path / "x" / k.name), "--harness", str(tmp_path))
    assert r.exit_code == 2  # the missing folder of -o
    (tmp_path / "x").mkdir()
    r = invoke("emit", str(k), "-o", str(tmp_path / "x" / k.name), "--harness", str(tmp_path))
    assert r.output == f"ascx: error: --harness {tmp_path / k.name} would overwrite the input file\nhint: write elsewhere\n"
    r = invoke("transform", str(k), "--passes", "tile", "--emit", "ascendc", "--harness", str(k))
    assert r.output == f"ascx: error: --harness {k}: is not a directory\n"
    r = invoke("transform", str(k), "--passes", "nosuch", "--harness", str(tmp_path / "h"))
    assert r.output == "ascx: error: --harness goes with --emit ascendc\n"
    assert k.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.ir", "in.npz", "sub.npz", "x"]


def test_failed_commands_keep_existing_outputs(tmp_path: Path, monkeypatch) -> None:
    """A command that fails midway (a bad pipeline after parsing, or the final rename)
    leaves an existing output file as it was and no temporary file behind."""
    import os

    k = _add(tmp_path)
    outs = {name: tmp_path / name for name in ("out.ir", "out.npz", "out.cpp")}
    for p in outs.values():
        p.write_text("old")
    cmds = [["transform", str(k), "--passes", "tile", "-o", str(outs["out.ir"])],
            ["run", str(k), "-o", str(outs["out.npz"])],
            ["emit", str(k), "-o", str(outs["out.cpp"])]]
    r = invoke("transform", str(k), "--passes", "tile{ew.i=7}", "-o", str(outs["out.ir"]))
    assert r.exit_code == 2
    r = invoke("run", str(tmp_path / "missing.ir"), "-o", str(outs["out.npz"]))
    assert r.exit_code == 2

    def full(src, dst):  # the disk fills up at the rename
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    for cmd in cmds:
        r = invoke(*cmd)
        assert r.exit_code == 2
        assert r.output.endswith(f"ascx: error: cannot write `{cmd[-1]}`: No space left on device\n"), r.output
    assert all(p.read_text() == "old" for p in outs.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.ir", "out.cpp", "out.ir", "out.npz"]


def test_check_locates_pipeline_and_pass_errors(tmp_path: Path) -> None:
    """`ascx check --passes` printed pipeline and pass errors without their source
    (`ascx: error: ...`); it now renders them like `transform` does."""
    k = _add(tmp_path)
    r = invoke("check", str(k), "--passes", "tile{i=3")
    assert r.exit_code == 2
    assert r.output == ("--passes:1:5: error: unclosed or nested `{` at column 5 of the pipeline\n"
                        "  tile{i=3\n      ^\nhint: parameters are `pass{key=value,...}`, closed by `}`\n")
    r = invoke("check", str(k), "--passes", "unroll{i=8}")
    assert r.exit_code == 2
    assert r.output == (f"{k}:2:7: error: unroll: factor 8 exceeds the trip count 4 of `for i in 0..4`\n"
                        "    for i in 0..4 { C[i] = A[i] + B[i] }\n        ^\nhint: use a factor in 2..4, or `full`\n")


def test_integer_const_must_fit_its_dtype(tmp_path: Path) -> None:
    """`const c: i32 = 99999999999999999999` was an internal AttributeError in `run` (and
    emitted as an out-of-range C literal); `const c: i8 = 1000` was silently accepted."""
    p = tmp_path / "k.ir"
    for decl, msg in [("const c: i32 = 99999999999999999999",
                       "const `c` = 99999999999999999999 does not fit i32 (-2147483648..2147483647)"),
                      ("const c: i8 = 1000", "const `c` = 1000 does not fit i8 (-128..127)")]:
        p.write_text(f"kernel k(X: i32[4]) -> (Y: i32[4]) {{\n  {decl}\n  for i in 0..4 {{ Y[i] = X[i] * c }}\n}}\n")
        for cmd in ("run", "emit"):
            r = invoke(cmd, str(p))
            assert r.exit_code == 2
            assert r.output == f"{p}:2:9: error: {msg}\n    {decl}\n          ^\n"


def test_interrupted_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C between writing the temporary file and renaming it left `OUT.ascx-tmp-PID`
    behind (only OSError cleaned up)."""
    import os

    k = _add(tmp_path)
    out = tmp_path / "out.ir"
    out.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    r = invoke("transform", str(k), "--passes", "tile", "-o", str(out))
    assert r.exit_code == 130 and r.output == "ascx: interrupted\n"
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add.ir", "out.ir"]


EMPTY_INNER = """kernel k(X: f16[N, H]) -> (Y: f32[N]) {
  size N = 64
  size H = 64
  rows: for n in 0..N {
    Y[n] = 0.0
    for h in 100000..H { Y[n] += f32(X[n, h]) }
  }
}
"""


def test_tile_with_an_empty_inner_loop(tmp_path: Path) -> None:
    """`tile` staged the footprint of a loop that never runs (`for h in 100000..H`) as a
    local of extent H - 100000 < 0: an internal AssertionError (invalid kernel). Nothing is
    staged for an empty loop now, and tiling the empty loop itself is refused."""
    p = tmp_path / "k.ir"
    p.write_text(EMPTY_INNER)
    for pipeline in ("tile", "fuse,tile", "multicore{rows},tile"):
        r = invoke("verify", str(p), "--passes", pipeline, "--trials", "1", "--seed", "1")
        assert r.exit_code == 0, r.output
        assert r.output.endswith("ok\n")
    r = invoke("transform", str(p), "--passes", "tile{rows.h=8}")
    assert r.exit_code == 2
    assert r.output == (f"{p}:6:9: error: tile: `for h in 100000..H` never runs (trip count 0): nothing to tile\n"
                        "      for h in 100000..H { Y[n] += f32(X[n, h]) }\n          ^\n")


def test_output_to_a_device_is_written_in_place_not_replaced(tmp_path):
    """`-o /dev/null` used to write `/dev/null.ascx-tmp-PID` and rename it over /dev/null,
    turning the device into a plain file (as root). A destination that exists and is not a
    regular file is written in place; a regular file is still replaced atomically."""
    import os
    import stat

    from transformer.cli_common import write_output_file

    write_output_file(os.devnull, "kernel text\n")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert not [f for f in os.listdir(os.path.dirname(os.devnull)) if ".ascx-tmp-" in f]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so opening for writing does not block
    try:
        write_output_file(str(fifo), "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    regular = tmp_path / "out.cpp"
    regular.write_text("old")
    write_output_file(str(regular), "new")
    assert regular.read_text() == "new"
    assert set(os.listdir(tmp_path)) == {"pipe", "out.cpp"}  # no temporary left behind
