"""Fast Rényi divergences of the Poisson-subsampled Gaussian mechanism at many orders, both orders of the pair.

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2) (sensitivity 1, add/remove). With l(x) = log(P/Q)(x) =
log1p(q expm1((2x - 1)/(2 s^2))) (no cancellation) and f_a(l) = e^(a l) - a e^l + a - 1 >= 0:

- R_a(P||Q) = log1p(J)/(a - 1), J = E_Q[(P/Q)^a] - 1. At integer a, J = sum_{k>=2} C(a,k) (1-q)^(a-k) q^k
  expm1((k^2 - k)/(2 s^2)) (Mironov, Talwar & Zhang 2019, Sec. 3.3, with the k = 0, 1 terms, which sum with the
  rest to 1, removed: every term is positive). Summed in log space.
- At fractional a, and R_a(Q||P) = log1p(J')/(a - 1), J' = int P f_a(-l) at every a: composite Gauss-Legendre on
  nodes shared by all orders (panels three noise widths long, 12 widths beyond the means and the tilt), vectorised
  over orders,
  with the gap to the 16-node rule on the same panels as error estimate.
All in float64; values agree with 50-digit references to ~1e-13 relative (tests/truth/test_sgm_rdp.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

from verify.errors import ParameterError
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
_PANEL = 3.0  # panel width in noise widths (the integrands are entire; 16 nodes resolve a Gaussian bump of width 1)
_REACH = 12.0  # the integrands are below e^-72 of their peaks beyond 12 noise widths from the means and the tilt
_GL = {k: np.polynomial.legendre.leggauss(k) for k in (_NODES, _CHECK)}


@dataclass(frozen=True)
class SgmRdp:
    """R_a of the sampled Gaussian at `orders`: `pq` = R(P||Q), `qp` = R(Q||P), and error estimates of each."""

    orders: np.ndarray
    pq: np.ndarray
    qp: np.ndarray
    pq_err: np.ndarray
    qp_err: np.ndarray

    @property
    def rdp(self) -> np.ndarray:
        """The RDP curve of one step: the larger of the two orders of the pair."""
        return np.maximum(self.pq, self.qp)


def _log_expm1(y: np.ndarray) -> np.ndarray:
    """log(e^y - 1) for y > 0 without overflow or cancellation."""
    y = np.asarray(y, float)
    big = y > 1
    out = np.empty_like(y)
    out[big] = y[big] + np.log1p(-np.exp(-y[big]))
    out[~big] = np.log(np.expm1(y[~big]))
    return out


def _integer_pq(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """log J at integer orders by the positive-term binomial series (orders up to 64 in one array, larger ones
    one by one)."""
    out = np.empty_like(orders)
    small = orders <= 64
    groups = [np.flatnonzero(small)] + [np.array([i]) for i in np.flatnonzero(~small)]
    for idx in (g for g in groups if g.size):
        a = orders[idx][:, None]
        k = np.arange(2, int(a.max()) + 1, dtype=float)[None, :]
        valid = k <= a
        kk = np.where(valid, k, 2.0)
        terms = (gammaln(a + 1) - gammaln(kk + 1) - gammaln(a - kk + 1) + (a - kk) * math.log1p(-q)
                 + kk * math.log(q) + _log_expm1((kk * kk - kk) / (2 * sigma**2)))
        out[idx] = logsumexp(np.where(valid, terms, -np.inf), axis=1)
    return out


def _panels(lo: float, hi: float, width: float) -> tuple[np.ndarray, np.ndarray]:
    n = max(8, math.ceil((hi - lo) / width))
    edges = np.linspace(lo, hi, n + 1)
    return (edges[:-1] + edges[1:]) / 2, np.diff(edges) / 2


def _quadrature(q: float, sigma: float, alpha: np.ndarray, lo: float, hi: float,
                reverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """log J (and the absolute error estimate of J relative to e^logJ) of int Q e^(r l) f_a((1-2r) l), r = reverse."""
    mid, half = _panels(lo, hi, _PANEL * min(sigma, sigma**2))  # l(x) bends over sigma^2 when sigma < 1
    results = []
    for order in (_NODES, _CHECK):
        nodes, weights = _GL[order]
        x = (mid[:, None] + half[:, None] * nodes[None, :]).ravel()
        log_w = np.log((half[:, None] * weights[None, :]).ravel())
        ell = np.log1p(q * np.expm1((2 * x - 1) / (2 * sigma**2)))
        log_q = -x * x / (2 * sigma**2) - math.log(sigma) - 0.5 * math.log(2 * math.pi)
        base = log_q + log_w + (ell if reverse else 0.0)
        log_f, _ = log_excess((-ell if reverse else ell)[None, :], alpha[:, None])
        results.append(logsumexp(log_f + base[None, :], axis=1))
    fine, coarse = results
    with np.errstate(over="ignore", invalid="ignore"):
        rel = np.abs(np.expm1(coarse - fine))
    return fine, np.where(np.isfinite(rel), rel, 1.0)


def sgm_rdp(q: float, sigma: float, orders: ArrayLike) -> SgmRdp:
    """R_a(P||Q) and R_a(Q||P) of the sampled Gaussian at every order a > 1 (vectorised; see the module doc)."""
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
    if q == 1:  # the Gaussian mechanism: a / (2 s^2) in both orders
        exact = a / (2 * sigma**2)
        return SgmRdp(a, exact, exact.copy(), np.zeros_like(a), np.zeros_like(a))
    beta = a - 1
    integer = a == np.round(a)
    log_j_pq, err_pq = np.empty_like(a), np.zeros_like(a)
    if integer.any():
        log_j_pq[integer] = _integer_pq(q, sigma, a[integer])
    frac = ~integer
    spread = _REACH * sigma
    if frac.any():
        top = float(a[frac].max())
        log_j_pq[frac], err_pq[frac] = _quadrature(q, sigma, a[frac], -spread, top + 1 + spread, reverse=False)
    log_j_qp, err_qp = _quadrature(q, sigma, a, -spread, 1 + spread, reverse=True)
    pq, qp = np.logaddexp(0.0, log_j_pq) / beta, np.logaddexp(0.0, log_j_qp) / beta
    return SgmRdp(a, pq, qp, 10 * err_pq * np.abs(pq) + 1e-15 * pq, 10 * err_qp * np.abs(qp) + 1e-15 * qp)


def enclose_sgm(q: float, sigma: float, alpha: float, direction: str, prec: int) -> Enclosure:
    """A rigorous enclosure of R_alpha(P||Q) ("pq") or R_alpha(Q||P) ("qp"): the Arb binomial series at integer
    alpha in "pq", acb.integral with proven tails otherwise (exact weights 1 - q, q)."""
    if direction == "pq" and float(alpha).is_integer():
        return sgm_binomial_enclosure(q, sigma, int(alpha), prec)
    with ctx.workprec(prec):
        mix = ([1 - arb(q), arb(q)], [0.0, 1.0], [sigma, sigma])
    gauss = ([arb(1)], [0.0], [sigma])
    p, other = (mix, gauss) if direction == "pq" else (gauss, mix)
    return enclose_renyi_mixture(p, other, alpha, prec, (-sigma, alpha + sigma), f"SGM R_alpha ({direction})")


def sgm_renyi_truth(q: float, sigma: float, alpha: float) -> Truth:
    """R_alpha of the sampled Gaussian, the larger of both orders, as a Truth: `sgm_rdp` for the value and its
    interval (the integer-order series is exact up to float rounding), `enclose_sgm` for the rigorous enclosure."""
    r = sgm_rdp(q, sigma, [alpha])
    integer = float(alpha).is_integer()
    parts = []
    for direction, value, err in (("pq", r.pq[0], r.pq_err[0]), ("qp", r.qp[0], r.qp_err[0])):
        pad = float(err) + 1e-13 * abs(float(value))
        exact = integer and direction == "pq"
        how = ("positive-term binomial series (Mironov-Talwar-Zhang 2019), float64" if exact
               else "Gauss-Legendre on shared nodes, error vs the 16-node rule")
        parts.append(Truth(float(value), float(value) - pad, float(value) + pad,
                           Method.EXACT if exact else Method.SERIES,
                           f"SGM R_alpha ({direction}), q={q:g}, sigma={sigma:g}: {how}",
                           enclose=lambda prec, d=direction: enclose_sgm(q, sigma, alpha, d, prec)))
    return Truth.larger(parts[0], parts[1], "sampled Gaussian, both orders")
