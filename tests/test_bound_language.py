"""The bound language: floor, ceiling, Min/Max, finite sums and a min over an integer range, parsed from user text,
evaluated in mpmath, floats and Arb intervals (each against a plain Python loop), and used by the falsifier."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from verify.bounds import FiniteSum, RangeMin
from verify.certify import arb_bounds
from verify.errors import ParameterError
from verify.model import evaluate
from verify.parsing import parse_expression
from verify.rigorous import exact_text
from verify.testing import falsify, falsify_outcome

K = sp.Symbol("K", integer=True, positive=True)
a = sp.Symbol("a", positive=True)
SYMBOLS = {"K": K, "a": a}


def _parse(text: str) -> sp.Expr:
    return parse_expression(text, SYMBOLS)


@pytest.mark.parametrize(("text", "reference"), [
    ("Sum(a/k**2, k, 1, K)", lambda a, K: sum(a / k**2 for k in range(1, K + 1))),
    ("MinOver((k - 3)**2 + a, k, 1, K)",
     lambda a, K: min((k - 3) ** 2 + a for k in range(1, K + 1))),
    ("floor(a*K) + ceiling(a)", lambda a, K: math.floor(a * K) + math.ceil(a)),
    ("Max(a, K) - Min(a, 2)", lambda a, K: max(a, K) - min(a, 2)),
    ("Sum(MinOver(j*k - a, j, 1, k), k, 1, K)", lambda a, K: sum(min(j * k - a for j in range(1, k + 1))
                                                                for k in range(1, K + 1))),
])
@pytest.mark.parametrize(("a_value", "K_value"), [(0.7, 1), (2.5, 6), (1e-3, 40)])
def test_mpmath_float_and_arb_agree_with_a_python_loop(text, reference, a_value, K_value):
    expr = _parse(text)
    ref = reference(a_value, K_value)
    assert float(evaluate(expr, {"a": a_value, "K": K_value})) == pytest.approx(ref, rel=1e-12, abs=1e-12)
    lo, hi = arb_bounds(expr, {"a": exact_text(a_value), "K": exact_text(K_value)})
    assert lo.lower() <= ref + 1e-12 and ref - 1e-12 <= hi.upper()
    assert float(hi.upper()) - float(lo.lower()) <= 1e-9 * max(1.0, abs(ref))


def test_the_classes_are_what_the_text_says():
    assert isinstance(_parse("Sum(a*k, k, 1, K)"), FiniteSum)
    assert isinstance(_parse("MinOver(a*k, k, 1, K)"), RangeMin)
    assert _parse("MinOver(a*k, k, 1, K)").free_symbols == {a, K}


@pytest.mark.parametrize(("text", "message"), [
    ("Sum(a*k, k, 1)", "takes \\(body, k, lo, hi\\)"),
    ("Sum(a*K, K, 1, 3)", "already a symbol"),
    ("Sum(a*k, 2, 1, K)", "takes \\(body, k, lo, hi\\)"),
    ("Sum(a, k, 1, k)", "unknown symbol 'k'"),
    ("a*k + Sum(a, k, 1, K)", "unknown symbol 'k'"),
])
def test_malformed_ranges_are_named(text, message):
    with pytest.raises(ParameterError, match=message):
        _parse(text)


@pytest.mark.parametrize("text", ["Sum(1, k, 1, a)", "MinOver(k, k, 3, K)"])
def test_a_range_that_is_not_integer_or_empty_is_an_error_at_the_point(text):
    with pytest.raises(ParameterError):
        evaluate(_parse(text), {"a": 2.5, "K": 2})


def test_the_falsifier_refutes_a_min_over_split_points_and_certifies_it():
    """min over t of t steps at the noisy-GD rate with the wrong constant: refuted at a certified point."""
    found = falsify("MinOver(alpha*S**2*eta*t/(8*n**2*sigma**2), t, 1, K)", "noisy_gd_quadratic", seed=0,
                    max_examples=200)
    assert found is not None and found.bound < found.truth.lower
    assert found.result.certificate is not None


def test_a_sum_searches_exactly_like_its_closed_form():
    """Same seed, same family: K equal terms and K times the term give the same search, point for point."""
    term = "alpha*S**2*eta/(6*n**2*sigma**2)"
    as_sum = falsify_outcome(f"Sum({term}, k, 1, K)", "noisy_gd_quadratic", seed=3, max_examples=120)
    closed = falsify_outcome(f"K*{term}", "noisy_gd_quadratic", seed=3, max_examples=120)
    assert (as_sum.tried, as_sum.checked) == (closed.tried, closed.checked)
    assert (as_sum.counterexample is None) == (closed.counterexample is None)
    if closed.counterexample is not None:
        assert as_sum.counterexample.params == closed.counterexample.params
