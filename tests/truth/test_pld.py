"""The PLD bracket of the composed subsampled Gaussian against independent references: the single-step closed form
(verify.truth.subsampled_dp), the exact Gaussian at q = 1 (mpmath), Google's dp_accounting, and 50-digit mpmath
checks of the module's two floating-point assumptions (ndtr accuracy / cut error eta, FFT error bound)."""

from __future__ import annotations

import math
from itertools import pairwise

import mpmath
import numpy as np
import pytest
from flint import fmpz
from scipy import fft as sfft
from scipy.special import ndtr

from verify.errors import ParameterError, ResourceLimitError
from verify.truth import pld
from verify.truth.pld import sgm_composed_delta, sgm_composed_epsilon
from verify.truth.subsampled_dp import sgm_delta, sgm_delta_add, sgm_dp_epsilon

U = 2.0**-53


# ---------------------------------------------------------------- single step: the closed form of subsampled_dp
@pytest.mark.parametrize("eps, q, sigma", [(0.5, 0.01, 1.0), (1.0, 0.1, 0.8), (0.2, 0.5, 2.0), (2.0, 0.01, 0.5),
                                           (0.0, 0.3, 1.5)])
@pytest.mark.parametrize("one_sided", [False, True])
def test_single_step_brackets_closed_form(eps, q, sigma, one_sided):
    tol = 1e-2
    ref = sgm_delta_add if one_sided else sgm_delta
    b = sgm_composed_delta(eps, q, sigma, 1, one_sided=one_sided, eps_tolerance=tol)
    assert b.lower <= float(ref(eps, q, sigma)) <= b.upper
    # rounding moves each loss by at most one cell (h = tol at T = 1): the bracket lies within the true curve at
    # eps -/+ tol, i.e. its width is at most the tolerance effect
    assert b.upper <= float(ref(eps - tol, q, sigma)) + 1e-10
    assert b.lower >= float(ref(eps + tol, q, sigma)) - 1e-10
    assert b.grid_width == tol and b.error_budget < 1e-12


@pytest.mark.parametrize("delta, q, sigma", [(1e-5, 0.01, 0.7), (1e-3, 0.2, 1.0)])
@pytest.mark.parametrize("one_sided", [False, True])
def test_single_step_epsilon_brackets_closed_form(delta, q, sigma, one_sided):
    b = sgm_composed_epsilon(delta, q, sigma, 1, one_sided=one_sided, eps_tolerance=1e-3)
    ref = float(sgm_dp_epsilon(delta, q, sigma, one_sided))
    assert b.lower <= ref <= b.upper
    assert b.upper - b.lower <= 1.5e-3


# ---------------------------------------------------------------- q = 1: the composition is a Gaussian mechanism
def _gauss_delta(eps: float, mu: float) -> float:
    with mpmath.workdps(50):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


@pytest.mark.parametrize("steps, sigma, tol", [(1, 1.0, 1e-2), (10, 3.0, 1e-2), (100, 10.0, 1e-2), (100, 4.0, 2e-2)])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_q1_is_gaussian(steps, sigma, tol, eps):
    mu = math.sqrt(steps) / sigma
    b = sgm_composed_delta(eps, 1.0, sigma, steps, eps_tolerance=tol)
    assert b.lower <= _gauss_delta(eps, mu) <= b.upper
    assert b.upper <= _gauss_delta(eps - tol, mu) + 1e-9
    assert b.lower >= _gauss_delta(eps + tol, mu) - 1e-9
    assert b.lower <= sgm_composed_delta(eps, 1.0, sigma, steps, one_sided=True, eps_tolerance=tol).upper


# ---------------------------------------------------------------- dp_accounting as an oracle
def _dp_accounting(q: float, sigma: float, steps: int, pessimistic: bool):
    pld_lib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    # pessimistic: connect-the-dots (Doroshenko et al. 2022); optimistic: privacy buckets (CTD has no optimistic)
    p = pld_lib.from_gaussian_mechanism(standard_deviation=sigma, sensitivity=1, sampling_prob=q,
                                        value_discretization_interval=1e-4, pessimistic_estimate=pessimistic,
                                        use_connect_dots=pessimistic)
    return p.self_compose(steps)


@pytest.mark.parametrize("q, sigma, steps, eps, delta", [(0.01, 1.0, 100, 0.5, 1e-6), (0.01, 1.0, 1000, 1.0, 1e-5),
                                                        (0.1, 2.0, 50, 1.0, 1e-5)])
