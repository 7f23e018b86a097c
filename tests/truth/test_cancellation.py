"""Issue 21 §1, closed forms that cancel: every audited closed form against an independent reference at extreme
scales, and identical laws giving exactly 0.

The references are the naive textbook formulas (1 - m^K, (K - sum r^k)/(1 - r), log(sum ...), differences of normal
tails) evaluated by mpmath at a precision chosen to exceed their cancellation (hundreds to ~1500 digits). A truth's
float must match to 1e-12 relative (the float range permitting), and its Arb enclosure (`Truth.enclose`) must contain
the reference, tightly where the rewrite promises it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.families import family
from verify.families.dpsgd import HOLDER_ORDERS
from verify.families.mbcd import LIFTED_LAYER, MBCD_QUADRATIC, coupled_pair
from verify.model import Quantity
from verify.truth.anchored_chain import anchored_chain_holder, anchored_chain_renyi
from verify.truth.dpsgd_step import TwoClusterStep, dpsgd_step_renyi
from verify.truth.holder_hockey_stick import holder_hockey_stick
from verify.truth.linear_gaussian import (
    AffineStep,
    LinearGaussianPair,
    linear_gaussian_truth,
    renyi_linear_gaussian,
    renyi_mixture_series,
    renyi_trajectory,
)
from verify.truth.numbers import (
    Enclosure,
    NotEnclosable,
    arb_numbers,
    gap_power,
    geometric_gap,
    geometric_partials_gap,
)
from verify.truth.smoothing import smoothing_error
from verify.truth.subsampled_dp import sgm_delta, sgm_tradeoff

R = Quantity.RENYI
FEW = settings(max_examples=12, deadline=None, derandomize=True)
SOME = settings(max_examples=25, deadline=None, derandomize=True)


def log_uniform(lo: float, hi: float):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: float(10.0**e))


def log_int(lo: int, hi: int):
    return log_uniform(lo, hi).map(lambda v: max(lo, min(hi, int(round(v)))))


def exact(ball) -> mpmath.mpf:
    """The exact value of an exact Arb ball (an Enclosure end) as an mpf (no rounding)."""
    man, exp = ball.man_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def assert_float_close(value: float, ref, rel: float = 1e-12) -> None:
    f = float(ref)
    if math.isinf(f):
        assert value == f
    elif abs(f) < 1e-290:  # underflows (or subnormal): absolute
        assert abs(value - f) <= 1e-300
    else:
        assert value == pytest.approx(f, rel=rel)


def assert_encloses(enclosure, ref, rtol: float | None = 1e-20) -> None:
    """lower <= ref <= upper, exactly; with `rtol`, also a width within rtol of |ref|."""
    lo, hi = exact(enclosure.lower), exact(enclosure.upper)
    assert lo <= ref <= hi, (mpmath.nstr(lo, 20), mpmath.nstr(ref, 20), mpmath.nstr(hi, 20))
    if rtol is not None:
        with mpmath.workdps(60):
            assert hi - lo <= rtol * abs(ref) + mpmath.mpf(10) ** -3000


def assert_encloses_at(truth, ref, rtol: float, *precs: int) -> None:
    """Every enclosure the checker would ask for (`precs` in turn, as it escalates 64 -> 128 -> 512) contains ref,
    and one of them is within rtol."""
    for prec in precs:
        try:
            enc = truth.enclose(prec)
        except NotEnclosable:
            continue
        assert_encloses(enc, ref, rtol=None)
        lo, hi = exact(enc.lower), exact(enc.upper)
        with mpmath.workdps(60):
            if hi - lo <= rtol * abs(ref):
                return
    raise AssertionError(f"no enclosure within {rtol} of {mpmath.nstr(ref, 10)} at {precs} bits")


def digits(x: float) -> int:
    """Decimal digits below 1 that x needs (the scale of a cancellation at x)."""
    return max(0, -int(math.floor(math.log10(x)))) if x > 0 else 0


# ---- the gap helpers of verify.truth.numbers ------------------------------------------------------------------------

near_two = st.integers(20, 150).flatmap(lambda k: st.sampled_from([2 - mpmath.mpf(2) ** -k, 2 + mpmath.mpf(2) ** -k]))


@SOME
@given(x=st.one_of(log_uniform(1e-300, 1e3), near_two), count=log_int(1, 10**7), power=st.sampled_from([1, 2]))
def test_geometric_gap_helpers_against_naive_sums_at_high_precision(x, count, power):
    with mpmath.workdps(50):
        xm = mpmath.mpf(x)
        got = (gap_power(xm, count), geometric_gap(xm, count, power), geometric_partials_gap(xm, count, power))
    lost = 2 * max(digits(float(x)), digits(abs(float(2 - mpmath.mpf(x))) or 1e-300)) + 2 * len(str(count))
    with mpmath.workdps(80 + lost):
        m = 1 - mpmath.mpf(x)
        r = m**power
        g = (1 - r**count) / (1 - r) if r != 1 else mpmath.mpf(count)
        partial = (count - g) / (1 - r) if r != 1 else mpmath.mpf(count) * (count - 1) / 2
        refs = (m**count, g, partial)
        for value, ref in zip(got, refs, strict=True):
            assert abs(value - ref) <= mpmath.mpf(10) ** -40 * abs(ref) + mpmath.mpf(10) ** -(80 + lost)
    with arb_numbers(128) as N:
        if isinstance(x, mpmath.mpf):  # 2 +- 2^-k, exactly (a dyadic)
            man, exp = x.man_exp
            xb = N.mpf(int(man)) * N.mpf(2) ** int(exp)
        else:
            xb = N.mpf(x)
        balls = (gap_power(xb, count), geometric_gap(xb, count, power), geometric_partials_gap(xb, count, power))
        for ball, ref in zip(balls, refs, strict=True):
            lo, hi = exact(ball.lower()), exact(ball.upper())
            assert lo <= ref <= hi
            assert ball.is_zero() or ball.rel_accuracy_bits() >= 60


# ---- noisy GD on quadratics (verify.truth.noisy_gd_gaussian) ---------------------------------------------------------

def _noisy_gd_reference(alpha, sigma, eta, n, K, S, lam, start_var, d, dist):
    """Naive closed forms: gap (1 - m^K) S/(lam n), variance m^{2K} s0 + 2 eta sigma^2 (1 - m^{2K})/(1 - m^2)."""
    lost = 2 * digits(eta * lam) + 2 * digits(abs(2 - eta * lam) or 1e-300) + 2 * len(str(K))
    with mpmath.workdps(80 + lost):
        eta_, lam_ = mpmath.mpf(eta), mpmath.mpf(lam)
        m = 1 - eta_ * lam_
        r = m**2
        geo = (1 - r**K) / (1 - r) if r != 1 else mpmath.mpf(K)
        var = r**K * start_var + 2 * eta_ * mpmath.mpf(sigma) ** 2 * geo
        gap = abs(1 - m**K) * S / (lam_ * n)
        renyi = mpmath.mpf(alpha) * gap**2 / (2 * var)
        lsi = 1 / max(mpmath.mpf(start_var), var)
        risk = lam_ / 2 * (r**K * mpmath.mpf(dist) ** 2 + d * var)
        return {R: +renyi, Quantity.LSI_CONSTANT: +lsi, Quantity.EXCESS_RISK: +risk}


steps_and_curvatures = st.one_of(
    st.tuples(log_uniform(1e-300, 1e3), log_uniform(1e-3, 1e3)),
    log_uniform(1e-3, 1e3).map(lambda lam: (2 / lam, lam)),  # eta lam = 2 to rounding: m near -1
)


@FEW
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), sigma=log_uniform(1e-3, 1e3), step=steps_and_curvatures,
       n=log_int(1, 10**7), K=log_int(1, 10**7), S=log_uniform(1e-3, 1e3),
       start_var=st.one_of(st.just(0.0), log_uniform(1e-6, 1e6)), d=log_int(1, 1000), dist=log_uniform(1e-3, 1e3))
def test_noisy_gd_quadratic_truths_at_every_scale(alpha, sigma, step, n, K, S, start_var, d, dist):
    eta, lam = step
    fam = family("noisy_gd_quadratic")
    refs = _noisy_gd_reference(alpha, sigma, eta, n, K, S, lam, start_var, d, dist)
    params = {R: dict(alpha=alpha, sigma=sigma, eta=eta, n=n, K=K, S=S, lam=lam, start_var=start_var),
              Quantity.LSI_CONSTANT: dict(sigma=sigma, eta=eta, lam=lam, start_var=start_var, K=K),
              Quantity.EXCESS_RISK: dict(sigma=sigma, eta=eta, lam=lam, start_var=start_var, K=K, d=d, dist=dist)}
    for quantity, kw in params.items():
        truth = fam.truths[quantity](**kw)
        assert_float_close(truth.value, refs[quantity])
        assert_encloses(truth.enclose(128), refs[quantity])


def test_noisy_gd_tiny_step_regression():
    """The probe of issue 21: eta lam = 1e-45 (below what 50 digits hold of 1 - m^K) gave 5.0000002e-46, and at
    eta = 1e-55 exactly 0, each with an 'exact' interval excluding the truth alpha K eta S^2/(2 n^2 lam ...)."""
    for eta in (1e-45, 1e-55, 1e-300):
        truth = family("noisy_gd_quadratic").truth(alpha=2, sigma=1, eta=eta, n=10, K=100, S=1, lam=1, start_var=0)
        ref = _noisy_gd_reference(2, 1, eta, 10, 100, 1, 1, 0, 1, 0)[R]
        assert truth.lower <= float(ref) <= truth.upper
        assert_encloses(truth.enclose(64), ref, rtol=1e-15)


def test_identical_data_give_exactly_zero():
    truth = family("noisy_gd_quadratic").truth(alpha=3, sigma=1, eta=1e-3, n=10, K=50, S=0.0, lam=1, start_var=0.5)
    assert truth.value == truth.lower == truth.upper == 0.0
    enc = truth.enclose(64)
    assert exact(enc.lower) == exact(enc.upper) == 0


def _sum_gd_reference(alpha, sigma, eta, n, K, S, lam, d, dist):
    x = eta * n * lam
    lost = 3 * digits(x) + 3 * digits(abs(2 - x) or 1e-300) + 3 * len(str(K))
    with mpmath.workdps(100 + lost):
        e, x_ = mpmath.mpf(eta), mpmath.mpf(eta) * n * mpmath.mpf(lam)
        m = 1 - x_
        r = m**2
        decay = (1 - r**K) / (1 - r) if r != 1 else mpmath.mpf(K)
        partial = (K - decay) / (1 - r) if r != 1 else mpmath.mpf(K) * (K - 1) / 2
        noise = e**2 * mpmath.mpf(sigma) ** 2 * partial
        gap = e * S * ((1 - m**K) / (1 - m))
        renyi = mpmath.mpf(alpha) * gap**2 / (2 * e**2 * mpmath.mpf(sigma) ** 2 * decay)
        core = mpmath.mpf(dist) ** 2 * decay + d * noise
        grad = (n * mpmath.mpf(lam)) ** 2 * core / K
        excess = n * mpmath.mpf(lam) / 2 * core / K
        return {R: +renyi, Quantity.AVG_GRAD_SQ: +grad, Quantity.AVG_EXCESS_RISK: +excess}


@FEW
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), sigma=log_uniform(1e-3, 1e3),
       eta=log_uniform(1e-300, 1e3), n=log_int(1, 10**7), K=log_int(1, 10**7), S=log_uniform(1e-3, 1e3),
       lam=log_uniform(1e-3, 1e3), d=log_int(1, 1000), dist=log_uniform(1e-3, 1e3))
def test_noisy_gd_sum_quadratic_truths_at_every_scale(alpha, sigma, eta, n, K, S, lam, d, dist):
    fam = family("noisy_gd_sum_quadratic")
    refs = _sum_gd_reference(alpha, sigma, eta, n, K, S, lam, d, dist)
    util = dict(sigma=sigma, eta=eta, n=n, K=K, lam=lam, d=d, dist=dist)
    for quantity, kw in {R: dict(alpha=alpha, sigma=sigma, eta=eta, n=n, K=K, S=S, lam=lam),
                         Quantity.AVG_GRAD_SQ: util, Quantity.AVG_EXCESS_RISK: util}.items():
        truth = fam.truths[quantity](**kw)
        assert_float_close(truth.value, refs[quantity])
        assert_encloses(truth.enclose(128), refs[quantity])


# ---- PNSGD and contractive affine iterations (verify.families.pnsgd) ------------------------------------------------

@FEW
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), sigma=log_uniform(1e-3, 1e3),
       step=steps_and_curvatures, n=log_int(1, 3000), data=st.data(), Delta=log_uniform(1e-3, 1e3))
def test_pnsgd_and_pnmsgd_truths_at_every_scale(alpha, sigma, step, n, data, Delta):
    eta, lam = step
    t = data.draw(st.integers(1, n))
    lost = 2 * digits(eta * lam) + 2 * digits(abs(2 - eta * lam) or 1e-300) + 4 * len(str(n))
    with mpmath.workdps(80 + lost):
        c = 1 - mpmath.mpf(eta) * mpmath.mpf(lam)
        r, rn = c**2, c**n
        var1 = (1 - r**n) / (1 - r) if r != 1 else mpmath.mpf(n)
        one = +(alpha * mpmath.mpf(Delta) ** 2 * c ** (2 * (n - t)) / (2 * mpmath.mpf(sigma) ** 2 * var1))
        gap = mpmath.mpf(Delta) * c ** (n - t) * ((1 - rn**n) / (1 - rn) if rn != 1 else mpmath.mpf(n))
        var2 = (1 - r ** (n * n)) / (1 - r) if r != 1 else mpmath.mpf(n * n)
        multi = +(alpha * gap**2 / (2 * mpmath.mpf(sigma) ** 2 * var2))
    for name, index, ref in (("pnsgd_quadratic", "t", one), ("pnmsgd_quadratic", "i", multi)):
        truth = family(name).truths[R](alpha=alpha, sigma=sigma, eta=eta, lam=lam, n=n, Delta=Delta, **{index: t})
        assert_float_close(truth.value, ref)
        assert_encloses(truth.enclose(128), ref)


@FEW
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), sigma=log_uniform(1e-3, 1e3), K=log_int(1, 10**7),
       D0=log_uniform(1e-3, 1e3), kappa=st.one_of(st.floats(-3, 3), st.sampled_from(
           [1 - 2.0**-53, -1 + 2.0**-53, 1 + 2.0**-52, -1 - 2.0**-52, 1.0, -1.0, 0.0])))
def test_cni_affine_truth_near_unit_slope(alpha, sigma, K, D0, kappa):
    with mpmath.workdps(120 + 4 * len(str(K))):
        r = mpmath.mpf(kappa) ** 2
        ref = +(alpha * r**K * mpmath.mpf(D0) ** 2 / (2 * mpmath.mpf(sigma) ** 2
                                                     * ((1 - r**K) / (1 - r) if r != 1 else mpmath.mpf(K))))
    truth = family("cni_affine").truths[R](alpha=alpha, sigma=sigma, K=K, D0=D0, kappa=kappa)
    assert_float_close(truth.value, ref)
    assert_encloses(truth.enclose(128), ref)


# ---- DP-MBCD on quadratic blocks (verify.families.mbcd, verify.truth.linear_gaussian) -------------------------------

def _block_reference(alpha, eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0, dps=120):
    with mpmath.workdps(dps):
        eta_, s = mpmath.mpf(eta), min(mpmath.mpf(kappa_h) / beta, 1)
        a = 1 - eta_ * s * mu
        tau = 1 / (1 + eta_ * wd)
        gap = var = mpmath.mpf(0)
        for t in range(steps):
            k, j = divmod(t, m)
            noise = 2 * eta_ * mpmath.mpf(o_last if j == m - 1 else o) * mpmath.mpf(o_rate) ** k
            gap = tau * (a * gap + (eta_ * S / b if j == j0 else 0))
            var = tau**2 * (a**2 * var + noise)
        return +(alpha * gap**2 / (2 * var))


@FEW
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), eta=log_uniform(1e-300, 1e3),
       curv=st.tuples(log_uniform(1e-3, 1e3), log_uniform(1e-3, 1e3)), kappa_h=log_uniform(1e-3, 1e3),
       S=st.one_of(st.just(0.0), log_uniform(1e-3, 1e3)), b=st.integers(1, 10), m=st.integers(1, 4),
       steps=st.integers(1, 40), o=log_uniform(1e-3, 1e3), wd=st.one_of(st.just(0.0), log_uniform(1e-3, 1e3)),
       data=st.data())
def test_mbcd_block_truth_at_every_step_size(alpha, eta, curv, kappa_h, S, b, m, steps, o, wd, data):
    mu, beta = min(curv), max(curv)
    j0 = data.draw(st.integers(0, m - 1))
    kw = dict(alpha=alpha, eta=eta, mu=mu, beta=beta, kappa_h=kappa_h, S=S, b=b, m=m, steps=steps, o=o, o_last=o,
              o_rate=1.0, wd=wd, j0=j0)
    truth = MBCD_QUADRATIC.truths[R](**kw)
    ref = _block_reference(**kw)
    if S == 0:
        assert truth.value == 0.0 and exact(truth.enclose(64).upper) == 0
        return
    assert_float_close(truth.value, ref)
    assert_encloses_at(truth, ref, 1e-15, 128, 512)


def _coupled_reference(alpha, eta, lam, mu_c, S, b, m, K, o, j0, dps=1500):
    with mpmath.workdps(dps):
        e, lm, c = map(mpmath.mpf, (eta, lam, mu_c))
        v, shift = 2 * e * mpmath.mpf(o), e * mpmath.mpf(S) / b
        U, V = mpmath.matrix([[1 - e * (lm + c), e * c], [0, 1]]), mpmath.matrix([[1, 0], [e * c, 1 - e * c]])
        g, C = mpmath.matrix([[0], [0]]), mpmath.zeros(2, 2)
        for t in range(K * m):
            g = V * (U * g + mpmath.matrix([[shift if t % m == j0 else 0], [0]]))
            C = U * C * U.T + mpmath.matrix([[v, 0], [0, 0]])
            C = V * C * V.T + mpmath.matrix([[0, 0], [0, v]])
        det = C[0, 0] * C[1, 1] - C[0, 1] ** 2
        return +(alpha * (g[0] ** 2 * C[1, 1] - 2 * g[0] * g[1] * C[0, 1] + g[1] ** 2 * C[0, 0]) / det / 2)


@pytest.mark.parametrize("eta", [1e-60, 0.1, 3.0, 10.0, 100.0])
def test_mbcd_coupled_blocks_with_an_ill_conditioned_covariance(eta):
    """Large steps make the released (u, v) covariance nearly singular after the propagation cancels (eigenvalue
    ratio 1e-118 at eta = 10): at 50 digits the engine rounded the small eigenvalue to 0 and returned 4.92 for
    4.976 (eta = 10) and 49.99 for 53.01 (eta = 100), 'exact'. Now the digits double until they settle."""
    kw = dict(alpha=2, eta=eta, lam=1, mu_c=1, S=1, b=1, m=2, K=20, o=1, j0=0)
    truth = linear_gaussian_truth(coupled_pair(*list(kw.values())[1:]), 2)
    ref = _coupled_reference(**kw)
    assert_float_close(truth.value, ref)
    assert_encloses_at(truth, ref, 1e-8, 128, 512)


def test_mixture_series_keeps_tiny_divergences():
    """R of a mixture of shifts pointing apart, scale 1e-40: log(sum of terms ~ 1 + 1e-160) rounded to 0 at 50 digits;
    the expm1/log1p form keeps it (reference: the naive sum at 600 digits)."""
    for scale in (mpmath.mpf(10) ** -40, mpmath.mpf(10) ** -3, mpmath.mpf(1)):
        g = scale**2
        gram = [[g, -g / 2], [-g / 2, g]]
        with mpmath.workdps(600):
            naive = mpmath.log(sum(mpmath.binomial(3, k) * mpmath.mpf(1) / 8 * mpmath.exp(
                (k * (k - 1) * g + (3 - k) * (2 - k) * g) / 2 + k * (3 - k) * (-g / 2)) for k in range(4))) / 2
        with mpmath.workdps(50):
            value = renyi_mixture_series(gram, [0.5, 0.5], 3)
        assert abs(value - naive) <= mpmath.mpf(10) ** -30 * naive
        with arb_numbers(128) as N:
            ball = renyi_mixture_series([[N.mpf(x) for x in row] for row in gram], [0.5, 0.5], 3)
            assert exact(ball.lower()) <= naive <= exact(ball.upper())


@FEW
@given(dim=st.integers(1, 3), K=st.integers(1, 6), data=st.data())
def test_identical_runs_of_the_linear_gaussian_engine_give_exactly_zero(dim, K, data):
    entries = st.floats(-2, 2, allow_nan=False)
    steps = []
    for _ in range(K):
        A = [[data.draw(entries) for _ in range(dim)] for _ in range(dim)]
        b = [data.draw(entries) for _ in range(dim)]
        diag = [data.draw(st.floats(0, 2)) for _ in range(dim)]
        steps.append(AffineStep.make(A, b, [[diag[i] if i == j else 0.0 for j in range(dim)] for i in range(dim)]))
    start = [data.draw(entries) for _ in range(dim)]
    pair = LinearGaussianPair.make(steps, start_mean=start, start_mean_prime=start)
    with mpmath.workdps(50):
        assert renyi_linear_gaussian(pair, 2.0) == 0 and renyi_trajectory(pair, 3.0) == 0
    truth = linear_gaussian_truth(pair, 2.0)
    assert truth.value == truth.upper == 0.0
    enc = truth.enclose(64)
    assert exact(enc.lower) == exact(enc.upper) == 0


def test_mbcd_contraction_and_lipschitz_constants_are_formed_exactly():
    """|1 - eta gamma rho^2| at eta gamma rho^2 = 1 - 2^-60-ish (four floats): exactly, not 1 minus a rounded
    product."""
    eta, gamma, rho = 1 + 2.0**-40, 1 - 2.0**-30, 1 + 2.0**-31
    ref = abs(1 - Fraction(eta) * Fraction(gamma) * Fraction(rho) ** 2)
    truth = LIFTED_LAYER.truths[Quantity.GRADIENT_MAP_LIPSCHITZ](eta=eta, gamma_lag=gamma, rho=rho, d_in=1)
    with mpmath.workdps(100):
        ref_mp = mpmath.mpf(ref.numerator) / ref.denominator
    assert_float_close(truth.value, ref_mp, rel=1e-15)
    assert_encloses(truth.enclose(128), ref_mp)


# ---- the shifted divergence of Lemma 21 (verify.families.shifted) --------------------------------------------------

@SOME
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), s=log_uniform(1e-3, 1e3),
       gap=log_uniform(1e-300, 1e3), kappa=st.floats(-3, 3).filter(lambda k: k != 0),
       db=st.one_of(st.just(0.0), st.floats(-1e3, 1e3)), rel=st.floats(-1e-10, 1e-10))
def test_contraction_shift_excess_is_exact(alpha, s, gap, kappa, db, rel):
    """z chosen so that z + |db| is within 1e-10 (relative) of |kappa gap + db|: the excess cancels nearly all."""
    image = abs(Fraction(kappa) * Fraction(gap) + Fraction(db))
    z = max(0.0, float((image - abs(Fraction(db))) * (1 + Fraction(rel))))
    excess = max(Fraction(0), image - abs(Fraction(db)) - Fraction(z))
    ref_q = Fraction(alpha) * excess**2 / (2 * Fraction(kappa) ** 2 * Fraction(s) ** 2)
    with mpmath.workdps(100):
        ref = mpmath.mpf(ref_q.numerator) / ref_q.denominator
    truth = family("contraction_gaussian").truths[Quantity.SHIFTED_RENYI](alpha=alpha, s=s, gap=gap, z=z,
                                                                          kappa=kappa, db=db)
    assert_float_close(truth.value, ref)
    if excess == 0:
        assert truth.value == 0.0
    assert_encloses(truth.enclose(64), ref, rtol=1e-15)


# ---- the anchored two-step chain (verify.truth.anchored_chain) -----------------------------------------------------

def _anchored_reference(alpha: int, q, eta, p: int = 1):
    """log E_xi[M(Delta)^p] / (p (alpha - 1)), M expanded naively and E[e^{m Delta^2}] from erf/erfi/Phi, at a
    precision beyond log(1 + tiny)'s cancellation."""
    dps = 80 + 2 * p * digits(q) + 2 * digits(eta)
    with mpmath.workdps(dps):
        q_, eta_ = mpmath.mpf(q), mpmath.mpf(eta)
        coef: dict[int, mpmath.mpf] = {}
        for k in range(alpha + 1):
            mk = k * (k - 1) // 2
            coef[mk] = coef.get(mk, 0) + mpmath.binomial(alpha, k) * (1 - q_) ** (alpha - k) * q_**k
        series = dict(coef)  # (sum c_m x^m)^p by repeated multiplication
        for _ in range(p - 1):
            new = {}
            for a, ca in series.items():
                for b, cb in coef.items():
                    new[a + b] = new.get(a + b, 0) + ca * cb
            series = new
        r = 1 / eta_
        if r > 1e150:  # mpmath's erfc overflows a float there: the asymptotic tail (relative error < 15/r^6)
            lower_tail = mpmath.exp(-r * r / 2) / (r * mpmath.sqrt(2 * mpmath.pi)) * (1 - 1 / r**2 + 3 / r**4)
        else:
            lower_tail = mpmath.ncdf(-r)
        total = mpmath.mpf(0)
        for mm, c in series.items():
            a = 1 - 2 * mm * eta_**2
            tail = mpmath.exp(mm) * 2 * lower_tail
            if a > 0:
                inside = mpmath.erf(r * mpmath.sqrt(a / 2)) / mpmath.sqrt(a)
            elif a < 0:
                inside = mpmath.erfi(r * mpmath.sqrt(-a / 2)) / mpmath.sqrt(-a)
            else:
                inside = 2 * r / mpmath.sqrt(2 * mpmath.pi)
            total += c * (tail + inside)
        return +(mpmath.log(total) / (p * (alpha - 1)))


