"""Rigorous certification of inequalities between symbolic bounds, by interval branch and bound.

A claim `lhs <= rhs` (or `<`, `>=`, `>`) over a box of parameter intervals is decided with python-flint's Arb
balls: `rhs - lhs` is enclosed over a box; a box whose enclosure is certainly of the right sign is certified,
a point where it is certainly of the wrong sign is a counterexample, and anything else is bisected until every
box is decided or a limit is hit (then the answer is INCONCLUSIVE, with the undecided boxes).

Interval arithmetic is done on pairs of Arb balls (lower endpoint, upper endpoint), so that products and
monotone functions are evaluated at the endpoints and stay tight; every rounding is enclosed by the balls,
hence the enclosures are rigorous. Two accelerations are used, both sound:

* common factors are pulled out of `rhs - lhs` (``sympy.factor_terms``) and factors of certain sign over the
  whole box are dropped, which removes the dependency between, e.g., the `alpha S^2/(sigma^2 n^2)` of both sides;
* the monotonicity test: where the derivative of the difference in a variable has a certain sign over a box,
  the minimum lies on one face, and the box is replaced by that face.

Integer-declared symbols are evaluated as real intervals (a certificate over the reals covers the integers),
but bisected at integers, and a point tried as a counterexample has integer coordinates for them.
"""

from __future__ import annotations

import heapq
import keyword
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import mpmath
import sympy as sp

from verify import symbols as _symbols
from verify.bounds import FiniteSum, RangeMin, integer_range
from verify.errors import ParameterError, UnknownIdError
from verify.model import PRECISION_DPS, evaluate
from verify.parsing import ALLOWED_CONSTANTS, ALLOWED_FUNCTIONS, PARSER_NAMES, parse_expression
from verify.recursion import RecursiveBound

try:  # python-flint is a runtime dependency of verify
    from flint import arb, ctx
except ImportError:  # pragma: no cover - exercised only without python-flint
    arb = ctx = None

CERTIFIED, COUNTEREXAMPLE, INCONCLUSIVE = "CERTIFIED", "COUNTEREXAMPLE", "INCONCLUSIVE"
RELATIONS = ("<=", "<", ">=", ">")
DEFAULT_PREC = 128  # bits of the Arb midpoints
LOG_RATIO = 10.0  # an interval [lo, hi] of one sign with hi/lo >= this is bisected in log scale

Interval = tuple  # (lo, hi): two Arb balls enclosing the lower and the upper endpoint
Env = Mapping[str, Interval]


def _need_flint() -> None:
    if arb is None:
        raise ParameterError("interval certification needs python-flint: pip install python-flint")


# ---- interval arithmetic on (lo, hi) pairs of Arb balls -------------------------------------------------------

def _point(v: Any) -> Interval:
    return (v, v)


def _is_point(a: Interval) -> bool:
    return a[0] is a[1]


def _nan() -> Interval:
    x = arb.nan()
    return (x, x)


def _finite(a: Interval) -> bool:
    return a[0].is_finite() and a[1].is_finite()


def _add(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0] + b[0])
    return (a[0] + b[0], a[1] + b[1])


def _neg(a: Interval) -> Interval:
    if _is_point(a):
        return _point(-a[0])
    return (-a[1], -a[0])


def _mul(a: Interval, b: Interval) -> Interval:
    a0, a1 = a
    b0, b1 = b
    if a0 is a1:
        if b0 is b1:
            return _point(a0 * b0)
        a0, a1, b0, b1 = b0, b1, a0, a1
    if b0 is b1:
        if b0 >= 0:
            return (a0 * b0, a1 * b0)
        if b0 <= 0:
            return (a1 * b0, a0 * b0)
        p, q = a0 * b0, a1 * b0
        return (p.min(q), p.max(q))
    if a0 >= 0 and b0 >= 0:
        return (a0 * b0, a1 * b1)
    p1, p2, p3, p4 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    return (p1.min(p2).min(p3).min(p4), p1.max(p2).max(p3).max(p4))


def _positive(a: Interval) -> bool:
    return bool(a[0] > 0)


def _negative(a: Interval) -> bool:
    return bool(a[1] < 0)


def _recip(a: Interval) -> Interval:
    if _is_point(a):
        return _point(1 / a[0]) if (a[0] > 0 or a[0] < 0) else _nan()
    if _positive(a) or _negative(a):
        return (1 / a[1], 1 / a[0])
    return _nan()


def _ipow(a: Interval, k: int) -> Interval:
    if k < 0:
        return _recip(_ipow(a, -k))
    if k == 0:
        return _point(arb(1))
    if k == 1:
        return a
    if _is_point(a):
        return _point(a[0] ** k)
    lo, hi = a[0] ** k, a[1] ** k
    if k % 2 or a[0] >= 0:
        return (lo, hi)
    if a[1] <= 0:
        return (hi, lo)
    return (arb(0), lo.max(hi))


def _increasing(fn: Callable[[Any], Any]) -> Callable[[Interval], Interval]:
    def apply(a: Interval) -> Interval:
        if _is_point(a):
            return _point(fn(a[0]))
        return (fn(a[0]), fn(a[1]))
    return apply


def _decreasing(fn: Callable[[Any], Any]) -> Callable[[Interval], Interval]:
    def apply(a: Interval) -> Interval:
        if _is_point(a):
            return _point(fn(a[0]))
        return (fn(a[1]), fn(a[0]))
    return apply


def _ball(fn: Callable[..., Any]) -> Callable[..., Interval]:
    """Evaluate a function on the balls covering its argument intervals (valid, maybe loose)."""
    def apply(*args: Interval) -> Interval:
        balls = [a[0] if _is_point(a) else a[0].union(a[1]) for a in args]
        y = fn(*balls)
        if all(_is_point(a) for a in args):
            return _point(y)
        return (y.lower(), y.upper())
    return apply


def _abs(a: Interval) -> Interval:
    if _is_point(a):
        return _point(abs(a[0]))
    if a[0] >= 0:
        return a
    if a[1] <= 0:
        return _neg(a)
    return (arb(0), (-a[0]).max(a[1]))


def _max(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0].max(b[0]))
    return (a[0].max(b[0]), a[1].max(b[1]))


def _min(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0].min(b[0]))
    return (a[0].min(b[0]), a[1].min(b[1]))


_GAMMA_MIN = 1.4616321449683623  # argmin of Gamma on x > 0; Gamma and log Gamma increase right of it


def _gamma_like(fn: Callable[[Any], Any]) -> Callable[[Interval], Interval]:
    inc, dec, ball = _increasing(fn), _decreasing(fn), _ball(fn)

    def apply(a: Interval) -> Interval:
        if a[0] >= 1.4617:
            return inc(a)
        if a[0] > 0 and a[1] <= 1.4616:
            return dec(a)
        return ball(a)
    return apply


def _digamma(a: Interval) -> Interval:
    return _increasing(arb.digamma)(a) if a[0] > 0 else _ball(arb.digamma)(a)


# ---- translation of SymPy trees into interval functions -------------------------------------------------------

Compiled = Callable[[Env], Interval]


def _const_of(e: sp.Expr) -> Any:
    if e.is_Integer:
        return arb(int(e))
    if e.is_Rational:
        return arb(int(e.p)) / int(e.q)
    if e.is_Float:
        sign, man, exp, _ = e._mpf_
        return arb((-man if sign else man, exp))
    named = {sp.pi: arb.pi, sp.E: arb.const_e, sp.EulerGamma: arb.const_euler, sp.Catalan: arb.const_catalan}
    if e in named:
        return named[e]()
    return None


