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

import numpy as np
from scipy import fft as sfft
from scipy.special import ndtr, ndtri

from verify.errors import ParameterError, ResourceLimitError
from verify.limits import require_memory

_U = 2.0**-53
_TAIL = 1e-14  # each per-step tail left out of the core has mass below _TAIL / (8 T)
_MAX_CELLS = 1 << 23  # largest grid (and half the largest FFT) the accountant will allocate
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# x87 80-bit long double (u = 2^-64) where numpy has it (x86); elsewhere every FFT runs in double
_WIDE = np.longdouble if np.finfo(np.longdouble).nmant == 63 else None
_WIDE_FROM = 4  # squarings whose result enters the final pmf >= this many times run in long double
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
    """core^T on indices j0 .. j0 + len(p) - 1, with its l1 error bound `budget`, the upper grid's loss values,
    the per-step cut error eta and the dropped mass `rest` (an upper bound, budget included)."""

    p: np.ndarray
    j0: int
    h: float
    steps: int
    eta: float
    budget: float
    rest: float
    loss: np.ndarray

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

    def upper(self, eps: float) -> float:
        return min(1.0, self.g(eps - self.steps * self.eta) + self.rest + self.budget + self.slack)

    def lower(self, eps: float) -> float:
        return max(0.0, self.g(eps + self.steps * (self.eta + self.h)) - self.budget - self.slack)

    def solve(self, target: float) -> float:
        """the e with G(e) = target (G is continuous, decreasing, from sum(p) to 0); -inf / inf when none."""
        if target <= 0:
            return math.inf
        if target >= float(np.sum(self.p)):
            return -math.inf
        lo, hi = 0, len(self.p) - 1  # smallest m with G(l_m) <= target lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.g(self.loss[mid]) <= target else (mid + 1, hi)
        ref = self.loss[lo] - self.h  # on [l_(m-1), l_m]: G(e) = A - e^(e - ref) B
        a = float(np.sum(self.p[lo:]))
        b = float(np.sum(self.p[lo:] * np.exp(ref - self.loss[lo:])))
        return ref + math.log(max(a - target, 1e-300) / b)


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


def _cut_values(order: str, q: float, s: float, h: float, ks: np.ndarray):
    """cuts x_k for losses k h, the computed CDF values v_k there (F where `left`, i.e. F <= 1/2, else the survival
    function S) and eta_k >= |loss(x'_k) - k h| for the exact cut x'_k with F(x'_k) = v_k (S(x'_k) = v_k)."""
    x, eta_x, log_df = _cuts(order, q, s, h, ks)
    comps = [(1.0, 0.0)] if order == "remove" else [(w, m) for w, m in ((1 - q, 0.0), (q, 1.0)) if w > 0]
    f_cdf, s_cdf, kap = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for w, m in comps:
        with np.errstate(invalid="ignore"):
            a = (x - m) / s
        f_cdf += w * ndtr(a)
        s_cdf += w * ndtr(-a)
        kap = np.maximum(kap, _kappa(a))
    left = f_cdf <= 0.5
    v = np.where(left, f_cdf, s_cdf)
    finite = np.isfinite(x)
    if np.any(finite & (v < 1e-290)):
        raise ResourceLimitError("a finite cut has an underflowing CDF value")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        eta_f = np.where(finite, 4 * (kap + 4 * _U) * np.exp(np.log(v) + log_df), 0.0)
    return x, v, left, eta_x + eta_f


def _step_range(order: str, q: float, s: float, h: float, steps: int) -> tuple[int, int]:
    """first and last cut index of the per-step core: each tail beyond it has mass below TAIL / (8 T)"""
    z = -float(ndtri(_TAIL / (8 * steps)))
    lo, hi = (-z * s, 1 + z * s) if order == "add" else (-z * s, z * s)
    return math.floor(_loss(order, q, s, lo) / h), math.ceil(_loss(order, q, s, hi) / h)


