"""User names never break or change emitted C++ (docs/codegen.md, "Names").

A kernel's names are kept verbatim unless they are C++ names the emitted code or its
headers use (macros included), which are renamed; every identifier the generator invents
is fresh. Names C++ itself reserves (keywords, `__`, `_X`) and names over 128 characters
are rejected at parse with a located error. The property test draws kernels whose names
come from a hostile set (C++ keywords and standard macros, Ascend C API names, every
pattern the generator produces, very long names): each is rejected at parse, or its
emitted C++ compiles and computes what the interpreter computes.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer.check import CPP_KEYWORDS, IR_KEYWORDS, MAX_NAME_LENGTH
from transformer.check import RESERVED as IR_RESERVED
from transformer.codegen import build_and_run, emit_ascendc
from transformer.diagnostics import AscxError
from transformer.interp import random_inputs, run
from transformer.lower.cexpr import MACROS, RESERVED

from .conftest import apply, kernel_text

# What the code generator writes itself, for a tensor `x`, a loop `i`, a phase `loop0`, ...
GENERATED = ["xGm", "xLocal", "inQueue_x", "outQueue_x", "que_x", "buf_x", "xBytes", "tmp0", "tmpBuf0",
             "ProcessLoop0", "ProcessEw", "CopyInEw", "ComputeEw", "CopyOutEw", "CopyIn2", "KernelK", "KernelAdd",
             "ascx_c0", "ascx_c1", "ascx_kb", "mmadParams", "fixParams", "iEnd", "workspaceBytes", "x_ub", "Y_ub",
             "k_kernel", "ascx_cvt_", "EOF_", "op", "pipe", "workerIdx", "dir", "status"]
STANDARD_MACROS = ["EOF", "M_PI", "NULL", "errno", "stdin", "stdout", "stderr", "INT32_MAX", "INFINITY", "NAN",
                   "BUFSIZ", "CHAR_BIT", "RAND_MAX", "EXIT_FAILURE", "FLT_MAX", "offsetof", "va_arg", "alloca",
                   "ASCEND_IS_AIV", "ICPU_RUN_KF"]
C_LIBRARY = ["exp", "abs", "printf", "malloc", "sqrt", "y0", "j1", "index", "time", "clock", "div", "FILE",
             "size_t", "main", "exit", "signal", "remove", "rename", "log", "round"]
HOSTILE = sorted(set(GENERATED + STANDARD_MACROS + C_LIBRARY + sorted(RESERVED - MACROS)) - CPP_KEYWORDS)
ACCEPTED = [n for n in HOSTILE if n not in IR_RESERVED and n not in IR_KEYWORDS]  # the parser takes these


def _sum_kernel(kname: str, names: list[str]) -> str:
    """Inputs named `names` (the last is the output), summed elementwise, plus a size and
    a const taking the first names too, and a loop variable taking another."""
    *ins, out = names
    size, const, var = "n_" + kname, "c_" + kname, "i_" + kname
    expr = " + ".join(f"{n}[{var}]" for n in ins) or "0.0"
    return (f"kernel {kname}({', '.join(f'{n}: f32[{size}]' for n in ins)}) -> ({out}: f32[{size}]) {{\n"
            f"  size {size} = 8\n  const {const}: f32 = -inf\n"
            f"  for {var} in 0..{size} {{\n    {out}[{var}] = max({expr}, {const})\n  }}\n}}\n")


def _same(k, em=None) -> None:  # type: ignore[no-untyped-def]
    inputs = random_inputs(k, np.random.default_rng(0))
    want = run(k, inputs)
    got = build_and_run(k, None, inputs, emitted=em)
    for name, v in want.items():
        np.testing.assert_array_equal(got[name], v, err_msg=name)


def test_names_starting_with_ascx_do_not_hang() -> None:
    """`Names` appended `_` while a name started with `ascx_`: `ascx emit` never ended."""
    k = kernel_text("""
