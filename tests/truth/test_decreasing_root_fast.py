"""decreasing_root from a float first guess (gaussian_dp_epsilon, sgm_dp_epsilon): on generated parameters over wide
ranges, the root agrees with the search without a guess (the old path, reached by removing the guess) and with an
independent reference, bisection at 100 digits on the textbook closed forms (thresholds of the likelihood ratio, no
band or log-domain rewriting), to the contract's tolerance 2^-80 max(1, |root|) (in units of 2^k for the Gaussian
at mu < 1), with delta(root) <= target at 100 digits. Guesses that are wrong, non-finite or useless fall back."""

from __future__ import annotations

import math
import random

import mpmath
import pytest

import verify.truth.gaussian as gaussian
import verify.truth.subsampled_dp as subsampled
from verify.truth.numbers import arb_numbers, decreasing_root, float_root

TOL = mpmath.mpf(2) ** -80


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return 10 ** rng.uniform(math.log10(lo), math.log10(hi))


def _smallest_below(delta_of, target, lo, hi, unit) -> mpmath.mpf:
    """The smallest e in [lo, hi] with delta_of(e) <= target (non-increasing), bisected to 2^-100 max(unit, |e|)."""
    if delta_of(lo) <= target:
        return lo
    while hi - lo > mpmath.mpf(2) ** -100 * max(unit, abs(hi)):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > target else (lo, mid)
    return hi


def _gaussian_delta_ref(eps, mu):
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _sgm_delta_ref(eps, q, s, one_sided: bool):
    """max over the orders of sup_S P(S) - e^eps Q(S), P = (1 - q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2), from the
    thresholds where the likelihood ratio crosses e^eps (no floor at 0: the signed hockey stick)."""
    if mpmath.expm1(eps) + q > 0:
        t = s**2 * mpmath.log(1 + mpmath.expm1(eps) / q) + mpmath.mpf(1) / 2  # P/Q > e^eps above t
        pq = (1 - q) * mpmath.ncdf(-t / s) + q * mpmath.ncdf((1 - t) / s) - mpmath.exp(eps) * mpmath.ncdf(-t / s)
    else:
        pq = -mpmath.expm1(eps)  # P/Q > e^eps everywhere
    if one_sided or not mpmath.expm1(-eps) + q > 0:
        return pq
    t = s**2 * mpmath.log(1 + mpmath.expm1(-eps) / q) + mpmath.mpf(1) / 2  # Q/P > e^eps below t
    qp = mpmath.ncdf(t / s) - mpmath.exp(eps) * ((1 - q) * mpmath.ncdf(t / s) + q * mpmath.ncdf((t - 1) / s))
    return max(pq, qp)


