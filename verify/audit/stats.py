"""The exact arithmetic of an audit: Clopper-Pearson bounds on a test's error rates, the (eps, delta)-DP inequality
that turns them into a lower bound on eps, the noncentral-t bound on the Gaussian-DP parameter mu and its conversion
to eps(delta), certified in Arb.

(eps, delta)-DP makes every test of D against D' satisfy alpha + e^eps beta >= 1 - delta and beta + e^eps alpha >= 1 -
delta (Kairouz, Oh & Viswanath 2015, Thm 2.1), alpha its false-positive and beta its false-negative rate; so upper
confidence bounds on both rates give eps >= log((1 - delta - beta_upper) / alpha_upper) (and the same with the rates
swapped) on the event that both bounds hold."""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, optimize, stats

from verify.errors import ParameterError
from verify.truth.gaussian import gaussian_dp_epsilon
from verify.truth.numbers import NotEnclosable, arb_numbers


def clopper_pearson_upper(errors: ArrayLike, trials: int, level: float) -> NDArray[np.float64]:
    """The exact (Clopper-Pearson) upper confidence bound on a binomial rate from `errors` of `trials`: the rate p
    with P_p(X <= errors) = level; 1 where errors = trials. `errors` may be real (an expected count, for an oracle)."""
    k = np.asarray(errors, dtype=float)
    inside = k < trials
    safe = np.where(inside, k, 0.0)
    bound = stats.beta.ppf(1.0 - level, safe + 1.0, np.where(inside, trials - safe, 1.0))
    return np.where(inside, bound, 1.0)


def epsilon_from_rates(fpr_upper: ArrayLike, fnr_upper: ArrayLike, delta: float) -> NDArray[np.float64]:
    """max(0, log((1 - delta - fnr) / fpr), log((1 - delta - fpr) / fnr)): the least eps that (eps, delta)-DP allows
    for a test whose error rates are at most these."""
    a, b = np.asarray(fpr_upper, dtype=float), np.asarray(fnr_upper, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - b, 0.0) / a)
        two = np.log(np.maximum(1.0 - delta - a, 0.0) / b)
    return np.maximum(np.nan_to_num(np.maximum(one, two), nan=0.0, neginf=0.0), 0.0)


def rates_bound(false_positives: ArrayLike, negatives: int, false_negatives: ArrayLike, positives: int, delta: float,
                confidence: float) -> NDArray[np.float64]:
    """The eps lower bound from a test's error counts, valid at `confidence`: each rate's Clopper-Pearson upper bound
    at (1 - confidence)/2 (Bonferroni over the two rates)."""
    level = (1.0 - confidence) / 2.0
    return epsilon_from_rates(clopper_pearson_upper(false_positives, negatives, level),
                              clopper_pearson_upper(false_negatives, positives, level), delta)


def check_level(delta: float, confidence: float) -> None:
    """A ParameterError unless 0 <= delta < 1 and 0 < confidence < 1."""
    if not (isinstance(delta, (int, float)) and 0 <= delta < 1):
        raise ParameterError(f"delta must lie in [0, 1), got {delta!r}")
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence!r}")


# ---- the Gaussian grey box ------------------------------------------------------------------------------------------


def _nct_cdf(t: float, df: int, nc: float) -> float:
    """P(T <= t) for T noncentral-t(df, nc): SciPy's (Boost's) value, or where that is not a number, the integral
    E[Phi(t sqrt(V/df) - nc)] over V chi-square(df) by quadrature."""
    value = float(stats.nct.cdf(t, df, nc))
    if math.isfinite(value):
        return value
    lo, hi = stats.chi2.ppf(1e-16, df), stats.chi2.isf(1e-16, df)
    return float(integrate.quad(lambda v: stats.norm.cdf(t * math.sqrt(v / df) - nc) * stats.chi2.pdf(v, df), lo, hi,
                                epsabs=1e-14, limit=200)[0])


def noncentrality_bounds(t: float, df: int, low_level: float, high_level: float) -> tuple[float, float]:
    """(L, U) with P_L(T >= t) = low_level and P_U(T <= t) = high_level for T noncentral-t with `df` degrees of
    freedom: L is a lower confidence bound on the noncentrality at 1 - low_level, U an upper one at 1 - high_level
    (P_nc(T <= t) decreases in nc). The roots are bracketed a few standard deviations of T from t (where the tails
    are not below 1e-12), and each end is moved outwards by the root's tolerance."""
    sd = math.sqrt(1.0 + t * t / (2.0 * df))

    def root(f: Callable[[float], float], step: float) -> float:
        near = t
        far = t + step
        while f(far) * f(near) > 0:
            near, far = far, far + step
        return optimize.brentq(f, min(near, far), max(near, far), xtol=1e-10, rtol=1e-12)

    low = root(lambda nc: (1.0 - _nct_cdf(t, df, nc)) - low_level, -sd)
    high = root(lambda nc: _nct_cdf(t, df, nc) - high_level, sd)
    slack = 1e-9 * (1.0 + abs(t))
    return low - slack, high + slack


def gaussian_dp_delta(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth & Su 2022, Cor. 2.13)."""
    if mu <= 0:
        return 0.0
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def gaussian_epsilon_lower(delta: float, mu: float) -> float:
    """A lower bound on eps(delta) of mu-GDP (it increases in mu): the lower end of Arb's enclosure of the root of
    `gaussian_dp_delta` (verify.truth.gaussian), or brentq's root less its tolerance where Arb cannot enclose it; 0
    where delta >= delta(0) (and at delta = 0: infinite for mu > 0)."""
    if mu <= 0:
        return 0.0
    if delta == 0:
        return math.inf
    if gaussian_dp_delta(0.0, mu) <= delta:
        return 0.0
    try:
        with arb_numbers(128):
            ball = gaussian_dp_epsilon(delta, mu)
            low = float(ball.lower())
        return max(0.0, float(np.nextafter(low, -math.inf)))
    except (NotEnclosable, ArithmeticError, ValueError):  # pragma: no cover - Arb encloses it over the tested range
        top = mu * mu / 2 + mu * math.sqrt(max(2.0, -2 * math.log(delta)))
        root = optimize.brentq(lambda e: gaussian_dp_delta(e, mu) - delta, 0.0, top, xtol=1e-12)
        return max(0.0, root - 1e-9 * (1 + root))


def gaussian_epsilon(delta: float, mu: float) -> float:
    """eps(delta) of mu-GDP in mpmath (the Gaussian mechanism's truth at Delta/sigma = mu), for tests and oracles."""
    return float(gaussian_dp_epsilon(mpmath.mpf(delta), mpmath.mpf(mu))) if mu > 0 else 0.0


def sigma_interval(pooled_variance: float, df: int, confidence: float) -> tuple[float, float]:
    """The equal-tailed chi-square confidence interval on sigma from a pooled variance with `df` degrees of freedom
    (df s^2 / sigma^2 is chi-square(df))."""
    tail = (1.0 - confidence) / 2.0
    scaled = df * pooled_variance
    return (math.sqrt(scaled / stats.chi2.ppf(1.0 - tail, df)), math.sqrt(scaled / stats.chi2.ppf(tail, df)))
