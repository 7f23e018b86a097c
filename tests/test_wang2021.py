"""Seed 002 (Wang's lecture 12): the lecture-parameterised NoisyGD family against a simulation of the printed
update, and the encoded bounds against hand-computed values."""

import numpy as np
import pytest

import verify
from verify import CATALOG, Verdict
from verify.families import family

FAM = verify.family("noisy_gd_sum_quadratic")


def simulate(eta, sigma, n, lam, K, d, dist, runs=200_000, seed=1):
    """x <- x - eta (sum_i lam (x - x_i) + N(0, sigma^2 I)); minimiser at 0, x_1 = dist e_1."""
    rng = np.random.default_rng(seed)
    x = np.zeros((runs, d))
    x[:, 0] = dist
    grad_sq, excess = [], []
    for _ in range(K):
        grad_sq.append(((n * lam * x) ** 2).sum(1))
        excess.append(n * lam / 2 * (x**2).sum(1))
        x = x - eta * (n * lam * x + sigma * rng.standard_normal(x.shape))
    return np.mean(grad_sq, axis=0), np.mean(excess, axis=0)


@pytest.mark.parametrize(("eta", "sigma", "n", "lam", "K", "d", "dist"),
                         [(0.05, 0.7, 3, 1.0, 7, 2, 1.5), (0.2, 0.3, 2, 0.5, 12, 3, 0.0)])
def test_ergodic_averages_match_a_simulation(eta, sigma, n, lam, K, d, dist):
    g, e = simulate(eta, sigma, n, lam, K, d, dist)
    point = dict(eta=eta, sigma=sigma, n=n, lam=lam, K=K, d=d, dist=dist)
    for samples, quantity in ((g, "avg_grad_norm_sq"), (e, "avg_excess_risk")):
        se = samples.std() / np.sqrt(samples.size)
        assert abs(samples.mean() - FAM.truth(quantity, **point).value) < 5 * se


def test_one_step_is_the_gaussian_mechanism():
    # x_2 = x_1 - eta (grad + Z): mean gap eta S, std eta sigma -> alpha S^2 / (2 sigma^2)
    r = verify.check("wang2021.noisygd_zcdp", alpha=3, sigma=0.5, eta=0.1, n=4, K=1, S=1.0, lam=1.0)
    assert r.truth.value == pytest.approx(3 / (2 * 0.25), rel=1e-13) and r.ratio == pytest.approx(1.0, rel=1e-13)


def test_printed_step_size_lets_noisy_gd_diverge():
    r = verify.check("wang2021.lemma12_1", sigma=0.1, eta=0.5, n=5, lam=1.0, K=30, d=1, dist=1.0)
    assert r.verdict is Verdict.VIOLATED
    m = 1 - 0.5 * 5 * 1.0  # -1.5: the iterates blow up like |m|^K
    assert r.truth.value > 25 * 1.0 * m ** (2 * 29) / 30
    with pytest.raises(verify.AssumptionError, match="step_size"):
        verify.check("wang2021.lemma12_1.corrected", sigma=0.1, eta=0.5, n=5, lam=1.0, K=30, d=1, dist=1.0)


def test_convex_smooth_at_one_step():
    r = verify.check("wang2021.convex_smooth", sigma=1.0, eta=0.1, n=2, lam=1.0, K=1, d=3, dist=2.0)
    assert r.truth.value == pytest.approx(2 * 1.0 * 4 / 2)  # f(x_1) - f* = n lam dist^2 / 2
    assert r.bound == pytest.approx(4 / 0.1 + 0.1 * 3 * 1.0)


EXPECTED = {t.id: t.applications[0].expected for t in CATALOG.values() if t.id.startswith("wang2021.")
            and not family(t.applications[0].family).expensive}  # expensive ones: test_catalog_verdicts


@pytest.mark.parametrize("theorem_id", sorted(EXPECTED))
def test_default_grid_reproduces_expected_verdict(theorem_id, catalog_grid):
    t = CATALOG[theorem_id]
    assert catalog_grid[(theorem_id, t.applications[0].family)].verdict is EXPECTED[theorem_id]
