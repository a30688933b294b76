"""The IR language, construct by construct (shared/design/ir.md and docs/ir.md).

Each test reads like a line of the spec: a small kernel text goes in, a few fields of the
IR that comes out are asserted. Errors have their own corpus (`test_bad_inputs.py`).
"""

from __future__ import annotations

import math

import pytest

from transformer import ir
from transformer.diagnostics import AscxError, ParseError, SemanticError
from transformer.dtypes import BOOL, WEAK_FLOAT, WEAK_INT, Ty, promote
from transformer.parser import parse
from transformer.printer import format_expr, print_kernel

I, F = ir.IntLit, ir.FloatLit
N, A, U, B, C = ir.Name, ir.Access, ir.Unary, ir.Binary, ir.Call


def kernel(body: str = "", decls: str = "", sig: str = "(X: f32[S, T]) -> (Y: f32[S, T])",
           sizes: str = "  size S = 8\n  size T = 4\n") -> ir.Kernel:
    return parse(f"kernel k{sig} {{\n{sizes}{decls}{body}}}\n", "t.ir")


def value(expr: str, decls: str = "") -> ir.Expr:
    """The IR of `expr` as the value of `Y[i, j] = expr` inside loops over i and j."""
    k = kernel(f"  for i in 0..S {{\n    for j in 0..T {{\n      Y[i, j] = {expr}\n    }}\n  }}\n",
               decls=decls + "  const c: f32 = 2.0\n  temp r: f32\n")
    stmt = k.body[0].body[0].body[0]
    assert isinstance(stmt, ir.Assign)
    return stmt.value


# --------------------------------------------------------------------------------------
# Declarations


class TestSignature:
    def test_kernel_name_inputs_outputs_in_order(self) -> None:
        k = kernel(sig="(Q: f16[S, T], M: bf16[S]) -> (O: f16[S, T], L: i32[S])")
        assert k.name == "k"
        assert [t.name for t in k.inputs] == ["Q", "M"]
        assert [t.name for t in k.outputs] == ["O", "L"]
        assert [t.kind for t in k.tensors()] == ["input", "input", "output", "output"]
        assert [t.dtype for t in k.tensors()] == ["f16", "bf16", "f16", "i32"]
        assert k.inputs[0].shape == (N("S"), N("T"))

    def test_all_storage_dtypes(self) -> None:
        k = kernel(sig="(a: f16[S], b: bf16[S], c: f32[S], d: i8[S], e: i32[S]) -> (o: f32)")
        assert tuple(t.dtype for t in k.inputs) == ir.DTYPES

    def test_empty_parameter_lists_and_trailing_comma(self) -> None:
        assert kernel(sig="() -> (o: f32)").inputs == ()
        k = kernel(sig="(X: f32[S],) -> (Y: f32[S],)")
        assert [t.name for t in k.tensors()] == ["X", "Y"]

    def test_layout_tag(self) -> None:
        k = kernel(sig="(X: f16[S, T, S, T] layout NCHW) -> (Y: f16[S, T] layout ND)")
        assert k.inputs[0].layout == "NCHW" and k.outputs[0].layout == "ND"
        assert kernel().inputs[0].layout is None

    def test_rank_zero_tensor_with_or_without_brackets(self) -> None:
        k = kernel(sig="(x: f32, y: f32[]) -> (o: f32)")
        assert [t.shape for t in k.inputs] == [(), ()]
        assert k.inputs[0].rank == 0

    def test_shapes_are_affine_in_sizes(self) -> None:
        k = kernel(sig="(X: f32[S + 2, 2 * T, S - 1, 3]) -> (o: f32)")
        assert k.inputs[0].shape == (B("+", N("S"), I(2)), B("*", I(2), N("T")), B("-", N("S"), I(1)), I(3))


