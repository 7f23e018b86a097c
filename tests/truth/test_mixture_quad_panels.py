"""The mixture quadrature's coarse panels (verify.truth.mixture_quad: one narrowest sd per panel, kept only where the
half-order rule agrees to the float floor) against the Arb closed form at integer orders (an independent reference),
and against the fine panels (a quarter sd) they replace."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify.truth.mixture_quad as mq
from verify.truth.mixture_arb import enclose_renyi_mixture_gaussian


@st.composite
def mixtures_vs_gaussian(draw):
    """P = sum_i w_i N(m_i, s^2) against N(t, s^2) at an integer order (the Arb closed form's case)."""
    k = draw(st.integers(1, 4))
    raw = draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k))
    weights = [w / sum(raw) for w in raw]
    s = draw(st.floats(0.05, 5.0))
    means = draw(st.lists(st.floats(-3.0, 3.0), min_size=k, max_size=k))
    targets = draw(st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=5))
    alpha = draw(st.integers(2, 6))
    return weights, [s * m for m in means], s, [s * t for t in targets], alpha


def _contains(truth, exact) -> bool:
    """The float interval meets the (much narrower) Arb enclosure of the exact value."""
    lo, hi = float(exact.lower), float(exact.upper)
    assert hi - lo <= 1e-20 * max(1.0, abs(hi))
    return truth.lower <= hi and lo <= truth.upper


@settings(max_examples=30, deadline=None)
@given(mixtures_vs_gaussian())
def test_coarse_panels_enclose_the_closed_form(case):
    weights, means, s, targets, alpha = case
    for t in targets:
        exact = enclose_renyi_mixture_gaussian(weights, means, s, t, alpha, 128)
        pair = mq.renyi_mixture_quad(weights, means, [s] * len(means), [1.0], [t], [s], float(alpha))
        assert _contains(pair, exact), (pair, exact)
    for t, truth in zip(targets, mq.renyi_mixture_to_gaussians(weights, means, s, targets, float(alpha)),
                        strict=True):
        assert _contains(truth, enclose_renyi_mixture_gaussian(weights, means, s, t, alpha, 128))


def _panels(truth) -> int:
    return int(re.search(r"\((\d+) panels\)", truth.detail).group(1))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.floats(1.05, 40.0), st.integers(0, 2**32 - 1))
def test_coarse_and_fine_panels_agree(k, alpha, seed):
    """Random two-mixture pairs (sds within a factor 3): where the coarse panels are kept their interval overlaps the
    fine one's and both values agree within the wider width plus the rounding floor."""
    rng = np.random.default_rng(seed)
    w = [rng.dirichlet(np.ones(k)) for _ in range(2)]
    m = [rng.normal(0, 2, k) for _ in range(2)]
    sd = [rng.uniform(0.5, 1.5, k) for _ in range(2)]
    case = (w[0], m[0], sd[0], w[1], m[1], sd[1], alpha)
    default = mq.renyi_mixture_quad_both(*case)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mq, "_COARSE_PANEL", mq._FINE_PANEL)
        fine = mq.renyi_mixture_quad_both(*case)
    for got, want in zip(default, fine, strict=True):
        if math.isinf(want.value):
            assert math.isinf(got.value)
            continue
        assert got.lower <= want.upper and want.lower <= got.upper
        tol = max(got.upper - got.lower, want.upper - want.lower) + 1e-14 * abs(want.value)
        assert abs(got.value - want.value) <= tol


def test_unsettled_coarse_panels_fall_back_to_the_fine_ones():
    """Panels 40 sds wide (64 panels, the least, are 6-10 sds here) cannot resolve the integrand of a small
    divergence: the half-order rule disagrees, and the result is the fine panels' own (the same numbers as with the
    coarse attempt switched off)."""
    case = ([0.5, 0.5], [0.0, 10.0], [0.05, 0.05], [0.5, 0.5], [0.001, 10.0], [0.05, 0.05], 2.5)
    mixture = ([0.5, 0.5], [0.0, 0.001], 0.05, [0.0005, 5.0], 3.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mq, "_COARSE_PANEL", 40.0)
        fallen = mq.renyi_mixture_quad_both(*case) + tuple(mq.renyi_mixture_to_gaussians(*mixture))
        patch.setattr(mq, "_COARSE_PANEL", mq._FINE_PANEL)
        fine = mq.renyi_mixture_quad_both(*case) + tuple(mq.renyi_mixture_to_gaussians(*mixture))
    for got, want in zip(fallen[:3], fine[:3], strict=True):  # the last, R ~ 1.5e4, is settled by its rounding bound
        assert (got.value, got.lower, got.upper, _panels(got)) == (want.value, want.lower, want.upper, _panels(want))


