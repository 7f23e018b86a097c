"""The discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): P = N_Z(0, sigma^2), P(x) = f(x)/Z with
f(x) = exp(-x^2/(2 sigma^2)) on the integers, against Q = N_Z(Delta, sigma^2) for an integer sensitivity Delta.
The pair is its own mirror image (x -> Delta - x), so each quantity is the same in both orders.

Every infinite sum is a truncated sum plus a proven bound on the rest (`with_tail`), for M >= 0:

    T(M) = sum_{x >= M} f(x) <= f(M) / (1 - exp(-(2M + 1)/(2 sigma^2)))

((M + i)^2 >= M^2 + i(2M + 1)); terms are summed until f(x) < 2^-(prec + 40)/(1 + 2 sigma^2) of the largest
(`_reach`), so the bound is below the working precision. Z comes from that sum for sigma <= 1 and from Poisson
summation for sigma > 1: Z = sigma sqrt(2 pi) (1 + 2 sum_k q^(k^2)), q = exp(-2 pi^2 sigma^2), whose tail from K is
<= q^(K^2)/(1 - q^(2K + 1)).

Rényi (CKS 2020, Prop. 5 made exact): sum_x P^alpha Q^(1 - alpha) = e^(alpha(alpha - 1) Delta^2/(2 sigma^2))
theta(c)/theta(0), theta(c) = sum_x exp(-(x - c)^2/(2 sigma^2)), c = (1 - alpha) Delta; so R_alpha = alpha Delta^2/
(2 sigma^2) + log(theta(c)/theta(0))/(alpha - 1) <= alpha Delta^2/(2 sigma^2), equal where c is an integer. The ratio
depends on the distance d of c to the nearest integer (exact from the float inputs), through sums of positive terms
only: theta(c)/theta(0) = e^(-d^2/(2 sigma^2)) (1 + A_0 + sum_j e^(-j^2/(2 sigma^2)) (2 sinh(j d/(2 sigma^2)))^2)/(1
+ A_0) for sigma <= 1 (tail from J <= e^(-J(J - 1)/(2 sigma^2))/(1 - e^(-J/sigma^2))), and 1 - 4 sum_k q^(k^2)
sin^2(pi k d)/(1 + 2 sum_k q^(k^2)) for sigma > 1.

delta(eps) (CKS 2020, Thm 7): with x* the largest x of loss L(x) = (Delta^2 - 2 Delta x)/(2 sigma^2) > eps,
delta = sum_{x >= -x*} f(x) (1 - exp(eps - (2 x Delta + Delta^2)/(2 sigma^2)))/Z, every term positive, the first
exponent formed exactly. eps(delta) and the trade-off function: `lattice_pair`.
"""

from __future__ import annotations

import math
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from verify.errors import ResourceLimitError
from verify.truth.adaptive import as_int, dyadic, fraction, sin_pi, tight, with_tail
from verify.truth.lattice_pair import Lattice, pair_epsilon, pair_tradeoff
from verify.truth.numbers import num, to_mpf

try:
    from flint import ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    ctx = None

MAX_TERMS = 2_000_000  # terms of one truncated sum: beyond it (sigma ~ 1e5) a clean refusal, not minutes of work
POISSON_FROM = 1.0  # Z and theta by Poisson summation above this sigma (three terms give 128 bits at sigma = 1)
FLOAT_REACH = 800.0  # the locators' windows: exp(-800) is below every float delta or type-I error


def _bits() -> int:
    import mpmath

    return ctx.prec if num().rigorous else mpmath.mp.prec


