"""The simulation kernels and estimators on CuPy (`nox -s gpu` on a CUDA machine; skipped where no GPU is usable).

CuPy draws from its own device generator, so its outputs are held to reproducibility (same seed, same arrays) and to
the closed-form laws of the instances, not bit for bit to numpy's stream."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.backend import get_namespace, to_host
from verify.errors import ParameterError
from verify.truth.losses import LogisticRidge, Quadratic
from verify.truth.mixture import sgm_renyi
from verify.truth.montecarlo import Ball, simulate_dpsgd, simulate_noisy_gd, simulate_pnsgd
from verify.truth.renyi_estimator import GaussianMixture, geometric_tilt, renyi_importance

pytest.importorskip("cupy")
try:
    CUPY = get_namespace("cupy")
except ParameterError as exc:  # cupy installed but no driver or device
    pytest.skip(f"no usable GPU: {exc}", allow_module_level=True)


def _moments_close(sample: np.ndarray, mean: float, var: float, z: float = 5.0) -> None:
    n = sample.size
    assert abs(sample.mean() - mean) < z * math.sqrt(var / n)
    assert abs(sample.var() - var) < z * var * math.sqrt(2 / (n - 1))


def test_same_seed_same_arrays_on_the_device():
    data = np.array([[1.0, 0.5], [-0.5, 0.2], [0.3, -1.0]])

    def outputs(seed: int) -> list[np.ndarray]:
        loss = LogisticRidge(0.5)
        return [to_host(simulate_noisy_gd(loss, data, eta=0.1, sigma=0.5, K=15, chains=3000, seed=seed,
                                          start_sd=0.3, constraint=Ball(1.0), xp=CUPY)),
                to_host(simulate_pnsgd(loss, data, eta=0.2, sigma=0.5, chains=3000, seed=seed, xp=CUPY)),
                to_host(simulate_dpsgd(loss, data, eta=0.1, sigma=1.0, clip=1.0, q=0.3, steps=8, chains=3000,
                                       seed=seed, xp=CUPY))]

    first = outputs(7)
    assert all(np.array_equal(a, b) for a, b in zip(first, outputs(7), strict=True))
    assert not np.array_equal(first[0], outputs(8)[0])
    assert np.all(np.linalg.norm(first[0], axis=1) <= 1.0 + 1e-12)


def test_noisy_gd_on_the_device_has_the_gaussian_law():
    data, eta, sigma, K, s0 = np.array([[1.0], [0.0]]), 0.1, 0.5, 30, 0.4
    theta = to_host(simulate_noisy_gd(Quadratic(1.0), data, eta=eta, sigma=sigma, K=K, chains=400_000, seed=0,
                                      start_mean=0.2, start_sd=s0, xp=CUPY))
    m = 1 - eta
    mean = m**K * 0.2 + (1 - m**K) * 0.5
    var = m ** (2 * K) * s0**2 + 2 * eta * sigma**2 * (1 - m ** (2 * K)) / (1 - m**2)
    _moments_close(theta[:, 0], mean, var)


def test_dpsgd_step_on_the_device_has_the_closed_form_moments():
    x, eta, q, sigma, clip = np.array([3.0, -0.4, 0.2, 1.5]), 0.5, 0.3, 0.8, 1.0
    g = np.clip(0.0 - x, -clip, clip)
    theta = to_host(simulate_dpsgd(Quadratic(1.0), x[:, None], eta=eta, sigma=sigma, clip=clip, q=q, steps=1,
                                   chains=400_000, seed=4, xp=CUPY))
    n = x.size
    mean = -eta / n * g.sum()
    var = (eta / (q * n)) ** 2 * (q * (1 - q) * np.sum(g**2) + sigma**2 * clip**2)
    _moments_close(theta[:, 0], mean, var)


def test_tilted_estimator_on_the_device_covers_the_exact_value():
    q, sigma, alpha = 0.01, 1.1, 16
    p = GaussianMixture([1 - q, q], [0.0, 1.0], [sigma, sigma])
    qq = GaussianMixture([1.0], [0.0], [sigma])
    exact = sgm_renyi(q, sigma, alpha, "pq").value
    est = renyi_importance(p.log_pdf, qq.log_pdf, geometric_tilt(p, qq, alpha), alpha, n=200_000, seed=5, xp=CUPY)
    again = renyi_importance(p.log_pdf, qq.log_pdf, geometric_tilt(p, qq, alpha), alpha, n=200_000, seed=5, xp=CUPY)
    assert est.lower <= exact <= est.upper
    assert (est.value, est.lower, est.upper) == (again.value, again.lower, again.upper)
