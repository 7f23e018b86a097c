"""log f_a(l) = log(e^(a l) - a e^l + a - 1) and the quadrature's error terms against mpmath at 60 digits or more."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.truth.excess import ROUNDING, log_excess
from verify.truth.mixture_quad import log_excess_terms

_ELLS = st.one_of(st.floats(-1e-6, 1e-6), st.floats(-0.2, 0.2), st.floats(-50, 50), st.floats(-700, 700))
_ORDERS = st.one_of(st.floats(1 + 1e-9, 1.01), st.floats(1.01, 100), st.sampled_from([2.0, 8.0, 64.0]))


def _reference(ell: float, alpha: float) -> mpmath.mpf:
    digits = 60 + 2 * max(0, -int(math.log10(abs(ell))))  # f ~ l^2: cancellation of 2 |log10 l| digits
    with mpmath.workdps(digits):
        x, a = mpmath.mpf(ell), mpmath.mpf(alpha)
        return mpmath.log(mpmath.exp(a * x) - a * mpmath.exp(x) + a - 1)


@given(st.lists(_ELLS, min_size=1, max_size=40), _ORDERS)
@settings(max_examples=150, deadline=None, database=None)
def test_log_excess_matches_60_digits(ells, alpha):
    """Every branch (series near 0, direct, large arguments), mixed in one array, within its stated rounding bound."""
    values, _ = log_excess(np.array(ells), alpha)
    for ell, got in zip(ells, values, strict=True):
        if ell == 0 or (alpha - 1) * abs(ell) < 1e-150:
            continue  # f = 0 (or below the float range): log f is -inf or meaningless
        want = _reference(ell, alpha)
        if want < -700:
            continue  # below what a float log-sum keeps
        assert abs(got - float(want)) <= max(1e-12, 100 * ROUNDING * 2**-52 * abs(float(want))), (ell, alpha)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a NaN in is a NaN out, quietly
def test_log_excess_keeps_nan_and_is_finite_at_the_branch_ends():
    values, _ = log_excess(np.array([np.nan, 30.0, 30.5, 0.1, -0.1, 0.1000001]), 2.0)
    assert math.isnan(values[0]) and np.all(np.isfinite(values[1:]))


@given(st.lists(_ELLS, min_size=1, max_size=40), _ORDERS)
@settings(max_examples=100, deadline=None, database=None)
def test_excess_slope_term_matches_60_digits(ells, alpha):
    """The slope bound |f'(l)| = a e^l |expm1((a - 1) l)| inside log_excess_terms' error term, either side of z = 1."""
    ell = np.array(ells)
    _, log_err = log_excess_terms(ell, alpha, np.ones_like(ell))
    log_f, log_size = log_excess(ell, alpha)
    for x, err, size in zip(ells, log_err, log_size, strict=True):
        if 0 < abs((alpha - 1) * x) < 1e-300:
            continue  # (alpha - 1) l is subnormal in floats: rounded before any formula sees it
        with mpmath.workdps(60):
            slope = mpmath.log(alpha) + x + mpmath.log(abs(mpmath.expm1((mpmath.mpf(alpha) - 1) * x))) \
                if (alpha - 1) * x != 0 else -mpmath.inf
            want = float(mpmath.log(mpmath.exp(size) + mpmath.exp(slope))) if slope > -mpmath.inf else size
        assert math.isclose(err, want, rel_tol=1e-12, abs_tol=1e-12), (x, alpha)
