"""The certified accountant (verify.accountant, `verify account`): its bracket against the exact composition of
Gaussian mechanisms (an independent mpmath closed form), against dp_accounting's PLD accountant on generated
schedules, the comparison statuses, the JSON interface and bad input."""

from __future__ import annotations

import json
import math
import re

import mpmath
import pytest
from gaussian_reference import gaussian_delta, gaussian_epsilon
from hypothesis import given, settings
from hypothesis import strategies as st

from verify import accountant
from verify.accountant import Phase
from verify.accountant_calibrate import calibrate
from verify.cli import main
from verify.errors import ParameterError

SETTINGS = settings(max_examples=12, deadline=None, database=None)


_gaussian_delta, _gaussian_epsilon = gaussian_delta, gaussian_epsilon


@SETTINGS
@given(sigmas=st.lists(st.floats(0.8, 20), min_size=1, max_size=3),
       steps=st.lists(st.integers(1, 100), min_size=3, max_size=3), delta=st.floats(1e-10, 1e-2))
def test_full_batch_schedules_bracket_the_exact_gaussian_composition(sigmas, steps, delta):
    """q = 1: T_i Gaussian steps of noise sigma_i compose to mu-GDP with mu^2 = sum T_i / sigma_i^2, whose eps(delta)
    and delta(eps) are closed forms: the proven bracket contains them and meets the tolerance (relative for eps;
    absolute for delta, whose bracket has an additive floating-point floor ~1e-12)."""
    phases = [Phase(1.0, s, t) for s, t in zip(sigmas, steps, strict=False)]
    with mpmath.workdps(40):  # mu exactly (to 40 digits): the closed-form bracket is ~1e-16 relative wide
        mu = mpmath.sqrt(mpmath.fsum(mpmath.mpf(p.steps) / mpmath.mpf(p.sigma) ** 2 for p in phases))
    exact = float(_gaussian_epsilon(delta, mu))
    r = accountant.epsilon(delta, phases, tol=1e-2)
    assert r.lower <= exact <= r.upper
    assert r.upper - r.lower <= 1e-2 * r.upper
    eps = max(exact, 0.1)
    exact_delta = float(_gaussian_delta(eps, mu))
    tol = max(1e-2 * exact_delta, 1e-9)
    d = accountant.delta(eps, phases, tol=tol, relative=False)
    assert d.lower <= exact_delta <= d.upper
    assert d.upper - d.lower <= tol


def test_a_relative_delta_width_below_the_floor_is_refused_at_once(monkeypatch):
    """delta(eps) ~ 1e-12 at an explicit relative 1e-3: below the bracket's additive floor, refused (exit 3), not
    refined for minutes: the refusal comes on the first grid's bracket, before any finer grid is built. (q = 0.999:
    at q = 1 the closed form answers without a grid.)"""
    import verify.truth.pld as pld

    grids = []
    build = pld.schedule_orders

    def counted(raw, orders, width, *args, **kwargs):
        grids.append(width)
        return build(raw, orders, width, *args, **kwargs)

    monkeypatch.setattr(accountant, "schedule_orders", counted)
    with pytest.raises(accountant.AccountantRefusal, match="floor") as refused:
        accountant.delta(40.0, [(0.999, 1.0, 10)], tol=1e-3)
    assert len(grids) == 1 and refused.value.best is not None
    assert refused.value.best.limit == "the floating-point floor"


@SETTINGS
@given(phases=st.lists(st.tuples(st.floats(1e-3, 0.5), st.floats(0.6, 5), st.integers(1, 150)), min_size=1,
                       max_size=2), delta=st.floats(1e-8, 1e-3))