class TestDeclarations:
    def test_size_default(self) -> None:
        k = kernel(sizes="  size S = 1024\n  size T = 64\n")
        assert k.sizes == (ir.SizeDecl("S", 1024), ir.SizeDecl("T", 64))
        assert k.size_values() == {"S": 1024, "T": 64}

    @pytest.mark.parametrize("text,dtype,val", [
        ("const scale: f32 = 0.125", "f32", 0.125),
        ("const eps: f32 = 1.0e-5", "f32", 1.0e-5),
        ("const big: f32 = 2.5E+10", "f32", 2.5e10),
        ("const lo: f32 = -inf", "f32", -math.inf),
        ("const hi: f16 = inf", "f16", math.inf),
        ("const neg: bf16 = -0.5", "bf16", -0.5),
        ("const two: f32 = 2", "f32", 2.0),
        ("const n: i32 = -7", "i32", -7),
        ("const z: i8 = 3", "i8", 3),
        ("const w: i32 = 4.0", "i32", 4),
    ])
    def test_const(self, text: str, dtype: str, val: float) -> None:
        c = kernel(decls=f"  {text}\n").consts[0]
        assert (c.dtype, c.value) == (dtype, val)
        # float dtypes hold Python floats, integer dtypes Python ints
        assert isinstance(c.value, float if dtype in ir.FLOAT_DTYPES else int)

    def test_temp_has_no_scope_local_has_one(self) -> None:
        k = kernel(decls="  temp s: f32[S, S]\n  local t: f16[16, T] @ub\n  local a: f16[16] @l0a\n")
        s, t, a = k.buffers
        assert (s.kind, s.scope) == ("temp", None)
        assert (t.kind, t.scope, t.shape) == ("local", "ub", (I(16), N("T")))
        assert a.scope == "l0a"
        assert k.tensor("t") is t

    @pytest.mark.parametrize("scope", ir.SCOPES)
    def test_every_scope(self, scope: str) -> None:
        assert kernel(decls=f"  local b: f32[4] @{scope}\n").buffers[0].scope == scope

    def test_buffers_keep_declaration_order(self) -> None:
        k = kernel(decls="  local a: f32[4] @ub\n  temp b: f32\n  local c: f32[4] @l1\n")
        assert [b.name for b in k.buffers] == ["a", "b", "c"]


# --------------------------------------------------------------------------------------
# Statements


class TestLoops:
    def test_half_open_range_and_body(self) -> None:
        k = kernel("  for i in 0..S {\n    Y[i, 0] = 1.0\n  }\n")
        loop = k.body[0]
        assert isinstance(loop, ir.For)
        assert (loop.var, loop.lo, loop.hi, loop.label) == ("i", I(0), N("S"), None)
        assert len(loop.body) == 1 and isinstance(loop.body[0], ir.Assign)

    def test_range_bounds_lex_as_ranges_not_floats(self) -> None:
        loop = kernel("  for i in 1..S { Y[i, 0] = 1.0 }\n").body[0]
        assert (loop.lo, loop.hi) == (I(1), N("S"))
        loop = kernel("  for i in 0..4 { Y[i, 0] = 1.0 }\n").body[0]
        assert (loop.lo, loop.hi) == (I(0), I(4))

    def test_affine_bounds_with_enclosing_variables_and_min(self) -> None:
        k = kernel("  for i in 0..S {\n    for j in i..min(i + 4, T) { Y[i, j] = 1.0 }\n  }\n")
        inner = k.body[0].body[0]
        assert inner.lo == N("i")
        assert inner.hi == C("min", (B("+", N("i"), I(4)), N("T")))

    def test_label(self) -> None:
        k = kernel("  qk: for i in 0..S {\n    inner: for j in 0..T { Y[i, j] = 1.0 }\n  }\n")
        assert k.body[0].label == "qk"
        assert k.body[0].body[0].label == "inner"

    def test_annotations_before_the_label(self) -> None:
        k = kernel("  @unroll(4)\n  @pipeline(stages=2)\n  @cores(24)\n"
                   "  qk: for i in 0..S { Y[i, 0] = 1.0 }\n")
        loop = k.body[0]
        assert [a.name for a in loop.annotations] == ["unroll", "pipeline", "cores"]
        assert loop.annotation("unroll").get("factor") == 4
        assert loop.annotation("pipeline").get("stages") == 2
        assert loop.annotation("cores").get("n") == 24
        assert loop.annotation("missing") is None

    def test_positional_and_keyword_annotation_arguments_are_the_same(self) -> None:
        a = kernel("  @unroll(8)\n  for i in 0..S { Y[i, 0] = 1.0 }\n").body[0].annotations[0]
        b = kernel("  @unroll(factor=8)\n  for i in 0..S { Y[i, 0] = 1.0 }\n").body[0].annotations[0]
        assert a == b == ir.Annotation("unroll", (("factor", 8),))

    def test_statements_need_no_separator(self) -> None:
        k = kernel("  for i in 0..S { Y[i, 0] = 1.0 Y[i, 1] = 2.0 for j in 0..T { Y[i, j] += 1.0 } }\n")
        assert [type(s).__name__ for s in k.body[0].body] == ["Assign", "Assign", "For"]

    def test_sibling_loops_may_reuse_a_variable(self) -> None:
        k = kernel("  a: for i in 0..S { Y[i, 0] = 1.0 }\n  b: for i in 0..S { Y[i, 1] = 1.0 }\n")
        assert [loop.var for loop in k.body] == ["i", "i"]


