"""Thudi, Jia, Meehan, Shumailov & Papernot (USENIX Security 2024), "Gradients Look Alike: Sensitivity is Often
Overestimated in DP-SGD" (seed 004): per-instance RDP of DP-SGD for the pair (D, D' = D u {x*}). See
shared/research/seed-004.md.

Symbols: q the Poisson rate of every point (fixed, the same on D and D'), s the noise std on the scale of U in units
of the clip C = 1 (the paper's sigma of Sec. 3; sigma C in DP-SGD's sum rule), g_star x*'s clipped gradient at the
current state (Theorem 3.2's Delta = min(||grad||, C) = |g_star|).
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, E, Eq, log, sqrt

from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.model import Application, Assumption, Direction, FromFamily, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import (
    J_conf,
    R_batch,
    R_holder,
    R_pq,
    R_qr,
    alpha,
    b,
    c,
    d2,
    delta,
    delta_slack,
    eps,
    eps_p,
    g_star,
    p_holder,
    q,
    s,
    sigma,
    steps,
    steps_back,
)

SEED = "004_31f1cfe4298ec7bd.txt"
PAPER = ("Thudi et al. 2024, Gradients Look Alike: Sensitivity is Often Overestimated in DP-SGD (USENIX Security 2024, "
         "arXiv:2307.00310)")
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
GAUSSIAN_DP_GRID = {"sigma": (0.25, 0.4, 0.5, 0.7, 1.0, 2.0, 5.0), "delta": (1e-5, 1e-3)}
CLASSICAL = sqrt(2 * log(sp.Rational(5, 4) / delta)) / sigma  # C_{delta,s} Delta with Delta = 1, s = sigma
THM36_GRID = {"alpha": (2, 8), "q": (0.1,), "s": (0.1, 0.3), "g_star": (0.2, -1.0), "n_a": (8,), "g_a": (0.2,),
              "n_b": (2,), "g_b": (-0.6,)}
THM36_SUM_GRID = {**THM36_GRID, "s": (1.0, 3.0)}
EXACT_AT_Q1 = {**THM36_GRID, "q": (1.0,)}  # full batches: the expectation over batches is the divergence itself
THM36_BIND = {"R_batch": FromFamily(Quantity.EXPECTED_BATCH_RENYI)}
# the exceeded points are certified by the integer-order closed form (alpha = 2) and its bracket (alpha = 8, where the
# closed form has too many compositions: verify.truth.mixture_arb.bracket_renyi_mixture_gaussian)
IMPROVES_GRID, IMPROVES_SUM_GRID = THM36_GRID, THM36_SUM_GRID
# App. B.1: the noise multiplier of each batch size (N = 50,000 CIFAR-10 and 60,000 MNIST training points)
CIFAR_SIGMA = {16: 0.488, 32: 0.508, 64: 0.566, 128: 0.625, 256: 0.703}
MNIST_SIGMA = {16: 0.410, 32: 0.430, 64: 0.449, 128: 0.469, 256: 0.508, 512: 0.566}


def _dp_sgd_setup(sigmas: dict[int, float], n: int, epochs: int) -> dict[str, sp.Expr]:
    """The family parameters of `epochs` epochs of Poisson-sampled DP-SGD with batch size b on n points: q = b/n,
    T = floor(epochs n / b) steps, sigma the paper's value for b."""
    return {"q": b / n, "steps": sp.floor(epochs * n / b),
            "sigma": sp.Piecewise(*((sp.Float(v), Eq(b, k)) for k, v in sigmas.items()), (sp.nan, True))}


def _stated_noise(key: str, dataset: str, sigmas: dict[int, float], n: int, epochs: int, expected: Verdict,
                  note: str) -> Theorem:
    """App. B's claim that `epochs` epochs of DP-SGD on `n` points at App. B.1's sigma for each batch size reach
    eps = 10 at delta = 1e-5, checked on the PLD bracket at every batch size the paper lists (the whole table)."""
    return Theorem(
        id=f"thudi2024.appendix_b.{key}_noise",
        title=f"{dataset}: {epochs} epochs of DP-SGD at App. B.1's sigma per batch size reach eps = 10 at delta = 1e-5",
        source=_src("App. B (training setup) and App. B.1 (sigma per batch size)"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.DP_EPSILON, bound=sp.Integer(10),
        assumptions=(Assumption("paper_batch_size", sp.Or(*(Eq(b, v) for v in sigmas)),
                                "a batch size App. B.1 gives a sigma for"),),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application(COMPOSED, expected, {"b": tuple(sigmas), "delta": (1e-5,)},
                                  _dp_sgd_setup(sigmas, n, epochs),
                                  note=f"q = b/{n}, T = floor({epochs}/q) Poisson steps ({epochs} epochs), sigma as "
                                       "App. B.1 sets it for b; the truth is the PLD bracket on the tight eps(1e-5).",
                                  exhaustive=True),),
        note=note,
    )


