"""How far an empirical mean of a two-valued f strays from E f: the exact binomial tail behind a sample-size claim
(Thudi et al. 2024, Fact 3.5, a Hoeffding bound on E^l f for f in [1, R]).

f = R with probability pi and 1 otherwise; the mean of `samples` = l draws is 1 + (R - 1) X/l with X ~ Bin(l, pi),
so P(|E^l f - E f| >= t) = P(X >= l (pi + u)) + P(X <= l (pi - u)), u = t/(R - 1). Each tail is a regularized
incomplete beta function (P(X >= k) = I_pi(k, l - k + 1)), evaluated in Arb balls (python-flint's beta_lower), which
is fast and rigorous for any l; the integer cut points are found in exact rational arithmetic from the float inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from verify.errors import ParameterError
from verify.results import Truth
from verify.truth.numbers import Enclosure, NotEnclosable

VALUE_PREC = 128


def _cuts(top: float, prob: float, samples: int, dev: float) -> tuple[int, int]:
    """(k_hi, k_lo): the deviation event is X >= k_hi or X <= k_lo (exact rationals, so no rounding decides it)."""
    u = Fraction(dev) / (Fraction(top) - 1)
    centre = samples * Fraction(prob)
    return math.ceil(centre + samples * u), math.floor(centre - samples * u)


def _tail_ball(top: float, prob: float, samples: int, dev: float) -> arb:
    k_hi, k_lo = _cuts(top, prob, samples, dev)
    p = arb(prob)
    upper = arb(1) if k_hi <= 0 else arb(0) if k_hi > samples else p.beta_lower(k_hi, samples - k_hi + 1, True)
    lower = arb(0) if k_lo < 0 else arb(1) if k_lo >= samples else (1 - p).beta_lower(samples - k_lo, k_lo + 1, True)
    return upper + lower


def mean_deviation_probability(f_top: float, f_prob: float, samples: float, dev: float) -> Truth:
    """P(|E^l f - E f| >= dev) for f in {1, f_top}, P(f = f_top) = f_prob, l = samples draws: exact, Arb-enclosed."""
    if not f_top > 1 or not 0 < f_prob < 1 or not dev > 0 or samples < 1 or samples != int(samples):
        raise ParameterError(f"need f_top > 1, 0 < f_prob < 1, dev > 0 and an integer samples >= 1; got f_top="
                             f"{f_top}, f_prob={f_prob}, samples={samples}, dev={dev}")
    args = (float(f_top), float(f_prob), int(samples), float(dev))

    def enclose(prec: int) -> Enclosure:
        with ctx.workprec(prec):
            ball = _tail_ball(*args)
        if not ball.is_finite():
            raise NotEnclosable(f"binomial tail not enclosed at {prec} bits")
        return Enclosure.of(ball, "regularized incomplete beta in Arb balls", prec)

    with ctx.workprec(VALUE_PREC):
        value = float(_tail_ball(*args).mid())
    return Truth.exact(value, "exact binomial tail, regularized incomplete beta (Arb)", enclose=enclose)
