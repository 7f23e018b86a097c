"""f_a(l) = e^(a l) - a e^l + a - 1 >= 0, in log space and without cancellation.

Every Rényi integral in verify.truth is written as J = int Q f_a(log P/Q) = int P^a Q^(1-a) - 1 (int P = int Q), so
that R_a = log1p(J)/(a - 1) never subtracts 1 from a number near 1. With b = a - 1,

    f_a(l) = b g(l) + e^l h(b l),  g(l) = l e^l - expm1(l) >= 0,  h(y) = expm1(y) - y >= 0,

(expand both sides), a sum of two non-negative terms, each evaluated by its Taylor series near 0 (|.| <= 0.1, ten
terms) and directly elsewhere, where the subtraction loses at most a factor 20; large arguments go through logs, so
nothing overflows. g depends on l alone and is shared by every order.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

_SMALL = 0.1  # Taylor series below this magnitude; the remainder after ten terms is below 0.1^12/12!
_TERMS = 10
_G = [(k - 1) / math.factorial(k) for k in range(2, _TERMS + 2)]  # g(l) = sum_{k>=2} (k-1) l^k / k!
_H = [1 / math.factorial(k) for k in range(2, _TERMS + 2)]  # h(y) = sum_{k>=2} y^k / k!
ROUNDING = 32.0  # a bound on f's float rounding error, in units of eps * f


def _series(x: np.ndarray, coeffs: list[float]) -> np.ndarray:
    total = np.zeros_like(x)
    for c in reversed(coeffs):  # Horner, in place: (total + c) * x
        total += c
        total *= x
    return total * x


def _branches(x: np.ndarray, series: list[float], middle, large) -> np.ndarray:
    """log of a function with the Taylor series `series` for |x| <= _SMALL, `middle(x)` up to 30 and `large(x)` beyond
    (NaN stays NaN): each branch evaluated on its own elements only."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = np.abs(x) <= _SMALL
    big = x > 30
    rest = ~(small | big)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[small] = np.log(np.maximum(_series(x[small], series), 0.0))
        out[rest] = np.log(np.maximum(middle(x[rest]), 0.0))
        out[big] = large(x[big])
    return out


def _log_g(x: np.ndarray) -> np.ndarray:
    """log(l e^l - expm1(l)); for large l: l + log(l - 1 + e^-l)."""
    return _branches(x, _G, lambda v: v * np.exp(v) - np.expm1(v), lambda v: v + np.log(v - 1 + np.exp(-v)))


def _log_h(y: np.ndarray) -> np.ndarray:
    """log(expm1(y) - y); for large y: y + log1p(-(1 + y) e^-y)."""
    return _branches(y, _H, lambda v: np.expm1(v) - v, lambda v: v + np.log1p(-(1 + v) * np.exp(-v)))


def log_excess(ell: ArrayLike, alpha: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(log f_a(l), log of the magnitude its float rounding error scales with), broadcast over `ell` and `alpha`
    (e.g. orders as a column against points as a row)."""
    a = np.asarray(alpha, dtype=float)
    x = np.asarray(ell, dtype=float)
    beta = a - 1
    with np.errstate(divide="ignore", invalid="ignore"):  # a NaN l stays NaN, without a warning
        log_f = np.logaddexp(np.log(beta) + _log_g(x), x + _log_h(beta * x))
    return log_f, log_f + math.log(ROUNDING)
