"""delta(eps), the Gaussian-DP mu and the trade-off function (f-DP): against scipy's normal quantiles, the
Neyman-Pearson tests solved with brentq, and the duality delta(eps) = sup_x [1 - f(x) - e^eps x]."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import optimize
from scipy.stats import norm

from verify.families import family
from verify.model import Quantity
from verify.truth.gaussian import gaussian_delta, gaussian_tradeoff
from verify.truth.numbers import arb_numbers
from verify.truth.subsampled_dp import sgm_delta, sgm_tradeoff


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("x", [1e-6, 0.05, 0.5, 0.95])
def test_gaussian_tradeoff_is_the_shifted_quantile(mu, x):
    reference = norm.cdf(norm.ppf(1 - x) - mu)
    with mpmath.workdps(30):
        assert float(gaussian_tradeoff(x, mu)) == pytest.approx(reference, rel=1e-9)
    with arb_numbers(128) as N:
        ball = gaussian_tradeoff(N.mpf(x), N.mpf(mu))
    assert float(ball.lower()) <= reference * (1 + 1e-12) and reference * (1 - 1e-12) <= float(ball.upper())


def _sampled_tradeoffs(x, q, s):
    """Both orders by the Neyman-Pearson half-lines, scipy only."""
    t_q = s * norm.ppf(1 - x)
    q_order = (1 - q) * norm.cdf(t_q / s) + q * norm.cdf((t_q - 1) / s)
    t_p = optimize.brentq(lambda t: (1 - q) * norm.cdf(t / s) + q * norm.cdf((t - 1) / s) - x, -60 * s - 1,
                          60 * s + 1, xtol=1e-14)
    return q_order, 1 - norm.cdf(t_p / s)


@pytest.mark.parametrize(("q", "sigma"), [(0.1, 1.0), (0.5, 0.5), (1.0, 2.0)])
@pytest.mark.parametrize("x", [0.01, 0.2, 0.7])
def test_sampled_gaussian_tradeoff_is_the_smaller_neyman_pearson_order(q, sigma, x):
    with mpmath.workdps(30):
        got = float(sgm_tradeoff(x, q, sigma))
    assert got == pytest.approx(min(_sampled_tradeoffs(x, q, sigma)), rel=1e-8)
    with arb_numbers(128) as N:
        ball = sgm_tradeoff(N.mpf(x), N.mpf(q), N.mpf(sigma))
    assert float(ball.lower()) <= got * (1 + 1e-12) and got * (1 - 1e-12) <= float(ball.upper())


@pytest.mark.parametrize(("q", "sigma", "eps"), [(0.1, 1.0, 0.5), (0.5, 0.7, 1.0), (1.0, 1.0, 0.3)])
def test_delta_is_the_convex_conjugate_of_the_tradeoff(q, sigma, eps):
    """delta(eps) = sup_x [1 - f(x) - e^eps x] for the smaller-order f, which is the larger order's delta."""
    xs = np.concatenate([np.logspace(-12, -1, 150), np.linspace(0.1, 1 - 1e-9, 150)])
    with mpmath.workdps(20):
        def gain(x):
            return 1 - float(sgm_tradeoff(x, q, sigma)) - math.exp(eps) * x
        i = int(np.argmax([gain(x) for x in xs]))
        best = optimize.minimize_scalar(lambda x: -gain(x), bounds=(xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)]),
                                        method="bounded", options={"xatol": 1e-14})
        conj = max(gain(xs[i]), -best.fun)
        delta = float(sgm_delta(eps, q, sigma))
    assert conj == pytest.approx(delta, rel=1e-6)
    assert conj <= delta * (1 + 1e-9)


def test_noisy_gd_is_mu_gdp_with_mu_squared_r2_and_its_curves_follow():
    fam = family("noisy_gd_quadratic")
    point = {"sigma": 0.7, "eta": 0.2, "n": 5, "K": 8, "S": 2.0, "lam": 0.5, "start_var": 0.1}
    mu = fam.truth(Quantity.GDP_MU, **point).value
    assert mu**2 == pytest.approx(fam.truth(Quantity.RENYI, alpha=2, **point).value, rel=1e-12)
    assert mu**2 * 3.5 / 2 == pytest.approx(fam.truth(Quantity.RENYI, alpha=3.5, **point).value, rel=1e-12)
    delta = fam.truth(Quantity.DP_DELTA, eps=0.4, **point).value
    assert delta == pytest.approx(norm.cdf(mu / 2 - 0.4 / mu) - math.exp(0.4) * norm.cdf(-mu / 2 - 0.4 / mu), rel=1e-9)
    beta = fam.truth(Quantity.TRADEOFF, type1=0.1, **point).value
    assert beta == pytest.approx(norm.cdf(norm.ppf(0.9) - mu), rel=1e-9)


def test_the_gaussian_mechanism_mu_and_the_composed_delta_bracket():
    sg = family("sampled_gaussian")
    assert sg.truth(Quantity.GDP_MU, q=1, sigma=4.0).value == 0.25
    with pytest.raises(ValueError, match="only for q = 1"):
        sg.truth(Quantity.GDP_MU, q=0.5, sigma=4.0)
    bracket = family("sampled_gaussian_composed").truth(Quantity.DP_DELTA, q=1, sigma=4.0, steps=16, eps=0.5)
    with mpmath.workdps(30):
        exact = float(gaussian_delta(0.5, 1.0))  # mu = sqrt(16)/4
    assert bracket.lower <= exact <= bracket.upper
