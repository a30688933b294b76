"""The one table of intrinsics (`exp(x)`, `erf(x)`, `pow(x, c)`, ...): what each means and
how each is computed, in one place.

Every consumer reads this table and nothing else: the parser's arity check and the list an
unknown function's error shows (`ir.INTRINSICS`), the checker's result type (`result`), the
interpreter (`numpy`), the scalar C++ of emitted code (`cpp`), the vector lowering (`vector`:
one Ascend C instruction, or `compose`: a composition of documented vector instructions
written as a small expression over the argument), verify's tolerance (`tolerance`) and
docs/ir.md (`accuracy`). Add an intrinsic here, with its test in
tests/test_intrinsics.py, not as a special case elsewhere.

Why compositions: the Ascend C basic vector API has `Exp`, `Ln`, `Sqrt`, `Rsqrt`, `Abs`,
`Reciprocal`, arithmetic, `Compare`/`Select` and `Cast`, but no erf, sin, cos, sigmoid, pow,
floor, log1p or exp2 instruction (those live in the high-level math library, whose
algorithms and temporary buffers are not documented). A composition of basic instructions
is exact to state and to test: its accuracy below assumes each instruction rounds correctly
once (as the emulator implements them) and was measured against the interpreter's f64
meaning over the whole f32 range (tests/test_intrinsics.py).

This module imports nothing heavy (numpy is imported inside the functions that need it), so
`ir` can read its arities without slowing start-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Union

# ---- a tiny expression builder for compositions (turned into IR by lower/vector.py) -------

Num = Union[float, int]


@dataclass(frozen=True)
class Term:
    """A node of a composition: `op` is an IR operator (`+ - * / < == ...`), `neg`, a
    function (`exp`, `log`, `abs`, `sqrt`, `max`, `min`, `select`), `arg` (the intrinsic's
    argument number `value`), `let` (a value bound earlier, named `value`) or `lit`."""

    op: str
    args: tuple["Term", ...] = ()
    value: Any = None

    def _b(self, op: str, o: "Term | Num", swap: bool = False) -> "Term":
        o = lift(o)
        return Term(op, (o, self) if swap else (self, o))

    def __add__(self, o: "Term | Num") -> "Term": return self._b("+", o)
    def __radd__(self, o: Num) -> "Term": return self._b("+", o, True)
    def __sub__(self, o: "Term | Num") -> "Term": return self._b("-", o)
    def __rsub__(self, o: Num) -> "Term": return self._b("-", o, True)
    def __mul__(self, o: "Term | Num") -> "Term": return self._b("*", o)
    def __rmul__(self, o: Num) -> "Term": return self._b("*", o, True)
    def __truediv__(self, o: "Term | Num") -> "Term": return self._b("/", o)
    def __rtruediv__(self, o: Num) -> "Term": return self._b("/", o, True)
    def __neg__(self) -> "Term": return Term("neg", (self,))
    def __lt__(self, o: "Term | Num") -> "Term": return self._b("<", o)  # type: ignore[override]
    def __gt__(self, o: "Term | Num") -> "Term": return self._b(">", o)  # type: ignore[override]
    def eq(self, o: "Term | Num") -> "Term": return self._b("==", o)


def lift(v: "Term | Num") -> Term:
    return v if isinstance(v, Term) else Term("lit", (), float(v))


def fn(name: str, *args: "Term | Num") -> Term:
    return Term(name, tuple(lift(a) for a in args))


def let(name: str) -> Term:
    return Term("let", (), name)


def select(c: Term, a: "Term | Num", b: "Term | Num") -> Term:
    return fn("select", c, a, b)


def horner(t: Term, coeffs: tuple[float, ...]) -> Term:
    """c0 + t * (c1 + t * (c2 + ...)): a polynomial in `t`, highest coefficient last."""
    acc: Term | Num = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = c + t * acc
    return lift(acc)


@dataclass(frozen=True)
class Composition:
    """`steps` bind names in order (`let(name)` reads one), `result` is the value. Each
    argument is given in f32 (`Term("arg", value=i)`); the lowering widens f16/bf16 (and i32)
    arguments first and rounds the f32 result once to the result type."""

    steps: tuple[tuple[str, Term], ...]
    result: Term


X = Term("arg", (), 0)
RINT = 12582912.0  # 1.5 * 2**23: (v + RINT) - RINT rounds v to an integer (ties to even) for |v| < 2**22
TWO23 = 8388608.0  # 2**23: every f32 of this magnitude or more is an integer


def _rint(v: Term) -> Term:
    return (v + RINT) - RINT


def _sigmoid() -> Composition:
    # exp(-x) overflows to inf for x < -88.7: 1 / inf = 0, the right limit; x = +inf: 1 / 1
    return Composition((), 1.0 / (1.0 + fn("exp", -X)))


def _exp2() -> Composition:
    return Composition((), fn("exp", X * math.log(2.0)))


def _log1p() -> Composition:
    # Kahan's log1p (Goldberg 1991, thm. 4): log(u) * x / (u - 1) with u = 1 + x corrects the
    # rounding of 1 + x; where 1 + x rounds to 1 the answer is x; u = inf: inf
    u, d = let("u"), let("d")
    return Composition((("u", 1.0 + X), ("d", let("u") - 1.0)),
                       select(d.eq(0.0), X, select(u.eq(math.inf), u, fn("log", u) * (X / d))))


def _floor() -> Composition:
    # round to an integer with the 2**23 magic number (sign-matched), step down where that
    # rounded up; |x| >= 2**23, inf and NaN are already integers (or NaN): x itself
    c, r = let("c"), let("r")
    return Composition((("c", select(X < 0.0, -TWO23, TWO23)), ("r", (X + c) - c)),
                       select(fn("abs", X) < TWO23, r - select(r > X, 1.0, 0.0), X))


_ERFC_NR = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
            -1.13520398, 1.48851587, -0.82215223, 0.17087277)  # Numerical Recipes 6.2, erfcc
_ERF_TAYLOR = tuple(2.0 / math.sqrt(math.pi) * (-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(7))


def _erf() -> Composition:
    # |x| < 0.5: the Taylor series in x**2 (7 terms: truncation below 1e-9 relative);
    # else 1 - erfc(|x|) with the Chebyshev fit of Numerical Recipes (fractional error of
    # erfc < 1.2e-7 everywhere), signed; |x| = inf: t = 0, erfc = 0, erf = +-1
    z, t, e = let("z"), let("t"), let("e")
    return Composition(
        (("z", fn("abs", X)), ("t", 1.0 / (1.0 + 0.5 * let("z"))),
         ("e", let("t") * fn("exp", horner(t, _ERFC_NR) - z * z))),
        select(z < 0.5, X * horner(X * X, _ERF_TAYLOR), select(X < 0.0, e - 1.0, 1.0 - e)))


# Cody-Waite split of pi (Cephes sinf's pi/4 split, times 4): n * PI1 and n * PI2 are exact
# for n < 2**16, so r = x - n * pi loses nothing for |x| up to about 2e5
_PI1, _PI2, _PI3 = 3.140625, 9.67502593994140625e-4, 1.509957990978376432e-7
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(7))  # r * (1 - s/6 + ...), to r**13
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(8))  # 1 - s/2 + ..., to r**14


def _trig(cos: bool) -> Composition:
    # n = rint(x / pi), r = x - n * pi in [-pi/2, pi/2], sin(x) = (-1)**n sin(r) (the same
    # for cos); the parity of n as n - 2 floor(n / 2), floor(n / 2) = rint(n / 2 - 1/4);
    # clamped to [-1, 1] (NaN stays NaN: max/min keep a NaN first operand). inf: NaN
    n, r, s, h = let("n"), let("r"), let("s"), let("h")
    poly = horner(s, _COS) if cos else r * horner(s, _SIN)
    return Composition(
        (("n", _rint(X * (1.0 / math.pi))), ("r", ((X - n * _PI1) - n * _PI2) - n * _PI3),
         ("s", r * r), ("h", _rint(n * 0.5 - 0.25))),
        fn("min", fn("max", (1.0 - 2.0 * (n - 2.0 * h)) * poly, -1.0), 1.0))


# ---- the table ------------------------------------------------------------------------------


def _np() -> Any:
    import numpy as np

    return np


def _f64(f: Callable[[Any], Any]) -> Callable[..., Any]:
    """`f` computed in f64 (the caller rounds once to the result type)."""
    return lambda *xs: f(*[_np().asarray(x, _np().float64) for x in xs])


def _erf_np(x: Any) -> Any:
    np = _np()
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def _sigmoid_np(x: Any) -> Any:
    np = _np()
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class Intrinsic:
    name: str
    arity: int
    meaning: str  # one line for docs and error hints
    result: str = "float"  # "float": float of the promoted arguments; "same": the argument's; "promote"
    numpy: Callable[..., Any] | None = None  # on f32 arrays (computed in f32 or f64); None: interp special-cases it
    cpp: str | None = None  # scalar C++ over float operands {0}, {1}
    vector: str | None = None  # one Ascend C instruction
    compose: Callable[[], Composition] | None = None  # else a composition of basic instructions
    accuracy: str = "correctly rounded (one instruction)"
    tolerance: tuple[float, float] = (0.0, 0.0)  # (rtol, atol) an f32 output that uses it needs at least
    fuzz: bool = True  # drawn by the random-kernel fuzzers (tests/strategies.py)


_RT_ONE = "computed in f64 and rounded once (numpy)"

TABLE: tuple[Intrinsic, ...] = (
    Intrinsic("exp", 1, "e**x", numpy=lambda x: _np().exp(x), cpp="std::exp({0})", vector="Exp"),
    Intrinsic("log", 1, "natural logarithm", numpy=lambda x: _np().log(x), cpp="std::log({0})", vector="Ln"),
    Intrinsic("sqrt", 1, "square root", numpy=lambda x: _np().sqrt(x), cpp="std::sqrt({0})", vector="Sqrt"),
    Intrinsic("rsqrt", 1, "1 / sqrt(x)", numpy=lambda x: _np().reciprocal(_np().sqrt(x)),
              cpp="(1.0f / std::sqrt({0}))", vector="Rsqrt"),
    Intrinsic("abs", 1, "absolute value", result="same", vector="Abs"),
    Intrinsic("tanh", 1, "hyperbolic tangent", numpy=lambda x: _np().tanh(x), cpp="std::tanh({0})",
              accuracy="1 - 2 / (exp(2x) + 1): absolute error about one f32 ulp of 1"),
    Intrinsic("max", 2, "the larger (NaN propagates)", result="promote"),
    Intrinsic("min", 2, "the smaller (NaN propagates)", result="promote"),
    Intrinsic("sigmoid", 1, "1 / (1 + exp(-x))", numpy=_f64(_sigmoid_np),
              cpp="static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>({0}))))", compose=_sigmoid,
              accuracy="Muls, Exp, Adds, Div: relative error <= 2e-7", tolerance=(1e-5, 1e-6)),
    Intrinsic("exp2", 1, "2**x", numpy=_f64(lambda x: _np().exp2(x)),
              cpp="static_cast<float>(std::exp2(static_cast<double>({0})))", compose=_exp2,
              accuracy="exp(x * ln 2): relative error <= |x| * 4e-8 (<= 5e-6) for normal results; within 5e-6 of the largest f32 it may overflow to inf",
              tolerance=(2e-5, 0.0)),
    Intrinsic("log1p", 1, "log(1 + x), accurate near 0", numpy=_f64(lambda x: _np().log1p(x)),
              cpp="static_cast<float>(std::log1p(static_cast<double>({0})))", compose=_log1p,
              accuracy="Kahan's log(u) * x / (u - 1), u = 1 + x: relative error <= 3e-7", tolerance=(1e-5, 0.0)),
    Intrinsic("floor", 1, "largest integer <= x (as a float)", numpy=_f64(lambda x: _np().floor(x)),
              cpp="std::floor({0})", compose=_floor,
              accuracy="exact (2**23 magic-number rounding, Compare, Select); -0.0 gives +0.0"),
    Intrinsic("erf", 1, "the error function", numpy=_f64(_erf_np),
              cpp="static_cast<float>(std::erf(static_cast<double>({0})))", compose=_erf,
              accuracy="Taylor series below 0.5, Numerical Recipes' erfc fit above: relative error <= 4e-7", tolerance=(2e-6, 1e-6)),
    Intrinsic("sin", 1, "sine (radians)", numpy=_f64(lambda x: _np().sin(x)),
              cpp="static_cast<float>(std::sin(static_cast<double>({0})))", compose=lambda: _trig(False),
              accuracy="Cody-Waite reduction by pi, Taylor polynomial: absolute error <= 2e-7 for |x| <= 8192, "
                       "<= 3e-6 for |x| <= 2e5; beyond 2e5 not sin(x) (a value in [-1, 1]); inf, NaN: NaN",
              tolerance=(1e-5, 2e-6), fuzz=False),
    Intrinsic("cos", 1, "cosine (radians)", numpy=_f64(lambda x: _np().cos(x)),
              cpp="static_cast<float>(std::cos(static_cast<double>({0})))", compose=lambda: _trig(True),
              accuracy="as sin", tolerance=(1e-5, 2e-6), fuzz=False),
    Intrinsic("pow", 2, "x**y (also written `x ** y`)", numpy=_f64(lambda x, y: _np().power(x, y)),
              cpp="static_cast<float>(std::pow(static_cast<double>({0}), static_cast<double>({1})))",
              accuracy="a literal exponent: integer |c| <= 16 by multiplications (relative error <= 1e-6), "
                       "0.5 by Sqrt (exact), else exp(c * log(x)) (relative error <= |c log x| * 7e-8, <= 1e-5); "
                       "normal results (a subnormal one may lose precision); any other exponent is scalar code", tolerance=(2e-5, 0.0), fuzz=False),
)

BY_NAME: dict[str, Intrinsic] = {i.name: i for i in TABLE}
ARITY: dict[str, int] = {i.name: i.arity for i in TABLE}


def names_hint() -> str:
    """The list an unknown function's error shows."""
    return "intrinsics: " + ", ".join(f"{i.name}({', '.join('xy'[:i.arity])})" for i in TABLE)


