"""Rigorous two-sided PLD bracket on the tight delta(eps) of the T-fold Poisson-subsampled Gaussian mechanism.

P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2) (sensitivity 1, add/remove). Order "add" (P || Q): the loss
L(x) = log(1 - q + q e^((2x-1)/(2 s^2))) under x ~ P; order "remove" (Q || P): -L(x) under x ~ Q, written as an
increasing loss of z = -x. delta(eps) = E[(1 - e^(eps - S))_+], S the sum of T i.i.d. losses, is increasing in S, so
rounding each per-step loss up (down) to a grid of width h gives an upper (lower) bound: the pessimistic / optimistic
privacy-loss distributions of Meiser & Mohammadi 2018 ("Tight on budget?"), Koskela et al. 2020 ("Computing tight
differential privacy guarantees using FFT") and Doroshenko et al. 2022 ("Connect the dots").

One composition serves both sides: the per-step "core" puts the mass of the cell between the cuts X((k-1)h), X(kh)
on index k; the upper grid reads index j as loss j h, the lower grid as (j - T) h. Mass outside the core and the
composed windows (tails, trimmed ends) is dropped: that is exact for the lower bound (a sub-measure) and costs at
most its mass, 1 - sum(core^T), for the upper one. Floating point is accounted for explicitly:

- cuts: the computed cut x_k and the computed CDF value V_k (F on the left half, the survival function on the
  right) define an exact cut x'_k with V(x'_k) = V_k; |L(x'_k) - k h| <= eta (first-order error analysis of the
  inversion and of V, safety factor 4; ASSUMPTION: scipy.special.ndtr(a) has relative error <= 16u(1 + a^2),
  checked against mpmath in tests/truth/test_pld.py, with u = 2^-53). The cell masses V_k - V_(k-1) are then the
  exact masses of the cells between exact cuts up to rounding of the subtraction (<= 4u in l1 per step); S is
  shifted by T eta: eps - T eta for the upper bound, eps + T eta for the lower one.
- FFT convolution: ASSUMPTION (Higham, Accuracy and Stability, 2nd ed., Thm 24.2) a power-of-two FFT with unit
  roundoff u has normwise relative error <= eps_n = 8 log2(n) u; then ||fl(a * b) - a * b||_2 <=
  1.25 (2 eps_n + 4u) (||a||_2 ||b||_1 + ||a||_1 ||b||_2), and l1 <= sqrt(length) l2 on the kept window. Squarings
  whose result is copied into >= 4 later factors run in x87 long double (u = 2^-64) where numpy has it. l1 errors
  propagate through convolution additively (||e * b||_1 <= ||e||_1 ||b||_1); the total `budget` widens both bounds
  (every term (1 - e^(eps - S))_+ lies in [0, 1]). Both assumptions are checked in tests/truth/test_pld.py.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import fft as sfft
from scipy.special import ndtr, ndtri

from verify.errors import ParameterError, ResourceLimitError
from verify.limits import require_memory

_U = 2.0**-53
_MASS_ERROR = 3 * _U  # a float cell mass is the exact one within this relative error (`_cell_masses`)
_TAIL = 1e-14  # each per-step tail left out of the core has mass below _TAIL / (8 T)
_MAX_CELLS = 1 << 23  # largest grid (and half the largest FFT) the accountant will allocate
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# x87 80-bit long double (u = 2^-64) where numpy has it (x86); elsewhere every FFT runs in double
_WIDE = np.longdouble if np.finfo(np.longdouble).nmant == 63 else None
_SIGMA_RANGE = (1e-100, 1e100)
_CACHE_BYTES = 256 << 20  # composed PLDs kept (least recently used dropped first); a larger one is not kept


@dataclass(frozen=True)
class PLDBracket:
    """lower <= tight value <= upper (Koskela et al. 2020; Doroshenko et al. 2022): `grid_width` h of the loss
    grid, `window` the composed grid-index window (upper grid: index j is loss j h; lower grid: (j - steps) h, union
    over the orders used), `error_budget` the l1 floating-point and truncation budget already included."""

    lower: float
    upper: float
    grid_width: float
    window: tuple[int, int]
    error_budget: float


@dataclass(frozen=True)
class _Composed:
    """core^T on indices j0 .. j0 + len(p) - 1 as computed from the float cell masses, with the l1 bound `budget` on
    its floating-point error against their exact composition, the upper grid's loss values, the per-step cut error
    eta and the dropped mass `rest` (an upper bound, budget included). Each float cell mass is the exact one times
    1 + theta, |theta| <= `mass_error`, so the exact composition lies between (1 + mass_error)^-T and
    (1 - mass_error)^-T times theirs, elementwise (`scale_low`, `scale_up`): a relative error, never a floor.

    Concentration (the rounding offsets of the T steps are independent): the upper grid reads index j as loss j h,
    above the true loss sum by sum_i U_i, U_i = K_i h - L_i in [-eta, h + eta]; the lower one as (j - T) h, below
    the reduced loss sum (each output reduced to its cell, a post-processing) by sum_i (l_(K_i) - (K_i - 1) h) in the
    same range. Their means are at least `shift_up` and `shift_low` (about T h / 2 each), and by Hoeffding each sum
    falls t below its mean with probability at most exp(-2 t^2 / `spread`), spread = sum_i span_i^2. So
    delta <= G(eps + shift_up - t) + ... + exp(-2 t^2 / spread) and delta >= G(eps + T h - shift_low + t) - ... -
    exp(-2 t^2 / spread): a bracket about 2 t ~ h sqrt(2 T log(1/delta)) wide in eps instead of T h. Each bound is
    also taken without it (t = infinity: the offsets' hard range) where that is tighter."""

    p: np.ndarray
    j0: int
    h: float
    steps: int
    eta: float
    budget: float
    rest: float
    loss: np.ndarray
    shift_up: float
    shift_low: float
    spread: float
    mass_error: float
    budget_goal: float = 0.0  # the goal it was composed for (0: the most precise arithmetic at hand)

    @property
    def scale_up(self) -> float:
        return math.exp(-self.steps * math.log1p(-self.mass_error)) * (1 + 4 * _U)

    @property
    def scale_low(self) -> float:
        return math.exp(-self.steps * math.log1p(self.mass_error)) * (1 - 4 * _U)

    def _up(self, g: float) -> float:
        return min(1.0, self.scale_up * (g + self.budget + self.slack) + self.rest)

    def _low(self, g: float) -> float:
        return max(0.0, self.scale_low * (g - self.budget - self.slack))

    def deviation(self, tail: float) -> float:
        """t with exp(-2 t^2 / spread) <= tail (rounded up)"""
        return math.sqrt(self.spread * math.log(1 / tail) / 2) * (1 + 1e-12)

    def upper_at(self, eps: float, tail: float) -> float:
        """the concentration upper bound on delta(eps), t chosen for the probability `tail`"""
        return min(1.0, self._up(self.g(eps + self.shift_up - self.deviation(tail))) + tail)

    def lower_at(self, eps: float, tail: float) -> float:
        """the concentration lower bound on delta(eps), t chosen for the probability `tail`"""
        return max(0.0, self._low(self.g(eps + self.steps * self.h - self.shift_low + self.deviation(tail))) - tail)

    @property
    def slack(self) -> float:
        """a bound on |G_float - G_exact|: rounding of the loss values and expm1 arguments (<= 4u(1 + |l|) a
        term) and numpy's pairwise sum (<= (log2 n + 32) u relative), doubled"""
        big = float(max(abs(self.loss[0]), abs(self.loss[-1]))) if len(self.loss) else 0.0
        return 8 * _U * (2 + 2 * big + math.log2(len(self.p) + 2) + 32) * (1 + self.budget)

    def g(self, e: float) -> float:
        """G(e) = sum_j p_j (1 - e^(e - l_j))_+ on the upper grid."""
        start = int(np.searchsorted(self.loss, e, side="right"))
        return float(np.sum(self.p[start:] * -np.expm1(e - self.loss[start:])))

    def upper_hard(self, eps: float) -> float:
        """the upper bound on delta(eps) from the offsets' hard range (each U_i >= -eta)"""
        return self._up(self.g(eps - self.steps * self.eta))

    def lower_hard(self, eps: float) -> float:
        """the lower bound on delta(eps) from the offsets' hard range (each reduced offset >= -eta)"""
        return self._low(self.g(eps + self.steps * (self.eta + self.h)))

    def upper(self, eps: float) -> float:
        return min(self.upper_hard(eps), self.upper_at(eps, _tail_for(self.g(eps + self.shift_up))))

    def lower(self, eps: float) -> float:
        return max(self.lower_hard(eps), self.lower_at(eps, _tail_for(self.g(eps + self.steps * self.h
                                                                                - self.shift_low))))

    @cached_property
    def _g_grid(self) -> np.ndarray:
        """G at every grid loss l_m, approximately: sum_(j>=m) p_j - e^(l_m) sum_(j>=m) p_j e^(-l_j), the second
        sum as a reversed log-cumulative-sum-exp"""
        with np.errstate(divide="ignore"):
            log_terms = np.log(self.p) - self.loss
        log_tail = np.logaddexp.accumulate(log_terms[::-1])[::-1]
        return np.cumsum(self.p[::-1])[::-1] - np.exp(np.minimum(self.loss + log_tail, 700.0))

    def solve(self, target: float) -> float:
        """the e with G(e) = target (G is continuous, decreasing, from sum(p) to 0); -inf / inf when none."""
        if target <= 0:
            return math.inf
        if target >= float(np.sum(self.p)):
            return -math.inf
        # the smallest m with G(l_m) <= target: located on the whole grid at once (`_g_grid`), then confirmed
        # with G itself (G is decreasing; the answer is only a starting point for the checked searches)
        below = np.flatnonzero(self._g_grid <= target)
        lo = int(below[0]) if len(below) else len(self.p) - 1
        while lo < len(self.p) - 1 and self.g(self.loss[lo]) > target:
            lo += 1
        while lo > 0 and self.g(self.loss[lo - 1]) <= target:
            lo -= 1
        ref = self.loss[lo] - self.h  # on [l_(m-1), l_m]: G(e) = A - e^(e - ref) B
        a = float(np.sum(self.p[lo:]))
        b = float(np.sum(self.p[lo:] * np.exp(ref - self.loss[lo:])))
        return ref + math.log(max(a - target, 1e-300) / b)


_TAIL_SHARE = 1e-3  # the concentration bound spends this share of delta on the deviation's probability


def _tail_for(delta: float) -> float:
    """the deviation probability spent at a delta of about `delta`"""
    return min(0.5, max(delta * _TAIL_SHARE, 1e-300))


def _check(eps, q, sigma, steps, eps_tolerance) -> int:
    for name, v in (("eps", eps), ("q", q), ("sigma", sigma), ("eps_tolerance", eps_tolerance)):
        if v is not None and not math.isfinite(v):
            raise ParameterError(f"{name} must be a finite number, got {v}")
    if not 0 < q <= 1:
        raise ParameterError(f"sampling rate q must lie in (0, 1], got {q}")
    if not sigma > 0:
        raise ParameterError(f"noise std sigma must be > 0, got {sigma}")
    if not _SIGMA_RANGE[0] <= sigma <= _SIGMA_RANGE[1]:  # sigma^2 and 1/sigma^2 must stay normal doubles
        raise ResourceLimitError(f"noise std sigma={sigma:g} lies outside [{_SIGMA_RANGE[0]:g}, {_SIGMA_RANGE[1]:g}], "
                                 "the range the privacy-loss bracket represents in double precision")
    if not eps_tolerance > 0:
        raise ParameterError(f"eps_tolerance must be > 0, got {eps_tolerance}")
    try:
        t = operator.index(steps)
    except TypeError:
        if not (isinstance(steps, float) and steps.is_integer()):
            raise ParameterError(f"steps must be an integer >= 1, got {steps}") from None
        t = int(steps)
    if isinstance(steps, bool) or t < 1:
        raise ParameterError(f"steps must be an integer >= 1, got {steps}")
    return t


def _check_event(phase, eps_tolerance) -> int:
    """`_check` for a phase given as an object with `step_pmf(order, h, steps)` (verify.truth.pld_events): it
    validated its own parameters; its `steps` and the tolerance are checked here"""
    _check(None, 0.5, 1.0, phase.steps, eps_tolerance)
    return int(phase.steps)


def _phase_key(phase) -> tuple | object:
    """a phase's identity in the cache: (q, sigma, steps) as numbers, or the (frozen, hashable) phase object"""
    return phase if hasattr(phase, "step_pmf") else (float(phase[0]), float(phase[1]), int(phase[2]))


def _loss(order: str, q: float, s: float, x: float) -> float:
    """the float per-step loss at x (order "add") or z (order "remove"); used only to choose windows"""
    if order == "remove":
        return -_loss("add", q, s, -x)
    t = (2 * x - 1) / (2 * s * s)
    return t if q == 1 else float(np.logaddexp(math.log1p(-q), math.log(q) + t))


def _cuts(order: str, q: float, s: float, h: float, ks: np.ndarray):
    """cut positions x_k (order "add") or z_k = -X(-kh) (order "remove") for loss k h, the loss error eta_x of the
    computed inversion, and log(dLoss/dx / density) at the cut (for the CDF error)."""
    sign = 1.0 if order == "add" else -1.0
    loss = sign * (ks * h)
    s2 = s * s
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if q == 1:
            w = np.zeros_like(loss)
            lam, log_r = loss, np.zeros_like(loss)
        else:
            w = (1 - q) * np.exp(-loss)
            log_r = np.where(w < 1, np.log1p(-np.minimum(w, 1)), -np.inf)
            lam = loss + log_r - math.log(q)
        x = np.where(w < 1, s2 * lam + 0.5, -np.inf)
        finite = np.isfinite(x)
        eta_x = 16 * _U * (1 + np.abs(loss) + np.where(
            finite, np.abs(log_r) + abs(math.log(q)) + np.abs(lam) + np.abs(x) / s2, 0.0))
        log_df = log_r - math.log(s) + x * x / (2 * s2) + _HALF_LOG_2PI - (loss if order == "add" else 0.0)
    return sign * x, eta_x, log_df


def _kappa(a: np.ndarray) -> np.ndarray:
    """relative error bound of ndtr at a computed argument a: 16u(1 + a^2) for ndtr itself (the assumption) plus
    2u(a^2 + 3|a|) for the rounding of a (Mills' ratio), rounded up."""
    a = np.where(np.isfinite(a), np.abs(a), 0.0)
    return 24 * _U * (1 + a + a * a)


def _components(order: str, q: float) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(weight, mean) of the Gaussian components (std s) of the base law (the one the loss is distributed under) and
    of the other law, in the coordinate of the cuts: "add" x ~ P = (1-q) N(0, s^2) + q N(1, s^2) against
    Q = N(0, s^2); "remove" z = -x ~ Q against P, whose components sit at 0 and -1. e^(-loss) = other / base."""
    mixture = [(w, m) for w, m in ((1 - q, 0.0), (q, 1.0)) if w > 0]
    if order == "add":
        return mixture, [(1.0, 0.0)]
    return [(1.0, 0.0)], [(w, -m) for w, m in mixture]


def _cdfs(comps: list[tuple[float, float]], s: float, x: np.ndarray):
    """the mixture's CDF F and survival function S at x, and a relative error bound of each (per component kappa,
    plus 4u for the weighted sum)"""
    f_cdf, s_cdf, kap = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for w, m in comps:
        with np.errstate(invalid="ignore"):
            a = (x - m) / s
        f_cdf += w * ndtr(a)
        s_cdf += w * ndtr(-a)
        kap = np.maximum(kap, _kappa(a))
    return f_cdf, s_cdf, kap + 4 * _U


def _cut_values(order: str, q: float, s: float, h: float, ks: np.ndarray):
    """cuts x_k for losses k h, the computed CDF values v_k there (F where `left`, i.e. F <= 1/2, else the survival
    function S) and eta_k >= |loss(x'_k) - k h| for the exact cut x'_k with F(x'_k) = v_k (S(x'_k) = v_k); then the
    other law's CDF (same side) at the float cut, w_k, and e_k >= |w_k - W(x'_k)|, W the other law's exact CDF: its
    own rounding plus the move from x_k to x'_k, where the density ratio other/base is e^(-loss) <= e^(-(k h - eta))."""
    x, eta_x, log_df = _cuts(order, q, s, h, ks)
    base, other = _components(order, q)
    f_cdf, s_cdf, kap = _cdfs(base, s, x)
    left = f_cdf <= 0.5
    v = np.where(left, f_cdf, s_cdf)
    finite = np.isfinite(x)
    if np.any(finite & (v < 1e-290)):
        raise ResourceLimitError("a cut of the privacy-loss grid has a CDF value below 1e-290, where the "
                                 "double-precision grid cannot bound its error (the limit of the PLD engine)")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        eta_f = np.where(finite, 4 * kap * np.exp(np.log(v) + log_df), 0.0)
    eta = eta_x + eta_f
    of_cdf, os_cdf, okap = _cdfs(other, s, x)
    w = np.where(left, of_cdf, os_cdf)
    with np.errstate(over="ignore", invalid="ignore"):  # the order's loss at cut k is k h (both orders)
        moved = np.exp(eta - ks * h) * kap * v * (1 + 1e-9)
        err = np.where(finite, okap * w + moved, 0.0)
    return x, v, left, eta, w, err


