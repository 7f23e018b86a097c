"""Monte-Carlo Rényi estimators, simulation kernels and backends: exact references, reproducibility and
bit-for-bit agreement between numpy and array_api_strict."""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from verify.backend import ArrayRandom, get_namespace, to_host
from verify.errors import ParameterError
from verify.results import Method, Truth
from verify.truth.losses import HuberRidge, LogisticRidge, Quadratic
from verify.truth.mixture import sgm_renyi
from verify.truth.montecarlo import (
    Ball,
    Box,
    empirical_risk,
    noisy_gd_last_step_mixture,
    simulate_dpsgd,
    simulate_noisy_gd,
    simulate_pnsgd,
)
from verify.truth.renyi_estimator import GaussianMixture, geometric_tilt, renyi_importance, renyi_naive, too_weak

# `nox -s gpu` (VERIFY_BACKEND=cupy) adds the device namespace where a test does not compare streams bit for bit
NAMESPACES = ["numpy", "array_api_strict"] + (["cupy"] if os.environ.get("VERIFY_BACKEND") == "cupy" else [])
Q_RATE, SIGMA = 0.01, 1.1
SGM_P = GaussianMixture([1 - Q_RATE, Q_RATE], [0.0, 1.0], [SIGMA, SIGMA])
SGM_Q = GaussianMixture([1.0], [0.0], [SIGMA])


def _same(a: Truth, b: Truth) -> bool:
    return (a.value, a.lower, a.upper, a.ess) == (b.value, b.lower, b.upper, b.ess)


@pytest.mark.parametrize("alpha", [16, 32])
def test_naive_is_far_too_small_and_tilted_covers_exact(alpha):
    exact = sgm_renyi(Q_RATE, SIGMA, alpha, "pq").value  # 1.69983 (alpha 16), 8.46942 (alpha 32)
    naive = renyi_naive(SGM_P.log_pdf, SGM_Q, alpha, n=100_000, seed=11)
    tilted = renyi_importance(SGM_P.log_pdf, SGM_Q.log_pdf, geometric_tilt(SGM_P, SGM_Q, alpha), alpha,
                              n=100_000, seed=11)
    # naive: typically ~1000x too small (median exact/naive over 60 seeds: 1158 at alpha 16, 905 at alpha 32;
    # minimum 423 and 64), and its narrow confidence interval excludes the truth by more than an order of magnitude
    assert naive.method is Method.MONTE_CARLO and naive.confidence == 0.95
    assert naive.value < exact / 50
    assert naive.upper < exact / 20
    assert naive.upper - naive.lower < exact / 50
    # tilted: the interval contains the exact value, with a near-ideal effective sample size
    assert tilted.lower <= exact <= tilted.upper
    assert tilted.upper - tilted.lower < 1e-3 * exact
    assert tilted.ess > 50_000
    assert not too_weak(tilted)


def test_too_weak_flags_small_ess_and_wide_intervals():
    naive32 = renyi_naive(SGM_P.log_pdf, SGM_Q, 32, n=10_000, seed=2)
    assert naive32.ess < 1000 and too_weak(naive32)
    tiny = renyi_importance(SGM_P.log_pdf, SGM_Q.log_pdf, geometric_tilt(SGM_P, SGM_Q, 16), 16, n=50, seed=2)
    assert too_weak(tiny)
    with pytest.raises(ParameterError, match="Monte-Carlo"):
        too_weak(Truth.exact(1.0, "closed form"))


@pytest.mark.parametrize("estimator", ["naive", "tilted"])
def test_estimators_are_reproducible_and_backend_independent(estimator):
    def run(xp_name: str, seed: int) -> Truth:
        xp = get_namespace(xp_name)
        if estimator == "naive":
            return renyi_naive(SGM_P.log_pdf, SGM_Q, 16, n=20_000, seed=seed, xp=xp)
        return renyi_importance(SGM_P.log_pdf, SGM_Q.log_pdf, geometric_tilt(SGM_P, SGM_Q, 16), 16, n=20_000,
                                seed=seed, xp=xp)

    first = run("numpy", 5)
    assert _same(first, run("numpy", 5))
    assert _same(first, run("array_api_strict", 5))
    assert not _same(first, run("numpy", 6))


def test_tilted_on_gaussians_matches_closed_form():
    # R_a(N(m, s^2 I) || N(0, s^2 I)) = a |m|^2 / (2 s^2) in d = 2
    p = GaussianMixture([1.0], [[0.6, -0.3]], [0.8])
    q = GaussianMixture([1.0], [[0.0, 0.0]], [0.8])
    alpha = 6.0
    exact = alpha * (0.36 + 0.09) / (2 * 0.64)
    t = renyi_importance(p.log_pdf, q.log_pdf, geometric_tilt(p, q, alpha), alpha, n=20_000, seed=3)
    assert t.lower <= exact <= t.upper