def pow_by_constant(c: float) -> Composition | None:
    """The composition of `pow(x, c)` for a constant `c` (see the table's accuracy)."""
    if c == 0.5:
        return Composition((), fn("sqrt", X))
    if c == int(c) and 0 < abs(c) <= 16:
        k, steps, acc = int(abs(c)), [("p0", X)], None
        bit, i = 1, 0
        while bit <= k:  # binary powering: p_i = x**(2**i)
            if k & bit:
                acc = let(f"p{i}") if acc is None else acc * let(f"p{i}")
            bit, i = bit * 2, i + 1
            if bit <= k:
                steps.append((f"p{i}", let(f"p{i - 1}") * let(f"p{i - 1}")))
        assert acc is not None
        return Composition(tuple(steps), acc if c > 0 else 1.0 / acc)
    if c == 0:
        return None  # x**0 == 1 even for NaN: the scalar path says so exactly
    # numpy: (-inf)**c is inf for c > 0 and 0 for c < 0 (a non-integer c); log(-inf) is NaN
    return Composition((), select(X.eq(-math.inf), math.inf if c > 0 else 0.0, fn("exp", c * fn("log", X))))


def tolerance_for(names: set[str]) -> tuple[float, float]:
    """The largest (rtol, atol) the intrinsics `names` need (verify widens an f32 output's
    tolerance to it)."""
    rt, at = 0.0, 0.0
    for n in names:
        i = BY_NAME.get(n)
        if i is not None:
            rt, at = max(rt, i.tolerance[0]), max(at, i.tolerance[1])
    return rt, at