def _step_range(order: str, q: float, s: float, h: float, steps: int) -> tuple[int, int]:
    """first and last cut index of the per-step core: each tail beyond it has mass below TAIL / (8 T)"""
    z = -float(ndtri(_TAIL / (8 * steps)))
    lo, hi = (-z * s, 1 + z * s) if order == "add" else (-z * s, z * s)
    return math.floor(_loss(order, q, s, lo) / h), math.ceil(_loss(order, q, s, hi) / h)


def _step_pmf(order: str, q: float, s: float, h: float, steps: int) -> _Step:
    """per-step core masses (index j0 + i for cell i), their error bounds, the loss error eta of the cuts and the
    bounds on the mean rounding offsets."""
    k_lo, k_hi = _step_range(order, q, s, h, steps)
    if k_hi - k_lo > _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the per-step grid needs {k_hi - k_lo} > {_MAX_CELLS} "
                                 "cells")
    require_memory(8.0 * 16 * (k_hi - k_lo + 2), "the privacy-loss distribution's per-step grid")
    ks = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    x, v, left, eta_k, w, w_err = _cut_values(order, q, s, h, ks)
    n_left = int(np.searchsorted(~left, True))  # F is increasing along the cuts: a prefix uses F, the rest S
    f_cdf, s_cdf = v[:n_left], v[n_left:]
    # consecutive infinite cuts coincide (an empty cell is exact); finite cuts must move the CDF strictly
    if np.any((np.diff(f_cdf) <= 0) & np.isfinite(x[1:n_left])) or np.any(
            (np.diff(s_cdf) >= 0) & np.isfinite(x[n_left:-1])):
        raise ResourceLimitError("eps_tolerance too small for double-precision cell masses (a CDF step below the "
                                 "rounding of the CDF)")
    eta = float(np.max(eta_k))
    if not math.isfinite(eta) or eta > 1e-2 * h:
        raise ResourceLimitError(f"cut error {eta} is not small against the grid width {h}")
    mass, switch = _cell_masses(v, n_left)
    if not np.any(mass > 0):
        raise ResourceLimitError("no cell of the per-step grid carries mass in double precision (the per-step loss "
                                 "lies below the grid's resolution)")
    other, _ = _cell_masses(w, n_left)
    other_err = w_err[:-1] + w_err[1:] + 2 * _U * (w[:-1] + w[1:] + switch)
    shifts = _mean_shifts(mass, other, other_err, ks[1:], h, eta)
    outside = (v[0] if left[0] else 1 - v[0]) + (v[-1] if not left[-1] else 1 - v[-1])
    return _Step(mass, k_lo + 1, eta, shifts, steps, outside * (1 + 4 * _U))