class _Pair:
    """One point's closed forms (exact inputs)."""

    def __init__(self, sigma: Any, Delta: Any) -> None:
        N = num()
        self.sigma, self.D = N.mpf(sigma), as_int(Delta)
        self.two_var = 2 * self.sigma**2  # exact: a float squared
        self.sigma_float = float(to_mpf(self.sigma))

    @cached_property
    def _reach(self) -> float:
        """x^2/(2 sigma^2) past which f(x) is negligible: (prec + 40) ln 2 + ln(1 + 2 sigma^2)."""
        return (_bits() + 40) * math.log(2) + math.log1p(2 * self.sigma_float**2)

    def _f(self, x: int) -> Any:
        N = num()
        return N.exp(-N.mpf(x * x) / self.two_var)

    def _tail_bound(self, M: int) -> Any:
        """T(M) = sum_{x >= M} f(x) <= f(M)/(1 - e^(-(2M + 1)/(2 sigma^2))), M >= 0."""
        N = num()
        return self._f(M) / -N.expm1(-N.mpf(2 * M + 1) / self.two_var)

    def series(self, start: int, factor: Any = None) -> Any:
        """sum_{x >= start} f(x) factor(x), factor in [0, 1] (default 1): the terms from max(start, -W) to the last
        that matters, f(x + 1) = f(x) e^(-(2x + 1)/(2 sigma^2)); the terms left out bounded by T."""
        N = num()
        width = math.sqrt(2 * self.reach_var)
        low = max(start, -math.ceil(width))
        # in integers: a hockey stick's start can lie beyond the float range squared (sigma = 1e76, eps = 8664: 8.7e155)
        high = math.isqrt(max(low, 0) ** 2 + math.ceil(2 * self.reach_var)) + 1
        if high - low > MAX_TERMS:
            raise ResourceLimitError(f"the discrete Gaussian at sigma = {self.sigma_float:g} needs {high - low:.3g} "
                                     f"terms in one sum, more than {MAX_TERMS} (a sigma this large is beyond it)")
        # f(x + 1) = f(x) e^(-(2x + 1)/(2 sigma^2)) where those ratios have balls (below e^1000); else f(x) itself
        recur = abs(2 * low + 1) < 2000 * self.sigma_float**2
        f, ratio, step = self._f(low), N.exp(-N.mpf(2 * low + 1) / self.two_var), N.exp(-2 / self.two_var)
        total = N.mpf(0)
        for x in range(low, high + 1):
            total += f if factor is None else f * factor(x)
            if recur:
                f, ratio = f * ratio, ratio * step
            else:
                f = self._f(x + 1)
        rest = self._tail_bound(high + 1)
        if low > start:  # the terms below -W, bounded by symmetry
            rest = rest + self._tail_bound(-low + 1)
        return with_tail(total, rest)

    @cached_property
    def reach_var(self) -> float:
        return self.sigma_float**2 * self._reach

    @cached_property
    def _q(self) -> Any:
        N = num()
        return N.exp(-2 * N.pi() ** 2 * self.sigma**2)

    def _poisson(self, term: Any) -> Any:
        """sum_{k >= 1} q^(k^2) term(k), term in [0, 1]: until q^(k^2) < 2^-(prec + 40), the rest bounded by
        q^(K^2)/(1 - q^(2K + 1))."""
        N = num()
        k, total = 1, N.mpf(0)
        decay = 2 * math.pi**2 * self.sigma_float**2  # -log q
        while k * k * decay < (_bits() + 40) * math.log(2) + decay:
            total += self._q ** (k * k) * term(k)
            k += 1
        return with_tail(total, self._q ** (k * k) / (1 - self._q ** (2 * k + 1)))

    @cached_property
    def Z(self) -> Any:
        N = num()
        if self.sigma_float <= POISSON_FROM:
            return 1 + 2 * self.series(1)
        return self.sigma * N.sqrt(2 * N.pi()) * (1 + 2 * self._poisson(lambda k: 1))

    def survival(self, m: int) -> Any:
        """P(X >= m)."""
        return self.series(m) / self.Z if m >= 1 else 1 - self.series(1 - m) / self.Z

    def loss(self, y: int) -> Any:
        return num().mpf(self.D * self.D - 2 * self.D * y) / self.two_var

    def delta(self, eps: Any) -> Any:
        """The tight delta(eps), by the positive-term sum of the module docstring."""
        N = num()
        if self.D == 0:
            return N.mpf(0)
        var2 = fraction(self.sigma) ** 2 * 2
        x_star = math.ceil((self.D * self.D - var2 * fraction(eps)) / (2 * self.D)) - 1
        a = -x_star
        first = dyadic(var2 * fraction(eps) - self.D * (2 * a + self.D)) / self.two_var  # < 0
        step = 2 * N.mpf(self.D) / self.two_var

        def factor(x: int) -> Any:
            return -N.expm1(first - (x - a) * step)

        return self.series(a, factor) / self.Z

    def renyi(self, alpha: Any) -> Any:
        """R_alpha (module docstring)."""
        N = num()
        if self.D == 0:
            return N.mpf(0)
        alpha_q = fraction(alpha)
        c = (1 - alpha_q) * self.D
        d = min(c - math.floor(c), math.ceil(c) - c)
        top = N.mpf(alpha) * N.mpf(self.D * self.D) / self.two_var
        if d == 0:
            return top
        beta = N.mpf(alpha) - 1
        if self.sigma_float > POISSON_FROM:
            weights = self._poisson(lambda k: sin_pi(dyadic(k * d - math.floor(k * d))) ** 2)
            return top + N.log1p(-4 * weights / (1 + 2 * self._poisson(lambda k: 1))) / beta
        lead = dyadic(alpha_q * (alpha_q - 1) * self.D * self.D - d * d) / (self.two_var * beta)
        u = dyadic(2 * d) / self.two_var

        # f(j) (2 sinh(j d/(2 sigma^2)))^2 = e^(-(j^2 - 2jd)/(2 sigma^2)) (1 - e^(-jd/sigma^2))^2
        def term(j: int) -> Any:
            return N.exp(-dyadic(j * j - 2 * j * d) / self.two_var) * N.expm1(-j * u) ** 2

        total, J = N.mpf(0), 1
        while J * (J - 1) / 2 < self.reach_var:
            total += term(J)
            J += 1
        total = with_tail(total, N.exp(-N.mpf(J * (J - 1)) / self.two_var) / -N.expm1(-2 * N.mpf(J) / self.two_var))
        return lead + N.log1p(total / self.Z) / beta

    # ---- float locators for lattice_pair (log space, over the window of `_window`) ----------------------------

    def segment(self, target: float) -> int:
        return _segment(self.sigma_float, self.D, target)

    def atom(self, x: float) -> int:
        return _atom(self.sigma_float, self.D, x)

    def lattice(self) -> Lattice:
        return Lattice(self.D, self.survival, self.loss, self.delta, self.segment, self.atom)


