"""Seed 004 (Thudi et al.): the sampled-Gaussian baseline against dp_accounting at integer orders and the inventory's
reference values, Theorem 3.2's ratios to the baseline, Fact 3.4's orders, and the falsifier on every expected
violation of a cheap family."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy as sp
from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.catalog import theorem
from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.catalog.thudi2024 import THEOREMS
from verify.certify import arb_bounds
from verify.families import family
from verify.model import Quantity
from verify.pipeline.rigorous import exact_text
from verify.results import Verdict
from verify.testing.falsify import search_outcome
from verify.truth.subsampled_dp import sgm_delta_add

MNIST_Q, MNIST_SIGMA = 128 / 60000, 0.469


def sgm(alpha: int, q: float, ratio: float, steps: int = 1) -> float:
    with mpmath.workdps(30):
        return float(SampledGaussianRDP._imp_(alpha, steps, q, ratio))


@settings(max_examples=30, deadline=None)
@given(alpha=st.integers(2, 12), steps=st.integers(1, 5), q_exponent=st.floats(-80, -1e-3), ratio=st.floats(1e-3, 4))
def test_sampled_gaussian_rdp_keeps_its_relative_accuracy_at_tiny_rates(alpha, steps, q_exponent, ratio):
    """The bound at any q against the plain binomial sum in enough digits to hold its q^2 part (before, at q = 1e-30 the
    50-digit value was -7.7e-52 where the RDP is 1.7e-60); and its Arb enclosure holds that reference."""
    q = 10.0**q_exponent
    with mpmath.workdps(50):
        got = SampledGaussianRDP._imp_(alpha, steps, q, ratio)
    with mpmath.workdps(60 + int(2 * alpha * abs(q_exponent))):
        a, qq, r = alpha, mpmath.mpf(q), mpmath.mpf(ratio)
        total = mpmath.fsum(mpmath.binomial(a, k) * (1 - qq) ** (a - k) * qq**k * mpmath.exp(r**2 * (k * k - k) / 2)
                            for k in range(a + 1))
        want = steps * mpmath.log(total) / (a - 1)
        assert want > 0 and abs(got - want) <= 1e-40 * want  # 50 digits, less the sum's few roundings
    box = {"alpha": str(alpha), "steps": str(steps), "q": exact_text(q), "r": exact_text(ratio)}
    lo, hi = arb_bounds(SampledGaussianRDP(*sp.symbols("alpha steps q r")), box, prec=128)
    assert float(lo) <= float(want) * (1 + 1e-15) and float(want) <= float(hi) * (1 + 1e-15)


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.5, 1.1, 4.0])
@pytest.mark.parametrize("alpha", [2, 3, 8, 32, 64])
def test_baseline_agrees_with_dp_accounting_at_integer_orders(q, sigma, alpha):
    reference = float(_compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
    assert sgm(alpha, q, 1 / sigma) == pytest.approx(reference, rel=1e-10)
    assert sgm(alpha, q, 1 / sigma, steps=4688) == pytest.approx(4688 * reference, rel=1e-10)


@pytest.mark.parametrize(("alpha", "reference", "half_unit"), [(8, 11.156, 5e-4), (2, 4.24e-4, 5e-7),
                                                              (3, 4.68e-3, 5e-6), (4, 0.915, 5e-4), (16, 29.81, 5e-3)])
def test_baseline_at_the_mnist_default(alpha, reference, half_unit):
    """Research 3/5: eps_base per step at q = 128/60000, sigma = 0.469 (to the digits printed there)."""
    assert sgm(alpha, MNIST_Q, 1 / MNIST_SIGMA) == pytest.approx(reference, abs=half_unit)


@pytest.mark.parametrize(("grad", "ratio"), [(0.05, 1.87e-8), (0.1, 7.59e-8), (0.3, 8.31e-7), (0.5, 3.63e-6),
                                             (0.7, 0.169), (0.9, 0.690)])
def test_theorem_3_2_over_the_baseline_at_alpha_8(grad, ratio):
    """Research 5: Theorem 3.2 / baseline at the MNIST default, ||g*||/C = grad."""
    got = sgm(8, MNIST_Q, grad / MNIST_SIGMA) / sgm(8, MNIST_Q, 1 / MNIST_SIGMA)
    assert got == pytest.approx(ratio, rel=2e-2)


@pytest.mark.parametrize(("n", "reference"), [(2, 9.4000), (10, 10.4975), (100, 10.7421), (4688, 10.7687)])
def test_fact_3_4_largest_order_with_p_3n(n, reference):
    """Research 2, Fact 3.4: g_{3n}^{n-1}(8), the first step's order."""
    order = family("holder_orders").truth(Quantity.COMPOSITION_ORDER, alpha=8.0, p_holder=3 * n, steps_back=n - 1)
    assert order.value == pytest.approx(reference, abs=6e-5)


CHEAP_VIOLATIONS = [(t.id, i) for t in THEOREMS for i, app in enumerate(t.applications)
                    if app.expected is Verdict.VIOLATED and not family(app.family).expensive]


