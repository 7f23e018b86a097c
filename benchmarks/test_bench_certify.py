"""Timings of interval certification (pytest-benchmark): `pytest benchmarks/test_bench_certify.py --benchmark-only`.

Claim (a), Corollary 2 <= Corollary 1, needs a few thousand boxes (bisection near eta -> 0 and eta -> 1);
claim (d), Theorem 35's proof form <= the printed one, is decided on the root box by the monotonicity test
and the cancelled rational form. Compiled expressions are cached, so rounds after the first time the search.
"""

import pytest

pytest.importorskip("flint")

from verify.certify import CERTIFIED, run_claim  # noqa: E402 - after the importorskip


def test_bench_certify_cor2_below_cor1(benchmark):
    cert = benchmark.pedantic(run_claim, args=("chourasia2021.cor2_below_cor1",), rounds=3, iterations=1,
                              warmup_rounds=1)
    assert cert.status == CERTIFIED
    benchmark.extra_info.update(boxes=cert.boxes_examined, certified=cert.certified_boxes,
                                monotone=cert.monotone_reductions)


def test_bench_certify_theorem35_proof_below_printed(benchmark):
    cert = benchmark(run_claim, "feldman2018.theorem35_proof_below_printed")
    assert cert.status == CERTIFIED
    benchmark.extra_info.update(boxes=cert.boxes_examined)
