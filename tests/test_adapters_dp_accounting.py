"""verify.adapters.dp_accounting against dp_accounting itself: on generated schedules of nested events, the certified
bracket of `VerifyAccountant` reaches dp_accounting's optimistic PLD estimate (its upper end is not below it) and its
pessimistic one (its lower end is not above it), for Gaussian, Poisson-subsampled Gaussian, Laplace, randomized
response and mixture-of-Gaussians events; nested events compose as the flat schedule they spell; the same user code
runs with `PLDAccountant` and with `VerifyAccountant`; Gaussian, Laplace and randomized-response events meet their
closed forms (mpmath); a schedule mixing neighbouring relations and sampling without replacement are refused."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.pld import PLDAccountant  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as PLD  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError  # noqa: E402
from dp_reference import dp_pair  # noqa: E402 - tests/ is on the path; it needs dp_accounting

from verify import accountant  # noqa: E402
from verify.adapters.dp_accounting import VerifyAccountant  # noqa: E402
from verify.errors import ResourceLimitError  # noqa: E402

REL = 1e-9  # float slack in comparing two libraries' numbers, far below either's discretisation


def step(q: float, sigma: float) -> E.DpEvent:
    return E.GaussianDpEvent(sigma) if q == 1 else E.PoissonSampledDpEvent(q, E.GaussianDpEvent(sigma))


@st.composite
def nested(draw, phases):
    """The phases spelled as nested events: each phase's steps split as a x b + c into SelfComposed(SelfComposed(
    step, a), b) and SelfComposed(step, c), the pieces shuffled into ComposedDpEvents, a NoOpDpEvent among them."""
    pieces = [E.NoOpDpEvent()]
    for q, sigma, steps in phases:
        a = draw(st.integers(1, steps))
        b, c = divmod(steps, a)
        pieces.append(E.SelfComposedDpEvent(E.SelfComposedDpEvent(step(q, sigma), a), b))
        if c:
            pieces.append(E.SelfComposedDpEvent(step(q, sigma), c))
    pieces = draw(st.permutations(pieces))
    cut = draw(st.integers(0, len(pieces)))
    return E.ComposedDpEvent([E.ComposedDpEvent(pieces[:cut]), *pieces[cut:]])


PHASES = st.lists(st.tuples(st.one_of(st.floats(5e-3, 0.3), st.just(1.0)), st.floats(0.7, 4), st.integers(1, 120)),
                  min_size=1, max_size=3)


@settings(max_examples=examples(3, 30), deadline=None, database=None)
@given(data=st.data(), phases=PHASES, delta=st.floats(1e-8, 1e-4))
def test_the_certified_bracket_reaches_dp_accountings_optimistic_and_pessimistic_estimates(data, phases, delta):
    event = data.draw(nested(phases))
    acc = VerifyAccountant()
    acc.compose(event)
    flat = Counter()
    for q, sigma, steps in phases:
        flat[(q, sigma)] += steps
    assert Counter({(p.q, p.sigma): p.steps for p in acc.phases}) == flat  # the flat schedule, merged
    r = acc.get_epsilon_bracket(delta)
    optimistic, pessimistic = dp_pair(phases, delta=delta)
    assert r.upper >= optimistic * (1 - REL) and r.lower <= pessimistic * (1 + REL)
    theirs = PLDAccountant()
    theirs.compose(event)  # dp_accounting's own accountant on the same nested event
    assert r.lower <= theirs.get_epsilon(delta) * (1 + REL)


@settings(max_examples=examples(3, 20), deadline=None, database=None)
@given(phases=st.lists(st.tuples(st.floats(0.01, 0.3), st.floats(0.8, 3), st.integers(1, 60)), min_size=1,
                       max_size=2), eps=st.floats(0.2, 3))
def test_the_delta_bracket_reaches_dp_accountings_pair(phases, eps):
    acc = VerifyAccountant(tol=1e-2)  # a looser width than the default: delta(eps) is the slower query
    for q, sigma, steps in phases:
        acc.compose(step(q, sigma), steps)
    optimistic, pessimistic = dp_pair(phases, eps=eps)
    try:
        r = acc.get_delta_bracket(eps)
    except ResourceLimitError as refusal:  # an explicit relative width below the floating-point floor, for a delta
        assert "floor" in str(refusal) and pessimistic < 1e-9  # so small that 1% of it is ~1e-13: an honest refusal
        return
    assert r.upper >= optimistic * (1 - REL) and r.lower <= pessimistic * (1 + REL)


def users_training_accounting(Accountant) -> dict:
    """A user's DP-SGD accounting as dp_accounting's documentation writes it, the accountant class given."""
    sampling_probability, noise_multiplier, steps_per_epoch = 0.02, 1.1, 50
    event = E.PoissonSampledDpEvent(sampling_probability, E.GaussianDpEvent(noise_multiplier))
    accountant = Accountant()
    for _epoch in range(2):
        accountant.compose(event, count=steps_per_epoch)
    accountant.compose(E.SelfComposedDpEvent(E.GaussianDpEvent(20.0), 2))  # a final full-batch evaluation
    epsilon = accountant.get_epsilon(target_delta=1e-5)
    chained = Accountant().compose(event, 100).compose(E.GaussianDpEvent(20.0), 2).get_epsilon(1e-5)
    return {"epsilon": epsilon, "chained": chained, "ledger": accountant.ledger,
            "supports": [accountant.supports(e) for e in (event, E.NoOpDpEvent(), E.UnsupportedDpEvent())]}


def test_the_same_user_code_runs_with_pld_accountant_and_verify_accountant():
    theirs, ours = users_training_accounting(PLDAccountant), users_training_accounting(VerifyAccountant)
    assert ours["ledger"] == theirs["ledger"] and ours["supports"] == theirs["supports"] == [True, True, False]
    phases = [(0.02, 1.1, 100), (1.0, 20.0, 2)]
    optimistic, pessimistic = dp_pair(phases, delta=1e-5)
    bracket = accountant.epsilon(1e-5, phases)
    for upper in (ours["epsilon"], ours["chained"]):  # certified upper ends (each query its own time budget)
        assert upper >= optimistic and upper >= bracket.lower
    assert bracket.lower <= theirs["epsilon"] <= pessimistic * (1 + REL)  # PLDAccountant's pessimistic default
    assert abs(ours["epsilon"] - theirs["epsilon"]) <= 1e-2 * theirs["epsilon"]


def gaussian_delta(eps: float, s: float) -> float:
    """delta(eps) of N(0, s^2) against N(1, s^2), Balle & Wang 2018 (Theorem 8), in mpmath at 50 digits."""
    with mpmath.workdps(50):
        e, s = mpmath.mpf(eps), mpmath.mpf(s)
        return float(mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s))


@settings(max_examples=examples(4, 30), deadline=None, database=None)
@given(sigma=st.floats(0.5, 10), count=st.integers(1, 50), eps=st.floats(0.05, 4),
       relation=st.sampled_from([NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE]))
def test_gaussian_events_meet_the_closed_form_under_either_relation(sigma, count, eps, relation):
    """k Gaussian steps of noise sigma are one Gaussian of noise sigma / sqrt(k); replace-one moves the mean by the
    sensitivity as add/remove does (dp_accounting's convention), so the closed form is the same."""
    acc = VerifyAccountant(relation, tol=1e-2)
    acc.compose(E.GaussianDpEvent(sigma), count)
    exact = gaussian_delta(eps, sigma / math.sqrt(count))
    try:
        r = acc.get_delta_bracket(eps)
    except ResourceLimitError as refusal:  # 1% of a delta this small is below the floating-point floor (~1e-13)
        assert "floor" in str(refusal) and exact < 1e-9
        return
    assert r.lower <= exact * (1 + REL) and exact <= r.upper * (1 + REL)


@pytest.mark.parametrize("event", [
    E.RandomizedResponseDpEvent(0.5, 4),  # replace-one only, as PLDAccountant
    E.UnsupportedDpEvent(),
    E.SampledWithoutReplacementDpEvent(1000, 10, E.GaussianDpEvent(1.0)),
    E.SampledWithReplacementDpEvent(1000, 10, E.GaussianDpEvent(1.0)),
    E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0)),
    E.ComposedDpEvent([E.GaussianDpEvent(1.0), E.LaplaceDpEvent(1.0), E.RandomizedResponseDpEvent(0.5, 4)]),
    E.MixtureOfGaussiansDpEvent(1.0, [1.0, -1.0], [0.5, 0.5]),  # verify's mixture takes sensitivities >= 0
    E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)), 10**8),  # above MAX_STEPS
    E.PoissonSampledDpEvent(1.5, E.GaussianDpEvent(1.0)),
])
def test_events_it_cannot_account_are_unsupported_and_compose_raises(event):
    acc = VerifyAccountant()
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError):
        acc.compose(event)
    assert acc.phases == () and acc.get_epsilon(1e-5) == 0.0  # nothing was composed


