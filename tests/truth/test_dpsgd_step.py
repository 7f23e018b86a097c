"""One exact DP-SGD step (seed 004): the research inventory's numbers (computed there by an independent script), a
direct 20-digit quadrature of the two laws, the sampled-Gaussian closed form where Theorem 3.2 is tight, Theorem 3.2
and the baseline over generated datasets, and bad input."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.errors import ParameterError
from verify.truth.dpsgd_step import TwoClusterStep, dpsgd_step_renyi, theorem36_rhs
from verify.truth.mixture_arb import enclose_renyi_mixture_gaussian
from verify.truth.mixture_quad import renyi_mixture_to_gaussians
from verify.truth.sgm_rdp import sgm_renyi_truth


@pytest.mark.parametrize(("rule", "q", "g_star", "s", "alpha", "reference"), [
    ("mean", 0.1, 0.2, 0.3, 8, 4.77e-4), ("mean", 0.1, -1.0, 0.1, 8, 59.99), ("mean", 0.1, -1.0, 0.3, 8, 3.104),
    ("mean", 0.3, -1.0, 0.1, 8, 56.54), ("mean", 0.3, 0.2, 0.3, 2, 1.06e-4), ("sum", 0.1, -1.0, 1.0, 8, 0.0829),
    ("sum", 0.3, 0.2, 3.0, 2, 3.57e-4)])
def test_research_4_3_two_clusters(rule, q, g_star, s, alpha, reference):
    """40 points with gradient 0.2, 10 with -0.6 (research 4.3(a), 'exact D (max dir)', 3-4 digits)."""
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, g_star, 40, 0.2, 10, -0.6, rule), alpha)
    assert truth.value == pytest.approx(reference, rel=5e-3)  # the references carry 3-4 digits


def _merged(comps: list[tuple[mpmath.mpf, mpmath.mpf]]) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """The (weight, mean) components with the weights of equal means added: the same mixture, fewer densities to
    evaluate at each quadrature node (the subsets of one size and cluster count share their update)."""
    by_mean: dict[mpmath.mpf, mpmath.mpf] = {}
    for w, m in comps:
        by_mean[m] = by_mean.get(m, 0) + w
    return [(w, m) for m, w in by_mean.items()]


def _direct(step: TwoClusterStep, alpha: int) -> float:
    """max of both orders by mpmath quadrature of the explicit mixtures (the batch subsets enumerated one by one)."""
    points = [step.g_a] * step.n_a + [step.g_b] * step.n_b
    with mpmath.workdps(20):
        q, s = mpmath.mpf(step.q), mpmath.mpf(step.s)
        comps_d, comps_dp = [], []
        for mask in range(2 ** len(points)):
            batch = [g for i, g in enumerate(points) if mask >> i & 1]
            w = q ** len(batch) * (1 - q) ** (len(points) - len(batch))

            def update(gs):
                if step.rule == "sum":
                    return mpmath.fsum(gs)
                return mpmath.fsum(gs) / len(gs) if gs else mpmath.mpf(0)

            comps_d.append((w, update(batch)))
            comps_dp += [((1 - q) * w, update(batch)), (q * w, update(batch + [step.g_star]))]

        comps_d, comps_dp = (_merged([(w, m) for w, m in c if w != 0]) for c in (comps_d, comps_dp))  # (1-q)^k, q=1

        def density(comps, x):
            return mpmath.fsum(w * mpmath.npdf(x, m, s) for w, m in comps)

        def renyi(a, b):
            lo = min(m for _, m in a + b) - 12 * alpha * s
            hi = max(m for _, m in a + b) + 12 * alpha * s
            total = mpmath.quad(lambda x: density(a, x) ** alpha * density(b, x) ** (1 - alpha),
                                mpmath.linspace(lo, hi, 24))
            return mpmath.log(total) / (alpha - 1)

        return float(max(renyi(comps_dp, comps_d), renyi(comps_d, comps_dp)))


@pytest.mark.parametrize(("rule", "q", "s", "g_star", "n_a", "g_a", "n_b", "g_b", "alpha"), [
    ("sum", 0.3, 0.7, -0.8, 2, 0.3, 1, -0.5, 3), ("mean", 0.5, 0.4, 1.0, 2, -0.2, 1, 0.9, 4),
    ("mean", 0.2, 1.0, 0.0, 1, 1.0, 2, 0.1, 2), ("sum", 1.0, 0.5, 0.5, 1, 0.5, 1, -1.0, 5)])
def test_agrees_with_a_direct_quadrature_over_every_subset(rule, q, s, g_star, n_a, g_a, n_b, g_b, alpha):
    step = TwoClusterStep(q, s, g_star, n_a, g_a, n_b, g_b, rule)
    assert dpsgd_step_renyi(step, alpha).value == pytest.approx(_direct(step, alpha), rel=1e-9, abs=1e-14)


@settings(max_examples=20, deadline=None)
@given(q=st.floats(0.01, 0.9), s=st.floats(0.3, 3), g=st.floats(0.05, 1), alpha=st.integers(2, 16),
       n=st.integers(0, 6))
def test_tight_on_degenerate_data(q, s, g, alpha, n):
    """The other points have gradient 0: the step is the sampled Gaussian with noise multiplier s/|g*|."""
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, -g, n, 0.0, 0, 0.0, "sum"), alpha)
    assert truth.value == pytest.approx(sgm_renyi_truth(q, s / g, alpha).value, rel=1e-8)


def _sgm_bound(alpha: int, q: float, ratio: float) -> float:
    with mpmath.workdps(30):
        return float(SampledGaussianRDP._imp_(alpha, 1, q, ratio))


@settings(max_examples=30, deadline=None)
@given(q=st.floats(0.01, 1), s=st.floats(0.2, 3), g_star=st.floats(-1, 1), n_a=st.integers(0, 12),
       g_a=st.floats(-1, 1), n_b=st.integers(0, 4), g_b=st.floats(-1, 1), alpha=st.integers(2, 12),
       rule=st.sampled_from(["sum", "mean"]))
def test_theorem_3_2_and_the_baseline_bound_every_generated_dataset(q, s, g_star, n_a, g_a, n_b, g_b, alpha, rule):
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, g_star, n_a, g_a, n_b, g_b, rule), alpha)
    assert truth.lower <= _sgm_bound(alpha, q, 1 / s) * (1 + 1e-9) + 1e-12
    if rule == "sum":
        assert truth.lower <= _sgm_bound(alpha, q, abs(g_star) / s) * (1 + 1e-9) + 1e-12


def test_identical_laws_when_x_star_changes_nothing():
    """g* = 0 under the sum rule: the laws are equal (up to the rounding of (1 - q) w + q w)."""
    truth = dpsgd_step_renyi(TwoClusterStep(0.3, 1.0, 0.0, 5, 0.4, 0, 0.0, "sum"), 3)
    assert truth.lower <= 0 <= truth.upper and truth.value < 1e-25


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"q": 0.0}, "q must"), ({"q": 1.5}, "q must"), ({"s": 0.0}, "s must"), ({"g_star": 1.5}, "g_star"),
    ({"g_a": math.nan}, "g_a"), ({"n_a": -1}, "n_a"), ({"n_b": 2.5}, "n_b"), ({"rule": "median"}, "rule"),
    ({"n_a": 300, "n_b": 300}, "batch-count pairs")])
def test_bad_input_is_named(kwargs, word):
    args = {"q": 0.1, "s": 1.0, "g_star": 0.5, "n_a": 2, "g_a": 0.1, "n_b": 1, "g_b": 0.2, "rule": "sum"} | kwargs
    with pytest.raises(ParameterError, match=word):
        TwoClusterStep(**args)


@settings(max_examples=15, deadline=None)
@given(alpha=st.integers(2, 4), s=st.floats(0.2, 2), target=st.floats(-1, 1),
       comps=st.lists(st.tuples(st.floats(0.05, 1), st.floats(-1, 1)), min_size=1, max_size=5))
def test_mixture_to_gaussians_quadrature_matches_the_integer_order_closed_form(alpha, s, target, comps):
    """The shared-node quadrature (Theorem 3.6's expectation) against the compositions closed form in Arb."""
    total = sum(w for w, _ in comps)
    weights, means = [w / total for w, _ in comps], [m for _, m in comps]
    (quad,) = renyi_mixture_to_gaussians(weights, means, s, [target], alpha)
    closed = enclose_renyi_mixture_gaussian(weights, means, s, target, alpha, 128)
    assert quad.lower <= float(closed.upper) * (1 + 1e-12) + 1e-15
    assert float(closed.lower) * (1 - 1e-12) - 1e-15 <= quad.upper
    assert quad.value == pytest.approx(float(closed.lower), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize(("rule", "q", "g_star", "s", "alpha", "reference"), [
    ("mean", 0.1, -1.0, 0.3, 8, 40.79), ("mean", 0.3, 0.2, 0.3, 2, 0.0635), ("sum", 0.3, 0.2, 3.0, 2, 0.147)])
def test_theorem_3_6_rhs_of_research_4_3(rule, q, g_star, s, alpha, reference):
    """'Thm 3.6 exact' of research 4.3(a) (40 points at 0.2, 10 at -0.6), to the digits printed there."""
    rhs = theorem36_rhs(TwoClusterStep(q, s, g_star, 40, 0.2, 10, -0.6, rule), alpha)
    assert rhs.value == pytest.approx(reference, rel=5e-3)
    assert rhs.value >= dpsgd_step_renyi(TwoClusterStep(q, s, g_star, 40, 0.2, 10, -0.6, rule), alpha).upper


@settings(max_examples=15, deadline=None)
@given(s=st.floats(0.3, 3), g_star=st.floats(-1, 1), n_a=st.integers(0, 3), g_a=st.floats(-1, 1),
       n_b=st.integers(0, 2), g_b=st.floats(-1, 1), alpha=st.integers(2, 9), rule=st.sampled_from(["sum", "mean"]))
def test_full_batch_steps_are_the_gaussian_pair_of_a_direct_quadrature(s, g_star, n_a, g_a, n_b, g_b, alpha, rule):
    """q = 1 takes the two-Gaussian closed form (no quadrature over the weightless components): it agrees with the
    direct 20-digit quadrature over every subset, and its Arb enclosure contains it."""
    step = TwoClusterStep(1.0, s, g_star, n_a, g_a, n_b, g_b, rule)
    truth = dpsgd_step_renyi(step, alpha)
    assert truth.value == pytest.approx(_direct(step, alpha), rel=1e-9, abs=1e-14)
    if truth.value > 0:
        enc = truth.enclose(128)
        assert float(enc.lower) <= truth.value * (1 + 1e-15) and truth.value * (1 - 1e-15) <= float(enc.upper)


@settings(max_examples=40, deadline=None)
@given(q=st.one_of(st.floats(1e-12, 0.999), st.sampled_from([1e-300, 0.5, 1 - 1e-16])),
       n_a=st.integers(0, 12), n_b=st.integers(0, 400), rule=st.sampled_from(["sum", "mean"]))
def test_binomial_weights_below_q_1_are_positive_so_an_underflow_is_lost(q, n_a, n_b, rule):
    """The shortcut of PositiveExactWeights (a float weight of 0 is a lost component, no Arb weights computed) answers
    as the Arb weights do: at 0 < q < 1 every binomial batch weight is positive, however far it underflows."""
    from verify.truth.mixture_quad import PositiveExactWeights, _underflowed

    step = TwoClusterStep(q=q, s=1.0, g_star=0.5, n_a=n_a, g_a=0.2, n_b=n_b, g_b=-0.3, rule=rule)
    w_d, _, w_dp, _ = step.components()
    via_arb = _underflowed((w_d, w_dp), step.exact_weights, lambda pair: pair)
    assert _underflowed((w_d, w_dp), PositiveExactWeights(step.exact_weights), lambda pair: pair) == via_arb


@settings(max_examples=25, deadline=None)
@given(q=st.floats(1e-6, 0.05), n_a=st.integers(0, 3), n_b=st.integers(30, 120), alpha=st.sampled_from([2.0, 3.0]),
       g_star=st.one_of(st.just(0.0), st.floats(1e-6, 1), st.floats(-1, -1e-6)),  # 0: D' atoms coincide with D's,
       rule=st.sampled_from(["sum", "mean"]))  # merged; at 1e-308 they stay apart, beyond the composition cap (Arb)
@example(q=0.00812509620374181, n_a=0, n_b=30, alpha=3.0, g_star=0.0, rule="sum")  # window moved by the leaving-out
def test_bounded_batch_atoms_keep_the_expected_divergence_in_its_interval(q, n_a, n_b, alpha, g_star, rule):
    """Theorem 3.6's expected divergence with the negligible batch atoms bounded instead of integrated: its interval
    holds the sum over every atom (each atom's quadrature, tested against the closed form above) and is at most twice
    as wide as that sum's (the node set follows the targets); at integer alpha its Arb enclosure meets that sum's
    interval."""
    from verify.truth.dpsgd_step import _expected_divergence

    step = TwoClusterStep(q=q, s=1.0, g_star=g_star, n_a=n_a, g_a=0.7, n_b=n_b, g_b=-0.4, rule=rule)
    w_d, m_d, w_dp, m_dp = step.components()
    got = _expected_divergence(w_dp, m_dp, lambda: step.exact_weights()[1], w_d, m_d,
                               lambda: step.exact_weights()[0], 1.0, alpha)
    keep = w_d > 0
    every = renyi_mixture_to_gaussians(w_dp, m_dp, 1.0, m_d[keep], alpha, lambda: step.exact_weights()[1])
    total, lo, hi = (math.fsum(w * getattr(t, end) for w, t in zip(w_d[keep], every, strict=True))
                     for end in ("value", "lower", "upper"))
    assert got.lower <= total * (1 + 1e-14) and total <= got.upper
    assert got.upper - got.lower <= 2 * (hi - lo) + 1e-300  # fewer targets move the quadrature's window a little
    if alpha.is_integer() and "bounded" in got.detail:
        enc = got.enclose(64)
        assert float(enc.lower) <= hi * (1 + 1e-12) and lo * (1 - 1e-12) <= float(enc.upper)


def test_far_batch_tails_are_bounded_not_integrated():
    step = TwoClusterStep(q=1e-3, s=1.0, g_star=1.0, n_a=2, g_a=0.5, n_b=300, g_b=-0.5, rule="sum")
    assert "atoms of negligible weight bounded" in theorem36_rhs(step, 3.0).detail


@settings(max_examples=8, deadline=None)
@given(decades=st.floats(309, 322), n_b=st.integers(200, 260), g_b=st.floats(-1, -0.3), j=st.integers(0, 12))
def test_subnormal_binomial_weights_widen_the_interval_to_hold_the_exact_value(decades, n_b, g_b, j):
    """Binomial batch weights far in the tail round to subnormal floats with a few bits, and at a large divergence the
    far components dominate: the float quadrature's interval must hold R_2 of the exact weights (mpmath, 40 digits,
    the double sum int P^2 / Q = sum_ij w_i w_j e^(nu_i nu_j / s^2)); before, it missed by 10^4 of its widths."""
    q = 10 ** (-decades / n_b)  # the full batch's weight q^n_b is subnormal
    step = TwoClusterStep(q=q, s=1.0, g_star=0.0, n_a=0, g_a=0.0, n_b=n_b, g_b=g_b, rule="sum")
    w_d, m_d, w_dp, m_dp = step.components()
    target = float(m_d[j])
    (quad,) = renyi_mixture_to_gaussians(w_dp, m_dp, 1.0, [target], 2.0, lambda: step.exact_weights()[1])
    with mpmath.workdps(40):
        qq = mpmath.mpf(q)
        w = [mpmath.binomial(n_b, k) * qq**k * (1 - qq) ** (n_b - k) for k in range(n_b + 1)]
        nu = [mpmath.mpf(float(m)) - target for m in m_d]
        exact = float(mpmath.log(mpmath.fsum(w[i] * w[k] * mpmath.exp(nu[i] * nu[k]) * (1 if i == k else 2)
                                             for i in range(n_b + 1) for k in range(i, n_b + 1))))  # symmetric
    assert quad.lower <= exact <= quad.upper, (quad, exact)
