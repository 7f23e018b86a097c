"""PNSGD on a concave quadratic (`pnsgd_concave_quadratic`): the family's closed form against the mean/variance
recursion of the iterates written out here in mpmath at 60 digits, and the no-amplification limit."""

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.families import family


def _recursion(alpha, sigma, eta, lam, n, t, Delta) -> mpmath.mpf:
    """w <- w - eta (grad f(w; x_k) + Z_k), f = -(lam/2)(w - x)^2: w <- (1 + eta lam) w - eta lam x_k - eta Z_k. The
    two runs differ in x_t by Delta/lam: their mean gap and common variance, step by step."""
    with mpmath.workdps(60):
        eta, lam, sigma = mpmath.mpf(eta), mpmath.mpf(lam), mpmath.mpf(sigma)
        gap, var = mpmath.mpf(0), mpmath.mpf(0)
        for k in range(1, n + 1):
            gap = (1 + eta * lam) * gap + (eta * mpmath.mpf(Delta) if k == t else 0)
            var = (1 + eta * lam) ** 2 * var + eta**2 * sigma**2
        return mpmath.mpf(alpha) * gap**2 / (2 * var)


@settings(max_examples=60, deadline=None, database=None)
@given(alpha=st.floats(1.01, 50), sigma=st.floats(0.1, 10), eta=st.floats(1e-4, 2.0), lam=st.floats(1e-3, 3.0),
       n=st.integers(1, 200), data=st.data(), Delta=st.floats(0.0, 5.0))
def test_matches_the_iterate_recursion(alpha, sigma, eta, lam, n, data, Delta):
    t = data.draw(st.integers(1, n))
    got = family("pnsgd_concave_quadratic").truth("renyi", alpha=alpha, sigma=sigma, eta=eta, lam=lam, n=n, t=t,
                                                  Delta=Delta)
    want = _recursion(alpha, sigma, eta, lam, n, t, Delta)
    assert got.value == pytest.approx(float(want), rel=1e-12, abs=1e-300)
    enc = got.enclose(128)
    assert float(enc.lower) <= float(want) * (1 + 1e-15) and float(want) * (1 - 1e-15) <= float(enc.upper)


@pytest.mark.parametrize(("eta", "lam"), [(0.1, 1.0), (0.5, 1.0), (1.0, 0.5)])
def test_record_one_keeps_a_constant_fraction_however_many_steps_follow(eta, lam):
    """No amplification: R(n, t = 1) -> alpha Delta^2 (c^2 - 1)/(2 sigma^2 c^2), c = 1 + eta lam, as n grows (a
    convex quadratic's decays like c^(2n) instead)."""
    c = 1 + eta * lam
    limit = 2.0 * 4.0 * (c**2 - 1) / (2 * c**2)
    fam = family("pnsgd_concave_quadratic")
    values = [fam.truth("renyi", alpha=2.0, sigma=1.0, eta=eta, lam=lam, n=n, t=1, Delta=2.0).value
              for n in (10, 100, 1000)]
    assert values[0] >= values[1] >= values[2] >= limit * (1 - 1e-12)
    assert values[2] == pytest.approx(limit, rel=1e-6)
    convex = family("pnsgd_quadratic").truth("renyi", alpha=2.0, sigma=1.0, eta=eta, lam=lam, n=1000, t=1,
                                             Delta=2.0).value
    assert convex < 1e-6 * limit