def test_relations_other_than_add_remove_only_where_the_event_has_them():
    poisson = E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0))
    assert not VerifyAccountant(NeighboringRelation.REPLACE_ONE).supports(poisson)
    assert VerifyAccountant(NeighboringRelation.REPLACE_ONE).supports(E.GaussianDpEvent(1.0))
    assert not VerifyAccountant(NeighboringRelation.REPLACE_SPECIAL).supports(E.GaussianDpEvent(1.0))


def test_non_private_no_op_and_empty_events_answer_as_pld_accountant_does():
    for events in ([E.NonPrivateDpEvent()], [E.GaussianDpEvent(0.0)], [E.NoOpDpEvent()], [],
                   [E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(0))],
                   [E.PoissonSampledDpEvent(0.0, E.GaussianDpEvent(1.0))], [E.LaplaceDpEvent(0.0)],
                   [E.MixtureOfGaussiansDpEvent(1.0, [0.0], [1.0])], [E.MixtureOfGaussiansDpEvent(0.0, [1.0], [1.0])],
                   [E.RandomizedResponseDpEvent(0.0, 4)], [E.RandomizedResponseDpEvent(0.5, 1)]):
        relation = (NeighboringRelation.REPLACE_ONE if isinstance(events[0], E.RandomizedResponseDpEvent) else
                    NeighboringRelation.ADD_OR_REMOVE_ONE) if events else NeighboringRelation.ADD_OR_REMOVE_ONE
        ours, theirs = VerifyAccountant(relation), PLDAccountant(relation)
        for e in events:
            ours.compose(e)
            theirs.compose(e)
        assert ours.get_epsilon(1e-6) == theirs.get_epsilon(1e-6)
        assert ours.get_delta(0.5) == pytest.approx(theirs.get_delta(0.5), abs=1e-12)


