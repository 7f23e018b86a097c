"""Tight (eps, delta) of two 1-D Gaussian mixtures, with a rigorous Arb bracket.

delta(eps) = sup_A P(A) - e^eps Q(A) = int (p - e^eps q)_+ is attained on A* = {p > e^eps q}, a finite union of
intervals whose ends are the roots of log p - log q = eps. Floats find the roots (a scan plus brentq) and sum the exact
Phi differences over A*; eps(delta) is the root of delta(eps) = delta (brentq on log delta).

The bracket (`enclose_delta`) needs no trust in the floats: for ANY set A the value P(A) - e^eps Q(A) is a lower
bound, computed in Arb from Phi (erfc) differences. For the upper bound every panel between the float roots is cut
into pieces on which the sign of p - e^eps q is proven from per-component density extremes (each Gaussian is
monotone on either side of its mean; log-sum-exp in floats widened by 1e-13 (1 + |value|), 250 times any
rounding error); a piece left unproven adds at most width * the largest wrong-signed value of p - e^eps q that those
extremes allow (its negative part, in a panel taken as positive, is what it can take away), and the two tails beyond
the window add their Arb masses. So lower <= delta(eps) <= upper holds whatever the floats found.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from verify.errors import ParameterError
from verify.truth.mixture import Mixture1D
from verify.truth.numbers import Enclosure, NotEnclosable

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None

_SCAN = 4000  # scan points over the window, plus every component mean
_WINDOW = 40.0  # widths of the widest component beyond the extreme means
_PIECES = 8  # first cut of each panel before bisection
_BUDGET = 200_000  # piece evaluations before the refinement stops (the bracket only widens)
_MARGIN = 1e-13  # widening of float log-density ends, relative to 1 + |value|: 250 times their rounding error


def _window(p: Mixture1D, q: Mixture1D) -> tuple[float, float]:
    width = max(p.sds + q.sds)
    return min(p.means + q.means) - _WINDOW * width, max(p.means + q.means) + _WINDOW * width


def _roots(p: Mixture1D, q: Mixture1D, eps: float) -> list[float]:
    """Sign changes of log p - log q - eps over the window (the float guess of A*'s ends)."""
    lo, hi = _window(p, q)
    xs = np.unique(np.concatenate([np.linspace(lo, hi, _SCAN), p.means, q.means]))

    def h(x):
        return p.log_pdf_np(np.atleast_1d(np.asarray(x, dtype=float))) - q.log_pdf_np(
            np.atleast_1d(np.asarray(x, dtype=float))) - eps

    values = h(xs)
    roots = []
    positive = values > 0
    for i in np.nonzero(positive[:-1] != positive[1:])[0]:
        roots.append(optimize.brentq(lambda x: float(h(x)[0]), xs[i], xs[i + 1], xtol=1e-15, rtol=1e-15))
    return roots


def _panels(p: Mixture1D, q: Mixture1D, eps: float) -> list[tuple[float, float, bool]]:
    """(a, b, positive) between consecutive roots, the outer ones unbounded."""
    cuts = [-math.inf] + _roots(p, q, eps) + [math.inf]
    panels = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        mid = (a + b) / 2 if math.isfinite(a) and math.isfinite(b) else (b - 1 if math.isfinite(b) else a + 1)
        if not math.isfinite(mid):
            mid = 0.0
        positive = float(p.log_pdf_np(np.array([mid]))[0] - q.log_pdf_np(np.array([mid]))[0]) > eps
        panels.append((a, b, positive))
    return panels


def delta_float(p: Mixture1D, q: Mixture1D, eps: float) -> float:
    """delta(eps) = sup_A P(A) - e^eps Q(A), floats."""
    total = 0.0
    for a, b, pos in _panels(p, q, eps):
        if pos:
            q_mass = q.mass(a, b)
            total += p.mass(a, b) - (math.exp(eps + math.log(q_mass)) if q_mass > 0 else 0.0)
    return max(0.0, total)


def epsilon_float(p: Mixture1D, q: Mixture1D, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta, floats."""
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta!r}")
    if delta_float(p, q, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while delta_float(p, q, hi) > delta:
        hi *= 2
        if hi > 1e4:
            raise ParameterError("eps(delta) exceeds 1e4: the pair is (almost) distinguishable")

    def f(e):
        d = delta_float(p, q, e)
        return math.log(d) - math.log(delta) if d > 0 else -745.0 - math.log(delta)

    return optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-13)


# ---- the rigorous bracket --------------------------------------------------------------------------------------------


def _arb_mass(mix: Mixture1D, a: float, b: float) -> arb:
    """P((a, b)) in Arb: each component's mass as a difference of erfc taken on the side of its mean where it does
    not cancel (infinite ends allowed)."""
    def tail(x: float, m: float, s: float) -> arb:  # P(X > x) for X ~ N(m, s^2), times 2
        if x == math.inf:
            return arb(0)
        if x == -math.inf:
            return arb(2)
        return ((arb(x) - m) / (arb(s) * arb(2).sqrt())).erfc()

    total = arb(0)
    for w, m, s in zip(mix.weights, mix.means, mix.sds, strict=True):
        if a >= m:
            total += arb(w) * (tail(a, m, s) - tail(b, m, s)) / 2
        else:  # mirror about the mean: P(a < X < b) = P(2m - b < X' < 2m - a)
            total += arb(w) * (tail(-b, -m, s) - tail(-a, -m, s)) / 2
    return total


def _logsumexp_rows(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return top + np.log(np.exp(x - top[:, None]).sum(axis=1))


def _log_extremes(mix: Mixture1D, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends of log(sqrt(2 pi) density) over each piece [a_j, b_j], widened by _MARGIN.

    Each component's density is smallest at the end farther from its mean and largest at the mean (if inside) or
    the nearer end; a log-sum-exp of per-component ends bounds the mixture. The float evaluation errs by less than
    4e-16 (1 + |value|) (a few roundings of z^2/2 and of the log-sum-exp), far inside the margin."""
    m, s, lw = np.array(mix.means), np.array(mix.sds), np.log(mix.weights) - np.log(mix.sds)
    da, db = (a[:, None] - m) / s, (b[:, None] - m) / s
    far = np.maximum(np.abs(da), np.abs(db))
    near = np.where((da <= 0) & (db >= 0), 0.0, np.minimum(np.abs(da), np.abs(db)))
    low, high = _logsumexp_rows(lw - far**2 / 2), _logsumexp_rows(lw - near**2 / 2)
    return low - _MARGIN * (1 + np.abs(low)), high + _MARGIN * (1 + np.abs(high))


def _unproven_cost(p: Mixture1D, q: Mixture1D, eps: float, pieces: np.ndarray, tol: float) -> float:
    """Refine the pieces (rows a, b, positive) until each either has a proven sign agreeing with its panel or
    can add at most `tol`; return the sum of what the unproven ones can add (rounded up)."""
    total, spent = 0.0, 0
    for _ in range(200):
        if len(pieces) == 0:
            return total
        spent += len(pieces)
        a, b, pos = pieces[:, 0], pieces[:, 1], pieces[:, 2] > 0
        p_lo, p_hi = _log_extremes(p, a, b)
        q_lo, q_hi = _log_extremes(q, a, b)
        proven = np.where(pos, p_lo > q_hi + eps, p_hi < q_lo + eps)
        width = (b - a) / math.sqrt(2 * math.pi)
        # the wrong-signed part of g over the piece: e^eps q - p <= e^(q_hi + eps) (1 - e^(p_lo - q_hi - eps)) in a
        # positive panel, p - e^eps q <= e^p_hi (1 - e^(q_lo + eps - p_hi)) in a negative one
        over = np.maximum(np.where(pos, q_hi + eps - p_lo, p_hi - q_lo - eps), 0.0)
        cost = width * np.exp(np.where(pos, q_hi + eps, p_hi)) * -np.expm1(-over) * (1 + 1e-12)
        done = ~proven & ((cost <= tol) | ((b - a) <= 1e-15 * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b))))
                          | (spent > _BUDGET))  # past the budget every unproven piece pays its full (proven) cost
        total += float(np.sum(cost[done])) * (1 + _MARGIN)
        split = pieces[~proven & ~done]
        mid = (split[:, 0] + split[:, 1]) / 2
        pieces = np.concatenate([np.column_stack([split[:, 0], mid, split[:, 2]]),
                                 np.column_stack([mid, split[:, 1], split[:, 2]])])
    raise NotEnclosable("the sign of p - e^eps q could not be proven on the window")