def _cell_masses(v: np.ndarray, n_left: int) -> tuple[np.ndarray, np.ndarray]:
    """masses of the cells between consecutive cuts from CDF values (F on the first n_left cuts, S after), and the
    indicator of the one cell computed as 1 - F - S; each mass is the exact difference of the exact CDF values within
    3u relative"""
    mass, switch = np.empty(len(v) - 1), np.zeros(len(v) - 1)
    mass[: max(n_left - 1, 0)] = np.diff(v[:n_left])
    mass[n_left:] = -np.diff(v[n_left:])
    if 0 < n_left < len(v):
        # (1/2 - v) is exact for v in [1/4, 1/2] (Sterbenz) and one rounding below: 3u relative in all
        mass[n_left - 1] = max(0.0, (0.5 - v[n_left - 1]) + (0.5 - v[n_left]))
        switch[n_left - 1] = 1.0
    return mass, switch


@dataclass(frozen=True)
class _Shifts:
    """Per-step lower bounds on the means of the rounding offsets, for the concentration bound of `_Composed`:
    `up` <= E[K h - L] (L the loss, K its cell, U := 0 off the core), `low` <= E[l_K - (K - 1) h] (l_k the loss of
    cell k once the output is reduced to its cell, a post-processing); both offsets lie in [-eta, h + eta], a range of
    width `span`."""

    up: float
    low: float
    span: float


