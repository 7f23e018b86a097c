"""eps(delta) and the trade-off function of a shifted pair on the integers: P the law of X (symmetric about 0), Q the
law of X + shift, whose privacy loss L(y) = log(P(y)/Q(y)) does not increase in y (discrete Laplace, discrete
Gaussian). The pair is its own mirror image (y -> shift - y swaps P and Q), so one order gives both.

The level sets of L are the half-lines {y <= j}; on the eps where {y <= j} is optimal (L(j + 1) <= eps <= L(j)),
delta(eps) = P(X <= j) - e^eps Q(Y <= j), so eps(delta) = log((P(X <= j) - delta)/Q(Y <= j)) there, and every j gives
a lower bound (`finite_pair`'s argument). A float locator names the segment; the exact candidate is then checked
to lie in its segment (a ball on a breakpoint joins its neighbour's candidate, the larger being the truth), walking
to the next segment otherwise. The trade-off function is the Neyman-Pearson test that rejects {y >= m + 1} and the
atom m in part: beta = Q(Y <= m - 1) + e^-L(m) (P(X >= m) - x), both terms >= 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verify.truth.adaptive import either, larger, positive, scaled, sign
from verify.truth.numbers import NotEnclosable, num, to_mpf

MAX_WALK = 64  # segments walked from the locator's guess before giving up (NotEnclosable)


@dataclass(frozen=True)
class Lattice:
    """A shifted pair on the integers. `survival(m)` = P(X >= m), `loss(y)` = L(y) and `delta(eps)` (the tight
    delta(eps), in a form of the family's own that does not cancel) in the active number system; `segment(delta)`
    (the j of the segment holding eps(delta)) and `atom(x)` (the m with P(X >= m + 1) <= x < P(X >= m)) are float
    guesses; `lowest`/`highest` bound the j whose segments are not empty (None: unbounded)."""

    shift: int
    survival: Callable[[int], Any]
    loss: Callable[[int], Any]
    delta: Callable[[Any], Any]
    segment: Callable[[float], int]
    atom: Callable[[float], int]
    lowest: int | None = None
    highest: int | None = None

    def cdf_p(self, j: int) -> Any:
        """P(X <= j) = P(X >= -j)."""
        return self.survival(-j)

    def cdf_q(self, j: int) -> Any:
        """Q(Y <= j) = P(X <= j - shift)."""
        return self.survival(self.shift - j)

    def _clamp(self, j: int) -> int:
        if self.lowest is not None:
            j = max(j, self.lowest)
        return j if self.highest is None else min(j, self.highest)

    def _candidate(self, j: int, target: Any) -> Any | None:
        """log((P(X <= j) - delta)/Q(Y <= j)), or None where P(X <= j) <= delta (no bound from this set)."""
        N = num()
        mass = self.cdf_p(j)
        side = sign(mass - target)
        if side is None:
            raise NotEnclosable("P(X <= j) = delta is undecided at this precision")
        return N.log((mass - target) / self.cdf_q(j)) if side > 0 else None

    def epsilon(self, target: Any, guess: float) -> Any:
        """The smallest eps >= 0 with delta(eps) <= target (`guess`: the target as a float, for the locator)."""
        N = num()
        side = sign(target - self.delta(N.mpf(0)))
        if side is None:
            raise NotEnclosable("delta = delta(0) is undecided at this precision")
        if side >= 0:
            return N.mpf(0)
        j = self._clamp(self.segment(guess))
        for _ in range(MAX_WALK):
            c = self._candidate(j, target)
            if c is None:
                j = self._clamp(j + 1)
                continue
            low, high = sign(c - self.loss(j + 1)), sign(self.loss(j) - c)
            if low == -1 and (self.highest is None or j < self.highest):
                j += 1
                continue
            if high == -1 and (self.lowest is None or j > self.lowest):
                j -= 1
                continue
            near = [c]
            for gap, step in ((low, 1), (high, -1)):
                if gap is None and self._clamp(j + step) == j + step:
                    other = self._candidate(j + step, target)
                    near += [] if other is None else [other]
            return positive(larger(*near))
        raise NotEnclosable(f"no segment of eps(delta) found within {MAX_WALK} steps of the locator's")

    def _beta(self, m: int, x: Any) -> Any:
        return self.cdf_q(m - 1) + scaled(self.survival(m) - x, -self.loss(m))

    def tradeoff(self, x: Any, guess: float) -> Any:
        """T(P, Q)(x) (= T(Q, P)(x) for a mirror-image pair)."""
        m = self.atom(guess)
        for _ in range(MAX_WALK):
            high, low = sign(self.survival(m) - x), sign(x - self.survival(m + 1))
            if high == -1:
                m -= 1
                continue
            if low == -1:
                m += 1
                continue
            if high is None:
                return either(lambda m=m: self._beta(m, x), lambda m=m: self._beta(m - 1, x))
            if low is None:
                return either(lambda m=m: self._beta(m, x), lambda m=m: self._beta(m + 1, x))
            return self._beta(m, x)
        raise NotEnclosable(f"no atom of the trade-off found within {MAX_WALK} steps of the locator's")


def pair_epsilon(pair: Any, delta: Any) -> Any:
    """eps(delta) of a lattice pair (`pair.D` its integer shift, `pair.lattice()` its Lattice): 0 when the laws
    coincide (D = 0), else `Lattice.epsilon`."""
    N = num()
    if pair.D == 0:
        return N.mpf(0)
    return pair.lattice().epsilon(N.mpf(delta), float(to_mpf(N.mpf(delta))))


def pair_tradeoff(pair: Any, x: Any) -> Any:
    """The trade-off function of a lattice pair at type-I error x: 1 - x when the laws coincide, else
    `Lattice.tradeoff`."""
    x = num().mpf(x)
    if pair.D == 0:
        return 1 - x
    return pair.lattice().tradeoff(x, float(to_mpf(x)))
