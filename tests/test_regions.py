"""The shared IR-layer analyses: the one access walker (`transformer/walk.py`), the region
analysis (`transformer/regions.py`), the one names-used helper (`ir.names_used`) and the
one loop-naming rule (`transformer/loops.py`)."""

from __future__ import annotations

from transformer import ir, regions, walk
from transformer.deps import accesses, statements
from transformer.loops import loop_names, loop_names_by_path, name_of_loop, preferred_loop_names
from transformer.parser import parse

TILED = """
kernel t(A: f32[M, N], s: f32) -> (C: f32[M, N], R: f32[M]) {
  size M = 10
  size N = 8
  ew: for i0 in 0..3 {
    for i in 0..min(4, 10 - i0 * 4) {
      R[i0 * 4 + i] = 0.0
      for j in 0..N {
        C[i0 * 4 + i, j] = A[i0 * 4 + i, j] * s
        R[i0 * 4 + i] += C[i0 * 4 + i, j]
      }
    }
  }
}
"""


def test_uses_are_in_evaluation_order_with_rank0_tensors_and_targets() -> None:
    k = parse(TILED)
    red = next(s for s in ir.iter_stmts(k.body) if isinstance(s, ir.Assign) and s.op == "+=")
    us = walk.uses(red, {t.name for t in k.tensors()})
    assert [(u.tensor, u.write, u.target) for u in us] == [("C", False, False), ("R", False, True), ("R", True, True)]
    mul = next(s for s in ir.iter_stmts(k.body) if isinstance(s, ir.Assign) and isinstance(s.value, ir.Binary))
    # `s` is a rank-0 tensor only when the caller says which names are tensors
    assert [u.tensor for u in walk.uses(mul, {"A", "C", "s"})] == ["A", "s", "C"]
    assert [u.tensor for u in walk.uses(mul)] == ["A", "C"]
    copy = ir.Copy(ir.Region("C", (ir.Slice(ir.IntLit(0), ir.IntLit(4)), ir.IntLit(1))),
                   ir.Region("A", (ir.Slice(ir.IntLit(0), ir.IntLit(4)), ir.IntLit(1))))
    assert [(u.tensor, u.write, len(u.indices)) for u in walk.uses(copy)] == [("A", False, 2), ("C", True, 2)]


def test_dependence_analysis_reads_the_walker() -> None:
    """`deps.accesses` is the walker's list: reads first, the write last, reductions marked."""
    k = parse(TILED)
    infos = [a for st in statements(k) for a in accesses(k, st)]
    by_stmt = [[(a.tensor, a.write, a.reduction) for a in accesses(k, st)] for st in statements(k)]
    assert by_stmt[1] == [("A", False, None), ("s", False, None), ("C", True, None)]
    assert by_stmt[2] == [("C", False, None), ("R", False, "+="), ("R", True, "+=")]
    assert [a.position for a in infos[:3]] == [0, 0, 1]
    sites = walk.sites(k.body)
    assert [x.path for x in sites] == [st.path for st in statements(k)]
    assert [len(x.loops) for x in sites] == [2, 3, 3]


def test_box_of_a_tail_tile_and_covered_reads() -> None:
    k = parse(TILED)
    nest = k.body[0]
    assert isinstance(nest, ir.For)
    accs, in_copies, loops = regions.collect(nest)
    assert in_copies == set() and set(accs) == {"A", "C", "R"}
    sizes = k.size_values()
    (a,) = accs["A"]
    box = regions.box_of(a, (), sizes)  # per iteration of `i0`: rows i0*4 .. +4 (tail: 2), all N columns
    assert box is not None
    from transformer.printer import format_expr

    assert [(format_expr(lo), mx, moves) for lo, _, mx, moves in box.dims] == [("i0 * 4", 4, True), ("0", 8, True)]
    # the reads of C follow its dense write in the same iteration: no copy-in needed
    covered, dense = regions.reads_covered("C", accs["C"], (), sizes, loops)
    assert covered and dense
    # R is read (`+=`) after `R[..] = 0.0` over the same rows: covered too
    assert regions.reads_covered("R", accs["R"], (), sizes, loops)[0]
    merged = regions.merge([regions.box_of(x, (), sizes) for x in accs["C"]], sizes)  # type: ignore[misc]
    assert merged is not None and regions.contains(merged, box, sizes)


