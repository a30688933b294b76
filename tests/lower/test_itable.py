"""The vector instruction table (`transformer/lower/itable.py`) agrees with the emulator's
pricing classes (`vec_class_of` in ops.h, the cost tags `tm::vec` reads), names only
instructions the emulator implements, and has a row for every instruction the lowering
emits on the examples and the pattern files; pricing and the UB temp rule read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from transformer.driver import emit, load, resolve_target, transform
from transformer.lower import itable, temporaries
from transformer.lower.instr import Loop, Operand, VecOp
from transformer.lower.price import Pricer

ROOT = Path(__file__).resolve().parents[2]
EMU = ROOT / "transformer" / "emulator" / "include" / "ascx_emu"


def _emulator_class() -> "callable":  # type: ignore[valid-type]
    """The emulator's `vec_class_of`, read from ops.h: its transcendental list and its
    Reduce / WholeReduce / Cast rules."""
    text = (EMU / "ops.h").read_text()
    body = text[text.index("inline int vec_class_of("):]
    body = body[:body.index("\n}\n")]
    transc = re.findall(r'"(\w+)"', re.search(r"transc\[\] = \{([^}]*)\}", body).group(1))  # type: ignore[union-attr]
    prefixes = re.findall(r'std::strncmp\(op, "(\w+)", \d+\) == 0', body)
    exact_cast = re.findall(r'std::strcmp\(op, "(\w+)"\) == 0\) return ascx_emu::tm::VC_CAST', body)
    assert transc and prefixes and exact_cast, "ops.h's vec_class_of changed shape: update this reader"

    def cls(op: str) -> str:
        if op in transc:
            return "transc"
        if any(op.startswith(p) for p in prefixes):
            return "reduce"
        if op in exact_cast:
            return "cast"
        return "simple"
    return cls


def test_pricing_classes_are_the_emulators() -> None:
    cls = _emulator_class()
    wrong = {n: (i.cost, cls(n)) for n, i in itable.TABLE.items() if i.cost != cls(n)}
    assert not wrong, f"table class vs emulator class: {wrong}"
    assert all(i.cost in itable.COSTS for i in itable.TABLE.values())


def test_every_row_is_an_instruction_the_emulator_implements() -> None:
    headers = "\n".join(p.read_text() for p in EMU.glob("*.h"))
    # a function definition (`inline void Add(`, `void Exp(`) or a row of a macro list (`(Add, ...`)
    missing = [n for n in itable.TABLE
               if not re.search(rf"(inline|void)\s+[^;(]*\b{n}\s*\(", headers) and not re.search(rf"\(\s*{n}\s*,", headers)]
    assert not missing, missing


def _ops(items, out: set[str]) -> None:  # type: ignore[no-untyped-def]
    for p in items:
        if isinstance(p.item, VecOp):
            out.add(p.item.op)
        if isinstance(p.item, Loop):
            _ops(p.item.body, out)


CASES = [("examples/softmax.ir", "fuse,tile,double_buffer", {}), ("examples/attention.ir", "tile", {"S": 128, "D": 16}),
         ("examples/attention.ir", "fuse,online_softmax{block=64},tile{attn.i=64},double_buffer", {"S": 128, "D": 16}),
         ("examples/conv2d.ir", "layout{X=NHWC},tile,double_buffer", {"N": 1, "C": 2, "H": 6, "W": 5, "F": 3}),
         ("examples/layernorm.ir", "fuse,tile,double_buffer", {}), ("examples/rmsnorm.ir", "fuse,tile,double_buffer", {}),
         ("examples/dwconv3x3.ir", "tile,double_buffer", {"N": 1, "C": 2}), ("examples/maxpool.ir", "tile,double_buffer", {"N": 1})]


def test_every_emitted_instruction_has_a_row() -> None:
    t = resolve_target(None)
    seen: set[str] = set()
    for f, p, sz in CASES:
        k, _ = transform(load(str(ROOT / f), sz).kernel, p, t)
        plan = emit(k, t).plan
        assert plan is not None
        for n in plan.nests:
            _ops(n.plan, seen)
    assert len(seen) >= 10
    assert seen <= set(itable.TABLE), sorted(seen - set(itable.TABLE))


@pytest.mark.parametrize("op,extra", [("Exp", "transc"), ("Add", ""), ("ReduceSum", "reduce"), ("Cast", "cast")])
def test_the_price_follows_the_table_class(op: str, extra: str) -> None:
    pr = Pricer(resolve_target(None))
    o = Operand("x", "f32")
    c = pr.vec(VecOp(op, o, (o,), None, 256))  # 1024 B: 4 repeats
    base = pr.instr + 4 * pr.repeat
    want = base + {"transc": 4 * pr.transc, "reduce": pr.reduce, "cast": pr.cast, "": 0.0}[extra]
    assert c == pytest.approx(want)


def test_the_temp_area_rule_reads_the_table() -> None:
    assert temporaries.API_TEMP_INSTRUCTIONS == {n for n, i in itable.TABLE.items() if i.api_temp}
    assert temporaries.needs_api_temp(["Add", "Select"]) and not temporaries.needs_api_temp(["Add", "Exp"])


def test_type_selection_reads_the_integer_rows() -> None:
    """The i32 operations type selection vectorises are those whose instruction's row takes
    int32_t; Div's does not, and the reason quotes its row."""
    from transformer.lower import vec_types

    assert set(vec_types.INT_OPS) == {"+", "-", "*", "max", "min", "neg"}
    assert all("i32" in itable.TABLE[vec_types.ARITH_API[op]].dtypes for op in vec_types.INT_OPS)
    assert vec_types.arith_reason("+", "i32") is None
    assert vec_types.arith_reason("/", "i32") == "integer division in i32 (Div takes half/float)"
