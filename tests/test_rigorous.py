"""Class 1 of the trust issue: a VIOLATED is certified and every truth's interval really encloses it.

References are independent of the code under test: mpmath quadrature of the defining integral written here, the
closed forms written here, and python-flint enclosures (a different method: acb.integral with proven tails)."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import check, family
from verify.catalog import theorem
from verify.checker import check_point
from verify.results import Method, Verdict
from verify.testing import user_theorem

SETTINGS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _sgm_reference(q: float, sigma: float, alpha: float, order: str) -> mpmath.mpf:
    """R_alpha of the sampled Gaussian by 40-digit quadrature of int P^a Q^(1-a) - 1 written as
    int Q ((P/Q)^a - 1), P/Q = 1 - q + q exp((2x - 1)/(2 sigma^2)) (no cancellation: expm1 of a log1p)."""
    with mpmath.workdps(40):
        q, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

        def integrand(x):
            log_ratio = mpmath.log1p(q * mpmath.expm1((2 * x - 1) / (2 * s**2)))  # log P/Q
            if order == "pq":
                return mpmath.npdf(x, 0, s) * mpmath.expm1(a * log_ratio)
            return mpmath.npdf(x, 0, s) * mpmath.exp(log_ratio) * mpmath.expm1(-a * log_ratio)  # int P (Q/P)^a - 1
        edge = 40 * s + 2
        j = mpmath.quad(integrand, mpmath.linspace(-edge, edge, 41))
        return mpmath.log1p(j) / (a - 1)


@pytest.mark.parametrize(("q", "sigma", "alpha"), [(1e-4, 5.0, 1.03), (1e-4, 50.0, 1.0001), (0.01, 1.1, 2.5),
                                                   (0.3, 0.7, 3.0)])
def test_sampled_gaussian_intervals_enclose_the_reference(q, sigma, alpha):
    truth = family("sampled_gaussian").truth("renyi", alpha=alpha, q=q, sigma=sigma)
    reference = max(_sgm_reference(q, sigma, alpha, "pq"), _sgm_reference(q, sigma, alpha, "qp"))
    assert truth.lower <= reference <= truth.upper
    enclosure = truth.enclose(128)
    assert float(enclosure.lower.mid()) <= float(reference) * (1 + 1e-15)
    assert float(reference) <= float(enclosure.upper.mid()) * (1 + 1e-15)


@settings(SETTINGS, max_examples=15)
@given(q=st.floats(1e-6, 1.0), sigma=st.floats(0.3, 60.0), alpha=st.one_of(st.floats(1.0 + 1e-6, 1.2),
                                                                          st.floats(1.2, 12.0)))
def test_float_quadrature_interval_contains_the_rigorous_enclosure(q, sigma, alpha):
    """The fast quadrature's interval (the float filter) holds the acb enclosure, at tiny divergences and alpha near
    1 too (the cancellation of the old (I - 1)/(alpha - 1) form)."""
    truth = family("sampled_gaussian").truth("renyi", alpha=alpha, q=q, sigma=sigma)
    enclosure = truth.enclose(128)
    lo, hi = float(enclosure.lower.mid()), float(enclosure.upper.mid())
    if hi - lo > (truth.upper - truth.lower) / 4:  # not tight enough to stand for the exact value
        enclosure = truth.enclose(256)
        lo, hi = float(enclosure.lower.mid()), float(enclosure.upper.mid())
    slack = 4e-16 * abs(truth.value)
    assert truth.lower - slack <= lo and hi <= truth.upper + slack


def test_issue_example_is_not_a_counterexample():
    """alpha = 1.03, q = 1e-4, sigma = 5: the old quadrature called the bound violated; the truth is
    2.1017464381e-10 and the bound lies above it."""
    theorem = user_theorem("alpha*q**2*(exp(1/sigma**2) - 1)/2", "sampled_gaussian")
    result = check_point(theorem, theorem.applications[0], {"alpha": 1.03, "q": 1e-4, "sigma": 5.0})
    assert result.verdict is Verdict.HOLDS
    assert result.truth.value == pytest.approx(2.1017464381e-10, rel=1e-10)


@SETTINGS
@given(q=st.floats(1e-5, 0.5), sigma=st.floats(0.5, 20.0), alpha=st.sampled_from([2.0, 3.0]))
def test_tight_formulas_are_never_violated(q, sigma, alpha):
    """The sampled Gaussian's exact RDP in closed form (MTZ binomial series at alpha = 2, 3) as an 'upper bound' of
    R(P||Q) is tight: the checker must never call it VIOLATED (a tie within 1e-9, or HOLDS)."""
    closed = {2.0: "log(1 + q**2*(exp(1/sigma**2) - 1))",
              3.0: "log(1 + 3*q**2*(exp(1/sigma**2) - 1) + q**3*(exp(3/sigma**2) - 3*exp(1/sigma**2) + 2))/2"}
    theorem = user_theorem(closed[alpha], "sampled_gaussian")
    result = check_point(theorem, theorem.applications[0], {"alpha": alpha, "q": q, "sigma": sigma})
    qp = family("sampled_gaussian").truth("renyi", alpha=alpha, q=q, sigma=sigma)
    if result.verdict is Verdict.VIOLATED:  # only if the other order is larger, and then certified
        assert result.certificate is not None and result.certificate.verdict is Verdict.VIOLATED
        assert qp.value > float(mpmath.mpf(result.bound)) * (1 + 1e-9)


@SETTINGS
@given(exponent=st.integers(-150, 150), D0=st.sampled_from([0.5, 2.0, 10.0]), K=st.integers(1, 5))
def test_underflow_and_overflow_never_decide(exponent, D0, K):
    """Feldman et al. Thm 1 as printed (no square on D0) is violated iff D0 > 1, at every noise scale: the verdict
    must not depend on sigma = 10^exponent (float underflow to 0 and overflow to inf)."""
    result = check("feldman2018.theorem1", alpha=2, K=K, D0=D0, kappa=1, sigma=10.0**exponent)
    expected = Verdict.VIOLATED if D0 > 1 else Verdict.HOLDS
    assert result.verdict is expected
    assert math.isfinite(result.margin)
    assert result.ratio == pytest.approx(1 / D0, rel=1e-9)  # bound/truth = (D0/D0^2) at any scale
    if expected is Verdict.VIOLATED:
        assert result.certificate is not None and result.certificate.verdict is Verdict.VIOLATED
    corrected = check("feldman2018.theorem1.corrected", alpha=2, K=K, D0=D0, kappa=1, sigma=10.0**exponent)
    assert corrected.verdict is Verdict.HOLDS


@settings(max_examples=8, deadline=None, database=None)
@given(k=st.integers(3, 12))
def test_identical_datasets_give_zero_on_grids(k):
    """Identical datasets (x = 0 on the logistic family) have divergence exactly 0 near alpha = 1 too: the grid's
    interval contains 0 (the old log-sum form had intervals excluding 0), computed on two processes the grid cannot
    tell apart by their keys (separate drift objects); the family, whose keys say the laws are one, answers 0 exactly
    without the grid."""
    import numpy as np

    from verify.truth.grid1d import grid_renyi_both, noisy_gd_process

    alpha = 1 + 10.0**-k
    grads = [lambda th: -1 / (1 + np.exp(np.clip(th, -700, 700))) + th for _ in range(2)]
    pair = [noisy_gd_process(g, eta=0.1, sigma=1, K=3) for g in grads]
    for truth in grid_renyi_both(*pair, alpha):
        assert truth.method is Method.GRID and truth.lower <= 0 <= truth.upper
    exact = family("noisy_gd_logistic_1d").truth("renyi", alpha=alpha, sigma=1, eta=0.1, n=5, K=3, x=0, xo=1, lam=1,
                                                 start_var=0)
    assert (exact.method, exact.value, exact.lower, exact.upper) == (Method.EXACT, 0.0, 0.0, 0.0)


def test_monte_carlo_violation_is_not_certified():
    """A Monte-Carlo estimate whose CI excludes the bound is statistical evidence, never a VIOLATED."""
    theorem = user_theorem("alpha*q**2/(2*sigma**2)", "sampled_gaussian_mc")
    result = check_point(theorem, theorem.applications[0],
                         {"alpha": 8.0, "q": 0.1, "sigma": 1.1, "samples": 20000, "seed": 0})
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.certificate is not None and result.certificate.filter_verdict is Verdict.VIOLATED
    assert "monte-carlo" in result.certificate.reason


def test_violation_carries_certificate_with_enclosures():
    result = check("feldman2018.lemma25.large_c", alpha=2, w=0.01, gap1=0, gap2=4, s=1)
    cert = result.certificate
    assert result.verdict is Verdict.VIOLATED and cert is not None
    assert cert.verdict is Verdict.VIOLATED and cert.precision_bits >= 64 and "acb.integral" in cert.method
    truth_lo = float(cert.truth_lower)
    assert truth_lo == pytest.approx(6.7907842346287048, rel=1e-15) and float(cert.bound_upper) < truth_lo


def test_family_quantities_in_a_bound_are_enclosed_not_rounded():
    """Mironov's weak triangle inequality with D_2a(P||Q) and D_2a-1(Q||R) bound to the family's exact values: at
    d2 = 6e-286 those values underflow to 0.0 in float while the truth (also underflowed) is enclosed in Arb; the
    fallback must enclose the bound's family quantities too, or it certifies 0 < truth as a violation."""
    t = theorem("thudi2024.fact5_2.corrected")
    point = check_point(t, t.applications[0], {"alpha": 2.0, "d1": 0.0, "d2": 6e-286, "s": 1.0})
    assert point.verdict is not Verdict.VIOLATED
    assert point.certificate is not None and point.certificate.verdict is not Verdict.VIOLATED


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(exponent=st.integers(-320, -20))
def test_a_bound_with_1_minus_exp_is_enclosed_without_cancelling_at_tiny_steps(exponent):
    """Corollary 1's bound has 1 - exp(-c eta K): at eta = 1e-320 (a subnormal bound, re-checked in Arb) its
    enclosure was [-2.6e-320, 2.6e-320] even at 512 bits (the raw form cancels at every precision) and the point came
    out INCONCLUSIVE with ratio 0; the certificate encloses the expm1/log1p form the checker's value uses. The bound
    (~8 eta) holds far above the truth (~2 eta^2) at every scale."""
    result = check("chourasia2021.corollary1", eta=10.0**exponent, alpha=2, sigma=1, n=10, K=5, S=4, lam=1)
    assert result.verdict is Verdict.HOLDS
    assert result.bound == pytest.approx(8 * 10.0**exponent, rel=1e-5)
    assert result.certificate is None or result.certificate.verdict is Verdict.HOLDS
