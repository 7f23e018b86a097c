"""Exact laws of contractive noisy iterations with affine maps (Feldman et al. 2018) on R^d.

One-pass noisy SGD (PNSGD, Alg. 1, no projection) on f(w; x) = (lam/2)||w - x||^2 is
w_{k+1} = c w_k + eta lam x_{k+1} - eta Z_{k+1}, c = 1 - eta lam, Z ~ N(0, sigma^2 I): Gaussian with equal
covariances for neighbouring datasets, so R_alpha = alpha gap^2 / (2 var) along the differing direction.
"""

from __future__ import annotations

import mpmath

from verify.truth.numbers import geometric, num


def pnsgd_renyi(alpha, sigma, n: int, t: int, Delta, c) -> mpmath.mpf:
    """R_alpha of the last PNSGD iterate when record t of n differs; Delta = gradient difference, c = 1 - eta lam.

    Mean gap eta c^(n-t) Delta, variance eta^2 sigma^2 sum_{k<n} c^(2k); eta cancels.
    """
    alpha, sigma, Delta, c = map(num().mpf, (alpha, sigma, Delta, c))
    return alpha * Delta**2 * c ** (2 * (n - t)) / (2 * sigma**2 * geometric(c**2, n))


def pnmsgd_renyi(alpha, sigma, n: int, i: int, Delta, c) -> mpmath.mpf:
    """R_alpha after n epochs in a fixed order (Alg. 2) when record i differs: used at steps j n + i.

    Mean gap eta Delta c^(n-i) sum_{k<n} c^(n k), variance eta^2 sigma^2 sum_{k<n^2} c^(2k).
    """
    alpha, sigma, Delta, c = map(num().mpf, (alpha, sigma, Delta, c))
    gap = Delta * c ** (n - i) * geometric(c**n, n)
    return alpha * gap**2 / (2 * sigma**2 * geometric(c**2, n * n))


def cni_affine_renyi(alpha, sigma, K: int, D0, kappa) -> mpmath.mpf:
    """R_alpha(X_K || X'_K) for X_{k+1} = kappa X_k + b + N(0, sigma^2), starts at distance D0."""
    alpha, sigma, D0, kappa = map(num().mpf, (alpha, sigma, D0, kappa))
    return alpha * kappa ** (2 * K) * D0**2 / (2 * sigma**2 * geometric(kappa**2, K))


def shifted_renyi_gaussian(alpha, gap, var, z) -> mpmath.mpf:
    """D_alpha^{(z)}(N(m1, var I) || N(m2, var I)) = alpha max(0, ||m1 - m2|| - z)^2 / (2 var).

    Upper bound: move the first law by z towards m2. Lower bound: any law within W_inf distance z of
    N(m1, var) dominates N(||m1-m2|| - z, var) along m1 - m2 (research note seed-001, section 2.2).
    """
    alpha, gap, var, z = map(num().mpf, (alpha, gap, var, z))
    return alpha * num().maximum(num().mpf(0), gap - z) ** 2 / (2 * var)
