"""The checker's verdict logic, on synthetic truths and on deliberately wrong bounds."""

import dataclasses
import json
import math
import sys

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
from verify import CATALOG, ParameterError, Verdict
from verify.checker import aggregate, check_application, check_point, decide
from verify.errors import UndefinedBoundError
from verify.model import Application, Direction
from verify.results import Method, Truth
from verify.symbols import K, S, alpha, eta, lam, n, sigma

EXACT = Truth.exact(1.0, "synthetic")
ESTIMATE = Truth(1.0, 0.9, 1.1, Method.MONTE_CARLO, "synthetic", confidence=0.95, ess=1000)


@pytest.mark.parametrize(("direction", "bound", "truth", "verdict"), [
    (Direction.UPPER, 1.2, EXACT, Verdict.HOLDS),
    (Direction.UPPER, 1.0, EXACT, Verdict.HOLDS),  # equality satisfies an upper bound
    (Direction.UPPER, 0.99, EXACT, Verdict.VIOLATED),
    (Direction.LOWER, 0.99, EXACT, Verdict.HOLDS),
    (Direction.LOWER, 1.01, EXACT, Verdict.VIOLATED),
    (Direction.EXACT, 1.0, EXACT, Verdict.HOLDS),
    (Direction.EXACT, 1.0 + 1e-6, EXACT, Verdict.VIOLATED),
    (Direction.UPPER, 1.0 - 1e-12, EXACT, Verdict.HOLDS),  # a tie within TIE_RTOL (float inputs)
    (Direction.UPPER, 1.2, ESTIMATE, Verdict.HOLDS),
    (Direction.UPPER, 1.05, ESTIMATE, Verdict.INCONCLUSIVE),  # inside the CI: too little evidence
    (Direction.UPPER, 0.85, ESTIMATE, Verdict.VIOLATED),
    (Direction.LOWER, 0.95, ESTIMATE, Verdict.INCONCLUSIVE),
    (Direction.EXACT, 1.0, ESTIMATE, Verdict.INCONCLUSIVE),
])
def test_decide(direction, bound, truth, verdict):
    assert decide(direction, bound, truth) is verdict


def _series(value: float, half_width: float, enclose=lambda prec: None, method: Method = Method.SERIES) -> Truth:
    return Truth(value, value - half_width, value + half_width, method, "synthetic", enclose=enclose)


@settings(max_examples=300, deadline=None)
@given(value=st.floats(1e-300, 1e300), width=st.floats(1e-14, 1e-6), place=st.floats(-1, 1),
       direction=st.sampled_from(list(Direction)))
def test_a_computed_truth_inside_the_tie_band_of_the_bound_is_a_tie(value, width, place, direction):
    """The float filter's tie rule for a computed (series, grid) truth, against exact rational arithmetic: a bound
    inside the truth's interval HOLDS exactly where the interval's end on the failing side is within TIE_RTOL of the
    smallest magnitude among the bound and the ends; never for an estimate's interval or a truth with no enclosure."""
    from fractions import Fraction

    from verify.pipeline.rigorous import TIE_RTOL

    truth = _series(value, value * width)
    bound = value + place * value * width
    if not truth.lower <= bound <= truth.upper:
        return
    lo, hi, b = Fraction(truth.lower), Fraction(truth.upper), Fraction(bound)
    tie = Fraction(TIE_RTOL) * min(abs(b), abs(lo), abs(hi))
    over = {Direction.UPPER: hi - b, Direction.LOWER: b - lo}.get(direction, max(hi - b, b - lo))
    good = (direction is Direction.UPPER and hi <= b) or (direction is Direction.LOWER and b <= lo)
    assert decide(direction, bound, truth) is (Verdict.HOLDS if good or over <= tie else Verdict.INCONCLUSIVE)
    for other in (_series(value, value * width, enclose=None),
                  dataclasses.replace(_series(value, value * width, method=Method.MONTE_CARLO), ess=1e9)):
        assert decide(direction, bound, other) is (Verdict.HOLDS if good else Verdict.INCONCLUSIVE)


@pytest.mark.parametrize(("direction", "bound", "lower", "upper"), [
    (Direction.LOWER, 1.0 + 1e-12, 1.0, math.inf),  # one end infinite
    (Direction.UPPER, 1.7e308 * (1 - 1e-12), -1e308, 1.7e308),  # finite ends, a width beyond the float range
])
def test_no_tie_on_an_interval_of_infinite_width(direction, bound, lower, upper):
    """`near_bound` cannot flag a truth whose interval has no finite width, so a tie there would be a HOLDS that no
    grid check re-decides in Arb (found by a hostile review): such an interval decides nothing."""
    truth = Truth(lower, lower, upper, Method.SERIES, "synthetic", enclose=lambda prec: None)
    assert decide(direction, bound, truth) is Verdict.INCONCLUSIVE