# the truth is the signed eps(delta): a conversion may return eps < 0 at a large delta, and that can be true
CONVERSION_GRID = {"alpha": (2, 4, 8, 16, 32), "q": (0.01, 0.1, 1.0), "sigma": (0.5, 1.0, 2.0),
                   "delta": (1e-5, 1e-3, 0.5)}
SGM_RDP = SampledGaussianRDP(alpha, 1, q, 1 / sigma)  # one step, sensitivity 1, noise multiplier sigma
# the same conversions after T composed steps, against the PLD bracket on the tight eps(delta)
COMPOSED = "sampled_gaussian_composed"


COMPOSED_GRID = {"alpha": (4, 16, 64), "q": (0.01, 0.1), "sigma": (1.0, 2.0), "steps": (10, 1000),
                 "delta": (1e-5, 0.5)}
SGM_RDP_T = SampledGaussianRDP(alpha, steps, q, 1 / sigma)
_TO_DP_CLASSICAL = log(1 / delta) / (alpha - 1)
_TO_DP_IMPROVED = log((alpha - 1) / alpha) - (log(delta) + log(alpha)) / (alpha - 1)
CLASSICAL_1, IMPROVED_1 = SGM_RDP + _TO_DP_CLASSICAL, SGM_RDP + _TO_DP_IMPROVED
CLASSICAL_T, IMPROVED_T = SGM_RDP_T + _TO_DP_CLASSICAL, SGM_RDP_T + _TO_DP_IMPROVED
# Corollary 3.1 on the worst-case pair of the sum rule (Delta = C = 1, s = sigma), with App. B.1's constants:
# p = 1e4, delta' = 0.5e-5, delta'' = delta = 1e-5, so the per-batch delta is (delta'' - delta')/q
MNIST_DP_GRID = {"sigma": (0.25, 0.3, 0.35, 0.41, 0.469, 0.566, 1.0), "q": (128 / 60000,), "delta": (1e-5,)}
B1 = {"p_holder": 10_000, "delta_slack": sp.Rational(1, 200_000)}
# Lemma A.1 on the same pair: q cancels, leaving P_1(S) <= e^{C_{delta,s}} P_0(S)^(1 - 1/p) + delta per batch
LEMMA_A1_GRID = {"sigma": (0.25, 0.3, 0.35, 0.41, 0.469, 0.566, 1.0), "delta": (1e-5, 0.5e-5 / (128 / 60000)),
                 "p_holder": (2, 10_000)}
_PER_BATCH_DELTA = (delta - delta_slack) / q
_C = sqrt(2 * log(sp.Rational(5, 4) / _PER_BATCH_DELTA)) / sigma  # C_{delta, s} Delta
COROLLARY_3_1 = log((q * sp.exp(_C)) ** (p_holder / (p_holder - 1)) * delta_slack ** (-1 / (p_holder - 1)) + 1 - q)
ORDERS = "holder_orders"
PRINTED_FIXED = (p_holder - 1) / p_holder  # the fixed point of the printed map a -> p a/(p - 1) - 1/p
P_3N = {"p_holder": 3 * (steps_back + 1)}  # Fact 3.4's p = 3n at the first of n = i + 1 steps (its largest order)
P_3N_GRID = {"alpha": (1.5, 2.0, 8.0, 32.0), "steps_back": (0, 1, 9, 99, 4687)}
ORDER_MAP_GRID = {"alpha": (2.0, 8.0), "p_holder": (2.0, 6.0, 30.0), "steps_back": (1, 2, 5)}
# Theorem 3.3 on two released steps whose second-step sensitivity is set by the first step's noise (research 4.5)
CHAIN = "dpsgd_anchored_two_step"
CHAIN_GRID = {"alpha": (2, 8), "q": (0.1, 0.5), "eta": (0.2, 0.35, 0.5), "p_holder": (2, 6)}
CHAIN_2_GRID = {k: v for k, v in CHAIN_GRID.items() if k != "p_holder"}
HOLDER_BIND = {"R_holder": FromFamily(Quantity.HOLDER_BOUND)}
_CHAIN_NOTE = ("Step 1 leaks nothing (x*'s gradient is 0 at theta_0), so the first-step term and with it the order "
               "map (printed -1/p or the proof's -1/(p - 1)) drop out; the per-step divergence of step 2 is exact "
               "(Theorem 3.2 is tight without other points), so this checks the Hölder composition itself.")
