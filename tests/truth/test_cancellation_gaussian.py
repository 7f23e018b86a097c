"""Issue 21 §1, continued: the Gaussian closed forms (verify.truth.gaussian, verify.truth.pnsgd_gaussian) and the
noisy-GD f-DP truths built on them, at extreme scales, against independent references.

The references are the naive textbook formulas, written out here: the Rényi divergence through log-determinants,
delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), G_mu(x) = Phi(Phi^-1(1 - x) - mu) with
Phi^-1(1 - x) = sqrt(2) erfinv(1 - 2x), geometric sums (1 - r^n)/(1 - r), each evaluated by mpmath at a precision
above its cancellation (up to ~1300 digits). Floats must match to 1e-12 relative (absolutely where the value
underflows), Arb enclosures must contain the reference, tightly at 128 bits.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.families import family
from verify.model import Quantity
from verify.truth.gaussian import (
    gaussian_delta,
    gaussian_dp_epsilon,
    gaussian_tradeoff,
    renyi_gaussian,
    renyi_gaussian_1d,
)
from verify.truth.numbers import arb_numbers
from verify.truth.pnsgd_gaussian import cni_affine_renyi, pnmsgd_renyi, pnsgd_renyi

from .test_cancellation import exact, log_int, log_uniform  # the same generators and exact-ball reader

FEW = settings(max_examples=25, deadline=None, derandomize=True)
SOME = settings(max_examples=60, deadline=None, derandomize=True)
mpf = mpmath.mpf


def to_ball(x: mpmath.mpf):
    """An mpf (of any precision) as an exact Arb ball."""
    man, exp = (x if isinstance(x, mpmath.mpf) else mpf(x)).man_exp  # (mpf(x) would round x to the current precision)
    return arb((int(man), int(exp)))


def assert_float_close(value: float, ref, rel: float = 1e-12) -> None:
    f = float(ref)
    if math.isinf(f):
        assert value == f
    elif abs(f) < 1e-290:  # underflows (or subnormal): absolute
        assert abs(value - f) <= 1e-300, (value, mpmath.nstr(ref, 10))
    else:
        assert value == pytest.approx(f, rel=rel), (value, mpmath.nstr(ref, 17))


def ends(ball) -> tuple[mpmath.mpf, mpmath.mpf]:
    """mid -+ rad exactly (ball.lower() rounds outward to the current precision: 53 bits outside arb_numbers)."""
    mid, rad = exact(ball.mid()), exact(ball.rad())
    return mpmath.fsub(mid, rad, exact=True), mpmath.fadd(mid, rad, exact=True)


def assert_ball_encloses(ball, ref, rtol: float | None = 1e-25) -> None:
    lo, hi = ends(ball)
    assert lo <= ref <= hi, (mpmath.nstr(lo, 20), mpmath.nstr(ref, 20), mpmath.nstr(hi, 20))
    if rtol is not None:
        with mpmath.workdps(60):
            assert hi - lo <= rtol * abs(ref), (ball.str(10), mpmath.nstr(ref, 20))


# ---- the naive references ----------------------------------------------------------------------------------------

def naive_phi(x):
    """Phi at the working precision; below -1e30 (above 1e30) the Mills series phi(x)/|x| sum (-1)^k (2k-1)!!/x^2k,
    30 terms: relative error < 1e-1700 (mpmath's erfc overflows a float near |x| = 1e150)."""
    if abs(x) < mpf(10) ** 30:
        return mpmath.ncdf(x)
    series = mpmath.fsum((-1) ** k * mpmath.fac2(2 * k - 1) / x ** (2 * k) for k in range(30))
    tail = mpmath.npdf(x) / abs(x) * series
    return tail if x < 0 else 1 - tail


def delta_dps(eps, mu) -> int:
    """Digits for the naive delta(eps): those its difference loses (~ 1 + eps/mu^2 + 1/mu), those that exp(-a^2/2)
    needs of a = eps/mu, and 60."""
    with mpmath.workdps(30):
        eps, mu = abs(mpf(eps)), mpf(mu)
        lost = mpmath.log10(2 + eps / mu**2 + 2 / mu)
        far = 2 * mpmath.log10(1 + eps / mu + mu)
        return 60 + int(lost) + int(far)


def naive_delta(eps, mu):
    """Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) at delta_dps digits."""
    with mpmath.workdps(delta_dps(eps, mu)):
        eps, mu = mpf(eps), mpf(mu)
        return +(naive_phi(mu / 2 - eps / mu) - mpmath.exp(eps) * naive_phi(-mu / 2 - eps / mu))


def naive_tradeoff(x, mu):
    """Phi(sqrt(2) erfinv(1 - 2x) - mu), literally where 1 - 2x keeps 80 digits of x at 150 digits (x or 1 - x above
    1e-60); below, Phi^-1(1 - x) as mpmath.findroot's root z of Phi(-z) = x (the literal erfinv near 1 takes seconds
    at the 400 digits that 1 - 2e-300 needs)."""
    with mpmath.workdps(150):
        x, mu = mpf(x), mpf(mu)
        if min(x, 1 - x) > mpf(10) ** -60:
            z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * x)
        else:
            u = -2 * mpmath.log(x)
            z = mpmath.findroot(lambda t: mpmath.log(mpmath.ncdf(-t) / x), mpmath.sqrt(u - mpmath.log(u)))
        return +naive_phi(z - mu)


