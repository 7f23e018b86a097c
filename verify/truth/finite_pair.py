"""Privacy quantities of a pair of laws on a finite set, exactly: Rényi divergence, delta(eps), eps(delta) and the
trade-off function, each over both orders.

A pair is a list of `Atom`s: outcomes that share the same probabilities p (first law) and q (second law), with their
privacy loss L = log(p/q) formed by the caller without cancellation, sorted by L, largest first. Every form sums
nonnegative terms: the Rényi sum as sum q (e^(alpha L) - 1 - alpha (e^L - 1)) (the first-order terms cancel exactly
since sum p = sum q; a series where alpha L is small), the hockey stick as sum max(0, q e^eps expm1(L - eps)); what
cancels inside a term is left to `adaptive.tight`. References: the hockey-stick divergence and its level sets
(Balle, Barthe & Gaboardi 2018), eps(delta) as the largest of log((P(S) - delta)/Q(S)) over sets S, attained at a
level set of L (the Neyman-Pearson lemma); the trade-off function T(P, Q)(x) = inf{1 - E_Q phi : E_P phi <= x}
(Dong, Roth & Su 2019), piecewise linear here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from verify.truth.adaptive import (
    dyadic,
    either,
    fraction,
    larger,
    positive,
    scaled,
    sign,
    smaller,
    with_error,
    working_bits,
)
from verify.truth.numbers import NotEnclosable, num, to_mpf

_bits = working_bits


@dataclass(frozen=True)
class Atom:
    """`count` outcomes, each with probability p under the first law and q under the second, and loss log(p/q) =
    base + extra: `base` an exact rational (eps0, -eps0(1 + drop)/2: exact from float inputs), `extra` a number, so
    that the loss's distance to an eps is formed without cancellation where base carries it."""

    count: int
    p: Any
    q: Any
    base: Fraction
    extra: Any = 0

    @property
    def loss(self) -> Any:
        return dyadic(self.base) + self.extra

    def above(self, eps: Fraction) -> Any:
        """loss - eps, the exact parts subtracted exactly."""
        return dyadic(self.base - eps) + self.extra


def swapped(atoms: Sequence[Atom]) -> list[Atom]:
    """The pair in the other order (still sorted by loss, largest first)."""
    return [Atom(a.count, a.q, a.p, -a.base, -a.extra) for a in reversed(atoms)]


SERIES_BELOW = 0.5  # |alpha L| below which the Rényi term is summed as a series


def _convex_excess(alpha: Any, loss: Any) -> Any:
    """e^(alpha L) - 1 - alpha (e^L - 1) >= 0. For |alpha L| <= 1/2 the series sum_{n >= 2} (alpha^n - alpha) L^n/n!
    (alpha^n - alpha = alpha expm1((n - 1) log alpha)), cut where (alpha |L|)^n/n! falls 2^-(prec + 20) below the
    first term, the rest bounded by 2 (alpha |L|)^N/N!; else expm1(alpha L) - alpha expm1(L)."""
    N = num()
    with mpmath.workprec(64):
        a, size = to_mpf(alpha), abs(to_mpf(alpha) * to_mpf(loss))
        if not mpmath.isfinite(size):
            raise NotEnclosable("the privacy loss has no finite enclosure at this precision")
        if size > SERIES_BELOW or size == 0:
            return N.expm1(alpha * loss) - alpha * N.expm1(loss) if size else N.mpf(0)
        floor = mpmath.log(a) + mpmath.log(a - 1) + 2 * mpmath.log(size / a) - (_bits() + 21) * mpmath.log(2)
    log_alpha = N.log1p(alpha - 1)
    total, power, n, fact = N.mpf(0), loss * loss, 2, 2
    while True:
        total += alpha * N.expm1((n - 1) * log_alpha) * power / fact
        n, power = n + 1, power * loss
        fact *= n
        with mpmath.workprec(64):
            if n * mpmath.log(size) - mpmath.loggamma(n + 1) < floor:
                break
    return with_error(total, 2 * abs(alpha * loss) ** n / fact)


