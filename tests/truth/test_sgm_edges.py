"""The sampled Gaussian's Rényi truths (verify.truth.sgm_rdp) at extreme scales, issue 21: sigma from 1e-3 to 1e3,
q from 1e-12 to 1 - 1e-12, alpha from 1 + 1e-9 to 1e4, integer and fractional. Never NaN; within proven closed-form
bounds; equal, within the reported error, to independent references: mpmath's binomial series (integer orders,
written out here), dp_accounting, and the defining integral in mpmath (`integral_reference`, split at the features;
its values at the extreme points are stored in REFERENCE and two are recomputed live); the Arb enclosures contain the
references. Memory caps refuse before allocating; Monte-Carlo Rényi estimates are never below 0."""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest
from flint import arb, ctx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.errors import DeadlineExceeded, MemoryLimitExceeded, ResourceLimitError
from verify.limits import deadline, memory_cap
from verify.results import Method, Truth
from verify.truth.mixture_arb import enclose_renyi_mixture
from verify.truth.mixture_quad import renyi_mixture_quad
from verify.truth.numbers import NotEnclosable
from verify.truth.renyi_estimator import GaussianMixture, combine_replicates, renyi_importance, renyi_naive
from verify.truth.sgm_rdp import enclose_sgm, sgm_rdp, sgm_renyi_truth


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
SIGMA = st.floats(-3, 3).map(lambda e: 10.0**e)
Q = st.one_of(st.floats(-12, -0.3).map(lambda e: 10.0**e), st.floats(-12, -0.3).map(lambda e: 1 - 10.0**e))
FRACTIONAL = st.floats(-9, 4).map(lambda e: 1 + 10.0**e).filter(lambda a: not a.is_integer())
INTEGER = st.integers(2, 10_000).map(float)


# ---- independent references ----------------------------------------------------------------------------------------


def binomial_reference(q: float, sigma: float, alpha: int, dps: int = 40) -> mpmath.mpf:
    """R_alpha(P||Q) at an integer order: log1p(J)/(alpha - 1), J = sum_{k>=2} C(alpha,k) (1-q)^(alpha-k) q^k
    expm1((k^2 - k)/(2 sigma^2)) (Mironov, Talwar & Zhang 2019), every term in mpmath."""
    with mpmath.workdps(dps):
        qm, s2 = mpmath.mpf(q), mpmath.mpf(sigma) ** 2
        j = mpmath.fsum(mpmath.binomial(alpha, k) * (1 - qm) ** (alpha - k) * qm**k
                        * mpmath.expm1((k * k - k) / (2 * s2)) for k in range(2, alpha + 1))
        return mpmath.log1p(j) / (alpha - 1)


def _excess(a: mpmath.mpf, ell: mpmath.mpf) -> mpmath.mpf:
    """f_a(l) = e^(a l) - a e^l + a - 1, by its Taylor series sum_k (a^k - a) l^k / k! where |l| < 0.01."""
    if abs(ell) < mpmath.mpf("0.01"):
        total, term, k = mpmath.mpf(0), mpmath.mpf(1), 0
        while True:
            k += 1
            term = term * ell / k
            add = (a**k - a) * term
            total += add
            if k >= 2 and abs(add) <= abs(total) * mpmath.eps:
                return total
    return mpmath.exp(a * ell) - a * mpmath.exp(ell) + a - 1