@FEW
@given(alpha=st.integers(2, 6), q=st.one_of(log_uniform(1e-300, 1.0), st.just(1.0)), eta=log_uniform(1e-300, 1e3),
       p=st.integers(1, 3))
def test_anchored_chain_at_tiny_rates_and_steps(alpha, q, eta, p):
    """q or eta small: the divergence ~ q^2 eta^2 and log(1 + it) rounded to 0 at 50 digits (q = 1e-30: 0 for
    1.22e-60); now log1p of the moments minus 1."""
    ref = _anchored_reference(alpha, q, eta, p)
    with mpmath.workdps(50):
        value = anchored_chain_renyi(alpha, mpmath.mpf(q), mpmath.mpf(eta)) if p == 1 else anchored_chain_holder(
            alpha, mpmath.mpf(q), mpmath.mpf(eta), p)
    assert abs(value - ref) <= mpmath.mpf(10) ** -30 * abs(ref) + mpmath.mpf(10) ** -3000
    with arb_numbers(128) as N:
        ball = anchored_chain_renyi(alpha, N.mpf(q), N.mpf(eta)) if p == 1 else anchored_chain_holder(
            alpha, N.mpf(q), N.mpf(eta), p)
        assert exact(ball.lower()) <= ref <= exact(ball.upper())
        assert ball.rel_accuracy_bits() >= 60


