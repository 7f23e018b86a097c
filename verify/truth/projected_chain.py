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
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import special

from verify.errors import ParameterError
from verify.limits import require_memory

MAX_WORK = 4e9  # N^2 * steps multiply-adds per bracket (about a second)


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


def _transition(a: float, n: int, step: AffineStep | SmoothedAbsStep, up: bool) -> np.ndarray:
    """Row j: the law of the rounded clip(step.mean(x_j) + tau Z) on the lattice x_k = -a + k h. The normal cdf is
    evaluated only at the inner cell edges within [-40, 10] sds of the mean: beyond them its float value is exactly 0
    or 1, so the cells there hold exact zeros."""
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    # rounding down maps [x_k, x_k+1) -> x_k, up maps (x_k-1, x_k]: the inner cell edges
    edges = x[:-1] + h if not up else x[:-1]
    mean = step.mean(x)
    width = min(n, math.ceil(50 * step.tau / h) + 2)
    start = np.clip(np.floor((mean - 40 * step.tau - edges[0]) / h), 0, n - width).astype(np.int64)
    cdf = sliding_window_view(edges, width)[start]  # P(y below each edge of row j's window), rows = sources
    cdf -= mean[:, None]
    cdf /= step.tau
    special.ndtr(cdf, out=cdf)
    probs = np.empty((n + 1, width + 1))
    probs[:, 0], probs[:, width] = cdf[:, 0], 1 - cdf[:, -1]
    np.subtract(cdf[:, 1:], cdf[:, :-1], out=probs[:, 1:width])
    np.clip(probs, 0.0, 1.0, out=probs)
    if width == n:  # every row's window is the whole lattice
        return probs
    matrix = np.zeros((n + 1, n + 1))
    np.put_along_axis(matrix, start[:, None] + np.arange(width + 1), probs, axis=1)
    return matrix


@dataclass(frozen=True)
class _Dense:
    """A transition matrix applied as law @ matrix in a single-threaded loop (a multi-threaded BLAS call on a
    loaded machine costs ten times more than the product)."""

    matrix: np.ndarray

    def apply(self, law: np.ndarray) -> np.ndarray:
        return np.einsum("i,ij->j", law, self.matrix)


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
    """`_transition` for c = 1 from the 2n normal cdfs at the offsets d = m - j (edge m minus mean j is
    d h + drift, plus h when rounding down), not (n + 1)^2 of them."""
    h = 2 * a / n
    d = np.arange(-n, n)
    cdf = special.ndtr((d * h + (0.0 if up else h) + step.drift) / step.tau)  # cdf[d + n] = P(y below edge j + d)
    inner = np.clip(np.diff(cdf), 0.0, 1.0)  # cell m = j + d, d = -(n - 1)..n - 1
    j = np.arange(n + 1)
    return _Toeplitz(inner, np.clip(cdf[n - j], 0.0, 1.0), np.clip(1 - cdf[2 * n - 1 - j], 0.0, 1.0))


def _kernel(a: float, n: int, step: AffineStep | SmoothedAbsStep, up: bool) -> _Dense | _Toeplitz:
    if isinstance(step, AffineStep) and step.c == 1:
        return _toeplitz(a, n, step, up)
    return _Dense(_transition(a, n, step, up))


def lattice_laws(a: float, steps: Sequence[AffineStep | SmoothedAbsStep], start: float, n: int) -> LatticeLaws:
    """Both rounded chains' laws after each of `steps`, from w_0 = start in [-a, a], on n + 1 lattice points."""
    for name, v in (("a", a), ("start", start)) + tuple(
            (f"step {k} {f.name}", getattr(st, f.name)) for k, st in enumerate(steps) for f in fields(st)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} must be finite, got {v!r}")
    if a <= 0 or not -a <= start <= a:
        raise ParameterError("need a > 0 and -a <= start <= a")
    if any(st.tau <= 0 or not st.monotone for st in steps):
        raise ParameterError("every step needs tau > 0 and a monotone map (c >= 0; pull <= scale sqrt(pi/2))")
    if (n + 1) ** 2 * len(steps) > MAX_WORK:
        raise ParameterError(f"{len(steps)} steps on {n + 1} lattice points exceed the work cap; use fewer steps")
    # per distinct step a dense (n + 1)^2 transition matrix and four temporaries of its size; the laws of both chains
    require_memory(8.0 * (6 * (n + 1) ** 2 + 2 * len(steps) * (n + 1)), "the lattice chains' transition matrices")
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    laws = []
    for up in (False, True):
        law = np.zeros(n + 1)
        j = math.floor((start + a) / h) if not up else math.ceil((start + a) / h - 1e-12)
        law[min(max(j, 0), n)] = 1.0
        rows, cached, kernel = [], None, None
        for st in steps:
            if st != cached:
                cached, kernel = st, _kernel(a, n, st, up)
            law = kernel.apply(law)
            rows.append(law)
        laws.append(np.array(rows))
    return LatticeLaws(x, laws[0], laws[1])


def mean_bracket(a: float, drift: float, tau: float, steps: int, start: float, n: int) -> np.ndarray:
    """(steps, 2) array: proven [lower, upper] on E[w_k], k = 1..steps, for the constant step
    w <- clip(w - drift + tau Z) from w_0 = start in [-a, a]."""
    laws = lattice_laws(a, [AffineStep(1.0, drift, tau)] * steps, start, n)
    return laws.expectation(laws.points)
