"""Families, assumptions and parameter domains."""

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
import verify.catalog
from verify import AssumptionError, ParameterError, Quantity, UnknownIdError
from verify.model import Assumption, condition_holds
from verify.symbols import eta, lam, sigma, start_var

QUAD = verify.family("noisy_gd_quadratic")
POINT = dict(alpha=2.0, sigma=0.5, eta=0.1, n=10, K=20, S=1.0, lam=1.0, start_var=0.0)


def test_family_has_the_documented_parameter_names():
    assert QUAD.parameter_names(Quantity.RENYI) == ("alpha", "sigma", "eta", "n", "K", "S", "lam", "start_var")


@pytest.mark.parametrize(("name", "value", "what"), [
    ("alpha", 1.0, "alpha > 1"), ("alpha", 0.5, "alpha > 1"), ("sigma", 0.0, "sigma > 0"),
    ("sigma", -1.0, "sigma > 0"), ("eta", -0.1, "eta > 0"), ("start_var", -1.0, "start_var >= 0"),
    ("S", -1.0, "S >= 0"),
])
def test_domain_errors_name_the_parameter(name, value, what):
    with pytest.raises(AssumptionError, match=f"domain of {name}") as err:
        QUAD.truth(**{**POINT, name: value})
    assert what in str(err.value)


def test_nan_integer_and_unknown_are_rejected():
    with pytest.raises(ParameterError, match="sigma is NaN"):
        QUAD.truth(**{**POINT, "sigma": math.nan})
    with pytest.raises(ParameterError, match="K must be an integer"):
        QUAD.truth(**{**POINT, "K": 2.5})
    with pytest.raises(ParameterError, match="unknown parameter.*bogus.*its parameters are alpha"):
        QUAD.truth(**POINT, bogus=1)
    with pytest.raises(UnknownIdError, match="no family 'nope'"):
        verify.family("nope")
    with pytest.raises(UnknownIdError, match="no theorem"):
        verify.check("nope.theorem1")


def test_equality_assumptions_tolerate_rounding_only():
    a = Assumption("start_law", sp.Eq(start_var, 2 * sigma**2 / lam), "printed start")
    a.check("t", {"start_var": 2 * 0.1**2, "sigma": 0.1, "lam": 1.0})
    with pytest.raises(AssumptionError):
        a.check("t", {"start_var": 0.0201, "sigma": 0.1, "lam": 1.0})


def test_conditions_combine():
    cond = sp.Or(sp.And(eta > 1, eta < 2), sp.Eq(eta, sp.Rational(1, 2)))
    assert condition_holds(cond, {"eta": 1.5})
    assert condition_holds(cond, {"eta": 0.5})
    assert not condition_holds(cond, {"eta": 0.7})
    assert not condition_holds(sp.Not(eta < 1), {"eta": 0.7})


def test_every_catalog_entry_is_well_formed():
    for t in verify.CATALOG.values():
        assert t.id.split(".")[0] in verify.catalog.PAPERS
        assert (t.source.seed or t.source.paper) and t.source.result and t.applications  # '': later literature
        for app in t.applications:
            fam = verify.family(app.family)
            assert t.requires <= fam.facts, (t.id, t.requires - fam.facts)
            assert t.quantity in fam.truths
            names = {p.name for p in fam.parameters} | {s.name for s in t.symbols}
            assert set(app.grid_names) <= names, (t.id, set(app.grid_names) - names)


_RELATIONS = (sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge)


def _reference(rel, lhs: float, rhs: float) -> bool:
    """The relation decided in 50-digit mpmath as condition_holds documents it: non-strict sides equal within 1e-12
    relative, strict ones exactly."""
    import mpmath

    with mpmath.workdps(50):
        a, b = mpmath.mpf(lhs), mpmath.mpf(rhs)
        close = abs(a - b) <= mpmath.mpf(1e-12) * max(1, abs(a), abs(b))
        return {sp.Eq: close, sp.Ne: a != b, sp.Lt: a < b, sp.Le: close or a < b, sp.Gt: a > b,
                sp.Ge: close or a > b}[rel]


@given(st.sampled_from(_RELATIONS), st.floats(allow_nan=False, allow_infinity=False, width=64),
       st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False)), st.booleans(),
       st.integers(0, 3))
@settings(max_examples=400, deadline=None, database=None)
def test_relations_of_symbols_and_integers_are_decided_as_in_mpmath(rel, x, other, symbol_rhs, nudge):
    """Relations between a symbol and a symbol or an integer take a float fast path: it agrees with the 50-digit
    decision on generated values, ties and values an ulp or a tolerance apart included."""
    a, b = sp.symbols("a b")
    y = float(other) if symbol_rhs else float(int(other)) if isinstance(other, int) else float(round(other))
    y = [y, x, math.nextafter(x, math.inf), x * (1 + 1e-12)][nudge] if symbol_rhs else y
    if not math.isfinite(y) or (not symbol_rhs and abs(y) > 2**53):
        return
    rhs = b if symbol_rhs else sp.Integer(int(y))
    cond = rel(a, rhs, evaluate=False)
    if cond in (sp.true, sp.false):
        return
    assert condition_holds(cond, {"a": x, "b": y}) == _reference(rel, x, y)


_X, _Y = sp.symbols("x y", real=True)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([-1.0, -0.0, 0.0, 0.5, 1e-300, 3.0, 1e300]), st.floats(-10, 10))
def test_remembered_values_equal_fresh_ones(x, y):
    """evaluate() and Assumption.holds() remember results by (expression, argument values): asked twice, or at 0.0
    and then -0.0 (equal keys), they answer as SymPy's own 50-digit evaluation and an unremembered condition_holds."""
    from verify.model import evaluate

    for expr in (_X * _Y + sp.exp(_Y), sp.sqrt(_X**2 + _Y**2), _Y / (1 + _X**2)):
        want = sp.N(expr.subs({_X: sp.Float(x, 60), _Y: sp.Float(y, 60)}), 50)
        for _ in range(2):
            got = evaluate(expr, {"x": x, "y": y})
            assert float(got) == pytest.approx(float(want), rel=1e-15, abs=1e-300)
    rule = Assumption("bounded", sp.And(_X * _Y <= 1, _Y > -5), "x y <= 1 and y > -5")
    for _ in range(2):
        assert rule.holds({"x": x, "y": y}) is condition_holds(rule.condition, {"x": x, "y": y})


def test_unhashable_values_are_evaluated_not_remembered():
    """A 0-d array (unhashable) as a value: answered as without the memo (hostile probe), not a TypeError about
    hashing (mpmath itself refuses it in evaluate, as before the memo)."""
    import numpy as np

    from verify.model import evaluate

    rule = Assumption("below", _X < _Y, "x < y")
    assert rule.holds({"x": np.array(0.1), "y": 1.0}) is True
    with pytest.raises(TypeError, match="mpf"):
        evaluate(_X + _Y, {"x": np.array(0.25), "y": 1.0})
