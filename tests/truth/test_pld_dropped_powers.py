"""`_polar_power` drops the spectrum elements whose power is below `_DROP` (most of them in a long composition):
checked against 50-digit mpmath powers element by element, against exact integer compositions where most
elements are dropped, and against the undropped polar power (the former path) on the catalog's kind of cores."""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.truth import pld

from .test_pld import _exact_power, _step, assert_windows_within_budget

_WIDE_U = float(np.finfo(pld._WIDE).eps) / 2 if pld._WIDE is not None else None


def _exact(v) -> mpmath.mpf:
    """the binary value of a double or long double, exactly"""
    num, den = v.as_integer_ratio()
    return mpmath.mpf(num) / den


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 10**6), wide=st.booleans())
def test_polar_power_against_mpmath(seed, k, wide):
    """Every kept element is within its relative error bound of the exact f^k; every dropped one has |f|^k <
    _DROP exactly. The moduli cluster around the drop threshold |f| = _DROP^(1/k) (both sides) and include 0."""
    if wide and pld._WIDE is None:
        pytest.skip("no x87 long double")
    dtype, u = (pld._WIDE, _WIDE_U) if wide else (np.float64, pld._U)
    rng = np.random.default_rng(seed)
    threshold = math.log(pld._DROP) / k
    log_mod = np.minimum(threshold + rng.normal(0, 2 / k, 40), 0.0)
    modulus = np.exp(log_mod).astype(dtype)
    modulus[0] = 0.0
    angle = rng.uniform(-math.pi, math.pi, 40).astype(dtype)
    f = (modulus * np.cos(angle) + 1j * modulus * np.sin(angle)).astype(np.clongdouble if wide else np.complex128)
    mag = np.abs(f.astype(np.complex128))
    power, rel = pld._polar_power(f, mag, k, u)
    with mpmath.workdps(50):
        for z, p, r in zip(f, power, rel, strict=True):
            exact = mpmath.mpc(_exact(z.real), _exact(z.imag)) ** k
            if p == 0 and r == 0:
                assert abs(exact) < pld._DROP
            else:
                got = mpmath.mpc(_exact(p.real), _exact(p.imag))
                assert abs(got - exact) <= mpmath.mpf(float(r)) * abs(exact)


def _spread_ints(rng, cells: int) -> np.ndarray:
    """integer masses summing to 2^15 over `cells` cells, no cell dominant: most frequencies have |f| well below 1"""
    d = rng.integers(-(2**14 // cells), 2**14 // cells, cells // 2)
    return rng.permutation(2**15 // cells + np.concatenate([d, -d]))


@functools.cache
def _spread_case(steps: tuple[int, ...]) -> tuple[list[np.ndarray], np.ndarray]:
    """The spread masses of each phase and their exact composition (computed once for both transform precisions)."""
    rng = np.random.default_rng(sum(steps))
    ints = [_spread_ints(rng, 16) for _ in steps]
    unit = mpmath.mpf(2) ** (-15 * sum(steps))
    exact = np.array([float(mpmath.mpf(v) * unit) for v in _exact_power(ints, list(steps))])
    return [x * 2.0**-15 for x in ints], exact


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("steps", [[300], [120, 160]])
def test_dropped_compositions_stay_within_budget(wide, steps, monkeypatch):
    """Exact integer compositions of spread probability vectors, long enough that most spectrum elements fall
    below _DROP: the l1 error of `_spectral_power` is within its budget, on the whole support and on a window."""
    if wide and pld._WIDE is None:
        pytest.skip("no x87 long double")
    monkeypatch.setattr(pld, "_WIDE", pld._WIDE if wide else None)
    masses, exact = _spread_case(tuple(steps))
    parts = [_step(m, t) for m, t in zip(masses, steps, strict=True)]
    powers = []
    real = pld._polar_power

    def recorded(f, mag, k, u):
        powers.append(real(f, mag, k, u)[0])
        return powers[-1], real(f, mag, k, u)[1]

    monkeypatch.setattr(pld, "_polar_power", recorded)
    assert_windows_within_budget(parts, exact)
    assert all(np.mean(power == 0) > 0.5 for power in powers)  # the case this test is about


def _undropped_polar_power(f: np.ndarray, mag: np.ndarray, k: int, u: float) -> tuple[np.ndarray, np.ndarray]:
    """the former `_polar_power`: every element's power in polar form and its relative error bound"""
    with np.errstate(divide="ignore"):
        log_mag = np.log(np.abs(f))
    ang = np.angle(f)
    rel = np.abs(log_mag)
    rel[~np.isfinite(rel)] = 0.0
    rel = (rel + np.abs(ang) + 2) * k
    rel = (rel + 4) * (8 * u)
    modulus = np.exp(log_mag * k)
    power = np.empty(len(f), dtype=f.dtype)
    power.real = np.cos(ang * k) * modulus
    power.imag = np.sin(ang * k) * modulus
    return power, rel.astype(np.float64)


@settings(max_examples=12, deadline=None)
@given(order=st.sampled_from(["add", "remove"]), q=st.floats(1e-3, 0.5), sigma=st.floats(0.4, 3.0),
       steps=st.integers(1, 3000), phases=st.integers(1, 2))
def test_dropping_agrees_with_the_undropped_power(order, q, sigma, steps, phases):
    """Subsampled-Gaussian cores as the catalog composes them (one or two phases): the composition with dropped
    elements and the one with every power computed differ by at most the sum of their budgets."""
    schedule = [(q, sigma, steps), (min(1.0, 2 * q), 1.5 * sigma, steps // 2 + 1)][:phases]
    h = 0.5 / min(steps, 8 * math.sqrt(steps))
    parts = [pld._step_pmf(order, qi, si, h, ti) for qi, si, ti in schedule]
    lo, hi, _ = pld._window(parts, pld._ALIAS_TAIL)
    fast, fast_budget = pld._spectral_power(parts, lo, hi)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pld, "_polar_power", _undropped_polar_power)
        slow, slow_budget = pld._spectral_power(parts, lo, hi)
    assert np.sum(np.abs(fast - slow)) <= fast_budget + slow_budget
    assert fast_budget <= 1.01 * slow_budget + 1e-30