@pytest.mark.parametrize("xp_name", NAMESPACES)
def test_mixture_log_pdf_and_sampling(xp_name):
    xp = get_namespace(xp_name)
    mix = GaussianMixture([0.25, 0.75], [[0.0, 1.0], [2.0, -1.0]], [0.5, 1.5])
    pts = np.array([[0.1, 0.2], [3.0, -2.0], [-1.0, 4.0]])
    ref = np.log(0.25 * multivariate_normal([0, 1], 0.25).pdf(pts) + 0.75 * multivariate_normal([2, -1], 2.25).pdf(pts))
    got = to_host(mix.log_pdf(xp.asarray(pts)))
    assert np.allclose(got, ref, rtol=1e-13, atol=0)
    draws = to_host(mix.sample(ArrayRandom(xp, 0), 200_000))
    mean = 0.25 * np.array([0.0, 1.0]) + 0.75 * np.array([2.0, -1.0])
    assert np.allclose(draws.mean(axis=0), mean, atol=0.02)


# ---- simulation kernels -------------------------------------------------------------------------------------

DATA_2D = np.array([[1.0, 0.5], [-0.5, 0.2], [0.3, -1.0]])
LOSSES = [Quadratic(1.0), LogisticRidge(0.5), HuberRidge(1.0, 0.1)]


def _kernel_outputs(xp_name: str, seed: int) -> list[np.ndarray]:
    xp = get_namespace(xp_name)
    out = []
    for loss in LOSSES:
        gd = simulate_noisy_gd(loss, DATA_2D, eta=0.1, sigma=0.5, K=15, chains=300, seed=seed, start_sd=0.3,
                               constraint=Ball(1.0), xp=xp)
        sgd = simulate_pnsgd(loss, DATA_2D, eta=0.2, sigma=0.5, chains=300, seed=seed, constraint=Box(-0.5, 0.5),
                             xp=xp)
        dp = simulate_dpsgd(loss, DATA_2D, eta=0.1, sigma=1.0, clip=1.0, q=0.3, steps=8, chains=300, seed=seed,
                            xp=xp)
        out += [to_host(a) for a in (gd, sgd, dp, empirical_risk(loss, DATA_2D, gd))]
    return out


def test_kernels_identical_across_namespaces_and_reproducible():
    ref = _kernel_outputs("numpy", 7)
    for got in (_kernel_outputs("array_api_strict", 7), _kernel_outputs("numpy", 7)):
        assert all(np.array_equal(a, b) for a, b in zip(ref, got, strict=True))
    assert not np.array_equal(ref[0], _kernel_outputs("numpy", 8)[0])


def test_projections_respect_constraints():
    outs = _kernel_outputs("numpy", 1)
    for gd, sgd in zip(outs[0::4], outs[1::4], strict=True):
        assert np.all(np.linalg.norm(gd, axis=1) <= 1.0 + 1e-12)
        assert np.all((sgd >= -0.5) & (sgd <= 0.5))


def _stat_close(sample: np.ndarray, mean: float, var: float, z: float = 5.0) -> None:
    n = sample.size
    assert abs(sample.mean() - mean) < z * math.sqrt(var / n)
    assert abs(sample.var() - var) < z * var * math.sqrt(2 / (n - 1))


def test_noisy_gd_quadratic_matches_gaussian_law():
    data, eta, sigma, K, s0 = np.array([[1.0], [0.0]]), 0.1, 0.5, 30, 0.4
    theta = simulate_noisy_gd(Quadratic(1.0), data, eta=eta, sigma=sigma, K=K, chains=100_000, seed=0,
                              start_mean=0.2, start_sd=s0)
    m = 1 - eta
    mean = m**K * 0.2 + (1 - m**K) * 0.5
    var = m ** (2 * K) * s0**2 + 2 * eta * sigma**2 * (1 - m ** (2 * K)) / (1 - m**2)
    _stat_close(theta[:, 0], mean, var)


def test_pnsgd_quadratic_matches_closed_form():
    # seed-001 Sec. 3.1: w_n = c^n w_0 + eta lam sum_k c^(n-k) x_k - eta sum_k c^(n-k) Z_k, c = 1 - eta lam
    x, eta, lam, sigma = np.array([0.5, -1.0, 2.0, 0.3]), 0.3, 1.2, 0.7
    theta = simulate_pnsgd(Quadratic(lam), x[:, None], eta=eta, sigma=sigma, chains=100_000, seed=1, start_mean=0.4)
    c, n = 1 - eta * lam, x.size
    mean = c**n * 0.4 + eta * lam * sum(c ** (n - 1 - k) * x[k] for k in range(n))
    var = eta**2 * sigma**2 * sum(c ** (2 * k) for k in range(n))
    _stat_close(theta[:, 0], mean, var)


