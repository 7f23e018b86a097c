"""1 - (1 + u)^e without cancellation (verify.stable_powers): the bound's 50-digit value and its Arb enclosure against
the raw form evaluated in enough digits to hold u, at every scale of u."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.catalog import theorem
from verify.certify import arb_bounds
from verify.model import evaluate, stable_form
from verify.pipeline.rigorous import exact_text
from verify.stable_powers import Powm1, with_stable_powers

u, e = sp.symbols("u e", real=True)


@settings(max_examples=60, deadline=None)
@given(exponent=st.integers(-300, 2), sign=st.sampled_from([-1, 1]), power=st.floats(-50, 50).filter(bool))
def test_powm1_is_the_power_minus_one_at_every_scale(exponent, sign, power):
    x = sign * 10.0**exponent
    if 1 + x <= 0:
        return
    with mpmath.workdps(50):
        got = Powm1._imp_(x, power)
    tiny = max(0, -int(mpmath.log10(abs(power))))
    with mpmath.workdps(60 + 2 * abs(exponent) + tiny):  # (1 + x)^power keeps 60 digits of its difference from 1
        want = (1 + mpmath.mpf(x)) ** mpmath.mpf(power) - 1
        assert abs(got - want) <= 1e-45 * abs(want)
    lo, hi = arb_bounds(Powm1(u, e), {"u": exact_text(x), "e": exact_text(power)}, prec=128)
    assert float(lo) <= float(want) <= float(hi) or float(lo) == float(want) == float(hi)


@settings(max_examples=30, deadline=None)
@given(x=st.floats(-6, -0.9), k=st.integers(-6, 6))
def test_a_base_that_may_be_negative_with_an_integer_exponent_is_the_plain_power(x, k):
    """1 + u <= 0 (or a ball around 0): (1 + u)^k - 1 by repeated products, in mpmath and in Arb (Arb's power of a
    ball holding 0 was NaN even at k = 2)."""
    base = mpmath.mpf(1) + mpmath.mpf(x)
    if base == 0 and k < 0:
        return
    with mpmath.workdps(50):
        assert Powm1._imp_(x, k) == pytest.approx(float(base**k - 1), rel=1e-14, abs=1e-300)
    lo, hi = arb_bounds(Powm1(u, e), {"u": (exact_text(x - 0.05), exact_text(x + 0.05)), "e": str(k)}, prec=128)
    if k < 0 and lo.is_nan():
        return  # a negative power of a ball that (as Arb widens it) holds 0: no enclosure, so no claim (uncertified)
    for d in (-0.05, 0.0, 0.05):  # the box's ends and middle lie in the enclosure
        value = float((1 + mpmath.mpf(x) + d) ** k - 1)
        assert float(lo) - 1e-12 * abs(value) <= value <= float(hi) + 1e-12 * abs(value)


def test_only_a_difference_from_one_is_rewritten():
    """1 - (1 - x)^K cancels and becomes -Powm1; (1 - x)^K + 1 and (1 + big)^(-1) stay as they are (1 + Powm1 would
    cancel instead where the power is far below 1)."""
    x, K = sp.symbols("x K", positive=True)
    assert with_stable_powers(1 - (1 - x) ** K) == -Powm1(-x, K)
    assert with_stable_powers(3 - 3 * (1 + x) ** K) == -3 * Powm1(x, K)
    assert with_stable_powers((1 - x) ** K + 1) == (1 - x) ** K + 1
    assert with_stable_powers(1 / (1 + x)) == 1 / (1 + x)


@settings(max_examples=25, deadline=None)
@given(entry=st.sampled_from(["chourasia2021.theorem3.exact", "chourasia2021.lemma6.proof"]),
       exponent=st.integers(-300, -1))
def test_catalog_bounds_keep_their_digits_at_tiny_steps(entry, exponent):
    """chourasia2021's 1 - (1 - eta lam)^K at eta = 1e-120 was 0.0 in 50 digits (its true value 8e-120)."""
    t = theorem(entry)
    values = {"S": 4.0, "alpha": 2.0, "eta": 10.0**exponent, "K": 5.0, "n": 10.0, "sigma": 1.0, "lam": 1.0,
              "E0": 1.0, "beta": 1.0, "d": 1.0}
    values = {s.name: values[s.name] for s in t.bound.free_symbols}
    got = evaluate(t.bound, values)
    with mpmath.workdps(80 + 2 * abs(exponent)):
        want = sp.lambdify(sorted(t.bound.free_symbols, key=str), t.bound, "mpmath")(
            *(mpmath.mpf(values[s.name]) for s in sorted(t.bound.free_symbols, key=str)))
        assert want > 0 and abs(got - want) <= 1e-40 * want
    lo, hi = arb_bounds(stable_form(t.bound), {k: exact_text(v) for k, v in values.items()}, prec=128)
    assert float(lo) <= float(want) <= float(hi)
    assert float(hi - lo) <= 1e-20 * float(want) or float(want) < 1e-290
