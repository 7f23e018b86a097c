"""Proven brackets on E[w_k] of projected noisy SGD on an interval, by monotone lattice chains.

The chain w_k = clip_[-a, a](w_{k-1} - eta (g + sigma Z_k)) is monotone in w_{k-1} for every Z_k. Rounding each
iterate down (up) to the lattice -a + j h, j = 0..N, gives chains l_k <= w_k <= u_k for the same noise, by
induction (floor(f(l, Z)) <= f(l, Z) <= f(w, Z)). Their laws are exact vectors on the lattice (transition
probabilities are normal cdf differences), so E[l_k] <= E[w_k] <= E[u_k]; each step's rounding moves a chain by at
most h, so the bracket is at most k h wide. Float rounding of the probabilities (row sums within N * 1e-16 of 1) is
covered by a pad of 1e-11 a per step.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from verify.errors import ParameterError

MAX_WORK = 4e9  # N^2 * steps multiply-adds per bracket (about a second)


def _transition(a: float, n: int, drift: float, tau: float, up: bool) -> np.ndarray:
    """Row j: the law of the rounded clip(x_j - drift + tau Z) on the lattice x_k = -a + k h."""
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    # cell edges in units of tau from each row's mean: rounding down maps [x_k, x_k+1) -> x_k, up maps (x_k-1, x_k]
    edges = x[:-1] + h if not up else x[:-1]
    z = (edges[None, :] - (x[:, None] - drift)) / tau
    cdf = special.ndtr(z)  # P(y below each inner edge), rows = sources
    probs = np.diff(np.concatenate([np.zeros((n + 1, 1)), cdf, np.ones((n + 1, 1))], axis=1), axis=1)
    return np.clip(probs, 0.0, 1.0)


def mean_bracket(a: float, drift: float, tau: float, steps: int, start: float, n: int) -> np.ndarray:
    """(steps, 2) array: proven [lower, upper] on E[w_k], k = 1..steps, for w_0 = start in [-a, a]."""
    for name, v in (("a", a), ("drift", drift), ("tau", tau), ("start", start)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} must be finite, got {v!r}")
    if a <= 0 or tau <= 0 or not -a <= start <= a:
        raise ParameterError("need a > 0, tau > 0 and -a <= start <= a")
    if (n + 1) ** 2 * steps > MAX_WORK:
        raise ParameterError(f"{steps} steps on {n + 1} lattice points exceed the work cap; use fewer steps")
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    out = np.empty((steps, 2))
    for col, up in ((0, False), (1, True)):
        m = _transition(a, n, drift, tau, up)
        law = np.zeros(n + 1)
        j = math.floor((start + a) / h) if not up else math.ceil((start + a) / h - 1e-12)
        law[min(max(j, 0), n)] = 1.0
        for k in range(steps):
            law = law @ m
            out[k, col] = law @ x
    pad = 1e-11 * a * np.arange(1, steps + 1)
    out[:, 0] -= pad
    out[:, 1] += pad
    return out