def _step_pmf(order: str, q: float, s: float, h: float, steps: int):
    """per-step core masses (index j0 + i for cell i), their l1 error bound and the loss error eta of the cuts."""
    k_lo, k_hi = _step_range(order, q, s, h, steps)
    if k_hi - k_lo > _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the per-step grid needs {k_hi - k_lo} > {_MAX_CELLS} "
                                 "cells")
    require_memory(8.0 * 16 * (k_hi - k_lo + 2), "the privacy-loss distribution's per-step grid")
    x, v, left, eta_k = _cut_values(order, q, s, h, np.arange(k_lo, k_hi + 1, dtype=np.float64))
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
    mass = np.empty(len(x) - 1)
    mass[: max(n_left - 1, 0)] = np.diff(f_cdf)
    mass[n_left:] = -np.diff(s_cdf)
    if 0 < n_left < len(x):
        mass[n_left - 1] = max(0.0, 1 - f_cdf[-1] - s_cdf[0])
    return mass, k_lo + 1, 4 * _U, eta


def _trim(p: np.ndarray, j0: int, tau: float):
    """drop the ends of p with computed mass <= tau each (a sub-measure; the dropped mass ends up in `rest`)"""
    c = np.cumsum(p)
    lo = int(np.searchsorted(c, tau, side="right"))
    r = np.cumsum(p[::-1])
    hi = len(p) - int(np.searchsorted(r, tau, side="right"))
    if lo >= hi:
        return p[:0], j0
    return p[lo:hi], j0 + lo


def _conv(a, b, wide: bool):
    """(p, j0, budget) of a * b by a power-of-two FFT (in x87 extended precision when `wide`: its error is copied
    into many later steps), clipped at 0, rounded to double; the ends are trimmed while their computed mass stays
    below half the rounding-error bound (so FFT noise never blocks the trim)."""
    (pa, ja, ea), (pb, jb, eb) = a, b
    if not len(pa) or not len(pb):
        raise ResourceLimitError("the privacy-loss distribution lost all its mass to trimming (a per-step loss far "
                                 "below the grid's resolution)")
    size = len(pa) + len(pb) - 1
    if size > 2 * _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the composed grid needs {size} > {2 * _MAX_CELLS} cells")
    n = 1 << max(1, (size - 1).bit_length())
    dtype = _WIDE if wide else np.float64
    item = np.dtype(dtype).itemsize  # both spectra, their product and the inverse transform, then the doubles
    require_memory(float(n) * (4 * item + 3 * 8), "the privacy-loss distribution's FFT convolution")
    u = float(np.finfo(dtype).eps) / 2
    fa = sfft.rfft(pa.astype(dtype), n)
    out = sfft.irfft(fa * fa if b is a else fa * sfft.rfft(pb.astype(dtype), n), n)[:size].astype(np.float64)
    np.maximum(out, 0.0, out=out)
    a1, b1 = (1 + 1e-9) * float(np.sum(pa)) + ea, (1 + 1e-9) * float(np.sum(pb)) + eb  # bounds on the exact norms
    a2, b2 = (1 + 1e-9) * float(np.linalg.norm(pa)) + ea, (1 + 1e-9) * float(np.linalg.norm(pb)) + eb
    l2_err = 1.25 * (16 * math.log2(n) + 4) * u * (a2 * b1 + a1 * b2)
    p, j0 = _trim(out, ja + jb, 0.5 * math.sqrt(size) * l2_err)
    rounding = 2 * _U * float(np.sum(p)) if dtype is not np.float64 else 0.0
    return p, j0, ea * b1 + eb * a1 + math.sqrt(len(p)) * l2_err + rounding


_CACHE: OrderedDict[tuple, _Composed] = OrderedDict()


def _compose(order: str, q: float, s: float, h: float, steps: int) -> _Composed:
    """The composed PLD of one order, kept in a cache bounded by _CACHE_BYTES (an entry holds two arrays of up to a
    few million doubles)."""
    key = (order, q, s, h, steps)
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    found = _compose_new(order, q, s, h, steps)
    size = found.p.nbytes + found.loss.nbytes
    if size <= _CACHE_BYTES:
        _CACHE[key] = found
        while sum(c.p.nbytes + c.loss.nbytes for c in _CACHE.values()) > _CACHE_BYTES:
            _CACHE.popitem(last=False)
    return found


