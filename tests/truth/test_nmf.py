"""DP-MBCD for NMF (seed 003, Algorithm 3) and the coupled Rao-Blackwellised estimator: the kernel against a
per-chain loop written from the algorithm, both backends; the estimator against the exact linear-Gaussian engine
(accurate while the hidden state's spread is below the last step's noise, biased up beyond it); the exact
record-row family against the Gaussian closed form of an independent one-step computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.backend import get_namespace
from verify.errors import ParameterError
from verify.families import family
from verify.families.mbcd import block_pair
from verify.model import Quantity
from verify.results import Method, Truth
from verify.truth.gaussian import renyi_gaussian_1d
from verify.truth.linear_gaussian import renyi_linear_gaussian
from verify.truth.montecarlo import nmf_hfl_last_step_mixture, renyi_coupled_chains
from verify.truth.renyi_estimator import GaussianMixture, combine_replicates


def _loop_nmf(ratings, m, eta, o, clip, kappa, K, chains, seed):
    """Algorithm 3 one chain at a time, plain Python floats, the kernel's draw order; returns the last y-centres."""
    rng = np.random.Generator(np.random.PCG64(seed))
    n, d_c = ratings.shape
    b = n // m
    x = np.ones((chains, n))
    y = np.ones((chains, d_c))
    scale = math.sqrt(2 * eta * o)

    def factor(g, hess):
        norm = math.sqrt(sum(v * v for v in g))
        f = min(1.0, clip / norm) if norm > 0 else 1.0
        return f * min(1.0, kappa / (hess * f))

    centre = None
    for k in range(K):
        for j in range(m):
            noise = rng.standard_normal((chains, b))
            for c in range(chains):
                rows = range(j * b, (j + 1) * b)
                g = [sum((x[c, i] * y[c, col] - ratings[i, col]) * y[c, col] for col in range(d_c)) for i in rows]
                s = factor(g, sum(v * v for v in y[c]))
                for r, i in enumerate(rows):
                    x[c, i] = x[c, i] - eta * s * g[r] + scale * noise[c, r]
        centre = np.empty((chains, d_c))
        for c in range(chains):
            g = [sum((x[c, i] * y[c, col] - ratings[i, col]) * x[c, i] for i in range(n)) for col in range(d_c)]
            s = factor(g, sum(v * v for v in x[c]))
            centre[c] = [y[c, col] - eta * s * g[col] for col in range(d_c)]
        if k < K - 1:
            y = centre + scale * rng.standard_normal((chains, d_c))
    return centre


