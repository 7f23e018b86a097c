"""Mixture families against independent references: the 30-digit mpmath quadrature of verify.truth.mixture,
direct mpmath integration written here, the research note's tables, and the Balle et al. subsampling identity."""

import mpmath
import pytest

import verify
from verify import Verdict
from verify.truth.mixture import renyi_mixture_1d
from verify.truth.mixture_quad import renyi_mixture_quad
from verify.truth.subsampled_dp import sgm_delta, sgm_dp_epsilon

CASES = [
    ([0.5, 0.5], [0, 0], [1, 2**0.5], [0.5, 0.5], [0, 1], [1, 2**0.5], 2.0),
    ([0.99, 0.01], [0, 1], [1.1, 1.1], [1.0], [0], [1.1], 32.0),
    ([0.25] * 4, [0, 0, 0, 0], [1, 2**0.5, 3**0.5, 2], [0.25] * 4, [2, 2, 2, 2], [1, 2**0.5, 3**0.5, 2], 10.0),
    ([0.3, 0.7], [-1, 2], [0.5, 1.5], [1.0], [0.3], [2.0], 2.5),
]


@pytest.mark.parametrize("case", CASES)
def test_fast_quadrature_encloses_the_30_digit_reference(case):
    fast, ref = renyi_mixture_quad(*case), renyi_mixture_1d(*case)
    assert fast.lower <= ref.value <= fast.upper
    assert fast.upper - fast.lower < 1e-9 * max(1.0, abs(ref.value))


def test_stop_pnsgd_one_order_matches_the_research_table():
    """Research §3.3 (d = 1, alpha = 2, L = 1, sigma = 2) lists R(P || Q) with P the unshifted mixture."""
    for n, t, expected in [(2, 1, 0.6261), (2, 2, 0.1592), (3, 1, 0.4757), (4, 1, 0.3878), (4, 4, 0.0259)]:
        var = [T for T in range(1, n + 1)]
        one_order = renyi_mixture_quad([1 / n] * n, [0] * n, [v**0.5 for v in var], [1 / n] * n,
                                     [1.0 * (T >= t) for T in var], [v**0.5 for v in var], 2.0)
        assert one_order.value == pytest.approx(expected, abs=6e-5)
        both = verify.family("stop_pnsgd_linear_1d").truth(alpha=2, sigma=2, L=1, n=n, t=t)
        assert both.value >= one_order.value - 1e-12


def test_stop_pnsgd_printed_bound_fails_at_n1():
    r = verify.check("feldman2018.theorem26", alpha=2, sigma=2.0, L=1.0, n=1, t=1)
    assert r.verdict is Verdict.VIOLATED and r.bound == 0
    assert r.truth.value == pytest.approx(2 * 2 * 1 / 4, rel=1e-14)  # one Gaussian step: 2 alpha L^2/sigma^2


def test_skip_pnsgd_table():
    fam = verify.family("skip_pnsgd_linear_1d")
    for n, t, expected in [(2, 2, 2.1738), (5, 3, 0.9505), (10, 6, 0.5163)]:
        assert fam.truth(alpha=2, sigma=1, L=1, n=n, t=t).value == pytest.approx(expected, abs=6e-5)


def test_sgm_delta_against_direct_integration():
    mpmath.mp.dps = 30
    q, s, e = mpmath.mpf("0.1"), mpmath.mpf("1.1"), mpmath.mpf("0.3")

    def p(x):
        return (1 - q) * mpmath.npdf(x, 0, s) + q * mpmath.npdf(x, 1, s)

    x_hi = s**2 * mpmath.log((mpmath.exp(e) - (1 - q)) / q) + mpmath.mpf(1) / 2
    direct = mpmath.quad(lambda x: p(x) - mpmath.exp(e) * mpmath.npdf(x, 0, s), [x_hi, mpmath.inf])
    assert abs(sgm_delta(e, q, s) - direct) < mpmath.mpf(10) ** -25
    mpmath.mp.dps = 15


