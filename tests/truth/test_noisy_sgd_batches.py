"""Multi-step noisy SGD with random batches on a linear model (verify.truth.noisy_sgd_batches) against independent
references: dp_accounting's sampled-Gaussian RDP (one step), scipy quadrature of the mixtures written out by hand,
the Gaussian closed form (cyclic), and the identities between the schemes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian
from scipy import integrate
from scipy.special import logsumexp
from scipy.stats import norm

from verify.errors import ParameterError, ResourceLimitError
from verify.families import family
from verify.model import Quantity
from verify.truth.noisy_sgd_batches import LinearSGD, cyclic_renyi, poisson_renyi, shuffled_renyi

from .batch_laws import SCHEMES, SETTING, written_out


def _quad_renyi(weights, means_p, means_q, sd, alpha) -> float:
    """max of both orders of R_alpha between sum w N(means_p, sd^2) and sum w N(means_q, sd^2), by scipy quad."""
    log_w = np.log(np.asarray(weights))

    def log_pdf(means, y):
        return float(logsumexp(log_w + norm.logpdf(y, np.asarray(means), sd)))
    lo = min(min(means_p), min(means_q)) - 30 * sd
    hi = max(max(means_p), max(means_q)) + 30 * sd
    out = []
    for a, b in ((means_p, means_q), (means_q, means_p)):
        integral = integrate.quad(lambda y, a=a, b=b: math.exp(alpha * log_pdf(a, y) + (1 - alpha) * log_pdf(b, y)),
                                  lo, hi,
                                  limit=500, epsabs=0, epsrel=1e-11)[0]
        out.append(math.log(integral) / (alpha - 1))
    return max(out)


@pytest.mark.parametrize(("q", "mu", "alpha"), [(0.1, 1.0, 2), (0.3, 0.5, 8), (0.05, 2.0, 4)])
def test_one_poisson_step_is_the_sampled_gaussian(q, mu, alpha):
    sgd = LinearSGD(eta=0.3, lam=0.7, sigma=1.5, b=2.0, x=0.0, x_prime=mu * 2.0 * 1.5, steps=1)  # |x'|/(b sigma) = mu
    reference = float(_compute_rdp_poisson_subsampled_gaussian(q, 1 / mu, [alpha])[0])
    assert poisson_renyi(sgd, q, alpha).value == pytest.approx(reference, rel=1e-8)


@pytest.mark.parametrize(("lam", "steps"), [(0.0, 6), (0.4, 5)])
def test_poisson_matches_the_mixture_written_out(lam, steps):
    sgd = LinearSGD(eta=0.5, lam=lam, sigma=1.0, b=1.0, x=0.2, x_prime=-0.6, steps=steps)
    q, alpha, a = 0.3, 3.0, 1 - 0.5 * lam
    weights, c = [], []
    for pattern in itertools.product((0, 1), repeat=steps):
        k = sum(pattern)
        weights.append(q**k * (1 - q) ** (steps - k))
        c.append(0.5 * sum(a ** (steps - 1 - t) for t in range(steps) if pattern[t]))
    sd = 0.5 * math.sqrt(sum(a ** (2 * t) for t in range(steps)))
    reference = _quad_renyi(weights, [0.2 * ci for ci in c], [-0.6 * ci for ci in c], sd, alpha)
    assert poisson_renyi(sgd, q, alpha).value == pytest.approx(reference, rel=1e-7)


def test_poisson_composition_bounds_the_last_iterate():
    """Releasing theta_T is post-processing of the trajectory: at most T times the one-step RDP."""
    for T in (2, 5, 10):
        sgd = LinearSGD(eta=1.0, lam=0.0, sigma=1.0, b=1.0, x=0.0, x_prime=1.0, steps=T)
        one = float(_compute_rdp_poisson_subsampled_gaussian(0.2, 1.0, [4])[0])
        value = poisson_renyi(sgd, 0.2, 4.0).value
        assert one < value <= T * one


def test_shuffled_matches_the_mixture_written_out():
    sgd = LinearSGD(eta=0.4, lam=0.5, sigma=0.8, b=2.0, x=1.0, x_prime=0.0, steps=6)
    m, alpha, a = 3, 2.5, 1 - 0.4 * 0.5
    c = [0.2 * sum(a ** (5 - (e * m + j)) for e, j in enumerate(js)) for js in itertools.product(range(m), repeat=2)]
    sd = 0.4 * 0.8 * math.sqrt(sum(a ** (2 * t) for t in range(6)))
    reference = _quad_renyi([1 / 9] * 9, c, [0.0] * 9, sd, alpha)
    assert shuffled_renyi(sgd, m, alpha).value == pytest.approx(reference, rel=1e-7)


def test_cyclic_is_the_gaussian_closed_form_and_the_schemes_agree_where_they_must():
    sgd = LinearSGD(eta=0.5, lam=0.0, sigma=1.0, b=1.0, x=0.0, x_prime=1.0, steps=8)
    # no contraction: the record's effect is eta/b per epoch, E = 2 epochs of m = 4: alpha (2 eta)^2/(2 eta^2 T)
    assert cyclic_renyi(sgd, 4, 1, 3.0).value == pytest.approx(3.0 * 4 / (2 * 8), rel=1e-12)
    assert shuffled_renyi(sgd, 1, 3.0).value == pytest.approx(cyclic_renyi(sgd, 1, 0, 3.0).value, rel=1e-9)
    one_epoch = LinearSGD(eta=0.5, lam=0.3, sigma=1.0, b=1.0, x=0.0, x_prime=1.0, steps=4)
    assert shuffled_renyi(one_epoch, 4, 3.0).value == pytest.approx(
        shuffled_renyi(one_epoch, 4, 3.0, once=True).value, rel=1e-9)


def test_shuffling_amplifies_against_the_worst_cyclic_position():
    sgd = LinearSGD(eta=0.5, lam=0.5, sigma=1.0, b=1.0, x=0.0, x_prime=2.0, steps=8)
    worst = max(cyclic_renyi(sgd, 4, j, 4.0).value for j in range(4))
    assert shuffled_renyi(sgd, 4, 4.0).value < worst
    assert shuffled_renyi(sgd, 4, 4.0, once=True).value < worst


@pytest.mark.parametrize(("call", "error"), [
    (lambda s: shuffled_renyi(s, 3, 2.0), ParameterError),  # 8 steps are not whole epochs of 3
    (lambda s: cyclic_renyi(s, 4, 4, 2.0), ParameterError),
    (lambda s: poisson_renyi(s, 1.5, 2.0), ParameterError),
    (lambda s: poisson_renyi(LinearSGD(0.5, 0.5, 1.0, 1.0, 0.0, 1.0, 13), 0.1, 2.0), ResourceLimitError),
])
def test_bad_input_is_named(call, error):
    with pytest.raises(error):
        call(LinearSGD(eta=0.5, lam=0.5, sigma=1.0, b=1.0, x=0.0, x_prime=1.0, steps=8))


def test_the_families_reach_the_engine():
    point = {"alpha": 2.0, "eta": 0.5, "reg": 0.0, "sigma": 1.0, "b": 1, "x": 0.0, "x_prime": 1.0}
    cyc = family("noisy_sgd_cyclic_linear").truth(Quantity.RENYI, **point, m=2, steps=4, j0=0).value
    assert cyc == pytest.approx(2.0 * 4 / (2 * 4), rel=1e-12)
    poi = family("noisy_sgd_poisson_linear").truth(Quantity.RENYI, **point, q=1.0, steps=4).value
    assert poi == pytest.approx(2.0 * 16 / (2 * 4), rel=1e-12)  # every step: (4 eta)^2/(eta^2 T)


# ---- (eps, delta) of the batch samplers (issue 24: shuffled vs Poisson claims in (eps, delta)) -------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from verify.truth.gaussian import gaussian_delta  # noqa: E402

DP_SETTINGS = settings(max_examples=12, deadline=None, database=None)


@DP_SETTINGS
@given(q=st.floats(0.01, 1.0), sigma=st.floats(0.3, 4.0), eta=st.floats(0.1, 2.0), b=st.integers(1, 4),
       delta=st.floats(1e-9, 0.3), eps=st.floats(0.01, 6.0))
def test_one_poisson_step_against_add_remove_is_the_sampled_gaussian(q, sigma, eta, b, delta, eps):
    """T = 1, x' = 0: the laws are (1 - q) N(0, v) + q N(eta/b, v) against N(0, v), v = eta^2 sigma^2: the sampled
    Gaussian of noise multiplier sigma b, whose closed-form hockey stick (verify's sampled_gaussian family, a separate
    code path) is the reference; the Arb brackets contain it."""
    kw = dict(eta=eta, reg=0.0, sigma=sigma, b=b, x=1.0, x_prime=0.0, q=q, steps=1)
    sgm = family("sampled_gaussian")
    mine, ref = family("noisy_sgd_poisson_linear").truth("dp_delta", eps=eps, **kw), sgm.truth(
        "dp_delta", q=q, sigma=sigma * b, eps=eps)
    assert mine.value == pytest.approx(ref.value, rel=1e-9, abs=1e-15)
    enc = mine.enclose(128)
    assert float(enc.lower) <= ref.value * (1 + 1e-12) + 1e-300 and ref.value * (1 - 1e-12) <= float(enc.upper)
    mine, ref = family("noisy_sgd_poisson_linear").truth("dp_epsilon", delta=delta, **kw), sgm.truth(
        "dp_epsilon", q=q, sigma=sigma * b, delta=delta)
    assert mine.value == pytest.approx(ref.value, rel=1e-8, abs=1e-12)
    enc = mine.enclose(128)
    assert float(enc.lower) <= ref.value + 1e-12 and ref.value - 1e-12 <= float(enc.upper)


@DP_SETTINGS
@given(m=st.integers(1, 4), epochs=st.integers(1, 3), reg=st.sampled_from([0.0, 0.2]), x=st.floats(-1, 1),
       xp=st.floats(-1, 1), eps=st.floats(0.01, 4.0))
def test_cyclic_batches_are_one_gaussian_pair(m, epochs, reg, x, xp, eps):
    """The cyclic family's delta(eps) is Balle and Wang's closed form at mu = |x - x'| c / sqrt(v) (c, v written out
    here from the model)."""
    eta, sigma, b, j0 = 0.5, 1.0, 2, m - 1
    T = m * epochs
    a = 1 - eta * reg
    c = eta / b * sum(a ** (T - 1 - (e * m + j0)) for e in range(epochs))
    v = eta**2 * sigma**2 * sum(a ** (2 * t) for t in range(T))
    mu = abs(x - xp) * c / math.sqrt(v)
    got = family("noisy_sgd_cyclic_linear").truth("dp_delta", eta=eta, reg=reg, sigma=sigma, b=b, x=x, x_prime=xp,
                                                  m=m, steps=T, j0=j0, eps=eps)
    assert got.value == pytest.approx(float(gaussian_delta(eps, mu)), rel=1e-9, abs=1e-15)


def _quad_delta(weights, means_p, means_q, sd, eps) -> float:
    """max of both orders of int (p - e^eps q)_+ by scipy quad on a fine partition (the mixtures written out)."""
    lo = min(min(means_p), min(means_q)) - 30 * sd
    hi = max(max(means_p), max(means_q)) + 30 * sd
    scale = 1 / (sd * math.sqrt(2 * math.pi))

    def pdf(means, y):  # a few components in plain floats (numpy per scalar call was 90% of the test's time)
        return scale * math.fsum(w * math.exp(-0.5 * ((y - m) / sd) ** 2) for w, m in zip(weights, means, strict=True))
    out = []
    for a, b in ((means_p, means_q), (means_q, means_p)):
        cuts = np.linspace(lo, hi, 401)

        def gap(y, a=a, b=b):
            return max(pdf(a, y) - math.exp(eps) * pdf(b, y), 0.0)
        out.append(sum(integrate.quad(gap, u, w, limit=200, epsabs=1e-15, epsrel=1e-10)[0]
                       for u, w in zip(cuts[:-1], cuts[1:], strict=True)))
    return max(out)


@pytest.mark.parametrize(("scheme", "kw"), SCHEMES)
@pytest.mark.parametrize("eps", [0.05, 0.7, 2.5])
def test_shuffled_and_poisson_hockey_sticks_against_quadrature(scheme, kw, eps):
    """Mixtures over the sampling patterns written out (tests/truth/batch_laws.py: weights and means from the model),
    integrated by scipy: the family's delta(eps) and its Arb bracket."""
    eta, reg, sigma, b, x, xp = SETTING.values()
    ref = _quad_delta(*written_out(scheme, kw, **SETTING), eps)
    got = family(scheme).truth("dp_delta", eta=eta, reg=reg, sigma=sigma, b=b, x=x, x_prime=xp, eps=eps, **kw)
    assert got.value == pytest.approx(ref, rel=1e-7, abs=1e-12)
    enc = got.enclose(128)  # proven; the quadrature reference is good to ~1e-10 (its panels' epsrel)
    assert float(enc.lower) <= ref * (1 + 1e-9) + 1e-12 and ref * (1 - 1e-9) - 1e-12 <= float(enc.upper)
    assert float(enc.upper) - float(enc.lower) <= 1e-9 * ref + 1e-12


def test_an_expansion_beyond_the_float_range_is_bad_input():
    """|1 - eta reg| = 1e30 over 12 steps: a ParameterError naming it, not an OverflowError (hostile review)."""
    with pytest.raises(ParameterError, match="beyond the float range"):
        family("noisy_sgd_poisson_linear").truth("tradeoff_beta", eta=1.0, reg=1e30, sigma=1.0, b=1, x=1.0,
                                                 x_prime=0.0, q=0.5, steps=12, type1=0.2)
