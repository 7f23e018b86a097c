"""Bu, Dong, Long & Su 2020, Deep Learning with Gaussian Differential Privacy (Harvard Data Science Review 2(3);
arXiv:1911.11607): the central-limit approximation of Poisson-subsampled NoisySGD by mu-Gaussian DP (from Dong, Roth &
Su 2022, JRSS-B, arXiv:1905.02383), the accounting behind opacus' GaussianAccountant. Not one of the seeds: the
accountant the seeds' DP-SGD baselines are compared with, checked against the proven PLD bracket (verify account)."""

from __future__ import annotations

import sympy as sp
from sympy import exp, sqrt

from verify.model import Application, Direction, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import eps, q, sigma, steps

PAPER = "Bu, Dong, Long & Su 2020, Deep Learning with Gaussian Differential Privacy (arXiv:1911.11607)"
COMPOSED = "sampled_gaussian_composed"


def _phi(x: sp.Expr) -> sp.Expr:
    """the standard normal CDF"""
    return sp.erfc(-x / sqrt(2)) / 2


MU_CLT = q * sqrt(steps * (exp(1 / sigma**2) - 1))
# delta(eps) of mu-GDP (Dong, Roth & Su 2022, Cor. 2.13)
DELTA_CLT = _phi(-eps / MU_CLT + MU_CLT / 2) - exp(eps) * _phi(-eps / MU_CLT - MU_CLT / 2)
# small rates and moderate noise over 10^2..10^3 steps, where DP-SGD runs (and the CLT is said to be optimistic)
CLT_GRID = {"q": (0.01,), "sigma": (0.8, 1.0, 2.0), "steps": (100, 1000), "eps": (0.5, 1.0, 2.0, 4.0)}

THEOREMS = [
    Theorem(
        id="bu2020.clt.delta",
        title="The Gaussian-DP central limit: T steps of Poisson-subsampled NoisySGD are mu-GDP with "
              "mu = q sqrt(T (e^(1/sigma^2) - 1)), taken as a bound on delta(eps) at finite T",
        source=Source("", PAPER, "central limit theorem for NoisySGD (mu as in the title)"), variant=Variant.MISAPPLIED,
        direction=Direction.UPPER, quantity=Quantity.DP_DELTA, bound=DELTA_CLT, assumptions=(),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application(COMPOSED, Verdict.VIOLATED, CLT_GRID,
                                  note="The truth is the PLD bracket on the tight delta(eps) of the T-fold "
                                       "composition (both orders)."),),
        note="The theorem is a limit (q sqrt(T) held fixed as T grows); accountants report its eps as the "
             "guarantee at the T they run. It under-reports on 16 of the 24 grid points, by orders of magnitude in "
             "the tail: at (q, sigma, T) = (0.01, 1, 1000) and eps = 2 it gives delta 1.5e-7 where the tight delta is "
             "proven >= 1.96e-6 (and eps(1e-5) = 1.6177 where the tight one is proven in [1.8274, 1.8291]: verify "
             "account --compare).",
    ),
]