# ---- the subsampled Gaussian's hockey stick (verify.truth.subsampled_dp) -------------------------------------------

def _sgm_naive(eps, q, s, dps):
    with mpmath.workdps(dps):
        eps, q, s = map(mpmath.mpf, (eps, q, s))
        e, out = mpmath.exp(eps), [mpmath.mpf(0)]
        if e - (1 - q) > 0:
            x = s**2 * mpmath.log((e - (1 - q)) / q) + mpmath.mpf(1) / 2
            mass = mpmath.ncdf(-x / s)
            out.append((1 - q) * mass + q * mpmath.ncdf(-(x - 1) / s) - e * mass)
        if 1 / e - (1 - q) > 0:
            x = s**2 * mpmath.log((1 / e - (1 - q)) / q) + mpmath.mpf(1) / 2
            out.append(mpmath.ncdf(x / s) - e * ((1 - q) * mpmath.ncdf(x / s) + q * mpmath.ncdf((x - 1) / s)))
        return max(out)


def _sgm_reference(eps, q, s):
    """The naive hockey stick at a precision doubled until two agree to 1e-30."""
    dps = 100 + 2 * digits(eps) + 2 * digits(q)
    previous = _sgm_naive(eps, q, s, dps)
    while True:
        dps *= 2
        value = _sgm_naive(eps, q, s, dps)
        if abs(value - previous) <= mpmath.mpf(10) ** -30 * abs(value) or dps > 20000:
            return value
        previous = value