@pytest.mark.parametrize(("entry", "index"), CHEAP_VIOLATIONS, ids=[f"{e}-{i}" for e, i in CHEAP_VIOLATIONS])
def test_falsifier_finds_every_printed_error_without_a_hand_picked_point(entry, index):
    t = theorem(entry)
    # the first certified point is the finding (test_falsify covers shrinking; here it was 95% of the time)
    outcome = search_outcome(t, t.applications[index], max_examples=400, budget_s=120, seed=0, shrink=False)
    assert outcome.counterexample is not None, outcome.summary()
    assert outcome.counterexample.result.certificate.verdict.value == "VIOLATED"


def test_falsifier_finds_the_classical_calibration_failure():
    """Footnote 3's constant on the (expensive) Gaussian family: found over the whole space, certified."""
    t = theorem("thudi2024.footnote3")
    outcome = search_outcome(t, t.applications[0], max_examples=100, budget_s=120, seed=0)
    assert outcome.counterexample is not None, outcome.summary()
    assert outcome.counterexample.result.certificate.verdict.value == "VIOLATED"


@pytest.mark.parametrize("alpha", [2, 5, 16])
@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.1), (0.2, 3.0)])
def test_conversions_are_ordered_and_match_dp_accounting_formulas(alpha, q, sigma):
    """The improved conversion is never above the classical one, and dp_accounting's compute_epsilon (which uses the
    improved conversion, minimised over the orders given) agrees with ours at a single order."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    rdp = sgm(alpha, q, 1 / sigma)
    classical = rdp + math.log(1 / 1e-5) / (alpha - 1)
    improved = rdp + math.log((alpha - 1) / alpha) - (math.log(1e-5) + math.log(alpha)) / (alpha - 1)
    assert improved <= classical
    eps, _ = compute_epsilon([alpha], [rdp], 1e-5)
    assert eps == pytest.approx(max(improved, 0.0), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("steps", [10, 1000])
@pytest.mark.parametrize("alpha", [4, 16, 64])
@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.0), (0.1, 2.0)])
def test_composed_conversion_entries_equal_dp_accounting(steps, alpha, q, sigma):
    """The catalog's conversions after T steps, evaluated from their SymPy bounds, against dp_accounting's RDP of the
    sampled Gaussian times T and its compute_epsilon (the improved conversion at one order)."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    rdp = steps * float(_compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
    point = {"alpha": alpha, "q": q, "sigma": sigma, "steps": steps, "delta": 1e-5}
    improved = float(theorem("thudi2024.rdp_to_dp.improved.composed").value(point))
    classical = float(theorem("thudi2024.rdp_to_dp.classical.composed").value(point))
    assert improved == pytest.approx(compute_epsilon([alpha], [rdp], 1e-5)[0], rel=1e-9)
    assert classical == pytest.approx(rdp + math.log(1e5) / (alpha - 1), rel=1e-9)


@pytest.mark.parametrize(("sigma", "eps_prime", "delta_at"), [
    (0.25, 8.027, 8.5e-5), (0.30, 5.668, 3.7e-5), (0.35, 3.995, 1.9e-5), (0.41, 2.574, 9.91e-6),
    (0.469, 1.626, 5.9e-6), (0.566, 0.750, 3.0e-6), (1.0, 0.0693, 5.5e-7)])
def test_corollary_3_1_of_research_4_6(sigma, eps_prime, delta_at):
    """Research 4.6(ii): Corollary 3.1's eps' at App. B.1's settings and the exact delta of the adding direction there
    (the claim is delta'' = 1e-5), to the digits printed there."""
    t = theorem("thudi2024.corollary3_1")
    values = {"sigma": sigma, "q": MNIST_Q, "delta": 1e-5, "p_holder": 10_000, "delta_slack": 0.5e-5}
    got = float(t.value(values))
    assert got == pytest.approx(eps_prime, abs=6e-4 if eps_prime > 0.1 else 6e-5)
    with mpmath.workdps(30):
        delta = float(sgm_delta_add(got, MNIST_Q, sigma))
    assert delta == pytest.approx(delta_at, rel=0.06)
    tight = family("sampled_gaussian").truth(Quantity.DP_EPSILON_ADD, q=MNIST_Q, sigma=sigma, delta=1e-5).value
    assert (tight > got) == (delta_at > 1e-5)


# ---- Theorem 3.3 / A.2 on the two-step chain of research 4.5 ------------------------------------------------
def _chain_by_quadrature(alpha: int, q: float, eta: float, p: int) -> float:
    """(1/(p (alpha - 1))) ln E_xi[M(min(eta |xi|, 1))^p] by mpmath quadrature (split at the clip), M the
    integer-order sampled-Gaussian moment: independent of the engine's erf/erfi closed form and power expansion."""
    with mpmath.workdps(30):
        q = mpmath.mpf(q)
        terms = [(mpmath.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k, mpmath.mpf(k * (k - 1)) / 2)
                 for k in range(alpha + 1)]  # (binomial weight, exponent's factor), formed once for every node

        def moment(d):
            d2 = mpmath.mpf(d) ** 2
            return mpmath.fsum(c * mpmath.exp(e * d2) for c, e in terms) ** p
        r = 1 / mpmath.mpf(eta)
        inside = 2 * mpmath.quad(lambda x: mpmath.npdf(x) * moment(eta * x), [0, r / 2, r])
        mean = inside + 2 * mpmath.ncdf(-r) * moment(1)
        return float(mpmath.log(mean) / (p * (alpha - 1)))


