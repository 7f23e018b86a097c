"""Phases other than the Poisson-subsampled Gaussian (verify.accountant_events, verify.truth.pld_events), each
bracketed against an independent reference: the Laplace mechanism against mpmath integrals of its densities (one
and two steps) and dp_accounting's optimistic/pessimistic PLDs (more steps); randomized response against the exact
enumeration of its T-fold composition; cyclic batches against the Gaussian mechanism's closed form; the shuffled
lower bound against an mpmath evaluation of its test and against Poisson accounting's certified upper end."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from verify import accountant
from verify.accountant import Phase
from verify.accountant_events import (
    CyclicBatches,
    GaussianMixture,
    Laplace,
    RandomizedResponse,
    ShuffledBatches,
    parse_event,
    shuffled_lower_bound,
)
from verify.cli import main
from verify.errors import ParameterError
from verify.truth import pld, pld_events


@dataclass(frozen=True)
class _GaussianObject:
    """the Poisson-subsampled Gaussian given to the engine as an object with `step_pmf` (the extension point)"""

    q: float
    sigma: float
    steps: int

    def step_pmf(self, order, h, steps):
        return pld._step_pmf(order, self.q, self.sigma, h, steps)


def test_engine_takes_a_phase_object_as_it_takes_the_tuple():
    """the dispatch in verify.truth.pld: a phase object with `step_pmf` composes to the very same bracket as the tuple
    (q, sigma, steps), alone and mixed with tuples, and the two are cached apart"""
    tuples = ((0.01, 1.0, 300), (0.05, 2.0, 100))
    mixed = (_GaussianObject(0.01, 1.0, 300), (0.05, 2.0, 100))
    a = pld.schedule_delta(1.0, pld.schedule_orders(tuples, ("add", "remove"), 0.05))
    b = pld.schedule_delta(1.0, pld.schedule_orders(mixed, ("add", "remove"), 0.05))
    assert (a.lower, a.upper) == (b.lower, b.upper)
    assert ("add", mixed, b.grid_width) in pld._CACHE


# --- Laplace -----------------------------------------------------------------------------------------------------


def _laplace_hockey(eps, b):
    """delta(eps) of Lap(1, b) || Lap(0, b) by mpmath quadrature of (p - e^eps q)_+ over x (the densities, split at
    0, 1 and the crossing), 30 digits"""
    with mpmath.workdps(30):
        b, eps = mpmath.mpf(b), mpmath.mpf(eps)
        p = lambda x: mpmath.exp(-abs(x - 1) / b) / (2 * b)  # noqa: E731
        q = lambda x: mpmath.exp(-abs(x) / b) / (2 * b)  # noqa: E731
        f = lambda x: max(p(x) - mpmath.exp(eps) * q(x), 0)  # noqa: E731
        cross = (b * eps + 1) / 2  # p = e^eps q on (0, 1) at x = (b eps + 1) / 2
        pts = sorted({mpmath.mpf(0), mpmath.mpf(1), min(max(cross, mpmath.mpf(0)), mpmath.mpf(1))})
        return mpmath.quad(f, [-mpmath.inf, *pts, mpmath.inf])


def _laplace_one(x, a):
    """one step's delta at x (closed form 1 - e^((x - a)/2) on [-a, a]; checked against `_laplace_hockey`)"""
    if x >= a:
        return mpmath.mpf(0)
    if x < -a:
        return 1 - mpmath.exp(x)
    return 1 - mpmath.exp((x - a) / 2)


def _laplace_two(eps, b):
    """delta(eps) of two Laplace steps: E[delta_1(eps - L)] over one step's loss L (atoms at -a, a with masses
    e^(-a)/2, 1/2 and density e^((l - a)/2)/4 on (-a, a)), by mpmath quadrature, 30 digits"""
    with mpmath.workdps(30):
        a, eps = 1 / mpmath.mpf(b), mpmath.mpf(eps)
        atoms = mpmath.exp(-a) / 2 * _laplace_one(eps + a, a) + _laplace_one(eps - a, a) / 2
        pts = sorted({-a, a, min(max(eps - a, -a), a), min(max(eps + a, -a), a)})
        cont = mpmath.quad(lambda x: mpmath.exp((x - a) / 2) / 4 * _laplace_one(eps - x, a), pts)
        return atoms + cont


