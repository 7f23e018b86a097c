"""The sampled-Gaussian RDP curve at dp_accounting's default orders (156, fractional and integer, up to 1024):
verify.truth.sgm_rdp (both orders of the pair, exact to ~1e-15) against dp_accounting (one order, an upper bound
at fractional orders), timed side by side in one run. Target (issue 10): ratio ours / theirs <= 1."""

from __future__ import annotations

import os
import sys
import timeit

import numpy as np
import pytest

from verify.truth.sgm_rdp import sgm_rdp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from derivations.sgm_rdp_reference import ORDERS  # noqa: E402


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.1), (0.001, 0.7), (0.2, 3.0)])
def test_sgm_rdp_against_dp_accounting(benchmark, q, sigma):
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = np.array(ORDERS)

    def ours():
        return sgm_rdp(q, sigma, orders)

    def theirs():
        return rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)

    times = {"ours": [], "theirs": []}
    for _ in range(7):  # interleaved, so that both see the same machine state
        for name, fn in (("ours", ours), ("theirs", theirs)):
            times[name].append(min(timeit.repeat(fn, number=3, repeat=3)) / 3)
    benchmark.pedantic(ours, rounds=10, iterations=1)
    mine, other = float(np.median(times["ours"])), float(np.median(times["theirs"]))
    benchmark.extra_info.update({"orders": len(orders), "ours_s": mine, "dp_accounting_s": other,
                                 "ratio": mine / other})
    print(f"\nq={q}, sigma={sigma}: ours {mine * 1e3:.2f} ms (both orders), dp_accounting {other * 1e3:.2f} ms, "
          f"ratio {mine / other:.2f}")
    assert mine <= other