def naive_renyi_1d(mu_p, var_p, mu_q, var_q, alpha, dps=400):
    with mpmath.workdps(dps):
        mu_p, var_p, mu_q, var_q, alpha = map(mpf, (mu_p, var_p, mu_q, var_q, alpha))
        mix = alpha * var_q + (1 - alpha) * var_p
        if mix <= 0:
            return mpmath.inf
        logdet = mpmath.log(mix) - (1 - alpha) * mpmath.log(var_p) - alpha * mpmath.log(var_q)
        return +(alpha * (mu_p - mu_q) ** 2 / (2 * mix) - logdet / (2 * (alpha - 1)))


# ---- Rényi divergence between Gaussians ------------------------------------------------------------------------------

near_one = st.tuples(st.sampled_from([-1, 1]), log_uniform(1e-150, 0.5)).map(lambda sr: sr[0] * sr[1])


@SOME
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), var_q=log_uniform(1e-3, 1e3),
       ratio=st.one_of(near_one.map(lambda r: ("near", r)), log_uniform(1e-300, 1e300).map(lambda r: ("far", r))),
       dmu=st.one_of(st.just(0.0), log_uniform(1e-300, 1e3)))
def test_renyi_gaussian_1d_at_alpha_near_one_and_nearly_equal_variances(alpha, var_q, ratio, dmu):
    """var_p = var_q (1 + r), r down to 1e-150 (an exact 50-digit mpf): the log-determinant term
    -(log mix - (1 - alpha) log var_p - alpha log var_q)/(2(alpha - 1)) ~ alpha r^2/4 used to lose every digit."""
    kind, r = ratio
    with mpmath.workdps(50):
        var_p = var_q * (1 + mpf(r)) if kind == "near" else var_q * mpf(r)
        got = renyi_gaussian_1d(dmu, var_p, 0, var_q, alpha)
    if var_p == var_q and dmu == 0:  # identical laws: exactly 0 in both number systems
        assert got == 0
        with arb_numbers(128):
            ball = renyi_gaussian_1d(0, to_ball(var_p), 0, to_ball(var_q), alpha)
        assert ball.is_exact() and ball.is_zero()
        return
    ref = naive_renyi_1d(dmu, var_p, 0, var_q, alpha)
    if ref == mpmath.inf:
        assert got == mpmath.inf
        with arb_numbers(128):
            assert renyi_gaussian_1d(to_ball(dmu), to_ball(var_p), 0, to_ball(var_q), alpha) == math.inf
        return
    assert_float_close(float(got), ref)
    with arb_numbers(128):
        ball = renyi_gaussian_1d(to_ball(dmu), to_ball(var_p), 0, to_ball(var_q), alpha)
    assert_ball_encloses(ball, ref)


def test_renyi_gaussian_1d_regressions():
    """Measured at 50 digits before the rewrite: alpha = 1 + 1e-12, var_p = 1 + 1e-45 gave -5.0e-46 for 2.5e-91 (Arb:
    [+/- 2.7e-39]); identical laws give exactly 0 in both number systems."""
    with mpmath.workdps(50):
        var_p = 1 + mpf(10) ** -45
        got = renyi_gaussian_1d(0, var_p, 0, 1, 1 + 1e-12)
    ref = naive_renyi_1d(0, var_p, 0, 1, 1 + 1e-12)
    assert float(ref) == pytest.approx(2.5e-91, rel=1e-9)
    assert_float_close(float(got), ref)
    for args in ((0.5, 2.0, 0.5, 2.0, 3.0), (0, 1, 0, 1, 1 + 1e-12)):
        with mpmath.workdps(50):
            assert renyi_gaussian_1d(*args) == 0
        with arb_numbers(64):
            ball = renyi_gaussian_1d(*args)
        assert ball.is_exact() and ball.is_zero()
    assert renyi_gaussian(0.5, 2.0, 0.5, 2.0, 3.0) == 0.0