def _fold(fn: Callable[[Interval, Interval], Interval], parts: Sequence[Compiled]) -> Compiled:
    def run(env: Env) -> Interval:
        acc = parts[0](env)
        for p in parts[1:]:
            acc = fn(acc, p(env))
        return acc
    return run


def _unary(op: Callable[[Interval], Interval], inner: Compiled) -> Compiled:
    return lambda env: op(inner(env))


def _pow(base: Compiled, exponent: sp.Expr, exp_fn: Compiled | None) -> Compiled:
    if exponent.is_Number and exponent.is_finite:
        if exponent.is_Rational:
            value = Fraction(int(exponent.p), int(exponent.q))
        else:  # a Float: its exact binary value
            sign, man, exp, _ = exponent._mpf_
            value = Fraction(-man if sign else man) * Fraction(2) ** exp
        if value.denominator == 1:
            k = int(value)
            return lambda env: _ipow(base(env), k)
        if value == Fraction(1, 2):
            return _unary(_increasing(arb.sqrt), base)
        e = arb(value.numerator) / value.denominator

        def real_power(x: Any) -> Any:
            if x.is_zero():
                return arb(0) if value > 0 else arb.nan()
            return x ** e
        return _unary((_increasing if value > 0 else _decreasing)(real_power), base)
    assert exp_fn is not None

    def general(env: Env) -> Interval:  # b**e = exp(e log b), b > 0; an exact integer e (K, n) by repeated products
        ex = exp_fn(env)
        if _is_point(ex) and ex[0].is_exact() and ex[0].unique_fmpz() is not None:
            return _ipow(base(env), int(ex[0].unique_fmpz()))  # 0**K = 0 and (-x)**K have no log form
        return _increasing(arb.exp)(_mul(ex, _increasing(arb.log)(base(env))))
    return general


_INCREASING = {}
_DECREASING = {}
_BALL = {}


def _tables() -> None:
    _INCREASING.update({sp.exp: arb.exp, sp.log: arb.log, sp.erf: arb.erf, sp.atan: arb.atan, sp.sinh: arb.sinh,
                        sp.tanh: arb.tanh, sp.asinh: arb.asinh, sp.floor: arb.floor, sp.ceiling: arb.ceil,
                        sp.LambertW: arb.lambertw, sp.erfinv: arb.erfinv})
    _DECREASING.update({sp.erfc: arb.erfc, sp.erfcinv: arb.erfcinv})
    _BALL.update({sp.sin: arb.sin, sp.cos: arb.cos, sp.tan: arb.tan, sp.cosh: arb.cosh})


def _translate(e: sp.Basic) -> Compiled:
    if not isinstance(e, sp.Expr):
        raise ParameterError(f"cannot evaluate {type(e).__name__} '{sp.sstr(e)}' as a real number")
    if e is sp.I:
        raise ParameterError("cannot evaluate the imaginary unit I with real interval arithmetic")
    if e.is_Symbol:
        name = e.name
        return lambda env: env[name]
    if e.is_Number or isinstance(e, sp.NumberSymbol):
        if e.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or e.is_real is False:
            raise ParameterError(f"cannot evaluate the non-finite or complex constant '{e}' with interval arithmetic")
        c = _const_of(e)
        if c is None:
            raise ParameterError(f"cannot evaluate the constant {type(e).__name__} '{e}' with interval arithmetic")
        value = _point(c)
        return lambda env: value
    if not e.free_symbols:  # constant subtree: fold once
        value = _translate_node(e)({})
        return lambda env: value
    return _translate_node(e)