def test_against_dp_accounting(q, sigma, steps, eps, delta):
    """dp_accounting's ADD_OR_REMOVE_ONE PLD holds two PMFs: its REMOVE adjacency (mu_upper = (1-q) N(0) + q N(-1)
    against N(0), i.e. P || Q reflected) is our add order; its ADD adjacency is our Q || P; get_delta_for_epsilon
    returns the max of the two, our one_sided=False."""
    pess, opt = _dp_accounting(q, sigma, steps, True), _dp_accounting(q, sigma, steps, False)
    for one_sided in (False, True):
        b = sgm_composed_delta(eps, q, sigma, steps, one_sided=one_sided)
        d_pess, d_opt = ((d._pmf_remove.get_delta_for_epsilon(eps) if one_sided else d.get_delta_for_epsilon(eps))
                         for d in (pess, opt))
        assert d_pess >= b.lower and d_opt <= b.upper  # the two brackets overlap
        # CTD's pessimistic value is within ~1e-4 * steps of the truth in eps: inside our bracket
        assert b.lower <= d_pess <= b.upper
        e = sgm_composed_epsilon(delta, q, sigma, steps, one_sided=one_sided)
        e_pess, e_opt = ((d._pmf_remove.get_epsilon_for_delta(delta) if one_sided else d.get_epsilon_for_delta(delta))
                         for d in (pess, opt))
        assert e_pess >= e.lower and e_opt <= e.upper
        assert e.lower <= e_pess <= e.upper
        assert e.upper - e.lower <= 1.05e-2


# ---------------------------------------------------------------- epsilon and delta queries agree
def test_epsilon_consistent_with_delta():
    q, sigma, steps, delta = 0.05, 1.0, 20, 1e-6
    e = sgm_composed_epsilon(delta, q, sigma, steps)
    assert 0 < e.lower < e.upper < math.inf
    assert sgm_composed_delta(e.upper, q, sigma, steps).upper <= delta
    assert sgm_composed_delta(e.lower * (1 - 1e-9), q, sigma, steps).lower > delta
    assert sgm_composed_epsilon(0.999, q, sigma, steps).lower == 0.0


# ---------------------------------------------------------------- monotonicity
def test_monotone_in_eps_steps_and_tolerance():
    q, sigma = 0.05, 1.0
    bs = [sgm_composed_delta(e, q, sigma, 20) for e in (0.25, 0.5, 1.0, 2.0)]
    assert all(a.lower >= b.lower and a.upper >= b.upper for a, b in pairwise(bs))
    bs = [sgm_composed_delta(1.0, q, sigma, t) for t in (10, 20, 40)]
    assert all(a.lower <= b.lower and a.upper <= b.upper for a, b in pairwise(bs))
    bs = [sgm_composed_delta(1.0, q, sigma, 20, eps_tolerance=t) for t in (0.1, 0.03, 0.01)]
    widths = [b.upper - b.lower for b in bs]
    assert widths[0] > widths[1] > widths[2] > 0
    assert max(b.lower for b in bs) <= min(b.upper for b in bs)


# ---------------------------------------------------------------- parameter errors name the parameter
@pytest.mark.parametrize("kwargs, name", [
    ({"q": 0.0}, "q"), ({"q": 1.5}, "q"), ({"q": math.nan}, "q"), ({"sigma": 0.0}, "sigma"),
    ({"sigma": -1.0}, "sigma"), ({"steps": 0}, "steps"), ({"steps": 2.5}, "steps"), ({"steps": math.nan}, "steps"),
    ({"eps": math.nan}, "eps"), ({"eps_tolerance": 0.0}, "eps_tolerance"),
])
def test_parameter_errors_delta(kwargs, name):
    args = {"eps": 1.0, "q": 0.1, "sigma": 1.0, "steps": 3} | kwargs
    tol = args.pop("eps_tolerance", 1e-2)
    with pytest.raises(ParameterError, match=rf"^(sampling rate |noise std )?{name}\b"):
        sgm_composed_delta(args["eps"], args["q"], args["sigma"], args["steps"], eps_tolerance=tol)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, math.nan])
def test_parameter_errors_epsilon(delta):
    with pytest.raises(ParameterError, match=r"^delta\b"):
        sgm_composed_epsilon(delta, 0.1, 1.0, 3)


