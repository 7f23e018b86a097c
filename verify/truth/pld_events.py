"""Per-step privacy-loss cores (verify.truth.pld's `_Step`) of mechanisms other than the Poisson-subsampled Gaussian,
for the rigorous PLD engine: randomized response (finite support, exact atoms) and the Laplace mechanism (two atoms
and a continuous part with closed-form cell masses).

The engine's conventions (verify.truth.pld): cell k holds the base law's mass of the losses in ((k-1) h, k h], up to
the cut error eta; each float mass is the exact one within relative _MASS_ERROR = 3u; the other law's cell masses
(with an absolute error bound) give `_mean_shifts` its concentration offsets. Here the cuts are the exact reals k h
(each loss is explicit, so no inversion is rounded): an atom's cell is decided in Arb (python-flint), and eta is
nonzero only where an atom's enclosure straddles a cut. Masses are computed exactly (rationals, Arb) or in x87 long
double (u_w = 2^-64) where numpy has it, with a stated relative error e; rounding to double adds u. Where e + u
exceeds the engine's budget the masses are shrunk by 2(e + u) (a sub-measure, sound for the lower bound) and the
shrunk-off mass, at most (3(e + u) + u) per unit, is added to the step's `outside` (paid in full by the upper bound).

ASSUMPTION (as verify.truth.pld assumes it of ndtr): numpy's long-double exp and expm1 have relative error <= 4 u_w
on the arguments used here; checked against mpmath in tests/truth/test_pld_events.py.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import flint
import numpy as np
from scipy.special import ndtri

from verify.errors import ParameterError, ResourceLimitError
from verify.limits import require_memory
from verify.truth.pld import (
    _HALF_LOG_2PI,
    _MASS_ERROR,
    _MAX_CELLS,
    _TAIL,
    _U,
    _WIDE,
    _cdfs,
    _cell_masses,
    _mean_shifts,
    _Step,
)

_WORK = _WIDE or np.float64  # the precision of the closed-form cell masses
_U_WORK = float(np.finfo(_WORK).eps) / 2


def _cell_of(loss: flint.arb, h: float) -> tuple[int, float]:
    """the cell k with loss in ((k-1) h, k h] (the enclosure's upper end decides), and eta >= the distance by which
    the exact loss may fall below (k-1) h (0 when the whole enclosure lies in the cell)"""
    t = loss / flint.arb(h)
    k = math.ceil(float(t.upper()))
    lower = float(t.lower())
    if lower > k - 1:
        return k, 0.0
    return k, ((k - 1) - lower) * h * (1 + 1e-9) + 1e-300


def _to_double(x: flint.arb) -> float:
    """x's midpoint as a double (its enclosure must be far below u relative: Arb at 200 bits)"""
    mid = float(x.mid())
    if not float(x.rad()) <= 1e-30 * abs(mid):
        raise ResourceLimitError(f"an exact cell mass ({x}) is not resolved to double precision")
    return mid


def cells_step(k1: int, base: np.ndarray, rel_err: float | None, other: np.ndarray, other_err: np.ndarray, eta: float,
               h: float, steps: int, outside: float = 0.0) -> _Step:
    """The engine's per-step core from cell masses: `base[i]` is the base law's mass of cell k1 + i (losses in
    ((k-1) h, k h] widened by eta), exact within relative `rel_err` (in any float precision; None: doubles already
    within the engine's _MASS_ERROR, as verify.truth.pld's `_cell_masses` gives them); `other[i]` the other
    law's mass there within `other_err[i]`; `outside` the exact mass not in any cell (paid by the upper bound)."""
    mass = np.asarray(base, dtype=np.float64)  # round to nearest: within u of the exact one more
    r = 0.0 if rel_err is None else rel_err * (1 + 1e-6) + _U * (1 + rel_err)
    other = np.asarray(other, dtype=np.float64)
    other_err = np.asarray(other_err, dtype=np.float64) + 4 * _U * other
    if r > 0.95 * _MASS_ERROR:
        mass = mass * (1 - 2 * r)  # below the exact mass: a sub-measure
        outside += float(np.sum(mass)) * (3 * r + _U) * (1 + 1e-6)
        other_err = other_err + 4 * r * other
    if not np.any(mass > 0):
        raise ResourceLimitError("no cell of the per-step grid carries mass in double precision")
    if not eta <= 1e-2 * h:
        raise ResourceLimitError(f"cut error {eta} is not small against the grid width {h}")
    ks = k1 + np.arange(len(mass), dtype=np.float64)
    shifts = _mean_shifts(mass, other, other_err, ks, h, eta)
    return _Step(mass, k1, eta, shifts, steps, outside * (1 + 4 * _U))


def _grid_cells(k_lo: int, k_hi: int) -> None:
    if k_hi - k_lo + 1 > _MAX_CELLS:
        raise ResourceLimitError(f"eps_tolerance too small: the per-step grid needs {k_hi - k_lo + 1} > "
                                 f"{_MAX_CELLS} cells")
    require_memory(8.0 * 16 * (k_hi - k_lo + 2), "the privacy-loss distribution's per-step grid")


def restoring_precision(fn):
    """`fn` with python-flint's global working precision restored on return (it sets its own): no caller's Arb
    arithmetic runs at a precision it did not choose."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        saved = flint.ctx.prec
        try:
            return fn(*args, **kwargs)
        finally:
            flint.ctx.prec = saved
    return wrapped


@restoring_precision
def atoms_step(atoms: list[tuple[Fraction | flint.arb, Fraction | flint.arb]], h: float, steps: int) -> _Step:
    """The per-step core of a finite pair: `atoms` lists (base mass, other mass) of each outcome, exact (rationals or
    Arb balls at 200 bits), both > 0. The loss of an outcome is log(base / other)."""
    flint.ctx.prec = 200
    placed: dict[int, list] = {}
    eta = 0.0
    for b, o in atoms:
        ab, ao = _arb(b), _arb(o)
        k, e = _cell_of((ab / ao).log(), h)
        eta = max(eta, e)
        cell = placed.setdefault(k, [flint.arb(0), flint.arb(0)])
        cell[0] += ab
        cell[1] += ao
    k1, k2 = min(placed), max(placed)
    _grid_cells(k1, k2)
    base, other = np.zeros(k2 - k1 + 1), np.zeros(k2 - k1 + 1)
    for k, (b, o) in placed.items():
        base[k - k1], other[k - k1] = _to_double(b), _to_double(o)
    return cells_step(k1, base, 0.0, other, 2 * _U * other, eta, h, steps)


def _arb(x: Fraction | flint.arb) -> flint.arb:
    return flint.arb(x.numerator) / x.denominator if isinstance(x, Fraction) else x


def randomized_response_atoms(p: float, k: int) -> list[tuple[Fraction, Fraction]]:
    """k-ary randomized response with noise parameter p (dp_accounting's RandomizedResponseDpEvent: the true bucket
    with probability 1 - p, else a uniform one), replace-one x -> x': the outcomes x, x' and the k - 2 others, each
    as (mass under R(x), mass under R(x')), exact rationals (p is a double, hence a rational)."""
    fp = Fraction(p)
    hit, miss = 1 - fp + fp / k, fp / k
    atoms = [(hit, miss), (miss, hit)]
    if k > 2:
        atoms.append((miss * (k - 2), miss * (k - 2)))
    return atoms


def randomized_response_step(p: float, k: int, h: float, steps: int) -> _Step:
    """per-step core of k-ary randomized response (replace-one; the pair is symmetric: one order serves both)"""
    if not (0 < p <= 1 and isinstance(k, int) and k >= 2):
        raise ParameterError(f"randomized response needs 0 < p <= 1 and k >= 2 buckets, got p={p}, k={k}")
    return atoms_step(randomized_response_atoms(p, k), h, steps)


@restoring_precision
def laplace_step(b: float, h: float, steps: int) -> _Step:
    """Per-step core of the Laplace mechanism, scale b, sensitivity 1 (P = Lap(1, b) || Q = Lap(0, b); the reflection
    x -> 1 - x swaps them, so both orders have this PLD). With a = 1/b the loss is -a for x <= 0 (mass e^(-a) / 2
    under P, 1/2 under Q), +a for x >= 1 (1/2 and e^(-a) / 2) and (2x - 1) a in between, where its density under P is
    e^((l - a) / 2) / 4 on (-a, a): the P-mass of losses in (l1, l2] is e^((l1 - a) / 2) expm1((l2 - l1) / 2) / 2 and
    the Q-mass e^(-(l2 + a) / 2) expm1((l2 - l1) / 2) / 2."""
    if not (math.isfinite(b) and b > 0):
        raise ParameterError(f"Laplace scale b must be a finite number > 0, got {b}")
    flint.ctx.prec = 200
    a_arb = 1 / flint.arb(b)
    half_low = (-a_arb).exp() / 2
    k_lo, eta_lo = _cell_of(-a_arb, h)
    k_hi, eta_hi = _cell_of(a_arb, h)
    _grid_cells(k_lo, k_hi)
    a = _WORK(1) / _WORK(b)  # within u_w relative of 1/b
    hw = _WORK(h)
    ks = np.arange(k_lo, k_hi + 1).astype(_WORK)
    l1 = np.maximum((ks - 1) * hw, -a)
    l2 = np.minimum(ks * hw, a)
    width = np.maximum(l2 - l1, 0)
    grow = np.expm1(width / 2)
    base = np.exp((l1 - a) / 2) * grow / 2
    other = np.exp(-(l2 + a) / 2) * grow / 2
    # relative error of each continuous mass: the exp argument is off by <= 4 u_w (|l| + a + 1), the width by
    # <= 4 u_w (|l| + 1), exp, expm1 and 3 products <= 12 u_w; the end cells' edges (a, not 1/b) move by <= 2 u_w a
    # in loss, at most u_w a / 2 of mass (the density is <= 1/4)
    big = float(a) + abs(float(k_lo) * h) + abs(float(k_hi) * h) + 2 * h + 1
    rel = _U_WORK * (8 * big + 16)
    edge = _U_WORK * float(a) / 2 * 1.01
    atom_lo, atom_hi = _to_double(half_low), 0.5
    cont = [float(x) for x in (base[0], base[-1])]
    base[0] += _WORK(atom_lo)
    base[-1] += _WORK(atom_hi)
    other[0] += _WORK(0.5)
    other[-1] += _WORK(_to_double(half_low))
    # the end cells: the atom (within u relative), the continuous part (rel) and the edge's absolute move
    rel_end = max((_U * atom_lo + rel * cont[0] + edge) / (atom_lo + cont[0]),
                  (_U * atom_hi + rel * cont[1] + edge) / (atom_hi + cont[1]))
    err = np.asarray(other, dtype=np.float64) * (rel + 2 * _U) + edge
    # an atom's enclosure straddling a cut may leave a sliver of <= `edge` outside the cells: paid as outside
    return cells_step(k_lo, base, max(rel, rel_end) + 2 * _U_WORK, other, err, max(eta_lo, eta_hi), h, steps,
                      outside=2 * edge)


def _lse(terms: list[np.ndarray]) -> np.ndarray:
    """log sum_i e^(terms_i), elementwise"""
    top = np.maximum.reduce(terms)
    safe = np.where(np.isfinite(top), top, 0.0)
    return safe + np.log(sum(np.exp(t - safe) for t in terms))


def _exponents(comps: list[tuple[float, float]], s2: float, y: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """log w + (2 m y - m^2) / (2 s^2) of each component (the log density ratio to N(0, s^2) at y), and a bound on
    each one's magnitude as computed (for its rounding)"""
    terms, size = [], np.zeros_like(y)
    for w, m in comps:
        terms.append(math.log(w) + (2 * m * y - m * m) / (2 * s2))
        size = np.maximum(size, abs(math.log(w)) + (2 * abs(m) * np.abs(y) + m * m) / (2 * s2))
    return terms, size


def _mixture_loss(base, other, s2: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """the loss log(base / other) at y for Gaussian mixtures of one variance s2, and a bound on its rounding error
    (every exponent's rounding, 4u of its size, the log-sum-exps' and the difference's, a few u of their sizes; numpy's
    exp and log within 2 ulp; doubled)"""
    tb, sb = _exponents(base, s2, y)
    to, so = _exponents(other, s2, y)
    lb, lo = _lse(tb), _lse(to)
    err = 16 * _U * (sb + so + np.abs(lb) + np.abs(lo) + math.log(len(base) * len(other)) + 2)
    return lb - lo, err


def _slope(base, other, s2: float, y: np.ndarray) -> np.ndarray:
    """dL/dy: the posterior mean of the base's component means less the other's, over s^2 (approximate)"""
    means = []
    for comps in (base, other):
        terms, _ = _exponents(comps, s2, y)
        total = _lse(terms)
        means.append(sum(np.exp(t - total) * m for t, (_, m) in zip(terms, comps, strict=True)))
    return (means[0] - means[1]) / s2


def _limit(base, other, side: int) -> float:
    """the loss's limit at y -> side * infinity: the components of the extreme mean dominate"""
    mb = max(m * side for _, m in base)
    mo = max(m * side for _, m in other)
    if mb != mo:
        return math.inf if mb > mo else -math.inf  # the law whose extreme component lies further out dominates
    wb = math.fsum(w for w, m in base if m * side == mb)
    wo = math.fsum(w for w, m in other if m * side == mo)
    return math.log(wb) - math.log(wo)


def mixture_step(base: list[tuple[float, float]], other: list[tuple[float, float]], s: float, h: float,
                 steps: int) -> _Step:
    """Per-step core of the pair base = sum_i w_i N(m_i, s^2) || other = sum_j v_j N(n_j, s^2) whose loss
    log(base / other) increases along the coordinate (the caller's pair; checked at the cuts). As verify.truth.pld
    does for the Poisson-subsampled Gaussian, with the loss's inverse found by bisection: the cut x_k is any double,
    eta_k bounds |L(x'_k) - k h| for the exact cut x'_k with F(x'_k) = v_k (the computed CDF value): |fl(L(x_k)) -
    k h| plus the loss's rounding (`_mixture_loss`) plus the move from x_k to x'_k, first order with safety factor 4
    (dL/dx over the density, times the CDF's error kappa v_k: the ndtr ASSUMPTION of verify.truth.pld, plus 2u for
    the weights' rounding)."""
    s2 = s * s
    z = -float(ndtri(_TAIL / (8 * steps)))
    y_lo, y_hi = min(m for _, m in base) - z * s, max(m for _, m in base) + z * s
    (l_lo, l_hi), _ = _mixture_loss(base, other, s2, np.array([y_lo, y_hi]))
    k_lo, k_hi = math.floor(l_lo / h), math.ceil(l_hi / h)
    _grid_cells(k_lo, k_hi)
    ks = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    target = ks * h
    inf_lo, inf_hi = _limit(base, other, -1), _limit(base, other, 1)
    margin = 1e-9 * (1 + np.abs(target))
    if np.any(np.abs(target - inf_lo) <= margin) or np.any(np.abs(target - inf_hi) <= margin):
        raise ResourceLimitError("a cut of the privacy-loss grid coincides with the loss's limit; try another "
                                 "tolerance")
    below, above = target < inf_lo, target > inf_hi
    finite = ~(below | above)
    lo, hi = np.full(len(ks), y_lo - 1.0), np.full(len(ks), y_hi + 1.0)
    for _ in range(2000):  # widen the brackets until the loss straddles each finite target
        lo_loss, _ = _mixture_loss(base, other, s2, lo)
        hi_loss, _ = _mixture_loss(base, other, s2, hi)
        bad_lo, bad_hi = finite & (lo_loss >= target), finite & (hi_loss <= target)
        if not (bad_lo.any() or bad_hi.any()):
            break
        lo = np.where(bad_lo, lo - 2 * (hi - lo), lo)
        hi = np.where(bad_hi, hi + 2 * (hi - lo), hi)
    # the inverse: monotone interpolation of the loss on a fine table, then safeguarded Newton steps (any x will do:
    # its loss error is measured, not assumed)
    table = np.linspace(float(np.min(lo)), float(np.max(hi)), 1 << 14)
    table_loss, _ = _mixture_loss(base, other, s2, table)
    x = np.clip(np.interp(target, table_loss, table), lo, hi)
    for _ in range(8):
        loss, _ = _mixture_loss(base, other, s2, x)
        if not np.any(finite & (np.abs(loss - target) > 1e-6 * h)):
            break
        slope = _slope(base, other, s2, x)
        up = loss < target
        lo, hi = np.where(up, np.maximum(lo, x), lo), np.where(up, hi, np.minimum(hi, x))
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - (loss - target) / slope
        x = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
    # bisection where Newton has not settled (a flat loss near its limits), on the brackets kept
    loss, _ = _mixture_loss(base, other, s2, x)
    todo = np.flatnonzero(finite & (np.abs(loss - target) > 1e-6 * h))
    for _ in range(200):
        if not len(todo):
            break
        mid = 0.5 * (lo[todo] + hi[todo])
        mid_loss, _ = _mixture_loss(base, other, s2, mid)
        up = mid_loss < target[todo]
        lo[todo], hi[todo] = np.where(up, mid, lo[todo]), np.where(up, hi[todo], mid)
        x[todo] = mid
        keep = (np.abs(mid_loss - target[todo]) > 1e-6 * h) & (hi[todo] - lo[todo] > 4 * _U * np.abs(mid))
        todo = todo[keep]
    x = np.where(below, -np.inf, np.where(above, np.inf, x))
    xf = np.where(finite, x, 0.0)
    loss, loss_err = _mixture_loss(base, other, s2, xf)
    eta_x = np.where(finite, np.abs(loss - target) + loss_err, 0.0)
    slope = _slope(base, other, s2, xf)  # log(dL/dx / density) for the CDF's error
    if np.any(finite & (slope <= 0)):
        raise ParameterError("the pair's privacy loss does not increase along the coordinate")
    log_density = _lse([math.log(w) - (xf - m) ** 2 / (2 * s2) for w, m in base]) - math.log(s) - _HALF_LOG_2PI
    with np.errstate(divide="ignore"):
        log_df = np.log(np.maximum(slope, 1e-300)) - log_density
    # the weights as given sum to 1 within `excess` (exactly, in rationals): the mechanism is the normalised mixture,
    # whose CDFs the computed ones meet within that much more, relative
    excess = max(abs(float(sum(Fraction(w) for w, _ in comps) - 1)) for comps in (base, other))
    f_cdf, s_cdf, kap = _cdfs(base, s, x)
    kap = kap + 2 * _U * len(base) + 2 * excess
    left = f_cdf <= 0.5
    v = np.where(left, f_cdf, s_cdf)
    if np.any(finite & (v < 1e-290)):
        raise ResourceLimitError("a cut of the privacy-loss grid has a CDF value below 1e-290, where the "
                                 "double-precision grid cannot bound its error (the limit of the PLD engine)")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        eta_f = np.where(finite, 4 * kap * np.exp(np.log(v) + log_df), 0.0)
    eta_k = eta_x + eta_f
    of_cdf, os_cdf, okap = _cdfs(other, s, x)
    okap = okap + 2 * _U * len(other) + 2 * excess
    w = np.where(left, of_cdf, os_cdf)
    with np.errstate(over="ignore", invalid="ignore"):
        moved = np.exp(eta_k - target) * kap * v * (1 + 1e-9)
        w_err = np.where(finite, okap * w + moved, 0.0)
    n_left = int(np.searchsorted(~left, True))
    if np.any((np.diff(v[:n_left]) <= 0) & np.isfinite(x[1:n_left])) or np.any(
            (np.diff(v[n_left:]) >= 0) & np.isfinite(x[n_left:-1])):
        raise ResourceLimitError("eps_tolerance too small for double-precision cell masses (a CDF step below the "
                                 "rounding of the CDF)")
    eta = float(np.max(eta_k))
    mass, switch = _cell_masses(v, n_left)
    other_mass, _ = _cell_masses(w, n_left)
    other_err = w_err[:-1] + w_err[1:] + 2 * _U * (w[:-1] + w[1:] + switch)
    outside = (v[0] if left[0] else 1 - v[0]) + (v[-1] if not left[-1] else 1 - v[-1])
    return cells_step(k_lo + 1, mass, None, other_mass, other_err, eta, h, steps, outside=outside)