def _translate_node(e: sp.Expr) -> Compiled:
    if isinstance(e, sp.Add):
        return _fold(_add, [_translate(a) for a in e.args])
    if isinstance(e, sp.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            return _unary(_neg, _translate(rest))
        return _fold(_mul, [_translate(a) for a in e.args])
    if isinstance(e, sp.Pow):
        base, ex = e.args
        if ex == sp.Rational(-1, 2):
            return _unary(_decreasing(arb.rsqrt), _translate(base))
        return _pow(_translate(base), ex, None if ex.is_Number else _translate(ex))
    f = type(e)
    if isinstance(e, RecursiveBound):
        parts = [_translate(a) for a in e.args]
        return lambda env: f.enclose(*(p(env) for p in parts))
    if f in _INCREASING and len(e.args) == 1:
        return _unary(_increasing(_INCREASING[f]), _translate(e.args[0]))
    if f in _DECREASING and len(e.args) == 1:
        return _unary(_decreasing(_DECREASING[f]), _translate(e.args[0]))
    if f in _BALL and len(e.args) == 1:
        return _unary(_ball(_BALL[f]), _translate(e.args[0]))
    if isinstance(e, (FiniteSum, RangeMin)):
        return _over_range(e)
    if f is sp.Abs:
        return _unary(_abs, _translate(e.args[0]))
    if f is sp.Max:
        return _fold(_max, [_translate(a) for a in e.args])
    if f is sp.Min:
        return _fold(_min, [_translate(a) for a in e.args])
    if f is sp.gamma:
        return _unary(_gamma_like(arb.gamma), _translate(e.args[0]))
    if f is sp.loggamma:
        return _unary(_gamma_like(arb.lgamma), _translate(e.args[0]))
    if f is sp.factorial:
        return _unary(_gamma_like(arb.gamma), _translate(e.args[0] + 1))
    if f is sp.polygamma and e.args[0] == 0:
        return _unary(_digamma, _translate(e.args[1]))
    if f is sp.harmonic and len(e.args) == 1:  # H_x = digamma(x + 1) + Euler's gamma
        inner = _translate(e.args[0] + 1)
        return lambda env: _add(_digamma(inner(env)), _point(arb.const_euler()))
    if f is sp.binomial:
        top, k = e.args
        if k.is_Integer and k >= 0:
            kk = int(k)
            return _unary(_ball(lambda x: arb.bin(x, kk)), _translate(top))
        parts = [_translate(top), _translate(k)]
        return lambda env: _ball(lambda x, y: (x + 1).gamma() * (y + 1).rgamma() * (x - y + 1).rgamma())(
            *(p(env) for p in parts))
    raise ParameterError(f"cannot evaluate {f.__name__} ('{sp.sstr(e)}') with interval arithmetic; supported: "
                         "+ - * /, powers, exp, log, sqrt, erf, erfc, erfinv, erfcinv, Abs, Max, Min, gamma, "
                         "loggamma, factorial, binomial, harmonic, digamma, LambertW, sin, cos, tan, atan, sinh, "
                         "cosh, tanh, asinh, floor, ceiling, pi, E")


def _over_range(e: FiniteSum | RangeMin) -> Compiled:
    """A finite sum or a min over an integer range whose ends are fixed (point intervals) where it is evaluated.
    SymPy merges a sum of a sum (a min of a min) into one object with several limits, innermost first: each limit
    reduces the one inside it."""
    compiled = _translate(e.function)
    for k, lo, hi in e.limits:
        compiled = _one_range(e, compiled, k, _translate(lo), _translate(hi))
    return compiled


def _one_range(e: FiniteSum | RangeMin, body: Compiled, k: sp.Symbol, lo_c: Compiled, hi_c: Compiled) -> Compiled:
    reduce = _add if isinstance(e, FiniteSum) else _min

    def end(x: Interval) -> int:
        if not (_is_point(x) and x[0].is_exact() and x[0].is_integer()):
            raise ParameterError(f"the range of '{sp.sstr(e)}' must be fixed integers where it is evaluated")
        return int(x[0].unique_fmpz())

    def run(env: Env) -> Interval:
        terms = integer_range(end(lo_c(env)), end(hi_c(env)))
        if not terms:
            if isinstance(e, FiniteSum):
                return _point(arb(0))
            raise ParameterError(f"'{sp.sstr(e)}' is a min over an empty range")
        acc = None
        for j in terms:
            term = body({**env, k.name: _point(arb(j))})
            acc = term if acc is None else reduce(acc, term)
        return acc
    return run


@lru_cache(maxsize=512)
def _compiled(expr: sp.Expr, prec: int) -> Compiled:
    _need_flint()
    if not _INCREASING:
        _tables()
    with ctx.workprec(prec):
        return _translate(expr)


Condition = Callable[[Env], "bool | None"]


def _compile_condition(cond: sp.Basic, prec: int) -> Condition:
    """A three-valued test of a SymPy condition over a box: True (everywhere), False (nowhere), None."""
    if cond is sp.true or cond is True:
        return lambda env: True
    if cond is sp.false or cond is False:
        return lambda env: False
    if isinstance(cond, (sp.And, sp.Or)):
        parts = [_compile_condition(a, prec) for a in cond.args]
        want = isinstance(cond, sp.And)

        def junction(env: Env) -> bool | None:
            seen_none = False
            for p in parts:
                v = p(env)
                if v is None:
                    seen_none = True
                elif v is not want:
                    return not want
            return None if seen_none else want
        return junction
    if isinstance(cond, sp.Not):
        inner = _compile_condition(cond.args[0], prec)
        return lambda env: (lambda v: None if v is None else not v)(inner(env))
    if isinstance(cond, (sp.Equality, sp.Unequality)):
        d = _compiled(sp.sympify(cond.lhs - cond.rhs), prec)
        ne = isinstance(cond, sp.Unequality)

        def equal(env: Env) -> bool | None:
            lo, hi = d(env)
            if lo.is_zero() and hi.is_zero():
                return not ne
            if lo > 0 or hi < 0:
                return ne
            return None
        return equal
    if isinstance(cond, sp.Rel):
        if isinstance(cond, (sp.LessThan, sp.StrictLessThan)):
            d = _compiled(sp.sympify(cond.rhs - cond.lhs), prec)
        elif isinstance(cond, (sp.GreaterThan, sp.StrictGreaterThan)):
            d = _compiled(sp.sympify(cond.lhs - cond.rhs), prec)
        else:  # pragma: no cover
            raise ParameterError(f"unsupported relation in '{cond}'")
        strict = isinstance(cond, (sp.StrictLessThan, sp.StrictGreaterThan))

        def rel(env: Env) -> bool | None:
            lo, hi = d(env)
            if (lo > 0) if strict else (lo >= 0):
                return True
            if (hi <= 0) if strict else (hi < 0):
                return False
            return None
        return rel
    raise ParameterError(f"not a condition: '{sp.sstr(cond)}' (use relations joined by &, |, ~)")


# ---- boxes ---------------------------------------------------------------------------------------------------

BoxSpec = Mapping[str, "tuple[float | str, float | str] | float | str"]


def _fraction(value: Any, what: str) -> Fraction:
    if isinstance(value, bool):
        raise ParameterError(f"{what}: expected a number, got {value!r}")
    try:
        if isinstance(value, Fraction):
            out = value
        elif isinstance(value, int):
            out = Fraction(value)
        elif isinstance(value, float):
            out = Fraction(value)  # raises on nan / inf
        elif isinstance(value, sp.Rational):
            out = Fraction(int(value.p), int(value.q))
        elif isinstance(value, (str, sp.Float)):
            out = Fraction(str(value).strip())
        else:
            raise TypeError
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        raise ParameterError(f"{what}: expected a finite number or 'p/q', got {value!r}") from None
    return out


def _down(fr: Fraction) -> float:
    x = float(fr)
    return math.nextafter(x, -math.inf) if Fraction(x) > fr else x


def _up(fr: Fraction) -> float:
    x = float(fr)
    return math.nextafter(x, math.inf) if Fraction(x) < fr else x


def _interval_of(value: Any, name: str) -> tuple[Fraction, Fraction]:
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ParameterError(f"box entry {name}: expected (lo, hi), got {value!r}")
        lo, hi = (_fraction(v, f"box entry {name}") for v in value)
    else:
        lo = hi = _fraction(value, f"box entry {name}")
    if lo > hi:
        raise ParameterError(f"box entry {name}: lower end {value[0]} exceeds upper end {value[1]}")
    return lo, hi


@dataclass(frozen=True)
class _Dim:
    """One searched variable: its root interval and how it is measured and bisected."""

    name: str
    integer: bool
    lo: float | int
    hi: float | int
    decl: tuple[Fraction, Fraction]  # the declared interval, exact

    @cached_property
    def scale(self) -> int:  # 0 linear, +1 log of x, -1 log of -x
        if self.lo > 0 and self.hi / self.lo >= LOG_RATIO:
            return 1
        if self.hi < 0 and self.lo / self.hi >= LOG_RATIO:
            return -1
        return 0

    def width(self, lo: float, hi: float) -> float:
        """Width of [lo, hi] relative to the root interval, in this dimension's scale (0 for a point)."""
        if lo == hi:
            return 0.0
        s = self.scale
        if s == 1:
            return math.log(hi / lo) / math.log(self.hi / self.lo)
        if s == -1:
            return math.log(lo / hi) / math.log(self.lo / self.hi)
        return (hi - lo) / (self.hi - self.lo)

    def split_point(self, lo: float, hi: float) -> float:
        s = self.scale
        if s == 1:
            m = math.sqrt(lo) * math.sqrt(hi)
        elif s == -1:
            m = -math.sqrt(-lo) * math.sqrt(-hi)
        else:
            m = lo + (hi - lo) / 2
        return min(max(m, lo), hi)

    def split(self, lo: float | int, hi: float | int) -> tuple[tuple, tuple] | None:
        """Two halves of [lo, hi]; integer dimensions are cut between consecutive integers."""
        if lo == hi:
            return None
        m = self.split_point(lo, hi)
        if self.integer:
            k = min(max(math.floor(m), lo), hi - 1)
            return (lo, k), (k + 1, hi)
        if not lo < m < hi:
            return None
        return (lo, m), (m, hi)

    def sample(self, lo: float | int, hi: float | int) -> float | int:
        """A representative point of [lo, hi]: an integer for integer dimensions, else the shortest decimal
        of the central half (in this dimension's scale), so that counterexamples read well."""
        if lo == hi:
            return lo
        m = self.split_point(lo, hi)
        if self.integer:
            return min(max(round(m), lo), hi)
        a, b = self.split_point(lo, m), self.split_point(m, hi)
        for digits in range(17):
            x = float(f"{m:.{digits}e}")
            if a <= x <= b:
                return x
        return m

    def in_declared(self, x: float | int) -> bool:
        return self.decl[0] <= Fraction(x) <= self.decl[1]

    def clamp(self, x: float | int) -> float | int:
        """The nearest float of the declared interval (the root box is rounded outward by an ulp)."""
        if self.integer or self.in_declared(x):
            return x
        return _up(self.decl[0]) if Fraction(x) < self.decl[0] else _down(self.decl[1])


def _make_dims(box: BoxSpec, names: Iterable[str], integer: set[str]) -> list[_Dim]:
    dims = []
    for name in names:
        if name not in box:
            raise ParameterError(f"symbol {name} has no interval in the box (give {name}=lo:hi)")
        lo, hi = _interval_of(box[name], name)
        if name in integer:
            ilo, ihi = math.ceil(lo), math.floor(hi)
            if ilo > ihi:
                raise ParameterError(f"box entry {name}: [{lo}, {hi}] contains no integer, and {name} is an integer")
            dims.append(_Dim(name, True, ilo, ihi, (lo, hi)))
        else:
            try:
                dims.append(_Dim(name, False, _down(lo), _up(hi), (lo, hi)))
            except OverflowError:
                raise ParameterError(f"box entry {name}: beyond the range of double precision") from None
    return dims


def _exact(v: sp.Expr) -> Fraction | None:
    if v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    if v.is_Float and v.is_finite:
        sign, man, exp, _ = v._mpf_
        return Fraction(-man if sign else man) * Fraction(2) ** exp
    return None


def _tighten(box: BoxSpec, cond: sp.Basic) -> dict[str, Any]:
    """Intersect the box with the assumptions that are plain bounds (x <= 3, K > 10, ...)."""
    out: dict[str, Any] = dict(box)
    for c in cond.args if isinstance(cond, sp.And) else (cond,):
        if not isinstance(c, (sp.LessThan, sp.StrictLessThan, sp.GreaterThan, sp.StrictGreaterThan)):
            continue
        upper = isinstance(c, (sp.LessThan, sp.StrictLessThan))
        sym, num = c.lhs, c.rhs
        if num.is_Symbol and sym.is_number:
            sym, num, upper = num, sym, not upper
        value = _exact(num) if sym.is_Symbol and num.is_number else None
        if value is None or sym.name not in out:
            continue
        lo, hi = _interval_of(out[sym.name], sym.name)
        lo, hi = (lo, min(hi, value)) if upper else (max(lo, value), hi)
        if lo <= hi:
            out[sym.name] = (lo, hi)
    return out


def _env(dims: Sequence[_Dim], box: Sequence[tuple]) -> dict[str, Interval]:
    env = {}
    for d, (lo, hi) in zip(dims, box, strict=True):
        a = arb(lo)
        env[d.name] = (a, a) if lo == hi else (a, arb(hi))
    return env


def _enclosure(expr: sp.Expr, box: BoxSpec, prec: int) -> tuple[Any, Any]:
    """Arb enclosures of the smallest and largest value of `expr` over `box` (at working precision `prec`)."""
    _need_flint()
    expr = sp.sympify(expr)
    dims = _make_dims(box, sorted({s.name for s in expr.free_symbols}), set())
    with ctx.workprec(prec):
        return _compiled(expr, prec)(_env(dims, [(d.lo, d.hi) for d in dims]))


def arb_bounds(expr: sp.Expr, box: BoxSpec, *, prec: int = DEFAULT_PREC) -> tuple[Any, Any]:
    """Lower and upper bounds (exact Arb numbers) of `expr` over `box`; NaN where it is not defined everywhere.

    Tighter than `arb_eval`, whose single ball has a radius rounded up to 30 bits.
    """
    lo, hi = _enclosure(expr, box, prec)
    with ctx.workprec(prec):
        if not (lo.is_finite() and hi.is_finite()):
            return arb.nan(), arb.nan()
        return lo.lower(), hi.upper()


def arb_eval(expr: sp.Expr, box: BoxSpec, *, prec: int = DEFAULT_PREC) -> Any:
    """Enclose the values of `expr` over `box` (name -> (lo, hi), or a number) in an Arb ball.

    Rigorous: every value of the expression at a point of the box lies in the returned ball. The ball is NaN
    where the expression is not defined (or not finite) everywhere on the box, e.g. log over an interval
    reaching 0. Integer-declared symbols are treated as real intervals. Raises ParameterError for constructs
    with no interval translation and for symbols without an interval.
    """
    lo, hi = _enclosure(expr, box, prec)
    with ctx.workprec(prec):
        if lo.is_nan() or hi.is_nan():
            return arb.nan()
        return lo if lo is hi else lo.union(hi)


# ---- the certificate ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Certificate:
    """The outcome of a certification: CERTIFIED, COUNTEREXAMPLE or INCONCLUSIVE, with its evidence."""

    status: str
    relation: str  # e.g. "lhs <= rhs"
    lhs: str
    rhs: str
    box: dict[str, tuple[str, str]]
    assumptions: str | None = None
    claim: str | None = None
    boxes_examined: int = 0
    certified_boxes: int = 0
    discarded_boxes: int = 0  # the assumptions certainly fail there
    monotone_reductions: int = 0  # boxes replaced by a face by the monotonicity test
    counterexample: dict[str, float | int] | None = None
    counterexample_values: dict[str, str] | None = None  # lhs, rhs, rhs - lhs at 50 digits (mpmath)
    undecided: tuple[dict[str, tuple[float, float]], ...] = ()
    undecided_count: int = 0
    stopped_by: str | None = None  # max_boxes, budget_s or min_width when INCONCLUSIVE
    seconds: float = 0.0
    note: str = ""

    @property
    def certified(self) -> bool:
        return self.status == CERTIFIED

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "claim": self.claim, "relation": self.relation, "lhs": self.lhs,
            "rhs": self.rhs, "assumptions": self.assumptions,
            "box": {k: [lo, hi] for k, (lo, hi) in self.box.items()},
            "boxes_examined": self.boxes_examined, "certified_boxes": self.certified_boxes,
            "discarded_boxes": self.discarded_boxes, "monotone_reductions": self.monotone_reductions,
            "counterexample": dict(self.counterexample) if self.counterexample is not None else None,
            "counterexample_values": dict(self.counterexample_values) if self.counterexample_values else None,
            "undecided": [{k: [lo, hi] for k, (lo, hi) in b.items()} for b in self.undecided],
            "undecided_count": self.undecided_count, "stopped_by": self.stopped_by,
            "seconds": round(self.seconds, 6), "note": self.note,
        }

    def summary(self) -> str:
        """A few lines for a terminal."""
        head = f"{self.status}: {self.relation}" + (f" [{self.claim}]" if self.claim else "")
        lines = [head, f"  lhs = {self.lhs}", f"  rhs = {self.rhs}"]
        if self.assumptions:
            lines.append(f"  assuming {self.assumptions}")
        lines.append("  box: " + ", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in self.box.items()))
        lines.append(f"  {self.boxes_examined} boxes examined, {self.certified_boxes} certified, "
                     f"{self.discarded_boxes} outside the assumptions, {self.monotone_reductions} reduced by "
                     f"monotonicity; {self.seconds:.3f} s")
        if self.counterexample is not None:
            point = ", ".join(f"{k}={v!r}" for k, v in self.counterexample.items())
            lines.append(f"  counterexample at {point}")
            for k, v in (self.counterexample_values or {}).items():
                lines.append(f"    {k} = {v}")
        if self.status == INCONCLUSIVE:
            lines.append(f"  stopped by {self.stopped_by}; {self.undecided_count} undecided boxes, e.g.")
            for b in self.undecided:
                lines.append("    " + ", ".join(f"{k} in [{lo!r}, {hi!r}]" for k, (lo, hi) in b.items()))
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


# ---- branch and bound -----------------------------------------------------------------------------------------

def _unify_symbols(exprs: Sequence[sp.Basic]) -> tuple[list[sp.Basic], dict[str, sp.Symbol]]:
    """One symbol per name (the first seen), so that differentiation and evaluation agree."""
    canon: dict[str, sp.Symbol] = {}
    for e in exprs:
        for s in sorted(e.free_symbols, key=lambda s: (s.name, str(s.assumptions0))):
            canon.setdefault(s.name, s)
    out = [e.xreplace({s: canon[s.name] for s in e.free_symbols}) for e in exprs]
    return out, canon


def _reduce(diff: sp.Expr, env: Env, prec: int) -> tuple[sp.Expr, list[str]]:
    """Pull out common factors of `diff` and drop those of certain sign over the whole box."""
    dropped: list[str] = []
    try:
        factored = sp.factor_terms(diff)
    except Exception:  # pragma: no cover - factor_terms is total on expressions
        return diff, dropped
    if not isinstance(factored, sp.Mul):
        return factored, dropped
    keep, sign = [], 1
    for a in factored.args:
        if a.is_Number:
            if a.is_zero:
                return sp.Integer(0), dropped
            sign *= 1 if a > 0 else -1
            continue
        try:
            with ctx.workprec(prec):
                iv = _compiled(a, prec)(env)
        except ParameterError:
            keep.append(a)
            continue
        if _finite(iv) and _positive(iv):
            dropped.append(sp.sstr(a))
        elif _finite(iv) and _negative(iv):
            sign = -sign
            dropped.append(sp.sstr(a))
        else:
            keep.append(a)
    reduced = sp.Mul(*keep)
    return (reduced if sign > 0 else -reduced), dropped


def _normalize_relation(relation: str) -> str:
    rel = relation.strip().replace("≤", "<=").replace("≥", ">=").replace("=<", "<=").replace("=>", ">=")
    if rel not in RELATIONS:
        raise ParameterError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
    return rel


def _as_expr(x: Any, what: str) -> sp.Expr:
    try:
        e = sp.sympify(x, strict=True) if not isinstance(x, sp.Basic) else x
    except (sp.SympifyError, TypeError) as err:
        raise ParameterError(f"{what} is not an expression: {x!r} ({err})") from None
    if not isinstance(e, sp.Expr):
        raise ParameterError(f"{what} must be an expression, got {type(e).__name__} '{sp.sstr(e)}'")
    return e


def certify(lhs: Any, rhs: Any, box: BoxSpec, relation: str = "<=", *, assumptions: sp.Basic | None = None,
            min_width: float = 1e-10, max_boxes: int = 200_000, budget_s: float = 60.0, prec: int = DEFAULT_PREC,
            integers: Iterable[str] = (), log_form: bool = False, monotonicity: bool = True,
            split: str = "width", keep_undecided: int = 5, claim: str | None = None) -> Certificate:
    """Decide `lhs <relation> rhs` for every point of `box` where `assumptions` hold.

    `lhs`, `rhs` and `assumptions` are SymPy objects or text as the CLI takes it ("2*x**2", "eta*lam < 1"; parsed
    safely, over the symbols `box` names). `box` maps every symbol of lhs, rhs and assumptions to (lo, hi) (floats,
    ints, or exact strings such as "1e-9" or "1/3"; a single number fixes the symbol). Symbols declared integer in
    SymPy (or named in `integers`) range over the integers of their interval. `min_width` is the relative width (per
    dimension, in log scale for intervals spanning orders of magnitude) below which a box is not bisected further;
    `max_boxes` and `budget_s` cap the work. With `log_form` the logarithms of the two sides are compared
    (expanded), which removes the dependency between products and powers; it needs both sides positive (where a
    logarithm's argument is not certainly positive the box stays undecided). A CERTIFIED answer is rigorous (Arb
    interval arithmetic at `prec` bits); a COUNTEREXAMPLE is a point where the relation certainly fails, with both
    sides re-evaluated by mpmath at 50 digits; INCONCLUSIVE lists a few undecided boxes.
    """
    _need_flint()
    start = time.perf_counter()
    rel = _normalize_relation(relation)
    if any(isinstance(x, str) for x in (lhs, rhs, assumptions)):  # text as the CLI takes it, parsed safely
        known = _known_symbols()
        syms = {name: known.get(name, sp.Symbol(name, real=True)) for name in box}
        lhs, rhs = (parse_expression(x, syms, what=what) if isinstance(x, str) else x
                    for x, what in ((lhs, "lhs"), (rhs, "rhs")))
        if isinstance(assumptions, str):
            assumptions = parse_expression(assumptions, syms, condition=True, what="assumptions")
    lhs_e, rhs_e = _as_expr(lhs, "lhs"), _as_expr(rhs, "rhs")
    cond = sp.true if assumptions is None else sp.sympify(assumptions)
    if isinstance(cond, bool):
        cond = sp.true if cond else sp.false
    if not isinstance(cond, sp.logic.boolalg.Boolean) or isinstance(cond, sp.Symbol):
        raise ParameterError(f"assumptions must be a condition such as eta*lam < 1, got '{sp.sstr(cond)}'")
    declared_integer = {s.name for e in (lhs_e, rhs_e, cond) for s in e.free_symbols if s.is_integer}
    (lhs_e, rhs_e, cond), canon = _unify_symbols([lhs_e, rhs_e, cond])
    small, big = (lhs_e, rhs_e) if rel in ("<=", "<") else (rhs_e, lhs_e)
    if log_form:
        diff = sp.expand_log(sp.log(big), force=True) - sp.expand_log(sp.log(small), force=True)
    else:
        diff = big - small

    integer = declared_integer | set(integers)
    all_dims = _make_dims(_tighten(box, cond), sorted(canon), integer)
    by_name = {d.name: d for d in all_dims}
    reduced, dropped = _reduce(diff, _root_env(all_dims), prec)
    search = _Search(reduced, cond, [by_name[n] for n in sorted({s.name for s in reduced.free_symbols}
                                                                  | {s.name for s in cond.free_symbols})],
                     canon, strict=rel in ("<", ">"), prec=prec, min_width=min_width, monotonicity=monotonicity,
                     split=split)
    with ctx.workprec(prec):
        search.run(max_boxes, start + budget_s)

    note = f"factors of certain sign dropped: {', '.join(dropped)}" if dropped else ""
    if log_form:
        note = "compared log(rhs) with log(lhs)" + ("; " + note if note else "")
    if search.witness is not None:
        status, stopped_by, undecided = COUNTEREXAMPLE, None, []
    elif search.heap or search.undecided:
        status, stopped_by = INCONCLUSIVE, search.stopped_by or "min_width"
        undecided = search.undecided + [b for _, _, b in sorted(search.heap)]
    else:
        status, stopped_by, undecided = CERTIFIED, None, []
        if search.stats["certified"] == 0 and search.has_cond:
            note = (note + "; " if note else "") + "the assumptions exclude the whole box (vacuous)"
    point, values = None, None
    if search.witness is not None:
        point = {d.name: search.witness.get(d.name, d.sample(d.lo, d.hi)) for d in all_dims}
        values = _point_values(lhs_e, rhs_e, point)
    rel_text = f"lhs {rel} rhs"
    return Certificate(
        status=status, relation=rel_text, lhs=sp.sstr(lhs_e), rhs=sp.sstr(rhs_e),
        box={d.name: (_show(box[d.name], 0), _show(box[d.name], 1)) for d in all_dims},
        assumptions=sp.sstr(cond) if search.has_cond else None, claim=claim,
        boxes_examined=search.stats["examined"], certified_boxes=search.stats["certified"],
        discarded_boxes=search.stats["discarded"], monotone_reductions=search.stats["monotone"],
        counterexample=point, counterexample_values=values,
        undecided=tuple({d.name: (lo, hi) for d, (lo, hi) in zip(search.dims, b, strict=True)}
                        for b in undecided[:keep_undecided]),
        undecided_count=len(undecided), stopped_by=stopped_by, seconds=time.perf_counter() - start, note=note)


def _forms(expr: sp.Expr) -> list[sp.Expr]:
    """Equivalent forms of `expr` whose enclosures are intersected: itself and, for a rational function, the
    cancelled quotient (one occurrence of each variable less often, e.g. 1/n - 1/(n+1) -> 1/(n^2 + n))."""
    forms = [expr]
    try:
        if expr.is_rational_function() and not expr.is_polynomial():
            alt = sp.factor_terms(sp.cancel(expr))
            if alt != expr and sp.count_ops(alt) <= 3 * sp.count_ops(expr) + 20:
                forms.append(alt)
    except (sp.PolynomialError, TypeError, ValueError, RecursionError):
        pass
    return forms


def _multi(fns: list[Compiled]) -> Compiled:
    if len(fns) == 1:
        return fns[0]

    def run(env: Env) -> Interval:
        out = fns[0](env)
        for fn in fns[1:]:
            out = _intersect(out, fn(env))
        return out
    return run


def _intersect(a: Interval, b: Interval) -> Interval:
    """Intersect two enclosures of one function; `a` decides where the function is defined."""
    if not (_finite(a) and _finite(b)):
        return a
    return (a[0].max(b[0]), a[1].min(b[1]))


class _Search:
    """Best-first interval branch and bound of `f >= 0` (or `f > 0`) over the feasible part of a box."""

    def __init__(self, f: sp.Expr, cond: sp.Basic, dims: list[_Dim], canon: Mapping[str, sp.Symbol], *,
                 strict: bool, prec: int, min_width: float, monotonicity: bool, split: str = "width"):
        if split not in ("width", "smear"):
            raise ParameterError(f"split must be 'width' or 'smear', got {split!r}")
        self.dims, self.strict, self.min_width, self.smear = dims, strict, min_width, split == "smear"
        self.names = [d.name for d in dims]
        self.f0 = _compiled(f, prec)  # the form itself: decides counterexamples
        self.f = _multi([_compiled(form, prec) for form in _forms(f)])
        self.has_cond = cond is not sp.true
        self.test = _compile_condition(cond, prec)
        cond_names = {s.name for s in cond.free_symbols}
        self.in_cond = [d.name in cond_names for d in dims]
        f_names = {s.name for s in f.free_symbols}
        self.grads: dict[int, Compiled] = {}
        if monotonicity:
            for k, d in enumerate(dims):
                if d.name not in f_names or d.lo == d.hi:
                    continue
                try:
                    g = sp.factor_terms(sp.diff(f, canon[d.name]))
                    if g.has(sp.Derivative, sp.Subs, sp.Heaviside, sp.sign, sp.DiracDelta, sp.re, sp.im):
                        continue
                    self.grads[k] = _multi([_compiled(form, prec) for form in _forms(g)])
                except (ParameterError, TypeError, ValueError, NotImplementedError):
                    continue
        # the mean-value form needs the derivative in every variable of f
        self.f_dims = [k for k, d in enumerate(dims) if d.name in f_names and d.lo != d.hi]
        self.mean_value = monotonicity and len(self.grads) == len(self.f_dims)
        self.stats = {"examined": 0, "certified": 0, "discarded": 0, "monotone": 0}
        self.heap: list[tuple[float, int, tuple]] = [(-math.inf, 0, tuple((d.lo, d.hi) for d in dims))]
        self.counter = 1
        self.undecided: list[tuple] = []
        self.stopped_by: str | None = None
        self.witness: dict[str, float | int] | None = None

    def ok(self, iv: Interval) -> bool:  # the claim certainly holds on the enclosure (both ends finite)
        return _finite(iv) and (bool(iv[0] > 0) if self.strict else bool(iv[0] >= 0))

    def bad(self, iv: Interval) -> bool:  # the claim certainly fails on the enclosure, or a side is undefined there
        if iv[0].is_nan() or iv[1].is_nan():
            return True
        return bool(iv[1] <= 0) if self.strict else bool(iv[1] < 0)

    def gradient(self, env: Env) -> dict[int, Interval]:
        return {k: g(env) for k, g in self.grads.items()}

    def collapse(self, bx: list, grad: dict[int, Interval], feasible: bool | None) -> bool:
        """Replace variables in which f is monotone by the end where f is smallest (the minimum's face)."""
        changed = False
        for k, gv in grad.items():
            lo, hi = bx[k]
            if lo == hi or (feasible is not True and self.in_cond[k]):
                continue
            if gv[0] >= 0:
                bx[k] = (lo, lo)
                changed = True
            elif gv[1] <= 0:
                bx[k] = (hi, hi)
                changed = True
        return changed

    def run(self, max_boxes: int, deadline: float) -> None:
        dims, stats = self.dims, self.stats
        while self.heap:
            if stats["examined"] >= max_boxes:
                self.stopped_by = "max_boxes"
                return
            if time.perf_counter() > deadline:
                self.stopped_by = "budget_s"
                return
            _, _, bx = heapq.heappop(self.heap)
            stats["examined"] += 1
            env = _env(dims, bx)
            feasible = self.test(env) if self.has_cond else True
            if feasible is False:
                stats["discarded"] += 1
                continue
            fv = self.f(env)
            if self.ok(fv):
                stats["certified"] += 1
                continue
            grad: dict[int, Interval] = {}
            if self.grads and _finite(fv):
                grad = self.gradient(env)
                work, reduced = list(bx), False
                for _ in range(len(dims)):
                    if not self.collapse(work, grad, feasible):
                        break
                    reduced = True
                    env = _env(dims, work)
                    grad = self.gradient(env)
                if reduced:
                    stats["monotone"] += 1
                    bx = tuple(work)
                    fv = self.f(env)
                    if self.ok(fv):
                        stats["certified"] += 1
                        continue
            point = tuple(d.sample(lo, hi) for d, (lo, hi) in zip(dims, bx, strict=True))  # inside bx
            penv = _env(dims, [(x, x) for x in point])
            fc = self.f0(penv)
            if self.mean_value and grad and _finite(fv):  # f(bx) in f(c) + sum_k df/dx_k(bx) (bx_k - c_k)
                mv = fc
                for k in self.f_dims:
                    lo, hi = bx[k]
                    if lo != hi:
                        c = arb(point[k])
                        mv = _add(mv, _mul(grad[k], (arb(lo) - c, arb(hi) - c)))
                fv = _intersect(fv, mv)
                if self.ok(fv):
                    stats["certified"] += 1
                    continue
            # a counterexample must lie in the declared box (the root box is rounded outward by an ulp)
            witness = tuple(d.clamp(x) for d, x in zip(dims, point, strict=True))
            if witness != point:
                penv = _env(dims, [(x, x) for x in witness])
                fc = self.f0(penv)
            if self.bad(fc) and (not self.has_cond or self.test(penv) is True):
                self.witness = dict(zip(self.names, witness, strict=True))
                return
            choice = self.choose(bx, grad, feasible)
            if choice is None:
                self.undecided.append(bx)
                self.stopped_by = self.stopped_by or "min_width"
                continue
            k, halves = choice
            key = float(fv[0]) if fv[0].is_finite() else -math.inf
            for half in halves:
                heapq.heappush(self.heap, (key, self.counter, bx[:k] + (half,) + bx[k + 1:]))
                self.counter += 1

    def choose(self, bx: tuple, grad: Mapping[int, Interval], feasible: bool | None) -> tuple[int, tuple] | None:
        """The dimension to bisect, and its halves; None when no dimension may be split.

        Widths are relative to the root box, in log scale for intervals spanning orders of magnitude. Where the
        assumptions are undecided the widest variable of the assumptions is cut (nothing else can decide
        them); otherwise the widest variable, or with split="smear" and known derivatives, the variable with
        the largest |df/dx| * width (its contribution to the width of the enclosure).
        """
        candidates = [k for k, (d, (lo, hi)) in enumerate(zip(self.dims, bx, strict=True))
                      if lo != hi and (d.integer or d.width(lo, hi) >= self.min_width)]
        if feasible is None:
            in_cond = [k for k in candidates if self.in_cond[k]]
            candidates = in_cond or candidates
        best, best_key = None, (-1.0, -1.0)
        for k in candidates:
            d, (lo, hi) = self.dims[k], bx[k]
            w = d.width(lo, hi)
            key = (w, w)
            if self.smear and feasible is True and k in grad:
                g = grad[k]
                smear = max(abs(float(g[0])), abs(float(g[1]))) * (hi - lo) if _finite(g) else math.inf
                key = (smear if not math.isnan(smear) else math.inf, w)
            if key > best_key:
                halves = d.split(lo, hi)
                if halves is not None:
                    best, best_key = (k, halves), key
        return best


def _root_env(dims: Sequence[_Dim]) -> dict[str, Interval]:
    return _env(dims, [(d.lo, d.hi) for d in dims])


def _show(spec: Any, i: int) -> str:
    v = spec[i] if isinstance(spec, (tuple, list)) else spec
    return repr(v) if isinstance(v, float) else str(v)


def _point_values(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[str, float | int]) -> dict[str, str]:
    values = {k: float(v) for k, v in point.items()}
    try:
        lv, rv = evaluate(lhs, values), evaluate(rhs, values)
    except Exception as err:  # the interval verdict stands; mpmath is only a cross-check
        return {"error": f"mpmath could not evaluate: {err}"}
    with mpmath.workdps(PRECISION_DPS):
        return {"lhs": mpmath.nstr(lv, 30), "rhs": mpmath.nstr(rv, 30), "rhs_minus_lhs": mpmath.nstr(rv - lv, 30)}


# ---- named claims ---------------------------------------------------------------------------------------------

mu = sp.Symbol("mu", positive=True)  # Gaussian mechanism: sensitivity / noise std
m = sp.Symbol("m", integer=True, nonnegative=True)  # n - i in Theorem 35 (Feldman et al.)
E0_ratio = sp.Symbol("E0_ratio", positive=True)  # E0 / (4 L^2/lam^2) in Lemma 6 (Chourasia et al.)
_Box = dict[str, tuple[str, str]]


@dataclass(frozen=True)
class Claim:
    """A named comparison between two symbolic bounds, to certify over a box.

    A claim with `parts` is certified termwise: it is the sum of the parts' inequalities (each part is a claim of
    its own), and it is CERTIFIED when every part is.
    """

    id: str
    description: str
    lhs: sp.Expr
    rhs: sp.Expr
    relation: str
    box: _Box
    assumptions: sp.Basic | None = None
    expected: str = CERTIFIED  # the status established when the claim was added
    finding: str = ""
    log_form: bool = False
    parts: tuple[str, ...] = ()


def _claims() -> dict[str, Claim]:
    from verify.symbols import E0, K, L, S, T, alpha, beta, d, delta, eta, i, lam, n, sigma

    unit = alpha * S**2 / (sigma**2 * n**2)
    cor1_unit_curvature = unit * (1 - sp.exp(-eta * K / 2))  # Corollary 1 at lam = 1
    cor2 = alpha * S**2 / ((2 - eta) * sigma**2 * n**2) * (1 - sp.exp(-(2 - eta) * eta * K / 2))
    composition = alpha * S**2 * eta * K / (4 * n**2 * sigma**2)
    eta_open = ("1e-9", "0.999999999")  # 0 < eta < 1
    scale_box = {"alpha": ("1.01", "1000"), "S": ("0.001", "1000"), "sigma": ("0.001", "1000"), "n": ("1", "1000000")}
    privacy_box = {"eta": eta_open, "K": ("1", "1000000"), **scale_box}
    y_star = "y* = 2 + W(-2 e^-2) = 1.593624 (the positive root of 1 - e^-y = y/2)"

    q = 1 - eta * lam
    lemma6_proof = beta / 2 * q**K * E0 + beta * d * sigma**2 * (1 - q**K) / lam
    lemma6_printed = 2 * beta * L**2 / lam**2 * sp.exp(-lam * eta * K) + 2 * beta * d * sigma**2 / lam
    step = sp.LessThan(eta * lam, sp.Rational(1, 2))
    lemma6_box = {"beta": ("0.01", "100"), "lam": ("0.01", "100"), "eta": ("1e-6", "50"), "K": ("1", "100000"),
                  "L": ("0.01", "100"), "d": ("1", "100000"), "sigma": ("0.001", "100")}

    feldman_unit = 2 * alpha * L**2 / sigma**2
    phi = lambda x: sp.erfc(-x / sp.sqrt(2)) / 2  # noqa: E731 - standard normal CDF
    eps_conv = alpha * mu**2 / 2 + sp.log(1 / delta) / (alpha - 1)  # Theorem 7 applied to R_alpha = alpha mu^2/2
    delta_exact = phi(mu / 2 - eps_conv / mu) - sp.exp(eps_conv) * phi(-mu / 2 - eps_conv / mu)

    claims = [
        Claim("chourasia2021.cor2_below_cor1",
              "Corollary 2 (loss 1/2||theta - x||^2) is never above Corollary 1 at lam = 1, for 0 < eta < 1",
              cor2, cor1_unit_curvature, "<=", privacy_box,
              finding="True: with x = eta K/2, (1 - exp(-c x))/c decreases in c and Corollary 2 has c = 2 - eta > 1, "
                      "Corollary 1 c = 1. Equality at eta = 1, so the box stops at eta = 1 - 1e-9."),
        Claim("chourasia2021.cor2_below_composition_after_crossing",
              "Corollary 2 is below the composition bound alpha S^2 eta K/(4 n^2 sigma^2) once eta K >= 3 "
              "(K an integer, 0 < eta < 1)",
              cor2, composition, "<=", privacy_box, sp.GreaterThan(eta * K, 3),
              finding=f"The crossing is at eta K (2 - eta) = 2 y*, {y_star}: K0 = 2 y*/((2 - eta) eta), 80.49 at "
                      "eta = 0.02. Over real eta K the threshold would be sup 2 y*/(2 - eta) = 2 y* = 3.187 "
                      "(eta -> 1), but K is an integer: eta K in [3, 3.187) needs K <= 3 and then eta >= 1, so "
                      "eta K >= 3 suffices, and is sharp (see ..._below_threshold)."),
        Claim("chourasia2021.cor2_below_composition_below_threshold",
              "The same with eta K >= 2.9: fails (K = 3, eta close to 1), so the integer threshold 3 is sharp",
              cor2, composition, "<=", privacy_box, sp.GreaterThan(eta * K, sp.Rational(29, 10)),
              expected=COUNTEREXAMPLE,
              finding="Counterexample at K = 3, eta = 0.98: eta K (2 - eta) = 3.0 < 2 y*."),
        Claim("chourasia2021.cor2_above_composition_before_crossing",
              "Below the crossing the order is reversed: Corollary 2 > composition when eta K <= 3/2 (< y*)",
              cor2, composition, ">", privacy_box, sp.LessThan(eta * K, sp.Rational(3, 2))),
        Claim("chourasia2021.cor2_below_composition_continuous_time",
              "Corollary 2 <= composition in diffusion time T = eta K (real) once T >= 16/5 > 2 y* = 3.18725",
              cor2.subs(K, T / eta), composition.subs(K, T / eta), "<=",
              {"eta": eta_open, "T": ("16/5", "1000000"), **scale_box},
              finding="With T real the threshold 2 y* = 3.18725 is needed: T >= 3.18 fails near eta = 1."),
        Claim("chourasia2021.lemma6_proof_below_printed",
              "Lemma 6: the proof's bound is never looser than the printed one, under E0 <= 4 L^2/lam^2 and "
              "0 < eta lam <= 1/2 (implied by eta <= lam/(2 beta^2) and beta >= lam); certified termwise",
              lemma6_proof, lemma6_printed, "<=", {**lemma6_box, "E0": ("0", "1e12")},
              sp.And(sp.LessThan(E0, 4 * L**2 / lam**2), step),
              parts=("chourasia2021.lemma6_proof_below_printed.contraction",
                     "chourasia2021.lemma6_proof_below_printed.noise"),
              finding="True, and strict: the proof's noise term beta d sigma^2 (1 - (1 - eta lam)^K)/lam is at most "
                      "half the printed 2 beta d sigma^2/lam, and (1 - eta lam)^K <= exp(-lam eta K) with "
                      "E0 <= 4 L^2/lam^2 gives the first term. A direct certification of the sum stalls: the "
                      "first term's margin vanishes to second order (K (eta lam)^2/2) while the noise term can be "
                      "1e-16 of it, hence the termwise parts."),
        Claim("chourasia2021.lemma6_proof_below_printed.contraction",
              "Lemma 6, first term: beta/2 (1 - eta lam)^K E0 <= 2 beta L^2/lam^2 exp(-lam eta K), with "
              "E0 = E0_ratio 4 L^2/lam^2, 0 < E0_ratio <= 1 (E0 = 0 is trivial), compared in log form",
              (beta / 2 * q**K * E0).subs(E0, E0_ratio * 4 * L**2 / lam**2),
              2 * beta * L**2 / lam**2 * sp.exp(-lam * eta * K), "<=",
              {**{k: v for k, v in lemma6_box.items() if k not in ("d", "sigma")}, "E0_ratio": ("1e-300", "1")},
              step, log_form=True),
        Claim("chourasia2021.lemma6_proof_below_printed.noise",
              "Lemma 6, noise term: beta d sigma^2 (1 - (1 - eta lam)^K)/lam <= 2 beta d sigma^2/lam",
              beta * d * sigma**2 * (1 - q**K) / lam, 2 * beta * d * sigma**2 / lam, "<=",
              {k: v for k, v in lemma6_box.items() if k != "L"}, step),
        Claim("feldman2018.theorem35_proof_below_printed",
              "Theorem 35: the proof's 2 alpha L^2/sigma^2 ((n-1)/n + 1/(n-i+1)) is at most the printed "
              "4 alpha L^2/sigma^2 for 1 <= i <= n (written with n = i + m, m = n - i >= 0)",
              (feldman_unit * ((n - 1) / n + 1 / (n - i + 1))).subs(n, i + m), 4 * alpha * L**2 / sigma**2, "<=",
              {"alpha": ("1.01", "1000"), "L": ("0.001", "1000"), "sigma": ("0.001", "1000"),
               "i": ("1", "1000000"), "m": ("0", "1000000")},
              finding="True with margin 2 alpha L^2/(sigma^2 n) at i = n; the printed bound is loose by a factor "
                      "2 at i = 1."),
        Claim("chourasia2021.theorem7_sound_for_gaussian",
              "Theorem 7 (RDP to DP) on the Gaussian mechanism at alpha = 2: at eps = alpha mu^2/2 + "
              "log(1/delta)/(alpha - 1) the exact delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) "
              "is at most delta",
              delta_exact, delta, "<=", {"mu": ("0.05", "4"), "delta": ("1e-10", "0.5"), "alpha": ("2", "2")},
              finding="True, with room: by AM-GM mu/2 - eps/mu <= -sqrt(2 log(1/delta)), so the first term alone "
                      "is below delta/sqrt(4 pi log(1/delta)). Exercises Arb's erfc far in the tail."),
    ]
    return {c.id: c for c in claims}


CLAIMS: dict[str, Claim] = _claims()


def run_claim(claim_id: str, **limits: Any) -> Certificate:
    """Certify a named claim of CLAIMS; `limits` go to `certify` (min_width, max_boxes, budget_s, prec, split)."""
    try:
        c = CLAIMS[claim_id]
    except KeyError:
        raise UnknownIdError(f"no claim '{claim_id}'; see `verify certify --list`") from None
    if not c.parts:
        return certify(c.lhs, c.rhs, c.box, c.relation, assumptions=c.assumptions, log_form=c.log_form,
                       claim=c.id, **limits)
    parts = [run_claim(p, **limits) for p in c.parts]
    status = CERTIFIED if all(p.certified for p in parts) else INCONCLUSIVE
    return Certificate(
        status=status, relation=f"lhs {c.relation} rhs", lhs=sp.sstr(c.lhs), rhs=sp.sstr(c.rhs),
        box={k: (str(lo), str(hi)) for k, (lo, hi) in c.box.items()},
        assumptions=sp.sstr(c.assumptions) if c.assumptions is not None else None, claim=c.id,
        boxes_examined=sum(p.boxes_examined for p in parts), certified_boxes=sum(p.certified_boxes for p in parts),
        discarded_boxes=sum(p.discarded_boxes for p in parts),
        monotone_reductions=sum(p.monotone_reductions for p in parts),
        undecided=tuple(b for p in parts for b in p.undecided)[:5],
        undecided_count=sum(p.undecided_count for p in parts),
        stopped_by=next((p.stopped_by for p in parts if p.stopped_by), None), seconds=sum(p.seconds for p in parts),
        note="termwise: " + "; ".join(f"{p.claim}: {p.status} ({p.boxes_examined} boxes)" for p in parts)
             + ("" if status == CERTIFIED else "; a part that fails does not refute the sum"))


# ---- command line: `verify certify` ---------------------------------------------------------------------------

def _known_symbols() -> dict[str, sp.Symbol]:
    out = {v.name: v for v in vars(_symbols).values() if isinstance(v, sp.Symbol)}
    out.update({mu.name: mu, m.name: m, E0_ratio.name: E0_ratio})
    return out


def parse_box(entries: Sequence[str]) -> dict[str, tuple[str, str]]:
    """`name=lo:hi` (or `name=value`) entries into a box."""
    box: dict[str, tuple[str, str]] = {}
    reserved = set(ALLOWED_FUNCTIONS) | set(ALLOWED_CONSTANTS) | set(PARSER_NAMES)
    for entry in entries:
        name, sep, rng = entry.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ParameterError(f"--box: expected name=lo:hi with a plain name, got {entry!r}")
        if name in reserved:
            raise ParameterError(f"--box: '{name}' is a function or constant name")
        lo, colon, hi = rng.partition(":")
        lo, hi = lo.strip(), (hi.strip() if colon else lo.strip())
        for v in (lo, hi):
            _fraction(v, f"--box {name}")
        if _fraction(lo, name) > _fraction(hi, name):
            raise ParameterError(f"--box {name}: lower end {lo} exceeds upper end {hi}")
        if name in box:
            raise ParameterError(f"--box: {name} given twice")
        box[name] = (lo, hi)
    return box
