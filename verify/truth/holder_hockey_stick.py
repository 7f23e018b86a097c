"""The Hölder-relaxed hockey stick of a Gaussian pair (Thudi et al. 2024, Lemma A.1 on the worst-case pair):

    H(eps, p) = sup_S [ P_1(S) - e^eps P_0(S)^(1 - 1/p) ],   P_1 = N(1, sigma^2), P_0 = N(0, sigma^2).

For fixed P_0(S) the largest P_1(S) is a half-line {y > t} (Neyman-Pearson), and the objective grows with P_1(S), so
H is the sup over t of g(t) = Qbar((t - 1)/sigma) - e^eps Qbar(t/sigma)^(1 - 1/p) (Qbar the normal tail); any t gives a
proven lower end (so does S = {}: H >= 0). Upper end: both tails of g are monotone, so on a cell [a, b]
g <= Qbar((a - 1)/sigma) - e^eps Qbar(b/sigma)^(1 - 1/p), and by the mean value theorem g <= g(mid) + sup|g'| (b - a)/2
(the lower of the two); cells are split where it exceeds the lower end (branch and bound, in Arb balls), beyond
t = 1 + 40 sigma g <= Qbar(40) and below t = -40 sigma g <= 1 - e^eps Qbar(-40)^(1-1/p).
Since P_0(S)^(1 - 1/p) >= P_0(S), H is also at most the Gaussian hockey stick delta_G(eps) = Phi(1/(2 sigma) -
eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma) (p -> infinity); the smaller upper end is kept.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr

from verify.errors import ParameterError
from verify.truth.numbers import Enclosure, arb_numbers, num


def _g(t, sigma, eps, p):
    N = num()
    return N.ncdf(-(t - 1) / sigma) - N.exp(eps + _power(p) * N.log(N.ncdf(-t / sigma)))


def _power(p):
    """1 - 1/p as (p - 1)/p: no cancellation for p near 1 (p - 1 is exact for a float p)."""
    return (p - 1) / p


def _slope(t, sigma, eps, p):
    """g'(t) = -phi((t - 1)/sigma)/sigma + e^eps c Qbar(t/sigma)^(c - 1) phi(t/sigma)/sigma, c = 1 - 1/p (on a ball
    t: its range over the ball)."""
    N = num()
    c = _power(p)
    root = (2 * N.pi()).sqrt()
    near = N.exp(-((t - 1) / sigma) ** 2 / 2) / root
    far = N.exp(eps + (c - 1) * N.log(N.ncdf(-t / sigma)) - (t / sigma) ** 2 / 2) / root
    return (c * far - near) / sigma


def _cell_upper(a, b, sigma, eps, p):
    """An upper bound on g over [a, b]: the monotone tails' Qbar((a - 1)/sigma) - e^eps Qbar(b/sigma)^(1 - 1/p)
    (error linear in the width), or by the mean value theorem g((a + b)/2) + sup |g'| (b - a)/2 with g' on the cell's
    ball (error quadratic in the width near the sup, where g' vanishes), whichever is lower."""
    N = num()
    tails = N.ncdf(-(a - 1) / sigma) - N.exp(eps + _power(p) * N.log(N.ncdf(-b / sigma)))
    mid, half = (a + b) / 2, (b - a) / 2
    slope = _slope(a.union(b), sigma, eps, p)
    if not slope.is_finite():
        return tails
    mean_value = _g(mid, sigma, eps, p) + abs(slope).upper() * half
    return mean_value if mean_value.upper() < tails.upper() else tails


def _sup_upper(sigma, eps, p, lower, cells: int = 64, budget: int = 3000, rtol: float = 1e-6):
    """An upper end of sup_t g(t) by best-first branch and bound over [-40 sigma, 1 + 40 sigma] (module docstring):
    a cell is settled once its bound is within rtol of the proven lower end; out of budget, the largest bound left."""
    N = num()
    lo, hi = -40 * sigma, 1 + 40 * sigma
    settled = N.maximum(N.ncdf(N.mpf(-40)), 1 - N.exp(eps + _power(p) * N.log(N.ncdf(N.mpf(40)))))  # the tails
    target = lower * (1 + N.mpf(rtol)) + N.mpf(2) ** -1000
    width = (hi - lo) / cells
    heap: list = []
    order = itertools.count()  # tie-break: never compare balls

    def push(a, b):
        bound = _cell_upper(a, b, sigma, eps, p)
        if bound < target:
            return bound
        heapq.heappush(heap, (-float(bound.upper()), next(order), a, b, bound))
        return None

    for i in range(cells):
        done = push(lo + i * width, lo + (i + 1) * width)
        settled = settled if done is None else N.maximum(settled, done)
    for _ in range(budget):
        if not heap:
            break
        *_, a, b, _bound = heapq.heappop(heap)
        mid = (a + b) / 2
        for half in ((a, mid), (mid, b)):
            done = push(*half)
            settled = settled if done is None else N.maximum(settled, done)
    for *_, bound in heap:
        settled = N.maximum(settled, bound)
    return settled


def _gaussian_hockey_stick(sigma, eps):
    N = num()
    return N.ncdf(1 / (2 * sigma) - eps * sigma) - N.exp(eps) * N.ncdf(-1 / (2 * sigma) - eps * sigma)


_FLAT = 1e300  # -log g where g <= 0 (finite, so that the search's parabolic steps stay finite)


def _maximiser(sigma: float, eps: float, p: float) -> float:
    """A t near the sup of g: the best of 801 points over +-8 sigma around the Gaussian optimum t = 1/2 + eps sigma^2
    (g > 0 can lie off that optimum: at sigma = 2, eps = 0, p = 1.5, g(1/2) < 0 < sup g = 0.0015), refined by a
    bounded float search between its neighbours; the optimum itself where g <= 0 at every point."""
    from scipy.optimize import minimize_scalar  # scipy.optimize costs ~0.3 s at import: not at start-up

    c = _power(p)
    centre = 0.5 + eps * sigma * sigma

    def minus_log_g(t):
        upper, lower = log_ndtr(-(t - 1) / sigma), eps + c * log_ndtr(-t / sigma)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = -(upper + np.log(-np.expm1(lower - upper)))
        return np.where(lower < upper, value, _FLAT)

    ts = centre + sigma * np.linspace(-8.0, 8.0, 801)
    values = minus_log_g(ts)
    k = int(np.argmin(values))
    if not values[k] < _FLAT:
        return centre
    lo, hi = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
    found = minimize_scalar(lambda t: float(minus_log_g(t)), bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-10 * max(1.0, sigma)})
    return float(found.x) if found.fun < values[k] else float(ts[k])


