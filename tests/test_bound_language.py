"""The bound language: floor, ceiling, Min/Max, finite sums and a min over an integer range, parsed from user text,
evaluated in mpmath, floats and Arb intervals (each against a plain Python loop), and used by the falsifier."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.bounds import FiniteSum, RangeMin
from verify.certify import arb_bounds
from verify.errors import ParameterError
from verify.model import evaluate
from verify.parsing import parse_expression
from verify.pipeline.rigorous import exact_text
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


# ---- the normal quantile (Gaussian-DP and f-DP statements) -------------------------------------------------------

P = sp.Symbol("p", positive=True)


def _reference_quantile(p: float) -> mpmath.mpf:
    """Phi^-1(p) = sqrt(2) erfinv(2p - 1) at 1200 bits, where 2p - 1 of a binary p >= 1e-300 is exact (the
    cancellation the implementation avoids is harmless at this precision)."""
    with mpmath.workprec(1200):
        return mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(p) - 1)


@settings(max_examples=60, deadline=None, database=None)
@given(p=st.one_of(st.floats(1e-300, 1e-8), st.floats(1e-8, 1 - 1e-16)))
def test_phi_inv_and_erfcinv_match_a_1200_bit_reference_in_mpmath_floats_and_arb(p):
    """Phi_inv(p) in the bound language (mpmath, the float filter and an Arb enclosure) against 1200-bit mpmath; the
    tail p = 1e-300 is where erfinv(2p - 1) in working precision would give -inf."""
    ref = _reference_quantile(p)
    for text, scale in (("Phi_inv(p)", 1), ("-sqrt(2)*erfcinv(2*p)", 1), ("erfinv(2*p - 1)", mpmath.sqrt(2))):
        expr = parse_expression(text, {"p": P})
        raw = evaluate(expr, {"p": p})
        tol = 1e-12 if text.startswith("erfinv") else 1e-30  # erfinv(2p - 1) loses the bits of p below 2^-53
        if text.startswith("erfinv") and p < 1e-8:
            continue  # 2p - 1 rounds in the float filter's float inputs: not a form the language promises for tails
        with mpmath.workprec(1200):  # the 50-digit value, not rounded to 53 bits by the product
            value = raw * scale
            assert abs(value - ref) <= tol * max(1, abs(ref)), (text, p, value, ref)
        lo, hi = arb_bounds(expr, {"p": exact_text(p)})
        with mpmath.workprec(1200):
            row = arb(mpmath.nstr(ref / scale, 80))  # a ball holding the reference of this row's expression
        assert lo.lower() <= row.upper() and row.lower() <= hi.upper(), (text, p, lo, hi, row)
    with mpmath.workprec(1200):
        assert abs(evaluate(parse_expression("Phi(Phi_inv(p))", {"p": P}), {"p": p}) - p) <= 1e-30 * p


def test_a_gaussian_dp_tradeoff_claim_is_checked_and_its_violation_certified():
    """f-DP of the Gaussian mechanism (Dong, Roth & Su 2022): G_mu(x) = Phi(Phi^-1(1 - x) - mu) with mu = 1/sigma is
    exact for q = 1, so claiming a larger mu (a stronger guarantee) is violated, and the violation certified."""
    exact = falsify("Phi(Phi_inv(1 - type1) - 1/sigma)", "sampled_gaussian", "lower",
                    quantity="tradeoff_beta", defaults={"q": 1}, max_examples=30, min_checked=5)
    assert exact is None
    found = falsify("Phi(Phi_inv(1 - type1) - 0.9/sigma)", "sampled_gaussian", "lower",
                    quantity="tradeoff_beta", defaults={"q": 1}, max_examples=30)
    assert found is not None and found.result.certificate is not None
    x, sigma = found.params["type1"], found.params["sigma"]
    with mpmath.workdps(40):
        truth = mpmath.ncdf(_reference_quantile(1 - x) - 1 / mpmath.mpf(sigma))  # independent: mpmath's ncdf
    assert found.bound > truth