@FEW
@given(eps=log_uniform(1e-300, 50.0), q=st.one_of(log_uniform(1e-300, 1.0), st.just(1.0)),
       sigma=log_uniform(1e-2, 1e4))
def test_subsampled_gaussian_delta_at_every_scale(eps, q, sigma):
    """e^eps - (1 - q) at eps, q ~ 1e-60 rounded to 0 at 50 digits; P(S) - e^eps Q(S) cancels deep in the tails."""
    ref = _sgm_reference(eps, q, sigma)
    with mpmath.workdps(50):
        value = sgm_delta(eps, q, sigma)
    assert abs(value - ref) <= mpmath.mpf(10) ** -20 * abs(ref) + mpmath.mpf(10) ** -100000
    for prec in (128, 1024):
        try:
            with arb_numbers(prec) as N:
                enc = Enclosure.of(sgm_delta(N.mpf(eps), N.mpf(q), N.mpf(sigma)), "hockey stick", prec)
            assert_encloses(enc, ref, rtol=None)
            break
        except NotEnclosable:  # the sign of e^-eps - (1 - q) undecided: q + expm1(-eps) within 2^-prec of 0
            with mpmath.workdps(60):
                assert abs(q + mpmath.expm1(-mpmath.mpf(eps))) <= mpmath.mpf(2) ** (20 - prec) * q


