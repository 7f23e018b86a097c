"""The Arb-first evaluation of closed-form truths (verify.families._exact): the float it returns is the exact value
correctly rounded (checked against mpmath at 120 digits), and every case it cannot prove goes to the mpmath path."""

import math

import mpmath
import pytest
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.errors import DeadlineExceeded
from verify.families import family
from verify.families._exact import _ball_float, exact
from verify.truth.numbers import NotEnclosable, gap_power, geometric_gap, num


def _gd_variance(x, count):
    """(1 - x)^(2 count) + sum_{j < count} (1 - x)^(2j): the noisy-GD variance's cancelling parts."""
    return gap_power(x, 2 * int(count)) + geometric_gap(x, count, power=2)


def _reference(x: float, count: int) -> float:
    with mpmath.workdps(120):
        r = (1 - mpmath.mpf(x)) ** 2
        return float(r**count + sum(r**j for j in range(count)))


@given(st.one_of(st.floats(1e-300, 1e-6), st.floats(1e-6, 1.999999), st.floats(1.999999, 2.0, exclude_max=True)),
       st.integers(1, 400))
@settings(max_examples=200, deadline=None, database=None)
def test_value_is_the_correctly_rounded_exact_value(x, count):
    """Cancellation-prone inputs (x tiny, 1 - x near -1): the truth's float equals the 120-digit value rounded."""
    assert exact(_gd_variance, "test")(x=x, count=count).value == _reference(x, count)


@given(st.floats(-700, 700), st.floats(1e-3, 1e3))
@settings(max_examples=200, deadline=None, database=None)
def test_agrees_with_the_mpmath_path(x, y):
    fn = lambda x, y: num().expm1(x) / y + num().log1p(y)  # noqa: E731
    fast, slow = exact(fn, "test")(x=x, y=y), exact(fn, "test", arb_first=False)(x=x, y=y)
    with mpmath.workdps(120):
        want = float(mpmath.expm1(x) / y + mpmath.log1p(y))
    assert fast.value == want
    assert abs(slow.value - want) <= 2 * math.ulp(want)


def test_ball_float_refuses_a_ball_that_straddles_a_rounding_tie():
    saved, ctx.prec = ctx.prec, 200
    try:
        tie = arb(1) + arb(2) ** -53  # halfway between 1 and its successor
        assert _ball_float(tie) == 1.0  # exact: ties to even
        assert _ball_float(arb(tie.mid(), arb(2) ** -120)) is None
        assert _ball_float(arb(tie.mid() + arb(2) ** -100, arb(2) ** -120)) == 1.0 + 2**-52
        assert _ball_float(arb("inf")) is None and _ball_float(arb("nan")) is None
        assert _ball_float(1.5) is None  # a float is not a ball
    finally:
        ctx.prec = saved


def test_what_arb_cannot_decide_goes_to_mpmath():
    def fn(x):
        if num().rigorous:
            raise NotEnclosable("undecided branch")
        return num().mpf(x) * 3
    assert exact(fn, "test")(x=0.5).value == 1.5


def test_a_cap_raised_on_the_arb_path_is_not_swallowed():
    def fn(x):
        if num().rigorous:
            raise DeadlineExceeded("the test cap")
        return num().mpf(x)
    with pytest.raises(DeadlineExceeded):
        exact(fn, "test")(x=1.0)


def test_the_enclosure_is_unchanged_by_the_fast_path():
    truth = exact(lambda x: num().exp(x), "test")(x=1.0)
    enc = truth.enclose(128)
    assert enc.lower < enc.upper and float(enc.lower) <= math.e <= float(enc.upper)


def test_a_ball_around_zero_proves_no_sign():
    """Both ends below the smallest subnormal, on either side of 0: -0.0 == 0.0, but the ball proves no sign, so the
    mpmath path decides (found by the hostile review: dp_delta at eps = 1e300 came back -0.0)."""
    saved, ctx.prec = ctx.prec, 128
    try:
        assert _ball_float(arb(0, arb(2) ** -2000)) is None
        assert _ball_float(arb(arb(2) ** -1100, arb(2) ** -1200)) == 0.0
    finally:
        ctx.prec = saved
    got = family("noisy_gd_quadratic").truth("dp_delta", sigma=1.0, eta=1.0, n=1, K=1, S=1.0, lam=1.0,
                                             start_var=0.0, eps=1e300).value
    assert got == 0.0 and math.copysign(1.0, got) == 1.0


@given(st.integers(-1200, -1000), st.integers(1, 2**60))
@settings(max_examples=200, deadline=None, database=None)
def test_subnormal_values_are_rounded_once(exp, man):
    """man 2^exp, exact in Arb, against Python's correctly rounded integer division (one rounding, not 53 bits then
    the subnormal grid)."""
    saved, ctx.prec = ctx.prec, 128
    try:
        value = arb(man) * arb(2) ** exp
        assert value.is_exact()
        assert _ball_float(value) == man / (1 << -exp)
    finally:
        ctx.prec = saved


def test_a_subnormal_truth_is_the_nearest_subnormal():
    """R = alpha (d1 + d2)^2/(2 s^2) with d1 = 2^-538, d2 = 2^-638 at alpha = 4: 2^-1075 (1 + 2^-99), just above the
    halfway point between 0 and the smallest subnormal: 5e-324, not 0."""
    assert family("gaussian_triple").truth("renyi", alpha=4.0, d1=2.0**-538, d2=2.0**-638, s=1.0).value == 5e-324


def test_exponents_far_beyond_the_float_range_are_not_shifted():
    """A value of 1e-108573226928 (an Arb exponent of -3.6e11) is 0.0, and its negative -0.0, without building 2^3.6e11
    (a MemoryError, found by tests/truth/test_cancellation_gaussian.py); likewise +-inf above."""
    saved, ctx.prec = ctx.prec, 128
    try:
        tiny = arb(2) ** -(10**11)
        assert _ball_float(tiny) == 0.0 and math.copysign(1.0, _ball_float(tiny)) == 1.0
        assert math.copysign(1.0, _ball_float(-tiny)) == -1.0
        assert _ball_float(arb(2) ** (10**11)) == math.inf and _ball_float(-(arb(2) ** (10**11))) == -math.inf
    finally:
        ctx.prec = saved
