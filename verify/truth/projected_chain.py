"""Proven brackets on E[phi(w_k)] of projected noisy SGD on an interval, by monotone lattice chains.

The chain w_k = clip_[-a, a](c_k w_{k-1} - drift_k + tau_k Z_k), c_k >= 0 (a linear loss: c = 1, drift = eta g; a
quadratic (lam/2) w^2: c = 1 - eta lam), is monotone in w_{k-1} for every Z_k. Rounding each
iterate down (up) to the lattice -a + j h, j = 0..N, gives chains l_k <= w_k <= u_k for the same noise, by
induction (floor(f(l, Z)) <= f(l, Z) <= f(w, Z)). Their laws are exact vectors on the lattice (transition
probabilities are normal cdf differences), so E[phi(l_k)] <= E[phi(w_k)] <= E[phi(u_k)] for increasing phi (reversed for
decreasing phi; w^2 is the sum of an increasing and a decreasing part); each step's rounding moves a chain by at most
h, so the mean bracket is at most k h wide. Float rounding of the probabilities (row sums within N * 1e-16 of 1) is
covered by a pad of 1e-11 a per step.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import sparse, special

from verify.errors import ParameterError
from verify.limits import require_memory

MAX_WORK = 4e9  # N^2 * steps multiply-adds per bracket (about a second)
_CACHE_BYTES = 64 << 20  # computed chains kept for their prefixes (least recently used dropped first)


@dataclass(frozen=True)
class AffineStep:
    """One step w <- clip_[-a, a](c w - drift + tau Z), Z ~ N(0, 1); monotone in w when c >= 0."""

    c: float
    drift: float
    tau: float

    def mean(self, x: np.ndarray) -> np.ndarray:
        return self.c * x - self.drift

    @property
    def monotone(self) -> bool:
        return self.c >= 0


@dataclass(frozen=True)
class SmoothedAbsStep:
    """One gradient step on pull * E|w + scale Z'| (|w| smoothed by a Gaussian, Feldman et al. Thm 33):
    w <- clip(w - pull (2 Phi(w/scale) - 1) + tau Z). Its derivative 1 - pull 2 phi(w/scale)/scale is >= 0 for every
    w iff pull <= scale sqrt(pi/2)."""

    pull: float
    scale: float
    tau: float

    def mean(self, x: np.ndarray) -> np.ndarray:
        return x - self.pull * (2 * special.ndtr(x / self.scale) - 1)

    @property
    def monotone(self) -> bool:
        return self.pull <= self.scale * math.sqrt(math.pi / 2)


@dataclass(frozen=True)
class LatticeLaws:
    """The laws of the rounded-down and rounded-up chains after each step (rows k = 0..steps-1 are w_1..w_steps)."""

    points: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def expectation(self, increasing: np.ndarray, decreasing: np.ndarray | None = None) -> np.ndarray:
        """(steps, 2) proven [lower, upper] on E[phi(w_k)] for phi = increasing + decreasing (both given on the
        lattice points, monotone in that direction), padded for float rounding."""
        dec = np.zeros_like(increasing) if decreasing is None else decreasing
        low = self.lower @ increasing + self.upper @ dec
        high = self.upper @ increasing + self.lower @ dec
        pad = 1e-11 * (np.max(np.abs(increasing)) + np.max(np.abs(dec))) * np.arange(1, len(low) + 1)
        return np.column_stack([low - pad, high + pad])


def _bands(a: float, n: int, step: AffineStep | SmoothedAbsStep) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rounded-down and rounded-up chains' transition rows as bands: row j is the law of the rounded
    clip(step.mean(x_j) + tau Z) on the lattice x_k = -a + k h, band column c at lattice column start[j] - 1 + c
    (down) and start[j] + c (up), columns -1 and n + 1 holding exact zeros. Rounding down maps [x_k, x_k+1) -> x_k
    (cell edges x_1..x_n), up maps (x_k-1, x_k] -> x_k (edges x_0..x_n-1), so one normal cdf per row and lattice
    point serves both; it is evaluated only within [-40, 10] sds of the row's mean (beyond, its float value is
    exactly 0 or 1, and the cells there hold exact zeros)."""
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    mean = step.mean(x)
    width = min(n + 1, math.ceil(50 * step.tau / h) + 3)
    start = np.clip(np.floor((mean - 40 * step.tau - x[0]) / h), 0, n + 1 - width).astype(np.int64)
    cdf = np.empty((n + 1, width + 2))  # P(y below x_p), p = start - 1 .. start + width: 0 below the window, 1 above
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    window = cdf[:, 1:-1]
    np.subtract(x if width == n + 1 else sliding_window_view(x, width)[start], mean[:, None], out=window)
    window /= step.tau
    special.ndtr(window, out=window)
    # column c of the differences is P(x_(p-1) <= y < x_p), p = start + c; cell m collects P(edge m - 1 <= y <
    # edge m): down's edge m is x_m+1 (difference column m + 1 - start), up's is x_m (column m - start)
    up = np.diff(cdf, axis=1)
    np.clip(up, 0.0, 1.0, out=up)  # once for both chains: the entries set next lie in [0, 1] already
    down = up.copy()
    low, high = start == 0, start + width == n + 1
    down[low, 0], down[low, 1] = 0.0, cdf[low, 2]  # x_0 is no edge of the rounded-down chain ...
    up[high, width - 1], up[high, width] = 1.0 - cdf[high, width - 1], 0.0  # ... nor x_n of the rounded-up one
    return down, up, start


