"""The linear-Gaussian engine re-derives the hand-made Gaussian families (they must agree to rounding), releases
blocks and trajectories correctly, and encloses itself rigorously."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.errors import ParameterError
from verify.families import family
from verify.truth.linear_gaussian import (
    AffineStep,
    LinearGaussianPair,
    linear_gaussian_truth,
    renyi_linear_gaussian,
    renyi_trajectory,
)

# dyadic steps and curvatures: 1 - eta lam is then exact in float64, as the families compute it at 50 digits (a
# rounded 1 - eta lam near 0 would be amplified by its powers, c^(2n))
dyadic_eta = st.integers(1, 63).map(lambda k: k / 64)
dyadic_lam = st.integers(2, 24).map(lambda k: k / 16)


def _noisy_gd(sigma, eta, n, K, S, lam, start_var) -> LinearGaussianPair:
    """Chourasia et al. Alg. 1 on (lam/2)(theta - x)^2: theta <- (1 - eta lam) theta + eta lam mean(D) + noise;
    the replaced record moves the mean by S/(lam n), so the offsets differ by eta S / n."""
    step = AffineStep.make([[1 - eta * lam]], [eta * S / n], [[2 * eta * sigma**2]], b_prime=[0.0])
    return LinearGaussianPair.make([step] * K, start_cov=[[start_var]])


@settings(max_examples=25, deadline=None)
@given(alpha=st.floats(1.01, 50), sigma=st.floats(0.1, 5), eta=dyadic_eta, n=st.integers(1, 50),
       K=st.integers(1, 40), S=st.floats(0.01, 5), lam=dyadic_lam, start_var=st.floats(0, 3))
def test_noisy_gd_quadratic_family_is_re_derived(alpha, sigma, eta, n, K, S, lam, start_var):
    truth = family("noisy_gd_quadratic").truth(alpha=alpha, sigma=sigma, eta=eta, n=n, K=K, S=S, lam=lam,
                                               start_var=start_var)
    engine = linear_gaussian_truth(_noisy_gd(sigma, eta, n, K, S, lam, start_var), alpha)
    assert engine.value == pytest.approx(truth.value, rel=1e-13)


@settings(max_examples=25, deadline=None)
@given(alpha=st.floats(1.01, 50), sigma=st.floats(0.1, 5), eta=dyadic_eta, lam=dyadic_lam,
       n=st.integers(1, 30), data=st.data(), Delta=st.floats(0, 4))
def test_pnsgd_quadratic_family_is_re_derived(alpha, sigma, eta, lam, n, data, Delta):
    """PNSGD: w <- (1 - eta lam) w + eta lam x_k + N(0, eta^2 sigma^2); record t's offset differs by eta Delta."""
    t = data.draw(st.integers(1, n))
    steps = [AffineStep.make([[1 - eta * lam]], [eta * Delta if k == t else 0.0], [[eta**2 * sigma**2]],
                             b_prime=[0.0]) for k in range(1, n + 1)]
    truth = family("pnsgd_quadratic").truth(alpha=alpha, sigma=sigma, eta=eta, lam=lam, n=n, t=t, Delta=Delta)
    engine = linear_gaussian_truth(LinearGaussianPair.make(steps), alpha)
    assert engine.value == pytest.approx(truth.value, rel=1e-13, abs=1e-300)


@settings(max_examples=25, deadline=None)
@given(alpha=st.floats(1.01, 50), sigma=st.floats(0.1, 5), K=st.integers(1, 60), D0=st.floats(0, 5),
       kappa=st.floats(-1.5, 1.5))
def test_cni_affine_family_is_re_derived(alpha, sigma, K, D0, kappa):
    """Two starts at distance D0 (point masses), then X <- kappa X + b + N(0, sigma^2) with the same b."""
    step = AffineStep.make([[kappa]], [0.3], [[sigma**2]])
    pair = LinearGaussianPair.make([step] * K, start_mean=[D0], start_mean_prime=[0.0])
    truth = family("cni_affine").truth(alpha=alpha, sigma=sigma, K=K, D0=D0, kappa=kappa)
    assert linear_gaussian_truth(pair, alpha).value == pytest.approx(truth.value, rel=1e-13, abs=1e-300)


def test_decoupled_blocks_release_like_their_own_one_dimensional_chain():
    """Diagonal dynamics: releasing block 1 of a 2-D chain equals the 1-D chain of block 1."""
    two = AffineStep.make([[0.9, 0.0], [0.0, 0.5]], [0.2, 1.0], [[0.3, 0.0], [0.0, 2.0]], b_prime=[0.0, -1.0])
    one = AffineStep.make([[0.9]], [0.2], [[0.3]], b_prime=[0.0])
    with mpmath.workdps(50):
        block = renyi_linear_gaussian(LinearGaussianPair.make([two] * 7), 3.0, release=[[1.0, 0.0]])
        alone = renyi_linear_gaussian(LinearGaussianPair.make([one] * 7), 3.0)
        assert abs(block - alone) < mpmath.mpf(10) ** -40 * alone


