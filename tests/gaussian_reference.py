"""The mu-GDP pair's exact delta(eps) and eps(delta) in mpmath: the independent reference of the accountant's tests."""

from __future__ import annotations

import mpmath


def gaussian_delta(eps, mu):
    """delta(eps) of the mu-GDP pair N(0, 1) vs N(mu, 1) (Dong, Roth & Su 2022, Cor. 2.13), at 40 digits."""
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def gaussian_epsilon(delta, mu):
    """the smallest eps >= 0 with delta(eps) <= delta (bisection: delta(eps) decreases)"""
    with mpmath.workdps(40):
        if gaussian_delta(0, mu) <= delta:
            return mpmath.mpf(0)
        lo, hi = mpmath.mpf(0), mu * mu / 2 + 10 * mu + 50
        for _ in range(150):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gaussian_delta(mid, mu) > delta else (lo, mid)
        return hi
