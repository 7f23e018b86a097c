"""SymPy derivation of the exact privacy loss of noisy GD (Chourasia, Ye, Shokri 2021, Alg. 1) on quadratics.

Instance: per-record loss l(theta; x) = (lam/2)||theta - x||^2 on C = R^d, D and D' differ in record 1,
S := lam*||x_1 - x_1'|| (sensitivity of the *summed* gradient), start theta_0 ~ N(0, start_var I) for both
runs.
Algorithm 1 as printed: theta <- theta - (eta/n) * sum_i grad l(theta; x_i) + sqrt(2 eta) N(0, sigma^2 I).

Everything below is derived from the update rule alone:
  1. the mean/variance recursions are read off the update (its gradient is affine in theta);
  2. they are solved with ``sympy.rsolve`` and re-checked by induction (recursion + initial value);
  3. R_alpha follows from the 1-D Gaussian Rényi divergence derived in ``derivations/renyi_gaussian.py``
     (equal variances), applied along the direction of x_1 - x_1' (orthogonal coordinates agree in law);
  4. special cases and the identities between the paper's printed bounds are asserted with sympy.

Run ``python derivations/noisy_gd_quadratic.py`` for a summary; import the functions for the expressions.
"""

from __future__ import annotations

import os
import sys
from functools import cache

import sympy as sp

if __package__ in (None, ""):  # running as a script: make the sibling module importable
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from renyi_gaussian import renyi_closed_form  # type: ignore[import-not-found]
else:
    from .renyi_gaussian import renyi_closed_form

