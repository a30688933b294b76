"""Adversarial input to every `ascx` command, in-process through click's `CliRunner`.

Each case is one command line built from mutated example kernels (token deletions,
duplications, swaps, junk characters, truncation, non-UTF-8 bytes, huge numbers, deep
parentheses), random pipelines (unknown passes, unbalanced braces, out-of-range values),
bad `--size` values, bad `.npz` files, unwritable output paths, missing files and junk
targets. Whatever the input, the contract is:

* the exit code is 0, 1 or 2;
* no `Traceback` and no `internal error` anywhere in the output;
* exit 2 prints an `error:` line;
* a failed command leaves no partial output file and never touches the input.

The seed is fresh on every run and printed in every failure message; reproduce with
`ASCX_CLI_FUZZ_SEED=<seed>` (and `ASCX_CLI_FUZZ_CASES=<n>` to hunt with thousands of cases:
`ASCX_CLI_FUZZ_CASES=5000 python -m pytest tests/test_cli_fuzz.py -n 2 -q`).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import re
import secrets
import signal
import threading
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from transformer.cli import main

pytestmark = pytest.mark.slow  # a fuzzer (hundreds of CLI runs): full tier only (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.ir"))

SEED = int(os.environ.get("ASCX_CLI_FUZZ_SEED") or secrets.randbits(48))
CASES = int(os.environ.get("ASCX_CLI_FUZZ_CASES", "4000"))
CHUNKS = 8
# A case that runs longer than this (a mutation that made a legal but long loop) is
# abandoned and counted, not failed: slowness is not what this test looks for.
CASE_SECONDS = float(os.environ.get("ASCX_CLI_FUZZ_CASE_SECONDS", "3"))

print(f"test_cli_fuzz: ASCX_CLI_FUZZ_SEED={SEED} ASCX_CLI_FUZZ_CASES={CASES}")


def _small(text: str) -> str:
    """Examples at small sizes (fast to interpret), keeping the multiples of 16 the
    documented pipelines need."""
    return re.sub(r"(size \w+ = )(\d+)", lambda m: m.group(1) + str(min(int(m.group(2)), 64)), text)


BASES = [_small(p.read_text()) for p in EXAMPLES]

PIPELINES = [
    "tile,double_buffer", "fuse,tile,double_buffer", "tile{mm.i=64,mm.j=64,mm.k=64},double_buffer",
    "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer", "round_operand{pv.s=f16},tile",
    "layout{X=NHWC},tile,double_buffer", "fuse", "tile", "interchange{mm.i,mm.j}", "unroll{mm.k=4}",
    "multicore", "online_softmax", "double_buffer",
]
PASS_NAMES = ["fuse", "tile", "double_buffer", "online_softmax", "interchange", "unroll", "layout",
              "multicore", "round_operand", "tiles", "Fuse", "", "fuse ", "ünroll", "tile.x", "1tile"]
PARAM_VALUES = ["-1", "0", "1", "2", "3", "64", "1e9", "1000000000", "99999999999999999999", "abc", "",
                "full", "f16", "f32", "NHWC", "NCHW", "true", "x", "½", "٣", "64.0", "-0", "0x10", " 4 "]
LOOP_NAMES = ["qk.i", "mm.i", "mm.j", "mm.k", "attn.i", "ew.i", "ew", "i", "j", "k", "x", "pv.s", "X", "s",
              "block", "stages", "factor", "cores", "..", "qk..i", "é"]
JUNK = list("{}()[]<>@#$%^&*,.;:=+-/\\|`'\"!?~ \t\n\r\x00\x0b\x1b") + ["é", "λ", "∞", "\u200b", "\ufeff", "💥", "\ud7ff"]
SIZES_BAD = ["S=0", "S=-1", "S=abc", "=5", "S", "S=", "S=99999999999999999999", "S=1e3", "Q=4", "S=64",
             " S = 64 ", "S=٣", "S=2147483648", "S=4294967296", "M=100000000", "N=3", "K=7", "D=16",
             "H=1", "W=1000000", "C=0x10", "R=1_000", "S==1", "M=1,N=2", "é=1"]
TARGETS = ["ascend910b2", "ascend910b", "ASCEND910B2", "ascend310p", "", "x" * 300, "../etc", "ascend910b2 ",
           "é", "nope"]

# Names that reach the C++ compiler in emitted code: macros, Ascend C and C library names,
# names the code generator writes itself, C++-reserved forms, and names at / over the
# 128-character limit (issue 9: each must be rejected at parse or emitted safely).
HOSTILE_NAMES = ["EOF", "M_PI", "NULL", "errno", "stdin", "INFINITY", "xGm", "X_ub", "inQueue_X", "buf_X",
                 "ascx_cvt", "ascx_c0", "ascx_kb", "ascx_", "DataCopy", "LocalTensor", "pipe", "Init", "Process",
                 "tmp0", "tmpBuf0", "CopyIn", "Compute", "KernelAdd", "ProcessEw", "workspace", "dir", "status",
                 "main", "exp", "index", "y0", "printf", "int", "class", "half", "__x", "a__b", "_Tp", "iEnd",
                 "a" * 128, "b" * 129, "e" * 5000]
DTYPE_WORDS = ["f16", "bf16", "f32", "i8", "i32"]
IR_WORDS = frozenset({"kernel", "size", "const", "temp", "local", "for", "in", "copy", "layout", "inf", "select",
                      "max", "min", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "ub", "l1", "l0a", "l0b", "l0c",
                      "cores", "unroll", "pipeline", "stages", "n", "factor", *DTYPE_WORDS})

_TOKEN_RE = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|\d+\.\d+(?:e-?\d+)?|\d+|\.\.|->|[+*]=|max=|min=|.", re.S)


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


def mutate_text(rng: random.Random, text: str) -> bytes:
    """One to three mutations of a kernel text (or a wholly degenerate file)."""
    r = rng.random()
    if r < 0.03:
        return b""
    if r < 0.05:
        return rng.randbytes(rng.randint(1, 200))
    toks = _tokens(text)
    for _ in range(rng.randint(1, 3)):
        if not toks:
            break
        kind = rng.randrange(14)
        i = rng.randrange(len(toks))
        if kind == 0:
            del toks[i]
        elif kind == 1:
            toks.insert(i, toks[i])
        elif kind == 2:
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif kind == 3:
            toks.insert(i, rng.choice(JUNK))
        elif kind == 4:
            toks = toks[:i]
        elif kind == 5:  # replace a number
            nums = [k for k, t in enumerate(toks) if t.isdigit()]
            if nums:
                toks[rng.choice(nums)] = rng.choice(["0", "1", "2147483647", "2147483648", "4294967296",
                                                     "9223372036854775808", "99999999999999999999",
                                                     "9" * rng.randint(20, 400), "100000", "65536", "1.5", "1e309"])
        elif kind == 6:  # deep parentheses around an operand
            depth = rng.choice([50, 500, 3000, 20000])
            toks.insert(i, "(" * depth + "1" + ")" * depth + "+")
        elif kind == 7:  # deep unary minus / long sums
            n = rng.choice([100, 2000, 20000])
            toks.insert(i, rng.choice(["-" * n, "1+" * n, "-(" * n + "1" + ")" * n + "+"]))
        elif kind == 8:  # replace a name by another name of the text
            names = [k for k, t in enumerate(toks) if t[:1].isalpha()]
            if names:
                toks[rng.choice(names)] = toks[rng.choice(names)]
        elif kind == 9:
            toks.insert(i, rng.choice(["size Q = 4\n", "temp t: f32[S]\n", "local l: f16[64] @ub\n",
                                       "@unroll(4)\n", "@pipeline(stages=0)\n", "@cores(99999999999)\n",
                                       "copy X[0:1] <- Y[0:1]\n", "for z in 0..99999999999 { }\n",
                                       "const c: i32 = 1e400\n", "const c: f16 = 99999999999999999999999\n",
                                       "const c: i32 = 99999999999999999999\n", "const c: i8 = 300\n",
                                       "const scale: i8 = -129\n", "const eps: i32 = 2147483648\n"]))
        elif kind == 10:  # duplicate a line
            lines = "".join(toks).splitlines(keepends=True)
            k = rng.randrange(len(lines)) if lines else 0
            lines[k:k] = lines[k:k + 1] * rng.randint(1, 3)
            toks = _tokens("".join(lines))
        elif kind == 12:  # rename a name everywhere to a hostile one (a macro, an API or generated name)
            names = sorted({t for t in toks if t[:1].isalpha() and t not in IR_WORDS})
            if names:
                old_name, new_name = rng.choice(names), rng.choice(HOSTILE_NAMES)
                toks = [new_name if t == old_name else t for t in toks]
        elif kind == 13:  # change a dtype everywhere
            dts = [t for t in toks if t in DTYPE_WORDS]
            if dts:
                old_dt, new_dt = rng.choice(dts), rng.choice(DTYPE_WORDS)
                toks = [new_dt if t == old_dt else t for t in toks]
        else:  # swap two lines
            lines = "".join(toks).splitlines(keepends=True)
            if len(lines) > 1:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
            toks = _tokens("".join(lines))
    data = "".join(toks).encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:  # non-UTF-8 bytes somewhere
        k = rng.randrange(len(data) + 1)
        data = data[:k] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[k:]
    return data


def _names_of(text: str) -> tuple[list[str], list[str]]:
    """(loop names, tensor names) of a kernel text, as the pipeline syntax spells them."""
    loops: list[str] = []
    for m in re.finditer(r"(\w+): for (\w+)", text):
        loops += [m.group(1), f"{m.group(1)}.{m.group(2)}"]
    loops += [f"{lab}.{v}" for lab in re.findall(r"(\w+): for", text) for v in re.findall(r"for (\w+) in", text)]
    tensors = re.findall(r"(\w+): (?:f16|f32|bf16|i8|i32)\b", text)
    return loops or ["i"], tensors or ["X"]


def random_pipeline(rng: random.Random, text: str = "") -> str:
    """A pipeline: documented ones, syntax junk, or passes with parameters naming the
    kernel's real loops and tensors with adversarial values."""
    r = rng.random()
    if r < 0.2:
        return rng.choice(PIPELINES)
    if r < 0.27:
        return rng.choice(["", " ", ",", "fuse,", ",fuse", "fuse,,tile", "tile{", "tile}", "tile{{}}",
                           "tile{qk.i=64", "tile{qk.i=64}}", "fuse{}", "tile{,}", "tile{=}", "tile{=64}",
                           "fuse tile", "fuse;tile", "💥", "tile{" + "a" * 5000 + "}", "fuse," * 300 + "fuse"])
    loops, tensors = _names_of(text)
    real = r < 0.8
    items = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(PASS_NAMES[:9] if real else PASS_NAMES)
        params = []
        for _ in range(rng.choice([0, 0, 1, 2, 3])):
            if name == "layout" and real:
                key = rng.choice(tensors)
            elif name == "round_operand" and real:
                key = f"{rng.choice(loops).split('.')[0]}.{rng.choice(tensors)}"
            elif name in ("online_softmax",) and real:
                key = "block"
            elif name == "double_buffer" and real:
                key = rng.choice(["loop", "stages"])
            else:
                key = rng.choice(loops if real else LOOP_NAMES + ["block", "stages", "loop", "x"])
            v = rng.random()
            value = rng.choice(PARAM_VALUES + LOOP_NAMES + loops + ["ND", "NZ", "NC1HWC0", "bf16", "i8"])
            params.append(key if v < 0.2 else f"{key}={value}")
        item = name + ("{" + ",".join(params) + "}" if params or rng.random() < 0.1 else "")
        items.append(item)
    text = ",".join(items)
    if rng.random() < 0.05:
        k = rng.randrange(len(text) + 1)
        text = text[:k] + rng.choice(JUNK) + text[k:]
    return text


