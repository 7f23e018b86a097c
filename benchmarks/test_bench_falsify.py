"""Time to the first (shrunk) counterexample for deliberately wrong bounds, and the cost of a clean search."""

import pytest

from verify.testing import falsify

WRONG = {
    "noisy_gd_dropped_factor": ("alpha*S**2*eta*K/(8*n**2*sigma**2)", "noisy_gd_quadratic", []),
    "cor1_slow_rate": ("alpha*S**2/(lam*sigma**2*n**2)*(1-exp(-lam*eta*K/8))/2", "noisy_gd_quadratic",
                       ["eta < 1/lam", "start_var <= 2*sigma**2/lam"]),
    "thm23_loosened_step": ("alpha*Delta**2/(2*sigma**2*(n+1-t))", "pnsgd_quadratic", ["eta*lam <= 4"]),
    "cni_missing_square": ("alpha*D0/(2*K*sigma**2)", "cni_affine", ["Abs(kappa) <= 1"]),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_time_to_counterexample(benchmark, name):
    bound, family, extra = WRONG[name]
    found = benchmark.pedantic(falsify, args=(bound, family, "upper", extra),
                               kwargs={"seed": 0, "max_examples": 1500, "budget_s": 30}, rounds=3, iterations=1)
    assert found is not None
    benchmark.extra_info["examples"] = found.examples
    benchmark.extra_info["params"] = found.params
    assert benchmark.stats.stats.median < 1.0  # issue 10: the first counterexample in under a second


def test_clean_search_200_examples(benchmark):
    found = benchmark.pedantic(falsify, args=("2*alpha*L**2/(n*sigma**2)", "pnsgd_linear", "exact"),
                               kwargs={"seed": 0, "max_examples": 200}, rounds=2, iterations=1)
    assert found is None