def integral_reference(q: float, sigma: float, alpha: float, direction: str, dps: int = 20) -> mpmath.mpf:
    """R_alpha(P||Q) ("pq") or R_alpha(Q||P) ("qp") of P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2), as
    log1p(J)/(alpha - 1), J = int Q f_a(l) or int P f_a(-l), l = log(P/Q) = log1p(q expm1((2x - 1)/(2 s^2))), the
    integrand evaluated 40 digits beyond `dps`; mpmath.quad split geometrically about 0, 1, alpha (or 1 - alpha) and
    the bend x0 = 1/2 + s^2 log((1-q)/q), integrated once for the scale and again scaled (its tolerance is
    absolute)."""
    with mpmath.workdps(dps):
        qm, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

        def integrand(x):
            with mpmath.workdps(dps + 40):
                ell = mpmath.log1p(qm * mpmath.expm1((2 * x - 1) / (2 * s**2)))
                if direction == "pq":
                    return mpmath.npdf(x, 0, s) * _excess(a, ell)
                return mpmath.npdf(x, 0, s) * mpmath.exp(ell) * _excess(a, -ell)

        x0 = mpmath.mpf(1) / 2 + s**2 * (mpmath.log1p(-qm) - mpmath.log(qm))
        pts = set()
        for c in (mpmath.mpf(0), mpmath.mpf(1), x0, a if direction == "pq" else 1 - a):
            pts |= {c} | {c + sign * s * k for k in (1, 4, 16, 64) for sign in (-1, 1)}
        pts |= {x0 + sign * w for k in (1, 8, 64) for w in (s**2 * k / a, s**2 * k) for sign in (-1, 1)}
        pts = [-mpmath.inf, *sorted(pts), mpmath.inf]
        scale = mpmath.quad(integrand, pts)
        j, err = mpmath.quad(lambda x: integrand(x) / scale, pts, error=True)
        assert err < mpmath.mpf(10) ** -15 * j, (j, err)
        return mpmath.log1p(j * scale) / (a - 1)


# (q, sigma, alpha, R(P||Q), R(Q||P)) by `integral_reference` (20 digits; about 2 minutes in all)
REFERENCE = [
    (1e-12, 0.001, 1.000000001, "5.0009637650683353371e-7", "1.0000000000004999799e-12"),
    (0.5, 0.001, 1.5, "749997.92055845828894", "0.69314718055994530942"),
    (0.001, 0.01, 2.5, "12488.487074535029251", "0.001000500333583533521"),
    (0.999999999, 0.1, 10000.5, "500024.99999999894439", "20.723263160887658726"),
    (0.999999999, 1.0, 10000.0, "4999.9999999989999", "20.686243338222519588"),
    (1e-12, 1000.0, 1.000000001, "5.0000025050008360411e-31", "5.0000025050008360361e-31"),
    (1e-12, 1000.0, 10000.5, "5.0002525001258831691e-27", "5.000252500125783164e-27"),
    (0.5, 1.0, 1.5, "0.23515803448253101908", "0.15195332993659941633"),
    (0.001, 0.3, 100.5, "551.35615337818056288", "0.00077624135522578810432"),
    (1e-12, 0.3, 10.5, "27.793783678885994872", "3.4912450422500661179e-19"),
    (0.999, 0.05, 7.7, "1539.9988501712582835", "6.9077552789821361639"),
    (1e-06, 30.0, 3.3, "1.834352231837812871e-15", "1.8343522204135018213e-15"),
    (0.01, 0.01, 2.5, "12492.324716356685994", "0.010050335853501441394"),  # NaN before issue 21
    (0.3, 0.02, 1.000001, "374.55337846825016116", "0.35667494393873236305"),
    (1e-09, 3.0, 1234.5, "47.843267118732324419", "7.2538634236103395775e-17"),
    (0.999999999999, 0.5, 2.5, "4.9999999999983375014", "4.9999999779750541899"),
    (0.01, 1.1, 1.000000001, "0.000063155235803619525872", "0.000062117611507734143109"),
    (0.05, 0.2, 40.25, "500.05294333731081968", "0.050897309778876541117"),
]


def _ids(row) -> str:
    return f"q={row[0]:g},s={row[1]:g},a={row[2]:g}"


# ---- never NaN, within proven bounds -------------------------------------------------------------------------------