def test_slice_extents_shared_with_capacity_and_lowering() -> None:
    i0 = ir.Name("i0")
    tail = ir.Slice(ir.Binary("*", i0, ir.IntLit(4)),
                    ir.Call("min", (ir.Binary("+", ir.Binary("*", i0, ir.IntLit(4)), ir.IntLit(4)), ir.Name("M"))))
    full = ir.Slice(ir.Binary("*", i0, ir.IntLit(4)), ir.Binary("+", ir.Binary("*", i0, ir.IntLit(4)), ir.IntLit(4)))
    env = {"M": 10}
    assert regions.slice_extent(full, env) == 4 and regions.slice_extent(tail, env) is None
    assert regions.max_slice_extent(tail, env) == 4 and regions.slice_extent(ir.IntLit(3), env) == 1
    assert regions.max_slice_extent(ir.Slice(ir.IntLit(0), ir.Name("i0")), env) is None


def test_names_used_is_the_one_helper() -> None:
    """`ir.names_used` answers what the removed `tensors_in` / `accessed_tensors` did, and
    also sees names in indices and loop bounds."""
    k = parse(TILED)
    used = ir.names_used(k.body)
    assert {"A", "C", "R", "s", "i0", "i", "j", "N"} <= used
    import passes._rewrite as R
    import transformer.deps as deps

    assert not hasattr(R, "tensors_in") and not hasattr(deps, "accessed_tensors")
    assert walk.names_written(k.body) == {"C", "R"}  # and the one "names written" helper


def test_one_loop_naming_rule() -> None:
    """The label first, then the shortest name, ties alphabetical — the same answer by id,
    by path and for one path."""
    k = parse("""
kernel n(X: f32[A, B]) -> (Y: f32[A, B]) {
  size A = 4
  size B = 4
  outer: for i in 0..A {
    for j in 0..B { Y[i, j] = X[i, j] }
  }
  for i in 0..A {
    for k in 0..B { Y[i, k] += X[i, k] }
  }
}
""")
    names = loop_names(k)
    by_path = loop_names_by_path(k)
    by_id = preferred_loop_names(k)
    for ref in names.values():
        assert by_path[ref.path] == by_id[id(ref.loop)] == name_of_loop(k, ref.path)
    assert by_path[(0,)] == "outer" and by_path[(0, 0)] == "j" and by_path[(1, 0)] == "k"
    assert (1,) not in by_path  # the second `for i` has no unambiguous name


def test_trip_counts_are_one_function_for_passes_and_lowering() -> None:
    """`const_trip` and `affine_extent` (transformer/intexpr.py) serve the passes, the
    lowering's core split (`lower/spread.py`) and its vector selection alike."""
    import passes._rewrite as R
    from transformer import intexpr
    from transformer.lower import spread

    assert R.const_trip is intexpr.const_trip is spread.const_trip
    k = parse(TILED)
    outer = k.body[0]
    assert isinstance(outer, ir.For)
    (point,) = [s for s in outer.body if isinstance(s, ir.For)]
    assert intexpr.const_trip(outer, k.size_values()) == (0, 3)
    assert intexpr.const_trip(point, k.size_values()) is None  # `min(4, 10 - i0 * 4)`
    assert intexpr.affine_extent(ir.Binary("*", ir.Name("i0"), ir.IntLit(4)),
                                 ir.Binary("+", ir.Binary("*", ir.Name("i0"), ir.IntLit(4)), ir.IntLit(4)), {}) == 4
