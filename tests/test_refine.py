"""Truth.refine: a coarse truth is refined only while the float filter cannot decide, the refined truth is held to the
quantity's contract, and every level of the PLD family's bracket contains the exact one-step eps(delta)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.checker import decide, decisive_truth
from verify.errors import PluginError
from verify.families import family
from verify.model import Direction, Quantity, checked_truth
from verify.results import Method, Truth, Verdict
from verify.truth.subsampled_dp import sgm_dp_epsilon


def _ladder(widths: list[float], centre: float = 1.0, calls: list | None = None) -> Truth:
    """A grid truth of half-width widths[0] around `centre`, refinable to the next widths."""
    if calls is not None:
        calls.append(widths[0])
    rest = widths[1:]
    return Truth(centre, centre - widths[0], centre + widths[0], Method.GRID, f"width {widths[0]}",
                 refine=(lambda: _ladder(rest, centre, calls)) if rest else None)


@given(bound=st.floats(-10, 10), direction=st.sampled_from(list(Direction)))
def test_refined_only_while_undecided(bound, direction):
    calls: list[float] = []
    truth = decisive_truth(direction, bound, _ladder([1.0, 0.1, 0.01], calls=calls))
    # every level before the one returned was undecided; the one returned decides or is the finest
    for width in calls[:-1]:
        assert decide(direction, bound, _ladder([width])) is Verdict.INCONCLUSIVE
    assert truth.upper - truth.lower == pytest.approx(2 * calls[-1])
    assert calls[-1] == 0.01 or decide(direction, bound, truth) is not Verdict.INCONCLUSIVE


def test_a_refined_truth_is_held_to_the_contract():
    bad = Truth(1.0, 0.5, 1.5, Method.GRID, "coarse", refine=lambda: Truth(-2.0, -3.0, -1.0, Method.GRID, "negative"))
    truth = checked_truth("plugin_family", Quantity.RENYI, bad)
    with pytest.raises(PluginError, match="outside the quantity's range"):
        truth.refine()


@settings(max_examples=15, deadline=None)
@given(q=st.sampled_from([0.01, 0.1, 0.5, 1.0]), sigma=st.floats(0.7, 4.0), delta=st.sampled_from([1e-5, 1e-3, 0.1]))
def test_every_pld_level_contains_the_exact_one_step_epsilon(q, sigma, delta):
    exact = float(sgm_dp_epsilon(delta, q, sigma))
    truth = family("sampled_gaussian_composed").truth(Quantity.DP_EPSILON, q=q, sigma=sigma, steps=1, delta=delta)
    while truth is not None:
        assert truth.lower <= exact <= truth.upper
        truth = truth.refine() if truth.refine is not None else None

