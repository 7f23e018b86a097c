"""Independent oracles for verify.truth.gaussian and verify.truth.noisy_gd_gaussian.

Every reference below is computed independently of the code under test: mpmath quadrature of the defining
integrals, eigen-decomposition closed forms, scalar recursions written here, a Monte-Carlo run of Algorithm 1
exactly as printed, and the reference numbers of /work/shared/research/seed-000.md (sections 3.2 and 4).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from verify.errors import ParameterError
from verify.truth.gaussian import gaussian_delta, gaussian_dp_epsilon, renyi_gaussian, renyi_gaussian_1d
from verify.truth.noisy_gd_gaussian import (
    isotropic_excess_risk,
    isotropic_lsi_constant,
    isotropic_mean_gap,
    isotropic_renyi,
    isotropic_variance,
    noisy_gd_gaussian_law,
)

mpf = mpmath.mpf


# ------------------------------------------------------------------ oracles
def renyi_quad_1d(mu_p, v_p, mu_q, v_q, alpha, dps=40):
    """R_alpha(N(mu_p, v_p) || N(mu_q, v_q)) = log(Int p^alpha q^(1-alpha)) / (alpha - 1), by quadrature.

    The real line is split around the peak of the integrand (found numerically, then used only as a split
    point) so that tanh-sinh quadrature resolves it to full working precision.
    """
    with mpmath.workdps(dps):
        mu_p, v_p, mu_q, v_q, alpha = map(mpf, (mu_p, v_p, mu_q, v_q, alpha))

        def log_integrand(x):
            log_p = -((x - mu_p) ** 2) / (2 * v_p) - mpmath.log(2 * mpmath.pi * v_p) / 2
            log_q = -((x - mu_q) ** 2) / (2 * v_q) - mpmath.log(2 * mpmath.pi * v_q) / 2
            return alpha * log_p + (1 - alpha) * log_q

        # peak and curvature of the log-integrand by numerical differentiation (not the closed form)
        peak = mpmath.findroot(lambda x: mpmath.diff(log_integrand, x), (mu_p + mu_q) / 2)
        width = 1 / mpmath.sqrt(-mpmath.diff(log_integrand, peak, 2))
        pts = [-mpmath.inf] + [peak + j * width for j in (-8, -2, 0, 2, 8)] + [mpmath.inf]
        total = mpmath.quad(lambda x: mpmath.exp(log_integrand(x)), pts)
        return mpmath.log(total) / (alpha - 1)


def random_renyi_points(count, seed):
    """Random (mu_p, v_p, mu_q, v_q, alpha): fractional alpha, unequal variances, finite divergence."""
    rng = np.random.default_rng(seed)
    pts = []
    while len(pts) < count:
        alpha = float(rng.uniform(1.05, 12.0))
        mu_p, mu_q = (float(v) for v in rng.normal(0, 1.5, 2))
        v_p = float(np.exp(rng.uniform(-2, 2)))
        # finite iff alpha v_q + (1 - alpha) v_p > 0, i.e. v_q / v_p > (alpha - 1)/alpha; keep a margin
        ratio = float(np.exp(rng.uniform(np.log((alpha - 1) / alpha * 1.1), np.log(4.0))))
        v_q = v_p * ratio
        if abs(mu_p - mu_q) < 0.1 and abs(ratio - 1) < 0.1:
            continue  # keep R well away from 0 so a relative comparison is meaningful
        pts.append((mu_p, v_p, mu_q, v_q, alpha))
    return pts


RENYI_POINTS = random_renyi_points(8, seed=20211213)


@pytest.fixture(scope="module")
def quad_values():
    return [renyi_quad_1d(*p) for p in RENYI_POINTS]


def _rel(a, b):
    return abs(mpf(a) - mpf(b)) / abs(mpf(b))


# ------------------------------------------------------------------ Rényi divergence between Gaussians
def test_renyi_1d_mpmath_vs_quadrature(quad_values):
    worst = mpf(0)
    with mpmath.workdps(40):
        for p, ref in zip(RENYI_POINTS, quad_values, strict=True):
            got = renyi_gaussian_1d(*p)
            worst = max(worst, _rel(got, ref))
    assert worst < mpf("1e-25"), worst


def test_renyi_numpy_scalar_vs_quadrature(quad_values):
    for (mu_p, v_p, mu_q, v_q, alpha), ref in zip(RENYI_POINTS, quad_values, strict=True):
        got = renyi_gaussian(mu_p, v_p, mu_q, v_q, alpha)
        got2 = renyi_gaussian([mu_p], [[v_p]], [mu_q], [[v_q]], alpha)
        assert float(_rel(got, ref)) < 1e-10
        assert float(_rel(got2, ref)) < 1e-10


def test_renyi_equal_variance_quadrature():
    # inventory P0.3: alpha ||dmu||^2 / (2 v); quadrature confirms the 1-D value
    ref = renyi_quad_1d(0.3, 0.5, -0.2, 0.5, 2.5)
    assert _rel(ref, mpf(2.5) * mpf(0.5) ** 2 / (2 * mpf(0.5))) < mpf("1e-30")


def test_renyi_multivariate_diagonal_is_sum_of_1d_quadratures():
    rng = np.random.default_rng(7)
    mu_p, mu_q = rng.normal(size=3), rng.normal(size=3)
    v_p = np.array([0.5, 1.3, 2.0])
    v_q = np.array([0.9, 1.1, 1.7])
    alpha = 3.3
    ref = sum(renyi_quad_1d(mu_p[i], v_p[i], mu_q[i], v_q[i], alpha, dps=20) for i in range(3))
    got = renyi_gaussian(mu_p, np.diag(v_p), mu_q, np.diag(v_q), alpha)
    assert float(_rel(got, ref)) < 1e-10
    # rotated: R is invariant under x -> Qx for orthogonal Q applied to both laws
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    got_rot = renyi_gaussian(Q @ mu_p, Q @ np.diag(v_p) @ Q.T, Q @ mu_q, Q @ np.diag(v_q) @ Q.T, alpha)
    assert float(_rel(got_rot, ref)) < 1e-10


def test_renyi_multivariate_non_commuting_by_whitening():
    """General SPD pair: whiten cov_p, diagonalise the whitened cov_q (affine invariance), sum 1-D values."""
    rng = np.random.default_rng(11)
    B = rng.normal(size=(3, 3))
    cov_p = B @ B.T + 0.5 * np.eye(3)
    C = rng.normal(size=(3, 3))
    cov_q = C @ C.T + 1.0 * np.eye(3)
    mu_p, mu_q = rng.normal(size=3), rng.normal(size=3)
    alpha = 1.7
    Lc = np.linalg.cholesky(cov_p)
    Li = np.linalg.inv(Lc)
    w, U = np.linalg.eigh(Li @ cov_q @ Li.T)
    T = U.T @ Li  # T cov_p T' = I, T cov_q T' = diag(w)
    assert np.all(alpha * w + (1 - alpha) > 0)
    a, b = T @ mu_p, T @ mu_q
    ref = sum(renyi_quad_1d(a[i], 1.0, b[i], w[i], alpha, dps=20) for i in range(3))
    got = renyi_gaussian(mu_p, cov_p, mu_q, cov_q, alpha)
    assert float(_rel(got, ref)) < 1e-10


def test_renyi_infinite_when_mixture_not_positive():
    # alpha v_q + (1 - alpha) v_p = 2*1 - 1*2 = 0 and < 0
    assert renyi_gaussian_1d(0, 2, 0, 1, 2) == mpmath.inf
    assert renyi_gaussian_1d(0.3, 3, 0, 1, 2) == mpmath.inf
    assert renyi_gaussian(0, 2, 0, 1, 2) == math.inf
    assert renyi_gaussian(0.3, 3, 0, 1, 2) == math.inf
    assert renyi_gaussian([0, 0], np.diag([1.0, 3.0]), [0, 1], np.diag([1.0, 1.0]), 2) == math.inf
    # the defining integral does diverge there: its truncations grow without bound
    with mpmath.workdps(15):
        def truncated(half):
            def f(x):
                return mpmath.npdf(x, 0.3, mpmath.sqrt(3)) ** 2 / mpmath.npdf(x, 0, 1)

            return mpmath.quad(f, [-half, 0, half])
        vals = [truncated(h) for h in (5, 10, 20)]
    assert vals[0] < vals[1] < vals[2] and vals[2] > 1e10 * vals[0]


@pytest.mark.parametrize("alpha", [1, 1.0, 0.5, 0, -2.0, float("nan")])
def test_renyi_rejects_alpha_not_above_one(alpha):
    with pytest.raises(ParameterError):
        renyi_gaussian_1d(0, 1, 1, 1, alpha)
    with pytest.raises(ParameterError):
        renyi_gaussian([0.0], [[1.0]], [1.0], [[1.0]], alpha)


# ------------------------------------------------------------------ noisy GD law on quadratics
def _spd(rng, d, lo, hi):
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return Q @ np.diag(rng.uniform(lo, hi, d)) @ Q.T


@pytest.mark.parametrize("eta, K", [(0.4, 1), (0.4, 7), (0.4, 60), (1.2, 9)])
def test_matrix_recursion_vs_eigenbasis_closed_form(eta, K):
    rng = np.random.default_rng(3)
    d, n, sigma, s0 = 3, 4, 0.7, 0.3
    A = _spd(rng, d, 0.3, 1.5)
    a, U = np.linalg.eigh(A)
    xbar, x1, x1p = rng.normal(size=d), rng.normal(size=d), rng.normal(size=d)
    xbar_p = xbar - (x1 - x1p) / n
    m0 = rng.normal(size=d)
    law = noisy_gd_gaussian_law(A, xbar, eta, sigma, m0, s0 * np.eye(d), K)
    law_p = noisy_gd_gaussian_law(A, xbar_p, eta, sigma, m0, s0 * np.eye(d), K)
    mk = 1 - eta * a
    MK = U @ np.diag(mk**K) @ U.T
    mean_ref = MK @ m0 + (np.eye(d) - MK) @ xbar
    cov_ref = U @ np.diag(mk ** (2 * K) * s0 + 2 * sigma**2 * (1 - mk ** (2 * K)) / (a * (2 - eta * a))) @ U.T
    np.testing.assert_allclose(law.mean, mean_ref, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(law.cov, cov_ref, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(law_p.cov, cov_ref, rtol=1e-11, atol=1e-12)
    # mean gap Delta_K = (I - M^K) A^{-1} g / n with g = A (x1 - x1')
    g = A @ (x1 - x1p)
    gap_ref = (np.eye(d) - MK) @ np.linalg.solve(A, g) / n
    np.testing.assert_allclose(law.mean - law_p.mean, gap_ref, rtol=1e-10, atol=1e-13)
    # inventory 3.1 eigen-sum formula for R_alpha
    alpha = 4.0
    gj = U.T @ g
    r_ref = alpha / (2 * n**2) * np.sum(
        gj**2 * (1 - mk**K) ** 2
        / (a**2 * (mk ** (2 * K) * s0 + 2 * sigma**2 * (1 - mk ** (2 * K)) / (a * (2 - eta * a)))))
    r = renyi_gaussian(law.mean, law.cov, law_p.mean, law_p.cov, alpha)
    assert abs(r - r_ref) <= 1e-9 * r_ref


def _scalar_recursion(eta, sigma, lam, start_var, S, n, K):
    """Own mpmath recursion: gap_{k+1} = m gap_k + eta S / n, v_{k+1} = m^2 v_k + 2 eta sigma^2."""
    eta, sigma, lam, start_var, S = map(mpf, (eta, sigma, lam, start_var, S))
    m = 1 - eta * lam
    gap, v, vs = mpf(0), start_var, [start_var]
    for _ in range(K):
        gap = m * gap + eta * S / n
        v = m**2 * v + 2 * eta * sigma**2
        vs.append(v)
    return gap, v, vs


ISO_CASES = [  # eta, sigma, lam, start_var, S, n, K
    ("0.1", "0.3", "1", "0", "4", 50, 30),
    ("0.02", "0.02", "1", "0.0008", "4", 5000, 300),
    ("0.5", "1.5", "0.7", "0.2", "0.3", 3, 17),
    ("1", "0.8", "1", "0.5", "1", 2, 5),  # m = 0
    ("1.5", "0.8", "1", "0.5", "1", 2, 6),  # m < 0
    ("2", "0.4", "1", "0.25", "2", 3, 5),  # m = -1, m^2 = 1
    ("0.25", "0.4", "2", "0", "2", 10, 1),
]


@pytest.mark.parametrize("case", ISO_CASES)
def test_isotropic_closed_forms_vs_recursion(case):
    with mpmath.workdps(40):
        eta, sigma, lam, start_var, S = (mpf(v) for v in case[:5])
        n, K = case[5], case[6]
        gap, v, vs = _scalar_recursion(eta, sigma, lam, start_var, S, n, K)
        alpha = mpf("3.7")
        assert _rel(isotropic_variance(eta, sigma, lam, start_var, K), v) < mpf("1e-35")
        assert _rel(isotropic_mean_gap(eta, lam, S, n, K), abs(gap)) < mpf("1e-35")
        assert _rel(isotropic_renyi(alpha, sigma, eta, n, K, S, lam, start_var), alpha * gap**2 / (2 * v)) \
            < mpf("1e-35")


@pytest.mark.parametrize("case", ISO_CASES)
def test_isotropic_lsi_constant_vs_brute_force(case):
    """Tracing-diffusion variance at eta k + s: m^2 v_k + 2 s sigma^2 for s in (0, eta], v_k at s = 0."""
    with mpmath.workdps(30):
        eta, sigma, lam, start_var, S = (mpf(v) for v in case[:5])
        n, K = case[5], case[6]
        _, _, vs = _scalar_recursion(eta, sigma, lam, start_var, S, n, K)
        m = 1 - eta * lam
        worst = max(vs)
        for vk in vs[:-1]:
            for j in range(1, 11):
                worst = max(worst, m**2 * vk + 2 * (eta * j / 10) * sigma**2)
        assert _rel(isotropic_lsi_constant(sigma, eta, lam, start_var, K), 1 / worst) < mpf("1e-25")


def test_lsi_constant_lemma5_start():
    # Lemma 5: start N(0, 2 sigma^2/lam) and eta*lam <= 1 keep every marginal lam/(2 sigma^2)-LSI
    with mpmath.workdps(30):
        for eta, lam, sigma, K in [("0.1", "1", "0.3", 50), ("0.02", "4", "0.02", 500), ("1", "1", "2", 3)]:
            eta, lam, sigma = mpf(eta), mpf(lam), mpf(sigma)
            c = isotropic_lsi_constant(sigma, eta, lam, 2 * sigma**2 / lam, K)
            assert _rel(c, lam / (2 * sigma**2)) < mpf("1e-25")


def test_isotropic_matches_matrix_recursion():
    eta, sigma, lam, s0, n, K = 0.3, 0.6, 0.8, 0.25, 6, 25
    x1, x1p = np.array([1.0, -0.5]), np.array([-0.3, 0.4])
    S = lam * np.linalg.norm(x1 - x1p)
    xbar = np.array([0.2, 0.1])
    law = noisy_gd_gaussian_law(lam * np.eye(2), xbar, eta, sigma, np.zeros(2), s0 * np.eye(2), K)
    law_p = noisy_gd_gaussian_law(lam * np.eye(2), xbar - (x1 - x1p) / n, eta, sigma, np.zeros(2),
                                  s0 * np.eye(2), K)
    assert abs(float(isotropic_variance(eta, sigma, lam, s0, K)) - law.cov[0, 0]) < 1e-13
    assert abs(float(isotropic_mean_gap(eta, lam, S, n, K)) - np.linalg.norm(law.mean - law_p.mean)) < 1e-13


@pytest.mark.parametrize("lam", ["0.5", "1", "1.7", "3"])
def test_one_step_is_gaussian_mechanism(lam):
    # K = 1, fixed start: theta_1 = theta_0 - eta grad + N(0, 2 eta sigma^2), gap eta S/n,
    # so R = alpha eta S^2/(4 sigma^2 n^2)
    with mpmath.workdps(40):
        alpha, sigma, eta, n, S = mpf("7.5"), mpf("0.3"), mpf("0.2"), 9, mpf("2.5")
        ref = alpha * eta * S**2 / (4 * sigma**2 * n**2)
        assert _rel(isotropic_renyi(alpha, sigma, eta, n, 1, S, mpf(lam), 0), ref) < mpf("1e-35")


def test_monte_carlo_algorithm1_as_printed():
    """Alg. 1 with the summed gradient scaled by eta/n, per-record loss (lam/2)||theta - x||^2, d = 2."""
    rng = np.random.default_rng(2021)
    n, d, lam, eta, sigma, K, start_var, N = 7, 2, 0.8, 0.3, 0.5, 12, 0.4, 200_000
    X = rng.normal(size=(n, d))
    Xp = X.copy()
    Xp[0] = X[0] + np.array([1.5, -0.7])  # neighbouring dataset: record 1 replaced
    S = lam * np.linalg.norm(X[0] - Xp[0])

    def grad_sum(theta, data):  # g(theta; D) = sum_i grad l(theta; x_i)
        g = np.zeros_like(theta)
        for x in data:
            g += lam * (theta - x)
        return g

    theta = np.sqrt(start_var) * rng.standard_normal((N, d))
    theta_p = theta.copy()  # common start draw
    for _ in range(K):
        z = rng.standard_normal((N, d))  # common noise draw for D and D'
        theta = theta - eta / n * grad_sum(theta, X) + np.sqrt(2 * eta) * sigma * z
        theta_p = theta_p - eta / n * grad_sum(theta_p, Xp) + np.sqrt(2 * eta) * sigma * z

    v = float(isotropic_variance(eta, sigma, lam, start_var, K))
    gap = float(isotropic_mean_gap(eta, lam, S, n, K))
    # with common random numbers the gap is deterministic per run
    diffs = theta - theta_p
    assert np.abs(np.linalg.norm(diffs.mean(axis=0)) - gap) < 1e-10
    assert diffs.std(axis=0).max() < 1e-12
    # per-coordinate variance, pooled over the two independent coordinates
    var_hat = theta.var(axis=0, ddof=1).mean()
    se_var = v * math.sqrt(2 / (N - 1)) / math.sqrt(d)
    assert abs(var_hat - v) < 4 * se_var, (var_hat, v, se_var)
    # mean: (1 - m^K) xbar with a zero start mean
    xbar = X.mean(axis=0)
    m = 1 - eta * lam
    mean_ref = (1 - m**K) * xbar
    assert np.all(np.abs(theta.mean(axis=0) - mean_ref) < 4 * math.sqrt(v / N))
    # excess empirical risk L_D(theta_K) - L_D(xbar) = lam/2 ||theta_K - xbar||^2
    risk = lam / 2 * np.sum((theta - xbar) ** 2, axis=1)
    risk_ref = float(isotropic_excess_risk(sigma, eta, lam, start_var, K, d, np.linalg.norm(xbar)))
    assert abs(risk.mean() - risk_ref) < 4 * risk.std(ddof=1) / math.sqrt(N)


def test_excess_risk_vs_recursion():
    with mpmath.workdps(40):
        sigma, eta, lam, s0, K, d, dist = mpf("0.3"), mpf("0.5"), mpf("1"), mpf("0.18"), 7, 3, mpf("0.4")
        _, v, _ = _scalar_recursion(eta, sigma, lam, s0, 1, 1, K)
        e = dist
        for _ in range(K):
            e = (1 - eta * lam) * e  # E theta - xbar contracts by m each step
        ref = lam / 2 * (e**2 + d * v)
        assert _rel(isotropic_excess_risk(sigma, eta, lam, s0, K, d, dist), ref) < mpf("1e-35")


# ------------------------------------------------------------------ seed-000.md reference numbers
# alpha, sigma, S_g, n at Fig. 2 parameters; A = alpha S^2/(4 sigma^2 n^2) = 0.012
A_UNIT = (30, 0.02, 4, 5000)

# section 3.2, table in units of A: (eta, K, exact theta0 = 0, exact theta0 ~ N(0, 2 sigma^2))
TABLE_UNITS_A = [
    (0.02, 1, 0.02000, 0.00041), (0.02, 5, 0.09992, 0.01015), (0.02, 20, 0.39466, 0.15226),
    (0.02, 100, 1.51632, 1.46441), (0.02, 1000, 1.98000, 1.98000),
    (0.1, 1, 0.10000, 0.01099), (0.1, 5, 0.48920, 0.24252), (0.1, 20, 1.48809, 1.44685),
    (0.1, 100, 1.89990, 1.89990),
    (0.5, 1, 0.50000, 0.33333), (0.5, 5, 1.40909, 1.40703), (0.5, 100, 1.50000, 1.50000),
    (0.9, 1, 0.90000, 0.89011), (0.9, 5, 1.09998, 1.09998), (0.9, 100, 1.10000, 1.10000),
]

# section 3.2, absolute numbers at Fig. 2 parameters (alpha = 30):
# (eta, K, exact theta0 = 0, exact Cor1 start)
TABLE_ABSOLUTE = [
    (0.02, 1, "2.40000e-4", "4.89596e-6"), (0.02, 10, "2.39195e-3", "4.80618e-4"),
    (0.02, 50, "1.10744e-2", "8.50086e-3"), (0.02, 100, "1.81958e-2", "1.75729e-2"),
    (0.02, 300, "2.36494e-2", "2.36492e-2"), (0.5, 10, "1.79649e-2", "1.79649e-2"),
    (0.9, 10, "1.32000e-2", "1.32000e-2"),
]

# section 4, Fig. 2 (alpha = 30, eta = 0.02), "exact theta0 = 0" in units of 1e-2
FIG2_EXACT = [(10, "0.2392"), (50, "1.1074"), (100, "1.8196"), (200, "2.2939"), (300, "2.3649")]


def _printed_tolerance(text):
    """Half a unit in the last printed digit."""
    mant = text.split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(text.split("e")[1]) if "e" in text else 0
    return 0.5 * 10.0 ** (exp - decimals)


def _exact(eta, K, start_var):
    alpha, sigma, S, n = A_UNIT
    with mpmath.workdps(30):
        return isotropic_renyi(alpha, mpf(sigma), eta, n, K, S, 1, start_var)


@pytest.mark.parametrize("row", TABLE_UNITS_A)
def test_inventory_table_units_of_A(row):
    eta, K, fixed, cor1 = row
    alpha, sigma, S, n = A_UNIT
    unit = mpf(alpha) * S**2 / (4 * mpf(sigma) ** 2 * n**2)
    assert abs(_exact(eta, K, 0) / unit - fixed) <= 0.5e-5 + 1e-12
    assert abs(_exact(eta, K, 2 * mpf(sigma) ** 2) / unit - cor1) <= 0.5e-5 + 1e-12


@pytest.mark.parametrize("row", TABLE_ABSOLUTE)
def test_inventory_table_absolute(row):
    eta, K, fixed, cor1 = row
    sigma = A_UNIT[1]
    assert abs(float(_exact(eta, K, 0)) - float(fixed)) <= _printed_tolerance(fixed) * (1 + 1e-9)
    got_cor1 = float(_exact(eta, K, 2 * mpf(sigma) ** 2))
    assert abs(got_cor1 - float(cor1)) <= _printed_tolerance(cor1) * (1 + 1e-9)


@pytest.mark.parametrize("row", FIG2_EXACT)
def test_inventory_fig2_exact_column(row):
    K, text = row
    assert abs(float(_exact(0.02, K, 0)) * 100 - float(text)) <= _printed_tolerance(text) * (1 + 1e-9)


def test_inventory_fig2_asymptote():
    # exact asymptote 2.376e-2 = (2 - eta) A
    assert abs(float(_exact(0.02, 100000, 0)) - 2.376e-2) < 1e-12


# ------------------------------------------------------------------ (eps, delta) of the Gaussian mechanism
def delta_by_quadrature(eps, mu, dps=30):
    """delta(eps) = Int (p - e^eps q)_+ with p = N(0,1), q = N(mu,1), mu > 0.

    p > e^eps q exactly where x < mu/2 - eps/mu.
    """
    with mpmath.workdps(dps):
        eps, mu = mpf(eps), mpf(mu)
        cut = mu / 2 - eps / mu

        def f(x):
            return mpmath.exp(-x * x / 2) / mpmath.sqrt(2 * mpmath.pi) * (
                1 - mpmath.exp(eps + (x * x - (x - mu) ** 2) / 2))

        return mpmath.quad(f, [-mpmath.inf, cut - 4, cut - 1, cut])


def delta_scipy(eps, mu):
    cut = mu / 2 - eps / mu
    val, _ = integrate.quad(lambda x: stats.norm.pdf(x) - math.exp(eps) * stats.norm.pdf(x, loc=mu),
                            -np.inf, cut, epsabs=0, epsrel=1e-13, limit=200)
    return val


@pytest.mark.parametrize("eps, mu", [(0.0, 1.0), (0.5, 1.0), (2.0, 3.0), (1.0, 0.3), (4.0, 2.0)])
def test_gaussian_delta_vs_quadrature(eps, mu):
    with mpmath.workdps(30):
        assert _rel(gaussian_delta(eps, mu), delta_by_quadrature(eps, mu)) < mpf("1e-20")


@pytest.mark.parametrize("delta, mu", [(1e-5, 1.0), (1e-3, 0.4), (1e-6, 3.0), (0.1, 2.0)])
def test_gaussian_dp_epsilon_vs_brentq_on_quadrature(delta, mu):
    hi = 1.0
    while delta_scipy(hi, mu) > delta:
        hi *= 2
    ref = optimize.brentq(lambda e: delta_scipy(e, mu) - delta, 0.0, hi, xtol=1e-15, rtol=1e-14)
    got = gaussian_dp_epsilon(delta, mu)
    assert abs(float(got) - ref) <= 1e-9 * ref
    assert gaussian_dp_epsilon(delta, -mu) == got  # the pair is symmetric


def test_gaussian_dp_epsilon_high_precision_root():
    with mpmath.workdps(30):
        delta, mu = mpf("1e-5"), mpf("1.3")
        ref = mpmath.findroot(lambda e: delta_by_quadrature(e, mu) - delta, (mpf(2), mpf(6)),
                              solver="anderson")
        got = gaussian_dp_epsilon(delta, mu)
        assert _rel(got, ref) < mpf("1e-20")


def test_gaussian_dp_epsilon_zero_and_rdp_bound():
    mu = 1.0
    # delta(0) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)): any delta above it gives eps = 0
    d0 = math.erf(mu / (2 * math.sqrt(2)))
    assert abs(float(gaussian_delta(0, mu)) - d0) < 1e-15
    assert gaussian_dp_epsilon(d0 * 1.01, mu) == 0
    assert gaussian_dp_epsilon(d0 * 0.99, mu) > 0
    # RDP -> DP conversion (Mironov Prop. 3) is a valid, looser upper bound
    for delta in (1e-3, 1e-6, 1e-9):
        rdp = min(a * mu**2 / 2 + math.log(1 / delta) / (a - 1) for a in np.linspace(1.01, 200, 20000))
        assert float(gaussian_dp_epsilon(delta, mu)) <= rdp


def test_gaussian_delta_strictly_decreasing_and_eps_monotone():
    for mu in (0.2, 1.0, 4.0):
        ds = [gaussian_delta(e, mu) for e in np.linspace(0, 12, 121)]
        assert all(a > b for a, b in zip(ds, ds[1:], strict=False))
        assert all(x >= 0 for x in ds)
    eps_by_delta = [gaussian_dp_epsilon(dl, 1.0) for dl in (1e-2, 1e-4, 1e-6, 1e-8)]
    assert all(a < b for a, b in zip(eps_by_delta, eps_by_delta[1:], strict=False))
    eps_by_mu = [gaussian_dp_epsilon(1e-5, mu) for mu in (0.1, 0.5, 1.0, 2.0)]
    assert all(a < b for a, b in zip(eps_by_mu, eps_by_mu[1:], strict=False))


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5])
def test_gaussian_dp_epsilon_rejects_bad_delta(delta):
    with pytest.raises(ParameterError):
        gaussian_dp_epsilon(delta, 1.0)


# ------------------------------------------------------------------ regression: negative mu
def test_gaussian_delta_negative_mu_is_symmetric():
    """gaussian_delta(eps, mu < 0) used to return a negative 'delta' (fixed: abs(mu))."""
    # N(0,1) vs N(-1,1) has the same tight delta as N(0,1) vs N(1,1) (reflect x -> -x)
    ref = delta_by_quadrature(0.5, 1.0)
    assert _rel(gaussian_delta(0.5, -1.0), ref) < mpf("1e-12")
