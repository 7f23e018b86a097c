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
from verify.results import Method, Truth
from verify.truth.gaussian import gaussian_delta, renyi_gaussian_1d
from verify.truth.hockey_stick_1d import delta_float, enclose_delta, epsilon_truth
from verify.truth.mixture import Mixture1D
from verify.truth.mixture_quad import renyi_mixture_quad_both
from verify.truth.numbers import Enclosure, arb_numbers, num
from verify.truth.tradeoff_1d import tradeoff_truth

MAX_COMPONENTS = 1 << 12  # sampling patterns one truth may mix (about 5 s of quadrature)
_SCALE_LOG = 600.0  # log of the largest |1 - eta reg|^(2 (T - 1)) the float weights and variance may reach
_DELTA_PAD = 1e-9  # relative pad of a float delta(eps) (Phi differences summed in floats)


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
        shrink = abs(1.0 - self.eta * self.lam)
        if shrink > 1 and 2 * (int(self.steps) - 1) * math.log(shrink) > _SCALE_LOG:
            raise ParameterError(f"|1 - eta reg| = {shrink:g} over {int(self.steps)} steps scales the iterate beyond "
                                 "the float range")

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


def _single_pair_delta(sgd: LinearSGD, steps: tuple[int, ...], eps: float, what: str) -> Truth:
    """One Gaussian pair (the record in every batch it could be in: one batch, q = 1, cyclic): the analytic Gaussian
    delta(eps) at mu = |x - x'| c / sqrt(v) (verify.truth.gaussian.gaussian_delta, both orders alike), in mpmath for
    the value and in Arb balls for the enclosure. The mixture hockey stick in floats lost 1e-8 of a delta near 1e-73
    (outside its pad), and its Arb bracket there was absolute (an upper end of 4e-8): an exact statement of this very
    formula was undecided."""
    def closed_form(eta, lam, sigma, b, x, x_prime, eps):
        a = 1 - eta * lam
        T = int(sgd.steps)
        c = eta / b * sum(a ** (T - 1 - t) for t in steps)
        v = eta**2 * sigma**2 * sum(a ** (2 * t) for t in range(T))
        return gaussian_delta(eps, abs(x - x_prime) * abs(c) / num().sqrt(v))

    inputs = {"eta": sgd.eta, "lam": sgd.lam, "sigma": sgd.sigma, "b": sgd.b, "x": sgd.x, "x_prime": sgd.x_prime,
              "eps": eps}

    def enclose(prec: int) -> Enclosure:
        with arb_numbers(prec) as N:
            return Enclosure.of(closed_form(**{k: N.mpf(v) for k, v in inputs.items()}),
                                "the analytic Gaussian delta(eps) in Arb balls", prec)

    with mpmath.workdps(50):
        value = closed_form(**{k: mpmath.mpf(v) for k, v in inputs.items()})
    return Truth.exact(float(value), f"{what}: one Gaussian pair, the analytic Gaussian delta(eps)", enclose=enclose)


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


Patterns = list[tuple[Sequence[int], object]]  # (steps S at which the record is sampled, its exact weight)


def poisson_patterns(sgd: LinearSGD, q: float) -> Patterns:
    """Poisson sampling at rate q: the record joins each step independently (2^T patterns; T + 1 without
    contraction, where only how often it was sampled matters)."""
    if not (math.isfinite(q) and 0 < q <= 1):
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    T = int(sgd.steps)
    if q == 1:
        return [(range(T), Fraction(1))]
    if sgd.a == 1:
        return [(tuple(range(k)), (q, k, T, math.comb(T, k))) for k in range(T + 1)]
    if 2**T > MAX_COMPONENTS:
        raise ResourceLimitError(f"2^{T} Poisson patterns, more than {MAX_COMPONENTS}: at most 12 steps (any number "
                                 "without contraction, lam = 0)")
    return [(tuple(t for t in range(T) if mask >> t & 1), (q, bin(mask).count("1"), T, 1)) for mask in range(2**T)]


def shuffled_patterns(sgd: LinearSGD, batches: int, *, once: bool = False) -> Patterns:
    """Fixed-size batches from a uniform permutation of n = batches * b records: fresh each epoch, or `once`."""
    m, T = _epochs(sgd, batches)
    E = T // m
    if once:
        return [(tuple(e * m + j for e in range(E)), Fraction(1, m)) for j in range(m)]
    if m**E > MAX_COMPONENTS:
        raise ResourceLimitError(f"{m}^{E} shuffle patterns, more than {MAX_COMPONENTS}")
    return [(tuple(e * m + j for e, j in enumerate(js)), Fraction(1, m**E))
            for js in itertools.product(range(m), repeat=E)]