def test_too_fine_a_grid_is_refused():
    with pytest.raises(ResourceLimitError, match="eps_tolerance"):
        sgm_composed_delta(1.0, 0.01, 1.0, 1000, eps_tolerance=1e-5)  # 4.6e8 cells per step
    with pytest.raises(ResourceLimitError, match="eps_tolerance"):
        sgm_composed_delta(1.0, 1.0, 1.0, 1000, eps_tolerance=1e-3)  # composed std 32: ~1e8 cells of width 4e-6


# ---------------------------------------------------------------- the floating-point assumptions, at 50 digits
def test_ndtr_relative_error_assumption():
    """ASSUMPTION of verify.truth.pld: |ndtr(a) - Phi(a)| <= 16u(1 + a^2) Phi(a) wherever Phi(a) >= 1e-290."""
    rng = np.random.default_rng(7)
    pts = np.concatenate([-np.geomspace(1e-3, 37.5, 300), rng.uniform(-37.5, 8.5, 300), [-1.3854109041611053]])
    with mpmath.workdps(50):
        for a in pts:
            exact = mpmath.ncdf(mpmath.mpf(float(a)))
            assert abs(mpmath.mpf(float(ndtr(a))) - exact) <= 16 * U * (1 + a * a) * exact, a


def _mp_loss(order, q, s, x):
    t = ((2 * x - 1) if order == "add" else (-2 * x - 1)) / (2 * s**2)
    value = mpmath.log(1 - q + q * mpmath.exp(t))
    return value if order == "add" else -value


def _mp_cdf(order, q, s, x, left):
    sg = 1 if left else -1
    if order == "remove":
        return mpmath.ncdf(sg * x / s), mpmath.npdf(x / s) / s
    value = (1 - q) * mpmath.ncdf(sg * x / s) + q * mpmath.ncdf(sg * (x - 1) / s)
    return value, ((1 - q) * mpmath.npdf(x / s) + q * mpmath.npdf((x - 1) / s)) / s


@pytest.mark.parametrize("order, q, sigma, h", [("add", 0.01, 1.0, 1e-5), ("remove", 0.01, 1.0, 1e-5),
                                                ("add", 0.5, 0.3, 1e-4), ("remove", 0.5, 0.3, 1e-4),
                                                ("add", 1.0, 2.0, 1e-3), ("add", 0.999, 5.0, 1e-6)])
def test_cut_error_eta(order, q, sigma, h):
    """The exact cut x' with F(x') = v (S(x') = v) has |loss(x') - k h| <= eta_k, at cuts across the whole per-step
    range: next to the loss bound log(1-q), the bulk and the far tails (CDF values down to ~1e-18)."""
    k_lo, k_hi = pld._step_range(order, q, sigma, h, 1000)
    ks = np.unique(np.concatenate([np.linspace(k_lo, k_hi, 60).round(), np.arange(k_lo, k_lo + 6),
                                   np.arange(k_hi - 5, k_hi + 1)]))
    x, v, left, eta, w, w_err = pld._cut_values(order, q, sigma, h, ks)
    assert np.all(eta < 1e-11)
    with mpmath.workdps(50):
        qm, s = mpmath.mpf(q), mpmath.mpf(sigma)
        bound = -mpmath.log(1 - qm) if q < 1 else None
        for k, xk, vk, lk, ek in zip(ks, x, v, left, eta, strict=True):
            grid = mpmath.mpf(int(k)) * mpmath.mpf(h)
            if not math.isfinite(xk):  # the loss at an infinite cut is the bound +-log(1-q): one-sided check
                assert (grid <= -bound + ek) if order == "add" else (grid >= bound - ek)
                continue
            xe = mpmath.mpf(float(xk))
            for _ in range(4):  # Newton on V(x') = v from the float cut
                val, dens = _mp_cdf(order, qm, s, xe, bool(lk))
                xe -= (val - mpmath.mpf(float(vk))) / (dens if lk else -dens)
            assert abs(_mp_loss(order, qm, s, xe) - grid) <= ek, (k, float(xk))
            assert abs(_mp_other_cdf(order, qm, s, xe, bool(lk)) - mpmath.mpf(float(w[ks == k][0]))) <= \
                w_err[ks == k][0], (k, float(xk))


def _mp_other_cdf(order, q, s, x, left):
    """the other law's CDF (survival function where not `left`) at x: Q = N(0, s^2) against the mixture (add); the
    mixture's image under z = -x, components at 0 and -1, against Q (remove)"""
    sg = 1 if left else -1
    if order == "add":
        return mpmath.ncdf(sg * x / s)
    return (1 - q) * mpmath.ncdf(sg * x / s) + q * mpmath.ncdf(sg * (x + 1) / s)