def _mean_shifts(mass: np.ndarray, other: np.ndarray, other_err: np.ndarray, ks: np.ndarray, h: float,
                 eta: float) -> _Shifts:
    """Bounds on the mean rounding offsets from the cell masses B_k (base law) and O_k (other law) between the exact
    cuts: the reduced loss l_k = log(B_k / O_k) lies in [(k-1) h - eta, k h + eta] and, by Hoeffding's lemma on the
    cell, E[L | cell k] <= l_k + span^2 / 8. Every rounding is bounded: B_k is exact up to _MASS_ERROR relative,
    O_k within other_err, logs and products within 4u of their size."""
    span = (h + 2 * eta) * (1 + 8 * _U)
    b_lo = mass / (1 + _MASS_ERROR)
    b_hi = mass / (1 - _MASS_ERROR)
    o_lo, o_hi = other - other_err, other + other_err
    top, bottom = ks * h + eta, (ks - 1) * h - eta
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_hi = np.where((b_hi > 0) & (o_lo > 0), np.log(b_hi) - np.log(o_lo), np.inf)
        log_lo = np.where((b_lo > 0) & (o_hi > 0), np.log(b_lo) - np.log(o_hi), -np.inf)
        pad = 4 * _U * (np.abs(np.log(np.maximum(b_hi, 1e-300))) + np.abs(np.log(np.maximum(o_hi, 1e-300))) + 1)
    l_hi = np.minimum(top, np.where(np.isfinite(log_hi), log_hi + pad, np.inf))
    l_lo = np.maximum(bottom, np.where(np.isfinite(log_lo), log_lo - pad, -np.inf))
    margin = 4 * _U * (np.abs(ks * h) + h + eta + 1)
    c_up = np.maximum(ks * h - l_hi - span * span / 8, -eta) - margin
    c_low = np.maximum(l_lo - (ks - 1) * h, -eta) - margin

    def mean_lower(c: np.ndarray) -> float:
        weights = np.where(c >= 0, mass / (1 + _MASS_ERROR), mass / (1 - _MASS_ERROR))
        terms = weights * c
        return float(np.sum(terms)) - (math.log2(len(c) + 2) + 32) * _U * float(np.sum(np.abs(terms)))

    return _Shifts(mean_lower(c_up), mean_lower(c_low), span)