def _compose_new(order: str, q: float, s: float, h: float, steps: int) -> _Composed:
    mass, j0, err, eta = _step_pmf(order, q, s, h, steps)
    idx = np.arange(len(mass))
    mean = float(np.sum(idx * mass))
    spread = 16 * math.sqrt(steps * float(np.sum((idx - mean) ** 2 * mass)))  # +-8 std of the composed loss
    if spread > 2 * _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the composed loss spans ~{spread:.3g} grid cells "
                                 f"(limit {2 * _MAX_CELLS})")
    result, base, level = None, (mass, j0, err), 0
    while True:
        if steps >> level & 1:
            result = base if result is None else _conv(result, base, False)
        level += 1
        if steps >> level == 0:
            break
        base = _conv(base, base, _WIDE is not None and steps >> level >= _WIDE_FROM)
    p, j0, budget = result
    rest = max(0.0, 1.0 - math.fsum(p)) + budget + 4 * _U
    return _Composed(p, j0, h, steps, eta, budget, rest, (j0 + np.arange(len(p))) * h)


def compose_schedule(order: str, phases: tuple[tuple[float, float, int], ...], h: float) -> _Composed:
    """The composed PLD of one order over a schedule of phases (q_i, sigma_i, T_i) on one loss grid of width h: each
    phase composed as `_compose` does, then the phases convolved with the same error accounting. The cut error of
    phase i enters as T_i eta_i: the result's `eta` is their mean over all T steps (only steps * eta is used)."""
    parts = [_compose(order, float(q), float(s), h, int(t)) for q, s, t in phases]
    if len(parts) == 1:
        return parts[0]
    acc = None
    for c in parts:
        term = (c.p, c.j0, c.budget)
        acc = term if acc is None else _conv(acc, term, False)
    p, j0, budget = acc
    steps = sum(c.steps for c in parts)
    eta = sum(c.steps * c.eta for c in parts) / steps
    rest = max(0.0, 1.0 - math.fsum(p)) + budget + 4 * _U
    return _Composed(p, j0, h, steps, eta, budget, rest, (j0 + np.arange(len(p))) * h)


def schedule_orders(phases: tuple[tuple[float, float, int], ...], orders: tuple[str, ...],
                    eps_tolerance: float) -> list[_Composed]:
    """The composed PLDs of `orders` ("add", "remove") over the schedule, on the grid whose worst-case eps width is
    eps_tolerance (h = eps_tolerance / total steps); phases are validated as `sgm_composed_epsilon` validates them."""
    steps = [_check(None, q, s, t, eps_tolerance) for q, s, t in phases]
    total = sum(steps)
    h = eps_tolerance / total
    checked = tuple((float(q), float(s), t) for (q, s, _), t in zip(phases, steps, strict=True))
    if all(q == 1 for q, _, _ in checked):
        orders = orders[:1]  # the Gaussian mechanism is symmetric: both orders are one distribution
    return [compose_schedule(o, checked, h) for o in orders]


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
    """an eps >= floor with c.upper(eps) <= delta, close to the smallest; inf when none."""
    e = c.solve(delta - c.rest - c.budget - c.slack)
    if e == math.inf:
        return math.inf
    eps = max(floor, e + c.steps * c.eta)
    for i in range(200):
        if c.upper(eps) <= delta:
            return eps
        eps += (abs(eps) * 1e-12 + 1e-15) * 2.0**i
    return math.inf


def _eps_lower(c: _Composed, delta: float, floor: float = 0.0) -> float:
    """an eps >= floor with delta_true(e) > delta for every e < eps (c.lower(eps) > delta or eps = floor)."""
    e = c.solve(delta + c.budget + c.slack)
    eps = e - c.steps * (c.eta + c.h)
    for i in range(200):
        if eps <= floor:
            return floor
        if c.lower(eps) > delta:
            return eps
        eps -= (abs(eps) * 1e-12 + 1e-15) * 2.0**i
    return floor


def sgm_composed_epsilon(delta: float, q: float, sigma: float, steps: int, *, one_sided: bool = False,
                         eps_tolerance: float = 1e-2, signed: bool = False) -> PLDBracket:
    """`schedule_epsilon` for `steps` compositions of one mechanism (max over both orders unless `one_sided`)."""
    _check_delta(delta)  # before the composition
    return schedule_epsilon(delta, schedule_orders(((q, sigma, steps),), _names(one_sided), eps_tolerance), signed)