def _dyadic(rng, n):
    ints = rng.integers(0, 1024, n) * (rng.random(n) < 0.7)
    return ints, ints.astype(np.float64) * 2.0**-20


def _exact_power(ints: list[np.ndarray], steps: list[int]) -> list[int]:
    """the exact composition of nonnegative integer masses (Python integers: no rounding), by Kronecker
    substitution: each polynomial packed into one integer with a byte-aligned slot wider than any coefficient of the
    result, raised to its power and multiplied as integers (GMP's, through python-flint: CPython's took 15 s), then
    unpacked"""
    top = sum(t * math.log2(max(1, int(np.sum(x)))) for x, t in zip(ints, steps, strict=True))
    slot = (int(top) + 16) // 8  # bytes per coefficient: every coefficient is below prod sum(x)^t
    length = sum(t * (len(x) - 1) for x, t in zip(ints, steps, strict=True)) + 1
    packed = fmpz(1)
    for x, t in zip(ints, steps, strict=True):
        one = int.from_bytes(b"".join(int(v).to_bytes(slot, "little") for v in x.tolist()), "little")
        packed *= fmpz(one) ** t
    raw = int(packed).to_bytes(slot * length, "little")
    return [int.from_bytes(raw[i * slot:(i + 1) * slot], "little") for i in range(length)]


def _step(mass: np.ndarray, steps: int) -> pld._Step:
    return pld._Step(mass, 0, 0.0, pld._Shifts(0.0, 0.0, 1.0), steps, 0.0)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("steps", [[1], [3], [2, 3], [7], [60], [25, 90], [200]])
def test_spectral_power_error_bound(wide, steps, monkeypatch):
    """dyadic masses make the exact composition computable (integers): the l1 error of `_spectral_power` on the
    window is within its budget, in double and in x87 long double, one phase or several, short and long
    compositions (the budget is per frequency: it must hold where the spectrum decays and where it does not), on the
    whole support and on a window cut inside it (the exact masses outside it then fold onto the window: within the
    budget plus that mass)."""
    if wide and pld._WIDE is None:
        pytest.skip("no x87 long double")
    monkeypatch.setattr(pld, "_WIDE", pld._WIDE if wide else None)
    rng = np.random.default_rng(len(steps) * 10 + steps[0])
    if sum(steps) < 50:  # sub-probability masses
        pairs = [_dyadic(rng, 40) for _ in steps]
        ints = [i for i, _ in pairs]
        masses = [m / max(1.0, float(np.sum(m))) for _, m in pairs]
        scale = [2.0**-20 / max(1.0, float(np.sum(m))) for _, m in pairs]
    else:  # probability vectors (as a per-step loss law is), so that a long composition keeps its mass
        ints = []
        for _ in steps:
            x = _dyadic(rng, 40)[0] // 2  # sums to at most 20,460
            x[rng.integers(40)] += 2**15 - int(np.sum(x))
            ints.append(x)
        masses = [x * 2.0**-15 for x in ints]
        scale = [2.0**-15 for _ in steps]
    exact_ints = _exact_power(ints, steps)
    unit = mpmath.fprod(mpmath.mpf(sc) ** t for sc, t in zip(scale, steps, strict=True))
    exact = np.array([float(mpmath.mpf(v) * unit) for v in exact_ints])
    parts = [_step(m, t) for m, t in zip(masses, steps, strict=True)]
    assert_windows_within_budget(parts, exact)


