"""Seed 004 (Thudi et al.): the sampled-Gaussian baseline against dp_accounting at integer orders and the inventory's
reference values, Theorem 3.2's ratios to the baseline, Fact 3.4's orders, and the falsifier on every expected
violation of a cheap family."""

from __future__ import annotations

import math

import mpmath
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian

from verify.catalog import theorem
from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.catalog.thudi2024 import THEOREMS
from verify.families import family
from verify.model import Quantity
from verify.results import Verdict
from verify.testing.falsify import search_outcome
from verify.truth.subsampled_dp import sgm_delta_add

MNIST_Q, MNIST_SIGMA = 128 / 60000, 0.469


def sgm(alpha: int, q: float, ratio: float, steps: int = 1) -> float:
    with mpmath.workdps(30):
        return float(SampledGaussianRDP._imp_(alpha, steps, q, ratio))


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
    outcome = search_outcome(t, t.applications[index], max_examples=400, budget_s=120, seed=0)
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
