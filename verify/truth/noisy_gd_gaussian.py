"""Exact law of noisy GD (Chourasia et al. 2021, Algorithm 1) on quadratic losses over R^d.

Loss l(theta; x) = 1/2 (theta - x)' A (theta - x), identical curvature A for every record, so
grad L_D(theta) = A (theta - mean(D)); update theta <- theta - eta grad L_D(theta) + sqrt(2 eta) N(0, sigma^2 I).
Only the last iterate is released. The law stays Gaussian: mean and covariance follow linear recursions
(`noisy_gd_gaussian_law`), solved in closed form for isotropic curvature in `isotropic_*`
(derivation: derivations/noisy_gd_quadratic.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
from numpy.typing import ArrayLike

from verify.truth.numbers import gap_power, geometric_gap, geometric_partials_gap, num


@dataclass(frozen=True)
class GaussianLaw:
    mean: np.ndarray
    cov: np.ndarray


def noisy_gd_gaussian_law(A: ArrayLike, data_mean: ArrayLike, eta: float, sigma: float,
                          start_mean: ArrayLike, start_cov: ArrayLike, K: int) -> GaussianLaw:
    """Law of theta_K by the mean/covariance recursion (any symmetric A, any Gaussian start)."""
    A = np.atleast_2d(np.asarray(A, float))
    M = np.eye(A.shape[0]) - eta * A
    mean = np.asarray(start_mean, float).copy()
    cov = np.atleast_2d(np.asarray(start_cov, float)).copy()
    drift = eta * A @ np.asarray(data_mean, float)
    for _ in range(int(K)):
        mean = M @ mean + drift
        cov = M @ cov @ M.T + 2 * eta * sigma**2 * np.eye(A.shape[0])
    return GaussianLaw(mean, cov)


def isotropic_variance(eta, sigma, lam, start_var, K) -> mpmath.mpf:
    """Per-coordinate variance of theta_K for curvature A = lam I: m^{2K} s0 + 2 eta sigma^2 sum_{k<K} m^{2k}, from the
    gap x = eta lam = 1 - m (verify.truth.numbers.geometric_gap: no cancellation for eta lam tiny or near 2)."""
    eta, sigma, lam, start_var = map(num().mpf, (eta, sigma, lam, start_var))
    x = eta * lam
    return gap_power(x, 2 * int(K)) * start_var + 2 * eta * sigma**2 * geometric_gap(x, K, power=2)


def isotropic_mean_gap(eta, lam, S, n, K) -> mpmath.mpf:
    """|E theta_K(D) - E theta_K(D')| = |1 - m^K| S / (lam n) = eta |sum_{k<K} m^k| S / n (1 - m^K = eta lam
    sum_{k<K} m^k: the factor eta lam cancels exactly instead of numerically), S = ||grad sum difference||
    (= lam ||x1 - x1'||)."""
    eta, lam, S = map(num().mpf, (eta, lam, S))
    return eta * abs(geometric_gap(eta * lam, K)) * S / n


def isotropic_renyi(alpha, sigma, eta, n, K, S, lam, start_var) -> mpmath.mpf:
    """Exact R_alpha(theta_K(D) || theta_K(D')) = alpha * gap^2 / (2 var) (equal covariances)."""
    var = isotropic_variance(eta, sigma, lam, start_var, K)
    return num().mpf(alpha) * isotropic_mean_gap(eta, lam, S, n, K) ** 2 / (2 * var)


def isotropic_lsi_constant(sigma, eta, lam, start_var, K) -> mpmath.mpf:
    """Largest c such that every tracing-diffusion marginal on [0, eta K] is c-LSI.

    Marginals are Gaussian N(., v I), which is exactly (1/v)-LSI; at time eta k + s the variance is
    m^2 v_k + 2 s sigma^2 <= v_{k+1}, and v_k is monotone in k, so c = 1 / max(v_0, v_K).
    """
    return 1 / num().maximum(num().mpf(start_var), isotropic_variance(eta, sigma, lam, start_var, K))


def isotropic_excess_risk(sigma, eta, lam, start_var, K, d, dist) -> mpmath.mpf:
    """E[L_D(theta_K)] - min L_D = lam/2 (m^{2K} dist^2 + d v_K), dist = ||E theta_0 - argmin L_D||."""
    eta, lam = num().mpf(eta), num().mpf(lam)
    return lam / 2 * (gap_power(eta * lam, 2 * int(K)) * num().mpf(dist) ** 2
                      + d * isotropic_variance(eta, sigma, lam, start_var, K))


def sum_geometric_partials(r, K: int):
    """sum_{k=1}^K sum_{j<k-1} r^j = (K - sum_{k<K} r^k)/(1 - r), K(K-1)/2 at r = 1. Takes r itself, so 1 - r is
    only as accurate as r: callers that know the gap 1 - r use verify.truth.numbers.geometric_partials_gap."""
    return geometric_partials_gap(1 - r, K)


def sum_gd_moments(eta, sigma, n, lam, K):
    """NoisyGD on the summed loss f = sum_i (lam/2)||x - x_i||^2 (Wang's lecture, eq. 12.1 with descent sign):
    x_{k+1} = x_k - eta (grad f(x_k) + N(0, sigma^2 I)), so e_k = x_k - argmin f has
    E e_k = m^(k-1) e_1 and per-coordinate variance v_k = eta^2 sigma^2 sum_{j<k-1} m^(2j), m = 1 - eta n lam.

    Returns (m, sum_{k=1}^K m^(2(k-1)), sum_{k=1}^K v_k) for the ergodic averages over x_1..x_K, the sums from the
    gap x = eta n lam (no cancellation at any step size).
    """
    eta, sigma, n, lam = map(num().mpf, (eta, sigma, n, lam))
    x = eta * n * lam
    decay = geometric_gap(x, K, power=2)
    # sum_{k=1}^K sum_{j<k-1} r^j = (K - decay)/(1 - r), r = m^2, or K(K-1)/2 at r = 1
    noise = eta**2 * sigma**2 * geometric_partials_gap(x, K, power=2)
    return 1 - x, decay, noise


def sum_gd_avg_grad_sq(eta, sigma, n, lam, K, d, dist) -> mpmath.mpf:
    """(1/K) sum_{k=1}^K E||grad f(x_k)||^2 = (n lam)^2 (dist^2 S_m + d S_v)/K, x_1 fixed at distance dist."""
    _, decay, noise = sum_gd_moments(eta, sigma, n, lam, K)
    return (num().mpf(n) * lam) ** 2 * (num().mpf(dist) ** 2 * decay + d * noise) / K


def sum_gd_avg_excess(eta, sigma, n, lam, K, d, dist) -> mpmath.mpf:
    """(1/K) sum_{k=1}^K E[f(x_k) - f*] = (n lam / 2)(dist^2 S_m + d S_v)/K."""
    _, decay, noise = sum_gd_moments(eta, sigma, n, lam, K)
    return num().mpf(n) * lam / 2 * (num().mpf(dist) ** 2 * decay + d * noise) / K


def sum_gd_renyi(alpha, sigma, eta, n, lam, K, S) -> mpmath.mpf:
    """R_alpha of x_{K+1} when one record changes the summed gradient by S (constant for quadratics):
    mean gap eta S sum_{j<K} m^j, variance eta^2 sigma^2 sum_{j<K} m^(2j)."""
    alpha, sigma, eta, n, lam, S = map(num().mpf, (alpha, sigma, eta, n, lam, S))
    x = eta * n * lam
    gap = eta * S * geometric_gap(x, K)
    return alpha * gap**2 / (2 * eta**2 * sigma**2 * geometric_gap(x, K, power=2))
