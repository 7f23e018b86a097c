"""verify.audit's arithmetic against independent references (binomial sums in mpmath, the noncentral t by quadrature
over its chi-square mixture, a separate root solve of the Gaussian-DP curve), its contract (no threshold chosen on
evaluation samples, a bound never above its power, seeded results), and its refusals of bad input."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)
from scipy import integrate, stats

from verify.audit import audit, audit_scores, epsilon_oracle
from verify.audit.stats import (
    clopper_pearson_upper,
    gaussian_epsilon_lower,
    noncentrality_bounds,
    sigma_interval,
)
from verify.errors import ParameterError, PluginError


def binomial_cdf(k: int, n: int, p: float) -> float:
    with mpmath.workdps(40):
        return float(mpmath.fsum(mpmath.binomial(n, i) * mpmath.mpf(p) ** i * (1 - mpmath.mpf(p)) ** (n - i)
                                 for i in range(k + 1)))


@settings(max_examples=examples(40, 300))
@given(st.integers(1, 400), st.data(), st.sampled_from([0.001, 0.025, 0.05, 0.2]))
def test_clopper_pearson_upper_is_the_exact_binomial_bound(n: int, data: st.DataObject, level: float) -> None:
    k = data.draw(st.integers(0, n - 1))
    upper = float(clopper_pearson_upper(k, n, level))
    assert binomial_cdf(k, n, upper) == pytest.approx(level, rel=1e-6)
    assert float(clopper_pearson_upper(n, n, level)) == 1.0


def nct_sf_by_quadrature(t: float, df: int, nc: float) -> float:
    """P(T >= t), T = (Z + nc)/sqrt(V/df): E[Phi(nc - t sqrt(V/df))] over V chi-square(df)."""
    lo, hi = stats.chi2.ppf(1e-15, df), stats.chi2.isf(1e-15, df)
    return integrate.quad(lambda v: stats.norm.cdf(nc - t * math.sqrt(v / df)) * stats.chi2.pdf(v, df), lo, hi,
                          epsabs=1e-13, limit=400)[0]


@settings(max_examples=examples(20, 150))
@given(st.floats(-30, 60), st.integers(10, 5000))
def test_noncentrality_bounds_solve_the_noncentral_t(t: float, df: int) -> None:
    low, high = noncentrality_bounds(t, df, 0.045, 0.005)
    assert low < high
    assert nct_sf_by_quadrature(t, df, low) == pytest.approx(0.045, rel=1e-4)
    assert 1 - nct_sf_by_quadrature(t, df, high) == pytest.approx(0.005, rel=1e-3)
    assert nct_sf_by_quadrature(t, df, low) <= 0.045 * (1 + 1e-6)  # moved outwards, never inwards


def gdp_delta(eps: float, mu: float) -> float:
    with mpmath.workdps(50):
        return float(mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


@settings(max_examples=examples(20, 100))
@given(st.floats(0.05, 8.0), st.sampled_from([1e-10, 1e-5, 1e-3, 0.1]))
def test_gaussian_epsilon_lower_is_below_the_root_and_tight(mu: float, delta: float) -> None:
    lower = gaussian_epsilon_lower(delta, mu)
    if gdp_delta(0.0, mu) <= delta:
        assert lower == 0.0
        return
    lo, hi = 0.0, mu * mu / 2 + 10 * mu  # bisection: gdp_delta decreases in eps
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gdp_delta(mid, mu) > delta else (lo, mid)
    root = lo
    assert lower <= root
    assert lower == pytest.approx(root, rel=1e-9, abs=1e-12)


def test_sigma_interval_is_the_chi_square_interval() -> None:
    low, high = sigma_interval(4.0, 50, 0.9)
    assert 50 * 4.0 / low**2 == pytest.approx(stats.chi2.isf(0.05, 50))
    assert 50 * 4.0 / high**2 == pytest.approx(stats.chi2.ppf(0.05, 50))


def test_separable_scores_reach_the_power() -> None:
    """No errors on the evaluation part: the bound is the power, log((1 - delta - b)/a) with a = b = 1 -
    0.025^(1/n) (the zero-error Clopper-Pearson bound)."""
    r = audit_scores(np.arange(100.0, 200.0), np.arange(0.0, 100.0), delta=0.0, seed=3)
    n = r.counts.evaluation_in
    zero = 1 - 0.025 ** (1 / n)
    assert r.counts.false_positives == r.counts.false_negatives == 0
    assert r.epsilon_lower == pytest.approx(math.log((1 - zero) / zero)) == pytest.approx(r.power)


@settings(max_examples=examples(30, 200))
@given(st.lists(st.floats(-5, 5), min_size=8, max_size=60), st.lists(st.floats(-5, 5), min_size=8, max_size=60),
       st.integers(0, 5))
def test_bound_between_zero_and_power_and_seeded(ins: list[float], outs: list[float], seed: int) -> None:
    r = audit_scores(ins, outs, delta=1e-3, seed=seed)
    assert 0.0 <= r.epsilon_lower <= r.power
    assert r == audit_scores(ins, outs, delta=1e-3, seed=seed)
    assert r.counts.selection_in + r.counts.evaluation_in == len(ins)


def test_a_given_threshold_counts_every_score() -> None:
    r = audit_scores([1.0, 2, 3, 4, 5, 6, 7, 8], [0.0, 0, 0, 0, 0, 0, 6, 7], delta=0.0, threshold=2.5)
    assert (r.counts.false_positives, r.counts.false_negatives) == (2, 2)
    assert r.counts.evaluation_in == r.counts.evaluation_out == 8 and r.counts.selection_in == 0
    assert r.fpr_upper == pytest.approx(float(clopper_pearson_upper(2, 8, 0.025)))


def test_the_threshold_ignores_the_evaluation_part() -> None:
    """The test is a function of the selection part: changing the evaluation scores leaves it as it was."""
    rng = np.random.default_rng(0)
    ins, outs = rng.normal(1, 1, 400), rng.normal(0, 1, 400)
    first = audit_scores(ins, outs, delta=1e-5, seed=7)
    order = np.random.default_rng(7).permutation(400)  # the selection rows the audit draws first (D's)
    changed = ins.copy()
    changed[order[100:]] = rng.normal(5, 1, 300)  # D's evaluation rows
    second = audit_scores(changed, outs, delta=1e-5, seed=7)
    assert second.test == first.test
    assert second.counts.false_negatives != first.counts.false_negatives


def test_refutes_and_undecidable() -> None:
    r = audit_scores(np.arange(100.0, 200.0), np.arange(0.0, 100.0), delta=0.0, claim_epsilon=1.0)
    assert r.refutes and r.verdict == "REFUTED"
    r = audit_scores(np.arange(100.0, 200.0), np.arange(0.0, 100.0), delta=0.0, claim_epsilon=50.0)
    assert not r.refutes and not r.decidable and r.verdict == "UNDECIDABLE"
    assert "UNDECIDABLE" in str(r)


def test_oracle_matches_the_formula_at_one_threshold() -> None:
    a, b = 0.01, 0.3
    level = 0.025
    expected = math.log((1 - 1e-5 - float(clopper_pearson_upper(b * 1000, 1000, level)))
                        / float(clopper_pearson_upper(a * 1000, 1000, level)))
    assert epsilon_oracle([a], [b], samples=1000, delta=1e-5) == pytest.approx(expected)


def test_vectorised_and_looped_mechanisms_agree_in_law() -> None:
    def looped(data: float, rng: np.random.Generator) -> float:
        return data + rng.normal()

    def batched(data: float, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        return data + rng.normal(size=batch)

    one = audit(looped, 0.0, 1.0, samples=300, delta=1e-3, seed=1)
    two = audit(batched, 0.0, 1.0, samples=300, delta=1e-3, seed=1)
    assert one.counts == two.counts and one.counts.evaluation_in == 225
    assert one.epsilon_lower == pytest.approx(two.epsilon_lower)  # the same draws from the same generators


def test_vector_outputs_are_projected() -> None:
    def mech(data: float, rng: np.random.Generator) -> np.ndarray:
        return np.array([0.0, data]) + rng.normal(size=2)

    r = audit(mech, 3.0, 0.0, samples=200, delta=1e-3, seed=0)
    assert r.test.score == "projection" and abs(r.test.projection[1]) > 0.9
    g = audit(mech, 3.0, 0.0, samples=200, delta=1e-3, seed=0, assume="gaussian")
    assert g.mu_lower > 1.5 and g.sigma_interval[0] < 1 < g.sigma_interval[1]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"delta": 1.0}, "delta"), ({"delta": -0.1}, "delta"), ({"delta": 0.1, "confidence": 1.0}, "confidence"),
    ({"delta": 0.1, "split": 0.0}, "split"), ({"delta": 0.1, "claim_epsilon": float("nan")}, "claim")])
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        audit_scores(np.arange(10.0), np.arange(10.0), **kwargs)


def test_bad_scores() -> None:
    with pytest.raises(ParameterError, match="NaN"):
        audit_scores([float("nan")] * 10, np.arange(10.0), delta=0.1)
    with pytest.raises(ParameterError, match="at least"):
        audit_scores([1.0, 2.0], np.arange(10.0), delta=0.1)


def test_mechanism_errors_are_the_mechanisms() -> None:
    def broken(data: float, rng: np.random.Generator) -> float:
        raise RuntimeError("boom")

    with pytest.raises(PluginError, match="RuntimeError: boom"):
        audit(broken, 0, 1, samples=10, delta=0.1)
    with pytest.raises(PluginError, match="shape"):
        audit(lambda d, rng: np.zeros((2, 2)), 0, 1, samples=10, delta=0.1)
    with pytest.raises(PluginError, match="NaN"):
        audit(lambda d, rng: float("nan"), 0, 1, samples=10, delta=0.1)
    with pytest.raises(ParameterError, match="assume"):
        audit(lambda d, rng: 0.0, 0, 1, samples=10, delta=0.1, assume="laplace")
    with pytest.raises(ParameterError, match="do not vary"):
        audit(lambda d, rng: 0.0, 0, 1, samples=10, delta=0.1, assume="gaussian")