@settings(max_examples=examples(8, 40), deadline=None, database=None)
@given(b=st.floats(0.2, 20), eps=st.floats(-1, 6))
def test_laplace_one_step_brackets_the_integrated_hockey_stick(b, eps):
    """one step: the bracket contains the quadrature of the densities, and the closed form used by the two-step
    reference agrees with it"""
    exact = _laplace_hockey(eps, b)
    assert abs(exact - _laplace_one(mpmath.mpf(eps), 1 / mpmath.mpf(b))) < mpmath.mpf(10) ** -15
    assume(exact > 1e-8)
    r = accountant.delta(eps, [Laplace(b)], tol=1e-4)
    assert r.lower <= float(exact) <= r.upper
    assert r.upper - r.lower <= 1e-4 * r.upper


@settings(max_examples=examples(5, 25), deadline=None, database=None)
@given(b=st.floats(0.3, 10), eps=st.floats(0, 4))
def test_laplace_two_steps_bracket_the_quadrature(b, eps):
    exact = float(_laplace_two(eps, b))
    assume(exact > 1e-8)
    r = accountant.delta(eps, [Laplace(b, 2)], tol=1e-4)
    assert r.lower <= exact <= r.upper


@pytest.mark.parametrize(("b", "steps", "eps"), [(1.0, 10, 3.0), (2.0, 50, 2.0), (0.5, 5, 6.0)])
def test_laplace_composition_meets_dp_accountings_bracket(b, steps, eps):
    """more steps: dp_accounting's pessimistic PLD is an upper estimate and its optimistic one a lower estimate of
    the tight delta; a certified bracket must overlap [optimistic, pessimistic]"""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    pess = pldlib.from_laplace_mechanism(b, value_discretization_interval=1e-4).self_compose(steps)
    opt = pldlib.from_laplace_mechanism(b, value_discretization_interval=1e-4,
                                        pessimistic_estimate=False).self_compose(steps)
    hi, lo = pess.get_delta_for_epsilon(eps), opt.get_delta_for_epsilon(eps)
    r = accountant.delta(eps, [Laplace(b, steps)], tol=1e-3)
    assert r.lower <= hi * (1 + 1e-9) and lo <= r.upper * (1 + 1e-9)
    assert r.upper - r.lower <= 1e-3 * r.estimate


def test_laplace_cell_masses_match_mpmath():
    """the per-step core's masses (long double closed forms, then double) against the exact cell integrals at 30
    digits: within the engine's 3u relative budget (the ASSUMPTION on long-double exp / expm1 checked where used)"""
    b, h = 0.7, 0.013
    step = pld_events.laplace_step(b, h, 10)
    with mpmath.workdps(30):
        a = 1 / mpmath.mpf(b)
        for i in range(len(step.mass)):
            k = step.j0 + i
            l1, l2 = max((k - 1) * mpmath.mpf(h), -a), min(k * mpmath.mpf(h), a)
            exact = (mpmath.exp((l2 - a) / 2) - mpmath.exp((l1 - a) / 2)) / 2 if l2 > l1 else mpmath.mpf(0)
            if -a <= k * mpmath.mpf(h) and -a > (k - 1) * mpmath.mpf(h):
                exact += mpmath.exp(-a) / 2
            if a <= k * mpmath.mpf(h) and a > (k - 1) * mpmath.mpf(h):
                exact += mpmath.mpf(1) / 2
            assert abs(step.mass[i] - exact) <= 3 * 2.0**-53 * exact


def test_laplace_mixes_with_gaussian_phases():
    """a mixed schedule is bracketed, at least each part alone (composition only adds privacy loss)"""
    mixed = accountant.epsilon(1e-5, [Laplace(2.0, 10), Phase(0.01, 1.0, 1000)], tol=1e-2)
    alone = accountant.epsilon(1e-5, [Phase(0.01, 1.0, 1000)], tol=1e-2)
    lap = accountant.epsilon(1e-5, [Laplace(2.0, 10)], tol=1e-2)
    assert mixed.lower >= max(alone.lower, lap.lower) - 1e-9
    assert "Laplace b=2" in str(mixed)


# --- randomized response -----------------------------------------------------------------------------------------


