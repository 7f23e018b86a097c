"""Tight (eps, delta) of two 1-D Gaussian mixtures, with a rigorous Arb bracket.

delta(eps) = sup_A P(A) - e^eps Q(A) = int (p - e^eps q)_+ is attained on A* = {p > e^eps q}, a finite union of
intervals whose ends are the roots of log p - log q = eps. Floats find the roots (a scan of log p - log q, kept per
pair for every eps, then Newton steps inside each bracket, all roots at once) and sum the exact Phi differences over
A*; eps(delta) is the root of delta(eps) = delta (Newton on log delta, whose slope -e^eps Q(A*) / delta comes with it).

The bracket (`enclose_delta`) needs no trust in the floats: for ANY set A the value P(A) - e^eps Q(A) is a lower
bound, computed in Arb from Phi (erfc) differences. For the upper bound every panel between the float roots is cut
into pieces on which the sign of p - e^eps q is proven from per-component density extremes (each Gaussian is
monotone on either side of its mean; log-sum-exp in floats widened by 1e-13 (1 + |value|), more than its rounding
error, and more still for mixtures of hundreds of components); a piece left unproven adds at most width * the largest
wrong-signed value of p - e^eps q that those extremes allow (its negative part, in a panel taken as positive, is what
it can take away), and the two tails beyond the window add their Arb masses. So lower <= delta(eps) <= upper holds
whatever the floats found.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtr

from verify.backend import log_sum_exp
from verify.errors import ParameterError
from verify.results import Method, Truth
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
_XTOL = 1e-15  # root tolerance, relative to 1 + |x|, of a bracket
_NEWTON_TOL = 1e-9  # a Newton step this small (relative to 1 + |x|) ends the root search
_STEPS = 200  # Newton/bisection steps at most (bisection alone reaches _XTOL from the scan spacing in ~60)
_EPS_NEWTON = 1e-10  # a Newton step on log delta(eps) this small (relative to eps) ends the eps search
_EPS_STEPS = 200  # Newton/bisection steps of the eps search at most
_EPS_MAX = 8192.0  # eps(delta) above this is an error (the pair is almost distinguishable)
_EPS_PAD = 1e-9  # relative pad of a float eps(delta): Newton on log delta to ~1e-13, on a delta(eps) good to ~1e-12
_BLOCK_ENTRIES = 1 << 20  # pieces x components evaluated at a time by _LogDensityEnds (8 MB per array)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)  # as in Mixture1D.components_np
_MARGIN = 1e-13  # widening of float log-density ends, relative to 1 + |value|: above their rounding (_LogDensityEnds)


def _window(p: Mixture1D, q: Mixture1D) -> tuple[float, float]:
    width = max(p.sds + q.sds)
    return min(p.means + q.means) - _WINDOW * width, max(p.means + q.means) + _WINDOW * width


@functools.lru_cache(maxsize=16)
def _scan_logs(p: Mixture1D, q: Mixture1D) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scan points over the window (plus every component mean) and log p, log q there: both orders of the pair
    share them (the window and the points are symmetric in p and q)."""
    lo, hi = _window(p, q)
    xs = np.unique(np.concatenate([np.linspace(lo, hi, _SCAN), p.means, q.means]))
    with np.errstate(divide="ignore"):
        log_p, log_q = _Pair(p, q).log_pdfs(xs)[0]
    return xs, log_p, log_q


@functools.lru_cache(maxsize=16)
def _scan(p: Mixture1D, q: Mixture1D) -> tuple[np.ndarray, np.ndarray]:
    """The scan points and log p - log q there: every eps of the pair shares them."""
    if _order_key(q) < _order_key(p):
        xs, log_q, log_p = _scan_logs(q, p)
    else:
        xs, log_p, log_q = _scan_logs(p, q)
    loss = log_p - log_q
    xs.flags.writeable = loss.flags.writeable = False
    return xs, loss


def _order_key(mix: Mixture1D) -> tuple[tuple[float, ...], ...]:
    """A total order on mixtures, so that (p, q) and (q, p) find one _scan_logs entry."""
    return mix.weights, mix.means, mix.sds