# --------------------------------------------------------------------------------------
# files


@dataclass
class Case:
    args: list[str]
    stdin: bytes | None = None
    outputs: list[Path] = field(default_factory=list)  # paths the command may write (-o etc.)
    saved: list[Path] = field(default_factory=list)  # `run --save-inputs`: written before running
    inputs: list[Path] = field(default_factory=list)  # paths it must never change


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def kernel_file(rng: random.Random, d: Path, faulty: bool) -> tuple[Path, str]:
    """A kernel file (the example text it came from): mutated when `faulty`, else an
    example as written (at small sizes)."""
    base = rng.choice(BASES)
    if faulty:
        r = rng.random()
        if r < 0.05:
            return d / "missing.ir", base
        if r < 0.08:
            return d, base  # a directory
        return _write(d / f"k{rng.randrange(10**6)}.ir", mutate_text(rng, base)), base
    return _write(d / f"k{rng.randrange(10**6)}.ir", base.encode()), base


def npz_file(rng: random.Random, d: Path, kernel: Path) -> Path:
    p = d / f"in{rng.randrange(10**6)}.npz"
    r = rng.randrange(10)
    if r == 0:
        return _write(p, b"not an npz file")
    if r == 1:  # a pickle inside
        np.savez(p, A=np.array([{"x": 1}], dtype=object))
        return p
    if r == 2:
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("A.npy", pickle.dumps([1, 2, 3]))
        return p
    if r == 3:
        return d / "missing.npz"
    if r == 4:
        return d
    if r == 5:
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("A.npy", b"\x93NUMPY\x01\x00" + b"\xff" * 40)
        return p
    names = ["A", "B", "X", "Q", "K", "V", "M", "Wt", "bias", "gamma", "beta", "zzz", "é"]
    arrays = {}
    for name in rng.sample(names, rng.randint(1, 4)):
        shape = tuple(rng.choice([0, 1, 3, 16, 64]) for _ in range(rng.randint(0, 3)))
        dtype = rng.choice([np.float16, np.float32, np.float64, np.int32, np.int8, np.bool_, np.complex64])
        arrays[name] = np.zeros(shape, dtype=dtype)
    np.savez(p, **arrays)
    return p