@examples(200)
@given(q=Q, sigma=SIGMA, alpha=st.one_of(FRACTIONAL, INTEGER))
def test_never_nan_and_within_the_closed_form_bounds(q, sigma, alpha):
    r = sgm_rdp(q, sigma, [alpha])
    pq, qp, pq_err, qp_err = r.pq[0], r.qp[0], r.pq_err[0], r.qp_err[0]
    for v in (pq, qp, pq_err, qp_err):
        assert not math.isnan(v) and v >= 0
    assert math.isfinite(qp) and math.isfinite(qp_err)
    # R(Q||P) <= -log(1 - q) (P >= (1-q) Q) and <= q alpha/(2 s^2) (convex in its second argument)
    assert qp <= -math.log1p(-q) * (1 + 1e-13) + qp_err
    assert qp <= q * alpha / (2 * sigma**2) * (1 + 1e-12) + qp_err
    # R(P||Q) >= alpha/(2 s^2) + alpha log(q)/(alpha - 1) (E_Q[(P/Q)^a] >= q^a e^M) and R >= R(Q||P) at alpha = 2... the
    # first only: it holds at every alpha
    floor = alpha / (2 * sigma**2) + alpha * math.log(q) / (alpha - 1)
    assert pq >= floor - pq_err - 1e-13 * abs(floor)
    t = sgm_renyi_truth(q, sigma, alpha)  # a Truth: lower <= value <= upper, never NaN
    assert t.lower <= t.value <= t.upper and t.value == max(pq, qp)


@examples(25)
@given(q=Q, sigma=SIGMA, alpha=st.floats(-9, 3.5).map(lambda e: 1 + 10.0**e))
def test_nondecreasing_in_alpha(q, sigma, alpha):
    r = sgm_rdp(q, sigma, [alpha, alpha * 1.5, alpha * 3])
    for values, errs in ((r.pq, r.pq_err), (r.qp, r.qp_err)):
        assert np.all(np.diff(values) >= -(errs[:-1] + errs[1:]) - 1e-13 * values[1:])


@examples(150)
@given(q=Q, sigma=SIGMA, alpha=st.floats(2.0, 1e4).filter(lambda a: not a.is_integer()))
def test_fractional_orders_lie_between_the_exact_integer_neighbours(q, sigma, alpha):
    """phi(a) = (a - 1) R_a(P||Q) = log E_Q[(P/Q)^a] is convex in a and R_a is nondecreasing: between the integers k
    < a < k + 1, R_k <= R_a <= R_k+1, phi(a) <= the chord from k to k + 1 and >= the chord from k - 1 to k
    extended; the integer orders come from the binomial series (checked against mpmath above), the fractional one
    from the quadrature or the closed-form bracket: independent methods."""
    k = math.floor(alpha)
    orders = [k - 1, k, k + 1] if k >= 3 else [k, k + 1]
    r = sgm_rdp(q, sigma, [*orders, alpha])
    value, err = r.pq[-1], r.pq_err[-1] + 1e-13 * r.pq[-1]
    (lo, hi), (lo_err, hi_err) = r.pq[-3:-1], r.pq_err[-3:-1] + 1e-13 * r.pq[-3:-1]
    assert lo - lo_err - err <= value <= hi + hi_err + err
    phi = [(o - 1) * v for o, v in zip(orders, r.pq[:-1], strict=True)]
    slack = (alpha - 1) * err + sum((o - 1) * e for o, e in zip(orders, r.pq_err[:-1] + 1e-13 * r.pq[:-1],
                                                                strict=True))
    t = alpha - k
    assert (alpha - 1) * value <= (1 - t) * phi[-2] + t * phi[-1] + 2 * slack + 1e-13 * abs(phi[-1])
    if k >= 3:
        assert (alpha - 1) * value >= phi[1] + t * (phi[1] - phi[0]) - 2 * slack - 1e-13 * abs(phi[-1])


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1e-200), (0.5, 1e-30), (1e-300, 0.1), (1 - 2**-53, 1e-3),
                                          (0.5, 1e200), (1e-12, 1e30), (0.3, 1e-154)])
