"""The SymPy derivations in derivations/ agree with what verify.truth computes.

Symbolic identities are asserted inside the derivation modules (``check_all``); here the derived expressions
are lambdified with mpmath and compared at random points at 40 digits with verify.truth.noisy_gd_gaussian and
verify.truth.gaussian, and the reference columns of the inventory (seed-000.md section 3.2) are recomputed
from the derived bounds.
"""

from __future__ import annotations

import os
import sys

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import optimize

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from derivations import noisy_gd_quadratic as ngd  # noqa: E402
from derivations import renyi_gaussian as rg  # noqa: E402
from verify.truth.gaussian import renyi_gaussian, renyi_gaussian_1d  # noqa: E402
from verify.truth.noisy_gd_gaussian import (  # noqa: E402
    isotropic_excess_risk,
    isotropic_mean_gap,
    isotropic_renyi,
    isotropic_variance,
)

mpf = mpmath.mpf
TOL40 = mpf("1e-30")  # at mp.dps = 40


def _rel(a, b):
    return abs(mpf(a) - mpf(b)) / abs(mpf(b))


def _mp(expr, *syms):
    return sp.lambdify(syms, expr, modules="mpmath")


def _iso_points(count, seed, start="random"):
    """Random (alpha, sigma, eta, lam, n, S, start_var, K, d, dist) with 0 < eta*lam < 2, eta*lam != 1."""
    rng = np.random.default_rng(seed)
    pts = []
    for _ in range(count):
        lam = mpf(float(np.exp(rng.uniform(-1.5, 1.5))))
        eta = mpf(float(rng.uniform(0.01, 1.95))) / lam
        sigma = mpf(float(np.exp(rng.uniform(-3, 1))))
        alpha = mpf(float(rng.uniform(1.01, 64)))
        n = int(rng.integers(1, 5000))
        S = mpf(float(np.exp(rng.uniform(-2, 2))))
        K = int(rng.integers(1, 400))
        random_var = mpf(float(rng.uniform(0, 3)))
        start_var = {"random": random_var, "zero": mpf(0), "cor1": 2 * sigma**2 / lam}[start]
        d = int(rng.integers(1, 10))
        dist = mpf(float(rng.uniform(0, 5)))
        pts.append((alpha, sigma, eta, lam, n, S, start_var, K, d, dist))
    return pts


# ------------------------------------------------------------------ symbolic identities
def test_renyi_derivation_identities():
    assert all(rg.check_all().values())


def test_noisy_gd_derivation_identities():
    assert all(ngd.check_all().values())


def test_recursions_read_off_the_update():
    gap_map, var_map, _ = ngd.update_recursions()
    Dk, vk = sp.Symbol("Dk", real=True), sp.Symbol("vk", nonnegative=True)
    m = 1 - ngd.eta * ngd.lam
    # the mean gap grows by eta*S/n per step (S = lam ||x1 - x1'||), not eta*S/(lam n)
    assert sp.simplify(gap_map - (m * Dk + ngd.eta * ngd.S / ngd.n)) == 0
    assert sp.simplify(var_map - (m**2 * vk + 2 * ngd.eta * ngd.sigma**2)) == 0


def test_identity_checker_rejects_wrong_identities():
    """Negative controls: the m**K rewriting used by check_all must not make false identities pass."""
    R = ngd.renyi()
    wrong_thm3 = ngd.theorem3_exact() * (1 + ngd.eta / 100)
    diff = sp.simplify(R.subs({ngd.lam: 1, ngd.start_var: 0}) - wrong_thm3).subs(ngd.eta, 1 - ngd.m)
    assert ngd._in_u(diff.subs(ngd.lam, 1)) != 0
    wrong_cor1 = ngd.cor1_start_exact().subs(ngd.K, ngd.K + 1)
    assert ngd._eliminate_eta(R.subs(ngd.start_var, 2 * ngd.sigma**2 / ngd.lam) - wrong_cor1) != 0
    # printed main-text exponent (1 - e^{-eta K}) for Cor. 1 at lam = 1 (inventory S4) is not Cor. 1
    printed = ngd.alpha * ngd.S**2 / (ngd.sigma**2 * ngd.n**2) * (1 - sp.exp(-ngd.eta * ngd.K))
    assert sp.simplify(ngd.cor1_bound().subs(ngd.lam, 1) - printed) != 0