@SOME
@given(dim=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), alpha=log_uniform(1e-12, 1e3).map(lambda a: 1 + a),
       r=log_uniform(1e-14, 0.3), shift=st.one_of(st.just(0.0), log_uniform(1e-12, 1e2)))
def test_renyi_gaussian_matrix_form_at_alpha_near_one_and_close_covariances(dim, seed, alpha, r, shift):
    """The float matrix form: cov_p = cov_q + r E. Before the rewrite, alpha = 1 + 1e-12, cov_p = 1 + 1e-6 (1-D) gave
    -5.0e-7 for 2.5e-13, alpha = 2, cov_p = 1 + 1e-15 gave 5.92e-31 for 6.16e-31."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(dim, dim))
    cov_q = A @ A.T + np.eye(dim)
    E = rng.normal(size=(dim, dim))
    cov_p = cov_q + r * (E + E.T) / 2
    mu_p = shift * rng.normal(size=dim)
    got = renyi_gaussian(mu_p, cov_p, np.zeros(dim), cov_q, alpha)
    with mpmath.workdps(120):
        P, Q = mpmath.matrix(cov_p.tolist()), mpmath.matrix(cov_q.tolist())
        a = mpf(alpha)
        mix = a * Q + (1 - a) * P
        if min(mpmath.eigsy(mix)[0]) <= 0:
            assert got == math.inf
            return
        dmu = mpmath.matrix(mu_p.tolist())
        quad = (dmu.T * mpmath.lu_solve(mix, dmu))[0]
        logdet = mpmath.log(mpmath.det(mix)) - (1 - a) * mpmath.log(mpmath.det(P)) - a * mpmath.log(mpmath.det(Q))
        ref = a * quad / 2 - logdet / (2 * (a - 1))
    assert got == pytest.approx(float(ref), rel=1e-9)


# ---- delta(eps), the trade-off and eps(delta) of N(0, 1) vs N(mu, 1) -------------------------------------------------

@SOME
@given(eps=log_uniform(1e-300, 1e3), mu=log_uniform(1e-300, 1e3))
def test_gaussian_delta_at_every_scale(eps, mu):
    """Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) cancels to a relative 1/(1 + eps/mu^2 + 1/mu). Measured before
    the rewrite: (eps, mu) = (1e-300, 1e-300) gave 0 for 8.33e-302, (1e-5, 1e-20) gave -1.3e-...075 for
    8.7e-217147240951625973171810935090; Arb balls straddled 0."""
    ref = naive_delta(eps, mu)
    with mpmath.workdps(50):
        assert_float_close(float(gaussian_delta(eps, mu)), ref)
    with arb_numbers(128):
        ball = gaussian_delta(eps, mu)
    assert_ball_encloses(ball, ref)


@SOME
@given(x=st.one_of(log_uniform(1e-300, 0.5), log_uniform(2.0**-53, 0.5).map(lambda v: 1 - v)),
       mu=log_uniform(1e-300, 1e3))
def test_gaussian_tradeoff_at_every_scale(x, mu):
    """Phi^-1(1 - x) of a rounded 1 - x: x = 1e-300, mu = 40 gave 1 for 0.00157 (Arb: NaN)."""
    ref = naive_tradeoff(x, mu)
    with mpmath.workdps(50):
        assert_float_close(float(gaussian_tradeoff(x, mu)), ref)
    with arb_numbers(128):
        ball = gaussian_tradeoff(x, mu)
    assert_ball_encloses(ball, ref)


def test_gaussian_tradeoff_regressions():
    ref = naive_tradeoff(1e-300, 40)
    assert float(ref) == pytest.approx(0.0015740007523469751, rel=1e-12)
    with mpmath.workdps(50):
        assert float(gaussian_tradeoff(1e-300, 40)) == pytest.approx(float(ref), rel=1e-12)
        assert gaussian_tradeoff(0, 1) == 1 and gaussian_tradeoff(1, 1) == 0
        assert float(gaussian_tradeoff(0.3, 0)) == pytest.approx(0.7, rel=1e-15)
    with arb_numbers(64):
        assert gaussian_tradeoff(0, 1) == 1  # was NaN: erfinv(1)


def assert_root_bracketed(lo, hi, delta, mu) -> None:
    """lo <= eps(delta) <= hi for the naive delta: delta(hi) <= delta, and lo = 0 or delta(lo) >= delta."""
    assert naive_delta(hi, mu) <= delta, (mpmath.nstr(hi, 20), mpmath.nstr(naive_delta(hi, mu), 20), delta)
    assert lo == 0 or naive_delta(lo, mu) >= delta, (mpmath.nstr(lo, 20), delta)


delta_for_mu = st.one_of(
    st.tuples(log_uniform(1e-300, 1e3), log_uniform(1e-300, 0.5)),  # independent: mostly eps = 0 at tiny mu
    st.tuples(log_uniform(1e-300, 1e3), log_uniform(1e-100, 1.0)).map(  # below delta(0) ~ 0.4 mu
        lambda mu_u: (mu_u[0], min(0.5, max(1e-300, 0.3 * mu_u[0] * mu_u[1])))),
)


@SOME
@given(pair=delta_for_mu)
def test_gaussian_dp_epsilon_at_every_scale(pair):
    """eps(delta) is solved as min(1, mu) s (eps ~ mu at small mu): with the root finder's absolute 2^-80 and the Arb
    bracket's absolute 1e-300 pad, mu = 1e-300, delta = 1e-305 was enclosed as [3.9e-300, 4.9e-300]."""
    mu, delta = pair
    with mpmath.workdps(50):
        got = gaussian_dp_epsilon(delta, mu)
    scale = min(1, mu)
    with mpmath.workdps(60):
        g = mpf(float(got))
        slack = mpf(10) ** -20 * scale
        assert_root_bracketed(max(0, g * (1 - mpf(10) ** -12) - slack), g * (1 + mpf(10) ** -12) + slack, delta, mu)
    with arb_numbers(128):
        ball = gaussian_dp_epsilon(delta, mu)
    lo, hi = ends(ball)
    assert_root_bracketed(lo, hi, delta, mu)
    if g > 0:
        with mpmath.workdps(60):
            assert hi - lo <= mpf(10) ** -12 * g