def test_subsampled_gaussian_regressions():
    """eps = 1e-60, q = 1e-50 (the set {x > x_hi} from e^eps - (1 - q) = 1e-50 + 1e-60), and the trade-off at a
    type-I error 1e-60 (Phi^-1(1 - x) of a 1 - x that rounds to 1)."""
    ref = _sgm_reference(1e-60, 1e-50, 1.0)
    with mpmath.workdps(50):
        assert abs(sgm_delta(1e-60, 1e-50, 1.0) - ref) <= mpmath.mpf(10) ** -30 * ref
        tradeoff = sgm_tradeoff(mpmath.mpf(10) ** -60, 0.1, 1.0)
    with mpmath.workdps(300):
        t = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(10) ** -60)
        q_order = (1 - mpmath.mpf(0.1)) * mpmath.ncdf(t) + mpmath.mpf(0.1) * mpmath.ncdf(t - 1)
    assert tradeoff <= q_order * (1 + mpmath.mpf(10) ** -30) and tradeoff > 1 - 1e-6


# ---- DP-SGD's one step, identical laws (verify.truth.dpsgd_step) ----------------------------------------------------

@FEW
@given(q=log_uniform(1e-6, 1.0), s=log_uniform(1e-2, 1e2), n_a=st.integers(0, 20), n_b=st.integers(0, 20),
       g_a=st.floats(-1, 1), g_b=st.floats(-1, 1), rule=st.sampled_from(["sum", "mean"]),
       alpha=log_uniform(1e-6, 1e2).map(lambda a: 1 + a))
