"""The bug zoo (issue 51; tests/audit/zoo.py): each buggy implementation REFUTED within the runs (or samples) its case
states, each correct twin CONSISTENT, with the same audit, seed and run count. The truths the numbers are set against
are written here independently (Gaussian-DP closed forms, Laplace's eps = sensitivity / scale)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from scipy import optimize, stats

from audit.zoo import CASES, CLIP, DATASET, LR, NOMINAL, Case, dpsgd, naive_laplace, support_score
from verify.audit import audit
from verify.audit.dpsgd import audit_dpsgd, neighbours
from verify.errors import ParameterError, PluginError


def run(case: Case, seed: int = 0):
    if case.kind == "dpsgd":
        return audit_dpsgd(case.train, case.dataset, case.canary, runs=case.runs, claim=case.claim, delta=case.delta,
                           seed=seed, score=case.score, assume=case.assume, neighbouring=case.neighbouring)
    mechanism = case.mechanism
    if case.score is not None:
        def mechanism(data, rng, batch=1, _m=case.mechanism, _s=case.score):
            return _s(_m(data, rng, batch=batch))
    return audit(mechanism, case.d, case.d_prime, samples=case.runs, delta=case.delta, claim_epsilon=case.claim,
                 seed=seed)


def gdp_delta(eps: float, mu: float) -> float:
    """delta(eps) of mu-GDP (Dong, Roth & Su 2022, Cor. 2.13), written here from the formula."""
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2))


def gdp_epsilon(delta: float, mu: float) -> float:
    return optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, 50 * mu + mu * mu)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{'bug' if c.buggy else 'twin'}" for c in CASES])
def test_zoo(case: Case) -> None:
    result = run(case)
    claim = result.claim_upper if case.kind == "dpsgd" else case.claim
    if case.buggy:
        assert result.verdict == "REFUTED", str(result)
        assert result.epsilon_lower > claim
    else:
        assert result.verdict == "CONSISTENT", str(result)
        assert result.epsilon_lower <= claim


def test_full_batch_claim_is_gaussian_dp() -> None:
    """q = 1: the claimed schedule is sqrt(steps)/sigma-GDP, so the accountant's bracket holds eps(delta) of that mu,
    and the twins' releases have the standard deviation DP-SGD's noise gives: LR sigma CLIP sqrt(steps) / NOMINAL."""
    case = next(c for c in CASES if c.name == "mean_noise" and not c.buggy)
    q, sigma, steps = case.claim
    result = run(case)
    truth = gdp_epsilon(case.delta, math.sqrt(steps) / sigma)
    assert result.claim_lower <= truth + 1e-9 and truth - 1e-9 <= result.claim_upper
    release = case.train(np.asarray(case.dataset), np.random.default_rng(3), runs=4000)
    expected = LR * sigma * CLIP * math.sqrt(steps) / NOMINAL
    low, high = stats.chi2.ppf([0.0005, 0.9995], 3999)
    variance = release[:, 1].var(ddof=1)
    assert 3999 * variance / high <= expected ** 2 <= 3999 * variance / low


def test_buggy_bounds_below_their_truths() -> None:
    """The Gaussian grey-box bounds on the full-batch bugs stay below each bug's true eps (mu from the closed form:
    the canary's shift over the noise's standard deviation, times sqrt(steps))."""
    truths = {"mean_noise": 0.5 * 16, "no_clipping": 0.5 * 50, "absolute_sigma": 0.5 * 10, "replace_one": 1.0}
    for case in CASES:
        if case.buggy and case.name in truths:
            assert run(case).epsilon_lower <= gdp_epsilon(case.delta, truths[case.name])


@settings(max_examples=examples(20, 200), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1.0]))
def test_naive_laplace_outputs_lie_in_their_own_support(seed: int, centre: float) -> None:
    """Mironov's attack is exact: every output the naive sampler draws at f = centre is found possible from centre
    (independent reference: the sampler itself), so the score never says 'only the other dataset'."""
    outputs = naive_laplace(centre, np.random.default_rng(seed), batch=200)
    score = support_score(outputs)
    assert np.all(score <= 0) if centre == 1.0 else np.all(score >= 0)


@settings(max_examples=examples(10, 100), deadline=None)
@given(st.integers(2, 30), st.sampled_from(["add_remove", "replace_one"]))
def test_neighbours(n: int, relation: str) -> None:
    data = np.arange(2.0 * n).reshape(n, 2)
    d, d_prime = neighbours(data, np.array([-1.0, -1.0]), relation)
    assert d_prime is data
    assert len(d) == n + (relation == "add_remove")
    assert np.array_equal(d[-1], [-1.0, -1.0]) and np.array_equal(d[:n - 1], data[:n - 1])


def test_unbatched_train_and_refusals() -> None:
    """A train without `runs` is called once per run and gives the batched form's audit of the same law."""
    def train(data, rng):
        return dpsgd(np.asarray(data), rng, 1, q=1.0, sigma=4.0, steps=4, do_clip=False)[0]

    result = audit_dpsgd(train, DATASET, np.array([0.0, 50.0]), runs=20, claim=(1.0, 4.0, 4), delta=1e-5,
                         assume="gaussian")
    assert result.verdict == "REFUTED" and len(result.in_scores) == 20
    with pytest.raises(ParameterError):
        audit_dpsgd(train, DATASET, DATASET[0], runs=20, claim=(1.0, 4.0), delta=1e-5)
    with pytest.raises(ParameterError):
        audit_dpsgd(train, DATASET, DATASET[0], runs=3, claim=(1.0, 4.0, 4), delta=1e-5)
    with pytest.raises(ParameterError):
        audit_dpsgd(train, DATASET, DATASET[0], runs=20, claim=(1.0, 4.0, 4), delta=1e-5, neighbouring="swap")
    with pytest.raises(PluginError):
        audit_dpsgd(train, DATASET, DATASET[0], runs=20, claim=(1.0, 4.0, 4), delta=1e-5,
                    score=lambda params: 1 / 0)