def cyclic_patterns(sgd: LinearSGD, batches: int, position: int) -> Patterns:
    """A fixed order: the record in batch `position` (0-based) of every epoch; one pattern."""
    m, T = _epochs(sgd, batches)
    if isinstance(position, bool) or int(position) != position or not 0 <= position < m:
        raise ParameterError(f"position must be an integer in [0, {m - 1}], got {position}")
    return [(tuple(e * m + int(position) for e in range(T // m)), Fraction(1))]


def poisson_renyi(sgd: LinearSGD, q: float, alpha: float) -> Truth:
    """R_alpha, both orders, of noisy SGD with Poisson batches (`poisson_patterns`)."""
    what = "noisy SGD, full batch" if q == 1 else "noisy SGD, Poisson batches"
    return _mixture_renyi(sgd, poisson_patterns(sgd, q), alpha, what)


def shuffled_renyi(sgd: LinearSGD, batches: int, alpha: float, *, once: bool = False) -> Truth:
    """R_alpha, both orders, with reshuffled (or shuffled-once) fixed-size batches (`shuffled_patterns`)."""
    what = "noisy SGD, one shuffle for every epoch" if once else "noisy SGD, reshuffled every epoch"
    return _mixture_renyi(sgd, shuffled_patterns(sgd, batches, once=once), alpha, what)


def cyclic_renyi(sgd: LinearSGD, batches: int, position: int, alpha: float) -> Truth:
    """R_alpha of cyclic batches (`cyclic_patterns`): one Gaussian pair."""
    return _mixture_renyi(sgd, cyclic_patterns(sgd, batches, position), alpha, "noisy SGD, cyclic batches")


# ---- (eps, delta) and f-DP: the tight hockey stick of the two laws, bracketed in Arb (verify.truth.hockey_stick_1d) --

def _laws(sgd: LinearSGD, patterns: Patterns) -> tuple[Mixture1D, Mixture1D, float]:
    """The released laws on D (record x) and D' (x') over the patterns, and a proven bound on max_S |w~_S - w_S| / w~_S,
    the relative distance of the float weights they carry from the exact ones (both laws share the weights)."""
    if len(patterns) > MAX_COMPONENTS:
        raise ResourceLimitError(f"{len(patterns)} sampling patterns, more than {MAX_COMPONENTS}")
    c = [sum(sgd.weight(t) for t in steps) for steps, _ in patterns]
    weights = [_float(w) for _, w in patterns]
    error = max((abs(arb(f) - _arb(w)) / arb(f) for f, (_, w) in zip(weights, patterns, strict=True) if f > 0),
                key=lambda e: float(e.upper()), default=arb(0))
    sds = [math.sqrt(sgd.variance())] * len(c)
    return (Mixture1D.of(weights, [sgd.x * ci for ci in c], sds),
            Mixture1D.of(weights, [sgd.x_prime * ci for ci in c], sds), float(error.upper()))


def mixture_dp_epsilon(sgd: LinearSGD, patterns: Patterns, delta: float, what: str) -> Truth:
    """The tight eps(delta) of noisy SGD's released iterate, the larger of both orders (replace-one), with the Arb
    bracket of both (padded by the float weights' distance from the exact ones) as its enclosure."""
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta!r}")
    p, q, error = _laws(sgd, patterns)
    return epsilon_truth(p, q, delta, f"{what}: tight eps(delta) of the {len(p.weights)}-component mixture pair, "
                         "both orders", weight_error=error)


def mixture_dp_delta(sgd: LinearSGD, patterns: Patterns, eps: float, what: str) -> Truth:
    """The tight delta(eps), the larger of both orders, bracketed in Arb."""
    if not math.isfinite(eps):
        raise ParameterError(f"eps must be finite, got {eps!r}")
    if len(patterns) == 1:
        return _single_pair_delta(sgd, tuple(patterns[0][0]), eps, what)
    p, q, error = _laws(sgd, patterns)
    value = max(delta_float(p, q, eps), delta_float(q, p, eps))

    def enclose(prec: int) -> Enclosure:
        (a_lo, a_hi), (b_lo, b_hi) = (enclose_delta(x, y, eps, prec, weight_error=error)
                                      for x, y in ((p, q), (q, p)))
        return Enclosure(max(a_lo, b_lo), max(a_hi, b_hi), "hockey stick of the mixture pair bracketed in Arb, both "
                         "orders", prec)

    pad = _DELTA_PAD * value + 1e-300
    return Truth(value, max(value - pad, 0.0), min(value + pad, 1.0), Method.EXACT,
                 f"{what}: tight delta(eps) of the {len(p.weights)}-component mixture pair, both orders",
                 enclose=enclose)


def mixture_tradeoff(sgd: LinearSGD, patterns: Patterns, type1: float, what: str) -> Truth:
    """The trade-off function at type-I error `type1`, the smaller of both orders (f-DP), from the mixture pair's
    hockey stick (verify.truth.tradeoff_1d), bracketed in Arb."""
    p, q, error = _laws(sgd, patterns)
    return tradeoff_truth(p, q, float(type1), f"{what}: trade-off of the {len(p.weights)}-component mixture pair at "
                          "the Neyman-Pearson threshold, both orders", weight_error=error)


def _epochs(sgd: LinearSGD, batches: int) -> tuple[int, int]:
    if isinstance(batches, bool) or int(batches) != batches or batches < 1:
        raise ParameterError(f"batches per epoch must be an integer >= 1, got {batches}")
    m, T = int(batches), int(sgd.steps)
    if T % m:
        raise ParameterError(f"steps ({T}) must be a whole number of epochs of {m} batches")
    return m, T