def assert_windows_within_budget(parts, exact: np.ndarray) -> None:
    """`_spectral_power` of `parts` on the whole support and on its middle half: within its l1 budget of the exact
    composition (plus the mass outside the window), the budget below 1e-9."""
    top = len(exact) - 1
    for lo, hi in [(0, top), (top // 4, 3 * top // 4)]:
        out, budget = pld._spectral_power(parts, lo, hi)
        outside = float(np.sum(exact[:lo]) + np.sum(exact[hi + 1:]))
        assert np.sum(np.abs(out - exact[lo:hi + 1])) <= budget + outside
        assert budget < 1e-9


@pytest.mark.parametrize("tail", [1e-2, 1e-4, 1e-8])
@pytest.mark.parametrize("steps", [[5], [3, 8]])
def test_chernoff_window_holds_the_composed_mass(tail, steps):
    """`_window`'s Chernoff bound: the exact composed mass outside [lo, hi] is at most 2 tail (integer masses, exact
    composition, probability vectors), and the window is not the whole support (the bound does work)."""
    rng = np.random.default_rng(int(1 / tail) + len(steps))
    ints = []
    for _ in steps:  # a probability vector: 30 integer masses summing to 2^15, the rest at a random cell
        x, _ = _dyadic(rng, 30)
        x[rng.integers(30)] += 2**15 - int(np.sum(x))
        ints.append(x)
    masses = [x * 2.0**-15 for x in ints]
    exact_ints = _exact_power(ints, steps)
    unit = mpmath.mpf(2) ** (-15 * sum(steps))
    exact = [mpmath.mpf(v) * unit for v in exact_ints]
    lo, hi, bound = pld._window([_step(m, t) for m, t in zip(masses, steps, strict=True)], tail)
    assert bound == 2 * tail
    assert sum(exact[:lo]) + sum(exact[hi + 1:]) <= bound
    if tail >= 1e-4:  # a tiny tail may need the whole support of so short a composition
        assert 0 < lo or hi < len(exact) - 1


@pytest.mark.parametrize("n", [2**6, 2**10, 2**14])
@pytest.mark.parametrize("shape", ["spread", "concentrated", "two_point", "alternating"])
def test_fft_componentwise_error_assumption(n, shape):
    """`_spectral_power`'s ASSUMPTION: every element of scipy's double rfft is within eps_N |a|_1 of the exact DFT,
    eps_N = 1.25 * 8 log2(N) u. Reference: the same transform in x87 long double (its own error, eps_N at u = 2^-64,
    is subtracted from the allowance), on probability vectors of several shapes, the worst element over 20 draws."""
    if pld._WIDE is None:
        pytest.skip("no x87 long double for the reference")
    rng = np.random.default_rng(n + len(shape))
    eps_double = 1.25 * 8 * math.log2(n) * 2.0**-53
    eps_wide = 1.25 * 8 * math.log2(n) * 2.0**-64
    worst = 0.0
    for _ in range(20):
        if shape == "spread":
            a = rng.random(n)
        elif shape == "concentrated":
            a = rng.random(n) * 1e-9
            a[rng.integers(n)] = 1.0
        elif shape == "two_point":
            a = np.zeros(n)
            a[rng.integers(n, size=2)] = rng.random(2)
        else:
            a = np.where(np.arange(n) % 2 == 0, 1.0, 1e-3) * rng.random(n)
        a = a / np.sum(a)
        got = sfft.rfft(a, n)
        ref = sfft.rfft(a.astype(np.longdouble), n)
        l1 = float(np.sum(np.abs(a)))
        err = np.abs(got.astype(np.clongdouble) - ref).astype(np.float64)
        assert np.all(err <= (eps_double - eps_wide) * l1), (shape, float(np.max(err)))
        worst = max(worst, float(np.max(err)) / (eps_double * l1))
    assert worst > 0  # the reference does see the double transform's rounding


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("goal", [0.0, 1e-9])
@pytest.mark.parametrize("phases", [((0.01, 1.0, 1000),), ((0.01, 1.0, 500), (0.05, 2.0, 300)),
                                    ((0.2, 0.8, 30), (0.01, 1.0, 200), (0.5, 3.0, 10))])
def test_spectral_composition_stays_within_its_memory_estimate(wide, goal, phases, monkeypatch):
    """The memory cap is checked against `spectral_bytes` before the composition: what it allocates (tracemalloc sees
    NumPy's arrays) stays within the estimate's share for the arrays held (the rest is scipy's FFT buffers), in double
    and long double, with the powers in double or long double, for one to three phases."""
    import tracemalloc

    if wide and pld._WIDE is None:
        pytest.skip("no x87 long double")
    dtype = pld._WIDE if wide else np.float64
    parts = [pld._step_pmf("add", q, s, 2e-5, t) for q, s, t in phases]
    lo, hi, _ = pld._window(parts, pld._ALIAS_TAIL)
    size = hi - lo + 1
    n = 1 << max(1, (size - 1).bit_length())
    seen = {}
    real_bytes = pld.spectral_bytes
    monkeypatch.setattr(pld, "spectral_bytes", lambda *a: seen.setdefault("bytes", real_bytes(*a)))
    tracemalloc.start()
    try:
        pld._spectral_power_in(dtype, parts, lo, size, n, goal)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= seen["bytes"] - 2 * n * np.dtype(dtype).itemsize, (peak / n, seen["bytes"] / n)