def test_a_tie_on_a_computed_truth_is_still_certified_in_a_grid_check():
    """Theorem 3.2 of seed 004 at n_a = n_b = 0 is the sampled Gaussian itself: its bound and the quadrature truth agree
    to ~1e-13, inside the quadrature's interval. The float filter calls it a tie (a search counts it as checked); a
    grid check still re-decides it from Arb enclosures."""
    t = CATALOG["thudi2024.theorem3_2"]
    app = t.application("dpsgd_sum_step")
    point = {"alpha": 4, "g_a": 0.5, "g_b": -0.25, "g_star": 1.0, "n_a": 0, "n_b": 0, "q": 0.02, "s": 0.7}
    fast = check_point(t, app, point, rigorous=False)
    assert fast.truth.lower <= fast.bound <= fast.truth.upper and fast.truth.method is Method.SERIES
    assert fast.verdict is Verdict.HOLDS and fast.certificate is None
    full = check_point(t, app, point)
    assert full.verdict is Verdict.HOLDS and full.certificate is not None and full.certificate.precision_bits > 0


def test_aggregate_needs_evidence():
    assert aggregate([]) is Verdict.INCONCLUSIVE


def _wrong(theorem_id, bound, expected=Verdict.VIOLATED):
    t = CATALOG[theorem_id]
    app = dataclasses.replace(t.applications[0], expected=expected)
    return dataclasses.replace(t, id=t.id + ".wrong", bound=bound, applications=(app,))


@pytest.mark.parametrize(("theorem_id", "wrong"), [
    # Corollary 1 without the factor 1/lam and with a rate 4x too slow
    ("chourasia2021.corollary1", alpha * S**2 / (2 * sigma**2 * n**2) * (1 - sp.exp(-lam * eta * K / 8))),
    # composition with sigma instead of sigma^2
    ("chourasia2021.composition", alpha * S**2 * eta * K / (4 * n**2 * sigma)),
    # Corollary 2 with the exponent's (2 - eta) dropped
    ("chourasia2021.corollary2.appendix",
     alpha * S**2 / ((2 - eta) * sigma**2 * n**2) * (1 - sp.exp(-eta * K / 4))),
])
def test_wrong_bounds_are_caught_on_the_default_grid(theorem_id, wrong):
    result = check_application(_wrong(theorem_id, wrong), CATALOG[theorem_id].applications[0])
    assert result.verdict is Verdict.VIOLATED
    worst = result.worst
    assert worst.bound < worst.truth.lower and worst.margin < 0


def test_point_result_is_json_ready_and_reproducible():
    t = CATALOG["chourasia2021.corollary1"]
    point = dict(alpha=2, sigma=0.5, eta=0.1, n=10, K=20, S=1.0, lam=1.0)
    a, b = check_point(t, t.applications[0], point), check_point(t, t.applications[0], point)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert a.theorem_values["beta"] == 1.0  # bound by the application: smoothness = curvature
    assert math.isclose(a.ratio, a.bound / a.truth.value)


def test_nan_and_unknown_parameters_are_named():
    t = CATALOG["chourasia2021.corollary1"]
    app: Application = t.applications[0]
    with pytest.raises(ParameterError, match="eta is NaN"):
        check_point(t, app, dict(alpha=2, sigma=0.5, eta=math.nan, n=10, K=20, S=1.0, lam=1.0))
    with pytest.raises(ParameterError, match="unknown parameter.*sigm.*its|unknown parameter"):
        check_point(t, app, dict(alpha=2, sigm=0.5, eta=0.1, n=10, K=20, S=1.0, lam=1.0))
    with pytest.raises(ParameterError, match="missing parameter sigma"):
        check_point(t, app, dict(alpha=2, eta=0.1, n=10, K=20, S=1.0, lam=1.0, start_var=0.1))


def test_lower_bound_companion_only_where_its_hypotheses_hold():
    point = dict(alpha=30, S=4.0, n=5000, sigma=0.02, eta=0.02, K=100, lam=1.0)
    fixed = verify.check("chourasia2021.corollary2", start_var=0.0, **point)
    assert fixed.lower.theorem == "chourasia2021.theorem3"
    assert fixed.lower.value <= fixed.truth.value <= fixed.bound  # 1.0376e-2 <= 1.8196e-2 <= 2.0895e-2
    assert fixed.lower.value == pytest.approx(1.0376e-2, rel=1e-4)
    assert verify.check("chourasia2021.corollary2", start_var=1.0, **point).lower is None  # Thm 3 needs theta_0 = 0


