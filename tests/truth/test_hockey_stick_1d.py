"""The hockey stick of 1-D Gaussian mixtures against independent references: the Gaussian closed form (Balle & Wang
2018), the subsampled Gaussian's half-line closed form, and mpmath quadrature of (p - e^eps q)_+."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb, ctx

from verify.errors import ParameterError
from verify.truth.hockey_stick_1d import delta_float, delta_lower, enclose_delta, enclose_epsilon, epsilon_float
from verify.truth.mixture import Mixture1D


def gaussian_delta(eps, mu):
    """delta(eps) of N(mu, 1) against N(0, 1), 40 digits."""
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e**eps * mpmath.ncdf(-eps / mu - mu / 2)


def quadrature_delta(p: Mixture1D, q: Mixture1D, eps: float):
    """int (p - e^eps q)_+ by mpmath: sign changes of p - e^eps q located on a fine scan and refined by mpmath's
    bisection-type solver, then tanh-sinh on each positive stretch (no kink inside a panel)."""
    def gap(x):
        return sum(w * mpmath.npdf(x, m, s) for w, m, s in zip(p.weights, p.means, p.sds, strict=True)) - e * sum(
            w * mpmath.npdf(x, m, s) for w, m, s in zip(q.weights, q.means, q.sds, strict=True))

    with mpmath.workdps(30):
        e = mpmath.e ** mpmath.mpf(eps)
        width = max(p.sds + q.sds)
        lo, hi = min(p.means + q.means) - 30 * width, max(p.means + q.means) + 30 * width
        xs = mpmath.linspace(lo, hi, 3000)
        cuts = [lo] + [mpmath.findroot(gap, (a, b), solver="anderson") for a, b in zip(xs[:-1], xs[1:], strict=True)
                       if gap(a) * gap(b) < 0] + [hi]
        return sum(mpmath.quad(gap, [a, b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if gap((a + b) / 2) > 0)


def _mp(ball) -> mpmath.mpf:
    """The midpoint of an Arb ball of radius 0 as an mpf (exact)."""
    return mpmath.mpf(ball.mid().str(40, radius=False))


@pytest.mark.parametrize(("mu", "eps"), [(1.0, 0.5), (0.3, 1.0), (3.0, 2.0), (0.05, 0.01), (5.0, 10.0), (8.0, 25.0),
                                         (0.5, 0.0), (2.0, -0.5)])
def test_single_gaussian_matches_balle_wang(mu, eps):
    p, q = Mixture1D.of([1], [mu], [1]), Mixture1D.of([1], [0], [1])
    exact = gaussian_delta(eps, mu)
    lower, upper = enclose_delta(p, q, eps)
    assert _mp(lower) <= exact * (1 + 1e-25) and exact <= _mp(upper) * (1 + 1e-25)
    assert float(upper - lower) <= 1e-8 * float(exact) + 1e-300
    assert delta_float(p, q, eps) == pytest.approx(float(exact), rel=1e-9)


@pytest.mark.parametrize(("q_rate", "s", "eps"), [(0.01, 1.0, 0.1), (0.1, 0.8, 1.0), (0.5, 2.0, 0.3), (1.0, 1.5, 0.7)])
def test_subsampled_gaussian_matches_the_half_line_form(q_rate, s, eps):
    """P = (1-q) N(0, s^2) + q N(1, s^2) vs Q = N(0, s^2): the optimal set is {x > x*} (its loss is monotone)."""
    p = Mixture1D.of([1 - q_rate, q_rate], [0, 1], [s, s]) if q_rate < 1 else Mixture1D.of([1], [1], [s])
    q = Mixture1D.of([1], [0], [s])
    with mpmath.workdps(40):
        e = mpmath.e ** mpmath.mpf(eps)
        x = s**2 * mpmath.log((e - (1 - q_rate)) / q_rate) + mpmath.mpf(1) / 2
        exact = (1 - q_rate) * mpmath.ncdf(-x / s) + q_rate * mpmath.ncdf(-(x - 1) / s) - e * mpmath.ncdf(-x / s)
    lower, upper = enclose_delta(p, q, eps)
    assert float(lower) <= float(exact) * (1 + 1e-12) and float(exact) <= float(upper) * (1 + 1e-12)


@pytest.mark.parametrize(("p", "q", "eps"), [
    (Mixture1D.of([0.5, 0.5], [-1, 2], [1, 0.5]), Mixture1D.of([0.3, 0.7], [0, 1], [1.2, 0.8]), 0.2),
    (Mixture1D.of([0.2, 0.3, 0.5], [0, 0, 0], [1, 2, 3]), Mixture1D.of([1], [0.5], [2]), 0.05),  # several crossings
    (Mixture1D.of([0.5, 0.5], [0, 0], [1, 3]), Mixture1D.of([0.5, 0.5], [1, 1], [1, 3]), 0.4),
])
def test_mixtures_match_quadrature(p, q, eps):
    exact = quadrature_delta(p, q, eps)
    lower, upper = enclose_delta(p, q, eps)
    assert float(lower) <= float(exact) * (1 + 1e-10) and float(exact) <= float(upper) * (1 + 1e-10)
    assert delta_float(p, q, eps) == pytest.approx(float(exact), rel=1e-8)


@pytest.mark.parametrize(("mu", "delta"), [(1.0, 1e-5), (0.2, 1e-3), (4.0, 1e-10), (10.0, 0.3)])
def test_epsilon_inverts_the_gaussian_profile(mu, delta):
    p, q = Mixture1D.of([1], [mu], [1]), Mixture1D.of([1], [0], [1])
    with mpmath.workdps(40):
        exact = mpmath.findroot(lambda e: gaussian_delta(e, mu) - delta, epsilon_float(p, q, delta))
    enc = enclose_epsilon(p, q, delta)
    assert float(enc.lower) <= float(exact) <= float(enc.upper)
    assert float(enc.upper - enc.lower) <= 1e-6 * float(exact)


@pytest.mark.parametrize(("mu", "delta"), [(1.0, 1e-5), (0.2, 1e-3), (4.0, 1e-10), (10.0, 0.3), (0.01, 1e-3),
                                           (30.0, 1e-12)])
def test_float_epsilon_is_within_its_pad_of_the_gaussian_root(mu, delta):
    """The float eps(delta) is well inside pnsgd_dp's 1e-9 relative pad of the 40-digit root of Balle & Wang's form."""
    p, q = Mixture1D.of([1], [mu], [1]), Mixture1D.of([1], [0], [1])
    value = epsilon_float(p, q, delta)
    with mpmath.workdps(40):
        exact = mpmath.findroot(lambda e: gaussian_delta(e, mu) - delta, value)
    assert abs(value - exact) <= 1e-12 * exact


def test_an_almost_distinguishable_pair_is_an_error():
    p, q = Mixture1D.of([1], [300.0], [1]), Mixture1D.of([1], [0], [1])
    with pytest.raises(ParameterError, match="distinguishable"):
        epsilon_float(p, q, 1e-10)


def test_a_profile_below_delta_at_zero_has_eps_zero():
    p, q = Mixture1D.of([1], [1e-4], [1]), Mixture1D.of([1], [0], [1])
    assert epsilon_float(p, q, 1e-3) == 0.0
    assert enclose_epsilon(p, q, 1e-3).upper == 0


def test_bad_mixtures_and_deltas_are_errors():
    with pytest.raises(ParameterError, match="sds"):
        Mixture1D.of([1], [0], [0])
    with pytest.raises(ParameterError, match="finite"):
        Mixture1D.of([1], [math.nan], [1])
    with pytest.raises(ParameterError, match="delta"):
        epsilon_float(Mixture1D.of([1], [1], [1]), Mixture1D.of([1], [0], [1]), 1.0)


@pytest.mark.parametrize(("seed", "weight_error"), [(0, 0.0), (1, 0.0), (2, 1e-12), (3, 1e-6)])
def test_delta_lower_is_enclose_deltas_lower_end(seed, weight_error):
    """delta_lower (enclose_epsilon's check below the root) is the lower end of enclose_delta exactly (which the tests
    above hold to the closed forms and to mpmath quadrature)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    w = rng.random(k) + 0.1
    p = Mixture1D.of(w / w.sum(), rng.normal(0, 1.5, k), np.exp(rng.normal(0, 0.3, k)))
    q = Mixture1D.of([1], [0], [1])
    for eps in (0.0, 0.3, 1.7):
        lower, upper = enclose_delta(p, q, eps, weight_error=weight_error)
        got = delta_lower(p, q, eps, weight_error=weight_error)
        assert got.is_exact() and got == lower and lower <= upper
        if weight_error > 0:  # (1 - rho) delta~(eps + r) <= delta(eps), with r rounded up to a float
            with ctx.workprec(128):
                rho = arb(weight_error)
                shift = math.nextafter(float(((1 + rho) / (1 - rho)).log().upper()), math.inf)
                shifted = enclose_delta(p, q, eps + shift)[0] * (1 - rho)
                assert got == max(arb(shifted.lower()), arb(0))