def test_a_refusal_at_the_default_answers_its_certified_bracket_and_an_explicit_tol_raises(monkeypatch):
    """The contract with verify.accountant: get_epsilon is the bracket's upper end; a refusal carries its tightest
    bracket as `best` (AccountantRefusal): the default answers it, an explicit tolerance not met is the refusal."""
    best = accountant.epsilon(1e-5, [(0.1, 1.0, 10)], tol=0.1)
    monkeypatch.setattr(accountant, "epsilon", lambda *args, **kwargs: best)
    assert VerifyAccountant().compose(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)), 10).get_epsilon(
        1e-5) == best.upper
    refusal = ResourceLimitError("a cap")
    refusal.best = best

    def refuse(*args, **kwargs):
        raise refusal

    monkeypatch.setattr(accountant, "epsilon", refuse)
    acc = VerifyAccountant()
    acc.compose(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)), 10)
    assert acc.get_epsilon(1e-5) == best.upper
    strict = VerifyAccountant(tol=1e-3)
    strict.compose(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)), 10)
    with pytest.raises(ResourceLimitError):
        strict.get_epsilon(1e-5)


def test_verify_imports_without_dp_accounting_and_only_the_adapter_needs_it():
    code = ("import sys; sys.modules['dp_accounting'] = None\n"
            "import verify, verify.adapters, verify.accountant\n"
            "try:\n    import verify.adapters.dp_accounting\nexcept ImportError:\n    print('needs dp_accounting')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert done.stdout.strip() == "needs dp_accounting"


def test_dp_accountings_calibration_takes_it():
    """dp_accounting.calibrate_dp_mechanism, given the class: the noise it finds meets the target eps by the
    certified upper end, and dp_accounting's own optimistic estimate agrees."""
    def make_event(sigma: float) -> E.DpEvent:
        return E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.05, E.GaussianDpEvent(sigma)), 20)

    sigma = dp_accounting.calibrate_dp_mechanism(VerifyAccountant, make_event, 2.0, 1e-5,
                                                 dp_accounting.LowerEndpointAndGuess(0.3, 1.0), tol=1e-2)
    assert VerifyAccountant().compose(make_event(sigma)).get_epsilon(1e-5) <= 2.0
    assert dp_pair([(0.05, sigma, 20)], delta=1e-5)[0] <= 2.0


