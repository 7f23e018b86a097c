"""1-D instances with projection or non-quadratic losses: truth by transfer-matrix density propagation
(verify.truth.grid1d), with an error estimate from grid refinement. Rényi truths take both orders."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Truth
from verify.symbols import K, L, R, S, alpha, center, eta, lam, n, sigma, start_var, t, x, xo
from verify.truth.grid1d import grid_expectation, grid_renyi_both, noisy_gd_process, pnsgd_process

_R, _RISK = Quantity.RENYI, Quantity.EXCESS_RISK


def _both_orders(p, p_prime, alpha: float, what: str) -> Truth:
    return Truth.larger(*grid_renyi_both(p, p_prime, alpha), f"{what}, both orders")


def _quadratic_means(S, lam, n, center):
    """Dataset means of the projected quadratic instance: records differ by S/lam, means by S/(lam n)."""
    gap = S / (lam * n)
    return center + gap / 2, center - gap / 2


def _projected_renyi(alpha, sigma, eta, n, K, S, lam, start_var, R, center) -> Truth:
    m, m_prime = _quadratic_means(S, lam, n, center)
    common = dict(eta=eta, sigma=sigma, K=int(K), R=R, start_sd=math.sqrt(start_var))
    p = noisy_gd_process(lambda th: lam * (th - m), key=("quadratic", lam, m), **common)
    p_prime = noisy_gd_process(lambda th: lam * (th - m_prime), key=("quadratic", lam, m_prime), **common)
    return _both_orders(p, p_prime, alpha, "projected noisy GD on a quadratic")


def _projected_risk(sigma, eta, n, K, S, lam, start_var, R, center) -> Truth:
    m, _ = _quadratic_means(S, lam, n, center)
    best = min(max(m, -R), R)  # minimiser of L_D over C
    p = noisy_gd_process(lambda th: lam * (th - m), eta=eta, sigma=sigma, K=int(K), R=R,
                         start_sd=math.sqrt(start_var), key=("quadratic", lam, m))
    return grid_expectation(p, lambda th: lam / 2 * ((th - m) ** 2 - (best - m) ** 2))


NOISY_GD_PROJECTED_1D = Family(
    name="noisy_gd_projected_1d",
    description="Noisy GD (Chourasia et al. Alg. 1) on (lam/2)(theta - x)^2 over C = [-R, R] in 1-D, projecting every "
                "step and the start Proj(N(0, start_var)); the replaced record moves the dataset mean by "
                "S/(lam n) around `center` (records: n-1 at center, x_1 = center +- S/(2 lam)).",
    parameters=(
        Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)),
        Parameter(sigma, sigma > 0, "Langevin noise scale; each step adds N(0, 2 eta sigma^2)"),
        Parameter(eta, eta > 0, "step size"), Parameter(n, n >= 1, "dataset size", integer=True),
        Parameter(K, sp.And(K >= 1, K <= 500), "iterations (the grid is run for K <= 500)", integer=True),
        Parameter(S, S >= 0, "summed-gradient sensitivity lam |x_1 - x_1'|"),
        Parameter(lam, lam > 0, "curvature"), Parameter(start_var, start_var >= 0, "start variance (0: fixed at 0)"),
        Parameter(R, R > 0, "C = [-R, R]"), Parameter(center, sp.true, "midpoint of the two dataset means"),
    ),
    facts=frozenset({"quadratic_loss", "bounded_domain", "replace_one", "gaussian_start", "shared_start", "projected"}),
    truths={_R: _projected_renyi, _RISK: _projected_risk},
    method="1-D transfer matrix with boundary atoms, refined grid error estimate",
    expensive=True,
    # a search draws where [-R, R] holds at most ~5,700 cells of the refined step min(s/20, R/40), s = sqrt(2 eta)
    # sigma (the grid's cap is 40,000; a point near it costs seconds)
    search_region=(R <= 100 * sigma * sp.sqrt(eta), alpha <= 50),
)


def _logistic_grad(x, lam):
    return lambda th: -x / (1 + np.exp(np.clip(x * th, -700, 700))) + lam * th


def _logistic_renyi(alpha, sigma, eta, n, K, x, xo, lam, start_var) -> Truth:
    common = dict(eta=eta, sigma=sigma, K=int(K), start_sd=math.sqrt(start_var))
    shared = _logistic_grad(xo, lam)
    avg = [lambda th, s=sign: ((n - 1) * shared(th) + _logistic_grad(s * x, lam)(th)) / n for sign in (1, -1)]
    keys = [("logistic_ridge_mean", float(n), float(xo), float(sign * x), float(lam)) for sign in (1, -1)]
    return _both_orders(noisy_gd_process(avg[0], key=keys[0], **common),
                        noisy_gd_process(avg[1], key=keys[1], **common), alpha, "noisy GD on logistic + ridge")


NOISY_GD_LOGISTIC_1D = Family(
    name="noisy_gd_logistic_1d",
    description="Noisy GD (Chourasia et al. Alg. 1) on l(theta; x) = log(1 + exp(-x theta)) + (lam/2) theta^2 over R; "
                "n-1 records equal xo, the replaced record is x on D and -x on D' (gradient difference constant |x|).",
    parameters=(
        Parameter(alpha, alpha > 1, "Rényi order"), Parameter(sigma, sigma > 0, "Langevin noise scale"),
        Parameter(eta, eta > 0, "step size"), Parameter(n, n >= 1, "dataset size", integer=True),
        Parameter(K, sp.And(K >= 1, K <= 500), "iterations (the grid is run for K <= 500)", integer=True),
        Parameter(x, sp.true, "replaced record (x vs -x)"),
        Parameter(xo, sp.true, "the n-1 shared records"), Parameter(lam, lam > 0, "ridge curvature = strong convexity"),
        Parameter(start_var, start_var >= 0, "start variance (0: fixed at 0)"),
    ),
    facts=frozenset({"replace_one", "gaussian_start", "shared_start", "unconstrained", "logistic_loss"}),
    truths={_R: _logistic_renyi},
    method="1-D transfer matrix, refined grid error estimate",
    expensive=True,
    # a search draws where the iterates' window (the start's sd sigma/sqrt(lam) by default) holds few cells of the
    # step s/8, s = sqrt(2 eta) sigma, and the second law keeps a float density at the Rényi tilt (alpha |x| <= 10
    # sigma), and R_alpha, about alpha x^2/(lam n^2 sigma^2), above the grid's absolute float floor (1e-13); x > 0
    # only (x < 0 is the mirror image of -x with xo -> -xo, the same divergence)
    search_region=(sigma >= sp.Rational(1, 20), eta >= sp.Rational(1, 100), eta <= 2, alpha <= 20,
                   alpha * x <= 10 * sigma, x >= sigma / 100, n <= 50, xo >= -5, xo <= 5,
                   lam >= sp.Rational(1, 20), lam <= 10),
)


def _pnsgd_projected(alpha, sigma, eta, n, t, L, R) -> Truth:
    zero, plus, minus = (lambda w: 0 * w), (lambda w: L + 0 * w), (lambda w: -L + 0 * w)
    steps, keys = [zero] * int(n), [("linear", 0.0)] * int(n)
    run, run_prime, keys_prime = list(steps), list(steps), list(keys)
    run[int(t) - 1], run_prime[int(t) - 1] = plus, minus
    keys[int(t) - 1], keys_prime[int(t) - 1] = ("linear", L), ("linear", -L)
    p = pnsgd_process(run, eta=eta, sigma=sigma, R=R, keys=keys)
    return _both_orders(p, pnsgd_process(run_prime, eta=eta, sigma=sigma, R=R, keys=keys_prime), alpha,
                        "projected PNSGD, linear")


PNSGD_PROJECTED_1D = Family(
    name="pnsgd_projected_1d",
    description="PNSGD (Feldman et al. Alg. 1) on linear losses f(w; x) = x w over K = [-R, R], w_0 = 0; record t is "
                "+L vs -L, the others 0 (the output law has atoms at +-R).",
    parameters=(
        Parameter(alpha, alpha > 1, "Rényi order"), Parameter(sigma, sigma > 0, "std of the gradient noise"),
        Parameter(eta, eta > 0, "step size"),
        Parameter(n, sp.And(n >= 1, n <= 200), "records = steps (the grid is run for n <= 200)", integer=True),
        Parameter(t, t >= 1, "index of the replaced record", integer=True), Parameter(L, L > 0, "Lipschitz constant"),
        Parameter(R, R > 0, "K = [-R, R]"),
    ),
    facts=frozenset({"replace_one_fixed_index", "convex", "smooth", "linear_loss", "projected", "bounded_domain"}),
    truths={_R: _pnsgd_projected},
    method="1-D transfer matrix with boundary atoms, refined grid error estimate",
    expensive=True,
    constraints=(Assumption("index_in_range", t <= n, "1 <= t <= n"),),
    # a search draws where the atoms at +-R keep a mass above the float range (R within 20 step noises eta sigma of
    # the start) and [-R, R] holds few cells of the step min(eta sigma/20, R/40); L >= sigma/20 keeps R_alpha above
    # the grid's absolute float floor (1e-13)
    search_region=(R <= 20 * eta * sigma, L <= 10 * sigma, L >= sigma / 20, alpha <= 50),
)