def test_dpsgd_step_on_identical_laws_is_exactly_zero(q, s, n_a, n_b, g_a, g_b, rule, alpha):
    """D' = D u {x*} with x* moving nothing (sum rule: g* = 0; mean rule: every gradient 0): the quadrature of two equal
    mixtures gave ~1e-31, 'exact'; it is 0."""
    if rule == "mean":
        g_a = g_b = 0.0
    truth = dpsgd_step_renyi(TwoClusterStep(q, s, 0.0, n_a, g_a, n_b, g_b, rule), alpha)
    assert truth.value == truth.lower == truth.upper == 0.0
    enc = truth.enclose(64)
    assert exact(enc.lower) == exact(enc.upper) == 0


def test_dpsgd_step_identity_test_is_exact():
    assert TwoClusterStep(1.0, 1.0, 0.125, 1, 0.375, 2, 0.0, "mean").identical_laws()  # g* = mean(D) at q = 1
    assert not TwoClusterStep(1.0, 1.0, 0.1, 1, 0.3, 2, 0.0, "mean").identical_laws()  # fl(0.3)/3 != fl(0.1)
    assert not TwoClusterStep(1.0, 1.0, 0.125, 1, 0.375, 2, 2.0**-60, "mean").identical_laws()
    assert not TwoClusterStep(0.5, 1.0, 0.0, 3, 0.0, 2, 1e-300, "mean").identical_laws()
    assert not TwoClusterStep(0.5, 1.0, 1e-300, 3, 0.4, 2, -0.2, "sum").identical_laws()
    assert TwoClusterStep(0.5, 1.0, 0.0, 0, 0.4, 0, -0.2, "mean").identical_laws()  # D empty, g* = 0


