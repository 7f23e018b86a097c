"""`block_pairs` / `coupled_pairs` share step objects across the record's batch j0: every pair equals the chain built
one step at a time from the module's formulas (Chen & Liu, Algorithm 1, eq. (6)) on seeded random parameters, and the
record's batch is where its offset sits."""

import random

import mpmath
import pytest

from verify.families.mbcd import _contraction, block_pairs, coupled_pairs, noise_at
from verify.truth.linear_gaussian import AffineStep, LinearGaussianPair


def _block_reference(eta, mu, beta, kappa_h, S, b, m, steps, o, o_last, o_rate, wd, j0) -> LinearGaussianPair:
    with mpmath.workdps(50):
        a = _contraction(eta, kappa_h, beta, mu)
        shift = mpmath.mpf(eta) * mpmath.mpf(S) / b
        tau = 1 / (1 + mpmath.mpf(eta) * mpmath.mpf(wd))
        chain = []
        for t in range(steps):
            step = AffineStep.make([[a]], [shift if t % m == j0 else 0],
                                   [[2 * mpmath.mpf(eta) * noise_at(o, o_last, o_rate, m, t)]], [0])
            chain.append(step.then([[tau]]) if wd > 0 else step)
    return LinearGaussianPair.make(chain)


def _coupled_reference(eta, lam, mu_c, S, b, m, K, o, j0) -> LinearGaussianPair:
    with mpmath.workdps(50):
        e, lm, c = mpmath.mpf(eta), mpmath.mpf(lam), mpmath.mpf(mu_c)
        v, shift = 2 * e * mpmath.mpf(o), e * mpmath.mpf(S) / b
        chain = []
        for t in range(K * m):
            chain.append(AffineStep.make([[1 - e * (lm + c), e * c], [0, 1]], [shift if t % m == j0 else 0, 0],
                                         [[v, 0], [0, 0]], [0, 0]))
            chain.append(AffineStep.make([[1, 0], [e * c, 1 - e * c]], [0, 0], [[0, 0], [0, v]]))
    return LinearGaussianPair.make(chain)


@pytest.mark.parametrize("seed", range(5))
def test_shared_steps_match_the_step_by_step_chains(seed):
    rng = random.Random(seed)
    m, epochs, b = rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 20)
    block = (rng.uniform(0.01, 0.2), rng.choice([0.0, rng.uniform(0.1, 3)]), rng.uniform(0.5, 3), rng.uniform(0.5, 3),
             rng.uniform(0.1, 2), b, m, epochs * m, rng.uniform(1e-3, 1), rng.uniform(1e-3, 1), rng.uniform(0.5, 1.5),
             rng.choice([0.0, rng.uniform(0.01, 1)]))
    assert block_pairs(*block, range(m)) == [_block_reference(*block, j0) for j0 in range(m)]
    coupled = (rng.uniform(0.01, 0.2), rng.uniform(0.1, 2), rng.uniform(0.1, 2), rng.uniform(0.1, 2), b, m, epochs,
               rng.uniform(1e-3, 1))
    assert coupled_pairs(*coupled, range(m)) == [_coupled_reference(*coupled, j0) for j0 in range(m)]
