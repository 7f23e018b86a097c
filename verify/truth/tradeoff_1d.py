"""The trade-off function (f-DP; Dong, Roth & Su 2022) of two 1-D Gaussian mixtures, from their privacy profile.

T(P, Q)(x) = inf {1 - E_Q phi : E_P phi <= x} is convex, and for every gamma >= 0 and test phi,
E_Q phi - gamma E_P phi <= H_gamma(Q || P), the hockey stick; so T(P, Q)(x) = max(0, sup_gamma g(gamma)) with

    g(gamma) = 1 - H_gamma(Q || P) - gamma x,

with equality by convex duality (Dong, Roth & Su, Prop. 2.12: the privacy profile and the trade-off function are
conjugate). H_gamma is a supremum of affine functions of gamma, so g is concave, g(0) = 0, g <= 1 - gamma x <= 0 for
gamma >= 1/x, and g'(gamma) = P(A_gamma) - x with A_gamma = {q > gamma p}: the maximiser is the Neyman-Pearson test of
size x. Floats find it (bisection on P(A) = x, in eps = log gamma); the rigorous bracket needs no trust in them:
H_gamma is enclosed in Arb at a few points around the float maximiser (verify.truth.hockey_stick_1d.enclose_delta),
any of them bounds the supremum from below, and between consecutive points concavity bounds it from above (the chords
of the neighbouring points, extended, lie above g; H decreasing bounds it too), in exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

from verify.errors import ParameterError
from verify.results import Method, Truth
from verify.truth.hockey_stick_1d import _delta_and_slope, enclose_delta
from verify.truth.mixture import Mixture1D
from verify.truth.numbers import Enclosure, arb_fraction

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None

# log-gamma offsets of the enclosure points from the maximiser, a decade apart near it: a chord through two points
# extended over the next segment multiplies their brackets' widths by the ratio of the spacings (1e-5/1e-7 made a
# 1.2e-12 probe width a 1.2e-10 bracket at type-I error 1 - 1.2e-5, mu = 0.0625)
_OFFSETS = (1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.03, 0.3, 1.5, 4.0)
_LADDER_STEPS = 8  # then points at 8, 16, ... past it (below 1/x): chords steep enough to beat the brackets' widths
_LOWEST_EPS = -700.0  # below this, g <= e^eps (1 - x) is beneath every float: the maximiser search stops
_H_TOL = 1e-12  # relative width asked of each hockey-stick bracket (enclose_delta)
_WIDE = 1e-9  # a probe bracket wider than this (relative to max(1, |g|)) is left out of the concavity bound
_ABS_PAD = 1e-12  # absolute pad of the float value (1 - H - gamma x cancels where T is small) ...
_REL_PAD = 1e-9  # ... and relative (H in floats is good to ~1e-12)


def _g_float(p: Mixture1D, q: Mixture1D, eps: float, type1: float) -> tuple[float, float]:
    """g(e^eps) for T(P, Q) and P(A) for A = {q > e^eps p}, floats."""
    h, slope = _delta_and_slope(q, p, eps)  # H(Q || P), whose slope in eps is -e^eps P(A)
    return 1.0 - h - math.exp(eps + math.log(type1)), -slope * math.exp(-eps)  # e^eps alone overflows past 709


def maximiser(p: Mixture1D, q: Mixture1D, type1: float) -> float:
    """The float eps = log gamma of the Neyman-Pearson test of size `type1` for P against Q (where P(A_gamma) crosses
    `type1`), or _LOWEST_EPS where it lies below (T is 0 to float precision there)."""
    hi = -math.log(type1)  # g <= 0 from here on
    step, lo = 1.0, hi - 1.0
    while _g_float(p, q, lo, type1)[1] < type1:
        if lo <= _LOWEST_EPS:
            return _LOWEST_EPS
        hi, step = lo, 2 * step
        lo = max(lo - step, _LOWEST_EPS)
    for _ in range(200):
        mid = (lo + hi) / 2
        if not lo < mid < hi or hi - lo <= 1e-13 * (1 + abs(mid)):
            break
        if _g_float(p, q, mid, type1)[1] >= type1:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def tradeoff_float(p: Mixture1D, q: Mixture1D, type1: float) -> float:
    """T(P, Q)(type1) in floats: g at the float maximiser (and the ends of its last bracket)."""
    _check_type1(type1)
    return _at_maximiser(p, q, type1, maximiser(p, q, type1))


def _at_maximiser(p: Mixture1D, q: Mixture1D, type1: float, eps: float) -> float:
    if eps <= _LOWEST_EPS:
        return 0.0
    return max(0.0, *(_g_float(p, q, e, type1)[0] for e in (eps, math.nextafter(eps, -math.inf),
                                                             math.nextafter(eps, math.inf))))


def _point(p: Mixture1D, q: Mixture1D, eps: float, type1: Fraction, prec: int,
           weight_error: float) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """(y, l, u, m) at the exact point y = the lower end of the ball of e^eps: l <= g(y) <= u, and m <= H(gamma) for
    every gamma <= e^eps. H is enclosed at e^eps (enclose_delta's own ball) and moved to y: H decreases with slope
    -P(A) >= -1, so H(e^eps) <= H(y) <= H(e^eps) + (e^eps - y)."""
    prec += max(0, math.ceil(eps / math.log(2))) + 64  # the ball of e^eps narrow in absolute terms, however large
    lo, hi = enclose_delta(q, p, eps, prec, rel_tol=_H_TOL, weight_error=weight_error)
    with ctx.workprec(prec):
        ball = arb(eps).exp()
        y, width = arb_fraction(ball.lower()), arb_fraction(ball.upper()) - arb_fraction(ball.lower())
    h_lo, h_hi = arb_fraction(lo), arb_fraction(hi)
    return y, 1 - h_hi - width - y * type1, 1 - h_lo - y * type1, h_lo


def _segment_max(a: Fraction, b: Fraction, lines: list[tuple[Fraction, Fraction, Fraction]]) -> Fraction:
    """max over gamma in [a, b] of the minimum of the lines v + k (gamma - g0) (each a (v, k, g0)): that minimum is
    concave, so its maximum is at an end or where two lines cross (every crossing inside [a, b] is tried)."""
    def at(x: Fraction) -> Fraction:
        return min(v + k * (x - g0) for v, k, g0 in lines)
    candidates = [a, b]
    for i, (v1, k1, g1) in enumerate(lines):
        for v2, k2, g2 in lines[i + 1:]:
            if k1 != k2:
                x = (v2 - v1 + k1 * g1 - k2 * g2) / (k1 - k2)
                if a < x < b:
                    candidates.append(x)
    return max(at(x) for x in candidates)


def enclose_order(p: Mixture1D, q: Mixture1D, type1: float, prec: int = 128, weight_error: float = 0.0,
                  best: float | None = None) -> tuple[Fraction, Fraction]:
    """Proven lower <= T(P, Q)(type1) <= upper, exact rationals (module docstring). `best`: the float maximiser where
    the caller has it (any float is sound: it only places the points)."""
    _check_type1(type1)
    x = Fraction(type1)
    top = -math.log(type1)
    best = maximiser(p, q, type1) if best is None else best
    offsets = sorted({-d for d in _OFFSETS} | set(_OFFSETS))
    ladder = [best + _OFFSETS[-1] * 2**k for k in range(1, _LADDER_STEPS + 1)]
    eps = sorted({e for e in {best + d for d in offsets} | set(ladder) if e < top} | {math.nextafter(top, math.inf)})
    probes = [_point(p, q, e, x, prec, weight_error) for e in eps]
    lower = max([Fraction(0), *(low for _, low, _, _ in probes)])
    # g(0) = 0 exactly (H_0 = 1); a probe whose bracket is wide (H near a kink: laws almost equal at eps near 0) would
    # only loosen its neighbours' chords, and is left out of the upper bound (but for the last, which bounds the tail)
    points = [(Fraction(0), Fraction(0), Fraction(0), Fraction(1))]
    points += [pt for pt in probes[:-1] if pt[2] - pt[1] <= _WIDE * max(1, abs(pt[2]))] + probes[-1:]
    upper = Fraction(0)
    for i in range(len(points)):
        (a, _, _, _) = points[i]
        if i + 1 < len(points):
            b, h_b = points[i + 1][0], points[i + 1][3]
            lines = [(1 - h_b - a * x, Fraction(0), a)]  # H(gamma) >= H(b) >= h_b and gamma x >= a x on [a, b]
        else:  # the tail [y_last, 1/x]: H >= 0, and g <= 0 beyond 1/x
            b = 1 / x
            if a >= b:
                break
            lines = [(1 - a * x, -x, a)]
        if i >= 1:  # the chord of (y_{i-1}, y_i) extended past y_i lies above the concave g
            (y0, l0, _, _), (y1, _, u1, _) = points[i - 1], points[i]
            lines.append((u1, (u1 - l0) / (y1 - y0), y1))
        if i + 2 < len(points):  # the chord of (y_{i+1}, y_{i+2}) extended before y_{i+1}
            (y1, _, u1, _), (y2, l2, _, _) = points[i + 1], points[i + 2]
            lines.append((u1, (l2 - u1) / (y2 - y1), y1))
        upper = max(upper, _segment_max(a, b, lines))
    return lower, upper


def _check_type1(type1: float) -> None:
    if not (isinstance(type1, float) and 0 < type1 < 1):
        raise ParameterError(f"type-I error must lie in (0, 1), got {type1!r}")


def _as_arb(x: Fraction, up: bool) -> arb:
    """An exact rational as an Arb number of radius 0 rounded outward (down for a lower end, up for an upper)."""
    value = float(x)
    if (Fraction(value) < x) if up else (Fraction(value) > x):
        value = math.nextafter(value, math.inf if up else -math.inf)
    return arb(value)


def tradeoff_truth(p: Mixture1D, q: Mixture1D, type1: float, what: str, weight_error: float = 0.0) -> Truth:
    """min(T(P, Q), T(Q, P)) at type1 (f-DP of a pair of neighbouring datasets, both orders): the float value padded
    by _REL_PAD relative and _ABS_PAD absolute, with both orders' rational brackets as its enclosure."""
    type1 = float(type1)
    _check_type1(type1)
    orders = [(s, t, maximiser(s, t, type1)) for s, t in ((p, q), (q, p))]
    value = min(_at_maximiser(s, t, type1, best) for s, t, best in orders)
    pad = _REL_PAD * value + _ABS_PAD

    def enclose(prec: int) -> Enclosure:
        (a_lo, a_hi), (b_lo, b_hi) = (enclose_order(s, t, type1, prec, weight_error, best) for s, t, best in orders)
        return Enclosure(_as_arb(min(a_lo, b_lo), up=False), _as_arb(min(a_hi, b_hi), up=True),
                         "trade-off from the hockey stick bracketed in Arb at points around the Neyman-Pearson "
                         "threshold, concavity between them, both orders", prec)

    return Truth(value, max(value - pad, 0.0), min(value + pad, 1.0), Method.EXACT, what, enclose=enclose)