# ---- the Hölder orders, smoothing, the Hölder hockey stick --------------------------------------------------------

@SOME
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), p=log_uniform(1e-12, 1e6).map(lambda a: 1 + a),
       i=st.integers(0, 200))
def test_holder_orders_against_the_iterated_map(alpha, p, i):
    with mpmath.workdps(400):
        order = mpmath.mpf(alpha)
        for _ in range(i):
            order = (p * order - 1) / (p - 1)
    truth = HOLDER_ORDERS.truths[Quantity.COMPOSITION_ORDER](alpha=alpha, p_holder=p, steps_back=i)
    assert_float_close(truth.value, order)
    assert_encloses(truth.enclose(128), order, rtol=1e-25)


@SOME
@given(L=log_uniform(1e-3, 1e3), lam=log_uniform(1e-300, 1e300), d=log_int(1, 10**6))
def test_smoothing_error_at_every_dimension(L, lam, d):
    with mpmath.workdps(120):
        ref = +(mpmath.mpf(L) * lam * mpmath.sqrt(2) * mpmath.gamma((mpmath.mpf(d) + 1) / 2)
                / mpmath.gamma(mpmath.mpf(d) / 2))
    with mpmath.workdps(50):
        value = smoothing_error(mpmath.mpf(L), mpmath.mpf(lam), d)
    assert abs(value - ref) <= mpmath.mpf(10) ** -40 * ref
    with arb_numbers(64) as N:
        ball = smoothing_error(N.mpf(L), N.mpf(lam), d)
        assert exact(ball.lower()) <= ref <= exact(ball.upper()) and ball.rel_accuracy_bits() >= 50