@dataclass(frozen=True)
class _Step:
    """One phase's per-step core: `mass[i]` on index j0 + i, exact up to relative _MASS_ERROR per cell, the cut
    error eta and the offsets' mean bounds."""

    mass: np.ndarray
    j0: int
    eta: float
    shifts: _Shifts
    steps: int
    outside: float  # the exact mass beyond the first and last cuts (their CDF values, exact at the exact cuts)

    def log_mgf(self, lam: np.ndarray) -> np.ndarray:
        """upper bounds on log sum_i m_i e^(lam i) for the exact masses m (i the cell's position in `mass`), at
        each lam: a shifted log-sum-exp over the cells of positive mass, every rounding bounded (8u of a bound on
        every term's exponent, max |log m_i| + |lam| max i, plus 8u of the shift; the sum's relative (log2 n + 8) u,
        the masses' relative _MASS_ERROR)."""
        live = np.flatnonzero(self.mass > 0)  # a zero mass adds nothing to the sum
        idx = live.astype(np.float64)
        log_m = np.log(self.mass[live])
        # every exponent's size |log m_i + lam i| <= max |log m| + |lam| max i (the 8u per term is taken of this)
        size = float(np.max(np.abs(log_m))) * (1 + 4 * _U)
        reach = float(idx[-1]) if len(idx) else 0.0
        count = (math.log2(len(self.mass)) + 12) * _U
        out = np.empty(len(lam))
        expo = np.empty(len(idx))
        for n, la in enumerate(lam):
            np.multiply(idx, la, out=expo)
            expo += log_m
            top = float(np.max(expo))
            expo -= top
            np.exp(expo, out=expo)
            total = float(np.sum(expo)) / (1 - _MASS_ERROR)
            pad = 8 * _U * (size + abs(float(la)) * reach * (1 + 4 * _U) + abs(top) + 2) + count
            out[n] = top + math.log(total) + pad
        return out


def _position_moments(mass: np.ndarray) -> tuple[float, float]:
    """mean and variance of the cell position under the (float) masses; they only place the window's lam grid"""
    idx = np.arange(len(mass))
    mean = float(np.sum(idx * mass))
    return mean, float(np.sum((idx - mean) ** 2 * mass))


def _window(parts: list[_Step], tail: float) -> tuple[int, int, float]:
    """[lo, hi] on the sum of positions (sum over the steps of each phase's cell position) outside which the exact
    composed sub-measure has mass at most 2 `tail` (Chernoff: mass(S >= b) <= e^(-lam b) prod_i M_i(lam)^T_i for
    lam > 0, and the mirror for lam < 0, minimised over a grid of lam), and the bound on that mass."""
    moments = [_position_moments(p.mass) for p in parts]
    mean = sum(p.steps * m for p, (m, _) in zip(parts, moments, strict=True))
    var = sum(p.steps * v for p, (_, v) in zip(parts, moments, strict=True))
    scale = 1 / math.sqrt(max(var, 1.0))
    lam = scale * np.geomspace(0.05, 20.0, 14)
    top_end = sum(p.steps * (len(p.mass) - 1) for p in parts)
    log_tail = math.log(tail)
    up = sum(p.steps * p.log_mgf(lam) for p in parts)
    down = sum(p.steps * p.log_mgf(-lam) for p in parts)
    hi = min(top_end, math.ceil(float(np.min((up - log_tail) / lam))))
    lo = max(0, math.floor(float(np.max((down - log_tail) / -lam))))
    if not lo <= mean <= hi:  # numerically impossible for a valid bound; keep the window around the mean
        lo, hi = min(lo, math.floor(mean)), max(hi, math.ceil(mean))
    return lo, hi, 2 * tail


def _spectral_power(parts: list[_Step], lo: int, hi: int, budget_goal: float = 0.0) -> tuple[np.ndarray, float]:
    """prod_i (rfft of phase i's masses)^T_i, inverted, on the window [lo, hi] of the position sum (a power-of-two
    circular length N >= hi - lo + 1; the mass outside the window folds onto it, which `_window` bounds), clipped at 0
    and rounded to double; with an l1 bound on its floating-point error.

    ASSUMPTION (the componentwise form of Higham, Accuracy and Stability, 2nd ed., Thm 24.2, whose proof bounds
    every output: each is the exact DFT of the input with every term's factor perturbed by at most (1 + mu)^log2(N)
    - 1): a power-of-two FFT with unit roundoff u computes every spectrum element within eps_N |a|_1 of the exact
    one, eps_N = 1.25 * 8 log2(N) u (u of x87 long double where numpy has it); checked against exact compositions in
    tests/truth/test_pld.py. With the cast to the power's precision u_p, phase i's element k is within
    r_i = (eps_N + u_p (1 + eps_N)) |a_i|_1 of the exact x_ik, so |x_ik| and the computed one are at most
    m_ik = min(|a_i|_1, |x_c,ik| + r_i), and by the mean value theorem |x_c^T - x^T| <= T m^(T - 1) r per element:
    the product over the phases is off by at most D_k = prod_i m_ik^T_i * sum_i T_i r_i / m_ik, tiny wherever the
    composed spectrum is (only the few frequencies near 0 keep |x| near 1), and the l2 norm of D over the full
    spectrum bounds the l1 error on the window (Parseval, and l1 <= sqrt(N) l2 on N positions). The powers (in polar
    form) and the products of the phases (sqrt(5) u each: Brent, Percival & Zimmermann 2007) have the relative errors
    `_polar_power` bounds, where no phase's power is dropped; where one is (|x_c,ik|^T_i < _DROP, set to 0) the
    product is off by at most _DROP prod_(j != i) max(1, |a_j|_1 + r_j)^T_j, at most _DROP C sqrt(N) in l2 over the
    full spectrum. The inverse adds eps_N |z|_2 / sqrt(N) in l2.

    With a `budget_goal` > 0 the transforms run in double first (about 3x faster than long double) and again in long
    double only where that budget exceeds the goal."""
    size = hi - lo + 1
    if size > 2 * _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the composed grid needs {size} > {2 * _MAX_CELLS} cells")
    n = 1 << max(1, (size - 1).bit_length())
    if _WIDE is not None and budget_goal > 0 and _double_floor(parts, n) <= budget_goal:
        out, budget = _spectral_power_in(np.float64, parts, lo, size, n, budget_goal)
        if budget <= budget_goal:
            return out, budget
    return _spectral_power_in(_WIDE or np.float64, parts, lo, size, n, budget_goal)


