"""Fast double-precision quadrature for the Rényi divergence of 1-D Gaussian mixtures, with a rigorous fallback.

Used on grids and by the falsifier, where the 30-digit mpmath quadrature of verify.truth.mixture (the reference it
is tested against) is too slow. It never forms int P^a Q^(1-a) - 1, which cancels when the divergence is tiny or
alpha is near 1: with l = log P - log Q and b = alpha - 1 it integrates

    J = int Q f(l),  f(l) = e^(a l) - a e^l + a - 1 >= 0  (verify.truth.excess),

whose integral is I - 1 exactly (int P = int Q = 1), so R = log1p(J) / b with no cancellation.
Composite Gauss-Legendre over +-40 component widths around the means and the tilt centre (panels one narrowest
width wide where the half-order rule agrees to the float floor there, else a quarter of it); the interval is +-10 x
the gap to the half-order rule plus a rounding bound from the magnitudes of the summed terms. The returned Truth
can enclose itself rigorously (`verify.truth.mixture_arb`), which the checker does before it reports a violation.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from flint import arb, ctx

from verify.errors import check_renyi_order
from verify.limits import require_memory
from verify.results import Method, Truth
from verify.runmemo import remembered
from verify.truth.excess import log_excess
from verify.truth.mixture_arb import (
    bracket_renyi_mixture_gaussian,
    enclose_renyi_mixture,
    enclose_renyi_mixture_gaussian,
)
from verify.truth.numbers import NotEnclosable

_SAFETY = 10.0
_ORDER = 24  # Gauss-Legendre nodes per panel; the half-order rule on the same panels gives the error
_EPS = 2.0**-52
_GL = {k: np.polynomial.legendre.leggauss(k) for k in (_ORDER, _ORDER // 2)}  # nodes and weights, built once


def _log_pdf(x: np.ndarray, weights: np.ndarray, means: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """log of the mixture density at the points x (log-sum-exp over components, written out and in place, one row
    per component: scipy's logsumexp costs more than the arithmetic here). Fewer than 8 shifted terms are added in
    order (as numpy's sum over a short axis adds them: bit-identical); more by halving the rows, so that each term
    goes through at most ceil(log2 n) roundings, no more than in numpy's pairwise sums (the analysis behind
    log_excess_terms' `ell_err` holds)."""
    z = x[None, :] - means[:, None]
    z /= sds[:, None]
    z *= z
    z *= -0.5
    z += (np.log(weights) - np.log(sds) - 0.5 * math.log(2 * math.pi))[:, None]
    if z.shape[0] == 1:
        return z[0]
    top = z.max(axis=0)
    z -= top
    np.exp(z, out=z)
    return top + np.log(z.sum(axis=0) if z.shape[0] < 8 else _halving_sum(z))


_SUBNORMAL_ERR = 2.0**-1062  # a float weight below the normal range is off by at most 4096 of its ulps (2^-1074):
# scipy's binomial pmf was measured up to 448 ulps off there (its relative error, ~1e-13, times the smallest normal)


def _weight_slack(x: np.ndarray, weights: np.ndarray, means: np.ndarray, sds: np.ndarray,
                  log_pdf: np.ndarray, rounded: bool) -> np.ndarray | float:
    """The relative error of the mixture's density at x that its subnormal weights allow, as an `ell_err` of
    `log_excess_terms` (units of eps, over the 64 of `_truth`'s rounding bound, which this bound does not need): such
    a weight keeps a few bits, so it may be off by _SUBNORMAL_ERR, i.e. the density by _SUBNORMAL_ERR sum phi_i(x)
    over those components.
    0 where every weight is normal (their relative rounding is within the quadrature's own rounding bound), and where
    the floats are the weights themselves (not `rounded` from exact ones). Where the subnormal components dominate
    (far tails), the error is large and widens the interval accordingly."""
    subnormal = weights < np.finfo(float).tiny
    if not rounded or not np.any(subnormal):
        return 0.0
    log_unit = _log_pdf(x, np.ones(int(subnormal.sum())), means[subnormal], sds[subnormal])
    with np.errstate(over="ignore"):
        return np.exp(log_unit + math.log(_SUBNORMAL_ERR / (64 * _EPS)) - log_pdf)


def _halving_sum(rows: np.ndarray) -> np.ndarray:
    """The sum of the rows (overwritten), adding the last half onto the first until one row is left."""
    n = rows.shape[0]
    while n > 1:
        half = n // 2
        rows[:half] += rows[n - half:n]  # an odd count keeps its middle row for the next round
        n -= half
    return rows[0]


def _components(weights, means, sds):
    """Arrays of the components with positive weight (a zero weight contributes nothing)."""
    w, m, s = (np.asarray(v, float) for v in (weights, means, sds))
    keep = w > 0
    return w[keep], m[keep], s[keep]


def _ball_key(w: Any) -> Hashable:
    """An exact, hashable key of a weight: an Arb ball's midpoint and radius as (mantissa, exponent) integers, a
    number itself."""
    if isinstance(w, arb):
        return tuple(int(v) for end in (w.mid(), w.rad()) for v in end.man_exp())
    return w


def _is_zero(w: Any) -> bool:
    return w.is_zero() if hasattr(w, "is_zero") else w == 0


def _exact_components(exact: Sequence[Any], means: Sequence[float], sds: Sequence[float]) -> tuple[list, list, list]:
    """The components whose exact weight (an Arb ball or a number) is not zero: a float weight that underflowed to 0
    can stand for a positive exact one, which the enclosure must keep (a far component of weight 1e-330 can dominate
    R_alpha)."""
    keep = [i for i, w in enumerate(exact) if not _is_zero(w)]
    return [exact[i] for i in keep], [float(means[i]) for i in keep], [float(sds[i]) for i in keep]


@dataclass(frozen=True)
class PositiveExactWeights:
    """Exact weights (`weights()`, Arb balls) that are known to be all > 0, e.g. binomial weights at 0 < q < 1: a float
    weight that underflowed to 0 is then lost without computing them (thousands of Arb powers per call)."""

    weights: Callable[[], Any]

    def __call__(self) -> Any:
        return self.weights()


def _underflowed(float_weights: Sequence[Sequence[float]], exact_weights: Callable[[], Any] | None,
                 pick: Callable[[Any], Sequence[Sequence[Any]]]) -> list[bool]:
    """For each mixture's float weights, whether one is 0 while its exact weight (`pick(exact_weights())`, Arb balls,
    computed once and only if some float weight is 0; never for PositiveExactWeights) is not: the float quadrature
    left that component out, so its interval cannot bound what it contributes (the enclosure keeps it). Weights that
    are exactly 0 (a batch that cannot occur at q = 1) are not lost."""
    zeros = [np.flatnonzero(np.asarray(w, float) <= 0) for w in float_weights]
    if exact_weights is None or not any(z.size for z in zeros):
        return [False] * len(zeros)
    if isinstance(exact_weights, PositiveExactWeights):
        return [z.size > 0 for z in zeros]
    with ctx.workprec(64):
        exact = pick(exact_weights())
    return [any(not _is_zero(e[i]) for i in z) for z, e in zip(zeros, exact, strict=True)]


def _open_ended(truth: Truth, upper: bool, lower: bool) -> Truth:
    """`truth` with its upper end at +inf and/or its lower end at 0 (R_alpha >= 0): what underflowed weights leave of
    the float interval (more mass in P raises int P^a Q^(1-a); more in Q can lower it)."""
    if not (upper or lower) or math.isinf(truth.value):
        return truth
    return dataclasses.replace(truth, lower=0.0 if lower else truth.lower, upper=math.inf if upper else truth.upper,
                               detail=truth.detail + "; float weights underflowed to 0: the interval is open on that "
                               "side (the Arb enclosure keeps those components)")


def log_excess_terms(ell: np.ndarray, alpha: float, ell_err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log f(l) (verify.truth.excess) and the log of a bound on its rounding error over eps: the magnitudes of the
    summed terms plus |f'(l)| times `ell_err`, the rounding of l in units of eps."""
    log_f, log_size = log_excess(ell, alpha)
    with np.errstate(divide="ignore", over="ignore"):
        z = (alpha - 1) * ell  # f'(l) = a e^l expm1((a - 1) l)
        log_abs_expm1 = np.empty_like(z)
        big = z > 1  # log expm1(z) as z + log1p(-e^-z) there, without overflow; each form on its own elements
        log_abs_expm1[big] = z[big] + np.log1p(-np.exp(-z[big]))
        log_abs_expm1[~big] = np.log(np.abs(np.expm1(z[~big])))
        log_slope = math.log(alpha) + ell + log_abs_expm1 + np.log(ell_err)
    return log_f, np.logaddexp(log_size, log_slope)


def _rule_terms(log_p: np.ndarray, log_q: np.ndarray, log_w: np.ndarray, alpha: float, slack: np.ndarray | float,
                full: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(log of a rule's terms Q f(log P/Q) w, log of their rounding scales): the scales (`log_excess_terms`) only for
    the full-order rule, the one whose rounding `_truth` bounds; the half-order rule's are never read (None)."""
    if not full:
        return log_q + log_excess(log_p - log_q, alpha)[0] + log_w, None
    log_f, log_size = log_excess_terms(log_p - log_q, alpha, 8 * (np.abs(log_p) + np.abs(log_q) + 1) + slack)
    return log_q + log_f + log_w, log_q + log_size + log_w


def renyi_mixture_quad(weights_p: Sequence[float], means_p: Sequence[float], sds_p: Sequence[float],
                       weights_q: Sequence[float], means_q: Sequence[float], sds_q: Sequence[float],
                       alpha: float, *, exact_weights: Callable[[], tuple[Sequence[Any], Sequence[Any]]] | None = None
                       ) -> Truth:
    """R_alpha(P || Q) for 1-D Gaussian mixtures in double precision, with an error-based interval.

    `exact_weights()`, called at the enclosure's working precision, gives the exact weights (Arb balls) where the
    float weights are rounded (e.g. 1 - q); by default the float weights are taken as exact.
    """
    return _renyi_quad((weights_p, means_p, sds_p), (weights_q, means_q, sds_q), alpha, exact_weights, False)[0]


def renyi_mixture_quad_both(weights_p: Sequence[float], means_p: Sequence[float], sds_p: Sequence[float],
                            weights_q: Sequence[float], means_q: Sequence[float], sds_q: Sequence[float],
                            alpha: float, exact_weights=None) -> tuple[Truth, Truth]:
    """(R_alpha(P || Q), R_alpha(Q || P)) as `renyi_mixture_quad` gives them, on one set of nodes covering both (the
    densities are evaluated once for the two orders); `exact_weights` as there."""
    return _renyi_quad((weights_p, means_p, sds_p), (weights_q, means_q, sds_q), alpha, exact_weights, True)


def _renyi_quad(p_mix: tuple, q_mix: tuple, alpha: float, exact_weights, both: bool) -> tuple[Truth, ...]:
    check_renyi_order(alpha)
    wp, mp, sp_ = _components(*p_mix)
    wq, mq, sq = _components(*q_mix)
    centres = [mp, mq, alpha * mp - (alpha - 1) * mq.mean() + 0 * mp]
    if both:
        centres.append(alpha * mq - (alpha - 1) * mp.mean() + 0 * mq)
    centres = np.concatenate(centres)
    width = max(sp_.max(), sq.max())
    lo, hi = float(centres.min() - 40 * width), float(centres.max() + 40 * width)
    orders = (False, True) if both else (False,)  # reverse: R(Q || P)

    def encloser(reverse: bool):
        def enclose(prec: int):
            with ctx.workprec(prec):
                exact = exact_weights() if exact_weights is not None else (p_mix[0], q_mix[0])
            p = _exact_components(exact[0], p_mix[1], p_mix[2])
            q = _exact_components(exact[1], q_mix[1], q_mix[2])
            first, second = (q, p) if reverse else (p, q)
            return enclose_renyi_mixture(first, second, alpha, prec, (lo, hi))
        return enclose
    lost_p, lost_q = _underflowed((p_mix[0], q_mix[0]), exact_weights, lambda pair: pair)

    # R(A || B) is infinite where B's widest component is too narrow for A's: alpha s_B^2 <= (alpha - 1) s_A^2
    diverges = [(sp_ if r else sq).max() ** 2 * alpha <= (alpha - 1) * (sq if r else sp_).max() ** 2 for r in orders]
    if all(diverges):
        return tuple(_infinite(encloser(r)) for r in orders)
    narrowest = min(sp_.min(), sq.min())
    rounded = exact_weights is not None
    identical = not rounded and _same_components((wp, mp, sp_), (wq, mq, sq))

    def by_panels(panels: float) -> list[tuple[Truth, bool]]:
        # the whole rule's size is capped (it bounds the work too), though a rule of more than _BLOCK_PANELS panels
        # is evaluated block by block (`_block_sums`), within a block's memory
        require_memory(8.0 * panels * _ORDER * (len(wp) + len(wq) + 8), "the mixture quadrature")
        live = [(reverse, infinite) for reverse, infinite in zip(orders, diverges, strict=True) if not infinite]
        edges = np.linspace(lo, hi, panels + 1)
        sums: dict[bool, list[list[tuple[float, float]]]] = {reverse: [[], [], []] for reverse, _ in live}
        for start in range(0, panels, _BLOCK_PANELS):
            rules = []
            for x, log_w in _rules(edges[start:start + _BLOCK_PANELS + 1]):
                log_p, log_q = _log_pdf(x, wp, mp, sp_), _log_pdf(x, wq, mq, sq)
                slack = _weight_slack(x, wp, mp, sp_, log_p, rounded) + _weight_slack(x, wq, mq, sq, log_q, rounded)
                rules.append((log_p, log_q, log_w, slack))
            for reverse, _ in live:
                (fine_v, size_v), (coarse_v, _) = (
                    _rule_terms(*((log_q, log_p) if reverse else (log_p, log_q)), log_w, alpha, slack, full)
                    for full, (log_p, log_q, log_w, slack) in zip((True, False), rules, strict=True))
                for parts, v in zip(sums[reverse], (fine_v, coarse_v, size_v), strict=True):
                    parts.append(_lse_parts(v))
        out = []
        for reverse, infinite in zip(orders, diverges, strict=True):
            if infinite:
                out.append((_infinite(encloser(reverse)), True))
                continue
            fine, coarse, size = (_lse_of(parts) for parts in sums[reverse])
            first, second = (lost_q, lost_p) if reverse else (lost_p, lost_q)
            truth, settled = _truth(fine, coarse, size, alpha, lo, hi, panels, encloser(reverse), identical)
            out.append((_open_ended(truth, first, second), settled))
        return out

    coarse, fine = (_panels(lo, hi, narrowest * width) for width in (_COARSE_PANEL, _FINE_PANEL))
    if coarse < fine:
        first = by_panels(coarse)
        if all(settled for _, settled in first):
            return tuple(truth for truth, _ in first)
    return tuple(truth for truth, _ in by_panels(fine))


_FINE_PANEL, _COARSE_PANEL = 0.25, 1.0  # panel widths in units of the narrowest component's sd: the coarse panels
# are tried first and kept where the half-order rule agrees to the float floor (`_truth`'s `settled`): 24 nodes per
# width resolve a Gaussian to ~1e-19 relative; the fine panels otherwise, as before.


def _panels(lo: float, hi: float, width: float) -> float:
    """Panels of at most `width` on [lo, hi], at least 64; inf where the window is wider than any count (at S = 1e308
    it spans 1e308 widths and more: math.ceil raised an OverflowError, now the memory cap refuses the quadrature)."""
    with np.errstate(over="ignore"):
        count = (hi - lo) / width
    return max(64, math.ceil(count)) if math.isfinite(count) else math.inf


_BLOCK_PANELS = 1 << 15  # panels of a rule evaluated together (786,432 nodes: arrays of 6 MiB); a rule of more is
# evaluated block by block, so that a far point's quadrature (5e6 panels at a search's draws) keeps within ~100 MiB


def _rules(edges: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(nodes, log weights) of the composite Gauss-Legendre rule of _ORDER and of _ORDER // 2 nodes per panel, on the
    panels between consecutive `edges`."""
    half, mid = np.diff(edges)[:, None] / 2, (edges[:-1] + edges[1:])[:, None] / 2
    return [((mid + half * nodes).ravel(), np.log((half * weights).ravel()))
            for nodes, weights in (_GL[order] for order in (_ORDER, _ORDER // 2))]


BRACKET_PREC = 64  # the rigorous re-check's first precision (pipeline.rigorous.PRECISIONS[0]): see `encloser` below
_TARGET_BLOCK = 128  # Gaussians integrated together (rows of the node arrays)


def renyi_mixture_to_gaussians(weights: Sequence[float], means: Sequence[float], s: float, targets: Sequence[float],
                               alpha: float, exact_weights: Callable[[], Sequence[Any]] | None = None) -> list[Truth]:
    """R_alpha(P || N(t, s^2)) for every t in `targets`, P = sum_i w_i N(mean_i, s^2) (one common sd), on one set of
    nodes covering every target's integrand: P's density is evaluated once. Each Truth is as `renyi_mixture_quad`
    gives it (error-based interval; Arb enclosure with `exact_weights()` for P's weights, default the floats)."""
    check_renyi_order(alpha)
    wp, mp, sds = _components(weights, means, np.full(len(means), float(s)))
    lost, = _underflowed((weights,), exact_weights, lambda single: (single,))
    t = np.asarray(targets, dtype=float)
    ends = [mp.min(), mp.max(), t.min(), t.max(), alpha * mp.min() - (alpha - 1) * t.max(),
            alpha * mp.max() - (alpha - 1) * t.min()]
    lo, hi = float(min(ends) - 40 * s), float(max(ends) + 40 * s)
    rounded = exact_weights is not None

    exact_at: dict[int, tuple] = {}  # precision -> (P's exact components, their key), shared by the targets

    def exact_components(prec: int) -> tuple:
        if prec not in exact_at:
            with ctx.workprec(prec):
                exact = exact_weights() if exact_weights is not None else list(weights)
            p = _exact_components(exact, means, [float(s)] * len(means))
            exact_at[prec] = p, (tuple(_ball_key(w) for w in p[0]), tuple(p[1]), float(s), prec)
        return exact_at[prec]

    def encloser(target: float):
        @functools.cache  # the entries that share this truth re-check it at the same precisions: once each
        def enclose(prec: int):
            p, key = exact_components(prec)
            if float(alpha).is_integer():
                args = (p[0], p[1], float(s), float(target), int(alpha), prec)
                try:  # closed forms of (P, t, alpha): grid points that share P and a target share them (run memo)
                    return remembered(("mixture_to_gaussian", key, float(target), int(alpha)),
                                      lambda: enclose_renyi_mixture_gaussian(*args))
                except NotEnclosable:  # too many compositions: at the re-check's first precision the proven
                    if prec <= BRACKET_PREC:  # bracket (milliseconds, decides a clear exceedance), beyond it the
                        return remembered(("mixture_to_gaussian_bracket", key, float(target), int(alpha)),
                                          lambda: bracket_renyi_mixture_gaussian(*args))
            # the quadrature (tens of seconds)
            return enclose_renyi_mixture(p, ([1], [float(target)], [float(s)]), alpha, prec, (lo, hi))
        return enclose

    def by_panels(panels: float, chosen: np.ndarray) -> list[tuple[Truth, bool]]:
        """The truths of the targets `chosen` (indices into t) on `panels` panels, each with `_truth`'s settled."""
        require_memory(8.0 * panels * _ORDER * (len(wp) + 8 * _TARGET_BLOCK), "the mixture-to-Gaussians quadrature")
        rules = []
        for x, log_w in _rules(np.linspace(lo, hi, panels + 1)):
            log_p = _log_pdf(x, wp, mp, sds)
            rules.append((x, log_p, log_w, _weight_slack(x, wp, mp, sds, log_p, rounded)))
        out = []
        for start in range(0, chosen.size, _TARGET_BLOCK):
            block = t[chosen[start:start + _TARGET_BLOCK]]
            per_rule = []
            for full, (x, log_p, log_w, slack) in zip((True, False), rules, strict=True):
                log_q = -0.5 * ((x[None, :] - block[:, None]) / s) ** 2 - math.log(s) - 0.5 * math.log(2 * math.pi)
                per_rule.append(_rule_terms(log_p[None, :], log_q, log_w, alpha, slack, full))
            for j, target in enumerate(block):
                same = not rounded and _same_components((wp, mp, sds), (np.ones(1), np.array([target]), sds[:1]))
                (fine_v, size_v), (coarse_v, _) = per_rule
                truth, settled = _truth(_lse(fine_v[j]), _lse(coarse_v[j]), _lse(size_v[j]), alpha, lo, hi, panels,
                                        encloser(target), same)
                out.append((_open_ended(truth, lost, False), settled))
        return out

    everyone = np.arange(t.size)
    coarse, fine = (_panels(lo, hi, s * width) for width in (_COARSE_PANEL, _FINE_PANEL))
    if coarse >= fine:
        return [truth for truth, _ in by_panels(fine, everyone)]
    out = by_panels(coarse, everyone)
    unsettled = np.array([k for k, (_, settled) in enumerate(out) if not settled], dtype=int)
    if unsettled.size:
        for k, redone in zip(unsettled, by_panels(fine, unsettled), strict=True):
            out[k] = redone
    return [truth for truth, _ in out]


def _same_components(p: tuple[np.ndarray, ...], q: tuple[np.ndarray, ...]) -> bool:
    """True if the mixtures have the same (weight, mean, sd) components, in any order."""
    rows = [sorted(zip(*(a.tolist() for a in mix), strict=True)) for mix in (p, q)]
    return rows[0] == rows[1]


def _infinite(enclose) -> Truth:
    return Truth(math.inf, math.inf, math.inf, Method.EXACT, "+inf: Q's widest component is too narrow",
                 enclose=enclose)


def _lse(v: np.ndarray) -> float:
    """log sum exp(v) (-inf for an empty or all -inf v)."""
    return _lse_of([_lse_parts(v)])


def _lse_parts(v: np.ndarray) -> tuple[float, float]:
    """(top, sum exp(v - top)) of a block of terms: (-inf, 0) where it has none above -inf."""
    top = float(np.max(v)) if v.size else -math.inf
    if top == -math.inf:
        return -math.inf, 0.0
    return top, float(np.sum(np.exp(v - top)))


def _lse_of(parts: list[tuple[float, float]]) -> float:
    """log sum exp over the blocks whose (top, sum) are `parts`: one block is top + log(sum), as before blocks; more
    are rescaled to the largest top and added exactly (math.fsum), so each adds one rounding (the rescaling) to the
    pairwise sums' within the blocks: far within the 64 eps `_truth` allows."""
    top = max(t for t, _ in parts)
    if top == -math.inf:
        return -math.inf
    if len(parts) == 1:
        return top + math.log(parts[0][1])
    return top + math.log(math.fsum(total * math.exp(t - top) for t, total in parts if t > -math.inf))


def _truth(fine: float, coarse: float, size: float, alpha: float, lo: float, hi: float, panels: int, enclose,
           identical: bool) -> tuple[Truth, bool]:
    """The Truth from the logs of J by the rule (`fine`) and by its half-order rule (`coarse`) and of the rule's
    rounding scale (`size`), and whether it is settled: the half-order gap's share of the error bound (x _SAFETY) is
    within the rounding bound's. `identical`: P and Q are the same law (the same exact components), so R_alpha = 0."""
    if fine == coarse == -math.inf:  # P = Q at every node in floats: the integrand f(log P/Q) vanishes there
        if identical:
            return Truth(0.0, 0.0, 0.0, Method.SERIES, "P = Q (the same components)", enclose=enclose), False
        # laws closer than the floats resolve (a shift of 4e-19 sd: R_alpha = 1.7e-37, not 0): no float bound
        # above 0 is proven, so every positive bound goes to the Arb enclosure
        return Truth(0.0, 0.0, math.inf, Method.SERIES, f"P = Q in floats at every quadrature node on [{lo:.3g}, "
                     f"{hi:.3g}], though P != Q: R_alpha is below the floats' resolution", enclose=enclose), False
    top, low = max(fine, coarse), min(fine, coarse)
    gap = top + math.log(-math.expm1(low - top)) if low > -math.inf and low < top else (
        top if low < top else -math.inf)  # log |J - J_half|
    quadrature, rounding = math.log(_SAFETY) + gap, math.log(64 * _EPS) + size
    err = float(np.logaddexp(quadrature, rounding))  # log of J's error bound
    beta = alpha - 1

    def divergence(log_j: float) -> float:  # log1p(J)/beta from log J, for any size of J
        return float(np.logaddexp(0.0, log_j)) / beta

    value = divergence(fine)
    lower = 0.0 if err >= fine else divergence(fine + math.log(-math.expm1(err - fine)))
    upper = divergence(float(np.logaddexp(fine, err)))
    pad = 4 * _EPS * abs(value)  # the log1p and the division
    # R_alpha >= 0 (the integrand f is >= 0): the lower end never goes below 0
    return Truth(value, max(0.0, min(lower, value) - pad), max(upper, value) + pad, Method.SERIES,
                 f"composite Gauss-Legendre of int Q f(log P/Q) on [{lo:.3g}, {hi:.3g}] ({panels} panels), "
                 f"error estimate {math.exp(min(gap, 700)):.1e} on I - 1 (vs the half-order rule)",
                 enclose=enclose), quadrature <= rounding