def test_holder_hockey_stick_resolves_a_tiny_value():
    """sigma = 1e40, p = 1e300: H ~ the total variation 1/(sigma sqrt(2 pi)) = 4e-41, next to tails ~ 1/2; 128 bits
    gave a lower end of 0. The proven lower end must now be positive and below the Gaussian hockey stick."""
    low, high, _ = holder_hockey_stick(1e40, 0.0, 1e300)
    with mpmath.workdps(200):
        tv = 2 * mpmath.ncdf(mpmath.mpf(1) / (2 * mpmath.mpf(1e40))) - 1
    assert 0 < low <= float(tv) * (1 + 1e-12) and high >= float(tv) * (1 - 1e-12)


@SOME
@given(alpha=log_uniform(1e-12, 1e6).map(lambda a: 1 + a), d1=st.floats(-1e3, 1e3), d2=st.floats(-1e3, 1e3),
       s=log_uniform(1e-100, 1e100))
def test_gaussian_triple_at_alpha_near_one_and_tiny_gaps(alpha, d1, d2, s):
    """Equal variances: the general two-variance form's log-determinant (0 up to rounding) over 2 (alpha - 1) swamped a
    tiny mean term; d1 = -d2 gives exactly 0."""
    ref_q = Fraction(alpha) * (Fraction(d1) + Fraction(d2)) ** 2 / (2 * Fraction(s) ** 2)
    with mpmath.workdps(100):
        ref = mpmath.mpf(ref_q.numerator) / ref_q.denominator
    truth = family("gaussian_triple").truths[R](alpha=alpha, d1=d1, d2=d2, s=s)
    assert_float_close(truth.value, ref)
    if ref_q == 0:
        assert truth.value == 0.0 and exact(truth.enclose(64).upper) == 0
    else:
        assert_encloses(truth.enclose(128), ref)


def test_noisy_gd_dp_truths_enclose_in_arb():
    """The (eps, delta) truth's mu = gap/sqrt(var) is taken in the active number system (num().sqrt)."""
    truth = family("noisy_gd_quadratic").truths[Quantity.DP_EPSILON](sigma=1, eta=1e-3, n=10, K=50, S=1, lam=1,
                                                                      start_var=0, delta=1e-5)
    enc = truth.enclose(128)
    assert exact(enc.lower) <= mpmath.mpf(truth.value) * (1 + mpmath.mpf(10) ** -12)
    assert exact(enc.upper) >= mpmath.mpf(truth.value) * (1 - mpmath.mpf(10) ** -12)


def _coupled_gaps(eta, lam, mu_c, S, b, m, K, o, dps):
    """The released mean gaps g_j (record in batch j) and the shared covariance of mbcd_coupled, at `dps` digits."""
    with mpmath.workdps(dps):
        e, lm, c = map(mpmath.mpf, (eta, lam, mu_c))
        v, shift = 2 * e * mpmath.mpf(o), e * mpmath.mpf(S) / b
        U, V = mpmath.matrix([[1 - e * (lm + c), e * c], [0, 1]]), mpmath.matrix([[1, 0], [e * c, 1 - e * c]])
        gaps = []
        for j0 in range(m):
            g, C = mpmath.matrix([[0], [0]]), mpmath.zeros(2, 2)
            for t in range(K * m):
                g = V * (U * g + mpmath.matrix([[shift if t % m == j0 else 0], [0]]))
                C = V * (U * C * U.T + mpmath.matrix([[v, 0], [0, 0]])) * V.T + mpmath.matrix([[0, 0], [0, v]])
            gaps.append(g)
        return gaps, C


@pytest.mark.parametrize("S", [1e-40, 1e-3, 1.0])
def test_shuffled_coupled_mixture_keeps_tiny_divergences(S):
    """mbcd_coupled_shuffled at a tiny record difference: the series' log(1 + 1e-80) was 0 (or negative) at 50
    digits. Reference: the Gram matrix and the naive log of the positive series at 400 digits."""
    alpha, m = 3, 2
    kw = dict(eta=0.1, lam=1.0, mu_c=0.5, S=S, b=1, m=m, K=2, o=1.0)
    gaps, C = _coupled_gaps(**kw, dps=400)
    with mpmath.workdps(400):
        inv = C**-1
        gram = [[(gaps[i].T * inv * gaps[j])[0, 0] for j in range(m)] for i in range(m)]
        total = mpmath.mpf(0)
        for k in range(alpha + 1):  # compositions (k, alpha - k) of alpha over the two assignments
            n = (k, alpha - k)
            quad = sum(n[i] * n[j] * gram[i][j] for i in range(m) for j in range(m))
            diag = sum(n[j] * gram[j][j] for j in range(m))
            total += mpmath.binomial(alpha, k) / mpmath.mpf(2) ** alpha * mpmath.exp((quad - diag) / 2)
        ref = mpmath.log(total) / (alpha - 1)
    truth = family("mbcd_coupled_shuffled").truths[R](alpha=alpha, **kw)
    assert_float_close(truth.value, ref, rel=1e-10)
    assert_encloses(truth.enclose(128), ref, rtol=1e-15)
