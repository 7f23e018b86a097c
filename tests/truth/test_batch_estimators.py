"""The paper's batch-sampling estimators (Thudi et al. 2024): the proven lower ends of verify.truth.batch_estimators
against seeded simulations of the estimators as the paper describes them (written here from the paper, not from the
module), and the research inventory's numbers (seed-004 sections 4.3 and 4.6(iii))."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import binom

from verify.truth.batch_estimators import (
    corollary31_estimate_below_lower,
    corollary31_mean_rule,
    theorem36_estimate_zero_lower,
)
from verify.truth.dpsgd_step import TwoClusterStep, dpsgd_step_renyi
from verify.truth.numbers import arb_numbers

MNIST_Q = 128 / 60000


def _batch_means(rng, shape, clusters, star):
    """U(B) under the mean rule (U(empty) = 0) for Poisson batches: clusters = ((count, gradient, q), ...); star =
    (gradient, q) for x* or None."""
    total = np.zeros(shape)
    count = np.zeros(shape)
    for n, g, q in clusters:
        k = rng.binomial(n, q, size=shape)
        total += k * g
        count += k
    if star is not None:
        k = rng.binomial(1, star[1], size=shape)
        total += k * star[0]
        count += k
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


def _theorem36_estimates(rng, reps, alpha, s, clusters, star, outer=20, inner=20):
    """The paper's outer x inner estimate of Theorem 3.6 (Sec. 4.2), both directions, the larger one."""
    def one_direction(outer_star, inner_star):
        mu = _batch_means(rng, (reps, outer, 1, 1), clusters, outer_star)
        nu = _batch_means(rng, (reps, outer, inner, alpha), clusters, inner_star) - mu
        expo = (nu.sum(-1) ** 2 - (nu**2).sum(-1)) / (2 * s * s)  # sum_{i<j} nu_i nu_j / s^2
        return ((logsumexp(expo, axis=-1) - math.log(inner)) / (alpha - 1)).mean(-1)

    forward, reverse = one_direction(None, star), one_direction(star, None)  # outer from D, inner from D'; swapped
    return np.maximum(forward, reverse)


def test_theorem36_zero_probability_matches_simulation():
    """On a small shared-gradient instance the frequency of an exactly-0 estimate is the proven lower end up to the
    simulation's error (the event is also necessary here), and the estimate is below the exact divergence."""
    alpha, q, n, s, outer, inner = 3, 0.03, 100, 0.2, 5, 5
    clusters, star = ((n, 0.3, q),), (-0.5, q)
    rng = np.random.default_rng(7)
    est = _theorem36_estimates(rng, 20_000, alpha, s, clusters, star, outer, inner)
    freq_zero = float(np.mean(np.abs(est) < 1e-12))
    with mpmath.workdps(30):
        lower = float(theorem36_estimate_zero_lower(alpha, mpmath.mpf(q), n, outer, inner))
    sd = math.sqrt(lower * (1 - lower) / est.size)
    assert 0.05 < lower < 0.95
    assert abs(freq_zero - lower) < 5 * sd
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, -0.5, n, 0.3, 0, 0.0, "mean"), alpha).value
    assert truth > 0.1
    assert float(np.mean(est < truth)) >= lower - 5 * sd


def test_theorem36_zero_probability_at_the_paper_batch_size():
    """q = 128/N: to first order 1 - P(some tuple has two x*-batches), (1 - q)^20 (1 - C(alpha, 2) q^2)^400."""
    with mpmath.workdps(30):
        got = float(theorem36_estimate_zero_lower(8, mpmath.mpf(MNIST_Q), 60000, 20, 20))
    approx = (1 - MNIST_Q) ** 20 * (1 - 28 * MNIST_Q**2) ** 400
    assert got == pytest.approx(approx, rel=1e-3)
    assert got > 0.9