def out_path(rng: random.Random, d: Path, suffix: str, kernel: Path, faulty: bool) -> Path:
    if not faulty:
        return d / f"out{rng.randrange(10**6)}{suffix}"
    r = rng.randrange(6)
    if r == 0:
        return d  # a directory
    if r == 1:
        return d / "no" / "such" / f"dir{suffix}"
    if r == 2:
        return kernel  # the input itself
    if r == 3:
        sub = d / f"isdir{suffix}"
        sub.mkdir(exist_ok=True)
        return sub
    if r == 4:
        return d / "out.wrongext"
    existing = d / f"existing{suffix}"
    existing.write_text("precious")
    return existing


def opt(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def sizes(rng: random.Random, faulty: bool, text: str) -> list[str]:
    if not faulty:
        return []
    names = re.findall(r"size (\w+) =", text) or ["S"]
    out: list[str] = []
    for _ in range(rng.randint(1, 2)):
        v = rng.choice(SIZES_BAD)
        if rng.random() < 0.5 and "=" in v:  # a size the kernel has
            v = rng.choice(names) + v[v.index("="):]
        out += ["--size", v]
    return out


def target(rng: random.Random, faulty: bool) -> list[str]:
    if faulty:
        return ["--target", rng.choice(TARGETS)]
    return ["--target", rng.choice(["ascend910b2", "ascend310p"])] if opt(rng, 0.1) else []


FAULTS = ("kernel", "kernel", "kernel", "pipeline", "pipeline", "pipeline", "sizes", "npz", "output", "target",
          "options", "none")


def make_case(rng: random.Random, d: Path) -> Case:
    """One command line, usually with one fault (the rest valid, so the fault is met
    deep in the command), sometimes with several."""
    cmd = rng.choice(["parse", "run", "transform", "verify", "check", "emit", "passes", "targets", "emulator",
                      "run", "transform", "transform", "check", "emit"])
    if cmd == "passes":
        return Case(["passes"] + (["--json"] if opt(rng, 0.5) else []) + ([rng.choice(JUNK)] if opt(rng, 0.3) else []))
    if cmd == "targets":
        return Case(["targets"] + ([rng.choice(TARGETS)] if opt(rng, 0.6) else []) + (["--json"] if opt(rng, 0.5) else []))
    if cmd == "emulator":
        return Case(["emulator"] + (["--cflags"] if opt(rng, 0.7) else []) + target(rng, opt(rng, 0.5)))
    faults = {rng.choice(FAULTS) for _ in range(1 if opt(rng, 0.8) else 3)}
    k, text = kernel_file(rng, d, "kernel" in faults)
    stdin = None
    case = Case([], inputs=[k] if k.is_file() else [])
    kpath = str(k)
    if opt(rng, 0.05):
        stdin, kpath = (mutate_text(rng, text) if "kernel" in faults else text.encode()), "-"
        case.inputs = []
    args = [cmd, kpath] + sizes(rng, "sizes" in faults, text)
    bad_out = "output" in faults
    bad_opt = "options" in faults

    def pipeline() -> str:
        return random_pipeline(rng, text) if "pipeline" in faults else rng.choice(PIPELINES)

    def output(flag: str, suffix: str, saved: bool = False) -> None:
        o = out_path(rng, d, suffix, k, bad_out and opt(rng, 0.7))
        args.extend([flag, str(o)])
        (case.saved if saved else case.outputs).append(o)

    if cmd == "parse":
        args += target(rng, "target" in faults) + (["-q"] if opt(rng, 0.3) else [])
    elif cmd == "run":
        if "npz" in faults:
            args += ["--inputs", str(npz_file(rng, d, k))]
        if opt(rng, 0.3):
            args += ["--seed", rng.choice(["-1", "abc", "99999999999999999999999"]) if bad_opt else "1"]
        if opt(rng, 0.4) or bad_out:
            output("--save-inputs", ".npz", saved=True)
        if opt(rng, 0.4) or bad_out:
            output("-o", ".npz")
    elif cmd == "transform":
        args += ["--passes", pipeline()] + target(rng, "target" in faults)
        if opt(rng, 0.4) or bad_out:
            output("-o", ".ir")
        args += (["--explain"] if opt(rng, 0.3) else []) + (["--force"] if opt(rng, 0.05) else [])
        if opt(rng, 0.15):
            args += ["--emit", rng.choice(["ir", "ascendc", "asm"] if bad_opt else ["ir", "ascendc"])]
        if opt(rng, 0.05):
            args += ["--harness", str(out_path(rng, d, "", k, bad_out))]
    elif cmd == "verify":
        trials = rng.choice(["0", "-3", "x"]) if bad_opt else "1"
        args += ["--passes", pipeline(), "--trials", trials, "--seed", "7"] + target(rng, "target" in faults)
        if opt(rng, 0.2):
            args += ["--json"]
        if opt(rng, 0.2) or bad_out:
            output("--junit", ".xml")
        if bad_opt and opt(rng, 0.3):
            args += ["--keep", str(d)]
    elif cmd == "check":
        if opt(rng, 0.7):
            args += ["--passes", pipeline()]
        args += target(rng, "target" in faults) + (["--json"] if opt(rng, 0.3) else [])
        if bad_opt or opt(rng, 0.1):
            args += ["--free", rng.choice(["S", "M", "N", "K", "zz", ""])]
        if bad_opt or opt(rng, 0.1):
            args += ["--timeout-ms", rng.choice(["1", "0", "-5", "abc"] if bad_opt else ["500", "2000"])]
        if opt(rng, 0.1):
            args += [rng.choice(["--api-temp", "--no-api-temp"])]
    elif cmd == "emit":
        if opt(rng, 0.6):
            args += ["--passes", pipeline()]
        args += target(rng, "target" in faults)
        if opt(rng, 0.4) or bad_out:
            output("-o", ".cpp")
        if opt(rng, 0.05) or (bad_out and opt(rng, 0.3)):
            args += ["--harness", str(out_path(rng, d, "", k, bad_out))]
        args += (["--plan"] if opt(rng, 0.2) else []) + (["--scalar"] if opt(rng, 0.1) else [])
    case.args = args
    case.stdin = stdin
    return case


# --------------------------------------------------------------------------------------
# running


class _CaseTimeout(BaseException):
    """Raised by the alarm in a case that runs too long (a BaseException so neither the
    CLI's handler nor CliRunner swallows it)."""


def _snapshot(paths: list[Path]) -> dict[Path, str | None]:
    out: dict[Path, str | None] = {}
    for p in paths:
        out[p] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
    return out


def run_case(case: Case) -> tuple[int | None, str]:
    """(exit code, all output); exit None when the case ran out of time."""
    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")

    def on_alarm(signum, frame):  # noqa: ARG001
        raise _CaseTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm) if use_alarm else None
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        try:
            r = CliRunner().invoke(main, case.args, input=case.stdin)
        except _CaseTimeout:
            return None, ""
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    out = r.output
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback

        out += "\nTraceback (from CliRunner):\n" + "".join(traceback.format_exception(r.exception))
    return r.exit_code, out