def test_dp_accountings_pld_answer_lies_in_the_bracket_within_its_own_discretisation(phases, delta):
    """dp_accounting's PLD accountant (default discretisation 1e-4 per step, pessimistic) on generated schedules:
    its eps lies inside the proven bracket, or above it by at most its own discretisation error (T x 1e-4)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import dp_event, pld

    r = accountant.epsilon(delta, phases, tol=1e-2)
    acc = pld.PLDAccountant()
    for q, s, t in phases:
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), t)
    theirs = acc.get_epsilon(delta)
    steps = sum(t for _, _, t in phases)
    assert r.lower - 1e-9 <= theirs <= r.upper + steps * 1e-4 + 1e-9


@settings(max_examples=6, deadline=None, database=None)
@given(q=st.floats(1e-3, 0.3), sigma=st.floats(0.7, 3), steps=st.integers(1, 200), delta=st.floats(1e-8, 1e-3))
def test_each_order_is_at_most_the_add_remove_answer(q, sigma, steps, delta):
    """add/remove reports the larger of the two orders: each one-order bracket starts no higher than its upper end."""
    both = accountant.epsilon(delta, [(q, sigma, steps)], tol=1e-2)
    for order in ("add", "remove"):
        one = accountant.epsilon(delta, [(q, sigma, steps)], tol=1e-2, neighbouring=order)
        assert one.lower <= both.upper


def test_the_gaussian_dp_clt_under_reports_where_the_literature_says_it_is_optimistic():
    """The issue's schedule (0.01, 1.0, 1000, 1e-5): the CLT's 1.6177 (opacus' GaussianAccountant) lies below the
    proven lower end, the RDP conversion above the upper end, dp_accounting's PLD inside."""
    from verify.accountant_compare import CONSERVATIVE, UNDER, WITHIN, compare

    r = accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], tol=1e-2)
    assert 1.8 < r.lower <= r.upper < 1.85
    found = {c.accountant: c for c in compare(r)}
    clt = found["Gaussian-DP CLT (formula)"]
    assert clt.status == UNDER and clt.value == pytest.approx(1.6177, abs=1e-3)
    if found["dp_accounting RDP"].value is not None:
        assert found["dp_accounting RDP"].status == CONSERVATIVE
        assert found["dp_accounting PLD"].status == WITHIN