@pytest.mark.parametrize("alpha", [1 + 2**-52, 1.5, 2.0, 32.5, 1e4, 1e12 + 0.5, 1e200])
def test_absurd_scales_give_numbers_or_inf_never_nan(q, sigma, alpha):
    r = sgm_rdp(q, sigma, [alpha])
    for v in (r.pq[0], r.qp[0], r.pq_err[0], r.qp_err[0]):
        assert not math.isnan(v) and v >= 0
    assert math.isfinite(r.qp[0])  # R(Q||P) <= -log(1 - q)
    if math.isinf(r.pq[0]):  # beyond the float range: the Truth keeps the sign and the largest float below it
        assert alpha / (2 * sigma) / sigma + alpha * math.log(q) / (alpha - 1) > 1e300
        t = sgm_renyi_truth(q, sigma, alpha)
        assert t.value == t.upper == math.inf and t.lower == 1.7976931348623157e308


# ---- against independent references --------------------------------------------------------------------------------


@examples(40)
@given(q=Q, sigma=SIGMA, alpha=st.integers(2, 1500))
def test_integer_orders_equal_mpmaths_binomial_series_and_dp_accounting(q, sigma, alpha):
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    r = sgm_rdp(q, sigma, [alpha])
    ours, err = r.pq[0], r.pq_err[0]
    ref = float(binomial_reference(q, sigma, alpha))
    assert abs(ours - ref) <= err + 1e-13 * ref and err <= 1e-11 * ref + 1e-300
    # dp_accounting sums in log space with the k = 0, 1 terms: accurate to ~1e-17/(alpha - 1) absolute
    theirs = rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, np.array([float(alpha)]))[0]
    assert abs(ours - theirs) <= 1e-9 * ours + 1e-15 / (alpha - 1)


def test_integer_order_ten_thousand_against_the_series():
    r = sgm_rdp(1e-3, 1000.0, [10_000])  # lgamma differences would lose ~1e-11 here
    ref = float(binomial_reference(1e-3, 1000.0, 10_000, dps=30))
    assert abs(r.pq[0] - ref) <= r.pq_err[0] + 1e-13 * ref and r.pq_err[0] < 1e-12 * ref


@pytest.mark.parametrize("row", REFERENCE, ids=_ids)
def test_extreme_points_within_the_reported_error_of_the_integral_reference(row):
    q, sigma, alpha, *refs = row
    r = sgm_rdp(q, sigma, [alpha])
    for value, err, ref in zip((r.pq[0], r.qp[0]), (r.pq_err[0], r.qp_err[0]), map(float, refs), strict=True):
        assert abs(value - ref) <= err + 1e-13 * ref, (value, err, ref)
        assert err <= 1e-11 * ref  # and the error bar is useful
        t = _part_truth(value, err)
        assert t.lower <= ref <= t.upper


def _part_truth(value: float, err: float) -> Truth:
    pad = err + 1e-13 * value  # the interval sgm_renyi_truth gives each order
    return Truth(value, value - pad, value + pad, Method.SERIES, "")


@pytest.mark.parametrize("row", [REFERENCE[7]], ids=_ids)
def test_the_stored_reference_is_what_the_integral_computes(row):
    q, sigma, alpha, *refs = row
    for direction, stored in zip(("pq", "qp"), refs, strict=True):
        live = integral_reference(q, sigma, alpha, direction)
        assert abs(live / mpmath.mpf(stored) - 1) < 1e-15


@examples(12)
@given(q=Q, sigma=SIGMA, alpha=st.integers(2, 300))
def test_the_arb_enclosure_of_integer_orders_contains_the_series(q, sigma, alpha):
    ref = binomial_reference(q, sigma, alpha, dps=50)
    e = enclose_sgm(q, sigma, alpha, "pq", 128)
    with ctx.workprec(256):  # compare the exact ends, not their roundings to 53 bits
        assert e.lower <= arb(mpmath.nstr(ref, 45)) <= e.upper


