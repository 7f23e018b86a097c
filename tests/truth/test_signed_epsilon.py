"""The signed eps(delta) (negative once delta exceeds the total variation) of the sampled Gaussian, one step
(closed form) and composed (PLD bracket), against the Gaussian mechanism's hockey stick solved independently with
mpmath and against quadrature of the mixture's hockey stick."""

from __future__ import annotations

import math

import mpmath
import pytest
from scipy import integrate, optimize
from scipy.stats import norm

from verify.catalog import theorem
from verify.families import family
from verify.model import Quantity
from verify.testing.falsify import search_outcome
from verify.truth.numbers import arb_numbers
from verify.truth.pld import sgm_composed_epsilon
from verify.truth.subsampled_dp import sgm_dp_epsilon


def _gaussian_eps(mu: float, delta: float) -> float:
    """Root of Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu) = delta, any real e (the Gaussian mechanism's hockey
    stick, valid for negative e too), at 40 digits."""
    with mpmath.workdps(40):
        mu = mpmath.mpf(mu)

        def excess(e):
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - delta
        lo, hi = mpmath.log(1 - mpmath.mpf(delta)), mpmath.mpf(50)  # excess(lo) >= 0 > excess(hi): bisect
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        return float(hi)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-5, 0.3, 0.8, 0.95])
def test_one_step_gaussian_matches_the_independent_root(sigma, delta):
    ref = _gaussian_eps(1 / sigma, delta)
    with mpmath.workdps(40):
        got = float(sgm_dp_epsilon(delta, 1, sigma, signed=True))
        unsigned = float(sgm_dp_epsilon(delta, 1, sigma))
    assert got == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert got >= math.log1p(-delta)
    assert unsigned == pytest.approx(max(ref, 0.0), rel=1e-9, abs=1e-12)
    with arb_numbers(128) as N:
        ball = sgm_dp_epsilon(N.mpf(delta), N.mpf(1), N.mpf(sigma), signed=True)
    assert ball.lower() <= ref <= ball.upper() or abs(float(ball.mid()) - ref) < 1e-12


def _mixture_delta(eps: float, q: float, sigma: float) -> float:
    """max over both orders of the hockey stick of (1-q) N(0, s^2) + q N(1, s^2) vs N(0, s^2), by quadrature."""
    def p(x):
        return (1 - q) * norm.pdf(x, 0, sigma) + q * norm.pdf(x, 1, sigma)

    def q0(x):
        return norm.pdf(x, 0, sigma)
    lim = (-12 * sigma, 1 + 12 * sigma)
    pq = integrate.quad(lambda x: max(p(x) - math.exp(eps) * q0(x), 0.0), *lim, limit=400, epsabs=1e-13)[0]
    qp = integrate.quad(lambda x: max(q0(x) - math.exp(eps) * p(x), 0.0), *lim, limit=400, epsabs=1e-13)[0]
    return max(pq, qp)


@pytest.mark.parametrize(("q", "sigma", "delta"), [(0.5, 1.0, 0.6), (0.1, 0.5, 0.5), (0.9, 2.0, 0.9)])
def test_one_step_subsampled_negative_eps_solves_the_quadrature_hockey_stick(q, sigma, delta):
    with mpmath.workdps(40):
        got = float(sgm_dp_epsilon(delta, q, sigma, signed=True))
    assert got < 0
    root = optimize.brentq(lambda e: _mixture_delta(e, q, sigma) - delta, math.log1p(-delta) + 1e-12, 5.0,
                           xtol=1e-12)
    assert got == pytest.approx(root, abs=1e-7)


@pytest.mark.parametrize(("sigma", "steps", "delta"), [(4.0, 4, 0.8), (4.0, 16, 0.3), (2.0, 10, 0.5)])
def test_composed_bracket_contains_the_gaussian_root(sigma, steps, delta):
    """q = 1: T compositions of the Gaussian mechanism are one with mu = sqrt(T)/sigma."""
    ref = _gaussian_eps(math.sqrt(steps) / sigma, delta)
    b = sgm_composed_epsilon(delta, 1.0, sigma, steps, signed=True)
    assert b.lower <= ref <= b.upper
    assert b.upper - b.lower <= 2e-2
    assert b.lower >= math.log1p(-delta) - 1e-12


def test_the_families_give_the_signed_quantity_beside_the_floored_one():
    one = family("sampled_gaussian")
    signed = one.truth(Quantity.DP_EPSILON_SIGNED, q=0.5, sigma=1.0, delta=0.6).value
    floored = one.truth(Quantity.DP_EPSILON, q=0.5, sigma=1.0, delta=0.6).value
    assert signed < 0 == floored


@pytest.mark.parametrize("entry", ["thudi2024.rdp_to_dp.improved", "thudi2024.rdp_to_dp.classical"])
def test_the_falsifier_draws_the_conversion_order_it_checks(entry):
    """alpha is a parameter of the family's RDP truth but not of its eps(delta): the search must draw it as the
    theorem's own (an integer > 1, by the entry's assumptions), not exclude every point."""
    t = theorem(entry)
    outcome = search_outcome(t, t.applications[0], max_examples=20, budget_s=60)
    assert outcome.checked >= 15 and not outcome.excluded
    assert outcome.counterexample is None
