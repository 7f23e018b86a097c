"""Two released DP-SGD steps where the added point's influence depends on the first step's noise (Thudi et al. 2024,
seed 004, research 4.5): the exact multi-step truth behind Theorem 3.3 / A.2 and the paper's 10-run estimator.

D = {} and D' = {x*}, theta_0 = x*, clip C = 1, noise s = 1 on the gradient, step eta:
theta_t = theta_{t-1} - eta (sum_{i in B_t} clip(theta_{t-1} - x_i) + xi_t), Poisson rate q, both steps released.
Step 1 has the same law on D and D' (x*'s gradient is 0 at theta_0), so theta_1 = x* - eta xi_1 under both, and
step 2 is the sampled Gaussian with sensitivity Delta(xi) = min(eta |xi|, 1). In the add order (D' first):

    D_alpha(path) = (1/(alpha - 1)) ln E_xi[M(Delta)],   M(Delta) = e^{(alpha-1) eps_SGM(q, Delta, alpha)}
                  = sum_k C(alpha, k) (1-q)^(alpha-k) q^k e^{m_k Delta^2},  m_k = k(k-1)/2   (integer alpha),

and Theorem 3.3 with exponent p charges (1/(p (alpha - 1))) ln E_xi[M(Delta)^p] (its first-step term is 0). M^p is
again a finite sum of b_m e^{m Delta^2}, and E_xi[e^{m min(eta|xi|, 1)^2}] has a closed form in erf / erfi, so both
are closed forms with positive terms only: evaluated in `verify.truth.numbers.num()` (mpmath, or Arb balls).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath

from verify.truth.numbers import Enclosure, NotEnclosable, arb_numbers, normal_cdf, num, to_mpf


def _step_series(alpha: int, q: Any) -> dict[int, Any]:
    """M(Delta) = sum_m c_m e^{m Delta^2}: m = k(k-1)/2, c_m = C(alpha, k) (1-q)^(alpha-k) q^k."""
    N = num()
    out: dict[int, Any] = {}
    for k in range(alpha + 1):
        m = k * (k - 1) // 2
        out[m] = out.get(m, 0) + N.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k
    return out


def _power(series: dict[int, Any], p: int) -> dict[int, Any]:
    """The exponents and coefficients of (sum_m c_m x^m)^p, by repeated sparse multiplication."""
    out = dict(series)
    for _ in range(p - 1):
        nxt: dict[int, Any] = {}
        for m1, c1 in out.items():
            for m2, c2 in series.items():
                nxt[m1 + m2] = nxt.get(m1 + m2, 0) + c1 * c2
        out = nxt
    return out


def clipped_gaussian_mgf(m: int, eta: Any) -> Any:
    """E[exp(m min(eta |xi|, 1)^2)] for xi ~ N(0, 1): the tail |xi| > 1/eta gives e^m P(|xi| > 1/eta); inside,
    int_{-r}^{r} phi(x) e^{-a x^2/2} dx with a = 1 - 2 m eta^2 and r = 1/eta is erf(r sqrt(a/2))/sqrt(a) (a > 0),
    erfi(r sqrt(-a/2))/sqrt(-a) (a < 0) or 2r/sqrt(2 pi) (a = 0)."""
    N = num()
    r = 1 / eta
    tail = N.exp(N.mpf(m)) * 2 * normal_cdf(-r)
    a = 1 - 2 * m * eta**2
    sign = N.sign(a)
    if sign is None:
        raise NotEnclosable("the sign of 1 - 2 m eta^2 is undecided on an Arb ball")
    if sign > 0:
        inside = N.erf(r * N.sqrt(a / 2)) / N.sqrt(a)
    elif sign < 0:
        inside = N.erfi(r * N.sqrt(-a / 2)) / N.sqrt(-a)
    else:
        inside = 2 * r / N.sqrt(2 * N.pi())
    return tail + inside


def clipped_gaussian_mgf_excess(m: int, eta: Any) -> Any:
    """E[exp(m min(eta |xi|, 1)^2)] - 1 without cancellation at small eta (where it is ~ m eta^2): with a = 1 - 2 m
    eta^2 > 1/4 the inner part minus 1 is (1/sqrt(a) - 1) - erfc(r sqrt(a/2))/sqrt(a), and 1/sqrt(a) - 1 =
    2 m eta^2/(sqrt(a) (1 + sqrt(a))); erfc(r sqrt(a/2)) = 2 Phi(-r sqrt(a)). Elsewhere (m eta^2 >= 3/8) the moment
    is well above 1, so subtracting 1 costs no digits. 0 exactly for m = 0."""
    N = num()
    if m == 0:
        return N.mpf(0)
    a = 1 - 2 * m * eta**2
    if N.sign(a - N.mpf(1) / 4) != 1:
        return clipped_gaussian_mgf(m, eta) - 1
    r, root = 1 / eta, N.sqrt(a)
    tail = N.exp(N.mpf(m)) * 2 * normal_cdf(-r)
    return tail + 2 * m * eta**2 / (root * (1 + root)) - 2 * normal_cdf(-r * root) / root


def _log_expectation(series: dict[int, Any], eta: Any) -> Any:
    """log sum_m c_m E[e^{m Delta^2}] where sum_m c_m = 1 (binomial weights, or their p-th power): log1p of
    sum_m c_m (E[e^{m Delta^2}] - 1), which keeps every digit when the divergence is tiny (q or eta small), where
    log(1 + tiny) would round it to 0."""
    return num().log1p(sum(c * clipped_gaussian_mgf_excess(m, eta) for m, c in series.items()))


def anchored_chain_renyi(alpha: Any, q: Any, eta: Any) -> Any:
    """D_alpha(law of (theta_1, theta_2) on D' || on D), exact (integer alpha)."""
    a = int(alpha)
    return _log_expectation(_step_series(a, q), eta) / (a - 1)


def anchored_chain_holder(alpha: Any, q: Any, eta: Any, p_holder: Any) -> Any:
    """Theorem 3.3's right-hand side with Hölder exponent p (integer) and the exact per-step divergences."""
    a, p = int(alpha), int(p_holder)
    return _log_expectation(_power(_step_series(a, q), p), eta) / (p * (a - 1))


def _step_eps(alpha: int, q: Any, delta: Any) -> Any:
    """eps_SGM(q, Delta, alpha) in the add order, integer alpha: log1p(sum_m c_m expm1(m Delta^2))/(alpha - 1)."""
    N = num()
    return N.log1p(sum(c * N.expm1(m * delta**2) for m, c in _step_series(alpha, q).items())) / (alpha - 1)


def _root(f: Callable[[Any], Any], target: Any) -> Any:
    """The largest Delta found in (0, 1] with f(Delta) < target, within 2^-120 relative of the root of f = target
    (f increasing, f(1) >= target): halving finds the scale, bisection the digits."""
    hi, floor = mpmath.mpf(1), mpmath.mpf(2) ** -3000
    while hi > floor and f(hi / 2) >= target:
        hi /= 2
    lo = hi / 2
    while hi - lo > hi * mpmath.mpf(2) ** -120:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return lo


def undercut_lower(alpha: float, q: float, eta: float, runs: int) -> tuple[float, Callable[[int], Enclosure]]:
    """A proven lower bound on P(the paper's `runs`-run plug-in estimate of Theorem 3.3 < the true divergence).

    If every run's per-step divergence eps_SGM(q, Delta(xi_j), alpha) is below the truth t, so is the plug-in
    (1/lambda) ln mean_j e^{lambda eps_j} for every lambda > 0, whatever p. eps is increasing in Delta =
    min(eta |xi|, 1), so with Delta_t the root of eps(Delta) = t that event has probability erf(Delta_t/(eta
    sqrt 2))^runs. Returns its float and an encloser whose lower end uses a Delta just below Delta_t proven to have
    eps < t (the upper end is 1)."""
    a, runs = int(alpha), int(runs)
    with mpmath.workdps(50):
        t = anchored_chain_renyi(a, mpmath.mpf(q), mpmath.mpf(eta))
        root = _root(lambda d: _step_eps(a, mpmath.mpf(q), d), t)
        value = mpmath.erf(root / (eta * mpmath.sqrt(2))) ** runs

    def enclose(prec: int) -> Enclosure:
        with arb_numbers(prec) as N:
            qb, eb = N.mpf(q), N.mpf(eta)
            t_ball = anchored_chain_renyi(a, qb, eb)
            below = N.mpf(to_mpf(root) * (1 - mpmath.mpf(2) ** -40))
            if not _step_eps(a, qb, below) < t_ball:
                raise NotEnclosable("could not prove eps(Delta) < the true divergence just below the root")
            low = N.erf(below / (eb * N.sqrt(2))) ** runs
            return Enclosure(low.lower(), N.mpf(1), "lower end erf(Delta/(eta sqrt 2))^runs in Arb balls; upper 1",
                             prec)

    return float(value), enclose
