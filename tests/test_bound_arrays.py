"""bound_arrays: a bound's floats over a grid as arrays (issue 49). Wherever it gives a float, that float is the
bound's value rounded to the nearest float, as mpmath computes the expression as written at 1000 digits from the same
inputs (a reference independent of NumPy and of the stable form the array run uses); where cancellation leaves the
interval wider than a float's spacing, it gives none."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify.pipeline.bound_arrays
from verify.pipeline.bound_arrays import array_form, bound_floats

x, y, z = sp.symbols("x y z", positive=True)


@pytest.fixture(autouse=True)
def _any_number_of_points(monkeypatch):
    """The arrays are used from a single point on here (the checker waits for MIN_POINTS, to repay compiling)."""
    monkeypatch.setattr(verify.pipeline.bound_arrays, "MIN_POINTS", 1)
SYMBOLS = (x, y, z)


def _reference(expr: sp.Expr, row: dict) -> float | None:
    """The value at 1000 digits rounded to a float (cancellation down to 1e-300 and below is resolved), or None where
    mpmath finds it undefined or not real."""
    symbols = sorted(expr.free_symbols, key=str)
    fn = sp.lambdify(symbols, expr, modules="mpmath")
    with mpmath.workdps(1000):
        try:
            value = fn(*(mpmath.mpf(row[s.name]) for s in symbols))
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        if isinstance(value, mpmath.mpc) or mpmath.isnan(value):
            return None
        return float(value)


_leaves = st.one_of(st.sampled_from(SYMBOLS),
                    st.fractions(min_value=-5, max_value=5, max_denominator=12).map(sp.Rational),
                    st.sampled_from([sp.pi, sp.E, sp.Integer(2)]))


def _safe(make):
    """`make` of its arguments, or None where SymPy refuses them (a Min of a complex constant)."""
    def built(args):
        try:
            out = make(*args) if isinstance(args, tuple) else make(args)
        except (ValueError, TypeError):
            return None
        return None if out.has(sp.I, sp.zoo, sp.nan) else out
    return built


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    pair = st.tuples(children, children)
    options = [pair.map(_safe(lambda a, b: a + b)), pair.map(_safe(lambda a, b: a - b)),
               pair.map(_safe(lambda a, b: a * b)), pair.map(_safe(lambda a, b: a / b)),
               st.tuples(children, st.integers(-3, 4)).map(_safe(lambda a, k: a ** k)),
               children.map(_safe(sp.sqrt)), children.map(_safe(lambda c: sp.exp(sp.Min(c, 40)))),
               children.map(_safe(lambda c: sp.exp(-sp.Abs(c)))), children.map(_safe(lambda c: sp.log(1 + c ** 2))),
               children.map(_safe(lambda c: 1 - sp.exp(-c ** 2))), children.map(_safe(sp.Abs)),
               pair.map(_safe(sp.Max)), pair.map(_safe(sp.Min)),
               children.map(_safe(lambda c: (1 + c / 7) ** sp.Rational(5, 2) - 1))]
    return st.one_of(options).filter(lambda e: e is not None)


expressions = st.recursive(_leaves, _extend, max_leaves=6).filter(lambda e: e.free_symbols)
values = st.one_of(st.floats(1e-12, 1e12), st.sampled_from([0.1, 0.3, 1.0, 1.0 + 2**-40, 3.0, 1e-300, 1e300]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expressions, st.lists(st.fixed_dictionaries({"x": values, "y": values, "z": values}), min_size=1,
                             max_size=6))
def test_a_given_float_is_the_correctly_rounded_value(expr, rows):
    floats = bound_floats(expr, rows)
    assert len(floats) == len(rows)
    for row, got in zip(rows, floats, strict=True):
        if got is not None:
            assert got == _reference(expr, row), (expr, row)
            assert math.isfinite(got) and got != 0


@pytest.mark.parametrize(("expr", "row"), [
    (x - sp.Rational(3, 10), {"x": 0.30000000001}),  # cancels against a constant float64 cannot hold
    (x - y, {"x": 1.0 + 2**-52, "y": 1.0}),  # exact difference, but a tiny one
    ((1 + x) ** 3 - 1 - 3 * x - 3 * x ** 2, {"x": 1e-9}),  # catastrophic cancellation
    (1 / (1 - x), {"x": 1 - 2**-50}),
])
def test_cancellation_is_left_to_the_digits_or_exact(expr, row):
    got = bound_floats(expr, [row])[0]
    assert got is None or got == _reference(expr, row)


def test_a_derived_input_enters_the_extended_run_unrounded():
    """A derived value (an mpf of 50 digits) close to 1, whose float64 rounding 1 / (1 - L) amplifies 1e6 times: the
    float given, if any, is the value at the mpf itself."""
    with mpmath.workdps(50):
        close = 1 - mpmath.mpf(10) ** -10 / 3
        expected = float(1 / (1 - close))
    got = bound_floats(1 / (1 - x), [{"x": close}])[0]
    assert got is None or got == expected


@pytest.mark.parametrize("expr", [sp.gamma(x), sp.erfc(x), sp.harmonic(x), x * sp.oo])
def test_functions_without_an_extended_form_have_no_array_form(expr):
    assert array_form(expr) is None
    assert bound_floats(expr, [{"x": 1.5}]) == [None]


def test_overflow_underflow_and_zero_are_left_to_the_digits():
    rows = [{"x": 800.0}, {"x": -800.0}, {"x": 0.0}]
    assert bound_floats(sp.exp(x) - 1 + x * 0, rows)[:1] == [None]
    assert bound_floats(sp.exp(x), rows)[1] is None
    assert bound_floats(x, [{"x": 0.0}]) == [None]


def test_ordinary_points_are_given_their_float():
    """The common case is decided by the arrays: a bound of the catalog's shape at ordinary inputs gets its float at
    nearly every point (a point whose interval straddles a rounding boundary may be left to the digits)."""
    expr = x * y**2 / (2 * z**2) * (1 - sp.exp(-x / z)) + sp.log(1 + y) / 3 + sp.Max(x, sp.sqrt(y))
    rows = [{"x": a, "y": b, "z": c} for a in (0.5, 1.0, 2.0, 10.0) for b in (0.01, 0.1, 1.0) for c in (0.3, 1.0, 4.0)]
    floats = bound_floats(expr, rows)
    assert sum(f is not None for f in floats) >= 0.9 * len(rows)
    assert all(f == _reference(expr, row) for f, row in zip(floats, rows, strict=True) if f is not None)


def test_a_cancelling_bound_is_not_given_a_float():
    """(1 + x)^3 - 1 - 3x - 3x^2 at x = 1e-9 is 1e-27, from terms of 1e-9: no interval of long doubles resolves it."""
    assert bound_floats((1 + x) ** 3 - 1 - 3 * x - 3 * x ** 2, [{"x": 1e-9}]) == [None]


def test_few_points_are_left_to_the_digits():
    verify.pipeline.bound_arrays.MIN_POINTS = 3  # restored by the fixture's monkeypatch
    assert bound_floats(x + 1, [{"x": 1.0}, {"x": 2.0}]) == [None, None]
    assert bound_floats(x + 1, [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}]) == [2.0, 3.0, 4.0]