class TestAssignments:
    @pytest.mark.parametrize("op", ir.ASSIGN_OPS)
    def test_assignment_and_the_four_reductions(self, op: str) -> None:
        s = kernel(f"  for i in 0..S {{\n    Y[i, 0] {op} X[i, 0]\n  }}\n").body[0].body[0]
        assert s == ir.Assign(A("Y", (N("i"), I(0))), op, A("X", (N("i"), I(0))))

    def test_rank_zero_target_is_a_name(self) -> None:
        k = kernel("  acc = 0.0\n  for i in 0..S { acc += X[i, 0] }\n  Y[0, 0] = acc\n", decls="  temp acc: f32\n")
        assert k.body[0] == ir.Assign(N("acc"), "=", F(0.0))
        assert k.body[1].body[0].target == N("acc")
        assert k.body[2].value == N("acc")

    def test_top_level_statements_outside_loops(self) -> None:
        k = kernel("  Y[0, 0] = 1.0\n")
        assert isinstance(k.body[0], ir.Assign)


class TestCopies:
    def test_block_copy_with_slices(self) -> None:
        k = kernel("  for i0 in 0..2 {\n    copy t[0:4, 0:T] <- X[i0 * 4 : i0 * 4 + 4, 0:T]\n  }\n",
                   decls="  local t: f32[4, T] @ub\n")
        c = k.body[0].body[0]
        assert isinstance(c, ir.Copy)
        assert c.dst == ir.Region("t", (ir.Slice(I(0), I(4)), ir.Slice(I(0), N("T"))))
        lo = B("*", N("i0"), I(4))
        assert c.src == ir.Region("X", (ir.Slice(lo, B("+", lo, I(4))), ir.Slice(I(0), N("T"))))

    def test_single_index_dimension_and_min_tail(self) -> None:
        k = kernel("  for n in 0..S {\n    copy row[0:T] <- X[n, 0:min(T, 8)]\n  }\n",
                   decls="  local row: f32[T] @ub\n")
        c = k.body[0].body[0]
        assert c.src.dims[0] == N("n")
        assert c.src.dims[1] == ir.Slice(I(0), C("min", (N("T"), I(8))))


# --------------------------------------------------------------------------------------
# Expressions


