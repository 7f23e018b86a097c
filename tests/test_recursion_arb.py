"""A recursive bound's checker value is computed in Arb first (verify.recursion): it must be mpmath's value to the
working precision (the reference: the same recursion in mpmath at twice the digits), and where Arb cannot give it
(a ball too wide, an error) the value and the error are mpmath's own."""

from __future__ import annotations

import inspect

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify.catalog  # noqa: F401 - every catalog RecursiveBound subclass is defined
from verify.catalog.chen2024_recursions import CompositionBaseline, LSIRecursion, Theorem46Corrected
from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.model import PRECISION_DPS
from verify.recursion import RecursiveBound
from verify.stable_powers import Powm1
from verify.truth.numbers import MP

positive = st.floats(1e-3, 10.0)


def _reference(cls: type[RecursiveBound], args: list) -> mpmath.mpf:
    """`cls.compute` in mpmath at twice the checker's digits (the Arb-first path never runs here)."""
    with mpmath.workdps(2 * PRECISION_DPS):
        values = [a if i in cls.integer_args else mpmath.mpf(a) for i, a in enumerate(args)]
        return cls.compute(MP, *values)


def _checker_value(cls: type[RecursiveBound], args: list) -> mpmath.mpf:
    with mpmath.workdps(PRECISION_DPS):
        return cls._imp_(*args)


def _agree(value: mpmath.mpf, reference: mpmath.mpf) -> None:
    with mpmath.workdps(2 * PRECISION_DPS):
        if reference == 0:
            assert value == 0
            return
        assert abs(value - reference) <= abs(reference) * mpmath.mpf(10) ** (3 - PRECISION_DPS), (value, reference)


@settings(max_examples=60, deadline=None, database=None)
@given(alpha=st.integers(2, 400), steps=st.integers(0, 10**4), q=st.floats(1e-30, 1.0), ratio=st.floats(0.0, 5.0))
def test_the_sampled_gaussian_rdp_is_mpmaths_value_to_the_working_precision(alpha, steps, q, ratio):
    args = [alpha, steps, q, ratio]
    _agree(_checker_value(SampledGaussianRDP, args), _reference(SampledGaussianRDP, args))


@settings(max_examples=30, deadline=None, database=None)
@given(steps=st.integers(1, 60), m=st.integers(1, 6), eta=positive, lf=st.floats(0.1, 1.5), lt=st.floats(0.1, 1.5),
       o=positive, rate=st.floats(0.5, 1.5))
