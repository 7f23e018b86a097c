"""The certified accountant on random schedules across the documented domain (q 1e-4..1, sigma 0.5..20, T 1..1e6,
delta 1e-10..1e-2; one or two phases), against Google's dp_accounting: its pessimistic (connect-the-dots) PLD eps is
an upper bound on the tight eps, so it can never lie below the proven lower end, and lies within its own worst-case
discretisation error (T x its interval) above the upper end. 10 schedules by default (CI);
VERIFY_ACCOUNTANT_SCHEDULES=50 for the issue's full cross-check. Every refusal must be a clean ResourceLimitError
naming the floor or the cap it hit (xfail, so that every one shows in the summary)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from verify import accountant
from verify.errors import ResourceLimitError

SCHEDULES = int(os.environ.get("VERIFY_ACCOUNTANT_SCHEDULES", "10"))


def _schedule(rng: np.random.Generator) -> tuple[list[tuple[float, float, int]], float]:
    def phase(steps_max: float) -> tuple[float, float, int]:
        return (float(10 ** rng.uniform(-4, 0)), float(10 ** rng.uniform(math.log10(0.5), math.log10(20))),
                max(1, int(10 ** rng.uniform(0, math.log10(steps_max)))))

    phases = [phase(1e6)] if rng.random() < 0.7 else [phase(5e5), phase(5e5)]
    return phases, float(10 ** rng.uniform(-10, -2))


def _dp_accounting_pessimistic(phases: list[tuple[float, float, int]], delta: float) -> tuple[float, float]:
    """dp_accounting's pessimistic eps and its worst-case discretisation error, at an interval that keeps it fast"""
    from dp_accounting.pld import privacy_loss_distribution as pld

    steps = sum(t for _, _, t in phases)
    interval = 1e-4 if steps <= 1e4 else 1e-3 if steps <= 1e5 else 1e-2
    total = None
    for q, s, t in phases:
        one = pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=interval).self_compose(t)
        total = one if total is None else total.compose(one)
    return total.get_epsilon_for_delta(delta), steps * interval


@pytest.mark.parametrize("seed", range(SCHEDULES))
def test_random_schedules_are_bracketed_and_agree_with_dp_accounting(seed):
    pytest.importorskip("dp_accounting")
    phases, delta = _schedule(np.random.default_rng(1000 + seed))
    try:
        ours = accountant.epsilon(delta, phases, tol=1e-2)
    except ResourceLimitError as err:
        assert any(word in str(err) for word in ("floor", "cells", "memory cap", "resource cap")), str(err)
        pytest.xfail(f"refused, as documented: {err}")
    assert 0 <= ours.lower <= ours.estimate <= ours.upper
    assert ours.upper - ours.lower <= 1e-2 * max(ours.upper, 1e-12) * (1 + 1e-9)
    theirs, stated = _dp_accounting_pessimistic(phases, delta)
    assert theirs >= ours.lower - 1e-9 * max(1.0, ours.lower)
    assert theirs <= ours.upper + stated + 1e-9


def _prv_accountant(phases: list[tuple[float, float, int]], delta: float) -> tuple[float, float, float] | None:
    """prv_accountant's (lower, estimate, upper) at eps_error 0.01, or None where it cannot answer (its own
    RuntimeError on a discretisation it rejects, or a grid it cannot allocate)"""
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

    counts = [t for _, _, t in phases]
    try:
        acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=s, sampling_probability=q)
                                  for q, s, _ in phases],
                            max_self_compositions=counts, eps_error=0.01, delta_error=delta / 1000)
        return tuple(acc.compute_epsilon(delta=delta, num_self_compositions=counts))
    except (RuntimeError, MemoryError, ValueError):
        return None


@pytest.mark.parametrize("seed", range(SCHEDULES))
def test_random_schedules_agree_with_prv_accountant(seed):
    """Microsoft's prv_accountant (Gopi, Lee & Wutschitz 2021) states its own error: its [lower, upper] must meet the
    certified bracket (both contain the tight eps). Schedules of at most 2e4 steps and rates up to 0.2: its grid grows
    with T, and at q ~ 0.5 it works 100 s before rejecting its own discretisation."""
    pytest.importorskip("prv_accountant")
    phases, delta = _schedule(np.random.default_rng(1000 + seed))
    if sum(t for _, _, t in phases) > 20_000 or max(q for q, _, _ in phases) > 0.2:
        pytest.skip("compared with prv_accountant on schedules of at most 2e4 steps and rates up to 0.2")
    theirs = _prv_accountant(phases, delta)
    if theirs is None:
        pytest.skip("prv_accountant cannot answer this schedule")
    ours = accountant.epsilon(delta, phases, tol=1e-2)
    lower, _, upper = theirs
    assert lower <= ours.upper and upper >= ours.lower, (theirs, ours)