def test_identical_gaussian_pairs_are_exactly_private():
    with mpmath.workdps(50):
        assert gaussian_delta(0.5, 0) == 0 and gaussian_dp_epsilon(1e-5, 0) == 0
    with arb_numbers(64):
        assert gaussian_delta(0.5, 0).is_zero()


# ---- PNSGD / PNMSGD / CNI closed forms from the contraction c (verify.truth.pnsgd_gaussian) --------------------------

unit_slopes = st.one_of(
    st.integers(20, 53).flatmap(lambda k: st.sampled_from([1 - 2.0**-k, -1 + 2.0**-k, 1 + 2.0**-k, -1 - 2.0**-k])),
    log_uniform(1e-300, 1.0).map(lambda x: 1 - x), st.floats(-3, 3), st.sampled_from([1.0, -1.0, 0.0, 1e-300]))


@SOME
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), sigma=log_uniform(1e-3, 1e3), c=unit_slopes,
       n=log_int(1, 3000), K=log_int(1, 10**7), data=st.data(), Delta=log_uniform(1e-3, 1e3))
def test_pnsgd_closed_forms_from_the_contraction(alpha, sigma, c, n, K, data, Delta):
    """numbers.geometric(c^2, n) of a c within 2^-53 of +-1: 1 - c^(2n) and 1 - c^2 of an Arb ball around 1
    (pnsgd_renyi(c = 1 - 1e-40) was [0.1 +/- 1e-15] at 128 bits, n = 1e5+ summed term by term or refused)."""
    t = data.draw(st.integers(1, n))
    with mpmath.workdps(150 + 8 * len(str(max(n, K)))):
        cm = mpf(c)
        r, rn = cm**2, cm**n

        def geo(q, count):
            return (1 - q**count) / (1 - q) if q != 1 else mpf(count)

        refs = (+(alpha * mpf(Delta) ** 2 * cm ** (2 * (n - t)) / (2 * mpf(sigma) ** 2 * geo(r, n))),
                +(alpha * (mpf(Delta) * cm ** (n - t) * geo(rn, n)) ** 2 / (2 * mpf(sigma) ** 2 * geo(r, n * n))),
                +(alpha * r**K * mpf(Delta) ** 2 / (2 * mpf(sigma) ** 2 * geo(r, K))))
    calls = (lambda: pnsgd_renyi(alpha, sigma, n, t, Delta, c), lambda: pnmsgd_renyi(alpha, sigma, n, t, Delta, c),
             lambda: cni_affine_renyi(alpha, sigma, K, Delta, c))
    for call, ref in zip(calls, refs, strict=True):
        with mpmath.workdps(50):
            assert_float_close(float(call()), ref)
        with arb_numbers(128):
            ball = call()
        if ref == 0:
            assert ball.is_zero()
        else:
            assert_ball_encloses(ball, ref, rtol=1e-33)  # numbers.geometric kept 82-100 of 128 bits at c = 1 - 2^-53


