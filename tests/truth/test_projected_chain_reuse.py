"""The lattice chains' shared work (verify.truth.projected_chain): transition matrices built from one set of
differences against the former construction (a copy of the cdf per chain, padded placement), and laws taken
from kept chains with a common prefix against a fresh propagation, on generated steps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view
from scipy import special

from verify.truth import projected_chain as pc
from verify.truth.projected_chain import AffineStep, SmoothedAbsStep, lattice_laws


def _former_transitions(a: float, n: int, step) -> tuple[np.ndarray, np.ndarray]:
    """`_transitions` as it was built before the shared differences: each chain's cdf copy, its own differences,
    placed in a padded matrix"""
    x = np.linspace(-a, a, n + 1)
    h = 2 * a / n
    mean = step.mean(x)
    width = min(n + 1, math.ceil(50 * step.tau / h) + 3)
    start = np.clip(np.floor((mean - 40 * step.tau - x[0]) / h), 0, n + 1 - width).astype(np.int64)
    cdf = np.empty((n + 1, width + 2))
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    window = cdf[:, 1:-1]
    window[...] = sliding_window_view(x, width)[start]
    window -= mean[:, None]
    window /= step.tau
    special.ndtr(window, out=window)
    down, up = cdf.copy(), cdf
    down[start == 0, 1] = 0.0
    up[start + width == n + 1, width] = 1.0

    def placed(probs, first):
        np.clip(probs, 0.0, 1.0, out=probs)
        matrix = np.zeros((n + 1, n + 3))
        np.put_along_axis(matrix, first[:, None] + 1 + np.arange(probs.shape[1]), probs, axis=1)
        return np.ascontiguousarray(matrix[:, 1:n + 2])

    return placed(np.diff(down, axis=1), start - 1), placed(np.diff(up, axis=1), start)


_TAU = st.floats(1e-3, 3.0)
_AFFINE = st.builds(AffineStep, st.floats(0.0, 1.3), st.floats(-0.5, 0.5), _TAU)
_SMOOTHED = st.builds(lambda scale, share, tau: SmoothedAbsStep(share * scale * math.sqrt(math.pi / 2), scale, tau),
                      st.floats(0.01, 1.0), st.floats(0.0, 1.0), _TAU)
_STEP = st.one_of(_AFFINE, _SMOOTHED)


def _matrix(kernel, n: int) -> np.ndarray:
    """A transition's matrix, row j its image of the unit law at lattice point j."""
    return np.array([kernel.apply(e) for e in np.eye(n + 1)])


@settings(max_examples=150, deadline=None)
@given(step=_STEP, n=st.integers(2, 160), a=st.floats(0.05, 3.0))
def test_transitions_equal_the_former_construction(step, n, a):
    """Bit for bit, on banded windows (small tau against the lattice: sparse rows) and whole-lattice ones (dense
    views), for both chains: every row, and a law's product with the former matrix (einsum in row order)."""
    law = np.random.default_rng(n).random(n + 1) ** 4
    for now, before in zip(pc._transitions(a, n, step), _former_transitions(a, n, step), strict=True):
        assert before.shape == (n + 1, n + 1)
        assert np.array_equal(_matrix(now, n), before)
        assert np.array_equal(now.apply(law), pc._Dense(before).apply(law))


def _fresh(a, steps, start, n):
    """lattice_laws with nothing kept"""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pc, "_KEPT", pc._Kept())
        return lattice_laws(a, steps, start, n)


@settings(max_examples=60, deadline=None)
@given(common=st.lists(_STEP, max_size=5), tails=st.lists(st.lists(_STEP, max_size=4), min_size=1, max_size=4),
       repeat=st.integers(1, 3), n=st.integers(2, 60), a=st.floats(0.1, 2.0), where=st.floats(-1.0, 1.0))
def test_kept_prefixes_give_the_fresh_laws(common, tails, repeat, n, a, where):
    """Chains sharing a prefix (runs of equal steps included), asked in turn: each answer equals a propagation
    with nothing kept, bit for bit, and is read-only (it may be a kept chain's rows)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pc, "_KEPT", pc._Kept())
        start = where * a
        for tail in tails + tails[:1]:
            steps = [s for s in common for _ in range(repeat)] + tail
            got = lattice_laws(a, steps, start, n)
            want = _fresh(a, steps, start, n)
            assert got.lower.shape == want.lower.shape == (len(steps), n + 1)
            assert np.array_equal(got.lower, want.lower) and np.array_equal(got.upper, want.upper)
            assert np.array_equal(got.points, want.points)
            assert not got.lower.flags.writeable and not got.upper.flags.writeable


def test_kept_rows_stay_within_the_cache_bound(monkeypatch):
    """The kept rows never exceed _CACHE_BYTES (the least recently used (a, start, n) goes first) and the
    counter matches what is kept; a chain larger than the bound is not kept."""
    monkeypatch.setattr(pc, "_KEPT", pc._Kept())
    monkeypatch.setattr(pc, "_CACHE_BYTES", 40_000)
    step = AffineStep(0.5, 0.1, 0.3)
    for k in range(12):
        lattice_laws(1.0, [step] * (k % 4 + 1), k / 12, 100)
        kept = sum(lo.nbytes + up.nbytes for chains in pc._KEPT.chains.values() for _, lo, up in chains)
        assert pc._KEPT.bytes == kept <= pc._CACHE_BYTES
    lattice_laws(1.0, [step] * 30, 0.0, 100)  # 48 kB of rows
    assert all(len(s) < 30 for chains in pc._KEPT.chains.values() for s, _, _ in chains)