@pytest.mark.parametrize(("theorem_id", "family", "point"), [
    # 1 - exp(-2(1-gamma) sigma^2 c eta K) with c ~ 1e-60 cancelled to 0 at 50 digits before expm1 rewriting
    ("chourasia2021.theorem2.proof", "noisy_gd_quadratic",
     dict(K=10, S=1.0, alpha=2.0, eta=1.0, gamma=0.1, lam=1000.0, n=1, sigma=1.0, start_var=0.0)),
    # |c| = 1 at eta*lam = 2 (float 10 * 0.2 = 2 + 1e-16): the exact tie of Theorem 23 at t = 1
    ("feldman2018.theorem23", "pnsgd_quadratic", dict(Delta=1.0, alpha=2.0, eta=10.0, lam=0.2, n=100, sigma=1.0, t=1)),
])
def test_falsifier_found_numerical_false_alarms_stay_fixed(theorem_id, family, point):
    r = verify.check(theorem_id, family=family, **point)
    assert r.verdict is Verdict.HOLDS and r.bound > 0


def test_the_counterexample_is_a_certified_violation_even_where_an_undecided_point_has_a_smaller_margin():
    """bu2020.clt.delta on its grid: the tight delta at (eps 1, sigma 2, T 100) is bracketed [0, 5e-14] against a bound
    of 3e-81, an undecided point with the smallest margin; the counterexample shown (CLI, JSON) is a VIOLATED one."""
    from verify.runner import run

    result, = run(["bu2020.clt.delta"], falsify=0).results
    assert result.verdict is Verdict.VIOLATED
    assert result.worst.verdict is not Verdict.VIOLATED
    c = result.counterexample
    assert c.verdict is Verdict.VIOLATED and c.bound < c.truth.lower
    assert result.to_dict()["counterexample"]["params"] == c.params


def test_the_counterexample_shown_is_a_grid_point_when_the_grid_has_one():
    """A falsifier's point (drawn anywhere, unshrunk in a catalog run) is the counterexample only where no grid point
    is VIOLATED, even with a smaller margin."""
    import dataclasses

    from verify.runner import run

    result, = run(["chourasia2021.theorem3.cor1_start"], falsify=0).results
    grid = [p for p in result.points if p.verdict is Verdict.VIOLATED]
    assert grid and result.counterexample.origin == "grid"
    far = dataclasses.replace(grid[0], origin="falsifier", margin=min(p.margin for p in grid) - 1.0)
    with_search = dataclasses.replace(result, points=(*result.points, far))
    assert with_search.counterexample.origin == "grid"
    only = dataclasses.replace(result, points=(*[p for p in result.points if p.verdict is not Verdict.VIOLATED], far))
    assert only.counterexample is far


@settings(max_examples=20, deadline=None)
@given(exponent=st.integers(-200, 0))
def test_a_default_family_parameter_beyond_the_float_range_excludes_the_point(exponent):
    """Corollary 1's start variance 2 sigma^2/lam is handed to the truth as a float: where it underflows (sigma <~
    1e-162 gave start_var = 0.0, a fixed start, and a certified HOLDS of an entry violated at every sigma: its ratio
    does not depend on sigma) the point is refused; elsewhere the ratio is the same at every scale."""
    sigma = 10.0**exponent
    point = dict(eta=0.1, n=1, K=1, lam=1, alpha=2, S=1, sigma=sigma)
    if 2 * sigma * sigma < sys.float_info.min:
        with pytest.raises(UndefinedBoundError, match="beyond the float range"):
            verify.check("chourasia2021.theorem3.cor1_start", **point)
        return
    r = verify.check("chourasia2021.theorem3.cor1_start", **point)
    assert r.verdict is Verdict.VIOLATED and r.ratio == pytest.approx(8.66, abs=0.01)


@settings(max_examples=25, deadline=None, database=None)
@given(st.sampled_from(["thudi2024.appendix_b.cifar10_noise", "thudi2024.appendix_b.mnist_noise"]),
       st.integers(1, 10**7))
def test_a_default_undefined_where_an_assumption_fails_names_the_assumption(theorem_id, b):
    """App. B's sigma is a table over the batch sizes the paper lists (NaN elsewhere): at any other b the point is
    refused by the paper_batch_size assumption, not as 'sigma is not a real number (nan)'."""
    from verify.errors import AssumptionError

    t = CATALOG[theorem_id]
    listed = t.applications[0].grid_values("b")
    if b in listed:
        return
    with pytest.raises(AssumptionError, match="paper_batch_size"):
        check_point(t, t.applications[0], {"b": b, "delta": 1e-5})
