"""The numpy reference interpreter: the meaning of every kernel, before and after passes.

Semantics (shared/design/ir.md, "Meaning"):
- statements run in program order; arithmetic happens in the promoted type of its
  operands (`transformer.dtypes.promote`), f16 in numpy float16, bf16 as float32 values
  rounded to bfloat16 (round-to-nearest-even) after every operation;
- a store converts to the destination dtype with round-to-nearest-even (float -> int
  rounds half to even and saturates); reductions accumulate in the destination dtype;
- temps, locals and outputs start unwritten: reading an unwritten element is an
  `InterpError` at the reading access; indices out of bounds are errors at the access;
  an output element never written by the end of the kernel is an error too.

Speed: a loop runs *vectorised* — each statement of its body once over all iterations,
as numpy array operations — when that provably gives the same result as running the
iterations in order (`_vectorisable`): every tensor the body writes is either touched by
each iteration at its own elements (identical accesses with the loop variable in a
dimension), or only reduced into by a reassociable reduction (`max=`/`min=`, or `+=`/`*=`
into f32/int) and not otherwise read. Everything else runs as a Python loop. Large
iteration spaces are cut into chunks to bound memory.

Two fast paths keep it near numpy (`bench/bench_interp.py`):
- an f32 *contraction* (`acc[i, j] += f32(A[i, k]) * f32(B[k, j])` summed over vectorised
  loop variables) runs as one BLAS matrix product on its factors instead of broadcasting
  the product over the whole iteration space (`transformer.contraction`; the rule that
  allows it is in docs/ir.md: summation order is not part of the meaning, f16/bf16
  accumulators keep their rounding). Chunks are sized for what a statement materialises,
  so a matmul runs in one piece;
- an index that steps evenly along one vectorised variable of its own (`X[i, k + 1]`)
  reads and writes a strided view instead of gathering and scattering elements (for
  accesses of at least BASIC_MIN_ELEMENTS elements; smaller ones gather faster than the
  form is recognised).
Per-statement and per-loop decisions are cached, since a tiled kernel runs each statement
thousands of times on small blocks.

Size: why one module of ~950 lines: it is one evaluator (`_Interpreter`) whose statement, loop,
expression and fast-path cases share its caches and environment; split across modules they
would have to expose that state. The pieces that stand alone are already elsewhere
(`contraction.py`, `dtypes.py`, the access walker `walk.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Container, Mapping

import numpy as np

from . import ir
from .affine import eval_int, to_affine
from .contraction import blas_form, contract, contraction_factors, names_in, target_names
from .diagnostics import InterpError, UsageError
from .dtypes import BOOL, WEAK_FLOAT, WEAK_INT, Ty, float_of, promote
from .gathers import index_extents
from .intrinsics import BY_NAME as INTRINSIC, tolerance_for
from .walk import uses

NP_DTYPE: dict[str, Any] = {
    "f16": np.float16,
    "bf16": np.float32,  # bf16 values are held in float32, rounded to bf16
    "f32": np.float32,
    "i8": np.int8,
    "i32": np.int32,
    "bool": np.bool_,
}

# Elements in one vectorised evaluation before a loop is cut into chunks.
CHUNK_ELEMENTS = 1 << 22

F32 = Ty("f32")

# Accesses selecting at least this many elements are read as strided views when they can be
# (`_basic_index`); smaller ones are gathered.
BASIC_MIN_ELEMENTS = 1 << 13


def round_bf16(x: np.ndarray | float) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    # NaN must stay NaN (the rounding could carry into the exponent and make inf)
    return np.where(np.isnan(a), a, out).astype(np.float32)


def maximum(x: Any, y: Any) -> np.ndarray:
    """max(x, y): NaN propagates, and of two equal values (0.0 and -0.0) the first, so the
    sign of a zero does not depend on numpy's scalar or SIMD path (`ascx_max` does the same)."""
    x, y = np.asarray(x), np.asarray(y)
    return np.where((x != x) | (x >= y), x, y)


def minimum(x: Any, y: Any) -> np.ndarray:
    """min(x, y), the mirror of `maximum`."""
    x, y = np.asarray(x), np.asarray(y)
    return np.where((x != x) | (x <= y), x, y)


def int_divide(x: Any, y: Any, np_t: Any) -> np.ndarray:
    """Integer division as the IR defines it: truncating toward zero, `x / 0 == 0`, and
    wrapping in `np_t` (`-128 / -1` is -128 in i8). Exact for every int64 (no float)."""
    a, b = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    zero = b == 0
    bb = np.where(zero, 1, b)
    # |a| // |b| in uint64 (|INT64_MIN| does not fit int64), sign applied afterwards
    ua = np.where(a < 0, np.negative(a.astype(np.uint64)), a.astype(np.uint64))
    ub = np.where(bb < 0, np.negative(bb.astype(np.uint64)), bb.astype(np.uint64))
    q = ua // ub
    q = np.where((a < 0) != (bb < 0), np.negative(q), q)
    return np.where(zero, 0, q.astype(np.int64)).astype(np_t)


