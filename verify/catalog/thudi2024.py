"""Thudi, Jia, Meehan, Shumailov & Papernot (USENIX Security 2024), "Gradients Look Alike: Sensitivity is Often
Overestimated in DP-SGD" (seed 004): per-instance RDP of DP-SGD for the pair (D, D' = D u {x*}). See
shared/research/seed-004.md.

Symbols: q the Poisson rate of every point (fixed, the same on D and D'), s the noise std on the scale of U in units
of the clip C = 1 (the paper's sigma of Sec. 3; sigma C in DP-SGD's sum rule), g_star x*'s clipped gradient at the
current state (Theorem 3.2's Delta = min(||grad||, C) = |g_star|).
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, Eq

from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.model import Application, Assumption, Direction, FromFamily, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import R_pq, R_qr, alpha, d2, g_star, q, s

SEED = "004_31f1cfe4298ec7bd.txt"
PAPER = "Thudi et al. 2024, Gradients Look Alike: Sensitivity is Often Overestimated in DP-SGD"
SUM, MEAN, TRIPLE = "dpsgd_sum_step", "dpsgd_mean_step", "gaussian_triple"


def _src(result: str, equation: str = "") -> Source:
    return Source(SEED, PAPER, result, equation)


ORDER = Assumption("renyi_order", alpha > 1, "Rényi order alpha > 1")
INTEGER_ORDER = Assumption("integer_order", Eq(alpha, sp.floor(alpha)), "integer alpha (the binomial expansion)")

# inliers, a typical point and an outlier (clipped) among two clusters; the degenerate data (g_a = 0, n_b = 0) make
# Theorem 3.2 tight (research 4.1)
STEP_GRID = {"alpha": (2, 8, 32), "q": (0.05, 0.5), "s": (0.5, 2.0), "g_star": (-0.1, -1.0), "n_a": (8,),
             "g_a": (0.0, 0.2), "n_b": (2,), "g_b": (-0.6,)}
MEAN_GRID = {"alpha": (2, 8), "q": (0.1, 0.3), "s": (0.1, 0.3), "g_star": (0.2, -1.0), "n_a": (8,), "g_a": (0.2,),
             "n_b": (2,), "g_b": (-0.6,)}
TRIPLE_GRID = {"alpha": (1.25, 1.5, 1.9, 3.0, 8.0), "d1": (0.5, 1.0), "d2": (0.0, 0.5, 1.0), "s": (1.0,)}
WEAK_TRIANGLE_BIND = {"R_pq": FromFamily(Quantity.RENYI, {"alpha": 2 * alpha, "d2": 0}),
                      "R_qr": FromFamily(Quantity.RENYI, {"alpha": 2 * alpha - 1, "d1": d2, "d2": 0})}
_WEAK_NOTE = ("P = N(0, s^2), Q = N(d1, s^2), R = N(d1 + d2, s^2): R_pq = D_{2 alpha}(P || Q) and R_qr = "
              "D_{2 alpha - 1}(Q || R) are the family's exact values at the moved orders and means.")

THEOREMS = (
    Theorem(
        id="thudi2024.theorem3_2", title="Per-instance RDP of one sampled-Gaussian step, sum rule",
        source=_src("Theorem 3.2"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=SampledGaussianRDP(alpha, 1, q, Abs(g_star) / s), assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"sum_rule", "poisson_subsampling", "add_remove"}),
        applications=(Application(SUM, Verdict.HOLDS, STEP_GRID),),
        note="The Mironov-Talwar-Zhang binomial formula with the clip C replaced by x*'s clipped gradient norm "
             "Delta = |g_star| at the current state; both directions. Tight when the other gradients are 0.",
    ),
    Theorem(
        id="thudi2024.baseline", title="Data-independent per-step RDP of DP-SGD (sensitivity C)",
        source=_src("Section 3.3 baseline (Mironov et al. 2019)"), variant=Variant.DERIVED,
        direction=Direction.UPPER, quantity=Quantity.RENYI, bound=SampledGaussianRDP(alpha, 1, q, 1 / s),
        assumptions=(ORDER, INTEGER_ORDER), requires=frozenset({"poisson_subsampling", "add_remove"}),
        applications=(Application(SUM, Verdict.HOLDS, STEP_GRID), Application(MEAN, Verdict.HOLDS, MEAN_GRID)),
        note="The sampled Gaussian with Delta = C: every batch's update moves by at most C when x* joins it (sum "
             "rule: |g_star|; mean rule: |g_star - U(B)|/(|B| + 1) <= C), so joint convexity over batches gives it.",
    ),
    Theorem(
        id="thudi2024.fact5_2", title="NPIU's test: the weak triangle inequality with (alpha - 1)/(alpha - 2)",
        source=_src("Section 5.4, NPIU and Fact 5.2"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=(alpha - 1) / (alpha - 2) * R_pq + R_qr, assumptions=(ORDER,),
        requires=frozenset({"gaussian"}),
        applications=(Application(TRIPLE, Verdict.VIOLATED, TRIPLE_GRID, bind=WEAK_TRIANGLE_BIND, note=_WEAK_NOTE),),
        note="The algorithm keeps the old model when (alpha - 1)/(alpha - 2) D_2alpha + D_2alpha-1 <= beta; the "
             "coefficient is negative for 1 < alpha < 2 (undefined at 2), so the test passes while D_alpha exceeds "
             "beta. For alpha > 2 it is larger than the proof's and the fact holds.",
    ),
    Theorem(
        id="thudi2024.fact5_2.corrected", title="Weak triangle inequality (Mironov 2017, Prop. 11)",
        source=_src("Fact 5.2 (proof)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=(alpha - sp.Rational(1, 2)) / (alpha - 1) * R_pq + R_qr, assumptions=(ORDER,),
        requires=frozenset({"gaussian"}),
        applications=(Application(TRIPLE, Verdict.HOLDS, TRIPLE_GRID, bind=WEAK_TRIANGLE_BIND, note=_WEAK_NOTE),),
    ),
)