def test_the_coarse_panels_are_kept_where_settled():
    """A smooth pair is decided on the coarse panels (a quarter of the fine count, the speed this buys)."""
    truth = mq.renyi_mixture_quad([0.3, 0.7], [-1.0, 2.0], [0.5, 0.5], [1.0], [0.3], [0.5], 2.5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mq, "_COARSE_PANEL", mq._FINE_PANEL)
        fine = mq.renyi_mixture_quad([0.3, 0.7], [-1.0, 2.0], [0.5, 0.5], [1.0], [0.3], [0.5], 2.5)
    assert _panels(truth) * 4 <= _panels(fine) + 4
    assert truth.lower <= fine.value <= truth.upper


@settings(max_examples=20, deadline=None, database=None)
@given(log_shift=st.floats(-40, -17.5), alpha=st.sampled_from([1.5, 2.0, 5.0]), sd=st.floats(0.5, 4.0),
       to_gaussians=st.booleans())
def test_laws_closer_than_the_floats_resolve_are_not_an_exact_zero(log_shift, alpha, sd, to_gaussians):
    """Two Gaussians a shift t below the floats' resolution apart have R_alpha = alpha t^2 / (2 sd^2) > 0 (the closed
    form is the reference), though log P - log Q is 0 at every node in floats: the float truth was [0, 0], so any
    positive upper bound below the truth HELD without a re-check. Its interval must hold the closed form, the float
    filter must not decide a bound under it (the Arb re-check holds the closed form: it decides or says it cannot)."""
    from verify.checker import decide
    from verify.model import Direction
    from verify.results import Verdict

    t = 10.0**log_shift * sd
    if to_gaussians:
        truth = mq.renyi_mixture_to_gaussians([1.0], [0.0], sd, [t], alpha)[0]
    else:
        truth = mq.renyi_mixture_quad([1.0], [0.0], [sd], [1.0], [t], [sd], alpha)
    exact = alpha * t * t / (2 * sd * sd)
    assert truth.lower <= exact <= truth.upper
    assert decide(Direction.UPPER, exact / 2, truth) is not Verdict.HOLDS
    ball = truth.enclose(64)
    assert ball.lower.lower() <= exact <= ball.upper.upper()  # what the re-check decides from (undecided: honest)


def test_identical_laws_stay_an_exact_zero():
    truth = mq.renyi_mixture_quad([1.0], [0.5], [2.0], [1.0], [0.5], [2.0], 2.0)
    assert (truth.value, truth.lower, truth.upper) == (0.0, 0.0, 0.0)


@settings(max_examples=20, deadline=None)
@given(mixtures_vs_gaussian(), st.integers(1, 40))
def test_a_rule_evaluated_in_blocks_encloses_the_closed_form_and_agrees_with_one_block(case, block):
    """A rule of more than _BLOCK_PANELS panels is summed block by block (a far point's quadrature within ~100 MiB):
    with blocks of a few panels, the truth still meets the Arb closed form and agrees with the one-block sum to the
    interval's width (a tiny divergence is a sum of terms near 1: its rounding bound is the interval)."""
    weights, means, s, targets, alpha = case
    one = [mq.renyi_mixture_quad(weights, means, [s] * len(means), [1.0], [t], [s], float(alpha)) for t in targets]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mq, "_BLOCK_PANELS", block)
        blocked = [mq.renyi_mixture_quad(weights, means, [s] * len(means), [1.0], [t], [s], float(alpha))
                   for t in targets]
    for t, a, b in zip(targets, one, blocked, strict=True):
        assert _contains(b, enclose_renyi_mixture_gaussian(weights, means, s, t, alpha, 128)), (b, t)
        assert abs(b.value - a.value) <= (a.upper - a.lower) + (b.upper - b.lower)
        assert b.upper - b.lower == pytest.approx(a.upper - a.lower, rel=0.5, abs=1e-300)