# ------------------------------------------------------------------ derived vs verify.truth, 40 digits
@pytest.mark.parametrize("start", ["random", "zero", "cor1"])
def test_derived_isotropic_formulas_match_code(start):
    s = ngd.SYMBOLS
    names = ("alpha", "sigma", "eta", "lam", "n", "S", "start_var", "K", "d", "dist")
    args = tuple(s[v] for v in names)
    f_gap, f_var = _mp(ngd.mean_gap(), *args), _mp(ngd.variance(), *args)
    f_ren, f_risk = _mp(ngd.renyi(), *args), _mp(ngd.excess_risk(), *args)
    worst = mpf(0)
    with mpmath.workdps(40):
        for p in _iso_points(40, seed={"random": 1, "zero": 2, "cor1": 3}[start], start=start):
            alpha, sigma, eta, lam, n, S, start_var, K, d, dist = p
            pairs = [
                (isotropic_mean_gap(eta, lam, S, n, K), abs(f_gap(*p))),
                (isotropic_variance(eta, sigma, lam, start_var, K), f_var(*p)),
                (isotropic_renyi(alpha, sigma, eta, n, K, S, lam, start_var), f_ren(*p)),
                (isotropic_excess_risk(sigma, eta, lam, start_var, K, d, dist), f_risk(*p)),
            ]
            worst = max([worst] + [_rel(got, ref) for got, ref in pairs])
    assert worst < TOL40, worst


def test_special_cases_match_code():
    s = ngd.SYMBOLS
    args = (s["alpha"], s["sigma"], s["eta"], s["lam"], s["n"], s["S"], s["K"])
    thm3 = _mp(ngd.theorem3_exact(), *args)
    cor1 = _mp(ngd.cor1_start_exact(), *args)
    lim = _mp(ngd.limit_k_infinity(), *args)
    worst = mpf(0)
    with mpmath.workdps(40):
        for alpha, sigma, eta, lam, n, S, _, K, _, _ in _iso_points(30, seed=4):
            eta1 = eta * lam / 2  # eta in (0, 1) for Thm 3's instance (lam = 1)
            worst = max(worst, _rel(isotropic_renyi(alpha, sigma, eta1, n, K, S, 1, 0),
                                    thm3(alpha, sigma, eta1, 1, n, S, K)))
            worst = max(worst, _rel(isotropic_renyi(alpha, sigma, eta, n, K, S, lam, 2 * sigma**2 / lam),
                                    cor1(alpha, sigma, eta, lam, n, S, K)))
            eta2 = eta1 / lam  # eta*lam < 1: m in (0, 1), m^K -> 0 quickly
            big = isotropic_renyi(alpha, sigma, eta2, n, 200000, S, lam, mpf(1) / 3)
            worst = max(worst, _rel(big, lim(alpha, sigma, eta2, lam, n, S, 200000)))
    assert worst < TOL40, worst


def test_derived_renyi_1d_matches_code():
    f = _mp(rg.renyi_derived(), rg.mu1, rg.v1, rg.mu2, rg.v2, rg.alpha)
    rng = np.random.default_rng(5)
    worst_mp, worst_np = mpf(0), 0.0
    with mpmath.workdps(40):
        for _ in range(60):
            alpha = float(rng.uniform(1.01, 30))
            v1 = float(np.exp(rng.uniform(-3, 3)))
            v2 = v1 * float(np.exp(rng.uniform(np.log((alpha - 1) / alpha * 1.05), 2)))
            mu1, mu2 = (float(v) for v in rng.normal(0, 2, 2))
            ref = f(mpf(mu1), mpf(v1), mpf(mu2), mpf(v2), mpf(alpha))
            worst_mp = max(worst_mp, _rel(renyi_gaussian_1d(mu1, v1, mu2, v2, alpha), ref))
            worst_np = max(worst_np, float(_rel(renyi_gaussian(mu1, v1, mu2, v2, alpha), ref)))
    assert worst_mp < TOL40, worst_mp
    assert worst_np < 1e-10, worst_np


