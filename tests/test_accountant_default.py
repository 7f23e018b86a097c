"""The accountant's default (issue 50): every query answered at the default accuracy (the tightest certified bracket
within the time budget, its width and what stopped it stated), an explicit width that is not met refused with that
bracket attached (AccountantRefusal.best; the CLI's JSON prints it), identical phases merged, full-batch schedules
(q = 1) answered by the Gaussian closed form; and random schedules of the documented domain at the default, against
independent references: dp_accounting's optimistic/pessimistic PLD pair (the tight value lies in both brackets, so
they must meet) and, at q = 1, the exact mu-GDP closed form in mpmath at 50 digits."""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from verify import accountant
from verify.accountant import AccountantRefusal, Phase
from verify.cli import main

PROVEN = (1.82742, 1.82905)  # the tight eps(1e-5) of (0.01, 1.0, 1000) lies in here (a 1e-3 relative bracket)


def _mu(phases) -> mpmath.mpf:
    return mpmath.sqrt(mpmath.fsum(mpmath.mpf(t) / mpmath.mpf(s) ** 2 for _, s, t in phases))


def _gdp_delta(eps, mu) -> mpmath.mpf:
    """delta(eps) of N(0, 1) vs N(mu, 1) (Balle & Wang 2018), in the caller's mpmath precision"""
    eps = mpmath.mpf(eps)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _gdp_epsilon(delta, mu) -> mpmath.mpf:
    """the smallest eps >= 0 with delta(eps) <= delta, by bisection (delta(eps) decreases)"""
    if _gdp_delta(0, mu) <= delta:
        return mpmath.mpf(0)
    lo, hi = mpmath.mpf(0), mu * mu / 2 + 10 * mu + 50
    for _ in range(220):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _gdp_delta(mid, mu) > delta else (lo, mid)
    return hi


def test_the_default_answers_with_the_tightest_bracket_the_time_budget_allows():
    """A budget too short for the default accuracy: the first grid's bracket is the answer (no refusal), its width
    and the budget named; it still contains the tight value."""
    r = accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], time_budget=1e-3)
    assert r.lower <= PROVEN[0] and PROVEN[1] <= r.upper
    assert r.limit == "the time budget" and r.width > r.target
    assert f"width {r.width:.3g}, the tightest within the time budget" in str(r)


def test_the_default_meets_the_default_accuracy():
    """the wider of 1e-3 relative and 5e-6 T in eps (T = 1000: 0.005)"""
    r = accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], time_budget=120)
    assert r.lower <= PROVEN[0] and PROVEN[1] <= r.upper and r.limit == ""
    assert r.width <= max(1e-3 * r.estimate, 5e-6 * 1000) and r.tolerance is None
    d = accountant.delta(1.0, [(0.01, 1.0, 1000)], time_budget=120)
    assert d.limit == "" and d.width <= d.target and d.lower <= d.upper


def test_an_explicit_width_not_met_is_refused_with_the_tightest_bracket(capsys):
    with pytest.raises(AccountantRefusal, match="time budget") as refused:
        accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], tol=1e-7, time_budget=1e-3)
    best = refused.value.best
    assert best is not None and best.lower <= PROVEN[0] and PROVEN[1] <= best.upper
    assert best.limit == "the time budget" and best.tolerance == 1e-7
    argv = ["account", "--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-5", "--tol", "1e-7",
            "--time-budget", "0.001", "--json"]
    assert main(argv) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == "epsilon" and out["given"] == {"delta": 1e-5} and "time budget" in out["refused"]
    eps = out["best"]["epsilon"]
    assert eps["lower"] <= PROVEN[0] and PROVEN[1] <= eps["upper"] and out["best"]["limit"] == "the time budget"