def holder_hockey_stick(sigma: float, eps: float, p_holder: float) -> tuple[float, float, Callable[[int], Enclosure]]:
    """(proven lower end g(t*), upper end delta_G(eps), encloser of both in Arb balls)."""
    if not (math.isfinite(sigma) and sigma > 0):
        raise ParameterError(f"sigma must be a finite number > 0, got {sigma}")
    if not (math.isfinite(eps) and eps >= 0):
        raise ParameterError(f"eps must be a finite number >= 0, got {eps}")
    if not p_holder > 1:
        raise ParameterError(f"the Hölder exponent p must be > 1, got {p_holder}")
    t = _maximiser(sigma, eps, p_holder)
    floor = 128  # bits: raised below until the lower end is resolved (a large sigma or eps makes H a difference of
    # nearly equal normal tails, H ~ 1/sigma next to terms ~ 1, which 128 bits may round to a ball around 0)

    done: dict[int, Enclosure] = {}  # by working precision: the float ends' computation serves the re-check's

    def enclose(prec: int) -> Enclosure:
        prec = max(prec, floor)
        if prec in done:
            return done[prec]
        with arb_numbers(prec) as N:
            s, e, p = N.mpf(sigma), N.mpf(eps), N.mpf(p_holder)
            low = _g(N.mpf(t), s, e, p).lower()
            low = low if low > 0 else N.mpf(0)  # S = {} gives 0
            high = _gaussian_hockey_stick(s, e)
            cells = _sup_upper(s, e, p, low)
            high = cells if cells.upper() < high.upper() else high
            done[prec] = Enclosure(low, high.upper(), f"g at t = {t!r} (a half-line) up to a branch-and-bound "
                                   "bound over half-lines", prec)
            return done[prec]

    ends = enclose(floor)
    while not ends.lower > 0 and floor < 4096:
        with arb_numbers(floor) as N:  # is the maximiser's g positive at all (then more bits resolve it)?
            at_t = _g(N.mpf(t), N.mpf(sigma), N.mpf(eps), N.mpf(p_holder))
        if at_t.upper() <= 0 or at_t.rel_accuracy_bits() > 20:
            break
        floor *= 2
        ends = enclose(floor)
    return float(ends.lower), float(ends.upper), enclose