# ------------------------------------------------------------------ inventory section 3.2 bound columns
# (eta, K, Cor1, Cor2, eq68 min over gamma with c=(2-eta)/(2 sigma^2), Thm3 LB, composition), units of A
BOUND_COLUMNS = [
    (0.02, 1, 0.03980, 0.03961, 0.02000, 0.01980, 0.02), (0.02, 5, 0.19508, 0.19042, 0.10000, 0.09516, 0.1),
    (0.02, 20, 0.72508, 0.66059, 0.40000, 0.32968, 0.4), (0.02, 100, 2.52848, 1.74127, 1.66484, 0.86466, 2),
    (0.02, 1000, 3.99982, 2.02020, 2.02020, 1.00000, 20), (0.1, 1, 0.19508, 0.19079, 0.10000, 0.09516, 0.1),
    (0.1, 5, 0.88480, 0.79603, 0.50000, 0.39347, 0.5), (0.1, 20, 2.52848, 1.79038, 1.70105, 0.86466, 2),
    (0.1, 100, 3.97305, 2.10511, 2.10511, 0.99995, 10), (0.5, 1, 0.88480, 0.83390, 0.50000, 0.39347, 0.5),
    (0.5, 5, 2.85398, 2.25772, 2.14047, 0.91792, 2.5), (0.5, 100, 4.00000, 2.66667, 2.66667, 1.00000, 50),
    (0.9, 1, 1.44949, 1.41974, 0.90000, 0.59343, 0.9), (0.9, 5, 3.57840, 3.33032, 3.26430, 0.98889, 4.5),
    (0.9, 100, 4.00000, 3.63636, 3.63636, 1.00000, 90),
]


@pytest.mark.parametrize("row", BOUND_COLUMNS)
def test_inventory_bound_columns_from_derived_formulas(row):
    eta_v, K_v, cor1, cor2, eq68min, lb, comp = row
    s = ngd.SYMBOLS
    unit = s["alpha"] * s["S"] ** 2 / (4 * s["sigma"] ** 2 * s["n"] ** 2)
    at = {s["eta"]: eta_v, s["K"]: K_v, s["lam"]: 1}

    def in_units(expr):
        return float(sp.simplify(expr / unit).subs(at))

    assert abs(in_units(ngd.cor1_bound()) - cor1) <= 0.5e-5
    assert abs(in_units(ngd.cor2_bound()) - cor2) <= 0.5e-5
    lb_expr = unit * (1 - sp.exp(-s["eta"] * s["K"]))
    assert abs(in_units(lb_expr) - lb) <= 0.5e-5
    assert abs(eta_v * K_v - comp) < 1e-12
    g68 = sp.lambdify(s["gamma"], sp.simplify(
        ngd.eq68_bound(s["gamma"], (2 - s["eta"]) / (2 * s["sigma"] ** 2)) / unit).subs(at))
    res = optimize.minimize_scalar(g68, bounds=(1e-6, 1 - 1e-9), method="bounded", options={"xatol": 1e-12})
    assert abs(res.fun - eq68min) <= 0.5e-5 + 1e-9


# ---------------------------------------------------------- regression: float inputs at full precision
def test_isotropic_variance_full_precision_with_float_sigma():
    """Float inputs are exact binary numbers; squaring sigma in double precision lost ~4e-17 (fixed)."""
    s = ngd.SYMBOLS
    f_var = _mp(ngd.variance(), s["eta"], s["sigma"], s["lam"], s["start_var"], s["K"])
    with mpmath.workdps(40):
        got = isotropic_variance(0.1, 0.3, 1.0, 0.0, 5)  # floats: every input is an exact binary number
        ref = f_var(mpf(0.1), mpf(0.3), mpf(1.0), mpf(0.0), 5)
        assert _rel(got, ref) < TOL40
