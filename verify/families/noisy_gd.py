"""Noisy GD (Chourasia et al. 2021, Algorithm 1) on quadratic losses: exact Gaussian ground truth."""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Family, Parameter, Quantity
from verify.symbols import K, S, alpha, d, delta, dist, eps, eta, lam, n, sigma, start_var, type1
from verify.truth.gaussian import gaussian_delta, gaussian_dp_epsilon, gaussian_tradeoff
from verify.truth.noisy_gd_gaussian import (
    isotropic_excess_risk,
    isotropic_lsi_constant,
    isotropic_mean_gap,
    isotropic_renyi,
    isotropic_variance,
    sum_gd_avg_excess,
    sum_gd_avg_grad_sq,
    sum_gd_renyi,
)
from verify.truth.numbers import num

_HOW = "closed form of the Gaussian law (mean/variance recursion solved exactly), mpmath 50 digits"


def _renyi(alpha, sigma, eta, n, K, S, lam, start_var):
    return isotropic_renyi(alpha, sigma, eta, n, int(K), S, lam, start_var)


def _dp_epsilon(sigma, eta, n, K, S, lam, start_var, delta):
    gap = isotropic_mean_gap(eta, lam, S, n, int(K))
    mu = gap / num().sqrt(isotropic_variance(eta, sigma, lam, start_var, int(K)))
    return gaussian_dp_epsilon(delta, mu)


def _lsi(sigma, eta, lam, start_var, K):
    return isotropic_lsi_constant(sigma, eta, lam, start_var, int(K))


def _risk(sigma, eta, lam, start_var, K, d, dist):
    return isotropic_excess_risk(sigma, eta, lam, start_var, int(K), int(d), dist)


_R, _DP, _LSI, _RISK = Quantity.RENYI, Quantity.DP_EPSILON, Quantity.LSI_CONSTANT, Quantity.EXCESS_RISK
_DELTA, _GDP, _TRADEOFF = Quantity.DP_DELTA, Quantity.GDP_MU, Quantity.TRADEOFF
_F_DP = (_GDP, _DELTA, _TRADEOFF)  # equal-covariance Gaussian pairs: mu-GDP with mu^2 = R_2 (Mahalanobis)
_F_DP_PARAMS = (Parameter(eps, eps > 0, "eps of delta(eps)", quantities=(_DELTA,)),
                Parameter(type1, type1 < 1, "type-I error x of the trade-off function", quantities=(_TRADEOFF,)))


def _f_dp_truths(renyi) -> dict:
    """mu, delta(eps) and the trade-off of a pair of Gaussians with one covariance, from its R_2 = mu^2."""
    how = "equal-covariance Gaussian pair: mu = sqrt(R_2), closed forms of Dong, Roth & Su / Balle & Wang, 50 digits"

    def mu(**p):
        return num().sqrt(renyi(2, **p))

    return {_GDP: exact(mu, how),
            _DELTA: exact(lambda eps, **p: gaussian_delta(eps, mu(**p)), how),
            _TRADEOFF: exact(lambda type1, **p: gaussian_tradeoff(type1, mu(**p)), how)}