class _Pair:
    """The components of p and q stacked, p's k rows first, for their log densities, slopes and masses at a few points
    in half the numpy calls. Each block gets Mixture1D's own float operations (components_np, log_pdf_np, mass), bit
    for bit, without numpy's Python-level wrappers: these calls are the bulk of the root searches' time."""

    def __init__(self, p: Mixture1D, q: Mixture1D):
        self.k = len(p.weights)
        w, self.m, s, self.log_w, self.two_var, self.log_s = (np.concatenate([u, v])
                                                               for u, v in zip(p.arrays, q.arrays, strict=True))
        self.var = np.square(s)
        self.w_row, self.m_row, self.s_row = w[:, 0], self.m[:, 0], s[:, 0]

    def log_pdfs(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows log p(z), log q(z), and the weighted component logs they sum (rows of components_np). Call under
        np.errstate(divide="ignore"): log 0 where every component underflows."""
        k, comp = self.k, z - self.m  # then in place: log_w - (z - m)^2 / two_var - log_s - _HALF_LOG_2PI
        np.square(comp, out=comp)
        np.divide(comp, self.two_var, out=comp)
        np.subtract(self.log_w, comp, out=comp)
        np.subtract(comp, self.log_s, out=comp)
        np.subtract(comp, _HALF_LOG_2PI, out=comp)
        top = np.concatenate([np.maximum.reduce(comp[:k], axis=0, keepdims=True),
                              np.maximum.reduce(comp[k:], axis=0, keepdims=True)])
        top = np.where(np.isfinite(top), top, 0.0)  # then backend.log_sum_exp's shifted sum, block by block
        shifted = np.empty_like(comp)
        np.subtract(comp[:k], top[0], out=shifted[:k])
        np.subtract(comp[k:], top[1], out=shifted[k:])
        np.exp(shifted, out=shifted)
        sums = np.concatenate([np.add.reduce(shifted[:k], axis=0, keepdims=True),
                               np.add.reduce(shifted[k:], axis=0, keepdims=True)])
        return top + np.log(sums), comp

    def loss(self, x: np.ndarray) -> np.ndarray:
        """log p - log q at the points x (under np.errstate(divide="ignore"))."""
        logs = self.log_pdfs(x)[0]
        return logs[0] - logs[1]

    def loss_and_slope(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log p - log q at the points x, and its derivative (each log density's is its components' (m - x)/s^2
        averaged with their posterior weights); under np.errstate(divide="ignore", invalid="ignore")."""
        k, (logs, comp) = self.k, self.log_pdfs(x)
        post = np.empty_like(comp)
        np.subtract(comp[:k], logs[0], out=post[:k])
        np.subtract(comp[k:], logs[1], out=post[k:])
        np.exp(post, out=post)
        np.multiply(post, self.m - x, out=post)
        np.divide(post, self.var, out=post)
        return logs[0] - logs[1], np.add.reduce(post[:k], axis=0) - np.add.reduce(post[k:], axis=0)

    def masses(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P((a_j, b_j)) and Q((a_j, b_j)) for each j (Mixture1D.mass of each: Phi differences on the side of each
        mean where they do not cancel)."""
        u, v = (a[:, None] - self.m_row) / self.s_row, (b[:, None] - self.m_row) / self.s_row
        terms = self.w_row * np.where(u > 0, ndtr(-u) - ndtr(-v), ndtr(v) - ndtr(u))
        return np.add.reduce(terms[:, :self.k], axis=1), np.add.reduce(terms[:, self.k:], axis=1)


@functools.lru_cache(maxsize=16)
def _pair(p: Mixture1D, q: Mixture1D) -> _Pair:
    return _Pair(p, q)


def _refine(pair: _Pair, eps: float, lo: np.ndarray, hi: np.ndarray, v_lo: np.ndarray,
            v_hi: np.ndarray) -> np.ndarray:
    """Roots of log p - log q = eps, one in each bracket (lo_j, hi_j) whose ends' values v_lo, v_hi (of log p -
    log q - eps) differ in sign, all at once: from the secant point, Newton steps kept inside the shrinking brackets
    (bisection where a step would leave), until every last step was a Newton step below _NEWTON_TOL (1 + |x|) (its
    own error is then of the order of that step squared) or every bracket is below _XTOL (1 + |x|). Call under
    np.errstate(divide="ignore", invalid="ignore"): a zero slope makes a Newton step inf or NaN (then bisection)."""
    lo_positive = v_lo > 0
    x = lo + (hi - lo) * (v_lo / (v_lo - v_hi))
    x = np.where((x > lo) & (x < hi), x, (lo + hi) / 2)
    for _ in range(_STEPS):
        value, slope = pair.loss_and_slope(x)
        value = value - eps
        lo_side = (value > 0) == lo_positive
        lo, hi = np.where(lo_side, x, lo), np.where(lo_side, hi, x)
        newton = x - value / slope
        inside = (newton >= lo) & (newton <= hi)
        new = np.where(inside, newton, (lo + hi) / 2)
        scale = 1 + np.abs(new)
        if ((inside & (np.abs(new - x) <= _NEWTON_TOL * scale)) | (hi - lo <= _XTOL * scale)).all():
            return new
        x = new
    return x


def _roots(p: Mixture1D, q: Mixture1D, eps: float) -> np.ndarray:
    """Sign changes of log p - log q - eps over the window (the float guess of A*'s ends), ascending."""
    xs, loss = _scan(p, q)
    positive = loss - eps > 0
    i = np.nonzero(positive[:-1] != positive[1:])[0]
    if not i.size:
        return xs[:0]
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0 in _Pair.log_pdfs, 0/0 in a Newton step
        return _refine(_pair(p, q), eps, xs[i], xs[i + 1], loss[i] - eps, loss[i + 1] - eps)


def _panels(p: Mixture1D, q: Mixture1D, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrays a, b, positive of the panels between consecutive roots, the outer ones unbounded; positive: the sign
    of log p - log q - eps at the panel's middle (or 1 inside its finite end)."""
    cuts = np.concatenate([[-math.inf], _roots(p, q, eps), [math.inf]])
    a, b = cuts[:-1], cuts[1:]
    with np.errstate(invalid="ignore"):
        mid = np.where(np.isfinite(a) & np.isfinite(b), (a + b) / 2, np.where(np.isfinite(b), b - 1, a + 1))
    mid = np.where(np.isfinite(mid), mid, 0.0)
    with np.errstate(divide="ignore"):
        return a, b, _pair(p, q).loss(mid) > eps


def _delta_and_slope(p: Mixture1D, q: Mixture1D, eps: float) -> tuple[float, float]:
    """delta(eps) and its derivative -e^eps Q(A*), floats (A* is optimal: moving its ends changes nothing to first
    order)."""
    a, b, positive = _panels(p, q, eps)
    total, slope = 0.0, 0.0
    p_masses, q_masses = _pair(p, q).masses(a[positive], b[positive])
    for p_mass, q_mass in zip(p_masses.tolist(), q_masses.tolist(), strict=True):
        weighted = math.exp(eps + math.log(q_mass)) if q_mass > 0 else 0.0
        total += p_mass - weighted
        slope -= weighted
    return max(0.0, total), slope


def delta_float(p: Mixture1D, q: Mixture1D, eps: float) -> float:
    """delta(eps) = sup_A P(A) - e^eps Q(A), floats."""
    return _delta_and_slope(p, q, eps)[0]


@functools.lru_cache(maxsize=64)  # epsilon_truth's value and enclose_epsilon's float root are the same solve
def epsilon_float(p: Mixture1D, q: Mixture1D, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta, floats: Newton steps on log delta(eps) from eps = 0, kept inside
    the bracket once one is known (bisection where a step leaves it or does not halve the step before last); it ends
    when a Newton step is below _EPS_NEWTON eps + 1e-15 (its own error is then of the order of that step squared) or
    the bracket below 1e-14 + 1e-13 eps (brentq's tolerance before)."""
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta!r}")
    log_target = math.log(delta)
    lo, hi, x, steps = 0.0, math.inf, 0.0, [math.inf, math.inf]
    for _ in range(_EPS_STEPS):
        d, slope = _delta_and_slope(p, q, x)
        if x == 0.0 and d <= delta:
            return 0.0
        value = math.log(d) - log_target if d > 0 else -745.0 - log_target
        if value > 0:
            lo = x
        else:
            hi = x
        if value > 0 and x >= _EPS_MAX:
            raise ParameterError(f"eps(delta) exceeds {_EPS_MAX:g}: the pair is (almost) distinguishable")
        newton = min(x - value * d / slope, _EPS_MAX) if d > 0 and slope < 0 else math.nan
        if lo < newton < hi and abs(newton - x) <= steps[-2] / 2:
            if abs(newton - x) <= _EPS_NEWTON * newton + 1e-15:
                return newton
            new = newton
        else:
            new = (lo + hi) / 2 if hi < math.inf else min(max(2 * x, 1.0), _EPS_MAX)
        if hi - lo <= 1e-14 + 1e-13 * new:
            return new
        steps.append(abs(new - x))
        x = new
    raise ArithmeticError(f"eps(delta) did not converge in {_EPS_STEPS} steps near {x!r}")


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


class _LogDensityEnds:
    """Lower and upper ends of log(sqrt(2 pi) density) of `mix` over pieces [a_j, b_j], widened by _MARGIN.

    Each component's density is smallest at the end farther from its mean and largest at the mean (if inside) or
    the nearer end; a log-sum-exp of per-component ends bounds the mixture. For n components the float evaluation
    errs by less than 2^-53 (7 |value| + 2 n + 2 + 6 log n + 7 L), L the largest |log w_i| + |log s_i| (the
    roundings of z^2/2 and of the logs, weighted by the log-sum-exp's softmax, plus its own bound): inside the margin
    up to hundreds of components, and the margin grows by the excess beyond that. The mixture's constants are
    formed once: `_unproven_cost` asks for the ends of a few pieces in each of its many refinement rounds."""

    def __init__(self, mix: Mixture1D):
        self.m, self.s = np.array(mix.means), np.array(mix.sds)
        self.lw = np.log(mix.weights) - np.log(mix.sds)
        n, size = len(mix.weights), float(np.max(np.abs(np.log(mix.weights)) + np.abs(np.log(mix.sds))))
        self.excess = max(0.0, 2.0**-52 * (2 * n + 2 + 6 * math.log(n) + 7 * size) - _MARGIN)  # twice the constant

    def __call__(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = max(1, _BLOCK_ENTRIES // len(self.m))  # pieces x components at a time: memory stays bounded
        if len(a) <= rows:
            low, high = self._block(a, b)
        else:
            low, high = np.empty(len(a)), np.empty(len(a))
            for i in range(0, len(a), rows):
                low[i:i + rows], high[i:i + rows] = self._block(a[i:i + rows], b[i:i + rows])
        return (low - (_MARGIN * (1 + np.abs(low)) + self.excess),
                high + (_MARGIN * (1 + np.abs(high)) + self.excess))

    def _block(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        da, db = (a[:, None] - self.m) / self.s, (b[:, None] - self.m) / self.s
        abs_a, abs_b = np.abs(da), np.abs(db)
        far = np.maximum(abs_a, abs_b)
        near = np.where((da <= 0) & (db >= 0), 0.0, np.minimum(abs_a, abs_b))
        return _log_sum_exp_rows(self.lw - far**2 / 2), _log_sum_exp_rows(self.lw - near**2 / 2)


def _log_sum_exp_rows(x: np.ndarray) -> np.ndarray:
    """log_sum_exp(x, axis=1); with one column that is the column itself, bit for bit (log_sum_exp's shifted sum of
    one term is exp(0) = 1, or NaN where the term is NaN), without its array operations."""
    return x[:, 0] if x.shape[1] == 1 else log_sum_exp(x, axis=1)


def _unproven_cost(p: Mixture1D, q: Mixture1D, eps: float, pieces: np.ndarray, tol: float) -> float:
    """Refine the pieces (rows a, b, positive) until each either has a proven sign agreeing with its panel or
    can add at most `tol`; return the sum of what the unproven ones can add (rounded up)."""
    total, spent = 0.0, 0
    p_ends, q_ends = _LogDensityEnds(p), _LogDensityEnds(q)
    for _ in range(200):
        if len(pieces) == 0:
            return total
        spent += len(pieces)
        a, b, pos = pieces[:, 0], pieces[:, 1], pieces[:, 2] > 0
        p_lo, p_hi = p_ends(a, b)
        q_lo, q_hi = q_ends(a, b)
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


def _weight_shift(rho: arb) -> float:
    """A float at or above r = log((1 + rho) / (1 - rho)), the eps shift of weights off by rho relative."""
    return math.nextafter(float(((1 + rho) / (1 - rho)).log().upper()), math.inf)


def _panel_list(p: Mixture1D, q: Mixture1D, eps: float) -> list[tuple[float, float, bool]]:
    """The rows (a, b, positive) of _panels, as Python numbers."""
    return list(zip(*(v.tolist() for v in _panels(p, q, eps)), strict=True))


def _positive_mass(p: Mixture1D, q: Mixture1D, panels: list[tuple[float, float, bool]], e: arb) -> arb:
    """P(A) - e^eps Q(A) in Arb, A the union of the positive panels (the float guess of A*; e = e^eps)."""
    return sum((_arb_mass(p, a, b) - e * _arb_mass(q, a, b) for a, b, pos in panels if pos), arb(0))


def delta_lower(p: Mixture1D, q: Mixture1D, eps: float, prec: int = 128, weight_error: float = 0.0) -> arb:
    """The proven lower end of enclose_delta alone (an Arb ball of radius 0): P(A) - e^eps Q(A) <= delta(eps) for any
    A, here the float guess of A*, without the sign proofs that only the upper end needs (`weight_error` as there)."""
    with ctx.workprec(prec):
        if weight_error > 0:
            rho = arb(weight_error)
            lower = delta_lower(p, q, eps + _weight_shift(rho), prec) * (1 - rho)
        else:
            lower = _positive_mass(p, q, _panel_list(p, q, eps), arb(eps).exp())
        return max(arb(lower.lower()), arb(0))


def enclose_delta(p: Mixture1D, q: Mixture1D, eps: float, prec: int = 128, rel_tol: float = 1e-9,
                  weight_error: float = 0.0) -> tuple[arb, arb]:
    """Proven lower <= delta(eps) <= upper (Arb balls of radius 0), for P || Q.

    `weight_error` = rho bounds |w_i - w~_i| / w~_i between the laws' exact weights and the float ones that `p` and
    `q` carry: then (1 - rho) P~(A) <= P(A) <= (1 + rho) P~(A) for every A, likewise Q, so with r = log((1 + rho) /
    (1 - rho)), (1 - rho) delta~(eps + r) <= delta(eps) <= (1 + rho) delta~(eps - r): relative, however large e^eps."""
    if weight_error > 0:
        with ctx.workprec(prec):
            rho = arb(weight_error)
            upper = enclose_delta(p, q, eps - _weight_shift(rho), prec, rel_tol)[1] * (1 + rho)
            return delta_lower(p, q, eps, prec, weight_error), arb(upper.upper())
    with ctx.workprec(prec):
        e = arb(eps).exp()
        panels = _panel_list(p, q, eps)
        lower = _positive_mass(p, q, panels, e)
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


def enclose_epsilon(p: Mixture1D, q: Mixture1D, delta: float, prec: int = 128,
                    weight_error: float = 0.0) -> Enclosure:
    """A proven bracket on the smallest eps >= 0 with delta_{P||Q}(eps) <= delta, around the float root
    (`weight_error` as for enclose_delta)."""
    e = epsilon_float(p, q, delta)
    if e == 0.0:
        if enclose_delta(p, q, 0.0, prec, weight_error=weight_error)[1] <= arb(delta):
            return Enclosure(arb(0), arb(0), "delta(0) = TV <= delta proven in Arb", prec)
        e = 1e-12
    for rel in (1e-10, 1e-7, 1e-4, 1e-2):
        lo, hi = max(e * (1 - rel), 0.0), e * (1 + rel)
        below = lo == 0.0 or delta_lower(p, q, lo, prec, weight_error) > arb(delta)
        if below and enclose_delta(p, q, hi, prec, weight_error=weight_error)[1] <= arb(delta):
            return Enclosure(arb(lo), arb(hi), "hockey stick of the mixture pair bracketed in Arb "
                             "(proven sign pieces, Phi differences) on both sides of the float root", prec)
    raise NotEnclosable(f"could not bracket eps(delta) near {e!r} rigorously")


def enclose_larger_epsilon(p: Mixture1D, q: Mixture1D, delta: float, prec: int = 128,
                           weight_error: float = 0.0) -> Enclosure:
    """The larger of both orders' eps(delta) (a pair of laws under add/remove or replace-one), enclosed: each order's
    bracket where it can be had; an order whose bracket cannot be (a degenerate pair: N(0, v) against (1 - q) N(0, v)
    + q N(mu, v) at eps near -log(1 - q)) is proven to lie below the other's lower end instead (its delta there is
    <= delta)."""
    found, failed = [], []
    for x, y in ((p, q), (q, p)):
        try:
            found.append(enclose_epsilon(x, y, delta, prec, weight_error=weight_error))
        except NotEnclosable as err:
            failed.append((x, y, err))
    if not found:
        raise failed[0][2]
    best = max(found, key=lambda e: float(e.lower))
    below = math.nextafter(float(best.lower), -math.inf)  # a float at or below the proven lower end
    for x, y, err in failed:
        if below < 0 or not enclose_delta(x, y, below, prec, weight_error=weight_error)[1] <= arb(delta):
            raise err
    lower = max((e.lower for e in found), key=float)
    upper = max((e.upper for e in found), key=float)
    return Enclosure(lower, upper, best.method, prec)


def epsilon_truth(p: Mixture1D, q: Mixture1D, delta: float, what: str, weight_error: float = 0.0) -> Truth:
    """The tight eps(delta) of the pair, the larger of both orders: the float root, padded by _EPS_PAD relative (the
    float filter's interval), with `enclose_larger_epsilon` as its rigorous enclosure."""
    value = max(epsilon_float(p, q, delta), epsilon_float(q, p, delta))
    pad = _EPS_PAD * value + 1e-15
    return Truth(value, max(value - pad, 0.0), value + pad, Method.EXACT, what,
                 enclose=lambda prec: enclose_larger_epsilon(p, q, delta, prec, weight_error))
