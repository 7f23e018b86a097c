"""The contracting Skip-PNSGD instance (Corollary 31): its bracket against the chain simulated step by step and
against the tight eps(delta) of the full skip mixture from the 1-D hockey-stick engine (separate code paths)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.truth.contracting_skip import contracting_skip_epsilon
from verify.truth.hockey_stick_1d import epsilon_truth
from verify.truth.mixture import Mixture1D
from verify.truth.numbers import NotEnclosable


def _skip_laws(n: int, m: int, L: float, sigma: float) -> tuple[Mixture1D, Mixture1D]:
    """The unprojected output laws in units of eta sigma, by running the variance and mean recursions step by step
    for every skip t0 (uniform on 0..n//2): steps t0+1..t-1 multiply w by 1 - c and add noise, step t adds -+eta L and
    noise, the m public steps add noise."""
    eta = math.sqrt(8) / math.sqrt(n * (L**2 + sigma**2))
    c, t = eta * L, n - m
    after = [0.0]  # the variance after j contracting steps from w = 0, step by step
    for _ in range(t - 1):
        after.append((1 - c) ** 2 * after[-1] + 1.0)
    counts: dict[float, int] = {}  # variance -> how many skips give it (equal floats merged)
    for t0 in range(n // 2 + 1):
        var = after[t - 1 - t0] + 1.0 + m
        counts[var] = counts.get(var, 0) + 1
    weights = np.array(list(counts.values()), dtype=float) / (n // 2 + 1)
    sds = np.sqrt(list(counts))
    return (Mixture1D.of(weights, [-L / sigma] * len(sds), sds), Mixture1D.of(weights, [L / sigma] * len(sds), sds))


@given(st.integers(4000, 8000), st.floats(0.02, 0.1), st.floats(0.01, 0.025), st.floats(0.5, 2.0),
       st.sampled_from([1e-3, 1e-6]))
@settings(max_examples=10, deadline=None, database=None)
def test_bracket_contains_the_unprojected_skip_mixture(n, share, spread, L, delta):
    """Where the bracket's slack is small (the iterates' spread, about sqrt(8) sigma/L sqrt(m/n), well inside K, and
    a moderate Gaussian gap 2L/(sigma sqrt(m))), every generated case is enclosed; the mixture of the skips, run step
    by step, lies in the bracket."""
    m = max(1, int(share * n))
    sigma = L * spread / math.sqrt(share)
    value, lower, upper, _, enclose = contracting_skip_epsilon(sigma, L, n, m, delta)
    ends = enclose(128)
    p, q = _skip_laws(n, m, L, sigma)
    mixture = epsilon_truth(p, q, delta, "")
    assert lower <= value <= upper
    assert float(ends.lower) <= mixture.upper and mixture.lower <= float(ends.upper)
    assert lower <= mixture.value * (1 + 1e-9) and mixture.value <= upper * (1 + 1e-9)


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """eps(delta) of N(0, 1) vs N(mu, 1) solved here with mpmath (Balle & Wang's delta(eps), bisection)."""
    with mpmath.workdps(40):
        def excess(e):
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - delta
        return float(mpmath.findroot(excess, (mpmath.mpf(0), mpmath.mpf(50)), solver="bisect"))


def test_printed_sigma_is_not_private_below_eps_1_and_the_corrected_one_is():
    """n = 2^20, m = 2^13, eps = 0.9, delta = 1e-10: printed sigma gives 1.087, the corrected one 0.758; both against
    the Gaussian shift 2L/sigma over sqrt(1/(1 - (1 - c)^2) + m + 1) solved independently."""
    n, m, eps, delta, L = 2**20, 2**13, 0.9, 1e-10, 1.0
    for factor, near in ((1, 1.0868), (2, 0.75767)):
        sigma = 2 * L * math.sqrt(factor * math.log(1.25 / delta) / m) / eps
        c = math.sqrt(8) * L / math.sqrt(n * (L**2 + sigma**2))
        want = _gaussian_epsilon(2 * L / (sigma * math.sqrt(1 / (1 - (1 - c) ** 2) + m + 1)), delta)
        value, lower, upper, before, enclose = contracting_skip_epsilon(sigma, L, n, m, delta)
        ends = enclose(64)
        assert abs(value - want) <= 1e-12 * want and abs(want - near) < 1e-4 and 150 < before < 200
        assert float(ends.lower) <= want * (1 + 1e-15) and want <= float(ends.upper) * (1 + 1e-15)
        assert float(ends.upper) - float(ends.lower) < 1e-12
        assert (float(ends.lower) > eps) if factor == 1 else (float(ends.upper) < eps)


def test_a_chain_whose_noise_reaches_the_boundary_is_not_enclosed():
    """n = 64, sigma = L: the iterates leave K = [-1, 1] often, so no value is claimed (the projection's slack)."""
    from verify.errors import ParameterError

    with pytest.raises(ParameterError, match="projection"):
        contracting_skip_epsilon(1.0, 1.0, 64, 4, 1e-5)
    with pytest.raises(NotEnclosable, match="projection"):
        from flint import arb

        from verify.truth.contracting_skip import _ends
        from verify.truth.numbers import arb_numbers

        with arb_numbers(64) as N:
            _ends(64, 4, N.mpf(1.0), N.mpf(1.0), N.mpf(arb(1e-5)))


def test_instances_outside_the_setting_are_refused():
    from verify.errors import ParameterError

    for n, m in ((8, 1), (100, 50), (100, 0)):
        with pytest.raises(ParameterError):
            contracting_skip_epsilon(1.0, 1.0, n, m, 1e-5)