@pytest.mark.parametrize(("q", "eta", "true", "p2", "p6"), [
    (0.1, 0.2, 0.0043, 0.372, 1.038), (0.1, 0.35, 0.627, 0.995, 1.249), (0.1, 0.5, 0.950, 1.161, 1.305),
    (0.5, 0.2, 1.245, 2.201, 2.869), (0.5, 0.35, 2.455, 2.825, 3.080), (0.5, 0.5, 2.780, 2.991, 3.136)])
def test_two_step_chain_reproduces_research_4_5(q, eta, true, p2, p6):
    chain = family("dpsgd_anchored_two_step")
    got = chain.truth(Quantity.RENYI, alpha=8, q=q, eta=eta)
    assert got.value == pytest.approx(true, abs=6e-4 if true > 0.01 else 6e-5)
    assert got.value == pytest.approx(_chain_by_quadrature(8, q, eta, 1), rel=1e-12)
    for p, reference in ((2, p2), (6, p6)):
        holder = chain.truth(Quantity.HOLDER_BOUND, alpha=8, q=q, eta=eta, p_holder=p)
        assert holder.value == pytest.approx(reference, abs=6e-4)
        assert holder.value == pytest.approx(_chain_by_quadrature(8, q, eta, p), rel=1e-12)
        enclosure = holder.enclose(128)
        assert float(enclosure.lower) <= holder.value <= float(enclosure.upper)


@pytest.mark.parametrize("alpha", [2, 3, 16])
@pytest.mark.parametrize("eta", [0.05, 0.5, 1.0, 3.0])  # 1 - 2 m eta^2 of either sign, and 0 (eta = 0.5, m = 2)
def test_two_step_chain_at_other_orders_and_steps(alpha, eta):
    chain = family("dpsgd_anchored_two_step")
    assert chain.truth(Quantity.RENYI, alpha=alpha, q=0.3, eta=eta).value == pytest.approx(
        _chain_by_quadrature(alpha, 0.3, eta, 1), rel=1e-10)
    assert chain.truth(Quantity.HOLDER_BOUND, alpha=alpha, q=0.3, eta=eta, p_holder=3).value == pytest.approx(
        _chain_by_quadrature(alpha, 0.3, eta, 3), rel=1e-10)


def _estimate_undercuts(alpha: int, q: float, eta: float, runs: int, p: int, reps: int, seed: int) -> float:
    """The paper's plug-in (1/lambda) ln mean_j exp(lambda eps_SGM(Delta(xi_j))) over `runs` runs, lambda = p (alpha
    - 1), simulated `reps` times: the fraction below the true path divergence."""
    import numpy as np
    from scipy.special import logsumexp

    rng = np.random.default_rng(seed)
    delta = np.minimum(eta * np.abs(rng.standard_normal((reps, runs))), 1.0)
    ks = np.arange(alpha + 1)
    log_c = np.array([math.log(math.comb(alpha, k)) + (alpha - k) * math.log1p(-q) + k * math.log(q) for k in ks])
    eps = logsumexp(log_c + np.multiply.outer(delta**2, ks * (ks - 1) / 2), axis=-1) / (alpha - 1)
    lam = p * (alpha - 1)
    estimate = (logsumexp(lam * eps, axis=1) - math.log(runs)) / lam
    true = family("dpsgd_anchored_two_step").truth(Quantity.RENYI, alpha=alpha, q=q, eta=eta).value
    return float(np.mean(estimate < true))


@pytest.mark.parametrize(("q", "eta"), [(0.1, 0.2), (0.1, 0.5), (0.5, 0.2), (0.5, 0.5)])
def test_undercut_lower_end_is_below_the_simulated_frequency(q, eta):
    lower = family("dpsgd_anchored_two_step").truth(Quantity.ESTIMATOR_UNDERCUT, alpha=8, q=q, eta=eta, runs=10)
    frequency = _estimate_undercuts(8, q, eta, runs=10, p=6, reps=20_000, seed=1)
    assert lower.value <= frequency + 0.01  # the proven lower end; 20 000 replicates: sd <= 0.0035
    assert lower.upper == 1.0
    enclosure = lower.enclose(128)
    assert float(enclosure.lower) <= lower.value * (1 + 1e-12)


def test_the_ten_run_estimate_undercuts_with_probability_near_research():
    """research 4.5's simulated P(MC10 < true): 0.94 at (0.1, 0.2) and 0.996 at (0.5, 0.2)."""
    assert _estimate_undercuts(8, 0.1, 0.2, 10, 6, 20_000, seed=2) == pytest.approx(0.94, abs=0.02)
    assert _estimate_undercuts(8, 0.5, 0.2, 10, 6, 20_000, seed=3) == pytest.approx(0.996, abs=0.005)
