"""Tight (eps, delta) of the Poisson-subsampled Gaussian mechanism (sensitivity 1, add/remove neighbours).

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2). The privacy loss
log P/Q (x) = log(1 - q + q exp((2x - 1)/(2 s^2))) is increasing in x, so each hockey-stick divergence
delta(eps) = sup_S P(S) - e^eps Q(S) is attained on a half line and has a closed form in Phi.
"""

from __future__ import annotations

import math

import mpmath

from verify.errors import ParameterError
from verify.truth.numbers import NotEnclosable, decreasing_root, enclose_decreasing_root, num, to_mpf


def sgm_delta(eps, q, sigma) -> mpmath.mpf:
    """max over both orders of sup_S P(S) - e^eps Q(S), in the active number system."""
    (d_pq, _), (d_qp, _) = _orders(eps, q, sigma)
    return num().maximum(d_pq, d_qp, num().mpf(0))


def _orders(eps, q, sigma) -> tuple[tuple, tuple]:
    """(delta, d delta / d eps) of each order, P || Q and Q || P; the slope is -e^eps times the mass of the optimal
    set under the second law (envelope theorem)."""
    N = num()
    eps, q, s = N.mpf(eps), N.mpf(q), N.mpf(sigma)
    e = N.exp(eps)
    half = N.mpf(1) / 2
    # P || Q: the set {log P/Q > eps} = {x > x_hi}
    above = _decided(e - (1 - q), "e^eps - (1 - q)")
    if above > 0:
        x_hi = s**2 * N.log((e - (1 - q)) / q) + half
        q_mass = N.ncdf(-x_hi / s)
        pq = ((1 - q) * q_mass + q * N.ncdf(-(x_hi - 1) / s) - e * q_mass, -e * q_mass)
    else:
        pq = (1 - e, -e)  # every x has loss > eps
    # Q || P: the set {log Q/P > eps} = {x < x_lo}, non-empty only when e^-eps > 1 - q
    if _decided(1 / e - (1 - q), "e^-eps - (1 - q)") > 0:
        x_lo = s**2 * N.log((1 / e - (1 - q)) / q) + half
        p_mass = (1 - q) * N.ncdf(x_lo / s) + q * N.ncdf((x_lo - 1) / s)
        qp = (N.ncdf(x_lo / s) - e * p_mass, -e * p_mass)
    else:
        qp = (N.mpf(0), N.mpf(0))
    return pq, qp


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
    if one_sided:
        return decreasing_root(lambda e: _orders(e, q, sigma)[0], delta, floor=floor)
    return decreasing_root(lambda e: max(_orders(e, q, sigma)), delta, floor=floor)


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
        return (1 - q) * N.ncdf(t / s) + q * N.ncdf((t - 1) / s)

    t_q = s * N.ncdf_inv(1 - x)
    q_order = p_below(t_q)
    if N.rigorous:
        floor = -float(to_mpf(s)) * 60 - 1.0  # p_below(floor) < x for every x the families allow
        t_p = enclose_decreasing_root(lambda t: -p_below(t), -x, lambda: _p_root(to_mpf(x), to_mpf(q), to_mpf(s)),
                                      floor)
    else:
        t_p = _p_root(x, q, s)
    p_order = 1 - N.ncdf(t_p / s)
    return N.maximum(N.mpf(0), N.minimum(q_order, p_order))


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