def test_the_json_names_the_input_and_the_answer_apart(capsys):
    assert main(["account", "--q", "1", "--sigma", "2", "--steps", "10", "--eps", "1.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == "delta" and out["given"] == {"epsilon": 1.5} and "epsilon" not in out
    with mpmath.workdps(50):
        exact = _gdp_delta(1.5, _mu([(1, 2.0, 10)]))
    assert out["delta"]["lower"] <= exact <= out["delta"]["upper"] and out["tolerance"]["default"] is True


@settings(max_examples=examples(20, 200), deadline=None, database=None)
@given(pool=st.lists(st.tuples(st.sampled_from([1e-3, 0.01, 0.5]), st.sampled_from([0.8, 1.0, 3.0]),
                               st.integers(1, 50)), min_size=1, max_size=30))
def test_identical_phases_merge_into_one_with_their_steps_added(pool):
    """merged() against an independent count: one phase per distinct (q, sigma), in order of first appearance"""
    phases = tuple(Phase(*p) for p in pool)
    counted = Counter()
    for q, s, t in pool:
        counted[(q, s)] += t
    out = accountant.merged(phases)
    assert {(p.q, p.sigma): p.steps for p in out} == dict(counted)
    assert [(p.q, p.sigma) for p in out] == list(dict.fromkeys((q, s) for q, s, _ in pool))


def test_two_hundred_copies_of_one_step_are_answered_as_one_phase():
    """issue 50: 200 copies of one step ran into a cap after 80 s; merged, it is the 200-step phase's bracket, and
    the result still reports the schedule as given"""
    copies = accountant.epsilon(1e-5, [(0.01, 1.0, 1)] * 200, tol=1e-2)
    one = accountant.epsilon(1e-5, [(0.01, 1.0, 200)], tol=1e-2)
    assert (copies.lower, copies.upper) == (one.lower, one.upper) and len(copies.phases) == 200


@settings(max_examples=examples(25, 250), deadline=None, database=None)
@given(phases=st.lists(st.tuples(st.just(1.0), st.floats(0.3, 20), st.integers(1, 10**6)), min_size=1, max_size=4),
       delta=st.floats(1e-12, 1e-2), eps=st.floats(0, 30))
def test_full_batch_schedules_are_the_exact_gaussian_closed_form(phases, delta, eps):
    """q = 1 throughout: mu-GDP with mu^2 = sum T_i / sigma_i^2; the bracket contains the closed form computed in
    mpmath at 50 digits and is ~1e-12 relative wide (no grid)"""
    with mpmath.workdps(50):
        mu = _mu(phases)
        exact_eps, exact_delta = _gdp_epsilon(delta, mu), _gdp_delta(eps, mu)
    r = accountant.epsilon(delta, phases)
    assert r.method == "gaussian" and r.grid_width == 0 and r.limit == ""
    assert r.lower <= exact_eps <= r.upper and r.width <= 1e-10 * max(r.upper, 1e-300)
    d = accountant.delta(eps, phases)
    assert d.method == "gaussian" and d.lower <= exact_delta <= d.upper
    assert d.width <= 1e-10 * max(d.upper, 1e-300) + 1e-300


# ---- random schedules of the documented domain at the default ----------------------------------------------------

def domain_schedule(rng: np.random.Generator, max_steps: float) -> tuple[list[tuple[float, float, int]], float]:
    """q 1e-4..1 (a tenth of them q = 1), sigma 0.5..20, T 1..max_steps in all over 1-3 phases, delta 1e-10..1e-2"""
    def phase(most: float) -> tuple[float, float, int]:
        q = 1.0 if rng.random() < 0.1 else float(10 ** rng.uniform(-4, 0))
        sigma = float(10 ** rng.uniform(math.log10(0.5), math.log10(20)))
        return q, sigma, max(1, int(10 ** rng.uniform(0, math.log10(most))))

    count = int(rng.integers(1, 4))
    return [phase(max_steps / count) for _ in range(count)], float(10 ** rng.uniform(-10, -2))


def _pair(phases, delta: float, eps: float | None):
    """dp_accounting's optimistic and pessimistic PLDs at their defaults: (eps(delta) pair, delta(eps) pair)"""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    out = []
    for pessimistic in (False, True):
        total = None
        for q, s, t in phases:
            one = pld_lib.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=pessimistic)
            one = one.self_compose(t)
            total = one if total is None else total.compose(one)
        out.append((total.get_epsilon_for_delta(delta), None if eps is None else total.get_delta_for_epsilon(eps)))
    return out


def _check_domain(seed: int, max_steps: float) -> None:
    phases, delta = domain_schedule(np.random.default_rng(7000 + seed), max_steps)
    ours = accountant.epsilon(delta, phases, time_budget=60)  # never refused at the default
    eps = max(round(ours.estimate, 3), 0.05)
    ours_delta = accountant.delta(eps, phases, time_budget=60)
    assert 0 <= ours.lower <= ours.upper and 0 <= ours_delta.lower <= ours_delta.upper
    if all(q == 1 for q, _, _ in phases):  # the exact value, independently
        with mpmath.workdps(50):
            mu = _mu(phases)
            assert ours.lower <= _gdp_epsilon(delta, mu) <= ours.upper
            assert ours_delta.lower <= _gdp_delta(eps, mu) <= ours_delta.upper
        return
    pytest.importorskip("dp_accounting")
    (opt_eps, opt_delta), (pes_eps, pes_delta) = _pair(phases, delta, eps)
    slack = 1e-9
    # dp_accounting's pessimistic (connect-the-dots) PLD is an upper bound; its "optimistic" one is not a proven lower
    # bound: at q 0.187, sigma 0.584, T 8000, delta 3.28e-7 it gives 1040.33 while the truth lies in (1039.70,
    # 1039.85) by a numerical Laplace inversion of E[(1 - e^(eps - S))_+] along the saddle point's vertical line
    # (session 5's note), inside verify's bracket [1039.70, 1039.85]; at T 4000 (eps 575.7) the two agree. So the
    # optimistic side is held only at eps < 100 (where no such gap was seen), the other side always.
    assert ours.lower <= max(opt_eps, pes_eps) + slack
    if ours.estimate < 100:
        assert min(opt_eps, pes_eps) <= ours.upper + slack
    low, high = min(opt_delta, pes_delta), max(opt_delta, pes_delta)
    assert ours_delta.lower <= high + 1e-15 and low <= ours_delta.upper + 1e-15


@pytest.mark.parametrize("seed", range(10))
def test_small_random_schedules_at_the_default_meet_dp_accountings_pair(seed):
    """the CI variant: T up to 2000"""
    _check_domain(seed, 2e3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(int(os.environ.get("VERIFY_ACCOUNTANT_DEFAULT_SCHEDULES", "100"))))
def test_random_schedules_at_the_default_meet_dp_accountings_pair(seed):
    """issue 50's target: 100 schedules of the documented domain (T up to 1e6), both forms: 0 refusals, every
    bracket meeting dp_accounting's pair (exact at q = 1)"""
    _check_domain(1000 + seed, 1e6)


def test_a_progress_bar_shows_on_a_terminal_only(monkeypatch, capsys):
    """the CLI's bar goes to stderr when it is a terminal, and nowhere otherwise (the answer on stdout unchanged)"""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    argv = ["account", "--q", "1", "--sigma", "2", "--steps", "10", "--delta", "1e-5"]
    assert main(argv) == 0
    plain = capsys.readouterr()
    assert plain.err == "" and plain.out.startswith("eps(delta=1e-05)")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    assert "account" in terminal.getvalue() and capsys.readouterr().out == plain.out
