"""CuPy against NumPy on one seed (run on a CUDA machine: `python benchmarks/gpu_compare.py`; `nox -s gpu` runs the
kernel tests). Prints, per backend, the wall time of the catalog's Monte-Carlo entries (grid only, seed 0) with every
estimate and its interval, then the raw simulation kernels at growing chain counts. The two backends draw from
different generators (numpy's PCG64 on the host, cupy's on the device), so their estimates agree within their
intervals, not bit for bit."""

from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np

from verify.backend import get_namespace, to_host
from verify.runner import run
from verify.truth.montecarlo import simulate_dpsgd, simulate_noisy_gd

ENTRIES = ("chen2024.nmf.hfl", "chen2024.nmf.composition", "wang2021.noisysgd_tcdp",
           "thudi2024.theorem3_3.estimate_10_runs", "thudi2024.theorem3_6.estimate_20x20",
           "thudi2024.corollary3_1.estimate_100_batches")


class _Quadratic:
    """l(theta; x) = |theta - x|^2 / 2 (gradient theta - x), any array namespace."""

    @staticmethod
    def grad(theta, x):
        return theta - x


def catalog_rows(backend: str) -> dict[str, dict]:
    rows = {}
    for entry in ENTRIES:
        start = time.perf_counter()
        result = run([entry], seed=0, backend=backend, falsify=0)
        wall = time.perf_counter() - start
        points = [(p.family, p.params, p.truth.value, p.truth.lower, p.truth.upper, p.verdict.value)
                  for app in result.results for p in app.points]
        rows[entry] = {"wall_s": wall, "verdicts": [app.verdict.value for app in result.results], "points": points}
    return rows


def kernel_rows(backend: str) -> list[dict]:
    xp = get_namespace(backend)
    data = np.linspace(-1, 1, 16).reshape(-1, 1)
    rows = []
    for chains in (10_000, 100_000, 300_000):
        for name, kernel in (("noisy_gd K=100", lambda c: simulate_noisy_gd(_Quadratic, data, eta=0.05, sigma=1.0,
                                                                             K=100, chains=c, seed=0, xp=xp)),
                             ("dpsgd q=0.1 T=20", lambda c: simulate_dpsgd(_Quadratic, data, eta=0.05, sigma=1.0,
                                                                           clip=1.0, q=0.1, steps=20, chains=c,
                                                                           seed=0, xp=xp))):
            kernel(1000)  # warm-up: compilation of the device kernels
            start = time.perf_counter()
            out = to_host(kernel(chains))
            wall = time.perf_counter() - start
            rows.append({"kernel": name, "chains": chains, "wall_s": wall, "mean": float(out.mean()),
                         "sd": float(out.std()), "se_mean": float(out.std() / math.sqrt(out.size))})
    return rows


def main() -> None:
    backends = sys.argv[1:] or ["numpy", "cupy"]
    report = {b: {"catalog": catalog_rows(b), "kernels": kernel_rows(b)} for b in backends}
    for b in backends:
        print(f"== {b}")
        for entry, row in report[b]["catalog"].items():
            print(f"{entry:45s} {row['wall_s']:8.2f} s  {row['verdicts']}")
        for k in report[b]["kernels"]:
            print(f"  {k['kernel']:18s} chains {k['chains']:>9,d}  {k['wall_s']:8.3f} s  mean {k['mean']:+.5f} "
                  f"(se {k['se_mean']:.1e})  sd {k['sd']:.5f}")
    if len(backends) == 2:
        a, b = backends
        print(f"== {a} vs {b}: estimates per point (value [lower, upper])")
        for entry in ENTRIES:
            for pa, pb in zip(report[a]["catalog"][entry]["points"], report[b]["catalog"][entry]["points"],
                              strict=True):
                overlap = max(pa[3], pb[3]) <= min(pa[4], pb[4])
                print(f"{entry:45s} {pa[2]:.6g} [{pa[3]:.4g}, {pa[4]:.4g}]  {pb[2]:.6g} [{pb[3]:.4g}, {pb[4]:.4g}]"
                      f"  {'overlap' if overlap else 'DISJOINT'}")
    if path := os.environ.get("GPU_COMPARE_JSON"):
        with open(path, "w") as f:
            json.dump(report, f, indent=1, default=str)


if __name__ == "__main__":
    main()