def _renyi_one(atoms: Sequence[Atom], alpha: Any) -> Any:
    """R_alpha(P || Q) = log(S)/(alpha - 1), S = sum q e^(alpha L). Where S > e (estimated), log S as a log-sum-exp
    (no e^(alpha L) formed: alpha L = 1e300 has no Arb ball); else log1p(sum q (e^(alpha L) - 1 - alpha (e^L - 1))):
    S - 1 with the first-order terms removed (sum q (e^L - 1) = sum p - sum q = 0), every term >= 0 (convexity of
    t^alpha)."""
    N = num()
    with mpmath.workprec(64):
        logs = [mpmath.log(a.count) + mpmath.log(to_mpf(a.q)) + to_mpf(alpha) * to_mpf(a.loss) for a in atoms]
        top = max(logs)
    if top > 1:
        shift = N.mpf(top)
        terms = [N.log(N.mpf(a.count) * a.q) + alpha * a.loss - shift for a in atoms]
        return (shift + N.log(sum((N.exp(t) for t in terms), N.mpf(0)))) / (alpha - 1)
    excess = sum((a.count * a.q * _convex_excess(alpha, a.loss) for a in atoms), N.mpf(0))
    return N.log1p(positive(excess)) / (alpha - 1)


def renyi(atoms: Sequence[Atom], alpha: Any) -> Any:
    """The larger of R_alpha(P || Q) and R_alpha(Q || P)."""
    return larger(_renyi_one(atoms, alpha), _renyi_one(swapped(atoms), alpha))


def _delta_one(atoms: Sequence[Atom], eps: Any) -> Any:
    """sup_S P(S) - e^eps Q(S) = sum max(0, p - e^eps q), each term as -p expm1(eps - L) where L > eps."""
    N = num()
    level, total = fraction(eps), N.mpf(0)
    for a in atoms:
        gap = a.above(level)
        side = sign(gap)
        if side is None or side > 0:
            total += a.count * positive(-a.p * N.expm1(-gap))
    return total


def delta(atoms: Sequence[Atom], eps: Any) -> Any:
    """The tight delta(eps) of the pair: the larger hockey stick of both orders."""
    return larger(_delta_one(atoms, eps), _delta_one(swapped(atoms), eps))


def _epsilon_one(atoms: Sequence[Atom], target: Any) -> Any:
    """The smallest eps >= 0 with sup_S P(S) - e^eps Q(S) <= target: max(0, max_S log((P(S) - target)/Q(S))) over
    the level sets S of the loss (the first j atoms), every one a lower bound and the optimal one among them."""
    N = num()
    best = [N.mpf(0)]
    mass_p = mass_q = N.mpf(0)
    for a in atoms[:-1]:
        mass_p, mass_q = mass_p + a.count * a.p, mass_q + a.count * a.q
        side = sign(mass_p - target)
        if side is None:
            raise NotEnclosable("P(S) = delta is undecided at this precision")
        if side > 0:
            best.append(N.log((mass_p - target) / mass_q))
    return larger(*best)


def epsilon(atoms: Sequence[Atom], target: Any) -> Any:
    """The tight eps(delta) of the pair, both orders (each order's delta(eps) decreases, so the larger of the two)."""
    return larger(_epsilon_one(atoms, target), _epsilon_one(swapped(atoms), target))


def _tradeoff_one(atoms: Sequence[Atom], x: Any) -> Any:
    """T(P, Q)(x): the most powerful test rejects P on the outcomes of smallest loss first, the last one in part;
    beta = Q(outcomes kept whole) + (q/p)(P(rejected through this one) - x), both terms >= 0. Where x lies on a
    boundary no ball can place it beside, the formulas on either side (equal there) are joined."""
    N = num()
    rising = list(reversed(atoms))
    kept = [N.mpf(0)] * (len(rising) + 1)  # kept[i] = Q-mass of rising[i:]
    for i in range(len(rising) - 1, -1, -1):
        kept[i] = kept[i + 1] + rising[i].count * rising[i].q
    ends, rejected = [], N.mpf(0)
    for a in rising:
        rejected = rejected + a.count * a.p
        ends.append(rejected)

    def beta(i: int) -> Any:
        return kept[i + 1] + scaled(ends[i] - x, -rising[i].loss)

    for i in range(len(rising)):
        side = sign(ends[i] - x)
        if side is None:
            return either(lambda i=i: beta(i), lambda i=i: beta(min(i + 1, len(rising) - 1)))
        if side >= 0:
            return beta(i)
    return N.mpf(0)


def tradeoff(atoms: Sequence[Atom], x: Any) -> Any:
    """The trade-off function at type-I error x, the smaller of both orders."""
    return smaller(_tradeoff_one(atoms, x), _tradeoff_one(swapped(atoms), x))
