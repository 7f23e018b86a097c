"""Gaussian smoothing of L||w|| (Theorem 33's construction): the closed forms of verify.truth.smoothing against
scipy's chi distribution and against f_hat integrated numerically on a grid of points."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import chi, norm

from verify.errors import ParameterError
from verify.truth.numbers import arb_numbers
from verify.truth.smoothing import smoothing_error, smoothness_constant


@pytest.mark.parametrize("d", [1, 2, 3, 10, 1000])
def test_the_error_is_L_times_the_mean_gaussian_norm(d):
    with mpmath.workdps(30):
        got = float(smoothing_error(mpmath.mpf(2), mpmath.mpf(0.3), d))
    assert got == pytest.approx(2 * 0.3 * chi(d).mean(), rel=1e-10)
    with arb_numbers(128) as N:
        ball = smoothing_error(N.mpf(2), N.mpf(0.3), d)
    assert float(ball.lower()) <= got * (1 + 1e-14) and got * (1 - 1e-14) <= float(ball.upper())


def _f_hat(w: float, L: float, lam: float) -> float:
    return integrate.quad(lambda z: L * abs(w + z) * norm.pdf(z, 0, lam), -12 * lam, 12 * lam, points=[-w],
                          epsabs=1e-13, epsrel=1e-12, limit=200)[0]


@pytest.mark.parametrize(("L", "lam"), [(1.0, 1.0), (3.0, 0.1)])
def test_one_dimension_against_numerical_smoothing(L, lam):
    ws = np.linspace(-4 * lam, 4 * lam, 81)
    values = [_f_hat(w, L, lam) for w in ws]
    gap = max(v - L * abs(w) for v, w in zip(values, ws, strict=True))
    with mpmath.workdps(30):
        assert gap == pytest.approx(float(smoothing_error(L, lam, 1)), rel=1e-8)
        smooth = float(smoothness_constant(L, lam, 1))
    h = lam * 1e-3
    curvature = max((_f_hat(w + h, L, lam) - 2 * _f_hat(w, L, lam) + _f_hat(w - h, L, lam)) / h**2
                    for w in np.linspace(-lam, lam, 21))
    assert curvature == pytest.approx(smooth, rel=1e-4)
    assert smooth == pytest.approx(math.sqrt(2 / math.pi) * L / lam, rel=1e-12)


def test_smoothness_is_one_dimensional_only():
    with pytest.raises(ParameterError, match="one dimension"):
        smoothness_constant(1.0, 1.0, 2)