@pytest.mark.parametrize("xp_name", ["numpy", "array_api_strict"])
@pytest.mark.parametrize(("clip", "kappa", "K", "d_c"), [(1.0, 100.0, 2, 1), (0.3, 1.1, 3, 2), (50.0, 0.5, 1, 3)])
def test_kernel_matches_the_algorithm_written_per_chain(xp_name, clip, kappa, K, d_c):
    ratings = np.abs(np.random.default_rng(7).normal(1.0, 0.5, size=(6, d_c)))
    law = nmf_hfl_last_step_mixture(ratings, m=3, eta=0.1, o=0.02, clip=clip, kappa=kappa, K=K, chains=5, seed=11,
                                    xp=get_namespace(xp_name))
    expected = _loop_nmf(ratings, 3, 0.1, 0.02, clip, kappa, K, 5, 11)
    np.testing.assert_allclose(law.means, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(law.sds, np.full(5, math.sqrt(2 * 0.1 * 0.02)))


def test_kernel_rejects_bad_input():
    ratings = np.ones((4, 1))
    for kwargs, word in (({"m": 3}, "batches m"), ({"K": 0}, "epochs K"), ({"o": 0.0}, "o must"),
                         ({"chains": 0}, "chains")):
        args = {"m": 2, "eta": 0.1, "o": 0.01, "clip": 1.0, "kappa": 1.0, "K": 1, "chains": 3, "seed": 0} | kwargs
        with pytest.raises(ParameterError, match=word):
            nmf_hfl_last_step_mixture(ratings, **args)
    with pytest.raises(ParameterError, match="ratings"):
        nmf_hfl_last_step_mixture(np.array([[np.nan]]), m=1, eta=0.1, o=0.01, clip=1, kappa=1, K=1, chains=2, seed=0)


def _linear_replicates(alpha_steps: int, j0: int, chains: int, reps: int = 6):
    """Rao-Blackwellised laws of the single-block DP-MBCD data coordinate (mu = 0.5, eta = 0.05, S = 1, b = 10,
    m = 2, o = 0.01), simulated with coupled noise: the same chain as the engine's `block_pair`."""
    eta, mu, shift, sd = 0.05, 0.5, 0.05 / 10, math.sqrt(2 * 0.05 * 0.01)
    out = []
    for r in range(reps):
        rng = np.random.default_rng(r)
        theta = np.zeros((2, chains))
        for t in range(alpha_steps):
            centre = (1 - eta * mu) * theta + np.array([[shift if t % 2 == j0 else 0.0], [0.0]])
            if t < alpha_steps - 1:
                theta = centre + sd * rng.standard_normal(chains)[None, :]
        out.append(tuple(GaussianMixture(np.full(chains, 1 / chains), centre[i], np.full(chains, sd))
                         for i in range(2)))
    return out


def _engine(alpha, steps, j0):
    return float(renyi_linear_gaussian(block_pair(0.05, 0.5, 1.0, 1.0, 1.0, 10, 2, steps, 0.01, 0.01, 1.0, 0.0, j0),
                                       alpha))


@pytest.mark.parametrize("alpha", [2.0, 10.0])
@pytest.mark.parametrize("j0", [0, 1])
def test_coupled_chains_recover_the_exact_engine_when_the_state_is_tight(alpha, j0):
    estimate = renyi_coupled_chains(_linear_replicates(2, j0, 500), alpha, "linear block")
    exact = _engine(alpha, 2, j0)
    assert estimate.method is Method.MONTE_CARLO and estimate.confidence == 0.95 and estimate.ess == 3000
    assert estimate.lower - 0.05 * exact <= exact <= estimate.upper + 0.05 * exact


def test_coupled_chains_are_biased_up_when_the_hidden_state_spreads():
    """E exp((a-1) R(P_hat||Q_hat)) >= exp((a-1) R(P||Q)) by joint convexity: with the state's spread above the last
    step's noise the estimate sits above the truth, beyond its own interval (why the grid keeps K small)."""
    estimate = renyi_coupled_chains(_linear_replicates(4, 1, 500), 10.0, "linear block")
    exact = _engine(10.0, 4, 1)
    assert estimate.lower > exact


def test_identical_datasets_give_zero():
    law = nmf_hfl_last_step_mixture(np.ones((4, 1)), m=2, eta=0.05, o=0.01, clip=1, kappa=2, K=2, chains=50, seed=3)
    estimate = renyi_coupled_chains([(law, law), (law, law)], 3.0, "same data")
    assert estimate.value == 0 and abs(estimate.upper) < 1e-12


def test_coupled_chains_need_one_dimension():
    law = GaussianMixture([1.0], [[0.0, 0.0]], [1.0])
    with pytest.raises(ParameterError, match="1-D"):
        renyi_coupled_chains([(law, law), (law, law)], 2.0, "2-D")


def test_combine_replicates_interval():
    def mc(v, half):
        return Truth(v, v - half, v + half, Method.MONTE_CARLO, "r", confidence=0.95, ess=100.0)

    spread = combine_replicates([mc(1.0, 0.01), mc(2.0, 0.01), mc(3.0, 0.01)], "three")
    assert spread.value == pytest.approx(2.0)
    assert spread.upper - 2.0 == pytest.approx(4.302652729911275 * 1.0 / math.sqrt(3))  # t_{0.975, 2} sd/sqrt(3)
    pooled = combine_replicates([mc(1.0, 0.3), mc(1.0, 0.4)], "two")
    assert pooled.upper - 1.0 == pytest.approx(0.5 / 2)  # sqrt(0.3^2 + 0.4^2)/2: no spread
    assert spread.ess == 300.0
    with pytest.raises(ParameterError, match=">= 2"):
        combine_replicates([mc(1.0, 0.1)], "one")
    with pytest.raises(ParameterError, match=">= 2"):
        combine_replicates([mc(1.0, 0.1), Truth.exact(1.0, "x")], "mixed")


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(1.01, 50), eta=st.floats(0.001, 1), S=st.floats(0.01, 10), kappa=st.floats(0.01, 10),
       o=st.floats(1e-4, 1))
def test_record_row_truth_is_the_first_step_gaussian_pair(alpha, eta, S, kappa, o):
    # one x-step of the record's batch from x = y = 1 (the loop above, noise-free), then the Gaussian pair
    ratings_d, ratings_dp = np.ones((2, 1)), np.ones((2, 1))
    ratings_dp[0, 0] = 0.0
    shifts = []
    for ratings in (ratings_d, ratings_dp):
        g = [(1.0 - ratings[i, 0]) for i in range(2)]  # (x y - M) y at x = y = 1, batch = both rows
        norm = math.sqrt(sum(v * v for v in g))
        f = min(1.0, S / norm) if norm > 0 else 1.0
        shifts.append(eta * f * min(1.0, kappa / f) * g[0])
    var = 2 * eta * o
    expected = renyi_gaussian_1d(1 - shifts[0], var, 1 - shifts[1], var, alpha)
    truth = family("nmf_record_row").truth(Quantity.RENYI, alpha=alpha, eta=eta, S=S, kappa_h=kappa, o=o, b=2, m=1)
    assert truth.value == pytest.approx(float(expected), rel=1e-12)