def pld_pair(make, count: int, *, delta: float | None = None, eps: float | None = None) -> tuple[float, float]:
    """dp_accounting's optimistic and pessimistic estimates of eps(delta) or delta(eps) of `count` steps, one step's
    PLD being make(pessimistic) (dp_accounting 0.6's PLDAccountant has no optimistic mode: its constructors do)."""
    out = []
    for pessimistic in (False, True):
        pld = make(pessimistic).self_compose(count)
        out.append(pld.get_epsilon_for_delta(delta) if eps is None else pld.get_delta_for_epsilon(eps))
    return out[0], out[1]


def assert_overlaps(r, optimistic: float, pessimistic: float) -> None:
    assert r.upper >= optimistic * (1 - REL) and r.lower <= pessimistic * (1 + REL)


@settings(max_examples=examples(3, 20), deadline=None, database=None)
@given(b=st.floats(0.5, 4), count=st.integers(1, 6), delta=st.floats(1e-7, 1e-3))
def test_laplace_events_bracket_dp_accountings_pair(b, count, delta):
    acc = VerifyAccountant().compose(E.LaplaceDpEvent(b), count)
    assert [type(p).__name__ for p in acc.phases] == ["Laplace"] and acc.phases[0].b == b
    r = acc.get_epsilon_bracket(delta)
    assert_overlaps(r, *pld_pair(lambda pe: PLD.from_laplace_mechanism(b, pessimistic_estimate=pe,
                                                                     use_connect_dots=pe), count, delta=delta))
    assert r.lower <= PLDAccountant().compose(E.LaplaceDpEvent(b), count).get_epsilon(delta) * (1 + REL)