def _transitions(a: float, n: int, step: AffineStep | SmoothedAbsStep) -> tuple[_Dense | _Banded, _Dense | _Banded]:
    """The rounded-down and rounded-up chains' transitions (`_bands`): dense views where every band is the whole
    lattice, else the bands themselves as sparse rows (no (n + 1)^2 matrix is filled)."""
    down, up, start = _bands(a, n, step)
    if down.shape[1] == n + 2:  # every row's window is the whole lattice
        return _Dense(down[:, 1:]), _Dense(up[:, :-1])
    columns = (start[:, None] + np.arange(down.shape[1])).ravel()  # lattice column + 1 (down), + 0 (up)
    rows = np.arange(n + 2) * down.shape[1]
    return (_Banded(sparse.csr_array((down.ravel(), columns, rows), shape=(n + 1, n + 2)), 1),
            _Banded(sparse.csr_array((up.ravel(), columns, rows), shape=(n + 1, n + 2)), 0))


@dataclass(frozen=True)
class _Dense:
    """A transition matrix applied as law @ matrix in a single-threaded loop (a multi-threaded BLAS call on a
    loaded machine costs ten times more than the product)."""

    matrix: np.ndarray

    def apply(self, law: np.ndarray) -> np.ndarray:
        return np.einsum("i,ij->j", law, self.matrix)


@dataclass(frozen=True)
class _Banded:
    """A banded transition as sparse rows whose column k is lattice column k - skip (columns outside 0..n hold exact
    zeros). law @ rows runs scipy's compressed-column product, which adds each column's terms law[j] * p[j, m] in
    row order from 0, as _Dense's einsum does: the same law bit for bit, from the band's entries alone."""

    rows: sparse.csr_array
    skip: int

    def apply(self, law: np.ndarray) -> np.ndarray:
        return (law @ self.rows)[self.skip:self.skip + len(law)]


@dataclass(frozen=True)
class _Toeplitz:
    """The transition of a step with c = 1: entry (j, m) depends on m - j alone for the inner cells 0 < m < n
    (inner[m - j + n - 1]); the wall cells m = 0 and m = n collect the tails (low[j], high[j])."""

    inner: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def apply(self, law: np.ndarray) -> np.ndarray:
        n = len(law) - 1
        out = np.empty_like(law)
        out[0], out[n] = law @ self.low, law @ self.high
        out[1:n] = np.convolve(law, self.inner, "valid")  # the inner cells: full overlaps only
        return out


def _toeplitz(a: float, n: int, step: AffineStep, up: bool) -> _Toeplitz:
    """A c = 1 step's transition (`_transitions`) from the 2n normal cdfs at the offsets d = m - j (edge m minus
    mean j is d h + drift, plus h when rounding down), not (n + 1)^2 of them."""
    h = 2 * a / n
    d = np.arange(-n, n)
    cdf = special.ndtr((d * h + (0.0 if up else h) + step.drift) / step.tau)  # cdf[d + n] = P(y below edge j + d)
    inner = np.clip(np.diff(cdf), 0.0, 1.0)  # cell m = j + d, d = -(n - 1)..n - 1
    j = np.arange(n + 1)
    return _Toeplitz(inner, np.clip(cdf[n - j], 0.0, 1.0), np.clip(1 - cdf[2 * n - 1 - j], 0.0, 1.0))


def _kernels(a: float, n: int, step: AffineStep | SmoothedAbsStep
             ) -> tuple[_Dense | _Banded | _Toeplitz, _Dense | _Banded | _Toeplitz]:
    """The rounded-down and rounded-up chains' transitions of one step."""
    if isinstance(step, AffineStep) and step.c == 1:
        return _toeplitz(a, n, step, False), _toeplitz(a, n, step, True)
    return _transitions(a, n, step)


