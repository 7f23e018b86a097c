"""Throughput of the Monte-Carlo kernels and estimators, and CI half-widths of naive vs tilted estimates.

Run with `python -m pytest benchmarks --benchmark-only` (benchmarks are skipped in the default test run).
Rates and half-widths are stored in each benchmark's extra_info.
"""

from __future__ import annotations

import numpy as np
import pytest

from verify.truth.losses import LogisticRidge
from verify.truth.mixture import sgm_renyi
from verify.truth.montecarlo import Ball, simulate_noisy_gd
from verify.truth.renyi_estimator import GaussianMixture, geometric_tilt, renyi_importance, renyi_naive

DATA = np.array([[2.0, 0.5], [0.5, -1.0], [-1.0, 0.3], [2.0, 1.0]])
P = GaussianMixture([0.99, 0.01], [0.0, 1.0], [1.1, 1.1])
Q = GaussianMixture([1.0], [0.0], [1.1])
N_SAMPLES = 100_000


def test_bench_noisy_gd_simulation(benchmark):
    chains, K = 20_000, 20

    def run():
        return simulate_noisy_gd(LogisticRidge(0.5), DATA, eta=0.3, sigma=0.5, K=K, chains=chains, seed=0,
                                 constraint=Ball(2.0))

    benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["chains_per_s"] = chains / benchmark.stats.stats.mean
    benchmark.extra_info["chain_steps_per_s"] = chains * K / benchmark.stats.stats.mean


@pytest.mark.parametrize("alpha", [16, 32])
def test_bench_tilted_estimator(benchmark, alpha):
    proposal = geometric_tilt(P, Q, alpha)
    t = benchmark.pedantic(lambda: renyi_importance(P.log_pdf, Q.log_pdf, proposal, alpha, n=N_SAMPLES, seed=1),
                           rounds=3, iterations=1)
    benchmark.extra_info["samples_per_s"] = N_SAMPLES / benchmark.stats.stats.mean
    benchmark.extra_info["half_width"] = (t.upper - t.lower) / 2


@pytest.mark.parametrize("alpha", [16, 32])
def test_bench_naive_vs_tilted_half_width(benchmark, alpha):
    exact = sgm_renyi(0.01, 1.1, alpha, "pq").value
    naive = benchmark.pedantic(lambda: renyi_naive(P.log_pdf, Q, alpha, n=N_SAMPLES, seed=1), rounds=3, iterations=1)
    tilted = renyi_importance(P.log_pdf, Q.log_pdf, geometric_tilt(P, Q, alpha), alpha, n=N_SAMPLES, seed=1)
    benchmark.extra_info.update({
        "samples_per_s": N_SAMPLES / benchmark.stats.stats.mean,
        "exact": exact,
        "naive_value": naive.value, "naive_half_width": (naive.upper - naive.lower) / 2, "naive_ess": naive.ess,
        "tilted_value": tilted.value, "tilted_half_width": (tilted.upper - tilted.lower) / 2,
        "tilted_ess": tilted.ess,
    })
    assert tilted.lower <= exact <= tilted.upper