@pytest.mark.parametrize(("s", "truth_ref", "undercut_ref"), [(0.1, 59.99, 1.00), (0.3, 3.104, 0.73)])
def test_theorem36_estimate_undercuts_on_two_clusters(s, truth_ref, undercut_ref):
    """Research 4.3(a): 40 points at 0.2, 10 at -0.6, the outlier x* = -1, mean rule, q = 0.1, alpha = 8: the exact
    divergence and the frequency with which the 20 x 20 estimate falls below it (200 replicates in the inventory)."""
    q, alpha = 0.1, 8
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, -1.0, 40, 0.2, 10, -0.6, "mean"), alpha).value
    assert truth == pytest.approx(truth_ref, rel=2e-3)
    est = _theorem36_estimates(np.random.default_rng(11), 1000, alpha, s, ((40, 0.2, q), (10, -0.6, q)), (-1.0, q))
    assert float(np.mean(est < truth)) == pytest.approx(undercut_ref, abs=0.05)


# ---- Corollary 3.1, mean rule (research 4.6(iii): N = 60000, L = 128, p = 1e4, ||g*|| = C = 1) -----------------------
B1 = {"p_holder": 10_000, "delta": 1e-5, "delta_slack": 0.5e-5}


def _corollary_numpy(s, g_star, g_a, n=60000, q=MNIST_Q, p=1e4, delta=1e-5, slack=0.5e-5):
    """Corollary 3.1's eps' with the exact E over |B| ~ Bin(N, q), in float log domain (independent of the module)."""
    c = math.sqrt(2 * math.log(1.25 * q / (delta - slack))) / s
    k = np.arange(n + 1)
    delta_b = np.where(k == 0, abs(g_star), abs(g_star - g_a) / (k + 1))
    log_e = logsumexp(binom.logpmf(k, n, q) + p * c * delta_b)
    log_a = math.log(q) + log_e / p
    return float(np.logaddexp((p * log_a - math.log(slack)) / (p - 1), math.log1p(-q)))


def _corollary_estimates(rng, reps, s, g_star, g_a, n=60000, q=MNIST_Q, p=1e4, delta=1e-5, slack=0.5e-5, batches=100):
    c = math.sqrt(2 * math.log(1.25 * q / (delta - slack))) / s
    k = rng.binomial(n, q, size=(reps, batches))
    delta_b = np.where(k == 0, abs(g_star), abs(g_star - g_a) / (k + 1))
    log_a = math.log(q) + (logsumexp(p * c * delta_b, axis=-1) - math.log(batches)) / p
    return np.logaddexp((p * log_a - math.log(slack)) / (p - 1), math.log1p(-q))


@pytest.mark.parametrize(("s", "g_a", "exact_ref", "median_ref"), [
    (0.469 / 128, 0.8, 961, 0.012), (0.469 / 128, 0.0, 961, 3.37), (0.469, 0.8, 1.616, 3.2e-5),
    (0.469, 0.0, 1.616, 1.6e-4)])
def test_corollary31_mean_rule_exact_and_estimate(s, g_a, exact_ref, median_ref):
    exact_np = _corollary_numpy(s, 1.0, g_a)
    with mpmath.workdps(40):
        exact = float(corollary31_mean_rule(mpmath.mpf(MNIST_Q), 60000, mpmath.mpf(s), mpmath.mpf(1), mpmath.mpf(g_a),
                                            mpmath.mpf(10_000), mpmath.mpf("1e-5"), mpmath.mpf("0.5e-5")))
    assert exact == pytest.approx(exact_np, rel=1e-9)
    assert exact == pytest.approx(exact_ref, rel=2e-3)
    est = _corollary_estimates(np.random.default_rng(3), 400, s, 1.0, g_a)
    assert float(np.median(est)) == pytest.approx(median_ref, rel=0.35)
    assert float(np.max(est)) < exact
    with arb_numbers(128) as N:
        lower = corollary31_estimate_below_lower(N.mpf(MNIST_Q), 60000, N.mpf(s), N.mpf(1), N.mpf(g_a),
                                                 N.mpf(10_000), N.mpf(1e-5), N.mpf(0.5e-5), 100)
    assert float(lower.lower()) > 0.999


def test_corollary31_lower_end_is_zero_when_the_estimate_cannot_undercut():
    """x* with the others' gradient and g* = 0: Delta = 0 on every batch, the estimate equals the exact eps'."""
    with arb_numbers(128) as N:
        low = corollary31_estimate_below_lower(N.mpf(0.01), 500, N.mpf(1), N.mpf(0), N.mpf(0), N.mpf(100),
                                               N.mpf(1e-3), N.mpf(1e-4), 100)
    assert low == 0