def _rr_delta(eps, p, k, steps):
    """delta(eps) of `steps`-fold k-ary randomized response (replace-one) by exact enumeration: the outcome counts
    (n_x, n_x', n_other) are multinomial under R(x), the loss (n_x - n_x') l, l = log((1 - p + p/k) / (p/k)); 50
    digits from the rationals"""
    fp = Fraction(p)
    hit, miss = 1 - fp + fp / k, fp / k
    rest = 1 - hit - miss
    with mpmath.workdps(50):
        loss = mpmath.log(mpmath.mpf(hit.numerator) / hit.denominator * miss.denominator / miss.numerator)
        total = mpmath.mpf(0)
        for nx in range(steps + 1):
            for ny in range(steps + 1 - nx):
                nz = steps - nx - ny
                if nz and rest == 0:
                    continue
                prob = Fraction(math.factorial(steps), math.factorial(nx) * math.factorial(ny) * math.factorial(nz))
                prob *= hit**nx * miss**ny * rest**nz
                s = (nx - ny) * loss
                term = 1 - mpmath.exp(mpmath.mpf(eps) - s)
                if term > 0:
                    total += mpmath.mpf(prob.numerator) / prob.denominator * term
        return total


@settings(max_examples=examples(10, 60), deadline=None, database=None)
@given(p=st.floats(0.05, 1.0), k=st.integers(2, 10), steps=st.integers(1, 8), eps=st.floats(-0.5, 4))
def test_randomized_response_brackets_the_exact_enumeration(p, k, steps, eps):
    exact = float(_rr_delta(eps, p, k, steps))
    assume(exact > 1e-8)
    r = accountant.delta(eps, [RandomizedResponse(k, p, steps)], tol=1e-4, neighbouring="replace_one")
    assert r.lower <= exact <= r.upper
    assert r.upper - r.lower <= 1e-4 * r.upper


def test_randomized_response_eps_brackets_the_exact_threshold():
    """eps(delta) form: the exact delta at the bracket's ends lies on either side of delta"""
    rr = RandomizedResponse(4, eps0=1.0, steps=6)
    r = accountant.epsilon(1e-3, [rr], tol=1e-3, neighbouring="replace_one")
    assert _rr_delta(r.upper, rr.p, 4, 6) <= 1e-3 <= _rr_delta(math.nextafter(r.lower, -1), rr.p, 4, 6)
    assert rr.p == pytest.approx(4 / (math.e + 3), rel=1e-15)


# --- Gaussian mixtures --------------------------------------------------------------------------------------------


def _mixture_hockey(eps, sigma, cs, ps):
    """max over both orders of delta(eps) for P = sum_i p_i N(c_i, s^2) against Q = N(0, s^2), 30 digits: the loss
    log(P/Q)(x) increases in x, so (P - e^eps Q)_+ lives right of the root of loss = eps and (Q - e^eps P)_+ left of
    the root of loss = -eps (roots by bisection, then mpmath quadrature of the densities on the half-line)"""
    with mpmath.workdps(30):
        s, eps = mpmath.mpf(sigma), mpmath.mpf(eps)
        mix = lambda x: mpmath.fsum(p * mpmath.npdf(x, c, s) for c, p in zip(cs, ps, strict=True))  # noqa: E731
        base = lambda x: mpmath.npdf(x, 0, s)  # noqa: E731
        loss = lambda x: mpmath.log(mpmath.fsum(p * mpmath.exp((2 * c * x - c * c) / (2 * s * s))  # noqa: E731
                                                for c, p in zip(cs, ps, strict=True)))

        def root(level):  # the x with loss(x) = level, None where the loss never reaches it
            lo, hi = -60 * s - 10, 60 * s + 10 + 40 * s * s * abs(level) / max(cs)
            if not loss(lo) < level < loss(hi):
                return None
            for _ in range(120):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if loss(mid) < level else (lo, mid)
            return (lo + hi) / 2

        r_add, r_remove = root(eps), root(-eps)
        add = mpmath.quad(lambda x: mix(x) - mpmath.exp(eps) * base(x), [r_add, mpmath.inf]) if r_add is not None else 0
        remove = (mpmath.quad(lambda x: base(x) - mpmath.exp(eps) * mix(x), [-mpmath.inf, r_remove])
                  if r_remove is not None else 0)
        return max(add, remove)


@settings(max_examples=examples(4, 40), deadline=None, database=None)
@given(sigma=st.floats(0.5, 4), cs=st.lists(st.floats(0, 2), min_size=1, max_size=3),
       raw=st.lists(st.floats(0.05, 1), min_size=3, max_size=3), eps=st.floats(0, 3))