def test_dpsgd_one_step_moments():
    # theta_1 = theta_0 - eta/(q n) (sum_B clip(g_i) + sigma C Z): E = theta_0 - eta/n sum clip(g_i),
    # Var = (eta/(q n))^2 (q (1 - q) sum clip(g_i)^2 + sigma^2 C^2)
    x, eta, q, sigma, clip = np.array([3.0, -0.4, 0.2, 1.5]), 0.5, 0.3, 0.8, 1.0
    g = np.clip(0.0 - x, -clip, clip)  # Quadratic(1) gradient at theta_0 = 0, clipped
    theta = simulate_dpsgd(Quadratic(1.0), x[:, None], eta=eta, sigma=sigma, clip=clip, q=q, steps=1,
                           chains=200_000, seed=4)
    n = x.size
    mean = -eta / n * g.sum()
    var = (eta / (q * n)) ** 2 * (q * (1 - q) * np.sum(g**2) + sigma**2 * clip**2)
    _stat_close(theta[:, 0], mean, var)


def test_rao_blackwell_mixture_tracks_exact_density():
    data, eta, sigma, K = np.array([[1.0, -1.0], [0.0, 0.5]]), 0.2, 0.5, 8
    mix = noisy_gd_last_step_mixture(Quadratic(1.0), data, eta=eta, sigma=sigma, K=K, chains=4000, seed=9)
    m = 1 - eta
    mean = (1 - m**K) * data.mean(axis=0)
    var = 2 * eta * sigma**2 * (1 - m ** (2 * K)) / (1 - m**2)
    pts = mean + np.array([[0.0, 0.0], [0.3, -0.2], [-0.5, 0.4]])
    exact = multivariate_normal(mean, var * np.eye(2)).logpdf(pts)
    assert np.allclose(to_host(mix.log_pdf(get_namespace().asarray(pts))), exact, atol=0.05)


def test_losses_gradients_match_finite_differences():
    xp = get_namespace()
    theta = xp.asarray([[0.3, -0.7], [1.4, 0.2]])
    record = xp.asarray([[0.9, 0.4]])
    for loss in LOSSES:
        g = loss.grad(theta, record)
        for j in range(2):
            e = xp.asarray([1e-6 if i == j else 0.0 for i in range(2)])
            fd = (loss.value(theta + e, record) - loss.value(theta - e, record)) / 2e-6
            assert np.allclose(g[:, j], fd, atol=1e-6)


# ---- backends and argument checks ---------------------------------------------------------------------------

def test_backend_selection(monkeypatch):
    monkeypatch.setenv("VERIFY_BACKEND", "array_api_strict")
    assert get_namespace().__name__ == "array_api_strict"
    monkeypatch.delenv("VERIFY_BACKEND")
    assert get_namespace() is get_namespace("numpy")
    with pytest.raises(ParameterError, match="backend"):
        get_namespace("torch")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed here")
def test_cupy_backend_without_cupy_is_a_clear_error():
    with pytest.raises(ParameterError, match="cupy"):
        get_namespace("cupy")


@pytest.mark.parametrize("kwargs, name", [
    (dict(alpha=1.0), "alpha"), (dict(n=1), "n"), (dict(seed=-1), "seed"), (dict(seed=1.5), "seed"),
    (dict(confidence=1.0), "confidence"),
])
def test_estimator_rejects_bad_arguments(kwargs, name):
    args = dict(alpha=2.0, n=100, seed=0, confidence=0.95)
    args.update(kwargs)
    with pytest.raises(ParameterError, match=name):
        renyi_naive(SGM_P.log_pdf, SGM_Q, args.pop("alpha"), **args)


@pytest.mark.parametrize("kwargs, name", [
    (dict(eta=0.0), "eta"), (dict(sigma=-1.0), "sigma"), (dict(chains=0), "chains"), (dict(K=-1), "K"),
    (dict(seed=-3), "seed"), (dict(constraint="ball"), "constraint"),
])
def test_kernels_reject_bad_arguments(kwargs, name):
    args = dict(eta=0.1, sigma=1.0, K=2, chains=4, seed=0)
    args.update(kwargs)
    with pytest.raises(ParameterError, match=name):
        simulate_noisy_gd(Quadratic(1.0), DATA_2D, **args)
    with pytest.raises(ParameterError, match="q"):
        simulate_dpsgd(Quadratic(1.0), DATA_2D, eta=0.1, sigma=1.0, clip=1.0, q=0.0, steps=1, chains=2, seed=0)
    with pytest.raises(ParameterError, match="R"):
        Ball(-1.0)