def convert(value: Any, dtype: str) -> np.ndarray:
    """Convert to a storage dtype with round-to-nearest-even (ints saturate)."""
    if dtype == "bf16":
        return round_bf16(np.asarray(value, dtype=np.float32))
    if dtype in ("i8", "i32"):
        info = np.iinfo(NP_DTYPE[dtype])
        v = np.asarray(value)
        if v.dtype.kind == "f":
            # in float64: float32(2147483647) is 2^31, which would wrap when cast to int32
            v = np.rint(v.astype(np.float64))
            v = np.nan_to_num(v, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(v, info.min, info.max).astype(NP_DTYPE[dtype])
    if dtype == "bool":
        return np.asarray(value, dtype=np.bool_)
    return np.asarray(value).astype(NP_DTYPE[dtype])


# --------------------------------------------------------------------------------------
# public API


def run(kernel: ir.Kernel, inputs: Mapping[str, np.ndarray], *, vectorise: bool = True) -> dict[str, np.ndarray]:
    """Interpret `kernel` on `inputs` (keyed by input name) and return its outputs.
    `vectorise=False` runs every loop iteration by iteration (slow; the tests use it as
    the oracle for the vectorisation criterion)."""
    with np.errstate(all="ignore"):
        return _Interpreter(kernel, inputs, vectorise=vectorise).run()


def random_inputs(kernel: ir.Kernel, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random inputs of the right shapes and dtypes: floats uniform in [-1, 1) (never all
    zeros), i8 in [-8, 8], i32 in [-100, 100]; a tensor read as an index (`ids` in
    `T[ids[t], h]`) in `0..n-1`, `n` the smallest extent it indexes (`gathers.index_extents`)."""
    check_footprint(kernel)
    sizes = kernel.size_values()
    index_n = index_extents(kernel)
    out: dict[str, np.ndarray] = {}
    for t in kernel.inputs:
        shape = tuple(eval_int(d, sizes) for d in t.shape)
        if t.name in index_n:
            v = rng.integers(0, max(1, min(index_n[t.name], 128 if t.dtype == "i8" else 1 << 31)), size=shape)
        elif t.dtype in ir.FLOAT_DTYPES:
            v = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        elif t.dtype == "i8":
            v = rng.integers(-8, 9, size=shape)
        else:
            v = rng.integers(-100, 101, size=shape)
        out[t.name] = convert(v, t.dtype)
    return out


DEFAULT_MAX_BYTES = 4 << 30
MAX_BYTES_ENV = "ASCX_INTERP_MAX_BYTES"


def footprint(kernel: ir.Kernel) -> int:
    """Bytes the interpreter holds for `kernel`'s tensors: each array, the written-mask of
    every non-input, and the float64 draw of the largest input (`random_inputs`)."""
    sizes = kernel.size_values()
    total, largest_input = 0, 0
    for t in kernel.tensors():
        n = math.prod(eval_int(d, sizes) for d in t.shape)
        total += n * (np.dtype(NP_DTYPE[t.dtype]).itemsize + (t.kind != "input"))
        if t.kind == "input":
            largest_input = max(largest_input, n * 8)
    return total + largest_input


def check_footprint(kernel: ir.Kernel) -> None:
    """Refuse, before allocating anything, a kernel whose tensors would not fit the
    interpreter's memory budget (4 GiB, or `ASCX_INTERP_MAX_BYTES`)."""
    import os

    try:
        limit = int(os.environ.get(MAX_BYTES_ENV, DEFAULT_MAX_BYTES))
    except ValueError:
        raise UsageError(f"{MAX_BYTES_ENV}={os.environ[MAX_BYTES_ENV]!r} is not a number of bytes") from None
    need = footprint(kernel)
    if need <= limit:
        return
    sizes = kernel.size_values()
    big = max(kernel.tensors(), key=lambda t: math.prod(eval_int(d, sizes) for d in t.shape)
              * np.dtype(NP_DTYPE[t.dtype]).itemsize)
    shape = [eval_int(d, sizes) for d in big.shape]
    raise UsageError(f"interpreting `{kernel.name}` needs {_human_bytes(need)} for its tensors "
                     f"(largest `{big.name}`: {big.dtype}{shape}), more than the limit of {_human_bytes(limit)}",
                     big.loc, hint=f"interpret at smaller sizes with --size, or raise {MAX_BYTES_ENV}")


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for comparing two computations of an output of this dtype that may
    differ in accumulation order and intermediate rounding. `compare_outputs` scales atol
    by the output's largest finite magnitude when that is below 1, so small-valued
    outputs (softmax rows of 1024 probabilities are ~1e-3) are not waved through."""
    return {
        "f32": (1e-4, 1e-5),
        "f16": (1e-2, 2e-3),
        "bf16": (4e-2, 1e-2),
        "i8": (0.0, 0.0),
        "i32": (0.0, 0.0),
    }[dtype]


def intrinsics_used(kernel: ir.Kernel) -> set[str]:
    """The functions the kernel calls."""
    return {e.func for s in ir.iter_stmts(kernel.body) for top in ir.stmt_exprs(s)
            for e in ir.sub_exprs(top) if isinstance(e, ir.Call)}


@dataclass(frozen=True)
class OutputDiff:
    name: str
    dtype: str
    max_abs: float
    max_rel: float
    ok: bool
    rtol: float
    atol: float
    worst_index: tuple[int, ...] | None = None

    def describe(self) -> str:
        status = "ok" if self.ok else "MISMATCH"
        where = f" at {list(self.worst_index)}" if self.worst_index is not None and not self.ok else ""
        return (f"{self.name} ({self.dtype}): max abs err {self.max_abs:.3g}, max rel err {self.max_rel:.3g} "
                f"(rtol {self.rtol:g}, atol {self.atol:g}) {status}{where}")


def compare_outputs(kernel: ir.Kernel, expected: Mapping[str, np.ndarray],
                    actual: Mapping[str, np.ndarray]) -> list[OutputDiff]:
    """Compare outputs elementwise: |a - e| <= atol + rtol * |e|; infinities must match
    exactly, NaN only matches NaN."""
    with np.errstate(all="ignore"):
        return _compare(kernel, expected, actual)


def _compare(kernel: ir.Kernel, expected: Mapping[str, np.ndarray],
             actual: Mapping[str, np.ndarray]) -> list[OutputDiff]:
    diffs = []
    used = intrinsics_used(kernel)
    for t in kernel.outputs:
        rtol, atol = tolerance(t.dtype)
        if t.dtype == "f32":  # a composed intrinsic's stated accuracy (intrinsics.py)
            rt, at = tolerance_for(used)
            rtol, atol = max(rtol, rt), max(atol, at)
        e = np.asarray(expected[t.name], dtype=np.float64)
        a = np.asarray(actual[t.name], dtype=np.float64)
        if e.shape != a.shape:
            diffs.append(OutputDiff(t.name, t.dtype, math.inf, math.inf, False, rtol, atol))
            continue
        finite = np.abs(e[np.isfinite(e)])
        scale = float(finite.max()) if finite.size else 0.0
        if 0.0 < scale < 1.0:
            atol *= scale
        both_nan = np.isnan(e) & np.isnan(a)
        same_inf = np.isinf(e) & (e == a)
        err = np.where(both_nan | same_inf, 0.0, np.abs(a - e))
        err = np.where(np.isnan(err), np.inf, err)
        rel = err / np.maximum(np.abs(np.where(np.isfinite(e), e, 1.0)), 1e-30)
        bad = err > atol + rtol * np.abs(np.where(np.isfinite(e), e, 0.0))
        worst = tuple(int(x) for x in np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), e.shape)) if e.size else None
        diffs.append(OutputDiff(
            t.name, t.dtype, float(err.max()) if err.size else 0.0, float(rel.max()) if rel.size else 0.0,
            not bool(bad.any()), rtol, atol, worst,
        ))
    return diffs


def load_inputs(kernel: ir.Kernel, path: str) -> dict[str, np.ndarray]:
    """Read an .npz of inputs, checking names, shapes and dtypes. Anything that is not
    an .npz of plain arrays (another file, a bare .npy, pickled objects, a damaged
    member) is a `UsageError`; pickled data is never loaded."""
    with _open_npz(path) as data:
        sizes = kernel.size_values()
        by_name = {t.name: t for t in kernel.inputs}
        out: dict[str, np.ndarray] = {}
        for key in data.files:
            if key not in by_name:
                from .diagnostics import did_you_mean

                raise UsageError(f"`{path}`: `{key}` is not an input of kernel `{kernel.name}`",
                                 hint=did_you_mean(key, by_name) or ("inputs: " + ", ".join(by_name)))
            t = by_name[key]
            arr = _npz_member(data, path, key)
            shape = tuple(eval_int(d, sizes) for d in t.shape)
            if arr.shape != shape:
                raise UsageError(f"`{path}`: input `{key}` has shape {list(arr.shape)}, kernel expects {list(shape)}",
                                 hint="a --size override may be missing or wrong")
            want = np.dtype(NP_DTYPE[t.dtype])
            if arr.dtype != want:
                raise UsageError(f"`{path}`: input `{key}` has dtype {arr.dtype}, kernel expects {t.dtype} ({want})",
                                 hint=f"convert it with .astype(np.{want})")
            if t.dtype == "bf16":
                arr = round_bf16(arr)
            out[key] = arr
    return out


_NPZ_HINT = "write inputs with np.savez(PATH, NAME=array, ...) (plain numeric arrays)"


def _open_npz(path: str) -> Any:
    import zipfile

    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise UsageError(f"cannot read inputs from `{path}`: {e.strerror}") from None
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise UsageError(f"`{path}` is not an .npz file (a zip of .npy arrays)", hint=_NPZ_HINT)
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise UsageError(f"cannot read inputs from `{path}`: {e}", hint=_NPZ_HINT) from None


def _npz_member(data: Any, path: str, key: str) -> np.ndarray:
    import zipfile

    try:
        arr = data[key]
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise UsageError(f"`{path}`: input `{key}` holds Python objects (pickled data), which ascx never loads",
                             hint=_NPZ_HINT) from None
        raise UsageError(f"`{path}`: cannot read input `{key}`: {e}", hint=_NPZ_HINT) from None
    except (OSError, EOFError, zipfile.BadZipFile, NotImplementedError) as e:
        raise UsageError(f"`{path}`: cannot read input `{key}`: {e}", hint=_NPZ_HINT) from None
    if not isinstance(arr, np.ndarray):
        raise UsageError(f"`{path}`: member `{key}` is not an .npy array", hint=_NPZ_HINT)
    return arr


# --------------------------------------------------------------------------------------
# the interpreter


class _Interpreter:
    def __init__(self, kernel: ir.Kernel, inputs: Mapping[str, np.ndarray], *, vectorise: bool = True) -> None:
        check_footprint(kernel)
        self.k = kernel
        self.vectorise = vectorise
        self.sizes = kernel.size_values()
        self.decls = {t.name: t for t in kernel.tensors()}
        self.arrays: dict[str, np.ndarray] = {}
        self.written: dict[str, np.ndarray] = {}
        for t in kernel.tensors():
            shape = tuple(eval_int(d, self.sizes) for d in t.shape)
            if t.kind == "input":
                if t.name not in inputs:
                    raise UsageError(f"missing input `{t.name}`")
                arr = np.asarray(inputs[t.name])
                if arr.shape != shape:
                    raise UsageError(f"input `{t.name}` has shape {list(arr.shape)}, kernel expects {list(shape)}")
                self.arrays[t.name] = convert(arr, t.dtype).copy()
            else:
                self.arrays[t.name] = np.zeros(shape, dtype=NP_DTYPE[t.dtype])
                self.written[t.name] = np.zeros(shape, dtype=bool)
        self.consts = {c.name: c for c in kernel.consts}
        # where the `select` arm being evaluated is chosen (a bool or a mask over the
        # vectorised axes); None outside every arm. Reads elsewhere are guarded: not checked,
        # their indices clamped (docs/ir.md, "Guarded reads")
        self.guard: Any = None
        self.loop_vars = tuple({st.var for st in ir.iter_stmts(kernel.body) if isinstance(st, ir.For)})
        self._plan: dict[int, bool] = {}
        self._factors: dict[int, tuple[tuple[ir.Expr, ...], tuple[frozenset[str], ...], frozenset[str]] | None] = {}
        self._terms: dict[int, tuple[list[tuple[frozenset[str], Any]], dict[str, int]]] = {}
        # per (statement or loop, vectorised variables): is it a BLAS contraction / the
        # variables of the arrays its body materialises (`_chunk_length`)
        self._forms: dict[tuple[int, frozenset[str]], Any] = {}

    def run(self) -> dict[str, np.ndarray]:
        self.exec_block(self.k.body, {}, ())
        out = {}
        for t in self.k.outputs:
            w = self.written[t.name]
            if not w.all():
                idx = [int(x) for x in np.argwhere(~w)[0]]
                raise InterpError(f"output `{t.name}` element {idx} is never written "
                                  f"({int((~w).sum())} of {w.size} elements unwritten)", t.loc)
            out[t.name] = self.arrays[t.name].copy()
        return out

    # ---- statements -------------------------------------------------------------------
    def exec_block(self, stmts: tuple[ir.Stmt, ...], env: dict[str, Any], axes: tuple[int, ...]) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign):
                self.exec_assign(s, env, axes)
            elif isinstance(s, ir.For):
                self.exec_for(s, env, axes)
            else:
                self.exec_copy(s, env)

    def exec_for(self, s: ir.For, env: dict[str, Any], axes: tuple[int, ...]) -> None:
        lo, hi = self.int_value(s.lo, env, s), self.int_value(s.hi, env, s)
        if hi <= lo:
            return
        if self._vectorisable(s) and hi - lo > 1:
            chunk = self._chunk_length(s, env)
            for start in range(lo, hi, chunk):
                stop = min(hi, start + chunk)
                arr = np.arange(start, stop, dtype=np.int64).reshape((stop - start,) + (1,) * len(axes))
                inner = dict(env)
                inner[s.var] = arr
                self.exec_block(s.body, inner, (stop - start,) + axes)
        else:
            inner = dict(env)
            for v in range(lo, hi):
                inner[s.var] = v
                self.exec_block(s.body, inner, axes)

    def int_value(self, e: ir.Expr, env: dict[str, Any], s: ir.Stmt) -> int:
        try:
            v = eval_int(e, {**self.sizes, **env})
        except (KeyError, ValueError) as err:  # pragma: no cover - the checker prevents it
            raise InterpError(f"cannot evaluate bound: {err}", s.loc) from None
        if isinstance(v, np.ndarray):  # pragma: no cover - _vectorisable prevents it
            raise AssertionError("loop bound depends on a vectorised variable")
        return int(v)

    def exec_assign(self, s: ir.Assign, env: dict[str, Any], axes: tuple[int, ...]) -> None:
        tgt = s.target
        name = tgt.tensor if isinstance(tgt, ir.Access) else tgt.name
        decl = self.decls[name]
        idx = self.indices(tgt, env, decl) if isinstance(tgt, ir.Access) else ()
        full = axes
        ndim = len(full)
        # Shape of the target positions over the vectorised axes.
        tshape = np.broadcast_shapes(*[np.shape(i) for i in idx]) if idx else ()
        tshape = (1,) * (ndim - len(tshape)) + tuple(tshape)
        reduce_axes = tuple(a for a in range(ndim) if tshape[a] == 1 and full[a] > 1)
        if reduce_axes and s.op == "+=":
            summed = self._contraction(s, env, full, frozenset(reduce_axes))
            if summed is not None:
                old = self.load(decl, idx, tgt)
                # a contraction is an f32 `+=` (`_contraction`): computed in f32
                self.store(decl, idx, self._combine(s.op, old, summed, decl.dtype, "f32"), tshape, s)
                return
        value, ty = self.eval(s.value, env)
        if s.op == "=":
            assert not reduce_axes, "plain store reduced over a vectorised axis"
            self.store(decl, idx, convert(value, decl.dtype), tshape, s)
            return
        old = self.load(decl, idx, tgt)
        if reduce_axes:
            v = np.broadcast_to(self._as_dtype(value, ty, decl.dtype), full)
            v = self._reduce(s.op, v, reduce_axes, decl.dtype)
        else:
            v = self._as_dtype(value, ty, decl.dtype)
        new = self._combine(s.op, old, v, decl.dtype, promote(Ty(decl.dtype), ty).dtype)
        self.store(decl, idx, new, tshape, s)

    def _contraction(self, s: ir.Assign, env: dict[str, Any], full: tuple[int, ...],
                     reduced: frozenset[int]) -> np.ndarray | None:
        """The sum over the `reduced` axes of an f32 contraction's value, as one matrix
        product (`transformer.contraction`); None when `s` is none (then its value is
        broadcast and summed). Its factors are evaluated in the order the whole value
        would be, so a read of an unwritten element fails at the same access."""
        plan = self._factors_of(s)
        if plan is None:
            return None
        factors, factor_names, tgt_names = plan
        vec = frozenset(n for n, v in env.items() if isinstance(v, np.ndarray))
        key = (id(s), vec)
        if key not in self._forms:
            self._forms[key] = blas_form([f & vec for f in factor_names], vec - tgt_names)
        if not self._forms[key]:
            return None
        values = [self.operand(*self.eval(f, env), F32) for f in factors]
        return contract(values, full, reduced)

    def _factors_of(self, s: ir.Assign) -> tuple[tuple[ir.Expr, ...], tuple[frozenset[str], ...], frozenset[str]] | None:
        key = id(s)
        if key not in self._factors:
            fs = contraction_factors(s, self.k, self.loop_vars) if self.vectorise else None
            self._factors[key] = None if fs is None else (fs, tuple(names_in(f) for f in fs), target_names(s))
        return self._factors[key]

    @staticmethod
    def _as_dtype(value: Any, ty: Ty, dtype: str) -> np.ndarray:
        """A reduction operand in the accumulator's computation type."""
        return convert(value, promote(Ty(dtype), ty).dtype)

    @staticmethod
    def _reduce(op: str, v: np.ndarray, axes: tuple[int, ...], dtype: str) -> np.ndarray:
        if op == "+=":
            r = np.sum(v, axis=axes, keepdims=True, dtype=v.dtype)
        elif op == "*=":
            r = np.prod(v, axis=axes, keepdims=True, dtype=v.dtype)
        elif op == "max=":
            r = np.max(v, axis=axes, keepdims=True)
        else:
            r = np.min(v, axis=axes, keepdims=True)
        return r

    @staticmethod
    def _combine(op: str, old: np.ndarray, v: np.ndarray, dtype: str, comp: str) -> np.ndarray:
        """`old op v` computed in `comp` (the promoted type of the destination and the value;
        `v` is already in it), rounded to `comp`, then stored into `dtype`."""
        comp_old = convert(old, comp)
        v = np.asarray(v)
        if op == "+=":
            r = comp_old + v
        elif op == "*=":
            r = comp_old * v
        elif op == "max=":
            r = maximum(comp_old, v)
        else:
            r = minimum(comp_old, v)
        return convert(convert(r, comp), dtype)

    def exec_copy(self, s: ir.Copy, env: dict[str, Any]) -> None:
        dst_decl, src_decl = self.decls[s.dst.tensor], self.decls[s.src.tensor]
        dsl, dshape = self.region(s.dst, env, dst_decl)
        ssl, sshape = self.region(s.src, env, src_decl)
        if dshape != sshape:
            raise InterpError(f"copy regions differ in shape: destination {dshape}, source {sshape}", s.loc)
        if src_decl.name in self.written:
            w = self.written[src_decl.name][ssl]
            if not w.all():
                bad = [int(x) for x in np.argwhere(~w)[0]]
                raise InterpError(f"copy reads an unwritten element of `{src_decl.name}` "
                                  f"(region offset {bad})", s.src.loc or s.loc)
        data = self.arrays[src_decl.name][ssl]
        self.arrays[dst_decl.name][dsl] = np.reshape(data, self.arrays[dst_decl.name][dsl].shape)
        self.written[dst_decl.name][dsl] = True

    def region(self, r: ir.Region, env: dict[str, Any], decl: ir.TensorDecl) -> tuple[tuple[Any, ...], list[int]]:
        shape = self.arrays[decl.name].shape
        sl: list[Any] = []
        ext: list[int] = []
        for d, (dim, n) in enumerate(zip(r.dims, shape)):
            if isinstance(dim, ir.Slice):
                lo = self.int_value(dim.lo, env, r)  # type: ignore[arg-type]
                hi = self.int_value(dim.hi, env, r)  # type: ignore[arg-type]
                if lo < 0 or hi > n or hi < lo:
                    raise InterpError(f"copy region {lo}:{hi} is out of bounds for dimension {d} of "
                                      f"`{decl.name}` (size {n})", r.loc)
                sl.append(slice(lo, hi))
                ext.append(hi - lo)
            else:
                i = self.int_value(dim, env, r)  # type: ignore[arg-type]
                if not 0 <= i < n:
                    raise InterpError(f"copy index {i} is out of bounds for dimension {d} of "
                                      f"`{decl.name}` (size {n})", r.loc)
                sl.append(i)
        return tuple(sl), ext

    # ---- memory -----------------------------------------------------------------------
    def indices(self, a: ir.Access, env: dict[str, Any], decl: ir.TensorDecl) -> tuple[Any, ...]:
        shape = self.arrays[decl.name].shape
        out = []
        for d, (e, n) in enumerate(zip(a.indices, shape)):
            if isinstance(e, ir.Access):  # a data-dependent index: the values an integer tensor holds
                out.append(self.index_read(e, env, a, d, n))
                continue
            v = self.index_value(e, env)
            if self.guard is not None:
                v = self.guarded_index(v, n, a, d, decl)
            if np.ndim(v) == 0:
                if not 0 <= int(v) < n:
                    raise InterpError(f"index {int(v)} is out of bounds for dimension {d} of `{decl.name}` "
                                      f"(size {n})", a.loc)
            else:
                lo, hi = int(np.min(v)), int(np.max(v))
                if lo < 0 or hi >= n:
                    raise InterpError(f"index {lo if lo < 0 else hi} is out of bounds for dimension {d} "
                                      f"of `{decl.name}` (size {n})", a.loc)
            out.append(v)
        return tuple(out)

    def guarded_index(self, v: Any, n: int, a: ir.Access, d: int, decl: ir.TensorDecl) -> Any:
        """Index values `v` of dimension `d` (extent `n`) of a read inside a `select` arm:
        one out of bounds where the arm is chosen is the usual error; elsewhere it is clamped
        into the tensor (the value read there is discarded by the select)."""
        bad = (np.asarray(v) < 0) | (np.asarray(v) >= n)
        if not np.any(bad):
            return v
        live = bad & np.asarray(self.guard, dtype=bool)
        if np.any(live):
            x = np.broadcast_to(np.asarray(v), np.shape(live))[tuple(np.argwhere(live)[0])] if np.ndim(live) else v
            raise InterpError(f"index {int(x)} is out of bounds for dimension {d} of `{decl.name}` (size {n})", a.loc)
        return np.clip(v, 0, n - 1)

    def index_read(self, r: ir.Access, env: dict[str, Any], a: ir.Access, d: int, n: int) -> Any:
        """The values of the index read `r` (`ids[t]`) used as index `d` of `a`, checked
        against the extent `n` of that dimension; an error names the element of the index
        tensor that holds the bad value (`index ids[5] = 40000 is out of bounds ...`)."""
        rdecl = self.decls[r.tensor]
        ridx = self.indices(r, env, rdecl)
        v = np.asarray(self.load(rdecl, ridx, r)).astype(np.int64)
        bad = (v < 0) | (v >= n)
        if self.guard is not None and np.any(bad):  # an unchosen select arm: clamp, do not check
            if not np.any(bad & np.asarray(self.guard, dtype=bool)):
                v = np.clip(v, 0, n - 1)
                bad = np.zeros_like(bad)
            else:
                bad = bad & np.asarray(self.guard, dtype=bool)
        if np.any(bad):
            pos = tuple(np.argwhere(bad)[0]) if np.ndim(v) else ()
            elem = [int(np.broadcast_to(i, np.shape(v))[pos]) for i in ridx]
            raise InterpError(f"index {r.tensor}[{', '.join(map(str, elem))}] = {int(v[pos])} is out of bounds for "
                              f"`{a.tensor}` dimension {d} (extent {n})", r.loc or a.loc,
                              hint=f"every value of `{r.tensor}` used to index `{a.tensor}` must be in 0..{n - 1}")
        return v if np.ndim(v) else int(v)

    def index_value(self, e: ir.Expr, env: dict[str, Any]) -> Any:
        if isinstance(e, ir.IntLit):
            return e.value
        if isinstance(e, ir.Name):
            if e.name in env:
                return env[e.name]
            return self.sizes[e.name]
        if isinstance(e, ir.Binary):
            a, b = self.index_value(e.lhs, env), self.index_value(e.rhs, env)
            if e.op in ("/", "%"):  # quasi-affine: floor division, remainder in 0..b-1 (b > 0, checked)
                return a // b if e.op == "/" else a % b
            return a + b if e.op == "+" else a - b if e.op == "-" else a * b
        if isinstance(e, ir.Unary):
            return -self.index_value(e.operand, env)
        if isinstance(e, ir.Call):
            vals = [self.index_value(x, env) for x in e.args]
            return np.minimum(*vals) if e.func == "min" else np.maximum(*vals)
        raise AssertionError(type(e))

    def load(self, decl: ir.TensorDecl, idx: tuple[Any, ...], node: Any) -> np.ndarray:
        name = decl.name
        basic = _basic_index(idx)
        if basic is not None and (name not in self.written or self.written[name][basic[0]].all()):
            sl, perm, shape = basic
            return self.arrays[name][sl].transpose(perm).reshape(shape)
        if name in self.written:
            w = self.written[name][idx] if idx else self.written[name]
            if not np.all(w) and self.guard is not None:  # an unchosen select arm reads nothing
                w = np.logical_or(w, np.logical_not(self.guard))
            if not np.all(w):
                if np.ndim(w):
                    first = np.argwhere(~np.broadcast_to(w, np.shape(w)))[0]
                    elem = [int(np.broadcast_to(i, np.shape(w))[tuple(first)]) for i in idx]
                else:
                    elem = [int(i) for i in idx]
                raise InterpError(f"read of unwritten element {elem} of {decl.kind} `{name}`",
                                  getattr(node, "loc", None),
                                  hint="every element must be written before it is read")
        return self.arrays[name][idx] if idx else self.arrays[name][()]

    def store(self, decl: ir.TensorDecl, idx: tuple[Any, ...], value: np.ndarray, tshape: tuple[int, ...],
              s: ir.Assign) -> None:
        name = decl.name
        basic = _basic_index(idx)
        if basic is not None:
            sl, perm, shape = basic
            v = np.asarray(value)
            full = np.broadcast_shapes(shape, v.shape)
            if math.prod(full) == math.prod(shape):  # the value varies only where the target does
                view = self.arrays[name][sl]
                order = [view.shape[k] for k in perm]
                self.arrays[name][sl] = np.broadcast_to(v, full).reshape(order).transpose(np.argsort(perm))
                self.written[name][sl] = True
                return
        if idx:
            bidx = np.broadcast_arrays(*[np.asarray(i) for i in idx])
            full = np.broadcast_shapes(bidx[0].shape, np.shape(value))
            if full != bidx[0].shape:
                bidx = [np.broadcast_to(i, full) for i in bidx]
            self.arrays[name][tuple(bidx)] = np.broadcast_to(value, bidx[0].shape)
            self.written[name][tuple(bidx)] = True
        else:
            v = np.asarray(value)
            self.arrays[name][()] = v.reshape(-1)[0] if v.size else v
            self.written[name][()] = True

    # ---- expressions ------------------------------------------------------------------
    def eval(self, e: ir.Expr, env: dict[str, Any]) -> tuple[Any, Ty]:
        if isinstance(e, ir.IntLit):
            return e.value, WEAK_INT
        if isinstance(e, ir.FloatLit):
            return np.float32(e.value), WEAK_FLOAT  # a float literal is an f32 value (C++ `1.5f`)
        if isinstance(e, ir.Name):
            if e.name in env:
                return env[e.name], WEAK_INT
            if e.name in self.sizes:
                return self.sizes[e.name], WEAK_INT
            if e.name in self.consts:
                c = self.consts[e.name]
                return convert(c.value, c.dtype)[()], Ty(c.dtype)
            decl = self.decls[e.name]
            return self.load(decl, (), e), Ty(decl.dtype)
        if isinstance(e, ir.Access):
            decl = self.decls[e.tensor]
            return self.load(decl, self.indices(e, env, decl), e), Ty(decl.dtype)
        if isinstance(e, ir.Unary):
            v, t = self.eval(e.operand, env)
            return self.materialise(-np.asarray(v), t), t
        if isinstance(e, ir.Binary):
            return self.binary(e, env)
        if isinstance(e, ir.Call):
            return self.call(e, env)
        raise AssertionError(type(e))

    @staticmethod
    def materialise(v: Any, t: Ty) -> Any:
        """Values of a weak type stay Python/int64 numbers; strong ones take their dtype."""
        if t.weak:
            return v
        return convert(v, t.dtype) if t.dtype != "bool" else v

    @staticmethod
    def operand(v: Any, t: Ty, comp: Ty) -> Any:
        """`v` of type `t` as an operand computed in `comp`: a conversion like any other
        (round to nearest even, integers saturate; bf16 operands rounded to bf16)."""
        if comp.dtype == "bool":
            return v
        if t.weak and comp.weak:
            return np.asarray(v, dtype=np.float32) if comp.is_float else v
        if t == comp:
            return np.asarray(v)
        return convert(v, comp.dtype)

    def binary(self, e: ir.Binary, env: dict[str, Any]) -> tuple[Any, Ty]:
        a, ta = self.eval(e.lhs, env)
        b, tb = self.eval(e.rhs, env)
        comp = promote(ta, tb)
        x, y = self.operand(a, ta, comp), self.operand(b, tb, comp)
        op = e.op
        if op in ir.COMPARE_OPS:
            r = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                 "==": np.equal, "!=": np.not_equal}[op](x, y)
            return r, BOOL
        if op == "+":
            r = np.add(x, y)
        elif op == "-":
            r = np.subtract(x, y)
        elif op == "*":
            r = np.multiply(x, y)
        elif op == "%":  # weak integers only (checked), by a positive constant: the floor remainder
            r = np.mod(x, y)
        elif comp.is_int and comp.weak:  # index arithmetic: floor division by a positive divisor
            r = np.where(np.asarray(y) > 0, np.floor_divide(x, np.where(np.asarray(y) > 0, y, 1)),
                         int_divide(x, y, np.int64))
        elif comp.is_int:
            r = int_divide(x, y, NP_DTYPE[comp.dtype])
        else:
            r = np.true_divide(x, y)
        if comp.weak:
            return (np.asarray(r, np.float32) if comp.is_float else r), comp
        return self.materialise(r, comp), comp

    def arm(self, e: ir.Expr, chosen: Any, env: dict[str, Any]) -> tuple[Any, Ty]:
        """One arm of a `select`, evaluated with its reads guarded by `chosen` (and by the
        arms it is nested in): a read where the arm is not chosen is not made."""
        outer = self.guard
        self.guard = chosen if outer is None else np.logical_and(outer, chosen)
        try:
            return self.eval(e, env)
        finally:
            self.guard = outer

    def call(self, e: ir.Call, env: dict[str, Any]) -> tuple[Any, Ty]:
        f = e.func
        if f == "select":
            c, _ = self.eval(e.args[0], env)
            a, ta = self.arm(e.args[1], np.asarray(c, dtype=bool), env)
            b, tb = self.arm(e.args[2], ~np.asarray(c, dtype=bool), env)
            comp = promote(ta, tb)
            r = np.where(c, self.operand(a, ta, comp), self.operand(b, tb, comp))
            return (r if comp.weak else self.materialise(r, comp)), comp
        if f in ir.DTYPES:
            v, t = self.eval(e.args[0], env)
            return convert(v, f), Ty(f)
        args = [self.eval(a, env) for a in e.args]
        if f in ("max", "min"):
            (a, ta), (b, tb) = args
            comp = promote(ta, tb)
            fn = maximum if f == "max" else minimum
            r = fn(self.operand(a, ta, comp), self.operand(b, tb, comp))
            return (r if comp.weak else self.materialise(r, comp)), comp
        if f == "abs":
            (v, t), = args
            r = np.abs(v)
            return (r if t.weak else self.materialise(r, t)), t
        t = args[0][1] if len(args) == 1 else promote(args[0][1], args[1][1])
        comp = Ty(float_of(t).dtype)  # float intrinsics on weak operands compute in f32
        xs = [np.asarray(self.operand(v, tv, comp), np.float32) for v, tv in args]
        fn = INTRINSIC[f].numpy
        assert fn is not None, f
        # computed in f32 (or f64, intrinsics.py) and rounded once to the result type, as
        # emitted code does (numpy's float16 rsqrt would round twice: after sqrt and after
        # the reciprocal)
        with np.errstate(all="ignore"):
            return convert(fn(*xs), comp.dtype), comp

    # ---- vectorisation legality -------------------------------------------------------
    def _vectorisable(self, loop: ir.For) -> bool:
        key = id(loop)
        if key not in self._plan:
            self._plan[key] = (self.vectorise and _vectorisable(loop, self.decls, self.sizes)
                               and _int_reductions_wrap(loop, self.k))
        return self._plan[key]

    def _chunk_length(self, loop: ir.For, env: dict[str, Any]) -> int:
        """Iterations of `loop` to vectorise at once: as many as keep every array a
        statement of its body materialises under CHUNK_ELEMENTS. A statement broadcasts
        its value over all vectorised variables (the enclosing ones, `loop`'s, and those
        of the vectorised loops between); a contraction materialises only its operands
        and its result (`transformer.contraction`), so a matmul runs in one piece."""
        terms, extent = self._loop_terms(loop)
        outer = {n: int(v.size) for n, v in env.items() if isinstance(v, np.ndarray)}
        extent = {**extent, **outer}
        key = (id(loop), frozenset(outer))
        if key not in self._forms:
            arrays: list[frozenset[str]] = []  # the variables of every array a statement materialises
            for chain, plan in terms:
                vec = chain | key[1]
                mine = [vec]
                if plan is not None:
                    factor_names, tgt_names = plan
                    if blas_form([f & vec for f in factor_names], vec - tgt_names):
                        mine = [f & vec for f in factor_names] + [tgt_names & vec]
                arrays += [a - {loop.var} for a in mine if loop.var in a]
            self._forms[key] = arrays
        worst = max((math.prod(extent[n] for n in a) for a in self._forms[key]), default=1)
        return max(1, CHUNK_ELEMENTS // worst)

    def _loop_terms(self, loop: ir.For) -> tuple[list[tuple[frozenset[str], Any]], dict[str, int]]:
        """Per assignment in `loop`'s body: the vectorised loop variables in scope (with
        `loop`'s own) and, for a contraction, its factors' and target's names; and the
        estimated extents of the vectorised loops in the body."""
        key = id(loop)
        if key not in self._terms:
            terms: list[tuple[frozenset[str], Any]] = []
            extent: dict[str, int] = {}

            def walk(stmts: tuple[ir.Stmt, ...], chain: frozenset[str]) -> None:
                for st in stmts:
                    if isinstance(st, ir.For):
                        if self._vectorisable(st):
                            extent[st.var] = _extent(st, self.sizes)
                            walk(st.body, chain | {st.var})
                        else:
                            walk(st.body, chain)
                    elif isinstance(st, ir.Assign):
                        plan = self._factors_of(st)
                        terms.append((chain, None if plan is None else plan[1:]))

            walk(loop.body, frozenset({loop.var}))
            self._terms[key] = (terms, extent)
        return self._terms[key]


def _basic_index(idx: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int], tuple[int, ...]] | None:
    """The fancy index `idx` (ints and index arrays over the vectorised axes) as basic
    slicing, when every array in it steps evenly along one axis of its own (`X[i, k + 1]`,
    `X[j, 2 * i]`, not `X[i, i]` or a tiled `X[i0 * 64 + i1]`): reading a strided view
    instead of gathering elements. Returns (slices, the order that puts the view's
    dimensions in the axes' order, the shape the fancy index would give); None when some
    array is not of that form, or the index selects fewer than BASIC_MIN_ELEMENTS elements
    (gathering those costs less than recognising the form)."""
    n = 1
    for i in idx:
        if isinstance(i, np.ndarray):
            n *= i.size
    if n < BASIC_MIN_ELEMENTS:
        return None
    sl: list[Any] = []
    where: list[int] = []  # per view dimension: its axis, counted from the right
    for i in idx:
        if np.ndim(i) == 0:
            sl.append(int(i))
            continue
        a = np.asarray(i)
        big = [d for d, n in enumerate(a.shape) if n > 1]
        flat = a.reshape(-1)
        if not big:
            sl.append(int(flat[0]))
            continue
        axis = a.ndim - big[0]
        if len(big) > 1 or axis in where:
            return None
        start, n = int(flat[0]), flat.size
        step = int(flat[1]) - start
        if step <= 0 or not np.array_equal(flat, start + step * np.arange(n)):
            return None
        sl.append(slice(start, start + step * (n - 1) + 1, step))
        where.append(axis)
    perm = sorted(range(len(where)), key=lambda k: -where[k])
    return tuple(sl), perm, np.broadcast_shapes(*[np.shape(i) for i in idx])


def _extent(s: ir.For, sizes: dict[str, int]) -> int:
    """Estimated trip count of a loop (outer loop variables read as 0)."""
    try:
        return max(eval_int(s.hi, _ZeroEnv(sizes)) - eval_int(s.lo, _ZeroEnv(sizes)), 1)
    except (KeyError, ValueError):
        return max(sizes.values(), default=1)


class _ZeroEnv(dict):
    """Sizes by name; any loop variable reads as 0 (for extent estimates only)."""

    def __missing__(self, key: str) -> int:
        return 0


def _accesses(stmts: tuple[ir.Stmt, ...], tensors: Container[str]) -> tuple[list[tuple[str, tuple[Any, ...], str]], list[tuple[str, tuple[Any, ...]]], bool, list[ir.For]]:
    """(writes (tensor, indices, op), reads in the values (tensor, indices), has_copy, nested
    loops), the references found by the one access walker (`walk.uses`)."""
    writes: list[tuple[str, tuple[Any, ...], str]] = []
    reads: list[tuple[str, tuple[Any, ...]]] = []
    loops: list[ir.For] = []
    has_copy = False
    for s in ir.iter_stmts(stmts):
        if isinstance(s, ir.Copy):
            has_copy = True
        elif isinstance(s, ir.For):
            loops.append(s)
        else:
            for u in uses(s, tensors):
                if u.write:
                    writes.append((u.tensor, u.indices, s.op))
                elif not u.target:
                    reads.append((u.tensor, u.indices))
    return writes, reads, has_copy, loops


def _vectorisable(loop: ir.For, decls: dict[str, ir.TensorDecl], sizes: dict[str, int]) -> bool:
    """May every statement of `loop`'s body run once over all iterations (in body order)
    and give the result of running the iterations in order? Sufficient condition, per
    tensor T written in the body (incl. nested loops):
      (disjoint)  every access to T in the body has the same index tuple, and one of its
                  dimensions is `c*v + g` with c != 0 and g free of v and of variables of
                  loops nested in the body; then iterations touch disjoint elements;
      (reduction) T is written only by one reduction op, never read in the body, its
                  indices do not mention v, and the op reassociates exactly enough:
                  `max=`/`min=` always, `+=`/`*=` when T is f32 or integer.
    Further: no copies in the body, and no nested loop bound mentions v."""
    writes, reads, has_copy, loops = _accesses(loop.body, decls)
    if has_copy:
        return False
    v = loop.var
    inner_vars = {l.var for l in loops}
    for l in loops:
        for b in (l.lo, l.hi):
            if any(isinstance(x, ir.Name) and x.name == v for x in ir.sub_exprs(b)):
                return False
    written = {w[0] for w in writes}
    for name in written:
        if name not in decls:
            continue  # a rank-0 name that is not a tensor cannot be written (checker)
        ws = [w for w in writes if w[0] == name]
        rs = [r[1] for r in reads if r[0] == name]
        idx_set = {w[1] for w in ws} | set(rs)
        if len(idx_set) == 1 and _has_private_dim(next(iter(idx_set)), v, inner_vars, sizes):
            continue
        ops = {w[2] for w in ws}
        if (not rs and len(ops) == 1 and next(iter(ops)) in ir.REDUCE_OPS
                and not any(_mentions(i, v) for w in ws for i in w[1])):
            op = next(iter(ops))
            if op in ("max=", "min=") or decls[name].dtype in ("f32", "i32", "i8"):
                continue
        return False
    return True


def _int_reductions_wrap(loop: ir.For, kernel: ir.Kernel) -> bool:
    """Does every integer `+=`/`*=` in `loop` compute in its destination's own dtype? Only
    then is it a wrapping sum (reassociable); `acc_i8 += x_i32` computes in i32 and
    saturates into i8 at every step, which a vectorised sum would not reproduce."""
    from .check import expr_type

    loop_vars = tuple(lp.var for lp in ir.iter_loops(kernel.body))
    for s in ir.iter_stmts(loop.body):
        if not isinstance(s, ir.Assign) or s.op not in ("+=", "*="):
            continue
        t = s.target
        decl = kernel.tensor(t.tensor if isinstance(t, ir.Access) else t.name)
        if decl is None or decl.dtype not in ir.INT_DTYPES:
            continue
        if promote(Ty(decl.dtype), expr_type(s.value, kernel, loop_vars)) != Ty(decl.dtype):
            return False
    return True


def _mentions(e: ir.Expr, var: str) -> bool:
    return var in names_in(e)


def _has_private_dim(indices: tuple[ir.Expr, ...], v: str, inner_vars: set[str], sizes: dict[str, int]) -> bool:
    for e in indices:
        a = to_affine(e, sizes)
        if a is None:
            continue
        if a.coeff(v) != 0 and not (a.vars & inner_vars):
            return True
    return False