def _double_floor(parts: list[_Step], n: int) -> float:
    """half of what a double pass of `_spectral_power_in` certainly spends at least, sum_i T_i eps_N |a_i|_1 (its
    D_k at frequency 0, where every |x_ik| is about |a_i|_1 ~ 1): a double pass is skipped, as futile, where this
    already exceeds the goal. It only picks which certified pass runs; no bound depends on it."""
    eps_n = 1.25 * 8 * math.log2(n) * _U
    return 0.5 * sum(p.steps * eps_n * float(np.sum(p.mass)) for p in parts)


def _spectral_power_in(dtype, parts: list[_Step], lo: int, size: int, n: int,
                       budget_goal: float) -> tuple[np.ndarray, float]:
    """`_spectral_power` with transforms of length n in `dtype`"""
    u = float(np.finfo(dtype).eps) / 2
    eps_n = 1.25 * 8 * math.log2(n) * u
    # the powers run in double (transcendentals in long double are slow) where the cast's rounding, T_i 2^-53 times
    # the spectrum's norm sqrt(N) |a_i|_2 in all, stays a tenth of `budget_goal`; else in the transforms' precision
    double = dtype is np.float64 or budget_goal > 0 and sum(
        p.steps * _U * math.sqrt(n) * float(np.linalg.norm(p.mass)) for p in parts) <= 0.1 * budget_goal
    u_power = _U if double else u
    power_type = np.complex128 if u_power == _U else np.clongdouble
    require_memory(spectral_bytes(n, dtype, power_type, len(parts)),
                   "the privacy-loss distribution's spectral composition")
    spectrum = rel = log_reach = share = pad = None  # D_k's sum_i T_i log m_i, sum_i T_i r_i / m_i and rounding pad
    log_growth = 0.0  # log C, C = prod_i max(1, |a_i|_1 + r_i)^T_i
    for part in parts:
        # positions taken mod n (the circular convolution reads them so anyway): a core longer than n folds, each
        # folded sum rounding within (rows - 1) u of the l1 norm
        rows = -(-len(part.mass) // n)
        a = np.zeros(rows * n, dtype=dtype)
        a[: len(part.mass)] = part.mass
        a = a.reshape(rows, n).sum(axis=0) if rows > 1 else a
        f = sfft.rfft(a, n)
        del a
        f = f.astype(power_type, copy=False)  # a cast to double is one more rounding
        l1 = float(np.sum(part.mass)) * (1 + (math.log2(len(part.mass) + 1) + 2) * _U)
        r_i = (eps_n + (rows - 1) * u + u_power * (1 + eps_n)) * l1 * (1 + 1e-9)
        steps = float(part.steps)
        log_growth += steps * max(0.0, math.log(l1 + r_i))
        mag = np.abs(f.astype(np.complex128, copy=False))  # |x_c| within 2u: the cast and hypot round within u each
        reach = mag * (1 + 4 * _U)  # m_ik = min(l1, |x_c| (1 + 4u) + r_i), in place
        reach += r_i
        np.minimum(reach, l1, out=reach)
        log_m = np.log(reach)
        np.divide(steps * r_i, reach, out=reach)
        share = reach if share is None else np.add(share, reach, out=share)
        del reach
        if log_reach is None:
            log_reach = log_m * steps
        else:
            log_reach += log_m * steps
        np.abs(log_m, out=log_m)
        log_m += 1
        log_m *= steps
        pad = log_m if pad is None else np.add(pad, log_m, out=pad)
        del log_m
        power, power_rel = _polar_power(f, mag, part.steps, u_power)
        del f, mag
        if spectrum is None:
            spectrum, rel = power, power_rel
        else:
            spectrum *= power
            rel += power_rel
            rel += math.sqrt(5) * u_power
        del power, power_rel
    # circular index r holds the position sums = r (mod n): the window starts at lo
    inverse = sfft.irfft(spectrum.astype(np.clongdouble, copy=False) if dtype is not np.float64 else spectrum, n)
    start = lo % n
    first = min(size, n - start)
    out = np.empty(size)
    out[:first] = inverse[start:start + first]
    out[first:] = inverse[:size - first]
    del inverse
    np.maximum(out, 0.0, out=out)
    # the full spectrum's l2 norms from the half spectrum: weight 1 at 0 and at N/2 (N is even), 2 elsewhere
    mag2 = np.abs(spectrum).astype(np.float64, copy=False)
    del spectrum
    np.square(mag2, out=mag2)
    mag2[1:-1] *= 2
    top = float(np.max(rel))
    z2 = math.sqrt(float(np.sum(mag2))) * (1 + 1e-9) / max(1 - top, 0.5)
    rel = rel.astype(np.float64, copy=False)
    np.square(rel, out=rel)
    rel *= mag2
    rounding = math.sqrt(float(np.sum(rel))) * (1 + 1e-9) / max(1 - top, 0.5)
    del rel, mag2
    # log D_k = log_reach + log(share) + 16u (pad + |log_reach| + 2) + 1e-9, in place
    log_d = np.log(share, out=share)
    log_d += log_reach
    np.abs(log_reach, out=log_reach)
    pad += log_reach
    pad += 2
    pad *= 16 * _U
    log_d += pad
    log_d += 1e-9
    del log_reach, pad
    top_d = float(np.max(log_d))  # the l2 norm scaled by its largest term: no underflow of D^2
    log_d -= top_d
    log_d *= 2
    np.exp(log_d, out=log_d)
    log_d[1:-1] *= 2
    dropped = _DROP * math.exp(log_growth) * math.sqrt(n) * (1 + 1e-9)
    spectral = math.exp(top_d) * math.sqrt(float(np.sum(log_d))) * (1 + 1e-9) + rounding + dropped
    budget = spectral + eps_n * z2
    if dtype is not np.float64:
        budget += 2 * _U * float(np.sum(out))
    return out, budget


def spectral_bytes(n: int, dtype, power_type, phases: int) -> float:
    """An upper bound on the memory `_spectral_power_in` allocates for transforms of length n: the arrays it holds at
    once (measured with tracemalloc in tests/truth/test_pld.py: 40-92 bytes a cell, under the `held` share) and two
    transform-length buffers of scipy's FFT (its own allocations, which tracemalloc does not see)."""
    wide_powers = np.dtype(power_type).itemsize > 16  # complex long double
    base = 48 if np.dtype(dtype) == np.dtype(np.float64) else 80 if wide_powers else 64
    held = base + (32 if wide_powers else 16) * (phases - 1)
    return float(n) * (held + 2 * np.dtype(dtype).itemsize)


_DROP = 2.0**-200  # a power whose modulus is certainly below this is set to 0 (`_polar_power`, `_spectral_power`)


def _polar_power(f: np.ndarray, mag: np.ndarray, k: int, u: float) -> tuple[np.ndarray, np.ndarray]:
    """f**k elementwise as |f|^k e^(i k arg f) where k log|f| may reach log _DROP, 0 elsewhere (there |f|^k < _DROP:
    `mag` is |f| within 2u and numpy's double log within a few ulp, 8u |log mag|, which the margin of 1 + 16u k
    covers), and a bound on each kept element's relative error (the modulus, log, angle, the products by k, exp, cos
    and sin each round within a few u of their size: 8u (k (|log|f|| + |arg f| + 2) + 4) in all), 0 at the dropped
    ones (`_spectral_power` bounds their error absolutely)."""
    with np.errstate(divide="ignore"):
        live = np.flatnonzero(np.log(mag) * k >= math.log(_DROP) - 1 - 16 * _U * k)
    kept = f[live]
    log_mag = np.log(np.abs(kept))
    ang = np.angle(kept)
    rel = np.zeros(len(f))
    rel[live] = ((np.abs(log_mag) + np.abs(ang) + 2) * k + 4) * (8 * u)
    modulus = np.exp(log_mag * k)
    turn = ang * k
    power = np.zeros(len(f), dtype=f.dtype)
    power.real[live] = np.cos(turn) * modulus
    power.imag[live] = np.sin(turn) * modulus
    return power, rel


_ALIAS_TAIL = 1e-17  # each end of the composed window leaves out at most this much mass (it folds onto the window)
_CACHE: OrderedDict[tuple, _Composed] = OrderedDict()


def compose_schedule(order: str, phases: tuple[tuple[float, float, int], ...], h: float,
                     budget_goal: float = 0.0) -> _Composed:
    """The composed PLD of one order over a schedule of phases (q_i, sigma_i, T_i) on one loss grid of width h, kept
    in a cache bounded by _CACHE_BYTES (least recently used dropped first). `budget_goal` > 0 lets the powers run in
    double where their share of the floating-point budget stays below it (`_spectral_power`; about 4x faster). The
    cut error of phase i enters as T_i eta_i: the result's `eta` is their mean over all T steps (only steps * eta is
    used)."""
    key = (order, tuple(_phase_key(p) for p in phases), h)
    found = _CACHE.get(key)
    if found is not None and (found.budget_goal <= budget_goal or found.budget <= budget_goal):
        _CACHE.move_to_end(key)
        return found
    found = _compose_new(order, key[1], h, budget_goal)
    size = found.p.nbytes + found.loss.nbytes
    if size <= _CACHE_BYTES:
        _CACHE[key] = found
        while sum(c.p.nbytes + c.loss.nbytes for c in _CACHE.values()) > _CACHE_BYTES:
            _CACHE.popitem(last=False)
    return found


def _compose_new(order: str, phases: tuple[tuple[float, float, int], ...], h: float,
                 budget_goal: float) -> _Composed:
    """Every phase's per-step core, raised to its power and multiplied in the Fourier domain (one transform per
    phase and one inverse, `_spectral_power`) on the Chernoff window of the composed sum (`_window`)."""
    parts = [p.step_pmf(order, h, p.steps) if hasattr(p, "step_pmf") else _step_pmf(order, p[0], p[1], h, p[2])
             for p in phases]
    return compose_parts(parts, h, budget_goal)


def compose_parts(parts: list[_Step], h: float, budget_goal: float = 0.0) -> _Composed:
    """The composition of per-step cores on a grid of width h, each raised to its `steps` (a core cut for T steps
    serves any T' <= T of them: its tails are below _TAIL / (8 T)); `budget_goal` as for `compose_schedule`."""
    lo, hi, folded = _window(parts, _ALIAS_TAIL)
    p, budget = _spectral_power(parts, lo, hi, budget_goal)
    budget += folded
    j0 = lo + sum(part.steps * part.j0 for part in parts)
    steps = sum(part.steps for part in parts)
    eta = sum(part.steps * part.eta for part in parts) / steps
    # dropped: a step outside its core (union bound over the steps), or the core sum outside the window (Chernoff)
    rest = math.fsum(part.steps * part.outside for part in parts) * (1 + 4 * _U) + folded
    return _Composed(p, j0, h, steps, eta, budget, rest, (j0 + np.arange(len(p))) * h,
                     math.fsum(part.steps * part.shifts.up for part in parts),
                     math.fsum(part.steps * part.shifts.low for part in parts),
                     math.fsum(part.steps * part.shifts.span**2 for part in parts) * (1 + 4 * _U), _MASS_ERROR,
                     budget_goal)


def schedule_orders(phases: tuple[tuple[float, float, int], ...], orders: tuple[str, ...],
                    eps_tolerance: float, budget_goal: float = 0.0) -> list[_Composed]:
    """The composed PLDs of `orders` ("add", "remove") over the schedule, on the grid whose eps width is about
    eps_tolerance: h = eps_tolerance / min(T, 8 sqrt(T)) for T steps in all (the concentration bound's width is
    about h sqrt(2 T log(1/delta)), the hard range's T h); phases are validated as `sgm_composed_epsilon` validates
    them; `budget_goal` as for `compose_schedule`."""
    steps = [_check_event(p, eps_tolerance) if hasattr(p, "step_pmf") else _check(None, *p, eps_tolerance)
             for p in phases]
    total = sum(steps)
    h = eps_tolerance / min(total, 8 * math.sqrt(total))
    checked = tuple(p if hasattr(p, "step_pmf") else (float(p[0]), float(p[1]), t)
                    for p, t in zip(phases, steps, strict=True))
    if all(getattr(p, "symmetric", False) if hasattr(p, "step_pmf") else p[0] == 1 for p in checked):
        orders = orders[:1]  # a symmetric pair (the Gaussian mechanism): both orders are one distribution
    return [compose_schedule(o, checked, h, budget_goal) for o in orders]


def schedule_delta(eps: float, comps: list[_Composed]) -> PLDBracket:
    """Bracket on the tight delta(eps) from composed PLDs (the max over the orders given)."""
    return _bracket(max(c.lower(eps) for c in comps), max(c.upper(eps) for c in comps), comps)


def schedule_epsilon(delta: float, comps: list[_Composed], signed: bool = False) -> PLDBracket:
    """bracket [lower, upper] on the smallest eps >= 0 with delta_true(eps) <= delta from composed PLDs (the max over
    the orders given): upper = an eps whose delta upper bound is <= delta (the smallest up to rounding), lower = one
    below which the delta lower bound exceeds delta; solved exactly on each grid cell (inf when no finite eps).
    `signed`: the smallest real eps (negative where delta exceeds the total variation), at least log(1 - delta)
    since every hockey stick is >= 1 - e^eps."""
    _check_delta(delta)
    floor = math.nextafter(math.log1p(-delta), -math.inf) if signed else 0.0
    return _bracket(max(_eps_lower(c, delta, floor) for c in comps), max(_eps_upper(c, delta, floor) for c in comps),
                    comps)


def _bracket(lo: float, up: float, comps: list[_Composed]) -> PLDBracket:
    window = (min(c.j0 for c in comps), max(c.j0 + len(c.p) - 1 for c in comps))
    return PLDBracket(float(lo), float(up), comps[0].h, window, max(c.rest + c.budget + c.slack for c in comps))


def sgm_composed_delta(eps: float, q: float, sigma: float, steps: int, *, one_sided: bool = False,
                       eps_tolerance: float = 1e-2) -> PLDBracket:
    """Bracket on the tight delta(eps) of `steps` compositions (max over both orders unless `one_sided`: the add
    order P || Q alone). The bracket is about eps_tolerance wide in eps (grid width eps_tolerance / steps)."""
    _check(eps, q, sigma, steps, eps_tolerance)
    return schedule_delta(eps, schedule_orders(((q, sigma, steps),), _names(one_sided), eps_tolerance))


def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta}")


