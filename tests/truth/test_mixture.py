"""Subsampled-Gaussian and Gaussian-mixture Rényi divergences against an independent 50-digit mpmath quadrature."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.errors import ParameterError
from verify.results import Method
from verify.truth.gaussian import renyi_gaussian_1d
from verify.truth.mixture import Mixture1D, log_sum_exp, renyi_mixture_1d, sgm_renyi
from verify.truth.mixture_arb import enclose_renyi_mixture_gaussian
from verify.truth.mixture_quad import _log_pdf as _quad_log_pdf


def _reference_sgm(q: float, sigma: float, alpha: float, direction: str) -> float:
    """Direct 50-digit quadrature: E_Q[(P/Q)^a] = int N(0,s^2) L(z)^a and E_P[(Q/P)^a] = int N(0,s^2) L(z)^(1-a),
    with L(z) = (1-q) + q exp((2z-1)/(2 s^2)) the likelihood ratio P/Q."""
    with mpmath.workdps(50):
        q, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)
        power = a if direction == "pq" else 1 - a

        def integrand(z):
            ratio = (1 - q) + q * mpmath.exp((2 * z - 1) / (2 * s**2))
            return mpmath.npdf(z, 0, s) * ratio**power

        lo = (1 - a) - 12 * s if direction == "qp" else -12 * s
        hi = a + 12 * s if direction == "pq" else 12 * s
        points = [mpmath.ninf, *mpmath.linspace(lo, hi, int((hi - lo) / 6) + 2), mpmath.inf]
        return float(mpmath.log(mpmath.quad(integrand, points)) / (a - 1))


CASES = [(0.01, 1.1, 2), (0.01, 1.1, 16), (0.01, 1.1, 32), (0.01, 1.1, 2.5), (0.2, 0.7, 8), (0.5, 2.0, 3.7)]


@pytest.mark.parametrize("q, sigma, alpha", CASES)
@pytest.mark.parametrize("direction", ["pq", "qp"])
def test_sgm_matches_direct_quadrature(q, sigma, alpha, direction):
    ref = _reference_sgm(q, sigma, alpha, direction)
    t = sgm_renyi(q, sigma, alpha, direction)
    assert t.lower <= ref <= t.upper
    assert abs(t.value - ref) <= 1e-14 * abs(ref)
    exact_series = direction == "pq" and float(alpha).is_integer()
    assert t.method is (Method.EXACT if exact_series else Method.SERIES)


def test_sgm_max_is_the_larger_direction():
    both = [sgm_renyi(0.01, 1.1, 16, d) for d in ("pq", "qp")]
    t = sgm_renyi(0.01, 1.1, 16)
    assert t.value == max(b.value for b in both)
    assert t.value == both[0].value  # add/remove: P||Q dominates (Mironov et al. 2019, Thm 5)


@pytest.mark.parametrize("alpha", [2, 7, 2.5])
@pytest.mark.parametrize("direction", ["pq", "qp", "max"])
def test_q_one_reduces_to_gaussian(alpha, direction):
    t = sgm_renyi(1.0, 1.3, alpha, direction)
    exact = alpha / (2 * 1.3**2)
    assert t.lower <= exact <= t.upper or math.isclose(t.value, exact, rel_tol=1e-15)
    assert math.isclose(t.value, exact, rel_tol=1e-14)


def test_mixture_1d_gaussians_match_closed_form():
    # unequal variances: R_a(N(0.3, 1.2^2) || N(-0.4, 1.5^2)) in closed form (Gil et al. 2013)
    with mpmath.workdps(40):
        exact = float(renyi_gaussian_1d(0.3, 1.44, -0.4, 2.25, 3.5))
    t = renyi_mixture_1d([1], [0.3], [1.2], [1], [-0.4], [1.5], 3.5)
    assert t.lower <= exact <= t.upper and math.isclose(t.value, exact, rel_tol=1e-13)


def test_mixture_1d_general_matches_direct_quadrature():
    wp, mp_, sp = [0.3, 0.7], [-1.0, 0.5], [0.8, 1.1]
    wq, mq, sq = [0.6, 0.4], [0.0, 2.0], [1.0, 1.3]
    alpha = 4.5
    with mpmath.workdps(50):
        def dens(z, w, m, s):
            return mpmath.fsum(wi * mpmath.npdf(z, mi, si) for wi, mi, si in zip(w, m, s, strict=True))

        points = [mpmath.ninf, *mpmath.linspace(-15, 15, 11), mpmath.inf]
        integral = mpmath.quad(lambda z: dens(z, wp, mp_, sp) ** alpha * dens(z, wq, mq, sq) ** (1 - alpha), points)
        ref = float(mpmath.log(integral) / (alpha - 1))
    t = renyi_mixture_1d(wp, mp_, sp, wq, mq, sq, alpha)
    assert t.method is Method.SERIES
    assert t.lower <= ref <= t.upper and math.isclose(t.value, ref, rel_tol=1e-13)


def test_mixture_1d_infinite_when_q_too_narrow():
    # alpha/sp^2 + (1-alpha)/sq^2 < 0: the integral diverges in the tails
    t = renyi_mixture_1d([1], [0.0], [2.0], [1], [0.0], [1.0], 3)
    assert t.value == math.inf


@pytest.mark.parametrize("kwargs, name", [
    (dict(q=0.01, sigma=1.1, alpha=1.0), "alpha"),
    (dict(q=0.01, sigma=1.1, alpha=float("nan")), "alpha"),
    (dict(q=0.01, sigma=0.0, alpha=2), "sigma"),
    (dict(q=0.0, sigma=1.0, alpha=2), "q"),
    (dict(q=1.5, sigma=1.0, alpha=2), "q"),
    (dict(q=float("nan"), sigma=1.0, alpha=2), "q"),
])
def test_sgm_rejects_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        sgm_renyi(**kwargs)


def test_mixture_1d_rejects_bad_weights():
    with pytest.raises(ParameterError, match="weights"):
        renyi_mixture_1d([0.5, 0.6], [0, 1], [1, 1], [1], [0], [1], 2)
    with pytest.raises(ParameterError, match="sds"):
        renyi_mixture_1d([1], [0], [-1], [1], [0], [1], 2)


def test_float_log_density_and_masses_match_mpmath():
    """Mixture1D's float log density (max-shifted log-sum-exp) and interval masses (infinite ends included) against
    40-digit mpmath, inside their rounding bounds."""
    mix = Mixture1D.of([0.2, 0.3, 0.5], [-3.0, 0.0, 40.0], [0.5, 2.0, 1.0])
    z = np.array([-60.0, -3.0, 0.1, 20.0, 40.0, 300.0])
    a = np.array([-math.inf, -3.5, 0.0, 39.0, 100.0, -math.inf])
    b = np.array([-2.0, 1.0, 45.0, math.inf, math.inf, math.inf])
    with mpmath.workdps(40):
        def pdf(x):
            return mpmath.fsum(w * mpmath.npdf(x, m, s) for w, m, s in zip(mix.weights, mix.means, mix.sds,
                                                                            strict=True))

        def cdf(x):
            return mpmath.fsum(w * mpmath.ncdf(x, m, s) for w, m, s in zip(mix.weights, mix.means, mix.sds,
                                                                            strict=True))

        log_ref = [float(mpmath.log(pdf(mpmath.mpf(x)))) for x in z]
        mass_ref = [float(cdf(mpmath.mpf(v)) - cdf(mpmath.mpf(u))) for u, v in zip(a, b, strict=True)]
    log_pdf = mix.log_pdf_np(z)
    for got, ref in zip(log_pdf, log_ref, strict=True):
        assert abs(got - ref) <= 2.0**-52 * (20 + 4 * abs(ref))
    for got, ref in zip(mix.mass(a, b), mass_ref, strict=True):
        assert got == pytest.approx(ref, rel=1e-14, abs=1e-300)


def test_log_sum_exp_against_mpmath():
    x = np.array([[0.0, -1e-20, -700.0], [-np.inf, -np.inf, -np.inf], [800.0, 799.0, -5.0],
                  [-1000.0, -1001.0, -np.inf]])
    got = log_sum_exp(x, axis=1)
    assert got[1] == -math.inf
    for row, value in zip(x[[0, 2, 3]], got[[0, 2, 3]], strict=True):
        with mpmath.workdps(40):
            ref = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(v)) for v in row if v > -math.inf))
        assert abs(value - float(ref)) <= 2.0**-53 * (2 * 3 + 2 + abs(float(ref)))
    assert np.array_equal(log_sum_exp(x.T, axis=0), got)


@pytest.mark.parametrize(("weights", "means", "alpha"), [
    ([0.1, 0.2, 0.3, 0.4], [0.5, -0.3, 0.5, 1.0], 3),  # two components share a mean: merged before the expansion
    ([0.25] * 4, [0.2] * 4, 2),
    ([0.5, 0.5], [-1.0, 1.5], 6)])
def test_integer_order_closed_form_against_mpmath(weights, means, alpha):
    """enclose_renyi_mixture_gaussian against a 40-digit quadrature of int P^a Q^(1-a), Q = N(t, s^2), the float
    weights normalised by their exact sum as the enclosure does."""
    s, target = 0.8, 0.1
    with mpmath.workdps(40):
        total = mpmath.fsum(mpmath.mpf(w) for w in weights)  # the exact sum of the float weights (normalised too)

        def integrand(z):
            p = mpmath.fsum(w * mpmath.npdf(z, m, s) for w, m in zip(weights, means, strict=True)) / total
            return p**alpha * mpmath.npdf(z, target, s) ** (1 - alpha)

        ref = mpmath.log(mpmath.quad(integrand, [mpmath.ninf, -10, 0, 10, mpmath.inf])) / (alpha - 1)
        enc = enclose_renyi_mixture_gaussian(weights, means, s, target, alpha, 128)
        assert float(enc.upper - enc.lower) <= 1e-25
        assert mpmath.mpf(enc.lower.mid().str(40, radius=False)) - ref == pytest.approx(0, abs=1e-25)


@pytest.mark.parametrize("k", [1, 5, 8, 40, 300])
def test_quadrature_log_density_against_mpmath(k):
    """mixture_quad's log density (in-order sums below 8 components, halving sums above) within a few units in the
    last place of 1 + |value| of a 40-digit mpmath evaluation."""
    rng = np.random.default_rng(k)
    weights = rng.random(k) + 0.1
    weights /= weights.sum()
    means, sds = rng.normal(size=k) * 3, rng.random(k) + 0.3
    x = np.linspace(-40.0, 40.0, 97)
    got = _quad_log_pdf(x, weights, means, sds)
    with mpmath.workdps(40):
        for xi, value in zip(x, got, strict=True):
            ref = mpmath.log(mpmath.fsum(w * mpmath.npdf(xi, m, s) for w, m, s in zip(weights, means, sds,
                                                                                    strict=True)))
            assert abs(value - float(ref)) <= 2.0**-52 * (8 + 2 * abs(float(ref)))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_integer_order_closed_form_against_every_sequence(k, alpha, seed):
    """enclose_renyi_mixture_gaussian (multisets, shared partial products) against the integral of P^a Q^(1-a)
    expanded over every ordered alpha-tuple of components (k^alpha terms, no multinomial coefficients), 40 digits:
    int prod_j w_(i_j) N(mu_(i_j), s^2) N(t, s^2)^(1 - alpha) = prod w e^(-sum nu^2/(2 s^2)) e^((sum nu)^2/(2 s^2))."""
    rng = np.random.default_rng(seed)
    weights, means = list(rng.uniform(0.05, 1.0, k)), list(rng.uniform(-2.0, 2.0, k))
    s, target = float(rng.uniform(0.3, 3.0)), float(rng.uniform(-1.0, 1.0))
    with mpmath.workdps(40):
        total = mpmath.fsum(mpmath.mpf(w) for w in weights)
        integral = mpmath.mpf(0)
        for picks in itertools.product(range(k), repeat=alpha):
            nu = [mpmath.mpf(means[i]) - mpmath.mpf(target) for i in picks]
            weight = mpmath.fprod(mpmath.mpf(weights[i]) / total for i in picks)
            cross = mpmath.fsum(nu) ** 2 - mpmath.fsum(v * v for v in nu)
            integral += weight * mpmath.exp(cross / (2 * mpmath.mpf(s) ** 2))
        ref = mpmath.log(integral) / (alpha - 1)
        enc = enclose_renyi_mixture_gaussian(weights, means, s, target, alpha, 128)
        lower, upper = (mpmath.mpf(e.mid().str(45, radius=False)) for e in (enc.lower, enc.upper))
        assert lower - mpmath.mpf(10) ** -30 <= ref <= upper + mpmath.mpf(10) ** -30
        assert upper - lower <= mpmath.mpf(10) ** -25 * max(1, abs(ref))