# ---------------------------------------------------------------- symbols
alpha = sp.Symbol("alpha", positive=True)
sigma = sp.Symbol("sigma", positive=True)
eta = sp.Symbol("eta", positive=True)
lam = sp.Symbol("lam", positive=True)
n = sp.Symbol("n", positive=True, integer=True)
S = sp.Symbol("S", positive=True)
start_var = sp.Symbol("start_var", nonnegative=True)
dist = sp.Symbol("dist", nonnegative=True)
d = sp.Symbol("d", positive=True, integer=True)
c = sp.Symbol("c", positive=True)
gamma = sp.Symbol("gamma", positive=True)
K = sp.Symbol("K", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
m = sp.Symbol("m", real=True)  # contraction factor, m = 1 - eta*lam
u = sp.Symbol("u", real=True)  # stands for m**K when proving identities

SYMBOLS = dict(alpha=alpha, sigma=sigma, eta=eta, lam=lam, n=n, S=S, start_var=start_var, dist=dist, d=d,
               c=c, gamma=gamma, K=K)

M_OF_ETA = 1 - eta * lam


# ---------------------------------------------------------------- step 1: recursions from the update
@cache
def update_recursions():
    """Read the one-step mean-gap and variance maps off Algorithm 1 (one coordinate along x_1 - x_1').

    Returns (gap_map, var_map, mean_map): functions of the previous value, as SymPy expressions in the
    placeholder symbols ``Dk`` (gap), ``vk`` (variance) and ``muk`` (mean), with m = 1 - eta*lam substituted.
    """
    theta, x1, x1p, rest, xbar = sp.symbols("theta x1 x1p rest xbar", real=True)
    # per-record gradient of (lam/2)(theta - x)^2; the other n-1 records sum to `rest`
    grad = sp.diff(lam / 2 * (theta - sp.Symbol("x")) ** 2, theta)

    def summed_grad(first):
        return grad.subs(sp.Symbol("x"), first) + (n - 1) * lam * theta - lam * rest

    def step(th, first):  # noiseless part of the update; the noise N(0, 2 eta sigma^2) is added on top
        return sp.expand(th - eta / n * summed_grad(first).subs(theta, th))

    # the update is affine in theta: new = coef*theta + const (+ noise)
    coef = sp.simplify(sp.diff(step(theta, x1), theta))
    assert sp.simplify(coef - M_OF_ETA) == 0, coef
    assert sp.simplify(sp.diff(step(theta, x1), theta, 2)) == 0
    # mean: E[new] = step(E[theta]); mean gap between D and D' (same theta-mean propagated separately)
    muD, muDp = sp.symbols("muD muDp", real=True)
    gap_next = sp.expand(step(muD, x1) - step(muDp, x1p))
    Dk = sp.Symbol("Dk", real=True)
    gap_next = gap_next.subs(muD, muDp + Dk)
    # S = lam*(x1 - x1') along the direction of the gap
    gap_next = sp.simplify(gap_next.subs(x1, x1p + S / lam))
    gap_map = sp.collect(sp.expand(gap_next), Dk)
    assert sp.simplify(gap_map - (M_OF_ETA * Dk + eta * S / n)) == 0, gap_map
    # variance: Var[new] = coef^2 Var[theta] + 2 eta sigma^2 (noise independent of theta)
    vk = sp.Symbol("vk", nonnegative=True)
    noise_var = sp.sqrt(2 * eta) ** 2 * sigma**2
    var_map = coef**2 * vk + noise_var
    # mean around the data mean xbar = (x1 + rest)/n
    muk = sp.Symbol("muk", real=True)
    mean_next = step(muk, x1).subs(rest, n * xbar - x1)
    mean_map = sp.simplify(mean_next - xbar)  # = m*(muk - xbar)
    assert sp.simplify(mean_map - M_OF_ETA * (muk - xbar)) == 0
    return gap_map, var_map, mean_map


# ---------------------------------------------------------------- step 2: solve the recursions
def _rsolve_checked(rhs_of_prev, prev_sym, init):
    """Solve y(k+1) = rhs(y(k)), y(0) = init with rsolve (in terms of m) and verify by induction."""
    y = sp.Function("y")
    rhs_m = sp.expand(rhs_of_prev).subs(lam, (1 - m) / eta)
    sol = sp.rsolve(y(k + 1) - rhs_m.subs(prev_sym, y(k)), y(k), {y(0): init})
    assert sol is not None
    # induction: initial value and recursion hold identically
    assert sp.simplify(sol.subs(k, 0) - init) == 0
    assert sp.simplify(sp.expand_power_exp(sol.subs(k, k + 1) - rhs_m.subs(prev_sym, sol))) == 0
    return sp.simplify(sol)


@cache
def mean_gap_in_m():
    """Delta_K as a function of m (lam eliminated by lam = (1 - m)/eta)."""
    gap_map, _, _ = update_recursions()
    sol = _rsolve_checked(gap_map, sp.Symbol("Dk", real=True), 0)
    return sol.subs(k, K)


@cache
def mean_gap():
    """Delta_K = ||E theta_K(D) - E theta_K(D')|| = (1 - m^K) S / (lam n), m = 1 - eta*lam."""
    expr = sp.simplify(mean_gap_in_m().subs(m, M_OF_ETA))
    # cross-check against explicit summation Delta_K = sum_{j<K} m^j eta S/n
    j = sp.Symbol("j", integer=True, nonnegative=True)
    summed = sp.summation(m**j * eta * S / n, (j, 0, K - 1))
    summed = sp.piecewise_fold(summed)
    summed = summed.args[-1][0] if isinstance(summed, sp.Piecewise) else summed  # branch m != 1
    assert sp.simplify(summed.subs(m, M_OF_ETA) - expr) == 0
    target = (1 - M_OF_ETA**K) * S / (lam * n)
    assert sp.simplify(expr - target) == 0
    return target


@cache
def variance():
    """v_K = m^{2K} start_var + 2 eta sigma^2 (1 - m^{2K}) / (1 - m^2)   (m^2 != 1)."""
    _, var_map, _ = update_recursions()
    sol = _rsolve_checked(var_map, sp.Symbol("vk", nonnegative=True), start_var).subs(k, K)
    mk2 = M_OF_ETA ** (2 * K)
    target = mk2 * start_var + 2 * eta * sigma**2 * (1 - mk2) / (1 - M_OF_ETA**2)
    assert _in_u(sol.subs(m, M_OF_ETA) - target, M_OF_ETA) == 0
    return target


@cache
def mean_offset():
    """E theta_K - xbar = m^K (E theta_0 - xbar); returned as the factor m^K."""
    _, _, mean_map = update_recursions()
    muk, xbar = sp.Symbol("muk", real=True), sp.Symbol("xbar", real=True)
    e = sp.Symbol("e", real=True)  # e_k = mu_k - xbar
    step_e = sp.expand(mean_map.subs(muk, e + xbar))
    sol = _rsolve_checked(step_e, e, sp.Symbol("e0", real=True)).subs(k, K)
    factor = sp.simplify(sol / sp.Symbol("e0", real=True))
    assert sp.simplify(factor.subs(m, M_OF_ETA) - M_OF_ETA**K) == 0
    return M_OF_ETA**K


# ---------------------------------------------------------------- step 3: Rényi divergence and excess risk
@cache
def renyi():
    """R_alpha(theta_K(D) || theta_K(D')) = alpha * Delta_K^2 / (2 v_K)."""
    v = sp.Symbol("v", positive=True)
    mu1, mu2 = sp.symbols("mu1 mu2", real=True)
    equal_var = sp.simplify(renyi_closed_form(mu1, v, mu2, v, alpha))
    assert sp.simplify(equal_var - alpha * (mu1 - mu2) ** 2 / (2 * v)) == 0
    return equal_var.subs({mu1: mean_gap(), mu2: 0, v: variance()})


@cache
def excess_risk():
    """E[L_D(theta_K)] - min L_D = lam/2 (m^{2K} dist^2 + d v_K), dist = ||E theta_0 - argmin L_D||."""
    theta = sp.Symbol("theta", real=True)
    i = sp.Symbol("i", integer=True, positive=True)
    x = sp.IndexedBase("x")
    L_D = sp.Sum(lam / 2 * (theta - x[i]) ** 2, (i, 1, n)) / n
    xbar = sp.Sum(x[i], (i, 1, n)) / n
    grad = sp.expand(sp.diff(L_D, theta).doit())
    # L_D is (lam/2)(theta - xbar)^2 + const per coordinate: same gradient, same curvature
    assert sp.simplify(grad - lam * (theta - xbar)) == 0
    assert sp.simplify(sp.diff(L_D, theta, 2).doit() - lam) == 0
    # per coordinate, E(theta_K - xbar)^2 = (E theta_K - xbar)^2 + v_K; sum over d coordinates
    return lam / 2 * ((mean_offset() * dist) ** 2 + d * variance())


# ---------------------------------------------------------------- step 4: special cases and identities
def _in_u(expr, mm=m):
    """Rewrite powers mm**(j*K + i) as u**j * mm**i and simplify (u stands for mm**K)."""
    expr = sp.expand_power_exp(sp.powsimp(sp.expand_power_base(expr, force=True), force=True))

    def is_kpow(e):
        return e.is_Pow and sp.simplify(e.base - mm) == 0 and (e.exp / K).is_integer

    expr = expr.replace(is_kpow, lambda e: u ** (e.exp / K))
    expr = expr.subs(mm**K, u)
    assert not expr.has(K), expr
    return sp.simplify(sp.factor(sp.together(expr)))


def theorem3_exact():
    """Thm 3 (lam = 1, start_var = 0): alpha S^2/(4 sigma^2 n^2) (2-eta)(1-(1-eta)^K)/(1+(1-eta)^K)."""
    return alpha * S**2 / (4 * sigma**2 * n**2) * (2 - eta) * (1 - (1 - eta) ** K) / (1 + (1 - eta) ** K)


def cor1_start_exact():
    """start_var = 2 sigma^2/lam: alpha S^2 (2-eta lam)(1-m^K)^2 / (4 lam sigma^2 n^2 (1+m^(2K+1)))."""
    mm = M_OF_ETA
    return (alpha * S**2 * (2 - eta * lam) * (1 - mm**K) ** 2
            / (4 * lam * sigma**2 * n**2 * (1 + mm ** (2 * K + 1))))


def limit_k_infinity():
    """K -> infinity (|m| < 1, any start): alpha S^2 (2 - eta lam) / (4 lam sigma^2 n^2)."""
    return alpha * S**2 * (2 - eta * lam) / (4 * lam * sigma**2 * n**2)


def cor1_bound():
    return alpha * S**2 / (lam * sigma**2 * n**2) * (1 - sp.exp(-lam * eta * K / 2))


def eq16_bound(cc=c):
    return alpha * S**2 / (2 * cc * sigma**4 * n**2) * (1 - sp.exp(-(sigma**2) * cc * eta * K))


def eq68_bound(gg=gamma, cc=c):
    return (alpha * S**2 / (8 * gg * (1 - gg) * cc * sigma**4 * n**2)
            * (1 - sp.exp(-2 * (1 - gg) * sigma**2 * cc * eta * K)))


def cor2_bound():
    return alpha * S**2 / ((2 - eta) * sigma**2 * n**2) * (1 - sp.exp(-(2 - eta) * eta * K / 2))


def _eliminate_eta(expr):
    """Substitute eta = (1 - m)/lam and rewrite m**K powers via u."""
    return _in_u(expr.subs(eta, (1 - m) / lam))


@cache
def check_all():
    """Assert every identity; returns a dict name -> True for the summary."""
    out = {}
    R = renyi()
    # Theorem 3's exact value: lam = 1, start_var = 0
    lhs = R.subs({lam: 1, start_var: 0})
    out["R(lam=1, start_var=0) == Thm 3 exact"] = (
        _in_u(sp.simplify(lhs - theorem3_exact()).subs(eta, 1 - m).subs(lam, 1)) == 0)
    # Cor. 1 start: start_var = 2 sigma^2/lam
    lhs = R.subs(start_var, 2 * sigma**2 / lam)
    out["R(start_var=2 sigma^2/lam) == Cor1-start form"] = _eliminate_eta(lhs - cor1_start_exact()) == 0
    # K -> infinity: m^K -> 0 for |m| < 1; first check that sympy agrees on exp(-r K) -> 0
    r = sp.Symbol("r", positive=True)
    assert sp.limit(sp.exp(-r * K), K, sp.oo) == 0
    lim = sp.simplify(_in_u(R.subs(eta, (1 - m) / lam)).subs(u, 0))
    out["lim_K R (any start) == alpha S^2 (2-eta lam)/(4 lam sigma^2 n^2)"] = (
        sp.simplify(lim - limit_k_infinity().subs(eta, (1 - m) / lam)) == 0)
    # K = 1, fixed start: one-step Gaussian mechanism for every lam
    one = sp.simplify(R.subs({K: 1, start_var: 0}))
    out["R(K=1, start_var=0) == alpha eta S^2/(4 sigma^2 n^2)"] = (
        sp.simplify(one - alpha * eta * S**2 / (4 * sigma**2 * n**2)) == 0)
    # generalised Thm 3 (inventory P22): curvature a = lam, fixed start
    p22 = alpha * S**2 * (2 - eta * lam) * (1 - M_OF_ETA**K) / (4 * lam * sigma**2 * n**2 * (1 + M_OF_ETA**K))
    out["R(start_var=0) == P22 generalised Thm 3"] = _eliminate_eta(R.subs(start_var, 0) - p22) == 0
    # printed-bound identities
    out["Cor. 1 == eq. 16 at c = lam/(2 sigma^2)"] = (
        sp.simplify(cor1_bound() - eq16_bound(lam / (2 * sigma**2))) == 0)
    out["eq. 68 at gamma = 1/2 == eq. 16"] = sp.simplify(eq68_bound(sp.Rational(1, 2)) - eq16_bound()) == 0
    out["Cor. 2 == eq. 16 at c = (2-eta)/(2 sigma^2)"] = (
        sp.simplify(cor2_bound() - eq16_bound((2 - eta) / (2 * sigma**2))) == 0)
    # Cor. 2's LSI constant: stationary variance at lam = 1 is 2 sigma^2/(2 - eta)
    vinf = sp.simplify(_in_u(variance().subs(lam, 1).subs(eta, 1 - m)).subs(u, 0).subs(m, 1 - eta))
    out["v_inf(lam=1) == 2 sigma^2/(2-eta) (Cor. 2's 1/c)"] = (
        sp.simplify(vinf - 2 * sigma**2 / (2 - eta)) == 0)
    # excess risk
    er = excess_risk()
    target = lam / 2 * (M_OF_ETA ** (2 * K) * dist**2 + d * variance())
    out["excess risk == lam/2 (m^2K dist^2 + d v_K)"] = _eliminate_eta(er - target) == 0
    for name, ok in out.items():
        assert ok, name
    return out


def summary() -> str:
    lines = ["Noisy GD on (lam/2)||theta - x||^2, derived from Algorithm 1:"]
    gap_map, var_map, _ = update_recursions()
    Dk, vk = sp.Symbol("Dk", real=True), sp.Symbol("vk", nonnegative=True)
    lines.append(f"  Delta_(k+1) = {sp.collect(sp.expand(gap_map), Dk)}   (Delta_0 = 0)")
    lines.append(f"  v_(k+1)     = {sp.collect(sp.expand(var_map), vk)}   (v_0 = start_var)")
    lines.append(f"  Delta_K     = {mean_gap()}")
    lines.append(f"  v_K         = {variance()}")
    lines.append(f"  R_alpha     = {renyi()}")
    lines.append(f"  excess risk = {excess_risk()}")
    lines.append(f"  K -> oo     : {limit_k_infinity()}")
    for name in check_all():
        lines.append(f"  [ok] {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