UNDERCUT_GRID = {"alpha": (8,), "q": (0.1, 0.5), "eta": (0.2, 0.35, 0.5)}
# the paper's batch-sampling estimates on a dataset whose other points share one gradient (MNIST and CIFAR-10 sizes,
# batch size 128 in expectation)
THM36_ESTIMATE, COR31_ESTIMATE = "dpsgd_mean_theorem36_estimate", "dpsgd_mean_corollary31_estimate"
THM36_ESTIMATE_GRID = {"alpha": (2, 8, 16), "q": (128 / 60000, 128 / 50000), "n_a": (50000, 60000)}
COR31_ESTIMATE_GRID = {"q": (128 / 60000,), "n_a": (60000,), "s": (0.469, 0.469 / 128), "g_star": (1.0, 0.3),
                       "g_a": (0.8, 0.0), "delta": (1e-5,)}
# Fact 3.5 on the two-valued f in {1, R} (the extreme case of Hoeffding's inequality): R = e^{3(2 alpha - 1) eps'},
# the deviation c e^{3(alpha - 1) eps}, and l the smallest sample size the statement allows
TWO_POINT = "two_point_mean"
FACT35_GRID = {"alpha": (2, 4), "eps": (0.01, 0.05), "eps_p": (0.05, 0.2, 0.5), "c": (0.1, 1.0), "J_conf": (0.05,),
               "f_prob": (0.01, 0.5)}
_RANGE, _DEV = sp.exp(3 * (2 * alpha - 1) * eps_p), c * sp.exp(3 * (alpha - 1) * eps)
_FACT35 = {"f_top": _RANGE, "dev": _DEV}
FACT35_PRINTED = _FACT35 | {"samples": sp.Max(1, sp.ceiling(-log(J_conf) / c**2 * sp.exp(
    6 * (alpha - 1) * eps - 3 * (2 * alpha - 1) * eps_p)))}
FACT35_PROOF = _FACT35 | {"samples": sp.Max(1, sp.ceiling(-log(J_conf) / c**2 * sp.exp(
    3 * (2 * alpha - 1) * eps_p - 6 * (alpha - 1) * eps)))}
FACT35_CORRECTED = _FACT35 | {"samples": sp.ceiling(log(2 / J_conf) * (_RANGE - 1) ** 2 / (2 * _DEV**2))}
FACT35_ASSUMPTIONS = (ORDER, Assumption("deviation_in_range", _DEV < _RANGE - 1,
                                             "c e^{3(alpha - 1) eps} < R - 1 (a wider deviation is impossible)"),
                      Assumption("order_monotone", eps_p >= eps, "eps' (order 2 alpha) >= eps (order alpha)"),
                      Assumption("failure_probability", J_conf < 1, "0 < J < 1"))