@settings(max_examples=examples(4, 30), deadline=None, database=None)
@given(b=st.floats(0.3, 5), fraction=st.floats(0.02, 0.95), delta=st.floats(1e-8, 0.05))
def test_one_laplace_step_meets_the_closed_form(b, fraction, delta):
    """Lap(1, b) against Lap(0, b), a = 1/b: the loss exceeds eps in [0, a) beyond x0 = (1 + eps b) / 2, so
    delta(eps) = P(X > x0) - e^eps Q(X > x0) = (1 - e^((eps - a)/2) / 2) - e^eps e^(-(a + eps)/2) / 2
    = 1 - e^((eps - a) / 2), and eps(delta) = a + 2 log(1 - delta) (when positive); mpmath at 50 digits."""
    acc = VerifyAccountant(tol=1e-2).compose(E.LaplaceDpEvent(b))
    with mpmath.workdps(50):
        a = 1 / mpmath.mpf(b)
        eps = fraction / b
        exact_delta = float(1 - mpmath.exp((mpmath.mpf(eps) - a) / 2))
        exact_eps = float(a + 2 * mpmath.log1p(-mpmath.mpf(delta)))
    r = acc.get_delta_bracket(eps)
    assert r.lower <= exact_delta * (1 + REL) and exact_delta <= r.upper * (1 + REL)
    if exact_eps > 0:
        r = acc.get_epsilon_bracket(delta)
        assert r.lower <= exact_eps * (1 + REL) and exact_eps <= r.upper * (1 + REL)


@settings(max_examples=examples(3, 20), deadline=None, database=None)
@given(p=st.floats(0.05, 0.95), k=st.integers(2, 10), count=st.integers(1, 6), delta=st.floats(1e-7, 1e-3))
def test_randomized_response_events_bracket_dp_accountings_pair(p, k, count, delta):
    acc = VerifyAccountant(NeighboringRelation.REPLACE_ONE).compose(E.RandomizedResponseDpEvent(p, k), count)
    r = acc.get_epsilon_bracket(delta)
    assert r.neighbouring == "replace_one"
    assert_overlaps(r, *pld_pair(lambda pe: PLD.from_randomized_response(p, k, pessimistic_estimate=pe), count,
                                 delta=delta))


@settings(max_examples=examples(4, 30), deadline=None, database=None)
@given(p=st.floats(0.05, 1.0), k=st.integers(2, 50), fraction=st.floats(0.0, 0.95))
def test_one_randomized_response_step_meets_the_closed_form(p, k, fraction):
    """One step, inputs x and x': only the output x has a loss above eps >= 0, log(hit / miss) with hit = 1 - p + p/k
    and miss = p/k (dp_accounting's convention: p the probability of a uniform bucket), so delta(eps) = hit -
    e^eps miss below that loss; mpmath at 50 digits."""
    with mpmath.workdps(50):
        hit, miss = 1 - mpmath.mpf(p) + mpmath.mpf(p) / k, mpmath.mpf(p) / k
        eps = float(fraction * mpmath.log(hit / miss))
        exact = float(hit - mpmath.exp(eps) * miss)
    acc = VerifyAccountant(NeighboringRelation.REPLACE_ONE, tol=1e-2).compose(E.RandomizedResponseDpEvent(p, k))
    if exact <= 0:  # p = 1: the output is independent of the input
        assert acc.get_delta(eps) <= 1e-12
        return
    r = acc.get_delta_bracket(eps)
    assert r.lower <= exact * (1 + REL) and exact <= r.upper * (1 + REL)


@settings(max_examples=examples(2, 20), deadline=None, database=None)
@given(q=st.floats(0.01, 0.5), sigma=st.floats(0.7, 3), count=st.integers(1, 8), delta=st.floats(1e-7, 1e-3))
def test_a_two_point_mixture_event_brackets_dp_accountings_poisson_pair(q, sigma, count, delta):
    """(1 - q) N(0, s^2) + q N(1, s^2) against N(0, s^2) is the Poisson-subsampled Gaussian: dp_accounting's
    Poisson PLD (a separate construction) is the reference."""
    acc = VerifyAccountant().compose(E.MixtureOfGaussiansDpEvent(sigma, [0.0, 1.0], [1 - q, q]), count)
    assert [type(p).__name__ for p in acc.phases] == ["GaussianMixture"]
    assert_overlaps(acc.get_epsilon_bracket(delta), *dp_pair([(q, sigma, count)], delta=delta))