class TestExpressions:
    def test_precedence_mul_over_add(self) -> None:
        assert value("X[i, j] + c * 2.0") == B("+", A("X", (N("i"), N("j"))), B("*", N("c"), F(2.0)))

    def test_left_associative(self) -> None:
        assert value("c - 1.0 - 2.0") == B("-", B("-", N("c"), F(1.0)), F(2.0))
        assert value("c / 2.0 * 3.0") == B("*", B("/", N("c"), F(2.0)), F(3.0))

    def test_parentheses(self) -> None:
        assert value("c - (1.0 - 2.0)") == B("-", N("c"), B("-", F(1.0), F(2.0)))
        assert value("(c + 1.0) * 2.0") == B("*", B("+", N("c"), F(1.0)), F(2.0))

    def test_unary_minus_binds_tighter_than_binary(self) -> None:
        assert value("-c * 2.0") == B("*", U("-", N("c")), F(2.0))
        assert value("c * -2.0") == B("*", N("c"), U("-", F(2.0)))
        assert value("- -c") == U("-", U("-", N("c")))

    def test_literals(self) -> None:
        assert value("3") == I(3)
        assert value("0.5") == F(0.5)
        assert value("1.0e-5") == F(1.0e-5)
        assert value("6.5e4") == F(65000.0)
        assert value("inf") == F(math.inf)
        assert value("-inf") == U("-", F(math.inf))

    def test_sizes_consts_loop_variables_and_rank_zero_tensors_as_names(self) -> None:
        assert value("c * S + i + r") == B("+", B("+", B("*", N("c"), N("S")), N("i")), N("r"))

    @pytest.mark.parametrize("fn", sorted(ir.INTRINSICS))
    def test_intrinsics(self, fn: str) -> None:
        args = ", ".join(["X[i, j]"] * ir.INTRINSICS[fn])
        e = value(f"{fn}({args})")
        assert isinstance(e, ir.Call) and e.func == fn and len(e.args) == ir.INTRINSICS[fn]

    @pytest.mark.parametrize("dtype", ir.DTYPES)
    def test_casts_are_calls_named_by_dtype(self, dtype: str) -> None:
        assert value(f"f32({dtype}(c))") == C("f32", (C(dtype, (N("c"),)),))

    @pytest.mark.parametrize("op", ir.COMPARE_OPS)
    def test_select_with_each_comparison(self, op: str) -> None:
        e = value(f"select(j {op} i, X[i, j], -inf)")
        assert e == C("select", (B(op, N("j"), N("i")), A("X", (N("i"), N("j"))), U("-", F(math.inf))))

    def test_comparison_binds_loosest(self) -> None:
        e = value("select(j + 1 <= i * 2, c, 0.0)")
        assert e.args[0] == B("<=", B("+", N("j"), I(1)), B("*", N("i"), I(2)))

    def test_affine_indices(self) -> None:
        e = value("X[2 * i + 1 - S, j]", decls="")
        assert e.indices[0] == B("-", B("+", B("*", I(2), N("i")), I(1)), N("S"))

    def test_comments_are_ignored(self) -> None:
        k = kernel("  # a comment line\n  for i in 0..S { # trailing\n    Y[i, 0] = 1.0 # more\n  }\n")
        assert k == kernel("  for i in 0..S {\n    Y[i, 0] = 1.0\n  }\n")


# --------------------------------------------------------------------------------------
# Source locations, equality, checking


class TestLocations:
    def test_nodes_carry_line_and_column(self) -> None:
        k = parse("kernel k(X: f32[S]) -> (Y: f32[S]) {\n  size S = 4\n  lbl: for i in 0..S {\n"
                  "    Y[i] = X[i] * 2.0\n  }\n}\n", "t.ir")
        assert k.loc == ir.Loc(1, 8)
        assert k.inputs[0].loc == ir.Loc(1, 10)
        assert k.sizes[0].loc == ir.Loc(2, 8)
        loop = k.body[0]
        assert loop.loc == ir.Loc(3, 3)
        stmt = loop.body[0]
        assert stmt.loc == ir.Loc(4, 5)
        assert stmt.value.lhs.loc == ir.Loc(4, 12)

    def test_equality_ignores_locations(self) -> None:
        a = parse("kernel k() -> (o: f32) {\n  size S = 4\n}\n")
        b = parse("kernel   k()->(o:f32){ size S = 4 }")
        assert a == b and a.loc != b.loc
        assert hash(a) == hash(b)