_FACT35_NOTE = "f = R with probability f_prob, else 1; the truth is the exact binomial tail at that l."
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
        id="thudi2024.footnote3", title="Gaussian mechanism calibration C_{delta,s} = sqrt(2 ln(1.25/delta))/s",
        source=_src("Section 3.1, footnote 3 (used by Lemma A.1 and Corollary 3.1)"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.DP_EPSILON, bound=CLASSICAL, assumptions=(),
        requires=frozenset({"add_remove"}),
        applications=(Application("sampled_gaussian", Verdict.VIOLATED, GAUSSIAN_DP_GRID, {"q": 1},
                                  note="q = 1: the Gaussian mechanism, sensitivity 1, noise std sigma; the truth is "
                                       "the tight eps(delta) of the pair."),),
        note="Dwork and Roth prove this constant only for eps < 1; it fails once Delta/s reaches about 2 at "
             "delta = 1e-5, inside the range of the paper's own sigma (Delta/s up to 2.44 for the sum rule).",
    ),
    Theorem(
        id="thudi2024.footnote3.dwork_roth", title="The classical calibration where Dwork and Roth prove it (eps < 1)",
        source=_src("Section 3.1, footnote 3 (Dwork & Roth 2014, Thm A.1)"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=Quantity.DP_EPSILON, bound=CLASSICAL,
        assumptions=(Assumption("small_epsilon", CLASSICAL < 1, "the calibrated eps is below 1"),),
        requires=frozenset({"add_remove"}),
        applications=(Application("sampled_gaussian", Verdict.HOLDS, GAUSSIAN_DP_GRID, {"q": 1}),),
    ),
    # ---- Theorem 3.6 ------------------------------------------------------------------------------------------------
    Theorem(
        id="thudi2024.theorem3_6", title="Per-step RDP of any update rule by the alpha-tuple sensitivity",
        source=_src("Theorem 3.6"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=R_batch, assumptions=(ORDER, INTEGER_ORDER), requires=frozenset({"poisson_subsampling", "add_remove"}),
        applications=(Application(MEAN, Verdict.HOLDS, THM36_GRID, bind=THM36_BIND, regimes=(EXACT_AT_Q1,),
                                  note="The regime q = 1 (every point in every batch) is where Theorem 3.6 is "
                                       "exact: bound / truth = 1."),
                      Application(SUM, Verdict.HOLDS, THM36_SUM_GRID, bind=THM36_BIND,
                                  regimes=({**THM36_SUM_GRID, "q": (1.0,)},))),
        note="The alpha-tuple expectation in closed form: E_{B ~ X}[R_alpha(M(X') || N(U(B), s^2))] for each "
             "direction (convexity of R_alpha in its second argument, then a Gaussian integral; research 2), the "
             "larger of the two; computed exactly over the batch atoms, not by the paper's 20 x 20 sampling.",
    ),
    Theorem(
        id="thudi2024.theorem3_6.improves", title="Theorem 3.6 improves on the data-independent baseline",
        source=_src("Section 4.2 and App. B.3 (Theorem 3.6 vs the baseline)"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.EXPECTED_BATCH_RENYI, bound=SampledGaussianRDP(alpha, 1, q, 1 / s),
        assumptions=(ORDER, INTEGER_ORDER), requires=frozenset({"poisson_subsampling", "add_remove"}),
        applications=(Application(MEAN, Verdict.VIOLATED, IMPROVES_GRID,
                                  note="The paper's claim (Sec. 4.2, Fig. 4): for the mean rule. Certified exceedances "
                                       "for the outlier g* = -1: alpha = 2, 107.96 vs 95.39 at s = 0.1; alpha = 8, "
                                       "453.45 vs 397.37 (s = 0.1) and 47.18 vs 41.81 (s = 0.3)."),
                      Application(SUM, Verdict.VIOLATED, IMPROVES_SUM_GRID,
                                  note="Not a finding: the paper itself says Theorem 3.6 is worse than the baseline "
                                       "for the sum rule (Fig. 27 caption, App. B.3); this application confirms that "
                                       "remark.")),
        note="The paper presents Theorem 3.6 as an improvement for the mean rule; for an outlier with small expected "
             "batches it exceeds the baseline (alpha = 2: 107.96 vs 95.39; alpha = 8: 453.45 vs 397.37, both "
             "certified; on research 4.3's toy of 40 + 10 points, 435.47 vs 397.37, certified too). For the sum rule "
             "the paper says itself that it is worse. Use min(Theorem 3.6, baseline).",
    ),
    # ---- Corollary 3.1 and the (eps, delta) baseline of App. B.1 ---------------------------------------------------
    Theorem(
        id="thudi2024.corollary3_1", title="Per-instance (eps, delta) by Hölder (sum rule, worst-case pair)",
        source=_src("Corollary 3.1 (App. B.1 settings)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.DP_EPSILON_ADD, bound=COROLLARY_3_1,
        assumptions=(Assumption("slack_below_delta", delta > delta_slack, "delta'' > delta'"),),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application("sampled_gaussian", Verdict.VIOLATED, MNIST_DP_GRID, B1,
                                  note="Other gradients 0 and ||g*|| = C: the sampled Gaussian itself; the claim is "
                                       "one-sided (adding x*), so the truth is that direction's tight eps."),),
        note="eps' = log(a_p^(p/(p-1)) delta'^(-1/(p-1)) + 1 - q), a_p = q e^(C_{delta,s} Delta) (Delta constant for "
             "the sum rule), at delta'' = q delta + delta'. The classical constant C_{delta,s} breaks it for "
             "sigma <= 0.35 (research 4.6: exact delta 1.9e-5 at sigma = 0.35 against 1e-5).",
    ),
    Theorem(
        id="thudi2024.lemmaA_1", title="Lemma A.1's per-batch inequality with the classical constant (worst-case pair)",
        source=_src("Lemma A.1 (with footnote 3's C_{delta,s})"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.HOLDER_HOCKEY_STICK, bound=delta,
        assumptions=(Assumption("delta_below_one", delta < 1, "delta < 1"),),
        requires=frozenset({"add_remove", "gaussian"}),
        applications=(Application("gaussian_holder_hockey_stick", Verdict.VIOLATED, LEMMA_A1_GRID,
                                  {"eps": sqrt(2 * log(sp.Rational(5, 4) / delta)) / sigma},
                                  note="Other gradients 0, ||g*|| = C = 1: M(X) = N(0, s^2) and M(X') = (1 - q) M(X) + "
                                       "q N(1, s^2), a_p = e^{C_{delta,s}}; the lemma's claim for every S is then "
                                       "sup_S [P_1(S) - e^{C_{delta,s}} P_0(S)^(1 - 1/p)] <= delta, whatever q."),),
        note="P(M(X') in S) <= q a_p P(M(X) in S)^(1 - 1/p) + q delta + (1 - q) P(M(X) in S). Hölder only relaxes "
             "P_0 to P_0^(1 - 1/p), which barely helps (0.2% at p = 1e4), so the lemma inherits the calibration's "
             "failure: at App. B.1's per-batch delta = 2.34e-3 it fails for every sigma <= 0.469, including 0.41 "
             "and 0.469 where Corollary 3.1 built on it happens to hold (its delta' slack absorbs the excess).",
    ),
    Theorem(
        id="thudi2024.baseline_dp", title="The (eps, delta) baseline of App. B.1: log(q e^(C_{delta,s} C) + 1 - q)",
        source=_src("App. B.1 baseline", "delta'' = q delta"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.DP_EPSILON_ADD,
        bound=log(q * sp.exp(sqrt(2 * log(sp.Rational(5, 4) * q / delta)) / sigma) + 1 - q), assumptions=(),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application("sampled_gaussian", Verdict.VIOLATED, MNIST_DP_GRID),),
        note="Classical amplification of the classical Gaussian constant at the per-batch delta = delta''/q; "
             "violated at the paper's own sigma = 0.41 and 0.469 (research 4.6).",
    ),
    # ---- RDP to (eps, delta): the conversions used with the baseline (Section 3.3 leaves the choice open) -----------
    Theorem(
        id="thudi2024.rdp_to_dp.classical", title="RDP to (eps, delta): eps = R_alpha + log(1/delta)/(alpha - 1)",
        source=_src("Section 3.3 baseline (Mironov 2017, Prop. 3)"), variant=Variant.DERIVED,
        direction=Direction.UPPER, quantity=Quantity.DP_EPSILON_SIGNED, bound=CLASSICAL_1,
        assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application("sampled_gaussian", Verdict.HOLDS, CONVERSION_GRID,
                                  note="One step of the sampled Gaussian; the truth is its tight eps(delta)."),),
    ),
    Theorem(
        id="thudi2024.rdp_to_dp.improved",
        title="RDP to (eps, delta), improved: R_alpha + log((alpha - 1)/alpha) - log(alpha delta)/(alpha - 1)",
        source=_src("Section 3.3 baseline (Balle et al. 2020, Thm 21; Canonne, Kamath & Steinke 2020)"),
        variant=Variant.DERIVED, direction=Direction.UPPER, quantity=Quantity.DP_EPSILON_SIGNED,
        bound=IMPROVED_1,
        assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application("sampled_gaussian", Verdict.HOLDS, CONVERSION_GRID),),
        note="Never larger than the classical conversion; both hold at every order, the best order is what "
             "accountants report.",
    ),
    Theorem(
        id="thudi2024.rdp_to_dp.classical.composed",
        title="RDP to (eps, delta) after T steps: eps = T R_alpha + log(1/delta)/(alpha - 1)",
        source=_src("Section 3.3 baseline (Mironov 2017, Props. 1 and 3)"), variant=Variant.DERIVED,
        direction=Direction.UPPER, quantity=Quantity.DP_EPSILON_SIGNED, bound=CLASSICAL_T,
        assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application(COMPOSED, Verdict.HOLDS, COMPOSED_GRID,
                                  note="The truth is the privacy-loss-distribution bracket on the tight eps(delta) "
                                       "of the T-fold composition (verify.truth.pld)."),),
    ),
    Theorem(
        id="thudi2024.rdp_to_dp.improved.composed",
        title="RDP to (eps, delta) after T steps, improved (Balle et al. 2020, Thm 21)",
        source=_src("Section 3.3 baseline (Balle et al. 2020; Canonne, Kamath & Steinke 2020)"),
        variant=Variant.DERIVED, direction=Direction.UPPER, quantity=Quantity.DP_EPSILON_SIGNED,
        bound=IMPROVED_T,
        assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application(COMPOSED, Verdict.HOLDS, COMPOSED_GRID),),
    ),
    # ---- Theorem 3.3's orders and Fact 3.4 --------------------------------------------------------------------------
    Theorem(
        id="thudi2024.theorem3_3.order_map", title="Theorem 3.3's order map as printed, g_p(a) = p a/(p - 1) - 1/p",
        source=_src("Theorem 3.3 (statement)"), variant=Variant.PRINTED, direction=Direction.EXACT,
        quantity=Quantity.COMPOSITION_ORDER,
        bound=PRINTED_FIXED + (p_holder / (p_holder - 1)) ** steps_back * (alpha - PRINTED_FIXED),
        assumptions=(), requires=frozenset({"holder_composition"}),
        applications=(Application(ORDERS, Verdict.VIOLATED, ORDER_MAP_GRID),),
        note="The printed map iterated i times (closed form: its fixed point is (p - 1)/p). The proof's Hölder step "
             "needs (p a - 1)/(p - 1); the printed orders are larger, so a bound computed with them is only looser.",
    ),
    Theorem(
        id="thudi2024.theorem3_3.order_map.proof", title="Theorem 3.3's order map in closed form (proof version)",
        source=_src("Theorem 3.3 (proof, eq. 3)"), variant=Variant.CORRECTED, direction=Direction.EXACT,
        quantity=Quantity.COMPOSITION_ORDER, bound=1 + (p_holder / (p_holder - 1)) ** steps_back * (alpha - 1),
        assumptions=(), requires=frozenset({"holder_composition"}),
        applications=(Application(ORDERS, Verdict.HOLDS, ORDER_MAP_GRID),),
        note="g_p^i(alpha) = 1 + (p/(p - 1))^i (alpha - 1); Theorem A.2 (p = 2) gives 2 alpha - 1, the same map.",
    ),
    Theorem(
        id="thudi2024.fact3_4", title="'If p = O(n) then g_p^i(alpha) <= 2 alpha for all i <= n', read literally",
        source=_src("Fact 3.4"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.COMPOSITION_ORDER, bound=2 * alpha, assumptions=(),
        requires=frozenset({"holder_composition"}),
        applications=(Application(ORDERS, Verdict.VIOLATED, {"alpha": (2.0, 8.0), "steps_back": (0, 1, 2, 5, 10)},
                                  {"p_holder": 2}, note="p = 2 is O(n): Theorem A.2's orders 1 + 2^i (alpha - 1)."),),
        note="p must grow at least linearly in n (Omega(n)), not O(n).",
    ),
    Theorem(
        id="thudi2024.fact3_4.p3n", title="With p = 3n every order is at most 2 alpha",
        source=_src("Fact 3.4 (p = 3n)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.COMPOSITION_ORDER, bound=2 * alpha,
        assumptions=(), requires=frozenset({"holder_composition"}),
        applications=(Application(ORDERS, Verdict.HOLDS, P_3N_GRID, P_3N),),
        note="Holds for every n >= 1 ('sufficiently large n' is not needed): the first step's order is the largest.",
    ),
    Theorem(
        id="thudi2024.fact3_4.limit", title="With p = 3n every order is at most 1 + e^(1/3) (alpha - 1)",
        source=_src("Fact 3.4 (sharp form, research 2)"), variant=Variant.DERIVED, direction=Direction.UPPER,
        quantity=Quantity.COMPOSITION_ORDER, bound=1 + E ** sp.Rational(1, 3) * (alpha - 1),
        assumptions=(), requires=frozenset({"holder_composition"}),
        applications=(Application(ORDERS, Verdict.HOLDS, P_3N_GRID, P_3N),),
        note="(1 + 1/(3n - 1))^(n - 1) increases to e^(1/3): tight as n grows (10.7687 at n = 4688, alpha = 8, "
             "against 10.7693).",
    ),
    # ---- Theorem 3.3 / A.2 on an exact two-step chain, and the paper's 10-run estimate ------------------------------
    Theorem(
        id="thudi2024.theorem3_3", title="Hölder composition of per-step RDP over a Markov chain (two steps)",
        source=_src("Theorem 3.3"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=R_holder, assumptions=(ORDER, INTEGER_ORDER, Assumption("holder_exponent", p_holder > 1, "p > 1")),
        requires=frozenset({"markov_chain", "add_remove"}),
        applications=(Application(CHAIN, Verdict.HOLDS, CHAIN_GRID, bind=HOLDER_BIND, note=_CHAIN_NOTE),),
        note="(1/(p (alpha - 1))) ln E_{theta_1}[exp(p (alpha - 1) D_alpha(step 2 | theta_1))] against the exact path "
             "divergence (1/(alpha - 1)) ln E[exp((alpha - 1) D_alpha(step 2 | theta_1))]: Jensen makes it valid, "
             "and the larger p, the closer to the worst case (research 4.5: 1.038 at p = 6 against 0.0043).",
    ),
    Theorem(
        id="thudi2024.theoremA_2", title="Theorem 3.3 with p = 2 (Cauchy-Schwarz), two steps",
        source=_src("Theorem A.2"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=R_holder, assumptions=(ORDER, INTEGER_ORDER), requires=frozenset({"markov_chain", "add_remove"}),
        applications=(Application(CHAIN, Verdict.HOLDS, CHAIN_2_GRID, {"p_holder": 2}, bind=HOLDER_BIND,
                                  note=_CHAIN_NOTE),),
        note="The order map 2 alpha - 1 is the proof's g_p at p = 2; Y_n(x_{n-1}) in the statement should read "
             "Y_n(x_{n-1}, x_n).",
    ),
    Theorem(
        id="thudi2024.theorem3_3.baseline", title="Data-independent composition over the two steps, 2 eps_SGM(q, 1)",
        source=_src("Section 3.3 baseline (Mironov et al. 2019), composed"), variant=Variant.DERIVED,
        direction=Direction.UPPER, quantity=Quantity.RENYI, bound=SampledGaussianRDP(alpha, 2, q, 1),
        assumptions=(ORDER, INTEGER_ORDER), requires=frozenset({"poisson_subsampling", "add_remove"}),
        applications=(Application(CHAIN, Verdict.HOLDS, CHAIN_2_GRID),),
        note="What Theorem 3.3 is compared with: each step charged at sensitivity C = 1.",
    ),
    Theorem(
        id="thudi2024.theorem3_3.estimate_10_runs",
        title="The paper's 10-run estimate of Theorem 3.3 falls below the true divergence at most half the time",
        source=_src("Section 4.1 (Theorem 3.3 estimated from 10 training runs, Figs. 1, 5, 23, 24)"),
        variant=Variant.FORMALISED, direction=Direction.UPPER, quantity=Quantity.ESTIMATOR_UNDERCUT,
        bound=sp.Rational(1, 2), assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"markov_chain", "add_remove"}),
        applications=(Application(CHAIN, Verdict.VIOLATED, UNDERCUT_GRID, {"runs": 10},
                                  note="The truth is a proven lower end of the probability: every run's step-2 "
                                       "divergence below the true path divergence."),),
        note="verify's formalisation, not a printed statement: the paper reports the 10-run average as Theorem "
             "3.3's per-instance guarantee (Figs. 1, 5, 23, 24) with no confidence statement and claims no "
             "probability. 'Below the truth at most half the time' is the weakest reading under which a plug-in "
             "estimate could stand for the bound it estimates. The expectation is dominated by rare "
             "noise draws that make x*'s gradient large; 10 runs miss them, whatever p (research 4.5: P = 0.94 "
             "to 0.996 at eta = 0.2).",
    ),
    Theorem(
        id="thudi2024.theorem3_6.estimate_20x20",
        title="The paper's 20 x 20 estimate of Theorem 3.6 falls below the true divergence at most half the time",
        source=_src("Section 4.2 and App. B.3 (Theorem 3.6 estimated from 20 outer x 20 inner samples, Figs. 4, "
                    "25-32)"),
        variant=Variant.FORMALISED, direction=Direction.UPPER, quantity=Quantity.ESTIMATOR_UNDERCUT,
        bound=sp.Rational(1, 2), assumptions=(ORDER, INTEGER_ORDER),
        requires=frozenset({"mean_rule", "poisson_subsampling", "add_remove"}),
        applications=(Application(THM36_ESTIMATE, Verdict.VIOLATED, THM36_ESTIMATE_GRID, {"outer": 20, "inner": 20},
                                  note="The other points share one gradient: the truth is a proven lower end on "
                                       "P(estimate = 0), while the per-instance divergence is > 0 for every x* "
                                       "whose gradient differs."),),
        note="verify's formalisation, not a printed statement: the paper reports the 20 x 20 sample average as "
             "Theorem 3.6's per-instance guarantee (Figs. 4, 25-32) with no confidence statement and claims no "
             "probability. When no inner tuple holds two batches that "
             "differ from the outer one, every exponent sum_{i<j} <nu_i, nu_j>/s^2 is 0 and so is the estimate: at "
             "the paper's batch size (q = 128/N) that happens with probability 0.77 to 0.96, for an outlier as for an "
             "inlier. Research 4.3 also simulates it on two clusters (P(estimate < truth) = 1.00 for an outlier at "
             "s = 0.1); tests/test_thudi2024.py reproduces that.",
    ),
    Theorem(
        id="thudi2024.corollary3_1.estimate_100_batches",
        title="The paper's 100-batch estimate of Corollary 3.1 (mean rule) is below the exact corollary at most half "
              "the time",
        source=_src("App. B.1 (Corollary 3.1 for the mean rule, E over batches from 100 samples; Figs. 6, 7, 10-13)"),
        variant=Variant.FORMALISED, direction=Direction.UPPER, quantity=Quantity.ESTIMATE_BELOW_BOUND,
        bound=sp.Rational(1, 2), assumptions=(), requires=frozenset({"mean_rule", "poisson_subsampling", "add_remove"}),
        applications=(Application(COR31_ESTIMATE, Verdict.VIOLATED, COR31_ESTIMATE_GRID, B1 | {"batches": 100},
                                  note="App. B.1's p = 1e4, delta' = 0.5e-5, delta'' = 1e-5 at MNIST's N and q; "
                                       "noise s = sigma C = 0.469 or sigma C/L."),),
        note="verify's formalisation, not a printed statement: the paper plots the 100-batch average as Corollary "
             "3.1's eps (Figs. 6, 7, 10-13) with no confidence statement and claims no probability. The exact E "
             "over batches is dominated by the empty batch (probability e^{-128}, weight e^{p C_{delta,s} |g*|}): "
             "the exact eps' is 1.616 at s = 0.469 and 961 at s = 0.469/128 (research 4.6(iii)), the worst case, "
             "while 100 sampled batches never see it and give 3e-5 to 3.4. The figures show the estimator, not the "
             "corollary; on these instances the estimate still stays above the true eps.",
    ),
    # ---- App. B: the noise multipliers of the experiments, against their stated (10, 1e-5) --------------------------
    _stated_noise("cifar10", "CIFAR-10", CIFAR_SIGMA, 50_000, 200, Verdict.VIOLATED,
                  "Under a tight accountant these settings give eps(1e-5) = 11.2 (b = 16) to 14.2 (b = 256), not the "
                  "stated 10 (verify account brackets them to 1e-2). The same recipe for MNIST (the .mnist entry) "
                  "stays below 10, so the CIFAR-10 sigmas were probably calibrated for fewer epochs than the 200 "
                  "stated."),
    _stated_noise("mnist", "MNIST", MNIST_SIGMA, 60_000, 10, Verdict.HOLDS,
                  "eps(1e-5) = 7.5 (b = 16) to 9.1 (b = 128) under a tight accountant: within the stated 10 (an RDP "
                  "accountant's calibration is conservative)."),
    # ---- Fact 3.5: how many runs estimate Theorem 3.3's expectation -----------------------------------------------
    Theorem(
        id="thudi2024.fact3_5", title="l >= (-ln J/c^2) e^{6(alpha-1) eps - 3(2 alpha-1) eps'} samples estimate E f",
        source=_src("Fact 3.5"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.DEVIATION_PROBABILITY, bound=J_conf, assumptions=FACT35_ASSUMPTIONS,
        requires=frozenset({"bounded_mean"}),
        applications=(Application(TWO_POINT, Verdict.VIOLATED, FACT35_GRID, FACT35_PRINTED, note=_FACT35_NOTE),),
        note="Claim: P(|E^l f - E f| >= c e^{3(alpha-1) eps}) <= J for f in [1, e^{3(2 alpha-1) eps'}]. The exponent's "
             "sign is inverted against the proof's own inequality, so the printed l is tiny (often 1) exactly when f's "
             "range is wide.",
    ),
    Theorem(
        id="thudi2024.fact3_5.proof",
        title="Fact 3.5 with the proof's exponent, e^{3(2 alpha-1) eps' - 6(alpha-1) eps}",
        source=_src("Fact 3.5 (proof, Hoeffding)"), variant=Variant.PROOF, direction=Direction.UPPER,
        quantity=Quantity.DEVIATION_PROBABILITY, bound=J_conf, assumptions=FACT35_ASSUMPTIONS,
        requires=frozenset({"bounded_mean"}),
        applications=(Application(TWO_POINT, Verdict.VIOLATED, FACT35_GRID, FACT35_PROOF, note=_FACT35_NOTE),),
        note="Hoeffding for f in [1, R] needs (R - 1)^2, not R, and ln(2/J)/2 for the two-sided deviation: the proof's "
             "sample size is still too small when R is large.",
    ),
    Theorem(
        id="thudi2024.fact3_5.corrected",
        title="Fact 3.5 corrected: l >= ln(2/J) (R - 1)^2 e^{-6(alpha-1) eps}/(2 c^2) (Hoeffding)",
        source=_src("Fact 3.5 (corrected, research 2)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.DEVIATION_PROBABILITY, bound=J_conf, assumptions=FACT35_ASSUMPTIONS,
        requires=frozenset({"bounded_mean"}),
        applications=(Application(TWO_POINT, Verdict.HOLDS, FACT35_GRID, FACT35_CORRECTED, note=_FACT35_NOTE),),
        note="R = e^{3(2 alpha-1) eps'}: the range enters squared. At the paper's settings l is astronomically large "
             "(research 2: e^{2.8e5} at q = 0.01, sigma = 1, n = 1000), so 10 runs carry no such guarantee.",
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
