"""Speed of the 1-D Gaussian-mixture truths (issue 22): the hockey stick's eps(delta) of a Skip-PNSGD pair, the
double-precision Rényi quadrature of a Stop-PNSGD pair, and the integer-order closed form of a mixture against a
Gaussian. Run with `python -m pytest benchmarks --benchmark-only`; seconds per call are pytest-benchmark's stats."""

from __future__ import annotations

from verify.families.mixtures import skip_pnsgd_components, stop_pnsgd_components
from verify.truth import hockey_stick_1d
from verify.truth.mixture import Mixture1D
from verify.truth.mixture_arb import enclose_renyi_mixture_gaussian
from verify.truth.mixture_quad import renyi_mixture_quad_both


def _pair(components, n: int, t: int, sigma: float) -> tuple[Mixture1D, Mixture1D]:
    weights, means, sds = components(n, t, 1.0, 0.0, sigma)
    _, means_q, _ = components(n, t, -1.0, 0.0, sigma)
    return Mixture1D.of(weights, means, sds), Mixture1D.of(weights, means_q, sds)


def test_bench_skip_pnsgd_epsilon(benchmark):
    """Both orders' eps(1e-5) of the 26-component pair (n = 50, t = 50), the per-pair scan rebuilt each round."""
    p, q = _pair(skip_pnsgd_components, 50, 50, 0.5)

    def run():
        hockey_stick_1d._scan.cache_clear()
        return hockey_stick_1d.epsilon_float(p, q, 1e-5), hockey_stick_1d.epsilon_float(q, p, 1e-5)

    benchmark.pedantic(run, rounds=5, iterations=1)


def test_bench_stop_pnsgd_quadrature(benchmark):
    """R_8 of both orders of the 30-component Stop-PNSGD pair."""
    p, q = _pair(stop_pnsgd_components, 30, 1, 1.0)
    benchmark.pedantic(lambda: renyi_mixture_quad_both(p.weights, p.means, p.sds, q.weights, q.means, q.sds, 8.0),
                       rounds=5, iterations=1)


def test_bench_integer_order_closed_form(benchmark):
    """R_2 of a 54-component equal-variance mixture against a Gaussian, enclosed in Arb (128 bits)."""
    means = [0.01 * i for i in range(54)]
    benchmark.pedantic(lambda: enclose_renyi_mixture_gaussian([1 / 54] * 54, means, 0.5, 0.1, 2, 128), rounds=5,
                       iterations=1)