def _is_report(case: Case, o: Path) -> bool:
    """Is `o` the `--junit` report of a `verify` case?"""
    a = case.args
    return bool(a) and a[0] == "verify" and any(x == "--junit" and y == str(o) for x, y in zip(a, a[1:]))


def check_case(case: Case, d: Path, label: str) -> bool:
    """Run one case and assert the contract; False when it timed out."""
    before = _snapshot(case.inputs)
    outs_before = _snapshot([o for o in case.outputs + case.saved if o not in case.inputs])
    code, out = run_case(case)
    if code is None:
        return False
    where = f"{label}: ascx {' '.join(repr(a) if ' ' in a or not a else a for a in case.args)}"
    assert code in (0, 1, 2), f"{where}\nexit {code}\n{out}"
    assert "Traceback" not in out, f"{where}\n{out}"
    assert "internal error" not in out, f"{where}\n{out}"
    if code == 2:
        assert re.search(r"(^|: )error: ", out, re.M), f"{where}\nexit 2 without an `error:` line\n{out}"
    after = _snapshot(case.inputs)
    assert after == before or "--force" in case.args, f"{where}\nthe input file changed\n{out}"
    if code != 0:
        for o, h in outs_before.items():
            now = _snapshot([o])[o]
            if now != h and code == 1 and _is_report(case, o):
                # `verify --junit` writes its report when the verification fails (exit 1):
                # that is what CI reads; it must be whole and say it failed
                root = ET.parse(o).getroot()
                assert root.find(".//failure") is not None, f"{where}\nfailed verify wrote a report without a failure\n{out}"
                continue
            assert now == h or o in case.saved, f"{where}\nfailed but changed output {o}\n{out}"
    for o in case.saved:  # may be written even when the run fails (to reproduce it), but whole
        if o.is_file() and o not in case.inputs and _snapshot([o])[o] != outs_before[o]:
            with np.load(o) as z:
                assert z.files, f"{where}\nempty --save-inputs file"
    leftovers = [p.name for p in d.rglob("*.ascx-tmp-*")]
    assert not leftovers, f"{where}\ntemporary files left behind: {leftovers}\n{out}"
    return True


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_cli_fuzz(chunk: int, tmp_path: Path) -> None:
    timeouts = 0
    for i in range(chunk, CASES, CHUNKS):
        rng = random.Random(f"{SEED}-{i}")
        d = tmp_path / f"c{i}"
        d.mkdir()
        case = make_case(rng, d)
        if not check_case(case, d, f"ASCX_CLI_FUZZ_SEED={SEED} case {i}"):
            timeouts += 1
    n = len(range(chunk, CASES, CHUNKS))
    assert timeouts <= max(2, n // 10), f"ASCX_CLI_FUZZ_SEED={SEED}: {timeouts} of {n} cases timed out"


# --------------------------------------------------------------------------------------
# through the C++ compiler: hostile names and dtypes, `verify --emitted` (bounded)

EMITTED_CASES = int(os.environ.get("ASCX_CLI_FUZZ_EMITTED_CASES", "2"))
ACCEPTABLE_NAMES = [n for n in HOSTILE_NAMES if len(n) <= 128 and "__" not in n and not n.startswith("_")
                    and n not in ("int", "class", "half")]


@pytest.mark.slow
@pytest.mark.parametrize("i", range(EMITTED_CASES))
def test_cli_fuzz_emitted(i: int, tmp_path: Path) -> None:
    """A small example with up to three of its names renamed to hostile ones and maybe one
    dtype changed, through `verify --emitted` (g++ and the emulator): rejected at parse
    (exit 2, a located error), or emitted C++ that compiles and matches the interpreter
    (exit 0). Never a mismatch (1) or an internal error (3)."""
    rng = random.Random(f"{SEED}-emitted-{i}")
    base = rng.choice([p for p in EXAMPLES if p.stem in ("add", "softmax", "layernorm", "rmsnorm")])
    text = re.sub(r"(size \w+ = )(\d+)", lambda m: m.group(1) + "16", base.read_text())
    toks = _tokens(text)
    names = sorted({t for t in toks if t[:1].isalpha() and t not in IR_WORDS})
    for old_name in rng.sample(names, min(3, len(names))):
        new_name = rng.choice(ACCEPTABLE_NAMES)
        if new_name not in toks:
            toks = [new_name if t == old_name else t for t in toks]
    if rng.random() < 0.5:
        dts = [t for t in toks if t in DTYPE_WORDS]
        if dts:
            old_dt, new_dt = rng.choice(dts), rng.choice(DTYPE_WORDS)
            toks = [new_dt if t == old_dt else t for t in toks]
    k = tmp_path / "k.ir"
    k.write_text("".join(toks))
    args = ["verify", str(k), "--emitted", "--trials", "1", "--seed", str(rng.randrange(2**31))]
    if rng.random() < 0.5:
        args += ["--passes", "tile"]
    r = CliRunner().invoke(main, args)
    where = f"ASCX_CLI_FUZZ_SEED={SEED} emitted case {i}: ascx {' '.join(args)}\n{k.read_text()}\n{r.output}"
    assert r.exit_code in (0, 2), where
    assert "Traceback" not in r.output and "internal error" not in r.output, where
    if r.exit_code == 2:
        assert re.search(r":\d+:\d+: error: ", r.output), where
