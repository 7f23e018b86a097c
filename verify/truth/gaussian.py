"""Exact Rényi divergence and (eps, delta) curve between Gaussians."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from numpy.typing import ArrayLike

from verify.errors import ParameterError
from verify.truth.numbers import NotEnclosable, decreasing_root, enclose_decreasing_root, num, to_mpf


def _check_alpha(alpha: float) -> None:
    if not alpha > 1 or math.isnan(alpha):
        raise ParameterError(f"Rényi order alpha must be > 1, got {alpha}")


def renyi_gaussian(mu_p: ArrayLike, cov_p: ArrayLike, mu_q: ArrayLike, cov_q: ArrayLike, alpha: float) -> float:
    """R_alpha(N(mu_p, cov_p) || N(mu_q, cov_q)) for any positive-definite covariances.

    With C = alpha*cov_q + (1-alpha)*cov_p (Gil, Alajaji & Linder 2013):
    R = alpha/2 * dmu' C^{-1} dmu - log(det C / (det cov_p^(1-alpha) det cov_q^alpha)) / (2(alpha-1)).
    Returns +inf when C is not positive definite (the divergence is infinite there).
    """
    _check_alpha(alpha)
    mu_p, mu_q = np.atleast_1d(np.asarray(mu_p, float)), np.atleast_1d(np.asarray(mu_q, float))
    cov_p, cov_q = np.atleast_2d(np.asarray(cov_p, float)), np.atleast_2d(np.asarray(cov_q, float))
    if not (np.all(np.isfinite(cov_p)) and np.all(np.isfinite(cov_q))):
        raise ParameterError("covariances must be finite")
    for name, cov in (("cov_p", cov_p), ("cov_q", cov_q)):
        if np.linalg.eigvalsh(cov).min() <= 0:
            raise ParameterError(f"{name} must be positive definite")
    mix = alpha * cov_q + (1 - alpha) * cov_p
    if np.linalg.eigvalsh(mix).min() <= 0:
        return math.inf
    dmu = mu_p - mu_q
    quad = float(dmu @ np.linalg.solve(mix, dmu))
    logdet = np.linalg.slogdet(mix)[1] - (1 - alpha) * np.linalg.slogdet(cov_p)[1] - alpha * np.linalg.slogdet(cov_q)[1]
    return 0.5 * alpha * quad - logdet / (2 * (alpha - 1))


def renyi_gaussian_1d(mu_p, var_p, mu_q, var_q, alpha) -> mpmath.mpf:
    """R_alpha(N(mu_p, var_p) || N(mu_q, var_q)) in the active number system (+inf if infinite)."""
    N = num()
    mu_p, var_p, mu_q, var_q, alpha = map(N.mpf, (mu_p, var_p, mu_q, var_q, alpha))
    _check_alpha(float(alpha))
    if N.sign(var_p) != 1 or N.sign(var_q) != 1:
        raise ParameterError("variances must be > 0")
    mix = alpha * var_q + (1 - alpha) * var_p
    side = N.sign(mix)
    if side is None:
        raise NotEnclosable("alpha var_q + (1 - alpha) var_p straddles 0: finite or infinite is undecided")
    if side <= 0:
        return N.inf
    logdet = N.log(mix) - (1 - alpha) * N.log(var_p) - alpha * N.log(var_q)
    return alpha * (mu_p - mu_q) ** 2 / (2 * mix) - logdet / (2 * (alpha - 1))


def gaussian_delta(eps, mu) -> mpmath.mpf:
    """Tight delta(eps) of the pair N(0,1) vs N(mu,1) (Balle & Wang 2018, Thm. 8); symmetric in mu."""
    N = num()
    mu, eps = abs(N.mpf(mu)), N.mpf(eps)
    if N.sign(mu) == 0:
        return N.mpf(0)
    return N.ncdf(mu / 2 - eps / mu) - N.exp(eps) * N.ncdf(-mu / 2 - eps / mu)


def gaussian_tradeoff(x, mu) -> mpmath.mpf:
    """The trade-off function G_mu(x) = Phi(Phi^-1(1 - x) - mu) of N(0,1) vs N(mu,1) (Dong, Roth & Su 2022): the
    smallest type-II error of a test with type-I error x; symmetric in the order of the pair."""
    N = num()
    x = N.mpf(x)
    return N.ncdf(N.ncdf_inv(1 - x) - abs(N.mpf(mu)))


def gaussian_dp_epsilon(delta, mu) -> mpmath.mpf:
    """Smallest eps >= 0 with (eps, delta)-DP for N(0,1) vs N(mu,1) (both orders; the pair is symmetric).

    In Arb numbers the root is enclosed rigorously by a bracket around the mpmath root (delta(eps) decreases)."""
    if num().rigorous:
        return enclose_decreasing_root(lambda e: gaussian_delta(e, mu), delta,
                                       lambda: gaussian_dp_epsilon(to_mpf(delta), to_mpf(mu)))
    delta, mu = mpmath.mpf(delta), abs(mpmath.mpf(mu))
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {float(delta)}")
    if mu == 0:  # identical laws
        return mpmath.mpf(0)
    # d delta / d eps = -e^eps Phi(-mu/2 - eps/mu)
    return decreasing_root(lambda e: (gaussian_delta(e, mu), -mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)), delta)
