"""Tight (eps, delta) of the Poisson-subsampled Gaussian mechanism (sensitivity 1, add/remove neighbours).

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2). The privacy loss
log P/Q (x) = log(1 - q + q exp((2x - 1)/(2 s^2))) is increasing in x, so each hockey-stick divergence
delta(eps) = sup_S P(S) - e^eps Q(S) is attained on a half line and has a closed form in Phi.
"""

from __future__ import annotations

import math

import mpmath
from flint import arb, ctx
from scipy.special import log_ndtr

from verify.errors import ParameterError
from verify.truth.numbers import (
    NotEnclosable,
    decreasing_root,
    enclose_decreasing_root,
    extra_precision,
    float_root,
    normal_cdf,
    num,
    to_mpf,
)


def sgm_delta(eps, q, sigma) -> mpmath.mpf:
    """max over both orders of sup_S P(S) - e^eps Q(S), in the active number system."""
    (d_pq, _), (d_qp, _) = _orders(eps, q, sigma)
    return num().maximum(d_pq, d_qp, num().mpf(0))


def _phi_band(lo, width):
    """Phi(lo + width) - Phi(lo) for width > 0, without the cancellation of two nearly equal Phi values (a band of
    width 1/sigma at sigma large, or far in a tail): the tail side of the band, with the digits the subtraction loses
    added (mpmath). In Arb the ball of lo and the band move together, which a difference of two Phi balls would not
    know: a narrow band is width * phi over the hull of [lo, lo + width] (mean value theorem); otherwise the band at the
    exact midpoint of lo, widened by the radius of lo times |phi(lo + width) - phi(lo)| (the band's derivative)."""
    N = num()
    if N.rigorous:
        lo = N.mpf(lo)
        if width * (1 + abs(lo)) < N.mpf(2) ** (-ctx.prec // 2):
            hull = lo.union(lo + width)
            return width * N.exp(-hull**2 / 2) / N.sqrt(2 * N.pi())
        mid = lo.mid()
        with extra_precision(max(0, -int(mpmath.mag(to_mpf(width)))) + 10):
            at_mid = (normal_cdf(-mid) - normal_cdf(-mid - width) if mid + width / 2 > 0
                      else normal_cdf(mid + width) - normal_cdf(mid))
        slope = (N.exp(-(lo + width) ** 2 / 2) - N.exp(-lo**2 / 2)) / N.sqrt(2 * N.pi())
        return at_mid + arb(0, lo.rad()) * abs(slope)
    spread = mpmath.mpf(width) * max(1, abs(lo))
    with extra_precision(max(0, -mpmath.mag(spread)) + 10):
        if lo + width / 2 > 0:
            band = normal_cdf(-lo) - normal_cdf(-lo - width)
        else:
            band = normal_cdf(lo + width) - normal_cdf(lo)
    return +band


def _orders(eps, q, sigma) -> tuple[tuple, tuple]:
    """(delta, d delta / d eps) of each order, P || Q and Q || P; the slope is -e^eps times the mass of the optimal
    set under the second law (envelope theorem). In mpmath, a delta far below the terms it is the difference of
    (a hockey stick deep in its tail) is recomputed with the digits that difference cancels added."""
    if num().rigorous:
        return _orders_at(eps, q, sigma)[:2]
    base = mpmath.mp.dps
    pq, qp, lost = _orders_at(eps, q, sigma)
    extra = 0
    while lost > extra + 5 and extra < 4000:  # the loss measured from a garbled value can be too small: again
        extra = lost + 20
        with mpmath.workdps(base + extra):
            pq, qp, lost = _orders_at(eps, q, sigma)
    return tuple(+v for v in pq), tuple(+v for v in qp)


def _lost_digits(value, at, *terms) -> int:
    """Digits a difference of `terms` equal to `value` loses, plus those a normal tail at argument `at` loses to the
    rounding of its argument (relative error at^2 10^-dps)."""
    size = max(abs(t) for t in terms)
    tail = 2 * max(0, int(mpmath.log10(max(1, abs(at))))) + 1
    if size == 0:
        return tail
    if value == 0:
        return mpmath.mp.dps + tail
    return max(0, int(mpmath.log10(size / abs(value)))) + tail


def _orders_at(eps, q, sigma) -> tuple[tuple, tuple, int]:
    """`_orders` at the working precision, and the digits lost in the final differences (0 in Arb).

    Every difference of nearly equal quantities is written out: e^eps - (1 - q) = expm1(eps) + q and
    e^-eps - (1 - q) = expm1(-eps) + q (no rounding of e^eps to 1 at eps tiny), the thresholds through
    log1p(expm1(+-eps)/q), and P(S) - e^eps Q(S) = q (Phi band of width 1/s) - expm1(eps) Q(S) (P || Q),
    e^eps [q (Phi band) + expm1(-eps) Phi(x_lo/s)] (Q || P)."""
    N = num()
    eps, q, s = N.mpf(eps), N.mpf(q), N.mpf(sigma)
    e, grow, shrink = N.exp(eps), N.expm1(eps), N.expm1(-eps)
    half = N.mpf(1) / 2
    lost = 0
    # P || Q: the set {log P/Q > eps} = {x > x_hi}
    above = _decided(grow + q, "e^eps - (1 - q)")
    if above > 0:
        x_hi = s**2 * N.log1p(grow / q) + half
        q_mass = normal_cdf(-x_hi / s)
        band = q * _phi_band(-x_hi / s, 1 / s)  # q (Phi((1 - x_hi)/s) - Phi(-x_hi/s))
        excess = grow * q_mass
        pq = (band - excess, -e * q_mass)
        lost = 0 if N.rigorous else _lost_digits(pq[0], x_hi / s, band, excess)
    else:
        pq = (-grow, -e)  # every x has loss > eps
    # Q || P: the set {log Q/P > eps} = {x < x_lo}, non-empty only when e^-eps > 1 - q
    if _decided(shrink + q, "e^-eps - (1 - q)") > 0:
        x_lo = s**2 * N.log1p(shrink / q) + half
        at = normal_cdf(x_lo / s)
        band = q * _phi_band(x_lo / s - 1 / s, 1 / s)  # q (Phi(x_lo/s) - Phi((x_lo - 1)/s))
        p_mass = at - band  # (1 - q) Phi(x_lo/s) + q Phi((x_lo - 1)/s)
        qp = (e * (band + shrink * at), -e * p_mass)
        lost = lost if N.rigorous else max(lost, _lost_digits(qp[0], x_lo / s, e * band, e * shrink * at))
    else:
        qp = (N.mpf(0), N.mpf(0))
    return pq, qp, lost


def _decided(x, what: str) -> int:
    sign = num().sign(x)
    if sign is None:
        raise NotEnclosable(f"the sign of {what} is undecided on an Arb ball")
    return sign


def sgm_delta_add(eps, q, sigma) -> mpmath.mpf:
    """sup_S P(S) - e^eps Q(S) for P || Q alone: the record added (P) against removed (Q)."""
    (d_pq, _), _ = _orders(eps, q, sigma)
    return num().maximum(d_pq, num().mpf(0))


def sgm_dp_epsilon(delta, q, sigma, one_sided: bool = False, signed: bool = False) -> mpmath.mpf:
    """Smallest eps >= 0 with sgm_delta(eps) <= delta (verify.truth.numbers.decreasing_root, the slope of the larger
    order; in Arb numbers: a rigorous bracket around that root, delta(eps) being non-increasing). `one_sided`: the
    P || Q order only (sgm_delta_add), the direction of a claim P(M(D u x*) in S) <= e^eps P(M(D) in S) + delta.
    `signed`: the smallest real eps, negative where delta exceeds delta(0) (the total variation); it is at least
    log(1 - delta), since every hockey stick is >= 1 - e^eps."""
    if num().rigorous:
        delta_of = sgm_delta_add if one_sided else sgm_delta
        floor = float(mpmath.log1p(-to_mpf(delta))) if signed else 0.0  # rounding only makes the floor looser
        floor = math.nextafter(floor, -math.inf) if signed else floor
        return enclose_decreasing_root(lambda e: _signed(delta_of, e, q, sigma, signed), delta,
                                       lambda: sgm_dp_epsilon(to_mpf(delta), to_mpf(q), to_mpf(sigma), one_sided,
                                                              signed), floor)
    delta = mpmath.mpf(delta)
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {float(delta)}")
    if not 0 < q <= 1:
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {float(q)}")
    floor = mpmath.log1p(-delta) if signed else 0
    guess = _float_root(delta, q, sigma, one_sided, float(floor))
    if one_sided:
        return decreasing_root(lambda e: _orders(e, q, sigma)[0], delta, floor=floor, guess=guess)
    return decreasing_root(lambda e: max(_orders(e, q, sigma)), delta, floor=floor, guess=guess)


def _float_log_delta(eps: float, q: float, s: float, one_sided: bool) -> float:
    """log sgm_delta(eps) (log sgm_delta_add if one_sided) in floats, by log_ndtr (no underflow in the tails);
    -inf where it rounds to <= 0. With r = log1p(expm1(eps)/q) and x_hi = s^2 r + 1/2 (`_orders_at`), P || Q is
    q Phi(A) (1 - e^(r + log Phi(B) - log Phi(A))), A = (1 - x_hi)/s, B = -x_hi/s; with r' = log1p(expm1(-eps)/q),
    C = x_lo/s, Q || P is e^eps q Phi(C - 1/s) (e^(r' + log Phi(C) - log Phi(C - 1/s)) - 1)."""
    grow = math.expm1(eps)
    if grow + q > 0:
        r = math.log1p(grow / q)
        x_hi = s * s * r + 0.5
        log_a = float(log_ndtr((1 - x_hi) / s))
        u = r + float(log_ndtr(-x_hi / s)) - log_a
        pq = math.log(q) + log_a + math.log(-math.expm1(u)) if u < 0 else -math.inf
    else:
        pq = math.log(-grow)
    shrink = math.expm1(-eps)
    if one_sided or not shrink + q > 0:
        return pq
    r = math.log1p(shrink / q)
    c = (s * s * r + 0.5) / s
    log_band = float(log_ndtr(c - 1 / s))
    v = r + float(log_ndtr(c)) - log_band
    return max(pq, eps + math.log(q) + log_band + math.log(math.expm1(v)) if v > 0 else -math.inf)


def _float_root(delta: mpmath.mpf, q, sigma, one_sided: bool, floor: float) -> float | None:
    """sgm_dp_epsilon in double precision (numbers.float_root on log delta from `floor`), decreasing_root's first
    guess; None where it cannot be formed. Both orders are at most q times the Gaussian mechanism's delta (joint
    convexity), which is below delta at eps = 1/(2 s^2) + z/s, z = sqrt(-2 log delta)."""
    q, s, log_target = float(q), float(sigma), float(mpmath.log(delta))
    if not s > 0:
        return None
    hi = 1 / (2 * s * s) + math.sqrt(-2 * log_target) / s
    return float_root(lambda e: _float_log_delta(e, q, s, one_sided) - log_target, floor, hi)


def _signed(delta_of, eps, q, sigma, signed: bool):
    """delta_of(eps) without its floor at 0 where eps may be negative (there the hockey stick is >= 1 - e^eps > 0)."""
    if not signed:
        return delta_of(eps, q, sigma)
    (d_pq, _), (d_qp, _) = _orders(eps, q, sigma)
    return d_pq if delta_of is sgm_delta_add else num().maximum(d_pq, d_qp)


def sgm_tradeoff(x, q, sigma) -> mpmath.mpf:
    """min over both orders of the trade-off function at type-I error x (0 < x < 1). The likelihood ratio is monotone
    in the output y, so both optimal tests are half-lines: T(Q || P)(x) rejects Q = N(0, s^2) for y > s Phi^-1(1 - x)
    and pays P(y <= t); T(P || Q)(x) rejects P for y < t with P(y < t) = x (a root) and pays Q(y >= t)."""
    N = num()
    q, s, x = N.mpf(q), N.mpf(sigma), N.mpf(x)

    def p_below(t):
        return (1 - q) * normal_cdf(t / s) + q * normal_cdf((t - 1) / s)

    t_q = s * _upper_quantile(x)
    q_order = p_below(t_q)
    if N.rigorous:
        floor = -float(to_mpf(s)) * 60 - 1.0  # p_below(floor) < x for every x the families allow
        t_p = enclose_decreasing_root(lambda t: -p_below(t), -x, lambda: _p_root(to_mpf(x), to_mpf(q), to_mpf(s)),
                                      floor)
    else:
        t_p = _p_root(x, q, s)
    p_order = normal_cdf(-t_p / s)  # 1 - Phi(t_p/s), as the tail itself
    return N.maximum(N.mpf(0), N.minimum(q_order, p_order))


def _upper_quantile(x):
    """Phi^-1(1 - x) without forming 1 - x (which rounds to 1 for a tiny type-I error x): sqrt(2) erfcinv(2 x) in
    Arb; in mpmath sqrt(2) erfinv(1 - 2 x) with the digits of x that 1 - 2 x needs added."""
    N = num()
    if N.rigorous:
        return N.sqrt(N.mpf(2)) * (2 * N.mpf(x)).erfcinv()
    with extra_precision(max(0, -mpmath.mag(x)) + 10):
        value = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(x))
    return +value


def _p_root(x, q, s) -> mpmath.mpf:
    """t with (1 - q) Phi(t/s) + q Phi((t - 1)/s) = x, by bisection (the left side increases)."""
    lo, hi = -60 * s - 1, 60 * s + 1
    for _ in range(4 * mpmath.mp.prec):
        mid = (lo + hi) / 2
        if (1 - q) * mpmath.ncdf(mid / s) + q * mpmath.ncdf((mid - 1) / s) < x:
            lo = mid
        else:
            hi = mid
        if hi - lo <= mpmath.mpf(2) ** (8 - mpmath.mp.prec) * max(1, abs(hi)):
            break
    return hi