def test_sgm_at_q1_is_the_gaussian_mechanism():
    gauss = verify.family("noisy_gd_sum_quadratic")  # K = 1 step is a Gaussian mechanism with mu = S/sigma
    eps_gauss = gauss.truth("dp_epsilon", sigma=0.8, eta=0.1, n=1, K=1, S=1.0, lam=1.0, delta=1e-4).value
    assert float(sgm_dp_epsilon(1e-4, 1, 0.8)) == pytest.approx(eps_gauss, rel=1e-12)


def test_subsampling_lemma_is_tight_for_the_sampled_gaussian():
    """P - e^{eps'} Q = q (M - e^eps Q) for P = (1-q) Q + q M: the remove direction meets the lemma exactly."""
    r = verify.check("wang2021.subsampling_lemma", q=0.05, sigma=0.9, delta=1e-6)
    assert r.verdict is Verdict.HOLDS and r.ratio == pytest.approx(1.0, abs=1e-12)


def test_lecture_noisysgd_rate_is_below_the_exact_sgm_rdp():
    r = verify.check("wang2021.noisysgd_tcdp", alpha=2, q=0.01, sigma=1.1)
    assert r.truth.value == pytest.approx(float(mpmath.log(1 + 0.01**2 * (mpmath.exp(1 / 1.21) - 1))), rel=1e-12)
    assert r.verdict is Verdict.VIOLATED


def test_lemma25_large_c_counterexample_by_hand():
    """alpha = 2: E_nu[(mu/nu)^2] = sum_ij w_i w_j exp(gap_i gap_j / s^2)."""
    r = verify.check("feldman2018.lemma25.large_c", alpha=2, w=0.01, gap1=0.0, gap2=4.0, s=1.0)
    by_hand = mpmath.log(0.99**2 + 2 * 0.99 * 0.01 + 0.01**2 * mpmath.exp(16))
    assert r.truth.value == pytest.approx(float(by_hand), rel=1e-10)
    assert r.bound == pytest.approx(17 * 0.01 * 16) and r.verdict is Verdict.VIOLATED


def test_weak_monte_carlo_evidence_is_inconclusive():
    """50 samples at alpha = 32: the checker refuses to decide, whatever side the bound is on."""
    from verify.checker import decide
    from verify.model import Direction
    weak = verify.family("sampled_gaussian_mc").truth(alpha=32, q=0.01, sigma=1.1, samples=50, seed=0)
    assert decide(Direction.UPPER, weak.value * 10, weak) is Verdict.INCONCLUSIVE
    assert decide(Direction.UPPER, weak.value / 10, weak) is Verdict.INCONCLUSIVE


def test_tilted_estimate_brackets_the_exact_value_and_decides():
    mc = verify.family("sampled_gaussian_mc").truth(alpha=16, q=0.01, sigma=1.1, samples=100_000, seed=3)
    exact = verify.family("sampled_gaussian").truth(alpha=16, q=0.01, sigma=1.1)
    assert mc.lower <= exact.value <= mc.upper
    r = verify.check("wang2021.noisysgd_tcdp", family="sampled_gaussian_mc", alpha=16, q=0.01, sigma=1.1,
                     samples=100_000, seed=3)
    # the CI excludes the bound (the float filter says VIOLATED), but statistics are not a proof: INCONCLUSIVE
    assert r.truth.method is verify.Method.MONTE_CARLO and r.certificate.filter_verdict is Verdict.VIOLATED
    assert r.verdict is Verdict.INCONCLUSIVE


def test_naive_estimator_would_hide_a_violation():
    """A wrong bound of 0.01 at alpha = 16 passes against the naive estimate (~0.0014) but fails exactly (1.70):
    why the catalog never uses the naive family."""
    from verify.checker import decide
    from verify.model import Direction
    naive = verify.family("sampled_gaussian_naive_mc").truth(alpha=16, q=0.01, sigma=1.1, samples=100_000, seed=3)
    exact = verify.family("sampled_gaussian").truth(alpha=16, q=0.01, sigma=1.1)
    assert decide(Direction.UPPER, 0.01, naive) is Verdict.HOLDS
    assert decide(Direction.UPPER, 0.01, exact) is Verdict.VIOLATED
    assert exact.value / naive.value > 100
