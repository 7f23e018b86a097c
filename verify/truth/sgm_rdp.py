"""Fast Rényi divergences of the Poisson-subsampled Gaussian mechanism at many orders, both orders of the pair, at
every scale of q, sigma and alpha (issue 21: never NaN, +inf only beyond the float range).

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2) (sensitivity 1, add/remove). With u = (2x - 1)/(2 s^2), the log
ratio l(x) = log(P/Q)(x) = log(1 - q + q e^u) is taken as log1p(q expm1(u)) where that has no cancellation and as
logaddexp(log(1-q), log q + u) elsewhere (q near 1, u < 0); u is clipped far beyond where it could matter, so that
nothing overflows. With f_a(l) = e^(a l) - a e^l + a - 1 >= 0 (verify.truth.excess), b = a - 1, A = a/(2 s^2) and
M = a b/(2 s^2) (= log E_Q[e^(a u)]):

- R_a(P||Q) = log1p(J)/b, J = E_Q[(P/Q)^a] - 1. At integer a (up to 10^6), J = sum_{k>=2} C(a,k) (1-q)^(a-k) q^k
  expm1((k^2 - k)/(2 s^2)) (Mironov, Talwar & Zhang 2019, Sec. 3.3, the k = 0, 1 terms, which sum with the rest to
  1, removed: every term is positive), summed in log space with e^M factored out (R = A + (log J - M)/b where
  log J itself would overflow); log C(a, k) is summed term by term in extended precision (lgamma differences lose
  ~1e-11 at a = 10^4). The error reported is the rounding of the summed logarithms.
- Closed-form brackets, used wherever they are tighter than 1e-14 relative (sigma small against alpha, or alpha
  large): q^a e^M <= E_Q[(P/Q)^a] <= q^a e^M (1 + r' e^-u1)^a + e^(a u1) (r' = (1-q)/q, u1 = b/(4 s^2); split at
  u = u1), i.e. A + a log(q)/b <= R_a(P||Q) <= A + logaddexp(a log(q + (1-q) e^-u1), -M/2)/b; and
  -log(1-q) >= R_a(Q||P) >= -log(1-q) - log1p(r e^u1) + log Phi(1/(2 s) + s u1)/b (r = q/(1-q), any u1: P >= (1-q) Q,
  and (P/Q)^(1-a) >= (1-q)^(1-a) (1 + r e^u1)^(1-a) where u <= u1). Elsewhere they still bound the quadrature's
  interval, and they seed its scale.
- At fractional a (and R_a(Q||P) = log1p(J')/b, J' = int P f_a(-l), at every a) outside the brackets: adaptive
  composite Gauss-Legendre (20 nodes, error = gap to the 16-node rule on the same panel), panels at most three noise
  widths long and, within s^2-scale of the bend x0 = 1/2 + s^2 log((1-q)/q) of l, at most twice their distance from
  it (l's singularities lie pi s^2 off the real axis there). Panels start on a grid over the features (0, 1, the
  tilt a or the peak of the log-concave Q^a P^(1-a) in [1 - a, 0], x0), geometric out to a range whose Gaussian
  tails are below e^-400 of J; a panel whose upper bound (sup of Q or P times f_a at its ends, or the Gaussian
  envelopes (1-q)^a Q, q^a Q e^(a u) of the integrand) is below 1e-20 of the running total is dropped and its bound
  added to the error; a panel whose error is above 1e-15 of the total is halved. Right of the bend the logarithms
  of the bumps are formed from (x - a)^2 or (x - 1)^2, not as differences of numbers of size x^2/s^2. The error
  reported is 10 x the quadrature gaps plus the dropped bounds plus rounding (eps times the size of the summed
  logarithms), carried through log1p(J)/b; no memory is allocated that the cap (verify.limits) has not allowed.
A value above the float range is +inf (its lower end the largest float in `sgm_renyi_truth`); nothing is NaN.
Values agree with 50-digit references to ~1e-14 relative (tests/truth/test_sgm_rdp.py, tests/truth/test_sgm_edges.py).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

from verify.errors import ParameterError
from verify.limits import check_deadline, require_memory
from verify.results import Method, Truth
from verify.truth.excess import log_excess
from verify.truth.mixture import sgm_binomial_enclosure
from verify.truth.mixture_arb import enclose_renyi_mixture
from verify.truth.numbers import Enclosure

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None

_NODES, _CHECK = 20, 16  # Gauss-Legendre nodes per panel; the error estimate is the gap to 16 on the same panels
_GL = {k: np.polynomial.legendre.leggauss(k) for k in (_NODES, _CHECK)}
_PANEL = 3.0  # panel width in noise widths (the integrands are entire there; 16 nodes resolve a Gaussian of width 1)
_TAIL_LOG = 400.0  # the range leaves Gaussian tails below e^-400 (times J's smallness in q and s)
_LOG_TOL = math.log(1e-15)  # a panel is accepted when its error estimate is below this fraction of the total
_LOG_DROP = math.log(1e-20)  # a panel is dropped when its upper bound is below this fraction of the total
_SAFETY = 10.0  # multiple of the quadrature gap reported as error
_MAX_ROUNDS = 400  # halvings: the float spacing stops them long before
_EPS = 2.0**-52
_SERIES_MAX = 1_000_000  # integer orders up to this use the binomial series (arrays of a + 1 terms)
_GROUP = 256  # orders integrated together on shared panels
_CORE_PANELS = 512  # the features' neighbourhood starts as one uniform grid up to this many panels
_MAX_PIECES = 16  # a panel too long for the rules is cut into at most this many per round
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_WIDE = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else np.float64


@dataclass(frozen=True)
class SgmRdp:
    """R_a of the sampled Gaussian at `orders`: `pq` = R(P||Q), `qp` = R(Q||P), and error estimates of each."""

    orders: np.ndarray
    pq: np.ndarray
    qp: np.ndarray
    pq_err: np.ndarray
    qp_err: np.ndarray
    pq_how: tuple[str, ...] = ()  # per order: "series", "bracket" (closed form) or "quadrature"; () if not recorded
    qp_how: tuple[str, ...] = ()

    @property
    def rdp(self) -> np.ndarray:
        """The RDP curve of one step: the larger of the two orders of the pair."""
        return np.maximum(self.pq, self.qp)


def _divergence(rest: np.ndarray, big_m: np.ndarray, big_a: np.ndarray, beta: np.ndarray,
                rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log1p(J)/b from log J = M + L (L = `rest`) and its error, from a relative error `rel` of J (an absolute one of
    L): where M + L overflows (M beyond the float range) the value is A + L/b, A = M/b."""
    log_j = big_m + rest
    finite = np.isfinite(log_j) | (log_j == -np.inf)
    direct = np.logaddexp(0.0, log_j) / beta
    factored = big_a + rest / beta
    value = np.where(finite, direct, factored)
    err = np.where(finite, _error(rel + 4 * _EPS * (np.abs(big_m) + np.abs(rest)), log_j, beta),
                   (rel + 4 * _EPS * np.abs(rest)) / beta + 4 * _EPS * np.abs(big_a))
    return value, err + 4 * _EPS * np.abs(value)