def test_pnsgd_closed_forms_of_a_contraction_ball_around_one():
    """c given as a ball straddling 1 (1 - eta lam formed in Arb, eta lam = 1e-45/3): numbers.geometric summed
    term by term and refused beyond 1e5 terms (NotEnclosable at n = 1e6); the gap forms take its ends."""
    n = 10**6
    with arb_numbers(128) as N:
        c = 1 - N.mpf(1e-45) / 3
        assert not c < 1  # the ball straddles 1
        ball = pnsgd_renyi(2, 1, n, 1, 1, c)
        mid = exact(c.mid())
    with mpmath.workdps(200):
        r = mid**2
        ref = 2 * mid ** (2 * (n - 1)) / (2 * (1 - r**n) / (1 - r))
    assert_ball_encloses(ball, ref, rtol=1e-30)


# ---- noisy GD's f-DP truths (mu-GDP, delta(eps), trade-off, eps(delta)) ----------------------------------------------

def _naive_mu(name, sigma, eta, n, K, S, lam, start_var, dps):
    """mu = sqrt(R_2) = mean gap / std of the two runs' Gaussian laws, from the naive geometric sums."""
    with mpmath.workdps(dps):
        eta, lam, sigma, S = map(mpf, (eta, lam, sigma, S))
        if name == "noisy_gd_quadratic":
            m = 1 - eta * lam
            r = m**2
            var = r**K * mpf(start_var) + 2 * eta * sigma**2 * ((1 - r**K) / (1 - r) if r != 1 else mpf(K))
            gap = abs(1 - m**K) * S / (lam * n)
        else:
            m = 1 - eta * n * lam
            r = m**2
            var = eta**2 * sigma**2 * ((1 - r**K) / (1 - r) if r != 1 else mpf(K))
            gap = abs(eta * S * ((1 - m**K) / (1 - m) if m != 1 else mpf(K)))
        return +(gap / mpmath.sqrt(var))


@FEW
@given(name=st.sampled_from(["noisy_gd_quadratic", "noisy_gd_sum_quadratic"]), sigma=log_uniform(1e-3, 1e3),
       eta=log_uniform(1e-300, 1e3), lam=log_uniform(1e-3, 1e3), n=log_int(1, 10**6), K=log_int(1, 10**6),
       S=log_uniform(1e-3, 1e3), start_var=st.one_of(st.just(0.0), log_uniform(1e-6, 1e6)),
       eps=log_uniform(1e-300, 1e3), type1=st.one_of(log_uniform(1e-300, 0.5), log_uniform(2.0**-53, 0.5).map(
           lambda v: 1 - v)), delta=log_uniform(1e-300, 0.5))
def test_noisy_gd_f_dp_truths_at_every_scale(name, sigma, eta, lam, n, K, S, start_var, eps, type1, delta):
    fam = family(name)
    point = dict(sigma=sigma, eta=eta, n=n, K=K, S=S, lam=lam)
    if name == "noisy_gd_quadratic":
        point["start_var"] = start_var
    x = eta * lam * (n if name == "noisy_gd_sum_quadratic" else 1)
    digits = max(0, -int(math.log10(min(x, abs(2 - x) or 1e-300))))
    mu = _naive_mu(name, sigma, eta, n, K, S, lam, start_var, dps=100 + 3 * digits + 3 * len(str(K)))
    refs = {Quantity.GDP_MU: ({}, mu), Quantity.DP_DELTA: ({"eps": eps}, naive_delta(eps, mu)),
            Quantity.TRADEOFF: ({"type1": type1}, naive_tradeoff(type1, mu))}
    for quantity, (extra, ref) in refs.items():
        truth = fam.truths[quantity](**point, **extra)
        assert_float_close(truth.value, ref)
        enc = truth.enclose(128)
        assert exact(enc.lower) <= ref <= exact(enc.upper), (quantity, truth.value, mpmath.nstr(ref, 10))
    truth = fam.truths[Quantity.DP_EPSILON](**point, delta=delta)
    with mpmath.workdps(60):
        g, slack = mpf(truth.value), mpf(10) ** -20 * min(1, mu)
        assert_root_bracketed(max(0, g * (1 - mpf(10) ** -12) - slack), g * (1 + mpf(10) ** -12) + slack, delta, mu)
    enc = truth.enclose(128)
    assert_root_bracketed(exact(enc.lower), exact(enc.upper), delta, mu)