def _gaussian_case(seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    return _log_uniform(rng, 1e-6, 1e3), _log_uniform(rng, 1e-300, 0.5)


def _sgm_case(seed: int) -> tuple[float, float, float, bool, bool]:
    rng = random.Random(1000 + seed)
    q = 1.0 if rng.random() < 0.1 else _log_uniform(rng, 1e-4, 1.0)
    sigma, delta = _log_uniform(rng, 0.1, 300.0), _log_uniform(rng, 1e-300, 0.5)
    return q, sigma, delta, rng.random() < 0.3, rng.random() < 0.3


def _within_tol(value, ref, unit) -> bool:
    return abs(value - ref) <= TOL * max(unit, abs(ref)) * (1 + mpmath.mpf(2) ** -10)


def _count_evaluations(monkeypatch, module) -> list[int]:
    """Count the evaluations of f by the module's decreasing_root."""
    counts = [0]

    def counted(f, target, *args, **kwargs):
        def g(x):
            counts[0] += 1
            return f(x)
        return decreasing_root(g, target, *args, **kwargs)

    monkeypatch.setattr(module, "decreasing_root", counted)
    return counts


@pytest.mark.parametrize("seed", range(32))
def test_gaussian_root_matches_the_search_and_the_reference(seed, monkeypatch):
    mu, delta = _gaussian_case(seed)
    with mpmath.workdps(50):
        new = gaussian.gaussian_dp_epsilon(delta, mu)
        monkeypatch.setattr(gaussian, "_float_root", lambda *args: None)
        old = gaussian.gaussian_dp_epsilon(delta, mu)
    unit = mpmath.ldexp(1, gaussian._root_scale(mu))  # the tolerance is relative to max(1, eps / 2^k)
    with mpmath.workdps(100):
        m = mpmath.mpf(mu)
        ref = _smallest_below(lambda e: _gaussian_delta_ref(e, m), delta, mpmath.mpf(0),
                              m * m / 2 + m * mpmath.sqrt(-2 * mpmath.log(delta)), unit)
        assert _gaussian_delta_ref(new, m) <= delta
        assert _within_tol(new, ref, unit), (mu, delta, new, ref)
        assert _within_tol(new, old, unit), (mu, delta, new, old)


@pytest.mark.parametrize("seed", range(32))
def test_sgm_root_matches_the_search_and_the_reference(seed, monkeypatch):
    q, sigma, delta, one_sided, signed = _sgm_case(seed)
    with mpmath.workdps(50):
        new = subsampled.sgm_dp_epsilon(delta, q, sigma, one_sided, signed)
        monkeypatch.setattr(subsampled, "_float_root", lambda *args: None)
        old = subsampled.sgm_dp_epsilon(delta, q, sigma, one_sided, signed)
    with mpmath.workdps(100):
        q_, s_ = mpmath.mpf(q), mpmath.mpf(sigma)
        floor = mpmath.log1p(-mpmath.mpf(delta)) if signed else mpmath.mpf(0)
        hi = 1 / (2 * s_**2) + mpmath.sqrt(-2 * mpmath.log(delta)) / s_  # the Gaussian mechanism's eps is larger
        ref = _smallest_below(lambda e: _sgm_delta_ref(e, q_, s_, one_sided), delta, floor, hi, 1)
        assert _sgm_delta_ref(new, q_, s_, one_sided) <= delta
        assert _within_tol(new, ref, 1), (q, sigma, delta, one_sided, signed, new, ref)
        assert _within_tol(new, old, 1), (q, sigma, delta, one_sided, signed, new, old)


@pytest.mark.parametrize("seed", range(0, 32, 4))
def test_the_guess_closes_the_bracket_in_a_few_evaluations(seed, monkeypatch):
    """The float guess is what makes the root cheap: 3 or 4 evaluations of delta where the search took about 12."""
    mu, delta = _gaussian_case(seed)
    q, sigma, delta_sgm, one_sided, signed = _sgm_case(seed)
    counts = _count_evaluations(monkeypatch, gaussian)
    with mpmath.workdps(50):
        gaussian.gaussian_dp_epsilon(delta, mu)
        assert counts[0] <= 4, (mu, delta)
        counts = _count_evaluations(monkeypatch, subsampled)
        subsampled.sgm_dp_epsilon(delta_sgm, q, sigma, one_sided, signed)
        assert counts[0] <= 4, (q, sigma, delta_sgm, one_sided, signed)


@pytest.mark.parametrize("seed", range(3))
def test_arb_brackets_contain_the_reference(seed):
    """The rigorous brackets around the (now guessed) mpmath roots contain the 100-digit reference."""
    mu, delta = _gaussian_case(seed)
    q, sigma, delta_sgm, one_sided, signed = _sgm_case(seed)
    with arb_numbers(128):
        ball_g = gaussian.gaussian_dp_epsilon(delta, mu)
        ball_s = subsampled.sgm_dp_epsilon(delta_sgm, q, sigma, one_sided, signed)
    with mpmath.workdps(100):
        m, q_, s_ = mpmath.mpf(mu), mpmath.mpf(q), mpmath.mpf(sigma)
        ref_g = _smallest_below(lambda e: _gaussian_delta_ref(e, m), delta, mpmath.mpf(0),
                                m * m / 2 + m * mpmath.sqrt(-2 * mpmath.log(delta)), 1e-300)
        floor = mpmath.log1p(-mpmath.mpf(delta_sgm)) if signed else mpmath.mpf(0)
        ref_s = _smallest_below(lambda e: _sgm_delta_ref(e, q_, s_, one_sided), delta_sgm, floor,
                                1 / (2 * s_**2) + mpmath.sqrt(-2 * mpmath.log(delta_sgm)) / s_, 1e-300)
        for ball, ref in ((ball_g, ref_g), (ball_s, ref_s)):
            lower, upper = (mpmath.mpf(e.str(60, radius=False)) for e in (ball.lower(), ball.upper()))
            assert lower <= ref <= upper


def _exponential(root: mpmath.mpf, target: mpmath.mpf, rate: float):
    """delta(e) = target e^(rate (root - e)): delta <= target exactly from `root` on."""
    def f(e):
        d = target * mpmath.exp(rate * (root - e))
        return d, -rate * d
    return f


@pytest.mark.parametrize("guess", [None, 0.0, -1.0, math.nan, math.inf, -math.inf, 1e300, 5e-324, 1.0, 3.5,
                                   3.5 * (1 + 1e-15), 3.5 * (1 - 1e-9), 35.0])
@pytest.mark.parametrize("rate", [1e-3, 1.0, 40.0])
def test_any_guess_gives_the_contract(guess, rate):
    """Wrong, useless or non-finite guesses fall back to the search; every result is the end of a bracket no wider
    than the tolerance, past the root."""
    with mpmath.workdps(50):
        root, target = mpmath.mpf(3.5), mpmath.mpf("1e-7")
        value = decreasing_root(_exponential(root, target, rate), target, guess=guess)
        assert root <= value <= root + TOL * root * (1 + mpmath.mpf(2) ** -20)


@pytest.mark.parametrize("guess", [None, -0.5, -0.25, 0.0, 0.1])
def test_signed_roots_and_the_floor(guess):
    """A negative root above the floor, a root at the floor, and a root at 0 (delta(0) <= target) with guesses on
    either side."""
    with mpmath.workdps(50):
        target = mpmath.mpf("0.3")
        negative = mpmath.mpf(-0.25)
        assert negative <= decreasing_root(_exponential(negative, target, 2.0), target, floor=-1, guess=guess) \
            <= negative + TOL
        assert decreasing_root(_exponential(mpmath.mpf(-1), target, 2.0), target, floor=-1, guess=guess) == -1
        assert decreasing_root(_exponential(mpmath.mpf(-0.1), target, 2.0), target, guess=guess) == 0


def test_misleading_slopes_fall_back():
    """A slope of the wrong sign (or 0) stops the Newton steps from the guess; the search still finds the root."""
    with mpmath.workdps(50):
        root, target = mpmath.mpf(3.5), mpmath.mpf("1e-7")
        exact = _exponential(root, target, 1.0)
        for slope in (0, 1):
            value = decreasing_root(lambda e, s=slope: (exact(e)[0], mpmath.mpf(s)), target, guess=3.4)
            assert root <= value <= root + TOL * root * (1 + mpmath.mpf(2) ** -20)


def test_float_root_declines_what_it_cannot_bracket():
    assert float_root(lambda x: 1.0 - x, 0.0, 2.0) == 1.0
    assert float_root(lambda x: -x, 0.0, 1.0) is None  # h(lo) = 0: no root above lo to guess
    assert float_root(lambda x: 1.0 - x, 0.0, 0.5) is None  # no sign change
    assert float_root(lambda x: math.nan, 0.0, 1.0) is None
    assert float_root(lambda x: math.log(x - 0.5), 0.0, 1.0) is None  # raises: a guess that cannot be formed
    assert float_root(lambda x: math.inf if x < 0.25 else -math.inf, 0.0, 1.0) == pytest.approx(0.25)