# the rows whose enclosures take under 2 s (the others, alpha 1e3 to 1e4 with q near 1 or sigma near alpha, run
# acb.integral into the checker's 20 s cap: no enclosure, no claim)
@pytest.mark.parametrize("index", [0, 1, 2, 5, 7, 8, 9, 10, 12, 13, 15, 16, 17], ids=lambda i: _ids(REFERENCE[i]))
def test_the_arb_enclosures_contain_the_integral_reference(index):
    q, sigma, alpha, *refs = REFERENCE[index]
    for direction, ref in zip(("pq", "qp"), refs, strict=True):
        try:
            with deadline(10):
                e = enclose_sgm(q, sigma, alpha, direction, 64)
        except (NotEnclosable, DeadlineExceeded):
            continue  # allowed: no enclosure is no claim
        with ctx.workprec(256):  # compare the exact ends, not their roundings to 53 bits
            tol = arb(ref) * arb("1e-19")  # the reference's own 20 digits
            assert e.lower - tol <= arb(ref) <= e.upper + tol, (direction, e.lower, e.upper, ref)


# ---- memory caps: refuse before allocating -------------------------------------------------------------------------


def _fast(fn, *args, **kwargs):
    """fn's ResourceLimitError, refused before it allocated what it refused: the whole call's peak (tracemalloc, which
    sees NumPy's arrays too) stays below the memory cap, while the refused arrays are 100 MiB to 24 GiB."""
    tracemalloc.start()
    try:
        with pytest.raises(ResourceLimitError) as info:
            fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < memory_cap(), (fn.__name__, peak)
    return info.value


def test_the_issue_21_point_is_computed_in_little_memory():
    # `verify check wang2021.noisysgd_tcdp -p sigma=0.001 -p q=0.01 -p alpha=32.5` reached 15 GB and exited 4
    tracemalloc.start()
    try:
        t = sgm_renyi_truth(0.01, 0.001, 32.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50e6
    assert t.value == pytest.approx(32.5 / (2 * 0.001**2) + 32.5 * math.log(0.01) / 31.5, rel=1e-15)


def test_huge_parameter_points_raise_memory_limit_exceeded_quickly(monkeypatch):
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(4 << 20))
    assert isinstance(_fast(sgm_rdp, 0.3, 1.0, [1e6]), MemoryLimitExceeded)  # the binomial series' terms
    err = _fast(renyi_mixture_quad, [0.5, 0.5], [0.0, 1e6], [1.0, 1.0], [1.0], [0.0], [1.0], 2.5)
    assert isinstance(err, MemoryLimitExceeded)
    from verify.truth.projected_chain import AffineStep, lattice_laws
    assert isinstance(_fast(lattice_laws, 1.0, [AffineStep(1.0, 0.1, 0.3)], 0.0, 20_000), MemoryLimitExceeded)
    from verify.truth.pld import sgm_composed_epsilon
    _fast(sgm_composed_epsilon, 1e-5, 0.01, 0.8, 1000, eps_tolerance=1e-4)  # the PLD grid (or its cell cap)
    from verify.truth.grid1d import grid_renyi, noisy_gd_process
    p, p2 = (noisy_gd_process(lambda th, m=m: th - m, eta=0.1, sigma=1.0, K=2, R=400.0) for m in (0.0, 1.0))
    assert isinstance(_fast(grid_renyi, p, p2, 2.0), MemoryLimitExceeded)
    from verify.truth.renyi_estimator import geometric_tilt
    big = GaussianMixture(np.full(3000, 1 / 3000), np.zeros(3000), np.ones(3000))
    assert isinstance(_fast(geometric_tilt, big, big, 2.0), MemoryLimitExceeded)