def test_coupled_blocks_leak_into_the_released_block():
    """A record that moves only the hidden block's offset still shifts the released block once the blocks are coupled
    (the released divergence is > 0 exactly when the coupling is non-zero): the hidden-state setting of seed 003."""
    def released(coupling):
        step = AffineStep.make([[0.8, coupling], [0.0, 0.8]], [0.0, 1.0], [[1.0, 0.0], [0.0, 1.0]],
                               b_prime=[0.0, 0.0])
        return renyi_linear_gaussian(LinearGaussianPair.make([step] * 5), 2.0, release=[[1.0, 0.0]])

    assert released(0.0) == 0 and released(0.3) > 0


def test_trajectory_of_a_shared_start_chain_is_the_chain_rule_sum():
    """With a shared start and the whole state released, the trajectory's divergence is the chain-rule sum: theta_1 is
    N(A m0 + b_1, A^2 s0 + v_1) on both sides up to the offset, then each step's conditional laws differ only in their
    offsets: alpha/2 (b_1^2 / (A^2 s0 + v_1) + sum_{t>1} b_t^2 / v_t)."""
    alpha, a, s0, offsets, variances = 2.5, 0.6, 0.4, [0.3, 0.0, -0.7, 1.1], [0.5, 1.0, 2.0, 0.7]
    steps = [AffineStep.make([[a]], [b], [[v]], b_prime=[0.0]) for b, v in zip(offsets, variances, strict=True)]
    with mpmath.workdps(50):
        joint = renyi_trajectory(LinearGaussianPair.make(steps, start_cov=[[s0]]), alpha)
        first = mpmath.mpf(offsets[0]) ** 2 / (mpmath.mpf(a) ** 2 * mpmath.mpf(s0) + mpmath.mpf(variances[0]))
        rest = sum(mpmath.mpf(b) ** 2 / mpmath.mpf(v) for b, v in zip(offsets[1:], variances[1:], strict=True))
        assert abs(joint - mpmath.mpf(alpha) / 2 * (first + rest)) < mpmath.mpf(10) ** -40


def test_a_gap_outside_the_covariance_range_is_infinite():
    """No noise on the coordinate the record moves: the two laws are mutually singular."""
    step = AffineStep.make([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], [[0.0, 0.0], [0.0, 1.0]], b_prime=[0.0, 0.0])
    assert renyi_linear_gaussian(LinearGaussianPair.make([step]), 2.0) == mpmath.inf


def test_hidden_block_solved_exactly_is_a_post_map():
    """A hidden block set to an affine function of the released one after its noisy step (phi <- c theta) is a post
    map; the state covariance is then singular, and the whole state or theta alone give the 1-D answer."""
    c = 0.7
    step = AffineStep.make([[0.9, 0.0], [0.0, 0.0]], [0.5, 0.0], [[1.0, 0.0], [0.0, 0.0]],
                           b_prime=[0.0, 0.0]).then([[1.0, 0.0], [c, 0.0]])
    one = AffineStep.make([[0.9]], [0.5], [[1.0]], b_prime=[0.0])
    with mpmath.workdps(50):
        released = renyi_linear_gaussian(LinearGaussianPair.make([step] * 4), 2.0, release=[[1.0, 0.0]])
        whole = renyi_linear_gaussian(LinearGaussianPair.make([step] * 4), 2.0)
        alone = renyi_linear_gaussian(LinearGaussianPair.make([one] * 4), 2.0)
    assert abs(released - alone) < mpmath.mpf(10) ** -40 and abs(whole - alone) < mpmath.mpf(10) ** -25


def test_an_indefinite_covariance_is_refused():
    """[[1, c], [c, fl(c^2)]] with fl(c^2) < c^2 is not a covariance: a clear error, not a silent +inf."""
    step = AffineStep.make([[1.0, 0.0], [0.0, 1.0]], [0.5, 0.35], [[1.0, 0.7], [0.7, 0.7 * 0.7]], b_prime=[0.0, 0.0])
    with pytest.raises(ParameterError, match="positive semi-definite"):
        renyi_linear_gaussian(LinearGaussianPair.make([step]), 2.0)