def _window(sigma: float) -> np.ndarray:
    """The integers |x| <= W with f(W) < e^-FLOAT_REACH: the locators' support."""
    reach = math.ceil(sigma * math.sqrt(2 * FLOAT_REACH)) + 2
    if 2 * reach > MAX_TERMS:
        raise ResourceLimitError(f"the discrete Gaussian at sigma = {sigma:g} is beyond its {MAX_TERMS}-term sums")
    return np.arange(-reach, reach + 1, dtype=float)


def _log_weights(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The window's integers and log P(x) on them (float)."""
    ys = _window(sigma)
    with np.errstate(all="ignore"):  # at sigma = 1e-200, (y/sigma)^2 is inf: a weight of 0, as it should be
        logp = -0.5 * (ys / sigma) ** 2
    return ys, logp - _logsumexp(logp)


def _logsumexp(v: np.ndarray) -> float:
    top = float(np.max(v)) if v.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(v - top))))


@lru_cache(maxsize=256)
def _segment(sigma: float, D: int, target: float) -> int:
    """The largest j in [-W - 1, ceil(D/2) - 1] with delta(L(j)) <= target, by bisection on the float log delta(L(j))
    = log sum_{y < j} P(y) (1 - e^(-D (j - y)/sigma^2))."""
    ys, logp = _log_weights(sigma)

    def log_delta(j: int) -> float:
        keep = ys < j
        with np.errstate(all="ignore"):
            gaps = D * (j - ys[keep]) / sigma / sigma
            return _logsumexp(logp[keep] + np.log(-np.expm1(-gaps)))

    lo, hi, log_target = int(ys[0]) - 1, math.ceil(D / 2), math.log(target)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if log_delta(mid) <= log_target else (lo, mid)
    return lo


@lru_cache(maxsize=256)
def _atom(sigma: float, D: int, x: float) -> int:
    """The largest m with P(X >= m) > x: from the upper tail where x <= 1/2, else from the lower tail, P(X <= m - 1) <
    1 - x (1 - x is exact for a float x > 1/2)."""
    ys, logp = _log_weights(sigma)
    upper = np.logaddexp.accumulate(logp[::-1])[::-1]  # upper[i] = log P(X >= ys[i])
    if x <= 0.5:
        above = np.nonzero(upper > math.log(x))[0]
        return int(ys[above[-1]]) if above.size else int(ys[0])
    lower = upper[::-1]  # P(X <= -m) = P(X >= m): lower[i] = log P(X <= ys[i])
    below = np.nonzero(lower < math.log1p(-x))[0]  # ys[i] = m - 1 with P(X <= m - 1) < 1 - x
    return int(ys[below[-1]]) + 1 if below.size else int(ys[0])


@tight
def dg_renyi(alpha: Any, Delta: Any, sigma: Any) -> Any:
    """R_alpha of the discrete Gaussian pair (module docstring)."""
    return _Pair(sigma, Delta).renyi(num().mpf(alpha))


@tight
def dg_delta(eps: Any, Delta: Any, sigma: Any) -> Any:
    """delta(eps) of the discrete Gaussian pair (module docstring)."""
    return _Pair(sigma, Delta).delta(num().mpf(eps))


@tight
def dg_epsilon(delta: Any, Delta: Any, sigma: Any) -> Any:
    """eps(delta) of the discrete Gaussian pair (`lattice_pair.Lattice.epsilon`)."""
    return pair_epsilon(_Pair(sigma, Delta), delta)


@tight
def dg_tradeoff(x: Any, Delta: Any, sigma: Any) -> Any:
    """The trade-off function of the discrete Gaussian pair (`lattice_pair.Lattice.tradeoff`)."""
    return pair_tradeoff(_Pair(sigma, Delta), x)
