"""Seconds per truth of the grid families issue 22 found slowest: the monotone lattice chains (psgd_box_*), the
linear-Gaussian mixture over batch assignments and the Theorem 4.6 recursion (chen2024 on mbcd_*), and the 1-D
transfer-matrix grid (noisy_gd_projected_1d, noisy_gd_logistic_1d). Each point is one of the catalog's grid points.

Run with `python -m pytest benchmarks/test_bench_chains.py --benchmark-only`; seconds per call in extra_info.
"""

from __future__ import annotations

import mpmath
import pytest

from verify.catalog.chen2024_recursions import Theorem46Corrected
from verify.families import family
from verify.truth import grid1d
from verify.truth.projected_chain import AffineStep, SmoothedAbsStep, lattice_laws

CHAINS = {
    "linear": (0.316, [AffineStep(1.0, 0.01, 0.05)] * 50, 1000),
    "smoothed_abs": (0.707, [SmoothedAbsStep(0.05, 0.2, 0.05)] * 50, 1000),
    "quadratic": (1.0, [AffineStep(1 - 1 / t, 0.0, 1.0 / t) for t in range(1, 50)], 600),
}
TRUTHS = {
    "mbcd_coupled_shuffled": ("renyi", dict(alpha=10, eta=0.05, lam=1.0, mu_c=16.0, S=1.0, b=10, m=5, K=60, o=1e-3)),
    "noisy_gd_projected_1d": ("excess_risk", dict(sigma=0.1, eta=0.1, n=1, K=200, S=0.2, lam=1.0, start_var=0.02,
                                                  R=1.0, center=0.0)),
    "noisy_gd_logistic_1d": ("renyi", dict(alpha=10.0, sigma=0.5, eta=0.1, n=4, K=30, x=2.0, xo=0.5, lam=0.5,
                                           start_var=1.0)),
}


def _fresh_grid_caches() -> None:
    """Each round builds its transfer matrices (the grid shares them across the points of a run)."""
    grid1d._KERNELS = grid1d._Kernels()
    grid1d._KEPT_STATES = grid1d._KeptStates()


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_bench_lattice_chains(benchmark, name):
    a, steps, n = CHAINS[name]
    benchmark.pedantic(lattice_laws, args=(a, steps, 0.0, n), rounds=3, iterations=1)
    benchmark.extra_info.update({"steps": len(steps), "lattice_points": n + 1, "seconds": benchmark.stats.stats.mean})


@pytest.mark.parametrize("name", sorted(TRUTHS))
def test_bench_family_truth(benchmark, name):
    quantity, params = TRUTHS[name]
    benchmark.pedantic(family(name).truth, args=(quantity,), kwargs=params, setup=_fresh_grid_caches, rounds=3,
                       iterations=1)
    benchmark.extra_info["seconds"] = benchmark.stats.stats.mean


def test_bench_theorem46_recursion(benchmark):
    """Theorem 4.6 (corrected) mixed over 25 batch positions, 40 epochs, at 50 digits."""

    def run():
        with mpmath.workdps(50):
            return Theorem46Corrected._imp_(10, 40, 25, 100, 0.05, 1.0, 0.98, 1.0, 0.01, 0.01, 1.0)

    benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info["seconds"] = benchmark.stats.stats.mean