def lattice_laws(a: float, steps: Sequence[AffineStep | SmoothedAbsStep], start: float, n: int) -> LatticeLaws:
    """Both rounded chains' laws after each of `steps`, from w_0 = start in [-a, a], on n + 1 lattice points. The
    laws after a prefix of the steps depend on that prefix alone: a kept chain (`_CACHE_BYTES`) with the same a,
    start, n and the longest common prefix supplies those rows (read-only), and only the rest is propagated."""
    if (n + 1) ** 2 * len(steps) > MAX_WORK:  # first: a refused request costs nothing (10^6 steps took 5 s to check)
        raise ParameterError(f"{len(steps)} steps on {n + 1} lattice points exceed the work cap; use fewer steps")
    distinct: dict[AffineStep | SmoothedAbsStep, int] = {}  # each distinct step, at its first index
    for k, st in enumerate(steps):
        distinct.setdefault(st, k)
    for name, v in (("a", a), ("start", start)) + tuple(
            (f"step {k} {f.name}", getattr(st, f.name)) for st, k in distinct.items() for f in fields(st)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} must be finite, got {v!r}")
    if a <= 0 or not -a <= start <= a:
        raise ParameterError("need a > 0 and -a <= start <= a")
    if any(st.tau <= 0 or not st.monotone for st in distinct):
        raise ParameterError("every step needs tau > 0 and a monotone map (c >= 0; pull <= scale sqrt(pi/2))")
    # per distinct step two dense (n + 1)^2 transition matrices and four temporaries of their size; both chains' laws
    require_memory(8.0 * (8 * (n + 1) ** 2 + 2 * len(steps) * (n + 1)), "the lattice chains' transition matrices")
    key = (float(a), float(start), int(n), tuple(steps))
    done, lower, upper = _KEPT.prefix(key)
    if lower is None or done < len(steps):
        h = 2 * a / n
        if done:
            laws = [lower[done - 1], upper[done - 1]]
        else:
            laws = [np.zeros(n + 1), np.zeros(n + 1)]  # rounded down, rounded up
            laws[0][min(max(math.floor((start + a) / h), 0), n)] = 1.0
            laws[1][min(max(math.ceil((start + a) / h - 1e-12), 0), n)] = 1.0
        rows = _propagate(a, n, key[3][done:], laws)
        lower = np.concatenate([lower[:done], rows[0]]) if done else rows[0]
        upper = np.concatenate([upper[:done], rows[1]]) if done else rows[1]
        _KEPT.keep(key, lower, upper)
    return LatticeLaws(np.linspace(-a, a, n + 1), lower[:len(steps)], upper[:len(steps)])


def _propagate(a: float, n: int, steps: Sequence[AffineStep | SmoothedAbsStep],
               laws: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The rounded-down and rounded-up chains' laws after each of `steps` from the laws `laws` (one kernel per run of
    equal steps)."""
    rows: tuple[list, list] = ([], [])
    cached, kernels = None, None
    for st in steps:
        if st != cached:
            cached, kernels = st, _kernels(a, n, st)
        for chain in (0, 1):
            laws[chain] = kernels[chain].apply(laws[chain])
            rows[chain].append(laws[chain])
    return np.array(rows[0]).reshape(len(steps), n + 1), np.array(rows[1]).reshape(len(steps), n + 1)


class _Kept:
    """Computed chains by (a, start, n), each as (steps, lower rows, upper rows), read-only; the least recently used
    (a, start, n) is dropped first while all rows exceed _CACHE_BYTES."""

    def __init__(self) -> None:
        self.chains: OrderedDict[tuple, list[tuple[tuple, np.ndarray, np.ndarray]]] = OrderedDict()
        self.bytes = 0

    def prefix(self, key: tuple) -> tuple[int, np.ndarray | None, np.ndarray | None]:
        """The longest prefix of key's steps that a kept chain with key's a, start and n has run, and that chain's
        rows (None when none shares a first step)."""
        best, done = (None, None), 0
        for steps, lower, upper in self.chains.get(key[:3], ()):
            common = next((i for i, (x, y) in enumerate(zip(steps, key[3], strict=False)) if x != y),
                          min(len(steps), len(key[3])))
            if common > done:
                best, done = (lower, upper), common
        if done:
            self.chains.move_to_end(key[:3])
        return (done, *best)

    def keep(self, key: tuple, lower: np.ndarray, upper: np.ndarray) -> None:
        size = lower.nbytes + upper.nbytes
        if size > _CACHE_BYTES:
            return
        lower.flags.writeable = upper.flags.writeable = False
        self.chains.setdefault(key[:3], []).append((key[3], lower, upper))
        self.chains.move_to_end(key[:3])
        self.bytes += size
        while self.bytes > _CACHE_BYTES:
            _, dropped = self.chains.popitem(last=False)
            self.bytes -= sum(lo.nbytes + up.nbytes for _, lo, up in dropped)


_KEPT = _Kept()


def mean_bracket(a: float, drift: float, tau: float, steps: int, start: float, n: int) -> np.ndarray:
    """(steps, 2) array: proven [lower, upper] on E[w_k], k = 1..steps, for the constant step
    w <- clip(w - drift + tau Z) from w_0 = start in [-a, a]."""
    laws = lattice_laws(a, [AffineStep(1.0, drift, tau)] * steps, start, n)
    return laws.expectation(laws.points)
