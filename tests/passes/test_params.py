"""Typed parameter kinds (`passes/params.py`): every kind round-trips text <-> value, a bad
item is a located `BadPipelineParameter` with its fields, every registered pass's
`params_doc` comes from its schema, and every instance a pass's `space()` offers is a value
of its kinds (its loops and tensors in the kernel) and round-trips through its text."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

import pytest

from passes.base import Pass, PipelineError, parse_pipeline, registry, run_pipeline, split_pipeline
from passes.params import (
    Arg,
    Bool,
    Dtype,
    Entry,
    Int,
    IntOrFull,
    Keywords,
    LayoutName,
    Loop,
    LoopTensor,
    Map,
    Name,
    Names,
    NoParams,
    ParamFail,
    Tensor,
)
from passes_testutil import SMALL_SIZES, example
from transformer import ir
from transformer.diagnostics import BadParameter, BadPipelineParameter, PassError

# --------------------------------------------------------------------------------------
# kinds: text -> value -> text

KIND_CASES = [
    (Loop(), ["qk", "qk.j", "t.k", "a_1.b2"], ["", "1x", "qk..j", "qk.j=", "a-b"]),
    (Tensor(), ["K", "s_ub_3"], ["", "x.y", "9"]),
    (Name(), ["gemm", "_x"], ["a.b", ""]),
    (Int(1), ["1", "64", "4096"], ["0", "-3", "x", "6.5", ""]),
    (Int(None), ["-3", "0", "7"], ["seven"]),
    (IntOrFull(minimum=2, full_value=0), ["full", "2", "16"], ["1", "0", "four", "Full"]),
    (Bool(), ["true", "false"], ["maybe", "2"]),
    (Dtype(open=False), ["f16", "bf16", "f32", "i8", "i32"], ["f8", "float"]),
    (LayoutName(open=False), ["ND", "NZ", "NCHW", "NHWC", "NC1HWC0"], ["nz", "NWHC"]),
    (LoopTensor(), ["pv.s", "t.k.A"], ["pv", ".s", "pv.", "pv.s.1"]),
]


@pytest.mark.parametrize("kind,good,bad", KIND_CASES, ids=[type(k).__name__ + str(i) for i, (k, _, _) in enumerate(KIND_CASES)])
def test_kind_round_trips_and_refuses(kind, good, bad) -> None:
    for text in good:
        value = kind.parse(text)
        assert kind.format(value) == text  # canonical text prints back as written
        assert kind.parse(kind.format(value)) == value
        assert kind.problem(value) is None
    for text in bad:
        with pytest.raises(ParamFail):
            kind.parse(text)


def test_kind_problems_of_values_not_from_text() -> None:
    assert Int(1).problem(0) and Int(1).problem("4") and Int(1).problem(True)
    assert IntOrFull(minimum=2).problem(1) and IntOrFull(minimum=2).problem(0) is None
    assert Loop().problem("a b") and Loop().problem("qk.i") is None
    assert Dtype().problem("f8") and Dtype().problem("f16") is None  # open to parse, closed to validate
    assert LayoutName().problem("XY")
    assert Bool().format(True) == "true" and Bool().parse("yes") is True
    assert Dtype().parse("f8") == "f8"  # open: the pass refuses it with the kernel (its legal alternatives)


def test_kinds_in_kernel() -> None:
    k = example("attention")
    assert Loop().in_kernel("pv", k) is None
    assert "no loop named `zz`" in Loop().in_kernel("zz", k)
    assert Tensor().in_kernel("s", k) is None and "no tensor named `q9`" in Tensor().in_kernel("q9", k)
    assert LoopTensor().in_kernel(("pv", "s"), k) is None
    assert LoopTensor().in_kernel(("pv", "nope"), k)


# --------------------------------------------------------------------------------------
# shapes: a throwaway pass per shape, round-tripping pipeline text


@dataclass(frozen=True)
class _Shape(Pass):
    name: ClassVar[str] = "shape_probe"
    loop: str = ""
    n: int = 0
    loops: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    flag: bool = False
    tensor: str = ""
    dtype: str = ""


def _probe(schema) -> type[Pass]:
    return type("Probe", (_Shape,), {"params": schema, "__annotations__": {}})


SHAPES = [
    (NoParams(), ["shape_probe"], ["shape_probe{x}"]),
    (Keywords({"loop": Loop(), "n": Int(2), "flag": Bool()}),
     ["shape_probe", "shape_probe{loop=qk.i}", "shape_probe{loop=qk,n=3,flag=true}"],
     ["shape_probe{n=1}", "shape_probe{loop}", "shape_probe{zz=1}", "shape_probe{n=2,n=3}"]),
    (Names("loops", Loop(), minimum=2), ["shape_probe{a,b}", "shape_probe{a.i,b.j,c}"],
     ["shape_probe{a}", "shape_probe{a,a}", "shape_probe{a=1,b}", "shape_probe"]),
    (Names(("loop", "tensor"), Loop(), optional=True), ["shape_probe", "shape_probe{a,b}"],
     ["shape_probe{a}", "shape_probe{a,b,c}"]),
    (Map("pairs", Tensor(), LayoutName(), minimum=1), ["shape_probe{A=NZ}", "shape_probe{A=NZ,X=NHWC}"],
     ["shape_probe", "shape_probe{A}", "shape_probe{A=NZ,A=ND}", "shape_probe{A.b=NZ}"]),
    (Map("pairs", Name(), Int(1), keys=("m", "n")), ["shape_probe", "shape_probe{m=16,n=32}"],
     ["shape_probe{m=16}", "shape_probe{m=16,q=2}", "shape_probe{m=0,n=2}"]),
    (Entry("loop", "n", Loop(), IntOrFull(minimum=2)), ["shape_probe{qk.k=4}", "shape_probe{qk.k=full}"],
     ["shape_probe", "shape_probe{qk.k}", "shape_probe{a=2,b=2}", "shape_probe{qk.k=1}"]),
    (Entry("loop", "n", Loop(), Int(1), bare=0), ["shape_probe{qk}", "shape_probe{qk=8}"], ["shape_probe{qk=0}"]),
    (Entry(("loop", "tensor"), "dtype", LoopTensor(), Dtype()), ["shape_probe{pv.s=f16}"],
     ["shape_probe{pv=f16}", "shape_probe{pv.s}"]),
]


@pytest.mark.parametrize("schema,good,bad", SHAPES, ids=[type(s[0]).__name__ + str(i) for i, s in enumerate(SHAPES)])
def test_shape_round_trips_and_refuses(schema, good, bad) -> None:
    cls = _probe(schema)
    for text in good:
        (name, args), = split_pipeline(text)
        p = cls.from_args(args)
        assert p.to_text() == text
        (_, args2), = split_pipeline(p.to_text())
        assert cls.from_args(args2) == p
        assert p.check_params() == []
    for text in bad:
        (name, args), = split_pipeline(text)
        with pytest.raises(BadPipelineParameter):
            cls.from_args(args)


def test_map_with_fixed_keys_prints_them_in_declared_order() -> None:
    cls = _probe(Map("pairs", Name(), Int(1), keys=("m", "n")))
    (_, args), = split_pipeline("shape_probe{n=32,m=16}")
    assert cls.from_args(args).to_text() == "shape_probe{m=16,n=32}"


def test_check_params_catches_values_not_of_their_kind() -> None:
    cls = _probe(Entry("loop", "n", Loop(), IntOrFull(minimum=2)))
    assert cls(loop="qk", n=1).check_params() != []
    assert cls(loop="not a loop", n=2).check_params() != []
    assert cls(loop="zz", n=2).check_params(example("matmul")) != []  # no such loop there
    assert cls(loop="mm.k", n=2).check_params(example("matmul")) == []
    names = _probe(Names("loops", Loop(), minimum=2))
    assert names(loops=("a",)).check_params() and names(loops=("a", "a")).check_params()


# --------------------------------------------------------------------------------------
# errors: class, fields, location


@pytest.mark.parametrize("pipeline,param,value,col", [
    ("unroll{mm.k=four}", "factor", "four", 13),
    ("fuse,unroll{mm.k=1}", "factor", "1", 18),
    ("unroll{mm.k}", "factor", None, 8),
    ("multicore{qk=0}", "cores", "0", 14),
    ("interchange{mm.i, mm.i}", "loops", "mm.i", 19),
    ("interchange{mm.i=2,mm.j}", "loops", "mm.i=2", 13),
    ("round_operand{pv=f16}", "loop", "pv", 15),
    ("layout{A=NZ,A=ND}", "layouts", "A", 13),
    ("gemm{m=64}", "blocks", None, 6),
    ("gemm{m=64,n=64,k=64,q=64}", "blocks", "q", 21),
    ("double_buffer{stages=1}", "stages", "1", 22),
    ("online_softmax{blok=32}", "blok", "32", 16),
    ("flash_attention{qq=64}", "qq", "64", 17),
])
def test_bad_item_is_a_located_bad_parameter(pipeline: str, param: str, value, col: int) -> None:
    with pytest.raises(BadPipelineParameter) as info:
        parse_pipeline(pipeline)
    err = info.value
    assert isinstance(err, BadParameter) and isinstance(err, PassError) and isinstance(err, PipelineError)
    assert err.param == param and err.value == value
    assert err.loc == ir.Loc(1, col), err.render()
    assert err.pass_name == pipeline.split("{")[0].split(",")[-1]
    assert err.message.startswith(f"{err.pass_name}: ")
    assert err.hint


def test_choice_refusal_lists_the_accepted_names() -> None:
    cls = _probe(Map("pairs", Tensor(), LayoutName(open=False)))
    (_, args), = split_pipeline("shape_probe{A=nz}")
    with pytest.raises(BadPipelineParameter) as info:
        cls.from_args(args)
    assert info.value.accepted == ir.LAYOUTS and info.value.loc == ir.Loc(1, 15)
    assert "did you mean `NZ`" in info.value.hint


def test_caret_renders_under_the_item_in_the_cli() -> None:
    from passes_testutil import EXAMPLES, cli

    r = cli("transform", str(EXAMPLES / "matmul.ir"), "--passes", "fuse, unroll{mm.k=four}")
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("--passes:1:19: error: unroll: the value of `mm.k` must be an integer >= 2 or `full`")
    assert lines[2].index("^") - 2 == 18 and "Traceback" not in r.stderr


def test_split_pipeline_records_columns() -> None:
    (_, args), = split_pipeline("  tile{ qk.i = 64 ,qk.j=128}")
    assert [(a.key_col, a.value_col) for a in args] == [(9, 16), (20, 25)]
    assert args == [("qk.i", "64"), ("qk.j", "128")] and isinstance(args[0], Arg)


# --------------------------------------------------------------------------------------
# every registered pass

# passes still hand-parsing their `{...}`: none (tile, split, stage and fission declare `params`)
HAND_PARSED: set[str] = set()



def test_params_doc_is_generated_from_the_schema() -> None:
    for name, cls in registry().items():
        if name in HAND_PARSED:
            continue
        assert cls.params_doc == cls.schema().doc(), name
        assert cls.params_doc, name
        if cls.params is not None:
            assert cls.params.example == "" or f"{{{cls.params.example}}}" in cls.params_doc


def test_no_pass_hand_parses_its_parameters() -> None:
    hand = {name for name, cls in registry().items()
            if cls.__module__.startswith("passes.") and ("from_args" in vars(cls) or "to_text" in vars(cls))}
    assert hand == HAND_PARSED
    for name, cls in registry().items():
        if cls.__module__.startswith("passes.") and name not in HAND_PARSED:
            assert "params" in vars(cls), f"{name} declares no parameter schema"


def test_a_pass_without_schema_gets_keywords_from_its_fields() -> None:
    @dataclass(frozen=True)
    class Plain(Pass):
        name: ClassVar[str] = "plain_probe"
        loop: str = ""
        times: int = 1
        fast: bool = False

    (_, args), = split_pipeline("plain_probe{loop=x,times=3,fast}")
    p = Plain.from_args(args)
    assert p == Plain("x", 3, True) and p.to_text() == "plain_probe{loop=x,times=3,fast=true}"
    assert Plain.schema().doc().startswith("{loop=TEXT,times=N,fast=BOOL}")


def _space_instances():
    """(example, kernel, instance) for every instance of every pass's space() on every
    example, and on each example after one legal pass drawn at random (more shapes:
    fused, tiled, staged kernels)."""
    rng = random.Random(0x5eed)
    reg = registry()
    out = []
    for ex in sorted(SMALL_SIZES):
        kernels = [example(ex)]
        first = [p for cls in reg.values() for p in cls.space(kernels[0], None)]
        if first:
            try:
                kernels.append(rng.choice(first).apply(kernels[0]))
            except PassError:
                pass
        for k in kernels:
            for cls in reg.values():
                out += [(ex, k, p) for p in cls.space(k, None)]
    return out


def test_every_space_instance_validates_and_round_trips() -> None:
    seen = set()
    for ex, k, p in _space_instances():
        seen.add(p.name)
        if p.name not in HAND_PARSED:
            assert p.check_params(k) == [], f"{ex}: {p!r}"
        assert parse_pipeline(p.to_text()) == [p], f"{ex}: `{p.to_text()}`"
    assert len(seen) >= 8, seen  # most passes offer something on the examples


def test_run_pipeline_accepts_what_it_prints() -> None:
    k = example("attention")
    out, trace = run_pipeline(k, "round_operand{pv.s=f16},unroll{qk.k=full}")
    assert [t.pass_text for t in trace] == ["round_operand{pv.s=f16}", "unroll{qk.k=full}"]