def test_gaussian_mixture_one_step_brackets_the_quadrature(sigma, cs, raw, eps):
    assume(max(cs) > 0.05)
    ps = [w / math.fsum(raw[: len(cs)]) for w in raw[: len(cs)]]
    mixture = GaussianMixture(sigma, tuple(cs), tuple(ps))
    exact = float(_mixture_hockey(eps, sigma, mixture.sensitivities, mixture.probabilities))
    assume(exact > 1e-8)
    r = accountant.delta(eps, [mixture], tol=1e-2)
    assert r.lower <= exact <= r.upper


def test_gaussian_mixture_of_0_and_1_is_the_poisson_subsampled_gaussian():
    """sensitivities (0, 1) with (1 - q, q): the same pair as Phase(q, sigma, T), computed by the other inversion
    (bisection/Newton against pld.py's closed form): the brackets overlap"""
    a = accountant.delta(1.0, [GaussianMixture(1.0, (0.0, 1.0), (0.9, 0.1), 20)], tol=1e-2)
    b = accountant.delta(1.0, [Phase(0.1, 1.0, 20)], tol=1e-2)
    assert a.lower <= b.upper and b.lower <= a.upper


# --- relations and validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("phases", "relation", "words"), [
    ([RandomizedResponse(3, 0.5)], "add_remove", "supports the neighbouring relations replace_one"),
    ([Laplace(1.0)], "replace_one", "not replace_one"),
    ([Phase(0.1, 1.0, 10), CyclicBatches(1.0, 2)], "replace_one", "Poisson-subsampled"),
])
def test_unsupported_relations_are_refused(phases, relation, words):
    with pytest.raises(ParameterError, match=words):
        accountant.epsilon(1e-5, phases, neighbouring=relation)


@pytest.mark.parametrize("make", [lambda: Laplace(0), lambda: Laplace(1.0, 0), lambda: Laplace(math.inf),
                                  lambda: RandomizedResponse(1, 0.5), lambda: RandomizedResponse(3),
                                  lambda: RandomizedResponse(3, 0.5, eps0=1.0), lambda: RandomizedResponse(3, 1.5),
                                  lambda: CyclicBatches(-1.0), lambda: ShuffledBatches(1.0, 1, 0),
                                  lambda: GaussianMixture(1.0, (0.0,), (1.0,)),
                                  lambda: GaussianMixture(1.0, (1.0, 2.0), (0.5, 0.4)),
                                  lambda: GaussianMixture(1.0, (-1.0,), (1.0,)),
                                  lambda: Laplace("1")])
def test_bad_parameters_are_one_line_parameter_errors(make):
    with pytest.raises(ParameterError) as info:
        make()
    assert "\n" not in str(info.value)


# --- cyclic and shuffled batches ---------------------------------------------------------------------------------


def _gaussian_delta(eps, mu):
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


@settings(max_examples=examples(6, 30), deadline=None, database=None)
@given(sigma=st.floats(0.5, 10), epochs=st.integers(1, 50), eps=st.floats(0, 5),
       relation=st.sampled_from(["add_remove", "replace_one"]))
def test_cyclic_batches_are_the_composed_gaussian_mechanism(sigma, epochs, eps, relation):
    """E epochs of cyclic batches: mu-GDP with mu = sqrt(E) Delta / sigma, Delta = 1 (add/remove) or 2 (replace-one)
    (Dong, Roth & Su 2022, Cor. 2.13); shuffled batches are accounted by the same upper bound"""
    with mpmath.workdps(40):  # mu exact from the float inputs (a float mu moves delta by an ulp or so, and the
        mu = mpmath.sqrt(epochs) * (2 if relation == "replace_one" else 1) / mpmath.mpf(sigma)  # closed form's
        exact = _gaussian_delta(eps, mu)  # bracket is that narrow)
    assume(exact > 1e-8)
    for phase in (CyclicBatches(sigma, epochs), ShuffledBatches(sigma, epochs, 10)):
        r = accountant.delta(eps, [phase], tol=1e-3, neighbouring=relation)
        assert mpmath.mpf(r.lower) <= exact <= mpmath.mpf(r.upper)


