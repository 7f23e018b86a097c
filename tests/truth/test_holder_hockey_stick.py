"""verify.truth.holder_hockey_stick against a dense 40-digit grid over half-lines (mpmath) and the Gaussian hockey stick
by quadrature (scipy), and the research inventory's calibration failure (seed-004 section 4.6(i))."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from verify.truth.holder_hockey_stick import holder_hockey_stick


def _grid_sup(sigma, eps, p, step=1e-3):
    """max of g(t) = Phi(-(t - 1)/sigma) - e^eps Phi(-t/sigma)^(1 - 1/p) over 4001 points `step` apart around the
    Gaussian's crossing, in 40-digit mpmath. Only the points that a float evaluation cannot rule out are evaluated so:
    a float g errs by far less than 1e-9 of its two terms' sum, so a point whose float g plus that margin is below
    another's float g minus its margin is not the maximiser."""
    centre = 0.5 + eps * sigma**2
    ks = np.arange(-2000, 2001)
    t = centre + ks * step
    first, second = ndtr(-(t - 1) / sigma), np.exp(eps + (1 - 1 / p) * log_ndtr(-t / sigma))
    value, margin = first - second, 1e-9 * (first + second) + 1e-300
    kept = np.flatnonzero(value + margin >= np.max(value - margin))
    with mpmath.workdps(40):
        def g(t):
            return mpmath.ncdf(-(t - 1) / sigma) - mpmath.exp(eps) * mpmath.ncdf(-t / sigma) ** (1 - 1 / mpmath.mpf(p))
        exact = [g(mpmath.mpf(centre) + int(ks[i]) * step) for i in kept]
        assert all(abs(e - value[i]) <= margin[i] for e, i in zip(exact, kept, strict=True))  # the screen's premise
        return float(max(exact))


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


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 5.0), st.floats(0.0, 20.0), st.floats(1.05, 1e4), st.floats(-3.0, 3.0), st.floats(1e-6, 1.0))
def test_a_cells_bound_is_above_g_on_the_cell(sigma, eps, p, left, width):
    """_cell_upper (the lower of the monotone tails' bound and the mean-value bound) against g sampled densely on the
    cell in 40-digit mpmath: never below it."""
    from flint import arb

    from verify.truth.holder_hockey_stick import _cell_upper
    from verify.truth.numbers import arb_numbers

    a, b = left * sigma, left * sigma + width * sigma
    with arb_numbers(128) as N:
        bound = _cell_upper(arb(a), arb(b), N.mpf(sigma), N.mpf(eps), N.mpf(p))
    with mpmath.workdps(40):
        def g(t):
            return (mpmath.ncdf(-(t - 1) / sigma)
                    - mpmath.exp(eps) * mpmath.ncdf(-t / sigma) ** (1 - 1 / mpmath.mpf(p)))
        top = max(g(mpmath.mpf(a) + (mpmath.mpf(b) - a) * k / 200) for k in range(201))
    assert mpmath.mpf(bound.upper().mid().str(40, radius=False)) >= top - mpmath.mpf(10) ** -35


@settings(max_examples=6, deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.0, 8.0), st.sampled_from([1.5, 2.0, 10.0, 1e4]))
def test_generated_brackets_contain_the_grid_sup(sigma, eps, p):
    """grid max <= sup <= upper end, and the lower end (g at the float maximiser) is the sup to within the grid's
    resolution, for the float ends and the Arb enclosure."""
    low, high, enclose = holder_hockey_stick(sigma, eps, p)
    grid = max(_grid_sup(sigma, eps, p, step=2e-3 * sigma), 0.0)
    ends = enclose(64)
    for lower, upper in ((low, high), (float(ends.lower), float(ends.upper))):
        assert lower <= upper and upper >= grid
        assert lower >= grid * (1 - 1e-5) - 1e-300