def _log_binomials(orders: np.ndarray, top: int) -> np.ndarray:
    """log C(a, k) for every a in `orders` (rows) and k = 0..top (columns; -inf beyond a), summed as
    log((a - j + 1)/j) in extended precision: lgamma differences lose ~1e-11 at a = 10^4."""
    a = orders.astype(_WIDE)[:, None]
    j = np.arange(1, top + 1, dtype=_WIDE)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.where(j <= a, np.log(np.maximum(a - j + 1, 1)) - np.log(j), 0.0)
    out = np.concatenate([np.zeros((orders.size, 1), dtype=_WIDE), np.cumsum(steps, axis=1)], axis=1).astype(float)
    return np.where(np.arange(top + 1)[None, :] <= orders[:, None], out, -np.inf)


def _integer_pq(q: float, sigma: float, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R_a(P||Q) at integer orders (one array) by the positive-term binomial series, and its rounding error."""
    top = int(orders.max())
    require_memory(8.0 * 16 * orders.size * (top + 1), "the sampled-Gaussian binomial series")
    a = orders[:, None]
    k = np.arange(top + 1, dtype=float)[None, :]
    big_a = orders / (2 * sigma) / sigma
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        big_m = (orders - 1) * big_a
        y = (k * k - k) / (2 * sigma) / sigma  # the exponent of expm1, in [1/s^2, M]
        shift = (k - a) * (k + a - 1) / (2 * sigma) / sigma  # y - M <= 0, without forming M
        parts = [_log_binomials(orders, top), (a - k) * math.log1p(-q), k * math.log(q), shift,
                 np.log(-np.expm1(-y))]
        valid = (k >= 2) & (k <= a)
        terms = np.where(valid, sum(parts), -np.inf)
        rest = _lse(terms, axis=1)  # log J - M
        size = sum(np.abs(np.where(valid & np.isfinite(p), p, 0.0)) for p in parts) + 1
        rel = 8 * _EPS * np.exp(_lse(terms + np.log(size), axis=1) - rest)
        rel = np.where(np.isfinite(rest), rel, 0.0)
    return _divergence(rest, big_m, big_a, orders - 1, rel)


def _error(rel: float | np.ndarray, log_j: float | np.ndarray, beta: float | np.ndarray) -> np.ndarray:
    """The error of log1p(J)/b from a relative error `rel` of J: rel J/((1 + J) b)."""
    with np.errstate(over="ignore", invalid="ignore"):
        frac = np.exp(log_j - np.logaddexp(0.0, log_j))
        return np.where(np.isfinite(rel), rel * frac / beta, math.inf)


def _ell(q: float, sigma: float, x: np.ndarray, clip: float) -> np.ndarray:
    """l(x) = log(1 - q + q e^u), u = (x - 1/2)/s^2 clipped to +-clip, without overflow or cancellation."""
    with np.errstate(over="ignore"):
        u = np.clip((x - 0.5) / sigma / sigma, -clip, clip)
        t = q * np.expm1(np.minimum(u, 700.0))
        direct = np.log1p(np.maximum(t, -0.5))
    other = np.logaddexp(math.log1p(-q), math.log(q) + u)
    return np.where((u < 700) & (t > -0.5), direct, other)


def _qp_peak(q: float, sigma: float, a: float) -> float:
    """The peak of the log-concave Q^a P^(1-a), in [1 - a, 0] (to within a noise width): the root of the decreasing
    -x + (1 - a) expit(u(x) + log(q/(1-q)))."""
    lo, hi = 1.0 - a, 0.0
    shift = math.log(q) - math.log1p(-q)
    for _ in range(100):
        mid = (lo + hi) / 2
        if hi - lo <= sigma or not lo < mid < hi:
            break
        z = (mid - 0.5) / sigma / sigma + shift  # may be +-inf
        weight = 0.0 if z < -700 else 1.0 if z > 700 else 1 / (1 + math.exp(-z))
        if -mid + (1 - a) * weight > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _log_f(ell: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log f_a(l) (verify.truth.excess), with f_a(l) = a b l^2/2 (1 + O(a l)) where f_a(l) < 1e-300: there the
    series underflows (a jump from -inf that no quadrature rule resolves), and a |l| < 1e-150 makes the leading term
    exact to float precision."""
    log_f, _ = log_excess(ell, a)
    small = (log_f < -690) & (ell != 0)
    if small.any():
        with np.errstate(divide="ignore"):
            approx = np.log(a) + np.log(a - 1) - math.log(2) + 2 * np.log(np.abs(np.where(small, ell, 1.0)))
        log_f = np.where(small, approx, log_f)
    return log_f


def _distance(c: np.ndarray, d: np.ndarray, m: float | np.ndarray) -> np.ndarray:
    """Distance from the panel [c, d] to m (0 inside)."""
    return np.maximum(np.maximum(c - m, m - d), 0.0)


def _log_gauss_sup(c: np.ndarray, d: np.ndarray, m: float | np.ndarray, sigma: float) -> np.ndarray:
    """log sup over [c, d] of the N(m, s^2) density."""
    z = np.minimum(_distance(c, d, m) / sigma, 1e150)
    return -0.5 * z * z - math.log(sigma) - _HALF_LOG_2PI


def _log_tilt_sup(c: np.ndarray, d: np.ndarray, m: np.ndarray, big_m: np.ndarray, sigma: float) -> np.ndarray:
    """log sup over [c, d] of e^(M - (x - m)^2/(2 s^2)) / (s sqrt(2 pi)), M = a b/(2 s^2) (a Gaussian envelope of the
    tilt)."""
    z = np.minimum(_distance(c, d, m) / sigma, 1e150)
    return big_m - 0.5 * z * z - math.log(sigma) - _HALF_LOG_2PI


class _Integrand:
    """Q f_a(l) (R(P||Q)) or P f_a(-l) = Q e^l f_a(-l) (R(Q||P)) for a column of orders: node values, rounding
    magnitudes and upper bounds on panels, all in logs."""

    def __init__(self, q: float, sigma: float, alpha: np.ndarray, reverse: bool):
        self.q, self.s, self.reverse = q, sigma, reverse
        self.a = alpha[:, None]
        self.b = self.a - 1
        with np.errstate(over="ignore"):
            self.big_m = (self.a / sigma) * (self.b / sigma) / 2  # M = a b/(2 s^2), overflowing only beyond the floats
        self.clip = 1e300 / (float(alpha.max()) + 2)
        self.log1mq, self.logq = math.log1p(-q), math.log(q)
        self.ratio = ratio = self.log1mq - self.logq  # u0: q e^u0 = 1 - q
        with np.errstate(over="ignore"):
            self.x0 = 0.5 + sigma * sigma * ratio if ratio else 0.5  # the bend of l, where u = u0

    def nodes(self, x: np.ndarray, sized: int) -> tuple[np.ndarray, np.ndarray]:
        """(log integrand, log of the magnitude its rounding scales with) at the points x, shape (orders, len(x)); the
        magnitudes only for the first `sized` points (the others' columns are -inf).

        Right of the bend (u > u0) the large parts are combined before they are added: log Q + l = log q -
        (x - 1)^2/(2 s^2) + log1p(e^(u0 - u)) (- log(s sqrt(2 pi))), and, where l >= 2, log Q + log f_a(l) = a log q
        + (a b - (x - a)^2)/(2 s^2) + a log1p(e^(u0 - u)) + log(1 - a e^(-b l) + b e^(-a l)), so that the
        logarithm of a narrow bump far from 0 is not the difference of two numbers of size x^2/s^2."""
        s, a = self.s, self.a
        ell = _ell(self.q, s, x, self.clip)
        norm = math.log(s) + _HALF_LOG_2PI
        z = np.minimum(np.abs(x) / s, 1e150)
        log_q = -0.5 * z * z - norm
        beyond = np.clip((x - 0.5) / s / s - self.ratio, -1e300, 1e300)  # u - u0
        right = beyond > 0
        tail = np.log1p(np.exp(-np.where(right, beyond, 0.0)))  # log1p(e^(u0 - u)) right of the bend
        size = np.ones((a.size, x.size))
        head = slice(0, sized)
        if self.reverse:
            z1 = np.minimum(np.abs(x - 1) / s, 1e150)
            log_p = np.where(right, self.logq - 0.5 * z1 * z1 - norm + tail, log_q + ell)  # log Q + l = log P
            log_f = _log_f(-ell[None, :], a)
            values = log_p[None, :] + log_f
            size[:, head] = (np.where(right, abs(self.logq) + 0.5 * z1 * z1 + norm + tail,
                                      np.abs(log_q) + np.abs(ell))[None, head]
                             + a * np.abs(ell)[None, head] + np.abs(log_f[:, head]) + 1)
        else:  # the columns (nodes) right of the bend with l >= 2 go the combined way; log f_a only elsewhere
            b = self.b
            big = right & (ell >= 2)
            values = np.empty((a.size, x.size))
            near = ~big
            log_f = _log_f(ell[None, near], a)
            values[:, near] = log_q[None, near] + log_f
            near[sized:] = False
            size[:, near] = (np.abs(log_q)[None, near] + (a + 1) * np.abs(ell)[None, near]
                             + np.abs(log_f[:, :np.count_nonzero(near)]) + 1)
            if big.any():
                lb, la = b * ell[None, big], a * ell[None, big]
                za = np.minimum(np.abs(x[None, big] - a) / s, 1e150)
                big_m = np.minimum(self.big_m, 1e300)  # beyond, the closed-form bracket is used instead
                tilt = a * self.logq + (big_m - 0.5 * za * za) + a * tail[None, big] - norm
                rest = np.log(-np.expm1(-lb) - b * np.exp(-lb) + b * np.exp(-la))
                values[:, big] = tilt + rest
                first = np.count_nonzero(big[:sized])
                big[sized:] = False
                size[:, big] = (np.abs(a * self.logq) + big_m + 0.5 * za[:, :first] ** 2 + a * tail[None, big]
                                + np.abs(rest[:, :first]) + 3 * lb[:, :first] + 1)
        size[:, sized:] = 0.0  # log 0: not needed
        with np.errstate(divide="ignore"):
            return values, np.log(np.where(np.isfinite(values), size, 1.0))

    def bound(self, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        """log of an upper bound on the integral over each panel [c, d] (orders x panels)."""
        lc, ld = (_ell(self.q, self.s, v, self.clip) for v in (c, d))
        with np.errstate(divide="ignore"):
            width = np.log(d - c)
        a, b = self.a, self.b
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if not self.reverse:
                sup = _log_gauss_sup(c, d, 0.0, self.s)  # Q
                ends = np.maximum(_log_f(lc[None, :], a), _log_f(ld[None, :], a))
                # e^(a l) <= e^(a l(d)); and e^(a l) = (q e^u)^a (1 + e^-(u - u0))^a with u >= u(c)
                u_c = np.minimum((c - self.x0) / self.s / self.s, 1e300)
                tilt = (a * self.logq + _log_tilt_sup(c, d, a, self.big_m, self.s)
                        + a * np.logaddexp(0.0, -np.maximum(u_c, -1e300)))
                power = np.fmin(sup + a * ld, tilt)
            else:
                sup = np.logaddexp(self.log1mq + _log_gauss_sup(c, d, 0.0, self.s),
                                   self.logq + _log_gauss_sup(c, d, 1.0, self.s))  # P
                ends = np.maximum(_log_f(-lc[None, :], a), _log_f(-ld[None, :], a))
                # Q^a P^(1-a) <= min((1-q)^(1-a) Q, q^(1-a) Q e^((1-a) u)), P >= each part of the mixture
                power = np.fmin((1 - a) * self.log1mq + _log_gauss_sup(c, d, 0.0, self.s),
                                (1 - a) * self.logq + _log_tilt_sup(c, d, 1 - a, self.big_m, self.s))
            envelope = np.logaddexp(power, np.log(b) + sup)  # f_a(l) <= e^(a l) + a - 1
            out = np.fmin(sup + ends, envelope) + width  # fmin: a NaN (inf - inf) part gives no information
        return np.where(np.isnan(out), math.inf, out)

    def allowed(self, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The longest panel the rules resolve here: 3 noise widths, and near x0 max(3 s^2, twice the distance)."""
        return np.minimum(_PANEL * self.s, np.maximum(_PANEL * self.s * self.s, 2 * _distance(c, d, self.x0)))


def _lse(x: np.ndarray, axis: int) -> np.ndarray:
    """log sum exp along `axis` (-inf for an empty or all -inf slice; cheaper than scipy's for small arrays)."""
    if x.shape[axis] == 0:
        return np.full(np.delete(x.shape, axis), -np.inf)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(x - top), axis=axis))


def _log_gap(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """log |e^fine - e^coarse| (-inf where both are -inf or equal)."""
    hi, lo = np.maximum(fine, coarse), np.minimum(fine, coarse)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = hi + np.log(-np.expm1(lo - hi))
    return np.where(hi == -np.inf, -np.inf, np.where(lo == -np.inf, hi, out))


def _initial_edges(lo: float, hi: float, centres: list[float], sigma: float) -> np.ndarray:
    """Panel ends: a uniform grid of 3 noise widths over the features +- 12 widths where that is at most
    _CORE_PANELS panels, else geometric about each feature (3 s, 6 s, 12 s, ...); geometric out to [lo, hi]."""
    inside = [c for c in centres if lo < c < hi]
    core_lo, core_hi = max(lo, min(inside) - 12 * sigma), min(hi, max(inside) + 12 * sigma)
    width = _PANEL * sigma
    levels = max(1, math.ceil(math.log2(max((hi - lo) / width, 2.0)))) + 1
    steps = width * 2.0 ** np.arange(levels)
    n_core = math.ceil((core_hi - core_lo) / width)
    require_memory(8.0 * 4 * ((2 * levels + 1) * (len(inside) + 2) + min(n_core, _CORE_PANELS)),
                   "the sampled-Gaussian quadrature panels")
    pts = [np.array([lo, hi]), core_lo - steps, core_hi + steps]
    if n_core <= _CORE_PANELS:
        pts.append(np.linspace(core_lo, core_hi, n_core + 1))
    else:
        pts += [p for c in inside for p in (np.array([c]), c - steps, c + steps)]
    return np.unique(np.clip(np.concatenate(pts), lo, hi))


def _touching(c: np.ndarray, d: np.ndarray, centres: list[float]) -> np.ndarray:
    """Panels that contain or end at one of the centres."""
    m = np.asarray(centres, dtype=float)[None, :]
    return np.any((c[:, None] <= m) & (m <= d[:, None]), axis=1)


def _cut(c: np.ndarray, d: np.ndarray, pieces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each panel [c_i, d_i] cut into pieces_i equal parts (ends exact)."""
    owner = np.repeat(np.arange(c.size), pieces)
    first = np.repeat(np.cumsum(pieces) - pieces, pieces)
    j = np.arange(owner.size) - first
    n = pieces[owner]
    width = d[owner] - c[owner]
    lo = np.where(j == 0, c[owner], c[owner] + width * (j / n))
    hi = np.where(j == n - 1, d[owner], c[owner] + width * ((j + 1) / n))
    return lo, hi


def _quadrature(q: float, sigma: float, alpha: np.ndarray, log_j0: np.ndarray,
                reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """log J (R(P||Q)) or log J' (R(Q||P), `reverse`) at the orders `alpha`, and log of the absolute error bound of
    J (10 x the quadrature gaps, the dropped panels' bounds and rounding)."""
    f = _Integrand(q, sigma, alpha, reverse)
    a_max, a_min = float(alpha.max()), float(alpha.min())
    ends = sorted({a_min, a_max})
    tail = 2 * (_TAIL_LOG + 2 * abs(math.log(q)) + 2 * max(0.0, math.log(sigma)) + math.log(a_max))
    reach = math.sqrt(tail) * sigma
    if reverse:
        centres = [0.0, 1.0, f.x0] + [_qp_peak(q, sigma, v) for v in ends]
        lo, hi = min(0.0, 1 - a_max) - reach, 1 + reach
    else:
        centres = [0.0, 1.0, f.x0] + ends
        lo, hi = -reach, max(1.0, a_max) + reach
    edges = _initial_edges(lo, hi, centres, sigma)
    c, d = edges[:-1], edges[1:]
    k = alpha.size
    acc, acc_gap, acc_drop, acc_size = (np.full(k, -np.inf) for _ in range(4))
    log_t = log_j0.astype(float)  # a running lower estimate of log J, the scale of both tolerances
    for rnd in range(_MAX_ROUNDS):
        if c.size == 0:
            break
        check_deadline("the sampled-Gaussian quadrature")
        require_memory(8.0 * 40 * k * c.size * (_NODES + _CHECK), "the sampled-Gaussian quadrature")
        bound = f.bound(c, d)
        drop = np.all(bound <= log_t[:, None] + _LOG_DROP, axis=0)
        acc_drop = np.logaddexp(acc_drop, _lse(bound[:, drop], axis=1))
        c, d, bound = c[~drop], d[~drop], bound[:, ~drop]
        allowed = f.allowed(c, d)
        ready = (d - c) <= allowed
        tiny = (d - c) <= 64 * _EPS * np.maximum(np.maximum(np.abs(c), np.abs(d)), sigma * sigma)
        ready |= tiny
        if rnd == 0:  # first only the panels at the features: their total sets the scale that drops the others
            ready &= _touching(c, d, centres)
        fine = coarse = gap = size = np.empty((k, 0))
        if ready.any():
            rc, rd = c[ready], d[ready]
            mid, half = (rc + rd) / 2, (rd - rc) / 2
            xs, log_ws = [], []
            for order in (_NODES, _CHECK):
                nodes, weights = _GL[order]
                xs.append((mid[:, None] + half[:, None] * nodes[None, :]).ravel())
                log_ws.append(np.log(half[:, None] * weights[None, :]).ravel())
            values, log_size = f.nodes(np.concatenate(xs), xs[0].size)  # both rules in one pass
            split = xs[0].size
            rules = []
            for part, log_w, order in ((slice(0, split), log_ws[0], _NODES), (slice(split, None), log_ws[1], _CHECK)):
                shape = (k, rc.size, order)
                terms = values[:, part] + log_w
                rules.append((_lse(terms.reshape(shape), axis=2),
                              _lse((terms + log_size[:, part]).reshape(shape), axis=2) if order == _NODES else None))
            (fine, size), (coarse, _) = rules
            gap = _log_gap(fine, coarse)
            log_t = np.maximum(log_t, np.logaddexp(acc, _lse(np.minimum(fine, coarse), axis=1)))
        good = np.zeros(c.size, dtype=bool)
        if ready.any():
            good[ready] = np.all(gap <= log_t[:, None] + _LOG_TOL, axis=0) | tiny[ready]
            take = good[ready]
            acc = np.logaddexp(acc, _lse(fine[:, take], axis=1))
            acc_gap = np.logaddexp(acc_gap, _lse(gap[:, take], axis=1))
            acc_size = np.logaddexp(acc_size, _lse(size[:, take], axis=1))
        rest = ~good & ~np.all(bound <= log_t[:, None] + _LOG_DROP, axis=0)
        acc_drop = np.logaddexp(acc_drop, _lse(bound[:, ~good & ~rest], axis=1))
        # halve a resolved panel that is not accurate yet; cut a long one towards the length the rules resolve
        most = _MAX_PIECES if np.isfinite(log_t).any() else 2  # nothing to drop against yet: no fan-out
        pieces = np.where(ready, 2, np.clip(np.ceil((d - c) / allowed), 2, most))[rest].astype(int)
        c, d = _cut(c[rest], d[rest], pieces)
    else:  # not converged: what is left counts with its bound, as error
        acc_drop = np.logaddexp(acc_drop, _lse(f.bound(c, d), axis=1))
    log_err = np.logaddexp(np.logaddexp(math.log(_SAFETY) + acc_gap, acc_drop), math.log(8 * _EPS) + acc_size)
    return acc, log_err


def _orders_quadrature(q: float, sigma: float, alpha: np.ndarray, log_j0: np.ndarray,
                       reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """R and its error at every order (sorted into groups of up to _GROUP orders on shared panels); `log_j0` are
    lower bounds on log J."""
    value, err = np.empty_like(alpha), np.empty_like(alpha)
    order = np.argsort(alpha)
    for start in range(0, alpha.size, _GROUP):
        idx = order[start:start + _GROUP]
        a = alpha[idx]
        log_j, log_err = _quadrature(q, sigma, a, log_j0[idx], reverse)
        beta = a - 1
        with np.errstate(over="ignore", invalid="ignore"):
            value[idx] = np.logaddexp(0.0, log_j) / beta  # +inf only beyond the float range
            rel = np.exp(log_err - log_j)
            absolute = np.exp(log_err) / beta
        err[idx] = np.where(log_j == -np.inf, absolute, _error(rel, log_j, beta)) + 4 * _EPS * np.abs(value[idx])
    return value, err


def _pq_bracket(q: float, sigma: float, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form lower <= R_a(P||Q) <= upper, and a lower bound on log J: with r' = (1-q)/q and any u1 >= 0,
    q^a e^M <= E_Q[(P/Q)^a] <= q^a e^M (1 + r' e^-u1)^a + e^(a u1) (split at u = u1; 1 - q + q e^u <= max(1, e^u)
    below it) and <= 1 + e^M; here u1 = M/(2a) = b/(4 s^2). Tight once s is small against alpha."""
    b = a - 1
    logq = math.log(q)
    with np.errstate(over="ignore", invalid="ignore"):
        big_a = a / (2 * sigma) / sigma
        big_m = b * big_a
        u1 = b / (4 * sigma) / sigma
        lower = big_a + a * logq / b
        # log(q^a (1 + r' e^-u1)^a + e^(a u1 - M)) = logaddexp(a log(q + (1-q) e^-u1), -M/2): no q^a to cancel
        log_c = np.logaddexp(a * np.logaddexp(logq, math.log1p(-q) - u1), -big_m / 2)
        upper = np.minimum(big_a + log_c / b, big_a + np.log1p(np.exp(-big_m)) / b)
        slack = 4 * _EPS * (np.abs(big_a) + np.abs(a * logq / b) + np.abs(log_c / b))  # float rounding of the ends
        slack = np.where(np.isfinite(slack), slack, np.inf)
        beyond = big_a == np.inf  # A beyond the float range: so is R (the ends are A + finite)
        lower = np.where(beyond, np.inf, lower - slack)
        upper = np.where(beyond, np.inf, upper + slack)
        x = a * logq + big_m  # log(q^a e^M); J >= q^a e^M - 1
        log_j = np.where(x > 0, x + np.log1p(-np.exp(-np.where(x > 0, x, 1.0))), -np.inf)
    return lower, upper, log_j


def _qp_bracket(q: float, sigma: float, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form lower <= R_a(Q||P) <= upper = -log(1 - q) (P >= (1-q) Q), and a lower bound on log J': with
    r = q/(1-q) and any u1, E_Q[(P/Q)^(1-a)] >= (1-q)^(1-a) (1 + r e^u1)^(1-a) P_Q(u <= u1), P_Q(u <= u1) =
    Phi(1/(2 s) + s u1); the better of u1 = -1/(4 s^2) (tight once s is small) and u1 = log(upper/r) - 40 (once
    alpha is large)."""
    b = a - 1
    top = -math.log1p(-q)
    upper = np.full_like(a, top)
    log_r = math.log(q) - math.log1p(-q)
    lows = []
    for u1, z in ((-0.25 / sigma / sigma, 0.25 / sigma), (math.log(top) - log_r - 40, 0.5 / sigma + sigma * (
            math.log(top) - log_r - 40))):
        shift = math.log1p(math.exp(log_r + u1)) if log_r + u1 < 700 else log_r + u1
        tail = float(log_ndtr(z)) / b
        lows.append(top - shift + tail - 4 * _EPS * (top + shift + np.abs(tail)))  # less its float rounding
    lower = np.maximum(*lows)
    upper = upper * (1 + 4 * _EPS)
    x = b * lower  # J' >= e^x - 1
    log_j = np.where(x > 0, x + np.log(-np.expm1(-np.where(x > 0, x, 1.0))), -np.inf)
    return lower, upper, log_j


def _tight(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Brackets as good as a float: relative width below 1e-14, or both ends beyond the float range."""
    return (lower == np.inf) | ((lower > 0) & (upper - lower <= 1e-14 * lower))


def _within(value: np.ndarray, err: np.ndarray, lower: np.ndarray,
            upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The quadrature's value +- err intersected with the closed-form bracket (both hold; were they ever disjoint,
    the proven bracket alone)."""
    lower = np.maximum(lower, 0.0)  # R_alpha >= 0
    lo, hi = np.maximum(value - err, lower), np.minimum(value + err, upper)
    ok = lo <= hi
    lo, hi = np.where(ok, lo, lower), np.where(ok, hi, upper)
    mid = np.where(ok, np.clip(value, lo, hi), lo + (hi - lo) / 2)
    return mid, np.maximum(mid - lo, hi - mid)


def _bracketed(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", over="ignore"):
        value = np.where(lower == np.inf, np.inf, lower + (upper - lower) / 2)
        return value, np.where(lower == np.inf, np.inf, (upper - lower) / 2 + 4 * _EPS * np.abs(value))


def sgm_rdp(q: float, sigma: float, orders: ArrayLike) -> SgmRdp:
    """R_a(P||Q) and R_a(Q||P) of the sampled Gaussian at every order a > 1 (vectorised; see the module doc)."""
    with np.errstate(all="ignore"):  # infinities are intended (beyond the float range) and checked: never NaN
        out = _sgm_rdp(q, sigma, orders)
    if any(np.isnan(v).any() for v in (out.pq, out.qp, out.pq_err, out.qp_err)):  # pragma: no cover - a bug
        raise ArithmeticError(f"sampled-Gaussian RDP is NaN at q={q!r}, sigma={sigma!r}")
    return out


def _sgm_rdp(q: float, sigma: float, orders: ArrayLike) -> SgmRdp:
    for name, v in (("q", q), ("sigma", sigma)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} must be finite, got {v}")
    if not 0 < q <= 1:
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    if not sigma > 0:
        raise ParameterError(f"noise multiplier sigma must be > 0, got {sigma}")
    a = np.atleast_1d(np.asarray(orders, dtype=float))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ParameterError("orders must be a non-empty 1-D array of finite numbers > 1")
    with np.errstate(over="ignore"):
        big_a = a / (2 * sigma) / sigma  # may be +inf: beyond the float range
    if q == 1:  # the Gaussian mechanism: a / (2 s^2) in both orders
        err = np.where(np.isfinite(big_a), 4 * _EPS * big_a, np.inf)
        return SgmRdp(a, big_a, big_a.copy(), err, err.copy(), ("closed form",) * a.size, ("closed form",) * a.size)
    pq, pq_err = np.empty_like(a), np.empty_like(a)
    series = (a == np.round(a)) & (a <= _SERIES_MAX)
    small = series & (a <= 256)
    if small.any():  # one array for the small orders, one each for the others
        pq[small], pq_err[small] = _integer_pq(q, sigma, a[small])
    for i in np.flatnonzero(series & ~small):
        pq[i:i + 1], pq_err[i:i + 1] = _integer_pq(q, sigma, a[i:i + 1])
    lower, upper, log_j = _pq_bracket(q, sigma, a)
    closed = ~series & _tight(lower, upper)
    pq[closed], pq_err[closed] = _bracketed(lower[closed], upper[closed])
    rest = ~series & ~closed
    if rest.any():
        value, err = _orders_quadrature(q, sigma, a[rest], log_j[rest], reverse=False)
        pq[rest], pq_err[rest] = _within(value, err, lower[rest], upper[rest])
    pq_how = tuple("series" if i else "bracket" if c else "quadrature" for i, c in zip(series, closed, strict=True))
    qp, qp_err = np.empty_like(a), np.empty_like(a)
    lower, upper, log_j = _qp_bracket(q, sigma, a)
    closed = _tight(lower, upper)
    qp[closed], qp_err[closed] = _bracketed(lower[closed], upper[closed])
    if not closed.all():
        value, err = _orders_quadrature(q, sigma, a[~closed], log_j[~closed], reverse=True)
        qp[~closed], qp_err[~closed] = _within(value, err, lower[~closed], upper[~closed])
    return SgmRdp(a, pq, qp, pq_err, qp_err, pq_how, tuple("bracket" if c else "quadrature" for c in closed))


def _arb_bracket(q: float, sigma: float, alpha: float, direction: str) -> tuple | None:
    """The closed-form bracket of `_pq_bracket` / `_qp_bracket` as Arb balls (at the caller's precision), or None
    where it is wider than 1e-14 relative (or not positive): then the quadrature encloses."""
    a, qa, s = arb(alpha), arb(q), arb(sigma)
    b = a - 1
    log_q, log_1mq = qa.log(), (1 - qa).log()
    if direction == "pq":
        big_a = a / (2 * s * s)
        big_m = b * big_a
        u1 = b / (4 * s * s)
        lower = big_a + a * log_q / b
        first = a * (qa + (1 - qa) * (-u1).exp()).log()
        second = -big_m / 2
        top = first.max(second) if first.is_finite() and second.is_finite() else first
        log_c = top + ((first - top).exp() + (second - top).exp()).log()
        upper = (big_a + log_c / b).min(big_a + (-big_m).exp().log1p() / b)
    else:
        upper = -log_1mq
        log_r = log_q - log_1mq
        lows = []
        for u1, z in ((-1 / (4 * s * s), 1 / (4 * s)),
                      (upper.log() - log_r - 40, 1 / (2 * s) + s * (upper.log() - log_r - 40))):
            phi = (-z / arb(2).sqrt()).erfc() / 2
            lows.append(upper - ((log_r + u1).exp() + 1).log() + phi.log() / b)
        lower = lows[0].max(lows[1])
    if not (lower.is_finite() and upper.is_finite() and lower > 0):
        return None
    if not upper - lower <= lower * arb("1e-14"):
        return None
    return lower, upper


def enclose_sgm(q: float, sigma: float, alpha: float, direction: str, prec: int) -> Enclosure:
    """A rigorous enclosure of R_alpha(P||Q) ("pq") or R_alpha(Q||P) ("qp"): the closed-form bracket where it is
    tight (small sigma against alpha), the Arb binomial series at integer alpha in "pq" (up to 10^5 terms),
    acb.integral with proven tails otherwise (exact weights 1 - q, q)."""
    if q < 1:
        with ctx.workprec(prec):
            ends = _arb_bracket(q, sigma, alpha, direction)
            if ends is not None:
                how = ("q^a e^M <= E_Q[(P/Q)^a] <= q^a e^M (1 + e^-(u1 - u0))^a + e^(a u1)" if direction == "pq"
                       else "(1-q)^(1-a) (1 + r e^u1)^(1-a) Phi(.) <= E_Q[(P/Q)^(1-a)] <= (1-q)^(1-a)")
                return Enclosure.of(ends[0].union(ends[1]), f"closed-form bracket, {how}", prec)
    if direction == "pq" and float(alpha).is_integer() and alpha <= 100_000:
        return sgm_binomial_enclosure(q, sigma, int(alpha), prec)
    with ctx.workprec(prec):
        mix = ([1 - arb(q), arb(q)], [0.0, 1.0], [sigma, sigma])
    gauss = ([arb(1)], [0.0], [sigma])
    p, other = (mix, gauss) if direction == "pq" else (gauss, mix)
    centre = (-sigma, alpha + sigma) if direction == "pq" else (min(0.0, 1 - alpha) - sigma, 1 + sigma)
    return enclose_renyi_mixture(p, other, alpha, prec, centre, f"SGM R_alpha ({direction})")


def _part(value: float, err: float, method: Method, detail: str, enclose) -> Truth:
    """A Truth for value +- (err + 1e-13 |value|); +inf (beyond the float range) has the largest float as its lower
    end."""
    if value == math.inf:
        return Truth(math.inf, sys.float_info.max, math.inf, method, f"{detail}; beyond the float range",
                     enclose=enclose)
    pad = err + 1e-13 * abs(value)
    return Truth(value, value - pad, value + pad, method, detail, enclose=enclose)


def sgm_renyi_truth(q: float, sigma: float, alpha: float) -> Truth:
    """R_alpha of the sampled Gaussian, the larger of both orders, as a Truth: `sgm_rdp` for the value and its
    interval (the integer-order series is exact up to float rounding), `enclose_sgm` for the rigorous enclosure."""
    r = sgm_rdp(q, sigma, [alpha])
    texts = {"series": "positive-term binomial series (Mironov-Talwar-Zhang 2019), float64",
             "bracket": "closed-form bracket, tight to 1e-14 (sigma small against alpha, or alpha large)",
             "closed form": "the Gaussian mechanism, alpha/(2 sigma^2)",
             "quadrature": "adaptive Gauss-Legendre, error vs the 16-node rule plus dropped panels and rounding"}
    parts = []
    for direction, value, err, kind in (("pq", r.pq[0], r.pq_err[0], r.pq_how[0]),
                                        ("qp", r.qp[0], r.qp_err[0], r.qp_how[0])):
        exact = kind in ("series", "closed form")
        how = texts[kind]
        parts.append(_part(float(value), float(err), Method.EXACT if exact else Method.SERIES,
                           f"SGM R_alpha ({direction}), q={q:g}, sigma={sigma:g}: {how}",
                           lambda prec, d=direction: enclose_sgm(q, sigma, alpha, d, prec)))
    return Truth.larger(parts[0], parts[1], "sampled Gaussian, both orders")
