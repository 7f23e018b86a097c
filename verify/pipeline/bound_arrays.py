"""A theorem's bound over many points at once, as NumPy arrays (issue 49: grids as arrays).

The checker evaluates a bound in PRECISION_DPS digits (mpmath) at every point it must decide in Arb; a grid point the
float filter decides far from the truth needs only the bound's float. This module gives that float for a whole grid
from one vectorised evaluation of the bound's stable form (`verify.model.stable_form`: the expm1/log1p rewrites the
mpmath and Arb evaluations use) in interval arithmetic on NumPy arrays of x87 extended precision (np.longdouble, a
64-bit mantissa): every operation's result is widened outward (`_ROUNDING` ulps after an arithmetic operation, whose
round-to-nearest result is within half an ulp, `_LIBM` ulps after a function of the C library, whose long double
functions are accurate to a few ulps), so each point's interval holds the bound's exact value at its inputs (a
derived input, an mpf of PRECISION_DPS digits, enters as its own small interval). Where both ends of the interval
round to one float64, that float is the exact value correctly rounded, which is what the PRECISION_DPS-digit value
rounds to: the checker reports the same float either way.

A point is given its float only where the ends agree and the float is finite, normal and nonzero (an overflow, an
underflow, a zero, a sign the interval cannot decide, or a wide interval from cancellation: None, and that point's
bound is evaluated one by one in PRECISION_DPS digits as before). A bound with a function outside `_FUNCTIONS` (a
recursion, a special function) has no array form. Where the platform's longdouble is no wider than float64 the
intervals cannot be narrower than a float's spacing, and no point is given a float.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from verify.model import stable_form
from verify.stable_powers import Powm1, expm1, log1p

_LD = np.longdouble
_ROUNDING = 1  # ulps an arithmetic result is widened by (round to nearest: within half an ulp)
_LIBM = 8  # ulps a library function's result is widened by (glibc's long double exp, log, ... err by 1-3 ulps)
_EXTENDED = np.finfo(_LD).nmant > np.finfo(np.float64).nmant
MIN_POINTS = 50  # fewer points do not repay compiling the array form (SymPy's printer: ~10-50 ms a bound)


def _widen(lo: np.ndarray, hi: np.ndarray, ulps: int) -> tuple[np.ndarray, np.ndarray]:
    for _ in range(ulps):
        lo, hi = np.nextafter(lo, _LD(-np.inf)), np.nextafter(hi, _LD(np.inf))
    return lo, hi


class _Interval:
    """Arrays [lo, hi] of long doubles that hold the exact values; NaN where an operation is undefined on them."""

    __slots__ = ("hi", "lo")
    __array_priority__ = 1000  # numpy scalars defer to these operators

    def __init__(self, lo: Any, hi: Any) -> None:
        self.lo, self.hi = np.asarray(lo, dtype=_LD), np.asarray(hi, dtype=_LD)

    @staticmethod
    def of(value: Any) -> _Interval:
        if isinstance(value, _Interval):
            return value
        if isinstance(value, int) and abs(value) <= 2**63:
            return _Interval(_LD(value), _LD(value))
        raise TypeError(f"not an exact interval constant: {value!r}")  # a float constant would be a rounded one

    def _rounded(self, lo: np.ndarray, hi: np.ndarray) -> _Interval:
        return _Interval(*_widen(lo, hi, _ROUNDING))

    def __add__(self, other: Any) -> _Interval:
        o = _Interval.of(other)
        return self._rounded(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> _Interval:
        return _Interval(-self.hi, -self.lo)

    def __pos__(self) -> _Interval:
        return self

    def __sub__(self, other: Any) -> _Interval:
        return self + (-_Interval.of(other))

    def __rsub__(self, other: Any) -> _Interval:
        return _Interval.of(other) + (-self)

    def __mul__(self, other: Any) -> _Interval:
        o = _Interval.of(other)
        products = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return self._rounded(np.minimum.reduce(products), np.maximum.reduce(products))

    __rmul__ = __mul__

    def _reciprocal(self) -> _Interval:
        straddles = (self.lo <= 0) & (self.hi >= 0)
        lo, hi = _widen(1 / self.hi, 1 / self.lo, _ROUNDING)
        return _Interval(np.where(straddles, np.nan, lo), np.where(straddles, np.nan, hi))

    def __truediv__(self, other: Any) -> _Interval:
        return self * _Interval.of(other)._reciprocal()

    def __rtruediv__(self, other: Any) -> _Interval:
        return _Interval.of(other) * self._reciprocal()

    def __abs__(self) -> _Interval:
        lo = np.where(self.lo >= 0, self.lo, np.where(self.hi <= 0, -self.hi, 0))
        return _Interval(lo, np.maximum(np.abs(self.lo), np.abs(self.hi)))

    def __pow__(self, exponent: Any) -> _Interval:
        if isinstance(exponent, int):
            return _integer_power(self, exponent)
        return _exp(_Interval.of(exponent) * _log(self))  # a positive base only (log is NaN elsewhere)

    def __rpow__(self, base: Any) -> _Interval:
        return _exp(self * _log(_Interval.of(base)))


def _integer_power(x: _Interval, k: int) -> _Interval:
    if k < 0:
        return _integer_power(x, -k)._reciprocal()
    if k == 0:
        return _Interval(np.ones_like(x.lo), np.ones_like(x.hi))
    a, b = x.lo**k, x.hi**k
    if k % 2:  # odd: increasing
        lo, hi = a, b
    else:  # even: decreasing then increasing
        lo = np.where(x.lo >= 0, a, np.where(x.hi <= 0, b, 0))
        hi = np.maximum(a, b)
    return _Interval(*_widen(lo, hi, _LIBM))


def _increasing(fn: Callable[[np.ndarray], np.ndarray], floor: float | None = None) -> Callable[[_Interval], _Interval]:
    """An increasing library function on intervals; below `floor` (a log's 0, a sqrt's 0) the result is NaN."""

    def on(x: _Interval) -> _Interval:
        x = _Interval.of(x)
        lo, hi = _widen(fn(x.lo), fn(x.hi), _LIBM)
        if floor is not None:
            outside = x.lo < floor
            lo, hi = np.where(outside, np.nan, lo), np.where(outside, np.nan, hi)
        return _Interval(lo, hi)

    return on


_exp = _increasing(np.exp)
_expm1 = _increasing(np.expm1)
_log = _increasing(np.log, floor=0.0)
_log1p = _increasing(np.log1p, floor=-1.0)
_sqrt = _increasing(np.sqrt, floor=0.0)


def _maximum(a: Any, b: Any) -> _Interval:
    a, b = _Interval.of(a), _Interval.of(b)
    return _Interval(np.maximum(a.lo, b.lo), np.maximum(a.hi, b.hi))


def _minimum(a: Any, b: Any) -> _Interval:
    a, b = _Interval.of(a), _Interval.of(b)
    return _Interval(np.minimum(a.lo, b.lo), np.minimum(a.hi, b.hi))


def _reduce(fn: Callable[[Any, Any], _Interval], items: Sequence[Any]) -> _Interval:
    out = items[0]
    for item in items[1:]:
        out = fn(out, item)
    return _Interval.of(out)


def _constant(text: str) -> _Interval:
    """A real constant from its decimal digits (30 of them, far beyond a long double's 19), widened to hold it."""
    value = _LD(text)
    return _Interval(*_widen(value, value, _ROUNDING))


def _rational(p: int, q: int) -> _Interval:
    return _Interval.of(p) / _Interval.of(q)


def _powm1(u: Any, e: Any) -> _Interval:
    """(1 + u)^e - 1 as `Powm1.compute` has it: expm1(e log1p(u)) where 1 + u > 0 surely; the plain power of an
    integer e elsewhere; NaN otherwise."""
    u, e = _Interval.of(u), _Interval.of(e)
    stable = _expm1(e * _log1p(u))
    surely = u.lo > -1
    if np.all(surely):
        return stable
    whole = (e.lo == e.hi) & (e.lo == np.round(e.lo))
    plain = [_integer_power(1 + u, int(k)) - 1 if w else None for k, w in zip(e.lo.ravel(), whole.ravel(),
                                                                              strict=True)]
    lo = np.array([p.lo if p is not None else np.nan for p in plain], dtype=_LD).reshape(u.lo.shape)
    hi = np.array([p.hi if p is not None else np.nan for p in plain], dtype=_LD).reshape(u.lo.shape)
    return _Interval(np.where(surely, stable.lo, lo), np.where(surely, stable.hi, hi))


class _Printer(NumPyPrinter):
    """Code on `_Interval`s: every constant an exact or enclosing interval, every function its interval version."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": False})

    def _print_Integer(self, expr: sp.Integer) -> str:
        return f"_int({int(expr)})"

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f"_rational({expr.p}, {expr.q})"

    def _print_Pi(self, expr: sp.Expr) -> str:
        return f"_constant('{sp.N(expr, 30)}')"

    _print_Exp1 = _print_Pi

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exponent = self._print(expr.base), expr.exp
        if isinstance(exponent, sp.Integer):
            return f"_integer_power({base}, {int(exponent)})"
        if exponent == sp.S.Half:
            return f"_sqrt({base})"
        return f"({base})**({self._print(exponent)})"

    def _print_Powm1(self, expr: Powm1) -> str:
        return f"_powm1({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_Abs(self, expr: sp.Abs) -> str:
        return f"abs({self._print(expr.args[0])})"

    def _print_Max(self, expr: sp.Max) -> str:
        return f"_reduce(_maximum, [{', '.join(self._print(a) for a in expr.args)}])"

    def _print_Min(self, expr: sp.Min) -> str:
        return f"_reduce(_minimum, [{', '.join(self._print(a) for a in expr.args)}])"

    def _print_exp(self, expr: sp.exp) -> str:
        return f"_exp({self._print(expr.args[0])})"

    def _print_log(self, expr: sp.log) -> str:
        return f"_log({self._print(expr.args[0])})"

    def _print_expm1(self, expr: sp.Expr) -> str:
        return f"_expm1({self._print(expr.args[0])})"

    def _print_log1p(self, expr: sp.Expr) -> str:
        return f"_log1p({self._print(expr.args[0])})"


_NAMESPACE = {"_int": _Interval.of, "_rational": _rational, "_constant": _constant, "_integer_power": _integer_power,
              "_sqrt": _sqrt, "_powm1": _powm1, "_reduce": _reduce, "_maximum": _maximum, "_minimum": _minimum,
              "_exp": _exp, "_log": _log, "_expm1": _expm1, "_log1p": _log1p}
_FUNCTIONS = (sp.exp, sp.log, sp.Abs, sp.Max, sp.Min, Powm1)


def _has_array_form(expr: sp.Basic) -> bool:
    for node in sp.preorder_traversal(expr):
        if node.is_Atom:
            if not (node.is_Symbol or isinstance(node, sp.Rational) or node in (sp.pi, sp.E)):
                return False  # oo, zoo, nan, I, a Float left over: the digits decide
        elif not isinstance(node, (sp.Add, sp.Mul, sp.Pow, expm1, log1p, *_FUNCTIONS)):
            return False
    return True


_FORMS: dict[sp.Basic, tuple[tuple[str, ...], Callable] | None] = {}


def array_form(expr: sp.Basic) -> tuple[tuple[str, ...], Callable] | None:
    """(symbol names, interval function) of `expr`'s stable form, or None where it has none."""
    if expr not in _FORMS:
        _FORMS[expr] = _compile(expr) if _EXTENDED else None
    return _FORMS[expr]


def _compile(expr: sp.Basic) -> tuple[tuple[str, ...], Callable] | None:
    stable = stable_form(expr)
    if not isinstance(stable, sp.Expr) or not _has_array_form(stable):
        return None
    symbols = sorted(stable.free_symbols, key=str)
    try:
        fn = sp.lambdify(symbols, stable, modules=[_NAMESPACE], printer=_Printer())
    except Exception:  # noqa: BLE001 - a form the printer refuses: the digits decide every point
        return None
    return tuple(s.name for s in symbols), fn


def _input(values: list[Any]) -> _Interval:
    """Inputs as intervals: a float exactly; an int exactly where a long double holds it; an mpf (a derived value)
    as its float plus the float of the rest, widened by an ulp."""
    if all(type(v) is float for v in values):  # grid values: exact
        exact = np.array(values, dtype=_LD)
        return _Interval(exact, exact)
    lo, hi = np.empty(len(values), dtype=_LD), np.empty(len(values), dtype=_LD)
    for i, value in enumerate(values):
        if type(value) is float:
            lo[i] = hi[i] = value
            continue
        high = float(value)
        if isinstance(value, int):
            low = float(value - int(high)) if math.isfinite(high) else 0.0
        else:
            low = float(value - high) if math.isfinite(high) else 0.0  # exact before rounding to >= 53 bits
        point = _LD(high) + _LD(low)
        lo[i], hi[i] = np.nextafter(point, _LD(-np.inf)), np.nextafter(point, _LD(np.inf))
    return _Interval(lo, hi)


def bound_floats(expr: sp.Basic, rows: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """The float of `expr` at each of `rows` (symbol values: floats, or mpf for derived ones) where its interval
    proves it (see the module docstring), else None (that point's bound is evaluated in PRECISION_DPS digits); all
    None for fewer than MIN_POINTS rows."""
    form = array_form(expr) if len(rows) >= MIN_POINTS else None
    if form is None:
        return [None] * len(rows)
    names, fn = form
    if any(name not in row for row in rows for name in names):
        return [None] * len(rows)
    with np.errstate(all="ignore"):
        try:
            out = _Interval.of(fn(*(_input([row[n] for row in rows]) for n in names)))
        except Exception:  # noqa: BLE001 - e.g. an exponent the printer left as a float: the digits decide
            return [None] * len(rows)
        lo = np.broadcast_to(out.lo, (len(rows),)).astype(np.float64)
        hi = np.broadcast_to(out.hi, (len(rows),)).astype(np.float64)
        ok = (lo == hi) & np.isfinite(lo) & (np.abs(lo) >= np.finfo(np.float64).smallest_normal)
    return [float(v) if good else None for v, good in zip(lo, ok, strict=True)]
