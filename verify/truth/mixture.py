"""Rényi divergences of 1-D Gaussian mixtures, and of the Poisson-subsampled Gaussian mechanism (SGM).

SGM with sensitivity 1 and add/remove neighbours: P = (1-q) N(0, sigma^2) + q N(1, sigma^2), Q = N(0, sigma^2).
- R_alpha(P||Q), integer alpha: finite binomial series (Mironov, Talwar & Zhang 2019, Sec. 3.3)
  E_Q[(P/Q)^alpha] = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 sigma^2)), summed in log domain.
- R_alpha(P||Q) at fractional alpha and R_alpha(Q||P) at any alpha: quadrature of int P^alpha Q^(1-alpha) over
  the real line split into segments about one component width long (mpmath tanh-sinh, cross-checked by
  Gauss-Legendre), with the integrand rescaled by its maximum so that nothing overflows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import mpmath
import numpy as np
from flint import arb, ctx
from numpy.typing import ArrayLike
from scipy.special import ndtr

from verify.backend import log_sum_exp
from verify.errors import ParameterError, check_renyi_order
from verify.limits import require_memory
from verify.results import Method, Truth
from verify.truth.numbers import Enclosure

Direction = Literal["pq", "qp", "max"]

_SAFETY = 10.0  # multiple of the quadrature error estimate used as the interval half-width
_FLOAT_REL = 4e-16  # rounding of the final float conversion


@dataclass(frozen=True)
class Mixture1D:
    """A 1-D Gaussian mixture with positive weights summing to one (validated)."""

    weights: tuple[Any, ...]  # floats, or mpf built at working precision (normalised again in log_pdf_mp)
    means: tuple[float, ...]
    sds: tuple[float, ...]

    @classmethod
    def build(cls, name: str, weights: ArrayLike, means: ArrayLike, sds: ArrayLike) -> Mixture1D:
        w, m, s = (np.atleast_1d(np.asarray(a, dtype=float)) for a in (weights, means, sds))
        if not (w.ndim == m.ndim == s.ndim == 1 and w.shape == m.shape == s.shape and w.size > 0):
            raise ParameterError(f"{name}: weights, means and sds must be 1-D arrays of one common length")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(m)) and np.all(np.isfinite(s))):
            raise ParameterError(f"{name}: weights, means and sds must be finite (no NaN/inf)")
        if np.any(w < 0) or abs(w.sum() - 1) > 1e-12:
            raise ParameterError(f"{name}: weights must be >= 0 and sum to 1, got sum {w.sum()!r}")
        if np.any(s <= 0):
            raise ParameterError(f"{name}: sds must be > 0")
        keep = w > 0
        return cls(tuple(w[keep]), tuple(m[keep]), tuple(s[keep]))

    @classmethod
    def of(cls, weights: ArrayLike, means: ArrayLike, sds: ArrayLike) -> Mixture1D:
        return cls.build("mixture", weights, means, sds)

    def log_pdf_mp(self) -> Callable[[mpmath.mpf], mpmath.mpf]:
        """log density as a function at the current working precision (constants converted to mpf once)."""
        log_total = mpmath.log(mpmath.fsum(self.weights))
        half_log_2pi = mpmath.log(2 * mpmath.pi) / 2
        comps = [(mpmath.log(w) - log_total - mpmath.log(mpmath.mpf(s)) - half_log_2pi, mpmath.mpf(m),
                  1 / (2 * mpmath.mpf(s) ** 2)) for w, m, s in zip(self.weights, self.means, self.sds, strict=True)]

        def log_pdf(z: mpmath.mpf) -> mpmath.mpf:
            logs = [c - k * (z - m) ** 2 for c, m, k in comps]
            if len(logs) == 1:
                return logs[0]
            top = max(logs)
            return top + mpmath.log(mpmath.fsum(mpmath.exp(v - top) for v in logs))

        return log_pdf

    @functools.cached_property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """Float columns (one row per component) of the weights, means, sds, log weights, 2 sds^2 and log sds."""
        w, m, s = (np.asarray(a, dtype=float)[:, None] for a in (self.weights, self.means, self.sds))
        return w, m, s, np.log(w), 2 * s**2, np.log(s)

    def mass(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """P((a_j, b_j)) for each j in floats, each Phi difference taken on the side of its mean where it does not
        cancel (infinite ends allowed)."""
        w, m, s = (v[:, 0] for v in self.arrays[:3])
        u, v = (np.asarray(a, dtype=float)[:, None] - m) / s, (np.asarray(b, dtype=float)[:, None] - m) / s
        diff = np.where(u > 0, ndtr(-u) - ndtr(-v), ndtr(v) - ndtr(u))
        return (w * diff).sum(axis=1)

    def components_np(self, z: np.ndarray) -> np.ndarray:
        """log of each weighted component density at the points z (rows: components)."""
        _, m, _, log_w, two_var, log_s = self.arrays
        return log_w - (z[None, :] - m) ** 2 / two_var - log_s - 0.5 * math.log(2 * math.pi)

    def log_pdf_np(self, z: np.ndarray) -> np.ndarray:
        """log density at the points z, floats (a max-shifted log-sum-exp over the components)."""
        return log_sum_exp(self.components_np(z), axis=0)


def _check_dps(dps: int) -> None:
    if int(dps) != dps or dps < 15:
        raise ParameterError(f"dps (mpmath decimal digits) must be an integer >= 15, got {dps}")


def _diverges(p: Mixture1D, q: Mixture1D, alpha: float) -> bool:
    """int P^a Q^(1-a) = inf iff the widest components make the Gaussian tail exponent non-negative."""
    sp, sq = max(p.sds), max(q.sds)
    return alpha / sp**2 + (1 - alpha) / sq**2 <= 0


def _breakpoints(p: Mixture1D, q: Mixture1D, alpha: float, dps: int) -> list[float]:
    """Finite segment ends covering where the integrand P^a Q^(1-a) is within e^-(dps ln10 + 20) of its peak.

    Candidate centres are every component mean and every pairwise geometric tilt N_i^a N_j^(1-a); segments
    are about one candidate width long, so each holds a smooth, well-resolved piece.
    """
    centres, widths = list(p.means + q.means), list(p.sds + q.sds)
    floor = 1e-2 / max(widths) ** 2  # tilts flatter than 10x the widest component carry no new structure
    for mi, si in zip(p.means, p.sds, strict=True):
        for mj, sj in zip(q.means, q.sds, strict=True):
            prec = alpha / si**2 + (1 - alpha) / sj**2
            if prec > floor:
                centres.append((alpha * mi / si**2 + (1 - alpha) * mj / sj**2) / prec)
                widths.append(prec**-0.5)
    lo = min(c - 12 * w for c, w in zip(centres, widths, strict=True))
    hi = max(c + 12 * w for c, w in zip(centres, widths, strict=True))
    z = np.linspace(lo, hi, 20001)
    g = alpha * p.log_pdf_np(z) + (1 - alpha) * q.log_pdf_np(z)
    keep = np.nonzero(g >= np.max(g) - (dps * math.log(10) + 20))[0]
    step = z[1] - z[0]
    a, b = z[keep[0]] - step, z[keep[-1]] + step
    n_seg = max(2, math.ceil((b - a) / min(widths)))
    require_memory(2000.0 * n_seg, "the mpmath mixture quadrature (segments)")  # ~ mpf nodes kept per segment
    return [float(x) for x in np.linspace(a, b, n_seg + 1)]


def _log_integral(p: Mixture1D, q: Mixture1D, alpha: float, dps: int) -> tuple[mpmath.mpf, float]:
    """log int P^a Q^(1-a) dz and a relative error estimate (max of tanh-sinh's own and its gap to Gauss-Legendre)."""
    with mpmath.workdps(dps):
        a = mpmath.mpf(alpha)
        pts = _breakpoints(p, q, alpha, dps)
        log_p, log_q = p.log_pdf_mp(), q.log_pdf_mp()

        def g(z):
            return a * log_p(z) + (1 - a) * log_q(z)

        top = max(g(mpmath.mpf(x)) for x in pts)
        points = [mpmath.ninf, *map(mpmath.mpf, pts), mpmath.inf]

        def f(z):
            return mpmath.exp(g(z) - top)

        val, err = mpmath.quad(f, points, method="tanh-sinh", error=True)
        val_gl = mpmath.quad(f, points, method="gauss-legendre")
        if not val > 0:
            raise ArithmeticError("quadrature of P^alpha Q^(1-alpha) returned a non-positive value")
        rel = float(max(abs(err), abs(val - val_gl)) / val)
        return top + mpmath.log(val), rel


def _quadrature_truth(p: Mixture1D, q: Mixture1D, alpha: float, dps: int, what: str) -> Truth:
    if _diverges(p, q, alpha):
        return Truth(math.inf, math.inf, math.inf, Method.EXACT,
                     f"{what}: +inf (the widest component of Q is too narrow for alpha={alpha:g})")
    log_int, rel = _log_integral(p, q, alpha, dps)
    value = float(log_int / (alpha - 1))
    pad = _SAFETY * rel / (alpha - 1) + _FLOAT_REL * abs(value) + 10.0 ** (3 - dps)
    return Truth(value, value - pad, value + pad, Method.SERIES,
                 f"{what}: mpmath quadrature at {dps} digits, split real line (tanh-sinh vs Gauss-Legendre), "
                 f"relative quadrature error {rel:.1e}, interval = {_SAFETY:g} x error")


def renyi_mixture_1d(weights_p: ArrayLike, means_p: ArrayLike, sds_p: ArrayLike,
                     weights_q: ArrayLike, means_q: ArrayLike, sds_q: ArrayLike,
                     alpha: float, dps: int = 30) -> Truth:
    """R_alpha(P||Q) for 1-D Gaussian mixtures P, Q by split-line quadrature (method SERIES, +inf if infinite).

    The interval is the value +- 10 x the quadrature error estimate (plus float rounding).
    """
    check_renyi_order(alpha)
    _check_dps(dps)
    p = Mixture1D.build("P", weights_p, means_p, sds_p)
    q = Mixture1D.build("Q", weights_q, means_q, sds_q)
    return _quadrature_truth(p, q, alpha, dps, "R_alpha of 1-D Gaussian mixtures")


def _sgm_log_binomial(q: float, sigma: float, alpha: int, dps: int) -> mpmath.mpf:
    """log E_Q[(P/Q)^alpha] by the binomial series, log-sum-exp over k (MTZ 2019, Sec. 3.3)."""
    require_memory(64.0 * (alpha + 1) * (1 + dps / 16), "the mpmath binomial series (one mpf per term)")
    with mpmath.workdps(dps):
        qm, s2 = mpmath.mpf(q), mpmath.mpf(sigma) ** 2
        logs = [mpmath.log(mpmath.binomial(alpha, k)) + k * mpmath.log(qm) + (k * k - k) / (2 * s2)
                + ((alpha - k) * mpmath.log(1 - qm) if k < alpha else 0)
                for k in range(alpha + 1) if k == alpha or qm < 1]
        top = max(logs)
        return top + mpmath.log(mpmath.fsum(mpmath.exp(v - top) for v in logs))


def sgm_binomial_enclosure(q: float, sigma: float, alpha: int, prec: int) -> Enclosure:
    """The binomial series of `_sgm_log_binomial` summed in Arb balls: a rigorous enclosure of R_alpha(P||Q)."""
    with ctx.workprec(prec):
        qa, s2 = arb(q), arb(sigma) ** 2
        total = sum((arb.bin_uiui(alpha, k) * (1 - qa) ** (alpha - k) * qa**k * (arb(k * k - k) / (2 * s2)).exp()
                     for k in range(alpha + 1)), arb(0))
        return Enclosure.of(total.log() / (alpha - 1), "Arb binomial series (Mironov-Talwar-Zhang 2019)", prec)


def _sgm_direction(q: float, sigma: float, alpha: float, direction: str, dps: int) -> Truth:
    if direction == "pq" and float(alpha).is_integer():
        with mpmath.workdps(dps):
            value = _sgm_log_binomial(q, sigma, int(alpha), dps) / (int(alpha) - 1)
        return Truth.exact(float(value), f"SGM R_alpha(P||Q), q={q:g}, sigma={sigma:g}: binomial series "
                                         f"(Mironov-Talwar-Zhang 2019) in mpmath at {dps} digits", rel=_FLOAT_REL,
                           enclose=lambda prec: sgm_binomial_enclosure(q, sigma, int(alpha), prec))
    gauss = Mixture1D((1.0,), (0.0,), (float(sigma),))
    with mpmath.workdps(dps):  # exact weights 1 - q and q at working precision
        qm = mpmath.mpf(q)
        mix = Mixture1D((1 - qm, qm), (0.0, 1.0), (float(sigma),) * 2) if q < 1 else Mixture1D((1.0,), (1.0,), (sigma,))
    p, qq = (mix, gauss) if direction == "pq" else (gauss, mix)
    name = "R_alpha(P||Q)" if direction == "pq" else "R_alpha(Q||P)"
    return _quadrature_truth(p, qq, alpha, dps, f"SGM {name}, q={q:g}, sigma={sigma:g}")


def sgm_renyi(q: float, sigma: float, alpha: float, direction: Direction = "max", dps: int = 30) -> Truth:
    """Rényi divergence of the Poisson-subsampled Gaussian mechanism (sensitivity 1, add/remove neighbours).

    direction "pq": R_alpha(P||Q) with P = (1-q)N(0,s^2) + qN(1,s^2), Q = N(0,s^2); "qp": R_alpha(Q||P);
    "max": the larger of the two (the RDP curve of one step). Integer alpha in "pq" uses the exact binomial
    series (method EXACT); everything else uses quadrature (method SERIES) with an error-based interval.
    """
    for name, v in (("q", q), ("sigma", sigma)):
        if math.isnan(v) or math.isinf(v):
            raise ParameterError(f"{name} must be finite, got {v}")
    if not 0 < q <= 1:
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    if not sigma > 0:
        raise ParameterError(f"noise multiplier sigma must be > 0, got {sigma}")
    check_renyi_order(alpha)
    _check_dps(dps)
    if direction not in ("pq", "qp", "max"):
        raise ParameterError(f"direction must be 'pq', 'qp' or 'max', got {direction!r}")
    if direction != "max":
        return _sgm_direction(q, sigma, alpha, direction, dps)
    pq, qp = (_sgm_direction(q, sigma, alpha, d, dps) for d in ("pq", "qp"))
    best, other = (pq, qp) if pq.value >= qp.value else (qp, pq)
    # the max of two enclosed values is enclosed by the max of the interval ends
    return Truth(best.value, max(best.lower, other.lower), max(best.upper, other.upper), best.method,
                 f"max of both directions; larger: {best.detail}")
