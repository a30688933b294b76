"""A refusal's class and fields, not only its message: what a program (the tuner) reads to
know why a pass refused, without matching text (`transformer/diagnostics.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from passes.base import Pass, PassError, register, run_pipeline
from passes_testutil import example, kernel
from test_illegal import BACKWARD, SCAN, SEPARATED, STENCIL, TRI
from transformer import ir
from transformer.diagnostics import (
    AscxError,
    BadParameter,
    CapacityExceeded,
    DependenceViolation,
    InvalidResult,
    NotApplicable,
    NothingToDo,
    UnknownLoop,
)

# (id, kernel text or example name, pipeline, class, {field: expected value})
CASES = [
    ("interchange across a carried dependence", STENCIL, "interchange{wave.i,wave.j}", DependenceViolation,
     {"pass_name": "interchange", "loops": ("wave.i", "wave.j")}),
    ("fusion across a backward dependence", BACKWARD, "fuse{prod,cons}", DependenceViolation,
     {"pass_name": "fuse", "loops": ("prod", "cons")}),
    ("multicore on a dependent loop", SCAN, "multicore{pre}", DependenceViolation,
     {"pass_name": "multicore", "loops": ("pre",)}),
    ("interchange of a non-perfect nest", "matmul", "interchange{mm.i,mm.k}", NotApplicable,
     {"pass_name": "interchange"}),
    ("interchange of a triangular nest", TRI, "interchange{low.i,low.j}", NotApplicable,
     {"loops": ("low.i", "low.j")}),
    ("fusion of non-adjacent loops", SEPARATED, "fuse{a,b}", NotApplicable, {"loops": ("a", "b")}),
    ("unroll factor above trip", "matmul", "unroll{mm.k=64}", BadParameter,
     {"pass_name": "unroll", "param": "factor", "value": 64, "loops": ("mm.k",)}),
    ("multicore with more cores than iterations", "add", "multicore{ew=100}", BadParameter,
     {"param": "cores", "value": 100}),
    ("tile size above the extent", "add", "tile{ew.j=99}", BadParameter,
     {"pass_name": "tile", "param": "ew.j", "value": 99}),
    ("unknown loop", "matmul", "unroll{zz=2}", UnknownLoop, {"name": "zz", "candidates": (), "loops": ("zz",)}),
    # nothing staged: a no-op with a note, a refusal only under --strict (issue 9)
    ("double_buffer before tile", "add", "double_buffer", NothingToDo, {"pass_name": "double_buffer"}),
]


def _kernel(src: str) -> ir.Kernel:
    return example(src) if "\n" not in src else kernel(src)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refusal_class_and_fields(case) -> None:
    _, src, pipeline, cls, fields = case
    with pytest.raises(PassError) as info:
        run_pipeline(_kernel(src), pipeline, strict=True)
    err = info.value
    assert type(err) is cls, f"{type(err).__name__}: {err.render()}"
    assert isinstance(err, AscxError)
    for name, value in fields.items():
        assert getattr(err, name) == value, (name, getattr(err, name))


def test_dependence_violation_carries_the_dependence() -> None:
    with pytest.raises(DependenceViolation) as info:
        run_pipeline(kernel(STENCIL), "interchange{wave.i,wave.j}")
    dep = info.value.dependence
    assert dep is not None and "x" in dep.describe()


def test_ambiguous_loop_lists_candidates() -> None:
    with pytest.raises(UnknownLoop) as info:
        run_pipeline(example("attention"), "interchange{i,j}")
    assert info.value.name == "i" and len(info.value.candidates) == 5


def test_capacity_exceeded_names_scope_and_bytes() -> None:
    # a 4096 x 4096 f32 tile is 64 MiB: no scope holds it
    k = example("add", {"M": 4096, "N": 4096})
    with pytest.raises(CapacityExceeded) as info:
        run_pipeline(k, "tile{ew.i=4096,ew.j=4096}")
    err = info.value
    assert err.scope == "ub" and err.need_bytes > err.budget_bytes > 0
    assert str(err.budget_bytes) in err.message


@register
@dataclass(frozen=True)
class _Breaks(Pass):
    """A deliberately broken pass: writes to an input tensor (an IR invariant forbids it)."""

    name: ClassVar[str] = "test_breaks_invariant"
    summary: ClassVar[str] = "test double"

    def run(self, k: ir.Kernel, target: Any, trace: Any) -> ir.Kernel:
        loop = k.body[0]
        assert isinstance(loop, ir.For)
        inner = loop.body[0]
        assert isinstance(inner, ir.For)
        st = inner.body[0]
        assert isinstance(st, ir.Assign)
        assert isinstance(st.target, ir.Access)
        bad = ir.Assign(ir.Access(k.inputs[0].name, st.target.indices), st.op, st.value, loc=st.loc)
        return _replace_first_assign(k, bad)


def _replace_first_assign(k: ir.Kernel, new: ir.Assign) -> ir.Kernel:
    import dataclasses

    loop = k.body[0]
    inner = loop.body[0]
    return dataclasses.replace(k, body=(dataclasses.replace(loop, body=(dataclasses.replace(inner, body=(new,)),)),)
                               + k.body[1:])


def test_invalid_result_names_the_pass_and_the_invariant() -> None:
    with pytest.raises(InvalidResult) as info:
        run_pipeline(example("add"), [_Breaks()])
    err = info.value
    assert err.pass_name == "test_breaks_invariant"
    assert "input" in err.invariant and err.invariant in err.message
    assert "kernel add" in err.kernel_text


def test_other_error_families_are_ascx_errors() -> None:
    from transformer.capacity.errors import CapacityError, InvalidBufferError
    from transformer.targets import UnknownTargetError, get_target

    with pytest.raises(UnknownTargetError) as info:
        get_target("ascend000")
    assert isinstance(info.value, AscxError) and isinstance(info.value, LookupError)
    assert issubclass(InvalidBufferError, AscxError) and issubclass(CapacityError, AscxError)
