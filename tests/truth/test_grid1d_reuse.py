"""Keyed 1-D grid laws taken from kept prefixes (verify.truth.grid1d._KEPT_STATES) against a propagation with
nothing kept, bit for bit, on generated step sequences; the kept states' byte cap; the shared kernels' entry cap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.truth import grid1d
from verify.truth.grid1d import pnsgd_process

_STEP = st.tuples(st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([-0.3, 0.0, 0.4]))  # (lam, m): few, so
# generated sequences share prefixes


def _process(steps: list[tuple[float, float]], R: float | None, start_sd: float) -> grid1d.Process:
    """Projected (or not) noisy SGD on the quadratics (lam/2)(w - m)^2 of `steps`, keyed by (lam, m)."""
    grads = [lambda w, lam=lam, m=m: lam * (w - m) for lam, m in steps]
    return pnsgd_process(grads, eta=0.2, sigma=1.0, R=R, start_sd=start_sd,
                         keys=[("quadratic", lam, m) for lam, m in steps])


def _fresh_law(proc: grid1d.Process, grid: grid1d._Grid) -> np.ndarray:
    """_law with nothing kept"""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(grid1d, "_KEPT_STATES", grid1d._KeptStates())
        return grid1d._law(proc, grid)


@settings(max_examples=40, deadline=None)
@given(common=st.lists(_STEP, max_size=4), tails=st.lists(st.lists(_STEP, max_size=4), min_size=1, max_size=4),
       R=st.sampled_from([None, 1.0]), start_sds=st.lists(st.sampled_from([0.0, 0.3]), min_size=1, max_size=2))
def test_kept_prefixes_give_the_fresh_laws(common, tails, R, start_sds):
    """Laws that share first steps (and their prefixes, run after them), at one or two starts, equal a propagation
    with nothing kept, bit for bit."""
    grid = grid1d._Grid.make(-1.5, 1.5, 0.04, R) if R is None else grid1d._Grid.make(-R, R, 0.04, R)
    runs = [common + tail for tail in tails if common + tail]
    runs += [run[:k] for run in runs for k in range(1, len(run))]  # prefixes of kept laws: no step left to run
    with pytest.MonkeyPatch.context() as m:
        m.setattr(grid1d, "_KEPT_STATES", grid1d._KeptStates())
        for start_sd in start_sds:
            for steps in runs:
                proc = _process(steps, R, start_sd)
                assert np.array_equal(grid1d._law(proc, grid), _fresh_law(proc, grid))


def test_kept_states_stay_within_their_byte_cap(monkeypatch):
    """The kept rows never exceed _STATES_BYTES (the least recently used start and grid go first), and a law
    larger than the cap is not kept."""
    monkeypatch.setattr(grid1d, "_KEPT_STATES", grid1d._KeptStates())
    monkeypatch.setattr(grid1d, "_STATES_BYTES", 30_000)
    grid = grid1d._Grid.make(-1.0, 1.0, 0.04, 1.0)
    for start_sd in (0.0, 0.1, 0.2, 0.3):
        for n in (3, 6, 9, 80, 40):  # 80 steps: 33 kB, over the cap; 40 steps: the oldest go
            grid1d._law(_process([(1.0, 0.0)] * n, 1.0, start_sd), grid)
            kept = grid1d._KEPT_STATES
            assert kept.bytes == sum(r.nbytes for at in kept.laws.values() for r in at.rows) <= 30_000
    assert all(len(r) < 80 for at in grid1d._KEPT_STATES.laws.values() for r in at.rows)


def test_shared_kernels_stay_within_their_entry_cap(monkeypatch):
    """The shared transfer matrices' running entry count is their total and stays within _KERNEL_CACHE_NNZ."""
    monkeypatch.setattr(grid1d, "_KERNELS", grid1d._Kernels())
    monkeypatch.setattr(grid1d, "_KERNEL_CACHE_NNZ", 6_000)
    for lam in (0.5, 1.0, 2.0, 3.0):
        for h in (0.04, 0.05):
            grid1d._law(_process([(lam, 0.0)] * 2, 1.0, 0.0), grid1d._Grid.make(-1.0, 1.0, h, 1.0))
            kernels = grid1d._KERNELS
            assert kernels.nnz == sum(k.nnz for k in kernels.kept.values()) <= 6_000
    assert grid1d._KERNELS.kept
