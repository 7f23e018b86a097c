"""verify.truth.holder_hockey_stick against a dense 40-digit grid over half-lines (mpmath) and the Gaussian hockey stick
by quadrature (scipy), and the research inventory's calibration failure (seed-004 section 4.6(i))."""

from __future__ import annotations

import math

import mpmath
import pytest
from scipy import integrate
from scipy.stats import norm

from verify.truth.holder_hockey_stick import holder_hockey_stick


def _grid_sup(sigma, eps, p, step=1e-3):
    with mpmath.workdps(40):
        def g(t):
            return mpmath.ncdf(-(t - 1) / sigma) - mpmath.exp(eps) * mpmath.ncdf(-t / sigma) ** (1 - 1 / mpmath.mpf(p))
        centre = 0.5 + eps * sigma**2
        return float(max(g(mpmath.mpf(centre) + k * step) for k in range(-2000, 2001)))


def _hockey_stick_quadrature(sigma, eps):
    def positive_part(y):
        return max(norm.pdf(y, 1, sigma) - math.exp(eps) * norm.pdf(y, 0, sigma), 0.0)
    return integrate.quad(positive_part, -10 * sigma, 1 + 10 * sigma, points=[0.5 + eps * sigma**2], limit=500,
                          epsabs=1e-14, epsrel=1e-12)[0]


@pytest.mark.parametrize(("sigma", "eps"), [(0.25, 19.38), (0.469, 7.557), (0.566, 6.262), (1.0, 3.544),
                                            (2.0, 0.5), (0.5, 0.0)])
@pytest.mark.parametrize("p", [1.5, 2, 10, 10_000])
def test_the_bracket_contains_the_grid_sup_and_sits_below_the_gaussian_hockey_stick(sigma, eps, p):
    low, high, _ = holder_hockey_stick(sigma, eps, p)
    grid = max(_grid_sup(sigma, eps, p), 0.0)
    assert low <= high
    assert low >= grid * (1 - 1e-9) - 1e-300
    assert high >= grid
    gaussian = _hockey_stick_quadrature(sigma, eps)
    assert high <= gaussian * (1 + 1e-8) + 1e-15
    if grid > 1e-12:  # the bracket is tight where the sup is visible
        assert high - low <= 0.01 * high


@pytest.mark.parametrize(("sigma", "eps"), [(0.469, 7.557), (1.0, 3.544)])
def test_large_p_is_the_gaussian_hockey_stick(sigma, eps):
    low, high, _ = holder_hockey_stick(sigma, eps, 1e12)
    assert low == pytest.approx(_hockey_stick_quadrature(sigma, eps), rel=1e-7)
    assert high == pytest.approx(low, rel=1e-7)


def test_the_classical_calibration_fails_at_mu_2():
    """Research 4.6(i): eps = sqrt(2 ln(1.25/delta)) mu at delta = 1e-5 gives the exact delta 1.94e-5 at mu = 2 (fails)
    and 5.3e-6 at mu = 1.5."""
    for mu, ref in [(2.0, 1.94e-5), (1.5, 5.3e-6)]:
        sigma = 1 / mu
        eps = math.sqrt(2 * math.log(1.25 / 1e-5)) / sigma
        low, high, _ = holder_hockey_stick(sigma, eps, 1e12)
        assert low == pytest.approx(ref, rel=0.02)


@pytest.mark.parametrize(("sigma", "eps", "p"), [(0.0, 1.0, 2), (1.0, -0.1, 2), (1.0, 1.0, 1.0), (math.nan, 1, 2)])
def test_bad_input_is_named(sigma, eps, p):
    with pytest.raises(ValueError, match="sigma|eps|exponent"):
        holder_hockey_stick(sigma, eps, p)
