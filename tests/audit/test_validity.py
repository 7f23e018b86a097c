"""Issue 51's validity target, shown: exact mechanisms whose eps(delta) is known independently of verify.audit,
each audited many times (seeded) at its TRUE eps; the share of audits whose epsilon_lower exceeds the truth must not
be significantly above 1 - confidence (a one-sided binomial test at level 0.001 decides, not a bare comparison). 200
audits per mechanism here, 1,000 under the slow mark. The truths: closed forms written here (Gaussian: Balle & Wang's
delta(eps) solved by brentq; Laplace: Delta/b + 2 log(1 - delta); randomized response: log(e^eps0 - delta (e^eps0 +
1))) and verify.accountant's certified upper end for one Poisson-subsampled Gaussian step.

Power: black box within 15% of the oracle bound (the best threshold for the true laws, the same Clopper-Pearson
arithmetic, on ALL samples per side where the audit evaluates on 75%) at 1e4 (and, slow, 1e5) samples per side;
grey box at eps 10, delta 1e-5 from 100 + 100 samples: issue 51 asked for a median >= 8.5, which no exact 95% bound
reaches with an unknown sigma (the best, with the sign known in advance and every sample in the t statistic, has a
median of 8.29, computed here); the test holds the audit to within 0.1 of that limit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import optimize, stats

from verify import accountant
from verify.audit import audit, epsilon_oracle

CONFIDENCE = 0.95
FAST, SLOW = 200, 1000
SAMPLES = 1000  # outputs per dataset in each validity audit


def gaussian_truth(mu: float, delta: float) -> float:
    """eps(delta) of N(0, 1) vs N(mu, 1): the root of Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = delta."""
    def excess(eps: float) -> float:
        return float(stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)) - delta
    return optimize.brentq(excess, 0.0, mu * mu / 2 + 10 * mu, xtol=1e-14)


def gaussian(mu: float, dim: int = 1) -> Any:
    def mechanism(data: float, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        if dim == 1:
            return data + rng.normal(size=batch)
        shift = np.zeros(dim)
        shift[-1] = data
        return shift + rng.normal(size=(batch, dim))
    return mechanism


def laplace(data: float, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
    return data + rng.laplace(size=batch)


def randomized_response(eps0: float) -> Any:
    keep = math.exp(eps0) / (1 + math.exp(eps0))

    def mechanism(data: int, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        return np.where(rng.random(batch) < keep, data, 1 - data).astype(float)
    return mechanism


def subsampled_gaussian(q: float, sigma: float) -> Any:
    def mechanism(data: int, rng: np.random.Generator, batch: int = 1) -> np.ndarray:  # data: records of sensitivity 1
        return data * (rng.random(batch) < q) + sigma * rng.normal(size=batch)
    return mechanism


@dataclass(frozen=True)
class Case:
    name: str
    mechanism: Any
    d: Any
    d_prime: Any
    delta: float
    truth: float
    assume: str | None = None


def cases() -> list[Case]:
    rr = 1.0
    q, sigma, delta_sg = 0.5, 0.7, 1e-3
    sg = accountant.epsilon(delta_sg, [accountant.Phase(q, sigma, 1)], tol=1e-4)
    return [
        Case("gaussian", gaussian(1.0), 0.0, 1.0, 0.1, gaussian_truth(1.0, 0.1)),
        Case("laplace", laplace, 0.0, 1.0, 0.0, 1.0),
        Case("randomized response", randomized_response(rr), 1, 0, 0.0, rr),
        Case("randomized response, delta 0.05", randomized_response(rr), 1, 0, 0.05,
             math.log(math.exp(rr) - 0.05 * (math.exp(rr) + 1))),
        Case("subsampled gaussian, T = 1", subsampled_gaussian(q, sigma), 1, 0, delta_sg, sg.upper),
        Case("gaussian, grey box", gaussian(1.0), 0.0, 1.0, 1e-5, gaussian_truth(1.0, 1e-5), "gaussian"),
        Case("gaussian 3-d, grey box", gaussian(1.0, 3), 0.0, 1.0, 1e-3, gaussian_truth(1.0, 1e-3), "gaussian"),
    ]


CASES = cases()


def exceedances(case: Case, runs: int) -> int:
    return sum(audit(case.mechanism, case.d, case.d_prime, samples=SAMPLES, delta=case.delta, confidence=CONFIDENCE,
                     seed=seed, assume=case.assume).epsilon_lower > case.truth for seed in range(runs))


def check_rate(exceeded: int, runs: int) -> None:
    p = stats.binomtest(exceeded, runs, 1 - CONFIDENCE, alternative="greater").pvalue
    assert p > 1e-3, f"{exceeded} of {runs} audits exceeded the truth (p = {p:.2g} at nominal {1 - CONFIDENCE:.0%})"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_valid_at_the_true_epsilon(case: Case) -> None:
    check_rate(exceedances(case, FAST), FAST)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_valid_at_the_true_epsilon_thousand(case: Case) -> None:
    check_rate(exceedances(case, SLOW), SLOW)


def test_the_grey_box_is_not_vacuous() -> None:
    """The grey box's exceedance rate at the truth is near its nominal share (a valid test that never exceeds would
    pass the validity check vacuously): over 400 audits of the 1-d Gaussian case, at least 2%."""
    case = CASES[-2]
    assert exceedances(case, 400) >= 8


def gaussian_oracle(mu: float, samples: int, delta: float) -> float:
    """The best threshold test of N(mu, 1) against N(0, 1) at `samples` outputs per side (a fine grid of thresholds)."""
    t = np.linspace(-6.0, mu + 6.0, 20001)
    return epsilon_oracle(stats.norm.sf(t), stats.norm.cdf(t - mu), samples=samples, delta=delta)


def black_box_power(samples: int, seeds: int) -> tuple[float, float]:
    mu, delta = 2.0, 1e-5
    bounds = [audit(gaussian(mu), mu, 0.0, samples=samples, delta=delta, seed=s).epsilon_lower for s in range(seeds)]
    return float(np.median(bounds)), gaussian_oracle(mu, samples, delta)


def test_black_box_power_near_the_oracle() -> None:
    median, oracle = black_box_power(10_000, 11)
    assert median >= 0.85 * oracle, (median, oracle)


@pytest.mark.slow
def test_black_box_power_near_the_oracle_1e5() -> None:
    median, oracle = black_box_power(100_000, 11)
    assert median >= 0.85 * oracle, (median, oracle)


def ideal_grey_median(mu: float, n: int, delta: float) -> float:
    """The median of the best exact bound on eps from n + n Gaussian samples with sigma unknown: the sign known in
    advance, all samples in the pooled t, the whole 1 - confidence on one side (the lower confidence bound L with
    P_L(T >= t) = 1 - confidence, at t the median of T; L increases in t)."""
    df, scale = 2 * n - 2, math.sqrt(2.0 / n)
    t = float(stats.nct.median(df, mu / scale))
    low = optimize.brentq(lambda nc: stats.nct.sf(t, df, nc) - (1 - CONFIDENCE), t - 10, t + 1)
    return gaussian_truth(low * scale, delta)


def test_grey_box_power_at_eps_10() -> None:
    delta = 1e-5
    mu = optimize.brentq(lambda m: gaussian_truth(m, delta) - 10.0, 1.0, 3.0)
    ideal = ideal_grey_median(mu, 100, delta)
    assert ideal < 8.5  # issue 51's target is out of reach of any exact 95% bound here (8.29)
    bounds = [audit(gaussian(mu), mu, 0.0, samples=100, delta=delta, assume="gaussian", seed=s).epsilon_lower
              for s in range(200)]
    assert np.median(bounds) >= ideal - 0.1, (np.median(bounds), ideal)