def _lower_bound_reference(lb, sigma, batches, epochs):
    """P(A) - e^eps Q(A) of the bound's own test at 40 digits (mpmath), from the laws of the epochs' maxima"""
    with mpmath.workdps(40):
        c, s = mpmath.mpf(lb.threshold), mpmath.mpf(sigma)
        p = 1 - mpmath.ncdf((c - 1) / s) * mpmath.ncdf(c / s) ** (batches - 1)
        q = 1 - mpmath.ncdf(c / s) ** batches

        def tail(r):
            return mpmath.fsum(mpmath.binomial(epochs, i) * r**i * (1 - r) ** (epochs - i)
                               for i in range(lb.count, epochs + 1))

        return tail(p) - mpmath.exp(lb.eps) * tail(q)


@settings(max_examples=examples(6, 30), deadline=None, database=None)
@given(sigma=st.floats(0.4, 3), batches=st.integers(1, 200), epochs=st.integers(1, 20), eps=st.floats(0, 3))
def test_shuffled_lower_bound_is_its_test_and_below_the_cyclic_upper_bound(sigma, batches, epochs, eps):
    lb = shuffled_lower_bound(eps, sigma, batches, epochs)
    ref = _lower_bound_reference(lb, sigma, batches, epochs)
    assert lb.value <= max(ref, 0) and max(ref, 0) - lb.value <= 1e-12
    upper = float(_gaussian_delta(eps, math.sqrt(epochs) / sigma))  # the cyclic value, exact
    assert upper <= accountant.delta(eps, [ShuffledBatches(sigma, epochs, batches)], tol=1e-2).upper
    assert lb.value <= upper


@pytest.mark.parametrize(("sigma", "batches", "epochs", "eps"), [(0.5, 10, 1, 0.5), (0.4, 4, 3, 0.5)])
def test_shuffled_lower_bound_exceeds_poisson_accounting(sigma, batches, epochs, eps):
    """the gap of Chua et al. 2024: shuffled batches (b batches an epoch) are provably less private than Poisson
    accounting (q = 1/b, the same number of steps) says: the certified lower bound lies above Poisson's certified
    upper end"""
    lb = shuffled_lower_bound(eps, sigma, batches, epochs)
    poisson = accountant.delta(eps, [Phase(1 / batches, sigma, batches * epochs)], tol=1e-3)
    assert lb.value > poisson.upper + 0.03  # a gap of 0.05-0.07 in delta at these points


# --- the command line --------------------------------------------------------------------------------------------


@settings(max_examples=examples(20, 200), deadline=None, database=None)
@given(b=st.floats(1e-3, 1e3), steps=st.integers(1, 10**6))
def test_parse_event_reads_what_it_is_given(b, steps):
    assert parse_event(f"laplace:b={b!r},steps={steps}") == Laplace(b, steps)
    assert parse_event(f"shuffled:sigma={b!r},epochs={steps},batches=7") == ShuffledBatches(b, steps, 7)
    assert parse_event(f"mixture:sigma={b!r},c=0/{b!r},p=0.25/0.75,steps={steps}") == GaussianMixture(
        b, (0.0, b), (0.25, 0.75), steps)


def test_cli_event_brackets_the_closed_form_and_prints_json(capsys):
    """`--event laplace:b=...` alone: the JSON bracket contains delta(eps) = 1 - e^((eps - 1/b)/2) (mpmath), and the
    schedule lists the event by its type and fields"""
    assert main(["account", "--event", "laplace:b=0.5,steps=1", "--eps", "1.0", "--tol", "1e-3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    exact = float(1 - mpmath.exp((mpmath.mpf(1) - 2) / 2))
    assert out["delta"]["lower"] <= exact <= out["delta"]["upper"]
    assert out["phases"] == [{"event": "Laplace", "b": 0.5, "steps": 1}]


@pytest.mark.parametrize("argv", [
    ["--event", "rr:k=4,p=0.5", "--delta", "1e-5"],  # replace-one only
    ["--event", "laplace:b=1", "--neighbouring", "replace_one", "--delta", "1e-5"],
    ["--event", "gauss:b=1", "--delta", "1e-5"],
    ["--event", "laplace:scale=1", "--delta", "1e-5"],
    ["--event", "laplace:b=-1", "--delta", "1e-5"],
    ["--event", "laplace:b=1", "--delta", "1e-5", "--compare"],
    ["--event", "laplace:b=1", "--calibrate", "sigma", "--target-eps", "1", "--delta", "1e-5", "--q", "0.1",
     "--steps", "10"],
])
def test_cli_bad_events_exit_2_with_one_line(argv, capsys):
    assert main(["account", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