def test_the_acb_enclosure_refuses_a_range_of_millions_of_widths_quickly(monkeypatch):
    """Refused from the panel count, before a single acb.integral call (each takes milliseconds)."""
    import verify.truth.mixture_arb as mixture_arb

    class NoIntegral(mixture_arb.acb):
        @staticmethod
        def integral(*_args, **_kwargs):
            raise AssertionError("acb.integral called: the range was integrated, not refused")

    monkeypatch.setattr(mixture_arb, "acb", NoIntegral)
    with pytest.raises(NotEnclosable, match="panels"):
        enclose_renyi_mixture(([0.5, 0.5], [0.0, 1.0], [1e-6, 1e-6]), ([1.0], [0.0], [1e-6]), 2.5, 64, (0.0, 2.5))


# ---- Monte-Carlo Rényi estimates are never below 0 -----------------------------------------------------------------


@examples(15)
@given(seed=st.integers(0, 10_000), alpha=st.floats(1.01, 8))
def test_monte_carlo_estimates_of_a_zero_divergence_are_clipped_at_zero(seed, alpha):
    g = GaussianMixture(np.array([1.0]), np.array([0.0]), np.array([1.0]))
    near = GaussianMixture(np.array([1.0]), np.array([1e-4]), np.array([1.0]))
    for t in (renyi_naive(near.log_pdf, g, alpha, n=200, seed=seed),
              renyi_importance(near.log_pdf, g.log_pdf, g, alpha, n=200, seed=seed)):
        assert 0 <= t.lower <= t.value <= t.upper
        if "estimate and lower end clipped" in t.detail:  # the raw estimate was below 0
            assert t.value == 0 == t.lower
        elif "lower end clipped" in t.detail:
            assert t.lower == 0 < t.value


def test_a_negative_raw_estimate_is_clipped_and_says_so():
    g = GaussianMixture(np.array([1.0]), np.array([0.0]), np.array([1.0]))
    near = GaussianMixture(np.array([1.0]), np.array([1e-3]), np.array([1.0]))
    found = [renyi_naive(near.log_pdf, g, 2.0, n=100, seed=seed) for seed in range(20)]
    clipped = [t for t in found if "estimate and lower end clipped" in t.detail]
    assert clipped and all(t.value == 0 == t.lower <= t.upper for t in clipped)
    mean = combine_replicates([Truth(-0.5, -0.9, -0.1, Method.MONTE_CARLO, "r", confidence=0.95, ess=10.0),
                               Truth(-0.4, -0.8, 0.3, Method.MONTE_CARLO, "r", confidence=0.95, ess=10.0)], "two",
                              nonnegative=True)
    assert mean.value == 0 == mean.lower <= mean.upper and "clipped" in mean.detail


def test_the_sampled_gaussian_monte_carlo_family_never_reports_a_negative_truth():
    from verify.families.mixtures import SAMPLED_GAUSSIAN_MC
    truth = SAMPLED_GAUSSIAN_MC.truths[next(iter(SAMPLED_GAUSSIAN_MC.truths))]
    for seed in range(6):  # q tiny: the exact value is ~1e-10, half the raw estimates fall below 0
        t = truth(alpha=2.0, q=1e-5, sigma=1.0, samples=2000, seed=seed)
        assert 0 <= t.lower <= t.value <= t.upper


def test_coupled_chain_estimates_are_never_below_zero():
    from verify.truth.montecarlo import renyi_coupled_chains
    rng = np.random.default_rng(3)
    pairs = []
    for _ in range(4):  # two chain mixtures of the same law, shifted by 1e-6: the exact divergence is ~1e-12
        centres = rng.normal(size=50)
        w, sds = np.full(50, 1 / 50), np.full(50, 1.0)
        pairs.append((GaussianMixture(w, centres + 1e-6 * rng.normal(size=50), sds), GaussianMixture(w, centres, sds)))
    t = renyi_coupled_chains(pairs, 2.0, "near-identical chains")
    assert 0 <= t.lower <= t.value <= t.upper

