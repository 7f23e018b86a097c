"""Multi-step noisy SGD with random batches on a linear model, exactly: the released last iterate is a Gaussian
mixture over where the differing record was sampled.

Model: theta_{t+1} = a theta_t + (eta/b) sum_{i in B_t} x_i + eta xi_t, a = 1 - eta lam, xi_t ~ N(0, sigma^2),
theta_0 = 0: the loss lam theta^2/2 - x theta per record with the regulariser charged once per step, the batch's data
term averaged over the batch size b (a fixed normaliser, also for Poisson batches). Every record but one is x = 0;
the differing record is x on D and x' on D'. Only the steps S at which it is sampled matter:

    theta_T | S ~ N(x c(S), v),  c(S) = (eta/b) sum_{t in S} a^(T-1-t),  v = eta^2 sigma^2 sum_{t<T} a^(2t),

so each law is the mixture sum_S P(S) N(x c(S), v) with the same weights on D and D', and R_alpha of both orders
comes from the certified mixture quadrature (verify.truth.mixture_quad). The sampling schemes differ only in P(S):
- Poisson (rate q; also sampling b of n without replacement at every step, q = b/n): each step independently;
- shuffled: n = m b records in m batches, a fresh permutation each epoch: one uniform position per epoch;
- shuffled once: one permutation kept for every epoch: the same position every epoch;
- cyclic: a fixed position j0 every epoch (one Gaussian, closed form).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath
from flint import arb

from verify.errors import ParameterError, ResourceLimitError, check_renyi_order
from verify.results import Truth
from verify.truth.gaussian import renyi_gaussian_1d
from verify.truth.mixture_quad import renyi_mixture_quad_both
from verify.truth.numbers import Enclosure, arb_numbers

MAX_COMPONENTS = 1 << 12  # sampling patterns one truth may mix (about 5 s of quadrature)


@dataclass(frozen=True)
class LinearSGD:
    """The dynamics shared by every sampling scheme (module docstring)."""

    eta: float
    lam: float
    sigma: float
    b: float
    x: float
    x_prime: float
    steps: int

    def __post_init__(self) -> None:
        for name in ("eta", "sigma", "b"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ParameterError(f"{name} must be a finite number > 0, got {v}")
        for name in ("lam", "x", "x_prime"):
            if not math.isfinite(getattr(self, name)):
                raise ParameterError(f"{name} must be finite, got {getattr(self, name)}")
        if isinstance(self.steps, bool) or int(self.steps) != self.steps or self.steps < 1:
            raise ParameterError(f"steps must be an integer >= 1, got {self.steps}")

    @property
    def a(self) -> float:
        return 1.0 - self.eta * self.lam

    @property
    def log_a(self) -> float:
        """log a = log1p(-eta lam), exact where 1 - eta lam would round away eta lam (a near 1); nan if a <= 0."""
        shrink = self.eta * self.lam
        return math.log1p(-shrink) if shrink < 1 else math.nan

    def weight(self, t: int) -> float:
        """c({t}): the record's effect on theta_T when sampled at step t."""
        power = int(self.steps) - 1 - t
        if power == 0:
            return self.eta / self.b
        if not self.a > 0:
            return self.eta / self.b * self.a ** power
        return self.eta / self.b * math.exp(power * self.log_a)

    def variance(self) -> float:
        """eta^2 sigma^2 sum_{t<T} a^(2t) = eta^2 sigma^2 expm1(2 T log a)/expm1(2 log a): no cancellation when a is
        near 1 (1 - a^2 would lose the digits of eta lam)."""
        T = int(self.steps)
        if self.lam == 0 or T == 1:
            return self.eta**2 * self.sigma**2 * T
        if not self.a > 0:  # a <= 0: no cancellation in the plain sum
            a2 = self.a * self.a
            total = T if a2 == 1 else (1 - a2**T) / (1 - a2)
        else:
            total = math.expm1(2 * T * self.log_a) / math.expm1(2 * self.log_a)
        return self.eta**2 * self.sigma**2 * total


def _mixture_renyi(sgd: LinearSGD, patterns: Sequence[tuple[Sequence[int], object]], alpha: float,
                   what: str) -> Truth:
    """R_alpha both orders of sum_S w_S N(x c(S), v) against the same with x', the larger; `patterns` are (steps S,
    exact weight as a Fraction or (q, k, T, multiplicity): multiplicity q^k (1 - q)^(T - k)) pairs."""
    check_renyi_order(alpha)
    if len(patterns) > MAX_COMPONENTS:
        raise ResourceLimitError(f"{len(patterns)} sampling patterns, more than {MAX_COMPONENTS}")
    if len(patterns) == 1:
        return _single_pair(sgd, tuple(patterns[0][0]), alpha, what)
    c = [sum(sgd.weight(t) for t in steps) for steps, _ in patterns]
    sd = math.sqrt(sgd.variance())
    weights = [_float(w) for _, w in patterns]
    exact = [_arb(w) for _, w in patterns]
    sds = [sd] * len(c)
    forward, reverse = renyi_mixture_quad_both(weights, [sgd.x_prime * ci for ci in c], sds, weights,
                                               [sgd.x * ci for ci in c], sds, alpha,
                                               exact_weights=lambda: (exact, exact))
    return Truth.larger(forward, reverse, f"{what}: mixture over {len(c)} sampling patterns, both orders")