kernel k(ascx_cvt: f32[4], ascx_c0: f32[4]) -> (ascx_: f32[4]) {
  for i in 0..4 {
    ascx_[i] = ascx_cvt[i] + ascx_c0[i]
  }
}
""")
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(emit_ascendc(k)), daemon=True)
    t.start()
    t.join(timeout=60)
    assert result, "emit did not finish within 60 s"
    src = result[0].source  # type: ignore[attr-defined]
    assert "GM_ADDR ascx_cvt_," in src and "GM_ADDR ascx_c0_," in src


@pytest.mark.slow
def test_user_names_equal_to_generated_and_predefined_names_compile() -> None:
    """`x` and `xGm` in one kernel (`xGm` is also generated for `x`), a const named `M_PI`,
    an input named `EOF`: g++ rejected the emitted C++ (exit 3)."""
    k = kernel_text("""
kernel k(x: f32[N], xGm: f32[N], EOF: f32[N]) -> (y: f32[N]) {
  size N = 8
  const M_PI: f32 = 3.0
  for i in 0..N {
    y[i] = x[i] + xGm[i] * M_PI - EOF[i]
  }
}
""")
    _same(k)


@pytest.mark.slow
def test_negative_infinite_const_is_declared_before_use() -> None:
    """`const lo: f32 = -inf` then `max(x[i], lo)` used `ascx_inf` before its declaration."""
    _same(kernel_text("""
kernel k(x: f32[8]) -> (y: f32[8]) {
  const lo: f32 = -inf
  for i in 0..8 {
    y[i] = max(x[i], lo)
  }
}
"""))


def test_a_5000_character_name_is_a_located_parse_error() -> None:
    """A 5,000-character tensor name made `verify --emitted` fail with `OSError: File name
    too long` (the harness reads `<name>.bin`)."""
    long = "t" * 5000
    with pytest.raises(AscxError) as e:
        kernel_text(f"kernel k({long}: f32[4]) -> (y: f32[4]) {{\n  for i in 0..4 {{\n    y[i] = {long}[i]\n  }}\n}}\n")
    assert e.value.loc is not None and (e.value.loc.line, e.value.loc.col) == (1, 10)
    assert f"more than {MAX_NAME_LENGTH}" in str(e.value)


@pytest.mark.slow
def test_the_longest_name_runs_through_the_harness() -> None:
    long = "t" * MAX_NAME_LENGTH
    _same(kernel_text(f"kernel k({long}: f32[4]) -> (y: f32[4]) {{\n  for i in 0..4 {{\n    y[i] = {long}[i]\n  }}\n}}\n"))


@pytest.mark.parametrize("name", sorted(CPP_KEYWORDS)[:12] + ["a__b", "_Tp", "__x"])
def test_names_cpp_reserves_are_rejected_at_parse(name: str) -> None:
    with pytest.raises(AscxError) as e:
        kernel_text(f"kernel k({name}: f32[4]) -> (y: f32[4]) {{\n  for i in 0..4 {{\n    y[i] = {name}[i]\n  }}\n}}\n")
    assert e.value.loc is not None


@pytest.mark.slow
def test_every_hostile_name_at_once() -> None:
    """Every name of the hostile set, 60 per kernel, as inputs/outputs: one compile each."""
    chunk = 60
    for j in range(0, len(ACCEPTED), chunk):
        names = ACCEPTED[j:j + chunk]
        _same(kernel_text(_sum_kernel(f"k{j}", names)))


_NAMES = st.sampled_from(HOSTILE + list(CPP_KEYWORDS)[:5] + ["a" * MAX_NAME_LENGTH, "b" * (MAX_NAME_LENGTH + 1)])


@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_NAMES, min_size=7, max_size=7, unique=True))
def test_hostile_names_through_tile_and_double_buffer(names: list[str]) -> None:
    """The add kernel with hostile names for kernel, tensors, size, loop variable, label and
    const, through `tile,double_buffer` (locals, queues, staged methods): rejected at parse
    with a location, or emitted C++ that compiles and matches the interpreter."""
    kname, a, b, c, n, i, lbl = names
    text = (f"kernel {kname}({a}: f16[{n}], {b}: f16[{n}]) -> ({c}: f16[{n}]) {{\n  size {n} = 2048\n"
            f"  {lbl}: for {i} in 0..{n} {{\n    {c}[{i}] = {a}[{i}] + {b}[{i}]\n  }}\n}}\n")
    try:
        k = kernel_text(text)
    except AscxError as e:
        assert e.loc is not None, f"rejected without a location: {e}"
        return
    _same(apply(k, "tile,double_buffer"))