def _names(one_sided: bool) -> tuple[str, ...]:
    return ("add",) if one_sided else ("add", "remove")


def _eps_upper(c: _Composed, delta: float, floor: float = 0.0) -> float:
    """an eps >= floor whose delta upper bound is <= delta, close to the smallest; inf when none: the smaller of the
    hard-range and the concentration answers (each checked against its own bound)."""
    tail = _tail_for(delta)
    hard = _search_up(lambda e: c.upper_hard(e) <= delta, c.solve(delta - c.rest - c.budget - c.slack),
                      c.steps * c.eta, floor)
    conc = _search_up(lambda e: c.upper_at(e, tail) <= delta, c.solve(delta - c.rest - c.budget - c.slack - tail),
                      c.deviation(tail) - c.shift_up, floor)
    return min(hard, conc)


def _search_up(holds, e: float, shift: float, floor: float) -> float:
    if e == math.inf:
        return math.inf
    eps = max(floor, e + shift)
    for i in range(200):
        if holds(eps):
            return eps
        eps += (abs(eps) * 1e-12 + 1e-15) * 2.0**i
    return math.inf


def _eps_lower(c: _Composed, delta: float, floor: float = 0.0) -> float:
    """an eps >= floor with delta_true(e) > delta for every e < eps (a delta lower bound > delta there, or eps =
    floor): the larger of the hard-range and the concentration answers."""
    tail = _tail_for(delta)
    hard = _search_down(lambda e: c.lower_hard(e) > delta, c.solve(delta + c.budget + c.slack),
                        -c.steps * (c.eta + c.h), floor)
    conc = _search_down(lambda e: c.lower_at(e, tail) > delta, c.solve(delta + c.budget + c.slack + tail),
                        c.shift_low - c.steps * c.h - c.deviation(tail), floor)
    return max(hard, conc)


def _search_down(holds, e: float, shift: float, floor: float) -> float:
    eps = e + shift
    for i in range(200):
        if eps <= floor:
            return floor
        if holds(eps):
            return eps
        eps -= (abs(eps) * 1e-12 + 1e-15) * 2.0**i
    return floor


def sgm_composed_epsilon(delta: float, q: float, sigma: float, steps: int, *, one_sided: bool = False,
                         eps_tolerance: float = 1e-2, signed: bool = False) -> PLDBracket:
    """`schedule_epsilon` for `steps` compositions of one mechanism (max over both orders unless `one_sided`)."""
    _check_delta(delta)  # before the composition
    return schedule_epsilon(delta, schedule_orders(((q, sigma, steps),), _names(one_sided), eps_tolerance), signed)