def _single_pair(sgd: LinearSGD, steps: tuple[int, ...], alpha: float, what: str) -> Truth:
    """One Gaussian pair: alpha (x - x')^2 c^2 / (2 v), evaluated in verify.truth.numbers (mpmath, or Arb balls for
    the enclosure)."""
    def closed_form(eta, lam, sigma, b, x, x_prime, alpha):
        a = 1 - eta * lam
        T = int(sgd.steps)
        c = eta / b * sum(a ** (T - 1 - t) for t in steps)
        v = eta**2 * sigma**2 * sum(a ** (2 * t) for t in range(T))
        return renyi_gaussian_1d(x * c, v, x_prime * c, v, alpha)

    inputs = {"eta": sgd.eta, "lam": sgd.lam, "sigma": sgd.sigma, "b": sgd.b, "x": sgd.x, "x_prime": sgd.x_prime,
              "alpha": alpha}

    def enclose(prec: int) -> Enclosure:
        with arb_numbers(prec) as N:
            return Enclosure.of(closed_form(**{k: N.mpf(v) for k, v in inputs.items()}), "closed form in Arb balls",
                                prec)

    with mpmath.workdps(50):
        value = closed_form(**{k: mpmath.mpf(v) for k, v in inputs.items()})
    return Truth.exact(float(value), f"{what}: one Gaussian pair, closed form", enclose=enclose)


def _float(w) -> float:
    if isinstance(w, tuple):
        q, k, n, mult = w
        return mult * q**k * (1 - q) ** (n - k)
    return float(w)


def _arb(w):
    if isinstance(w, tuple):
        q, k, n, mult = w
        qa = arb(q)
        return mult * qa**k * (1 - qa) ** (n - k)
    return arb(w.numerator) / w.denominator if isinstance(w, Fraction) else arb(w)


def poisson_renyi(sgd: LinearSGD, q: float, alpha: float) -> Truth:
    """Poisson sampling at rate q: the record joins each step independently (2^T patterns)."""
    if not (math.isfinite(q) and 0 < q <= 1):
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    T = int(sgd.steps)
    if 2**T > MAX_COMPONENTS and sgd.a != 1:
        raise ResourceLimitError(f"2^{T} Poisson patterns, more than {MAX_COMPONENTS}: at most 12 steps (any number "
                                 "without contraction, lam = 0)")
    if q == 1:
        return _mixture_renyi(sgd, [(range(T), Fraction(1))], alpha, "noisy SGD, full batch")
    if sgd.a == 1:  # no contraction: only how often the record was sampled matters, T + 1 patterns
        patterns = [(tuple(range(k)), (q, k, T, math.comb(T, k))) for k in range(T + 1)]
    else:
        patterns = [(tuple(t for t in range(T) if mask >> t & 1), (q, bin(mask).count("1"), T, 1))
                    for mask in range(2**T)]
    return _mixture_renyi(sgd, patterns, alpha, "noisy SGD, Poisson batches")


def shuffled_renyi(sgd: LinearSGD, batches: int, alpha: float, *, once: bool = False) -> Truth:
    """Fixed-size batches from a uniform permutation of n = batches * b records: fresh each epoch, or `once`."""
    m, T = _epochs(sgd, batches)
    E = T // m
    if once:
        patterns = [(tuple(e * m + j for e in range(E)), Fraction(1, m)) for j in range(m)]
        return _mixture_renyi(sgd, patterns, alpha, "noisy SGD, one shuffle for every epoch")
    if m**E > MAX_COMPONENTS:
        raise ResourceLimitError(f"{m}^{E} shuffle patterns, more than {MAX_COMPONENTS}")
    patterns = [(tuple(e * m + j for e, j in enumerate(js)), Fraction(1, m**E))
                for js in itertools.product(range(m), repeat=E)]
    return _mixture_renyi(sgd, patterns, alpha, "noisy SGD, reshuffled every epoch")


def cyclic_renyi(sgd: LinearSGD, batches: int, position: int, alpha: float) -> Truth:
    """A fixed order: the record in batch `position` (0-based) of every epoch; one Gaussian pair."""
    m, T = _epochs(sgd, batches)
    if isinstance(position, bool) or int(position) != position or not 0 <= position < m:
        raise ParameterError(f"position must be an integer in [0, {m - 1}], got {position}")
    steps = tuple(e * m + int(position) for e in range(T // m))
    return _mixture_renyi(sgd, [(steps, Fraction(1))], alpha, "noisy SGD, cyclic batches")


def _epochs(sgd: LinearSGD, batches: int) -> tuple[int, int]:
    if isinstance(batches, bool) or int(batches) != batches or batches < 1:
        raise ParameterError(f"batches per epoch must be an integer >= 1, got {batches}")
    m, T = int(batches), int(sgd.steps)
    if T % m:
        raise ParameterError(f"steps ({T}) must be a whole number of epochs of {m} batches")
    return m, T