def test_cli_json_holds_the_bracket_and_the_schedule(capsys):
    assert main(["account", "--phase", "0.02,1.5,100", "--phase", "1,8,3", "--delta", "1e-6", "--tol", "0.01",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    eps = out["epsilon"]
    assert eps["lower"] <= eps["estimate"] <= eps["upper"] and out["given"] == {"delta": 1e-6}
    assert out["query"] == "epsilon" and "delta" not in out and eps["width"] == eps["upper"] - eps["lower"]
    assert [p["steps"] for p in out["phases"]] == [100, 3]


@pytest.mark.parametrize("argv", [
    ["account", "--q", "2", "--sigma", "1", "--steps", "10", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "0", "--steps", "10", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "0", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "2.5", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "1e8", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "10", "--delta", "1.5"],
    ["account", "--q", "0.1", "--sigma", "1", "--delta", "1e-5"],
    ["account", "--phase", "0.1,1", "--delta", "1e-5"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "10", "--delta", "1e-5", "--tol", "-1"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "10", "--eps", "nan"],
    ["account", "--q", "0.1", "--sigma", "1", "--steps", "10"],
])
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 or err.startswith("usage")


def test_phase_validates_like_the_cli():
    with pytest.raises(ParameterError):
        Phase(0.1, float("inf"), 10)
    with pytest.raises(ParameterError):
        accountant.epsilon(1e-5, [])


@settings(max_examples=8, deadline=None, database=None)
@given(steps=st.integers(1, 50), target=st.floats(0.3, 8), delta=st.floats(1e-9, 1e-3))
def test_calibrated_sigma_brackets_the_exact_gaussian_threshold(steps, target, delta):
    """q = 1: the smallest sigma with eps(delta) <= target is sqrt(T)/mu*, mu* the mu-GDP parameter whose eps(delta)
    is the target (mpmath): the calibration's excluded value lies below it and its certified value at or above."""
    c = calibrate("sigma", target, delta, q=1.0, steps=steps)
    with mpmath.workdps(40):  # eps(delta) <= target iff delta(target) <= delta, and delta(target) increases with mu
        lo, hi = mpmath.mpf("1e-6"), mpmath.mpf(100)
        for _ in range(150):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gaussian_delta(target, mid) <= delta else (lo, mid)
        threshold = float(math.sqrt(steps) / lo)
    assert c.certificate.upper <= target and c.value >= threshold * (1 - 1e-9)
    assert c.excluded is not None and c.excluded < threshold * (1 + 1e-9)
    assert c.value / c.excluded <= 1.05


def test_calibrated_steps_and_rate_are_certified_and_the_excluded_values_provably_fail():
    steps = calibrate("steps", 2.0, 1e-5, q=0.1, sigma=1.5)
    assert steps.certificate.upper <= 2.0 and steps.excluded is not None and steps.value < steps.excluded
    assert accountant.epsilon(1e-5, [(0.1, 1.5, steps.excluded)], tol=1e-3).lower > 2.0
    rate = calibrate("q", 2.0, 1e-5, sigma=1.5, steps=40)
    assert rate.certificate.upper <= 2.0 and rate.value < rate.excluded <= rate.value * 1.01
    assert accountant.epsilon(1e-5, [(rate.excluded, 1.5, 40)], tol=1e-3).lower > 2.0


def test_cli_calibration_json(capsys):
    assert main(["account", "--calibrate", "sigma", "--target-eps", "1", "--delta", "1e-6", "--q", "1", "--steps",
                 "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibrate"] == "sigma" and out["certificate"]["epsilon"]["upper"] <= 1.0
    assert out["excluded"] < out["value"]


def test_a_vacuous_upper_end_is_refused_not_answered():
    """delta far below the bracket's additive floor: the upper end would be +inf; a vacuous answer is refused (exit
    3) rather than passed off as meeting the tolerance."""
    from verify.errors import ResourceLimitError

    with pytest.raises(ResourceLimitError, match="vacuous"):
        accountant.epsilon(1e-300, [(0.01, 1.0, 10)], tol=1e-2)
    assert main(["account", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-300"]) == 3


def test_numpy_numbers_are_accepted_and_non_numbers_refused():
    """A training script passes NumPy scalars: they are numbers; bools, strings and NaN are not."""
    np = pytest.importorskip("numpy")
    r = accountant.epsilon(np.float64(1e-5), [(np.float32(0.5), np.float64(2.0), np.int64(5))], tol=np.float64(1e-2))
    assert r.phases[0] == Phase(0.5, 2.0, 5)
    for bad in [(0.1, 1.0, True), (True, 1.0, 3), (0.1, float("nan"), 3), ("0.1", 1, 3), (0.1, 1, 2.5)]:
        with pytest.raises(ParameterError):
            Phase(*bad)
    with pytest.raises(ParameterError):
        calibrate("sigma", 1.0, 1e-5, q=2.0, steps=10)


@settings(max_examples=10, deadline=None, database=None)
@given(exponent=st.floats(-320, 308), q=st.sampled_from([1e-3, 0.5, 1.0]), steps=st.integers(1, 4),
       ask=st.sampled_from(["delta", "eps"]))
def test_any_noise_scale_is_answered_or_refused_cleanly(exponent, q, steps, ask):
    """sigma from 1e-320 to 1e308 (s^2 underflowed to 0 and 1/s^2 overflowed: exit 4 before): an answer, or a
    refusal (exit 3) with one line; never an internal error."""
    sigma = 10.0**exponent
    if sigma <= 0:
        return
    argv = ["account", "--q", str(q), "--sigma", repr(sigma), "--steps", str(steps)]
    argv += ["--delta", "1e-5"] if ask == "delta" else ["--eps=0.1"]
    assert main(argv) in (0, 3)


def test_a_refusal_at_every_grid_says_why_the_coarse_grids_failed_too(capsys):
    """sigma = 0.05 (1000 steps at q = 0.01) is beyond the engine's double-precision grids at any width: the finer
    ones exceed the cell cap, the coarser ones lose the CDF steps to rounding. Asked for a loose tolerance, the
    refusal said only "eps_tolerance too small ... even at eps width 5.96e-09": it names the last refusal of each
    kind (exit 3, one line)."""
    assert main(["account", "--q", "0.01", "--sigma", "0.05", "--steps", "1000", "--delta", "1e-5", "--tol", "10"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "at any grid it tried" in err[0] and "cells" in err[0]
    assert err[0].count("at eps width") == 2


def test_calibration_keeps_searching_past_an_undecided_midpoint():
    """A midpoint whose bracket straddles the target used to end the search (sigma 2.0 returned where 1.45 provably
    meets eps <= 1): the search goes on toward the certified side until the precision is reached."""
    c = calibrate("sigma", 1.0, 1e-5, q=0.05, steps=100)
    lower_side = c.excluded
    assert c.certificate.upper <= 1.0 and lower_side is not None
    assert c.value / lower_side <= 1.2


def test_an_absolute_width_is_used_as_given_and_a_huge_one_still_answers():
    """--abs-tol W starts at eps width W (T = 1e5 at W = 10 was refused when every run started at 0.1); a width
    too coarse for the grid falls back to a finer one instead of refusing."""
    wide = accountant.epsilon(1e-5, [(0.01, 1.0, 100_000)], tol=10.0, relative=False)
    assert wide.upper - wide.lower <= 10.0 and wide.lower <= 25.57 <= wide.upper  # dp_accounting's PLD: 25.573
    huge = accountant.epsilon(1e-5, [(0.01, 1.0, 10)], tol=1e3, relative=False)
    assert huge.lower <= huge.upper <= huge.lower + 1e3


@pytest.mark.parametrize("kwargs", [{"neighbouring": ["add"]}, {"neighbouring": {"add"}}, {"relative": "no"},
                                    {"relative": None}])
def test_malformed_options_are_bad_input_not_internal_errors(kwargs):
    """A list or set as `neighbouring` raised TypeError (unhashable), a string `relative` was taken as True (found by
    a hostile probe): both are one ParameterError."""
    with pytest.raises(ParameterError):
        accountant.epsilon(1e-5, [(0.01, 1.0, 10)], **kwargs)


def test_a_relative_tolerance_is_relative_to_the_estimate():
    """tol = 1 asks for a width at most the estimate itself: the bracket [0, 0.0133] around a true delta of 1.4e-8
    met it against its upper end before (found by a hostile probe)."""
    r = accountant.delta(0.0372, [(1.0, 569.3, 24)], tol=1.0, neighbouring="add")
    assert r.upper - r.lower <= r.estimate * (1 + 1e-12)
    with mpmath.workdps(40):  # q = 1: mu-GDP exactly, mu to 40 digits (the closed-form bracket is ~1e-16 wide)
        exact = float(_gaussian_delta(0.0372, mpmath.sqrt(24) / mpmath.mpf(569.3)))
    assert r.lower <= exact <= r.upper


def test_the_answer_shows_its_inputs_unrounded():
    """delta = 0.999999999 is not shown as 1, nor q = 0.9999999999 as 1 (6 significant digits where they are exact)"""
    r = accountant.epsilon(0.999999999, [(0.9999999999, 1.0, 10)], tol=0.5)
    assert "delta=0.999999999)" in str(r) and "q=0.9999999999," in str(r)
    assert "delta=1e-05)" in str(accountant.epsilon(1e-5, [(0.01, 1.0, 10)], tol=0.5))


@pytest.mark.parametrize("cap_mib", [20, 40, 80])
def test_a_refusal_by_the_memory_cap_gives_the_best_certified_bracket(cap_mib, monkeypatch):
    """Under a memory cap too small for an explicit 1e-3 relative width, the refinement backs off to the finest grid
    that fits (a long jump that overshoots the cap is not the end) and the refusal names the cap and carries the
    tightest certified bracket it had, which contains the tight eps (proven in [1.82742, 1.82905] at the default
    cap, where it answers). At the default accuracy the same cap is no refusal: that bracket is the answer."""
    from verify.truth import pld

    monkeypatch.setattr(pld, "_CACHE", type(pld._CACHE)())
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(cap_mib * 2**20))
    with pytest.raises(accountant.AccountantRefusal, match="memory cap") as refused:
        accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], tol=1e-3)
    shown = re.search(r"certified so far: \[([^,]+), ([^\]]+)\]", str(refused.value))
    lower, upper = float(shown.group(1)), float(shown.group(2))
    assert lower <= 1.82742 and 1.82905 <= upper and upper - lower < 0.01
    best = refused.value.best
    assert best.lower <= 1.82742 and 1.82905 <= best.upper and best.limit
    monkeypatch.setattr(pld, "_CACHE", type(pld._CACHE)())
    default = accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], tol=None, time_budget=60)
    assert default.lower <= 1.82742 and 1.82905 <= default.upper
    assert default.width <= max(1e-3 * default.estimate, 5e-6 * 1000) or default.limit
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(160 * 2**20))
    answer = accountant.epsilon(1e-5, [(0.01, 1.0, 1000)], tol=1e-3)
    assert answer.lower <= 1.8282 <= answer.upper and answer.upper - answer.lower <= 1e-3 * answer.estimate


@pytest.mark.parametrize("q", [5e-324, 1e-300, 1e-12, 1e-8])
def test_a_schedule_whose_total_variation_is_below_delta_has_eps_0(q):
    """delta(0) is the total variation, at most sum_i T_i q_i: below delta the tight eps is exactly 0, also where the
    per-step grid underflows (q = 1e-300 was refused); just above it the grid answers, its lower end at 0."""
    r = accountant.epsilon(1e-5, [(q, 1.0, 10)])
    assert (r.lower, r.upper) == (0.0, 0.0)
    near = accountant.epsilon(1e-5, [(2e-6, 1.0, 10)], tol=1e-2)  # sum T q = 2e-5 > delta: the PLD bracket
    assert near.lower == 0.0 and near.grid_width > 0