NOISY_GD_QUADRATIC = Family(
    name="noisy_gd_quadratic",
    description=(
        "Full-batch noisy GD theta <- theta - eta*grad L_D(theta) + sqrt(2*eta)*N(0, sigma^2 I) on the loss "
        "(lam/2)||theta - x||^2 over R^d, last iterate released; D, D' differ in one of n records with "
        "||grad sum difference|| = S; start N(0, start_var I) shared by both runs (start_var = 0: fixed start)."
    ),
    parameters=(
        Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)),
        Parameter(sigma, sigma > 0, "Langevin noise scale; each step adds N(0, 2*eta*sigma^2 I)"),
        Parameter(eta, eta > 0, "step size"),
        Parameter(n, n >= 1, "dataset size (replace-one neighbours)", integer=True, quantities=(_R, _DP, *_F_DP)),
        Parameter(K, K >= 1, "number of iterations", integer=True),
        Parameter(S, S >= 0, "summed-gradient sensitivity S_g = lam*||x - x'||", quantities=(_R, _DP, *_F_DP)),
        Parameter(lam, lam > 0, "curvature of the loss (strong convexity = smoothness = lam)"),
        Parameter(start_var, start_var >= 0, "variance of the N(0, start_var I) start; 0 = fixed start"),
        Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP", quantities=(_DP,)),
        Parameter(d, d >= 1, "dimension", integer=True, quantities=(_RISK,)),
        Parameter(dist, dist >= 0, "distance from the start mean to the minimiser of L_D", quantities=(_RISK,)),
        *_F_DP_PARAMS,
    ),
    facts=frozenset({"quadratic_loss", "unconstrained", "replace_one", "gaussian_start", "shared_start"}),
    truths={
        _R: exact(_renyi, _HOW),
        _DP: exact(_dp_epsilon, "tight (eps, delta) of the Gaussian pair (Balle-Wang), bisection at 50 digits",
                   arb_first=False),
        **_f_dp_truths(_renyi),
        _LSI: exact(_lsi, "1/max_t variance of the Gaussian tracing-diffusion marginals, 50 digits"),
        _RISK: exact(_risk, "lam/2 (m^{2K} dist^2 + d v_K) from the exact Gaussian law, 50 digits"),
    },
    method=_HOW,
)


def _sum_renyi(alpha, sigma, eta, n, K, S, lam):
    return sum_gd_renyi(alpha, sigma, eta, n, lam, int(K), S)


def _sum_dp(sigma, eta, n, K, S, lam, delta):
    # equal-variance Gaussian pair: R_2 = mu^2 where mu is the Mahalanobis distance
    return gaussian_dp_epsilon(delta, num().sqrt(sum_gd_renyi(2, sigma, eta, n, lam, int(K), S)))


_UTIL = (Quantity.AVG_GRAD_SQ, Quantity.AVG_EXCESS_RISK)
_SUM_HOW = "closed form of the Gaussian iterates (geometric sums), mpmath 50 digits"

NOISY_GD_SUM_QUADRATIC = Family(
    name="noisy_gd_sum_quadratic",
    description=(
        "NoisyGD as in Wang's lecture notes (eq. 12.1, descent sign): "
        "x <- x - eta*(sum_i grad l_i(x) + N(0, sigma^2 I)) on l_i = (lam/2)||x - x_i||^2 over R^d from a fixed "
        "x_1 at distance dist from the minimiser; one record changes the summed gradient by S "
        "(the sensitivity L of the notes)."
    ),
    parameters=(
        Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)),
        Parameter(sigma, sigma > 0, "std of the noise added to the summed gradient"),
        Parameter(eta, eta > 0, "step size"),
        Parameter(n, n >= 1, "dataset size", integer=True),
        Parameter(K, K >= 1, "number of iterations T", integer=True),
        Parameter(S, S >= 0, "sensitivity of the summed gradient", quantities=(_R, _DP, *_F_DP)),
        Parameter(lam, lam > 0, "per-record curvature (each l_i is lam-smooth and lam-strongly convex)"),
        Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP", quantities=(_DP,)),
        Parameter(d, d >= 1, "dimension", integer=True, quantities=_UTIL),
        Parameter(dist, dist >= 0, "||x_1 - argmin f||", quantities=_UTIL),
        *_F_DP_PARAMS,
    ),
    facts=frozenset({"quadratic_loss", "unconstrained", "replace_one", "fixed_start"}),
    truths={
        _R: exact(_sum_renyi, _SUM_HOW),
        _DP: exact(_sum_dp, "tight (eps, delta) of the Gaussian output pair, bisection/Newton at 50 digits",
                   arb_first=False),
        **_f_dp_truths(_sum_renyi),
        Quantity.AVG_GRAD_SQ: exact(lambda sigma, eta, n, K, lam, d, dist: sum_gd_avg_grad_sq(
            eta, sigma, n, lam, int(K), int(d), dist), _SUM_HOW),
        Quantity.AVG_EXCESS_RISK: exact(lambda sigma, eta, n, K, lam, d, dist: sum_gd_avg_excess(
            eta, sigma, n, lam, int(K), int(d), dist), _SUM_HOW),
    },
    method=_SUM_HOW,
)