def test_a_three_point_mixture_event_brackets_dp_accountings_mixture_pld():
    """dp_accounting's own mixture PLD, at a coarse discretisation (1e-2; its finer grids take minutes)."""
    sigma, cs, ps, count, delta = 1.5, [0.0, 1.0, 2.0], [0.7, 0.2, 0.1], 2, 1e-5
    r = VerifyAccountant().compose(E.MixtureOfGaussiansDpEvent(sigma, cs, ps), count).get_epsilon_bracket(delta)
    assert_overlaps(r, *pld_pair(lambda pe: PLD.from_mixture_gaussian_mechanism(
        sigma, cs, ps, pessimistic_estimate=pe, use_connect_dots=pe, value_discretization_interval=1e-2), count,
        delta=delta))


def test_laplace_mixture_and_poisson_events_compose_in_one_schedule():
    event = E.ComposedDpEvent([E.SelfComposedDpEvent(E.LaplaceDpEvent(3.0), 3),
                               E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.2)), 20),
                               E.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 1.5], [0.5, 0.3, 0.2])])
    acc = VerifyAccountant().compose(event)
    assert sorted(type(p).__name__ for p in acc.phases) == ["GaussianMixture", "Laplace", "Phase"]
    out = []
    for pe in (False, True):
        grid = {"pessimistic_estimate": pe, "use_connect_dots": pe, "value_discretization_interval": 1e-2}
        pld = PLD.from_laplace_mechanism(3.0, **grid).self_compose(3)
        pld = pld.compose(PLD.from_gaussian_mechanism(1.2, sampling_prob=0.1, **grid).self_compose(20))
        pld = pld.compose(PLD.from_mixture_gaussian_mechanism(2.0, [0.0, 1.0, 1.5], [0.5, 0.3, 0.2], **grid))
        out.append(pld.get_epsilon_for_delta(1e-6))
    assert_overlaps(acc.get_epsilon_bracket(1e-6), *out)


def test_a_schedule_mixing_neighbouring_relations_is_refused_with_its_reason():
    """Under REPLACE_ONE a Gaussian is accounted as add/remove (dp_accounting's convention) and randomized response
    as replace-one: one query takes one relation, so the two together are refused, in either order or in one
    ComposedDpEvent; each alone is supported."""
    gaussian, rr = E.GaussianDpEvent(1.0), E.RandomizedResponseDpEvent(0.5, 4)
    assert VerifyAccountant(NeighboringRelation.REPLACE_ONE).supports(gaussian)
    assert VerifyAccountant(NeighboringRelation.REPLACE_ONE).supports(rr)
    assert not VerifyAccountant(NeighboringRelation.REPLACE_ONE).supports(E.ComposedDpEvent([gaussian, rr]))
    for first, then in ((gaussian, rr), (rr, gaussian)):
        acc = VerifyAccountant(NeighboringRelation.REPLACE_ONE).compose(first, 3)
        assert not acc.supports(then)
        with pytest.raises(UnsupportedEventError, match="one neighbouring relation"):
            acc.compose(then)
        assert len(acc.phases) == 1 and acc.phases[0].steps == 3  # the refused event left no trace
    for event in (E.LaplaceDpEvent(1.0), E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5])):
        with pytest.raises(UnsupportedEventError, match="ADD_OR_REMOVE_ONE neighbours only"):
            VerifyAccountant(NeighboringRelation.REPLACE_ONE).compose(event)  # as PLDAccountant refuses them
        assert not PLDAccountant(NeighboringRelation.REPLACE_ONE).supports(event)


def test_sampling_without_replacement_is_refused_with_its_reason():
    event = E.SampledWithoutReplacementDpEvent(1000, 10, E.GaussianDpEvent(1.0))
    acc = VerifyAccountant()
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match="dominating pair is not in the engine"):
        acc.compose(E.ComposedDpEvent([E.GaussianDpEvent(2.0), event]))
    assert acc.phases == ()