class TestChecking:
    def test_parse_runs_the_checker_by_default(self) -> None:
        text = "kernel k() -> () {\n  size S = 0\n}\n"
        with pytest.raises(SemanticError):
            parse(text)
        assert parse(text, check=False).sizes[0].value == 0

    def test_syntax_errors_are_parse_errors(self) -> None:
        with pytest.raises(ParseError) as info:
            parse("kernel k( -> () {}", "x.ir")
        assert info.value.short().startswith("x.ir:1:")

    def test_errors_are_ascx_errors(self) -> None:
        assert issubclass(ParseError, AscxError) and issubclass(SemanticError, AscxError)

    @pytest.mark.parametrize("name", ["int", "class", "half", "f16", "select", "copy", "in", "__x"])
    def test_names_that_would_break_emitted_code_are_rejected(self, name: str) -> None:
        with pytest.raises(AscxError):
            parse(f"kernel k() -> () {{\n  temp {name}: f32[4]\n}}\n")

    def test_printer_output_parses_back(self) -> None:
        k = kernel("  @unroll(2)\n  a: for i in 0..S {\n    Y[i, 0] = select(i < 2, -X[i, 0], c) * (1.0 - c)\n  }\n",
                   decls="  const c: f32 = -1.5e-7\n")
        assert parse(print_kernel(k)) == k
        assert format_expr(k.body[0].body[0].value) == "select(i < 2, -X[i, 0], c) * (1.0 - c)"


# --------------------------------------------------------------------------------------
# Weak typing (transformer.dtypes.promote)


class TestPromotion:
    F16, BF16, F32, I8, I32 = Ty("f16"), Ty("bf16"), Ty("f32"), Ty("i8"), Ty("i32")

    def test_equal_types_stay(self) -> None:
        for t in (self.F16, self.BF16, self.F32, self.I8, self.I32):
            assert promote(t, t) == t

    def test_mixed_floats_promote_to_f32(self) -> None:
        assert promote(self.F16, self.F32) == self.F32
        assert promote(self.F32, self.BF16) == self.F32
        assert promote(self.F16, self.BF16) == self.F32

    def test_ints(self) -> None:
        assert promote(self.I8, self.I32) == self.I32
        assert promote(self.I8, self.I8) == self.I8
        assert promote(self.I32, self.F16) == self.F16  # int with float gives the float

    def test_weak_literals_take_the_other_operands_type(self) -> None:
        # `x * 2.0` keeps x's dtype; `mu[n] / H` is f32 when mu is
        assert promote(self.F16, WEAK_FLOAT) == self.F16
        assert promote(WEAK_FLOAT, self.BF16) == self.BF16
        assert promote(self.F32, WEAK_INT) == self.F32
        assert promote(self.I8, WEAK_INT) == self.I8

    def test_float_literal_with_int_tensor_computes_in_f32(self) -> None:
        assert promote(self.I32, WEAK_FLOAT) == self.F32
        assert promote(WEAK_FLOAT, self.I8) == self.F32

    def test_two_weak_operands_stay_weak(self) -> None:
        assert promote(WEAK_INT, WEAK_INT) == WEAK_INT
        assert promote(WEAK_INT, WEAK_FLOAT) == WEAK_FLOAT
        assert WEAK_FLOAT.dtype == "f32" and WEAK_INT.dtype == "i32"  # alone: f32, i32

    def test_promotion_is_symmetric(self) -> None:
        tys = [self.F16, self.BF16, self.F32, self.I8, self.I32, WEAK_INT, WEAK_FLOAT]
        for a in tys:
            for b in tys:
                assert promote(a, b) == promote(b, a), (a, b)

    def test_bool_is_only_a_comparison_type(self) -> None:
        assert BOOL.dtype == "bool" and "bool" not in ir.DTYPES


# --------------------------------------------------------------------------------------
# Kernel.with_sizes


class TestWithSizes:
    def test_overrides_named_sizes_only(self) -> None:
        k = kernel()
        k2 = k.with_sizes({"S": 256})
        assert k2.size_values() == {"S": 256, "T": 4}
        assert k.size_values() == {"S": 8, "T": 4}  # the original is unchanged
        assert k2.body == k.body and k2.inputs == k.inputs

    def test_unknown_size_is_a_key_error(self) -> None:
        with pytest.raises(KeyError):
            kernel().with_sizes({"Q": 3})

    def test_empty_override_is_identity(self) -> None:
        k = kernel()
        assert k.with_sizes({}) == k

    def test_round_trips_through_the_printer(self) -> None:
        k = kernel().with_sizes({"T": 12})
        assert "size T = 12" in print_kernel(k)
        assert parse(print_kernel(k)) == k