def test_chen2024_recursions_are_mpmaths_values_to_the_working_precision(steps, m, eta, lf, lt, o, rate):
    lsi = [steps, m, eta, lf, lt, o, o, rate]
    _agree(_checker_value(LSIRecursion, lsi), _reference(LSIRecursion, lsi))
    theorem = [3.0, max(1, steps // 10), m, 2.0, eta, 1.0, lf, lt, o, o, rate]
    _agree(_checker_value(Theorem46Corrected, theorem), _reference(Theorem46Corrected, theorem))
    baseline = [3.0, steps, m, 2.0, eta, 1.0, o, o, rate, -1]
    _agree(_checker_value(CompositionBaseline, baseline), _reference(CompositionBaseline, baseline))


def test_without_an_arb_value_the_value_and_the_error_are_mpmaths(monkeypatch):
    """A ball too wide for the working precision, or an error in Arb, leaves the point to mpmath: the same value as
    with the Arb path switched off, and the same error where mpmath fails too."""
    import verify.recursion as recursion
    import verify.truth.numbers as numbers

    args = [50, 100, 0.01, 1.0]
    with mpmath.workdps(PRECISION_DPS):
        monkeypatch.setattr(SampledGaussianRDP, "evaluate_in_arb", False)
        plain = SampledGaussianRDP._imp_(*args)
        monkeypatch.setattr(SampledGaussianRDP, "evaluate_in_arb", True)
        monkeypatch.setattr(numbers, "ARB_GUARD_BITS", -150)  # far too few bits: the ball is too wide
        assert recursion._in_arb(SampledGaussianRDP, [50, 100, mpmath.mpf(0.01), mpmath.mpf(1.0)]) is None
        assert SampledGaussianRDP._imp_(*args) == plain
        with pytest.raises(ValueError, match="must be an integer"):
            SampledGaussianRDP._imp_(2.5, 100, 0.01, 1.0)


def test_a_subclass_is_evaluated_in_mpmath_unless_it_opts_in():
    """A plugin's compute may use mpmath-only methods or branch on a comparison a ball cannot decide: it is not run
    in Arb unless its class says it was written for both."""

    class Halving(RecursiveBound):
        nargs = 1

        @classmethod
        def compute(cls, N, x):
            while not (x / 2).ae(x):  # an mpmath method: an Arb ball has no `ae`
                x = x / 2
            return x

    assert RecursiveBound.evaluate_in_arb is False and Powm1.evaluate_in_arb is False
    assert {"SampledGaussianRDP", "Theorem46Corrected", "PerBatchPrinted"} <= {c.__name__ for c in AUDITED}
    with mpmath.workdps(PRECISION_DPS):
        assert Halving._imp_(1.0) == Halving.compute(MP, mpmath.mpf(1.0))


def _outcome(cls: type[RecursiveBound], args: list, in_arb: bool):
    original = cls.evaluate_in_arb
    cls.evaluate_in_arb = in_arb
    try:
        with mpmath.workdps(PRECISION_DPS):
            return cls._imp_(*args)
    except Exception as err:  # noqa: BLE001 - the kind of failure is compared
        return type(err)
    finally:
        cls.evaluate_in_arb = original


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


AUDITED = sorted({c for c in _subclasses(RecursiveBound) if c.evaluate_in_arb}, key=lambda c: c.__qualname__)
edge = st.sampled_from([0.0, 1e-3, 0.5, 1.0, 2.0])


@settings(max_examples=150, deadline=None, database=None)
@given(cls=st.sampled_from(AUDITED), data=st.data())
def test_audited_classes_fail_where_mpmath_fails(cls, data):
    """At edge inputs (zeros of L_T, L_F, o_rate, K = 0, one batch) an audited class gets mpmath's outcome from the
    Arb-first path: the same exception type, or a value at least as accurate (a NaN Arb carried where mpmath raised
    must not be discarded into a value: a review found three such points, this test two more, before the fix)."""
    count = int(min(cls.nargs))  # a SymPy Function's nargs is a set
    args = [data.draw(st.integers(0, 4)) if i in cls.integer_args else data.draw(edge) for i in range(count)]
    if list(inspect.signature(cls.compute).parameters)[-1] == "j0":  # a batch index, -1 for the worst one
        args[-1] = data.draw(st.integers(-1, 3))
    fast, plain = _outcome(cls, args, True), _outcome(cls, args, False)
    if isinstance(plain, type) or isinstance(fast, type):
        assert fast == plain, (args, fast, plain)
    elif plain != fast and not (mpmath.isnan(plain) and mpmath.isnan(fast)):  # Arb's value: at least as close as
        # mpmath's to mpmath at twice the digits
        assert mpmath.isfinite(plain) and mpmath.isfinite(fast), (args, fast, plain)
        reference = _reference(cls, args)
        with mpmath.workdps(2 * PRECISION_DPS):
            tolerance = abs(reference) * mpmath.mpf(10) ** (3 - PRECISION_DPS)
            assert abs(fast - reference) <= max(abs(plain - reference), tolerance), (args, fast, plain, reference)


@settings(max_examples=200, deadline=None, database=None)
@given(x=st.one_of(st.floats(-40.0, 40.0), st.floats(-1e5, 1e5), st.floats(-1e150, 1e150),
                   st.floats(-1e-300, 1e-300)))
def test_phi_is_at_least_as_accurate_as_mpmaths(x):
    """Phi (verify.truth.numbers.normal_cdf, mpmath mode) from Arb's erfc first, from the deep left tail (values near
    1e-(1e299)) to 1 - tiny: within the working precision of mpmath's ncdf at twice the digits (the reference), or,
    where Arb's ball is too wide (deep tails), mpmath's own 50-digit value (which can be a few digits worse there)."""
    from verify.truth.numbers import _mp_ncdf

    if abs(x) > 1e149:  # beyond 1e150 the asymptotic tail takes over (mpmath's erfc overflows a float there)
        return
    with mpmath.workdps(PRECISION_DPS):
        value, plain = _mp_ncdf(x), mpmath.ncdf(mpmath.mpf(x))
    with mpmath.workdps(2 * PRECISION_DPS):
        reference = mpmath.ncdf(mpmath.mpf(x))
    if value != plain:  # Arb's value: within the working precision of the reference
        _agree(value, reference)


def test_the_values_above_come_from_arb():
    """The comparisons with mpmath above would pass if the Arb path were never taken: at ordinary inputs it is (a
    proven value, not None) for the sampled Gaussian, a chen2024 recursion and Phi."""
    from verify.recursion import _in_arb
    from verify.truth.numbers import in_arb

    with mpmath.workdps(PRECISION_DPS):
        assert _in_arb(SampledGaussianRDP, [32, 1000, mpmath.mpf(0.01), mpmath.mpf(1.3)]) is not None
        lsi = [40, 3, *(mpmath.mpf(v) for v in (0.1, 0.9, 1.1, 1.0, 1.0, 0.9))]
        assert _in_arb(LSIRecursion, lsi) is not None
        for x in (-30.0, -1.5, 0.0, 2.0, 9.0):
            assert in_arb(lambda N, x=x: N.ncdf(N.mpf(mpmath.mpf(x)))) is not None
