"""The bound language beyond SymPy's elementary functions: a finite sum and a minimum over an integer range.

`FiniteSum(body, (k, lo, hi))` is sum_{k = lo}^{hi} body and `RangeMin(body, (k, lo, hi))` is min_{lo <= k <= hi} body,
with lo and hi integer-valued expressions of the bound's symbols (e.g. min over the split point t of a composition,
`RangeMin(t*a + (K - t)*b, (t, 1, K))`). Both evaluate term by term in mpmath (the checker), in floats (the fast
filter) and in Arb intervals (verify.certify, for the rigorous fallback): the range must be fixed at the point, and
at most MAX_TERMS long. Users write them as `Sum(body, k, lo, hi)` and `MinOver(body, k, lo, hi)` (verify.parsing).
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits

from verify.errors import ParameterError, ResourceLimitError, count_text
from verify.truth.numbers import _mp_ncdf_inv

MAX_TERMS = 100_000


def integer_range(lo: Any, hi: Any) -> range:
    """range(lo, hi + 1) for integer-valued lo, hi (mpmath, float or int); a ParameterError otherwise."""
    ends = []
    for name, v in (("lower", lo), ("upper", hi)):
        x = float(v)
        if not math.isfinite(x) or x != math.floor(x):
            raise ParameterError(f"the {name} end of a sum or min range must be an integer, got {v}")
        ends.append(int(x))
    if ends[1] - ends[0] + 1 > MAX_TERMS:  # well defined, too long to evaluate here: a cap (it was "undefined")
        raise ResourceLimitError(f"a sum or min range has {count_text(ends[1] - ends[0] + 1)} terms, more than "
                                 f"{MAX_TERMS}")
    return range(ends[0], ends[1] + 1)


def _range_min(values: Any) -> Any:
    values = list(values)
    if not values:
        raise ParameterError("a min over an empty integer range")
    return min(values)


def _range_sum(values: Any) -> Any:
    return sum(values, 0)


def _erfcinv(y: Any) -> Any:
    """erfc^-1(y) for 0 < y < 2 as -Phi^-1(y/2)/sqrt(2), with Phi^-1 accurate in the tail (erfinv(1 - y) rounds
    1 - 1e-300 to 1); 0 and 2 give +inf and -inf; a float in gives a float out (the float filter), else an mpf."""
    import mpmath

    y_mp = mpmath.mpf(y)
    if not 0 <= y_mp <= 2:
        raise ValueError(f"erfcinv is defined on [0, 2], got {y}")
    out = -_mp_ncdf_inv(y_mp / 2) / mpmath.sqrt(2)
    return float(out) if isinstance(y, float) else out


def _erfinv(y: Any) -> Any:
    """erf^-1(y) for -1 < y < 1 (mpmath's); a float in gives a float out."""
    import mpmath

    out = mpmath.erfinv(mpmath.mpf(y))
    return float(out) if isinstance(y, float) else out


def _as_given(out: Any, *args: Any) -> Any:
    """`out` (an mpf) as a float unless an argument is an mpmath number (the float filter passes floats and ints)."""
    import mpmath

    return out if any(isinstance(a, mpmath.mpf) for a in args) else float(out)


def binomial(n: Any, k: Any) -> Any:
    """SymPy's binomial(n, k) at real numbers, the bound language's meaning however the call was written (SymPy
    folds a constant one exactly; lambdify would print Gamma(n + 1)/(Gamma(k + 1) Gamma(n - k + 1)), whose poles made
    binomial(2, 3) or binomial(n, -1) undefined): 1 at k = 0; 0 at an integer k < 0 and at integers 0 <= n < k;
    (-1)^k C(k - n - 1, k) at a negative integer n and an integer k > 0; undefined (ValueError) at a negative integer
    n and a k that is not an integer; else the Gamma ratio with 1/Gamma(n - k + 1) = 0 at its poles. A float in gives
    a float out (the float filter), an mpf an mpf at the working precision."""
    import mpmath

    x, y = mpmath.mpf(n), mpmath.mpf(k)
    if not (mpmath.isfinite(x) and mpmath.isfinite(y)):
        raise ValueError(f"binomial({n}, {k}) of a non-finite argument")
    if y == 0:
        out = mpmath.mpf(1)
    elif y < 0 and mpmath.isint(y):
        out = mpmath.mpf(0)
    elif x < 0 and mpmath.isint(x):
        if not mpmath.isint(y):
            raise ValueError(f"binomial({n}, {k}) is undefined: a negative integer n and a k that is not an integer")
        out = mpmath.gamma(y - x) * mpmath.rgamma(y + 1) * mpmath.rgamma(-x)
        out = -out if int(y) % 2 else out
    else:
        out = mpmath.gamma(x + 1) * mpmath.rgamma(y + 1) * mpmath.rgamma(x - y + 1)
    return _as_given(out, n, k)


def harmonic(x: Any) -> Any:
    """The harmonic number H_x = digamma(x + 1) + Euler's gamma at a real x, as SymPy's harmonic (undefined,
    ValueError, at a negative integer); a float in gives a float out."""
    import mpmath

    return _as_given(mpmath.harmonic(mpmath.mpf(x)), x)


HELPERS = {"_verify_range": integer_range, "_verify_min": _range_min, "_verify_sum": _range_sum,
           "erfcinv": _erfcinv, "erfinv": _erfinv, "binomial": binomial, "harmonic": harmonic}
"""The names the lambdified code of these classes calls (verify.model passes them to lambdify, which then prints
a call of each by its name rather than a rewrite)."""


class _OverRange:
    """Printing for lambdify: a generator over the validated integer range, reduced by a helper. SymPy merges a sum
    of a sum (a min of a min) into one object with several limits, innermost first: each becomes a nested generator.
    Indices are printed as _verify_index_<name>, so that no index shadows a name of the printed code (an index `e`
    is not mpmath's e, an index `max` not the builtin)."""

    _reduce = ""

    def _code(self, printer: Any) -> str:
        safe = {k: sp.Symbol(f"_verify_index_{k.name}", integer=True) for k, *_ in self.limits}
        code = printer._print(self.function.xreplace(safe))
        for k, lo, hi in self.limits:
            code = (f"{self._reduce}(({code}) for {printer._print(safe[k])} in "
                    f"_verify_range({printer._print(lo.xreplace(safe))}, {printer._print(hi.xreplace(safe))}))")
        return code

    def _mpmathcode(self, printer: Any) -> str:
        return self._code(printer)

    def _pythoncode(self, printer: Any) -> str:
        return self._code(printer)

    def _lambdacode(self, printer: Any) -> str:
        return self._code(printer)

    def _numpycode(self, printer: Any) -> str:
        return self._code(printer)


class FiniteSum(_OverRange, sp.Sum):
    """sum_{k = lo}^{hi} body, k an integer index."""

    _reduce = "_verify_sum"


class RangeMin(_OverRange, ExprWithLimits):
    """min_{lo <= k <= hi} body, k an integer index."""

    _reduce = "_verify_min"
    is_commutative = True

    def _eval_is_real(self) -> bool | None:
        return self.function.is_real

    def _eval_is_positive(self) -> bool | None:
        return self.function.is_positive

    def _eval_is_nonnegative(self) -> bool | None:
        return self.function.is_nonnegative


def index_symbol(name: str) -> sp.Symbol:
    """The integer index of a sum or min range."""
    return sp.Symbol(name, integer=True)