def enclose_delta(p: Mixture1D, q: Mixture1D, eps: float, prec: int = 128, rel_tol: float = 1e-9) -> tuple[arb, arb]:
    """Proven lower <= delta(eps) <= upper (Arb balls of radius 0), for P || Q."""
    with ctx.workprec(prec):
        e = arb(eps).exp()
        panels = _panels(p, q, eps)
        lower = sum((_arb_mass(p, a, b) - e * _arb_mass(q, a, b) for a, b, pos in panels if pos), arb(0))
        lower_end = max(arb(lower.lower()), arb(0))
        tol = rel_tol * max(float(lower_end.upper()), 1e-300) / (_PIECES * len(panels) + 2)
        lo, hi = _window(p, q)
        extra, rows = arb(0), []
        for a, b, pos in panels:
            if a < lo:  # the tails beyond the window stay unproven
                extra += e * _arb_mass(q, a, lo) if pos else _arb_mass(p, a, lo)
            if b > hi:
                extra += e * _arb_mass(q, hi, b) if pos else _arb_mass(p, hi, b)
            a_in, b_in = max(a, lo), min(b, hi)
            if a_in < b_in:
                cuts = np.linspace(a_in, b_in, _PIECES + 1)
                rows += [(u, v, float(pos)) for u, v in zip(cuts[:-1], cuts[1:], strict=True)]
        extra += arb(_unproven_cost(p, q, eps, np.array(rows, dtype=float).reshape(-1, 3), tol))
        return lower_end, arb((lower + extra).upper())


def enclose_epsilon(p: Mixture1D, q: Mixture1D, delta: float, prec: int = 128) -> Enclosure:
    """A proven bracket on the smallest eps >= 0 with delta_{P||Q}(eps) <= delta, around the float root."""
    e = epsilon_float(p, q, delta)
    if e == 0.0:
        if enclose_delta(p, q, 0.0, prec)[1] <= arb(delta):
            return Enclosure(arb(0), arb(0), "delta(0) = TV <= delta proven in Arb", prec)
        e = 1e-12
    for rel in (1e-10, 1e-7, 1e-4, 1e-2):
        lo, hi = max(e * (1 - rel), 0.0), e * (1 + rel)
        below = lo == 0.0 or enclose_delta(p, q, lo, prec)[0] > arb(delta)
        if below and enclose_delta(p, q, hi, prec)[1] <= arb(delta):
            return Enclosure(arb(lo), arb(hi), "hockey stick of the mixture pair bracketed in Arb "
                             "(proven sign pieces, Phi differences) on both sides of the float root", prec)
    raise NotEnclosable(f"could not bracket eps(delta) near {e!r} rigorously")
