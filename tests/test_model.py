"""Families, assumptions and parameter domains."""

import math

import pytest
import sympy as sp

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