@pytest.mark.parametrize("trajectory", [False, True])
def test_the_arb_enclosure_contains_the_50_digit_value(trajectory):
    step = AffineStep.make([[0.9, 0.1], [0.0, 0.7]], [0.4, 0.1], [[0.5, 0.1], [0.1, 0.8]], b_prime=[0.0, 0.3])
    truth = linear_gaussian_truth(LinearGaussianPair.make([step] * 6, start_cov=[[0.2, 0], [0, 0.2]]), 4.0,
                                  trajectory=trajectory)
    enc = truth.enclose(128)
    assert float(enc.lower) <= truth.value <= float(enc.upper)
    assert float(enc.upper) - float(enc.lower) < 1e-25 * truth.value


def test_bad_input_names_the_problem():
    with pytest.raises(ParameterError, match="square"):
        AffineStep.make([[1.0, 0.0]], [0.0], [[1.0]])
    with pytest.raises(ParameterError, match="symmetric covariance"):
        AffineStep.make([[1.0]], [0.0], [[-1.0]])
    with pytest.raises(ParameterError, match="finite"):
        AffineStep.make([[math.nan]], [0.0], [[1.0]])
    with pytest.raises(ParameterError, match="alpha"):
        renyi_linear_gaussian(LinearGaussianPair.make([AffineStep.make([[1.0]], [0.0], [[1.0]])]), 1.0)
    with pytest.raises(ParameterError, match="same dimension"):
        LinearGaussianPair.make([AffineStep.make([[1.0]], [0.0], [[1.0]]),
                                 AffineStep.make(np.eye(2), [0.0, 0.0], np.eye(2))])


def test_weight_decay_prox_composes_as_a_linear_map():
    """then(M): M (A theta + b + xi), applied at 50 digits (not multiplied into the float entries): a weight-decay
    prox T(z) = tau z, tau = fl(1/1.2), gives the seed-003 instance G1's recursion, R = alpha delta^2 / (2 s^2)
    with delta <- tau (a delta + Delta), s^2 <- tau^2 (a^2 s^2 + v)."""
    a, Delta, v, K, alpha = 0.95, 0.3, 0.2, 9, 3.0
    step = AffineStep.make([[a]], [Delta], [[v]], b_prime=[0.0]).then([[1 / 1.2]])
    with mpmath.workdps(50):
        engine = renyi_linear_gaussian(LinearGaussianPair.make([step] * K), alpha)
        gap, var = mpmath.mpf(0), mpmath.mpf(0)
        tau = mpmath.mpf(1 / 1.2)  # the float the step was given
        for _ in range(K):
            gap, var = tau * (a * gap + Delta), tau**2 * (mpmath.mpf(a) ** 2 * var + v)
        assert abs(engine / (alpha * gap**2 / (2 * var)) - 1) < mpmath.mpf(10) ** -40


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_mixture_series_against_every_ordered_tuple(m, alpha, seed):
    """renyi_mixture_series (compositions walked with shared partial sums) against the sum over every ordered
    alpha-tuple of components, m^alpha terms at 40 digits: E_Q[prod_k P_(j_k)/Q] = exp(sum_(k<l) G_(j_k j_l)) for
    Gaussians N(g_j, S) against N(0, S); zero weights included."""
    import itertools

    from verify.truth.linear_gaussian import renyi_mixture_series
    from verify.truth.numbers import arb_numbers

    rng = np.random.default_rng(seed)
    shifts = rng.uniform(-1, 1, (m, 3))
    gram = [[float(u @ v) for v in shifts] for u in shifts]
    weights = [float(w) if rng.random() > 0.25 else 0.0 for w in rng.uniform(0.1, 1, m)]
    if not any(weights):
        weights[0] = 1.0
    with mpmath.workdps(40):
        total = mpmath.fsum(mpmath.mpf(w) for w in weights)
        moment = mpmath.fsum(
            mpmath.fprod(mpmath.mpf(weights[j]) / total for j in tup)
            * mpmath.exp(mpmath.fsum(mpmath.mpf(gram[a][b]) for k, a in enumerate(tup) for b in tup[k + 1:]))
            for tup in itertools.product(range(m), repeat=alpha))
        ref = mpmath.log(moment) / (alpha - 1)
        got = renyi_mixture_series([[mpmath.mpf(g) for g in row] for row in gram], weights, alpha)
        assert abs(got - ref) <= mpmath.mpf(10) ** -30 * max(1, abs(ref))
    with arb_numbers(128) as N:
        ball = renyi_mixture_series([[N.mpf(g) for g in row] for row in gram], weights, alpha)
    slack = mpmath.mpf(10) ** -30 * max(1, abs(ref))
    assert mpmath.mpf(ball.lower().mid().str(40, radius=False)) <= ref + slack
    assert mpmath.mpf(ball.upper().mid().str(40, radius=False)) >= ref - slack
