"""Fast double-precision quadrature for the Rényi divergence of 1-D Gaussian mixtures.

Used on grids and by the falsifier, where the 30-digit mpmath quadrature of verify.truth.mixture (the reference it
is tested against) is too slow. The integrand P^a Q^(1-a) is evaluated in log space, rescaled by its maximum, and
integrated by composite Gauss-Legendre over +-40 component widths around the means and the tilt centre (panels a
quarter of the narrowest width); the interval is +-10 x the gap to the half-order rule, plus rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp

from verify.errors import ParameterError
from verify.results import Method, Truth

_SAFETY = 10.0
_ORDER = 24  # Gauss-Legendre nodes per panel; the half-order rule on the same panels gives the error


def _log_pdf(x, weights, means, sds):
    x = np.asarray(x, float)[..., None]
    z = (x - means) / sds
    return logsumexp(np.log(weights) - 0.5 * z * z - np.log(sds) - 0.5 * math.log(2 * math.pi), axis=-1)


def _components(weights, means, sds):
    """Arrays of the components with positive weight (a zero weight contributes nothing)."""
    w, m, s = (np.asarray(v, float) for v in (weights, means, sds))
    keep = w > 0
    return w[keep], m[keep], s[keep]


def renyi_mixture_quad(weights_p: Sequence[float], means_p: Sequence[float], sds_p: Sequence[float],
                       weights_q: Sequence[float], means_q: Sequence[float], sds_q: Sequence[float],
                       alpha: float) -> Truth:
    """R_alpha(P || Q) for 1-D Gaussian mixtures in double precision, with an error-based interval."""
    if not alpha > 1:
        raise ParameterError(f"Rényi order alpha must be > 1, got {alpha}")
    wp, mp, sp_ = _components(weights_p, means_p, sds_p)
    wq, mq, sq = _components(weights_q, means_q, sds_q)
    if sq.max() ** 2 * alpha <= (alpha - 1) * sp_.max() ** 2:  # Q's tails too light: the integral diverges
        return Truth(math.inf, math.inf, math.inf, Method.EXACT, "+inf: Q's widest component is too narrow")
    centres = np.concatenate([mp, mq, alpha * mp - (alpha - 1) * mq.mean() + 0 * mp])
    width = max(sp_.max(), sq.max())
    lo, hi = centres.min() - 40 * width, centres.max() + 40 * width

    def log_f(x):
        return alpha * _log_pdf(x, wp, mp, sp_) + (1 - alpha) * _log_pdf(x, wq, mq, sq)

    panels = max(64, math.ceil((hi - lo) / (0.25 * min(sp_.min(), sq.min()))))
    edges = np.linspace(lo, hi, panels + 1)
    half, mid = np.diff(edges)[:, None] / 2, (edges[:-1] + edges[1:])[:, None] / 2
    estimates = []
    for order in (_ORDER, _ORDER // 2):
        nodes, weights = np.polynomial.legendre.leggauss(order)
        logs = log_f((mid + half * nodes).ravel()).reshape(panels, order)
        estimates.append((logs, np.log(half * weights)))
    top = max(e[0].max() for e in estimates)
    fine, coarse = (float(np.sum(np.exp(logs - top) * np.exp(lw))) for logs, lw in estimates)
    total, err = float(fine), float(abs(fine - coarse))
    if not total > 0:
        raise ArithmeticError("quadrature of P^alpha Q^(1-alpha) returned a non-positive value")
    value = float((top + math.log(total)) / (alpha - 1))
    pad = _SAFETY * err / total / (alpha - 1) + 1e-13 * abs(value) + 1e-15
    return Truth(value, value - pad, value + pad, Method.SERIES,
                 f"composite Gauss-Legendre on [{lo:.3g}, {hi:.3g}] ({panels} panels), relative error estimate "
                 f"{err / total:.1e} (vs the half-order rule)")
