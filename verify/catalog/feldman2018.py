"""Feldman, Mironov, Talwar, Thakurta (FOCS 2018), "Privacy Amplification by Iteration" (seed 001).

Symbols: sigma is the std of the noise added to each *gradient* (iterate noise eta*sigma); L the Lipschitz
constant (gradient sensitivity 2L); Delta the gradient difference of the replaced record (<= 2L); t / i the
1-based index of the replaced record; see shared/research/seed-001.md.
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, Eq, Max
from sympy import log as log_

from verify.model import Application, Assumption, Direction, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import (
    D0,
    Delta,
    K,
    L,
    R,
    a,
    alpha,
    beta,
    d,
    delta,
    eps,
    eta,
    gap,
    gap1,
    gap2,
    i,
    kappa,
    lam,
    n,
    s,
    sigma,
    t,
    w,
    z,
)

SEED = "001_42e4c75025f5ccc0.txt"
PAPER = "Feldman, Mironov, Talwar, Thakurta 2018, Privacy Amplification by Iteration (FOCS 2018, arXiv:1808.06651)"
HOLDS, VIOLATED = Verdict.HOLDS, Verdict.VIOLATED


def _src(result: str, equation: str = "") -> Source:
    return Source(SEED, PAPER, result, equation)


ORDER = Assumption("renyi_order", alpha > 1, "alpha > 1")
STEP = Assumption("step_size", eta * beta <= 2, "eta <= 2/beta: the gradient step is contractive (Prop. 18)")
LIPSCHITZ = Assumption("lipschitz", Delta <= 2 * L, "gradient difference <= 2L (L-Lipschitz losses)")
CONTRACTIVE = Assumption("contractive", Abs(kappa) <= 1, "every map is 1-Lipschitz (Def. 16)")

PNSGD_GRID = {"alpha": (1.5, 2.0, 10.0), "sigma": (0.5, 1.0, 4.0), "eta": (0.1, 0.5, 1.0, 1.5, 2.0),
              "lam": (0.5, 1.0, 2.0), "n": (1, 2, 5, 10, 50), "t": (1, 2, 5, 10, 50), "Delta": (2.0,)}
NONCONVEX_GRID = {"alpha": (2.0, 10.0), "sigma": (0.5, 1.0, 4.0), "eta": (0.1, 0.5, 1.0), "lam": (0.5, 1.0),
                  "n": (1, 2, 10, 50), "t": (1, 2, 10), "Delta": (2.0,)}
LINEAR_GRID = {"alpha": (1.5, 2.0, 10.0), "sigma": (0.5, 1.0, 4.0), "eta": (0.1, 1.0), "n": (1, 2, 5, 10, 50),
               "t": (1, 2, 5, 10, 50), "L": (1.0,)}
PNMSGD_GRID = {"alpha": (2.0, 10.0), "sigma": (0.5, 1.0), "eta": (0.1, 0.5, 1.0, 2.0), "lam": (0.5, 1.0),
               "n": (1, 2, 3, 5, 10), "i": (1, 2, 3, 5, 10), "Delta": (2.0,)}
CNI_GRID = {"alpha": (1.5, 2.0, 10.0), "sigma": (0.5, 1.0, 2.0), "K": (1, 2, 10, 100), "D0": (0.1, 1.0, 3.0),
            "kappa": (-1.0, -0.5, 0.0, 0.5, 0.9, 1.0)}
SHIFT_GRID = {"alpha": (2.0, 10.0), "s": (0.5, 1.0), "gap": (0.0, 0.5, 2.0), "z": (0.0, 0.3, 1.0)}

PROJECTED_GRID = {"alpha": (1.5, 2.0), "sigma": (0.5, 1.0), "eta": (0.5, 1.0), "n": (1, 2, 5), "t": (1, 2, 5),
                  "L": (1.0,), "R": (0.05, 0.5, 1.0)}
ON_QUADRATIC = {"beta": lam, "L": Delta / 2}  # relaxed reading: the proof only uses the gradient difference
ON_LINEAR = {"beta": 2 / eta, "Delta": 2 * L}  # linear losses are beta-smooth for every beta; the worst pair

THM23 = alpha * 2 * L**2 / (sigma**2 * (n + 1 - t))
MIXTURE_GRID = {"alpha": (1.5, 2.0, 4.0), "sigma": (1.25, 2.0, 5.0), "L": (1.0,), "n": (1, 2, 3, 5, 8),
                "t": (1, 2, 3, 5, 8)}
DATA_GRID = {"alpha": (1.2, 2.0), "sigma": (0.6928203230275509, 2.0, 5.0), "L": (1.0,), "n": (2, 3, 5), "t": (1, 2),
             "xo": (-1.0, 0.0, 1.0)}  # sigma = 0.6928... is sqrt(2 alpha (alpha - 1)) at alpha = 1.2, L = 1
STOP_NOISE = Assumption("noise", sigma >= L * sp.sqrt(2 * alpha * (alpha - 1)), "sigma >= L sqrt(2 alpha (alpha-1))")
D1, D2 = sp.Symbol("D1", nonnegative=True), sp.Symbol("D2", nonnegative=True)  # component divergences
c_cap = sp.Symbol("c_cap", nonnegative=True)  # Lemma 25's c: D_i <= c/(alpha-1)
LEMMA25_GRID = {"alpha": (2.0, 4.0), "w": (0.01, 0.1, 0.5), "gap1": (0.0, 0.5), "gap2": (0.5, 1.0, 2.0, 3.0, 4.0),
                "s": (1.0,)}
LEMMA25_BIND = {"D1": alpha * gap1**2 / (2 * s**2), "D2": alpha * gap2**2 / (2 * s**2),
                "c_cap": (alpha - 1) * Max(D1, D2)}

THEOREMS = (
    Theorem(
        "feldman2018.definition10", "Gaussian shift divergence R_alpha(N(0, sigma^2 I), a)", _src("Definition 10"),
        Variant.PRINTED, Direction.EXACT, Quantity.RENYI, alpha * a**2 / (2 * sigma**2),
        (ORDER, Assumption("one_step", Eq(K, 1), "a single Gaussian noise addition")), frozenset(),
        (Application("cni_affine", HOLDS, {**CNI_GRID, "K": (1,)}, bind={"a": Abs(kappa) * D0}),),
        note="After one map the starts are |kappa| D0 apart, so the pair is N(0, sigma^2) vs N(a, sigma^2).",
    ),
    Theorem(
        "feldman2018.theorem1", "Contractive noisy iteration, informal (as printed: no square)",
        _src("Theorem 1 (Introduction)"), Variant.PRINTED, Direction.UPPER, Quantity.RENYI,
        alpha * D0 / (2 * K * sigma**2), (ORDER, CONTRACTIVE), frozenset({"cni"}),
        (Application("cni_affine", VIOLATED, CNI_GRID),),
        note="The printed bound lacks the square on ||x_0 - x_0'||; it fails whenever D0 > 1 (research §2.2).",
    ),
    Theorem(
        "feldman2018.theorem1.corrected", "Contractive noisy iteration, informal (with the square)",
        _src("Theorem 1 (Introduction), from Theorem 22"), Variant.CORRECTED, Direction.UPPER, Quantity.RENYI,
        alpha * D0**2 / (2 * K * sigma**2), (ORDER, CONTRACTIVE), frozenset({"cni"}),
        (Application("cni_affine", HOLDS, CNI_GRID),),
        note="Exact for identity maps (kappa = 1): the paper's 'tight with no loss in constants'.",
    ),
    Theorem(
        "feldman2018.lemma20", "Shift reduction", _src("Lemma 20"), Variant.PRINTED, Direction.UPPER,
        Quantity.SHIFTED_RENYI, alpha * Max(0, gap - z - a) ** 2 / (2 * s**2) + alpha * a**2 / (2 * sigma**2),
        (ORDER,), frozenset({"gaussian_noise"}),
        (Application("shift_reduction_gaussian", HOLDS,
                     {**SHIFT_GRID, "sigma": (0.5, 2.0), "a": (0.0, 0.25, 0.5, 1.0, 2.0)}),),
        note="D^(z+a)(mu||nu) is written in its Gaussian closed form; R_alpha(zeta, a) = alpha a^2/(2 sigma^2).",
    ),
    Theorem(
        "feldman2018.lemma20.optimal_a", "Shift reduction at the optimal shift a* = (gap - z) sigma^2/(s^2 + sigma^2)",
        _src("Lemma 20 (Gaussian optimum)"), Variant.DERIVED, Direction.EXACT, Quantity.SHIFTED_RENYI,
        alpha * Max(0, gap - z - a) ** 2 / (2 * s**2) + alpha * a**2 / (2 * sigma**2), (ORDER,),
        frozenset({"gaussian_noise"}),
        (Application("shift_reduction_gaussian", HOLDS, {**SHIFT_GRID, "sigma": (0.5, 2.0)},
                     bind={"a": Max(0, gap - z) * sigma**2 / (s**2 + sigma**2)}),),
        note="Lemma 20 is tight on Gaussians: equality at a* (Cauchy-Schwarz).",
    ),
    Theorem(
        "feldman2018.lemma21", "Contraction reduces the shifted divergence", _src("Lemma 21"), Variant.PRINTED,
        Direction.UPPER, Quantity.SHIFTED_RENYI, alpha * Max(0, gap - z) ** 2 / (2 * s**2), (ORDER, CONTRACTIVE),
        frozenset(),
        (Application("contraction_gaussian", HOLDS,
                     {**SHIFT_GRID, "kappa": (-1.0, -0.5, 0.3, 0.9, 1.0), "db": (-1.0, 0.0, 0.5, 2.0)}),),
        note="Right side D^(z)(X || X') in closed form for X ~ N(gap, s^2), X' ~ N(0, s^2).",
    ),
    Theorem(
        "feldman2018.lemma21.expansive", "Lemma 21 applied to expansive maps (|kappa| > 1)",
        _src("Lemma 21, without contractivity"), Variant.MISAPPLIED, Direction.UPPER, Quantity.SHIFTED_RENYI,
        alpha * Max(0, gap - z) ** 2 / (2 * s**2),
        (ORDER, Assumption("expansive", Abs(kappa) > 1, "|kappa| > 1")), frozenset(),
        (Application("contraction_gaussian", VIOLATED,
                     {**SHIFT_GRID, "kappa": (-2.0, 1.5, 3.0), "db": (-1.0, 0.0, 0.5)}),),
        note="Contractivity is necessary: an expansive map shrinks the relative shift.",
    ),
    Theorem(
        "feldman2018.theorem23", "PNSGD per-index RDP", _src("Theorem 23"), Variant.PRINTED, Direction.UPPER,
        Quantity.RENYI, THM23, (ORDER, STEP, LIPSCHITZ), frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnsgd_linear", HOLDS, LINEAR_GRID, bind=ON_LINEAR,
                     note="Linear losses attain the bound at t = 1."),
         Application("pnsgd_quadratic", HOLDS, PNSGD_GRID, bind=ON_QUADRATIC,
                     note="Quadratics are not globally Lipschitz; L = Delta/2 is the gradient-difference reading "
                          "that the proof uses (research §2.3)."),
         Application("pnsgd_projected_1d", HOLDS, PROJECTED_GRID, bind=ON_LINEAR,
                     note="Projection onto [-R, R]: the output law has atoms (research §3.5).")),
    ),
    Theorem(
        "feldman2018.theorem23.large_step", "Theorem 23 with a non-contractive step eta > 2/beta",
        _src("Theorem 23, outside eta <= 2/beta"), Variant.MISAPPLIED, Direction.UPPER, Quantity.RENYI, THM23,
        (ORDER, LIPSCHITZ, Assumption("step_size", eta * beta > 2, "eta > 2/beta")),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnsgd_quadratic", VIOLATED, {**PNSGD_GRID, "eta": (2.1, 2.5, 4.5), "lam": (1.0,)},
                     bind=ON_QUADRATIC),),
        note="The step-size condition is necessary: at eta*beta = 2.1, n = 2, t = 1 the exact value is 1.095x the "
             "bound (research §3.1).",
    ),
    Theorem(
        "feldman2018.theorem23.nonconvex", "Theorem 23 on a non-convex (concave quadratic) loss",
        _src("Theorem 23, without convexity"), Variant.MISAPPLIED, Direction.UPPER, Quantity.RENYI, THM23,
        (ORDER, STEP, LIPSCHITZ), frozenset({"replace_one_fixed_index", "smooth"}),
        (Application("pnsgd_concave_quadratic", VIOLATED, NONCONVEX_GRID, bind=ON_QUADRATIC),),
        note="Convexity is necessary: on -(lam/2)||w - x||^2 (lam-smooth) each step expands by c = 1 + eta lam, and "
             "record 1's divergence tends to (c^2 - 1)/c^2 of its one-step value as n grows instead of decaying like "
             "1/(n - t + 1): at eta = 0.5, lam = 1, n = 50, t = 1 the exact value is 27.8x the bound. No privacy "
             "amplification by iteration for non-convex losses (Annamalai 2024), on an exact instance.",
    ),
    Theorem(
        "feldman2018.lemma27.nonconvex", "Lemma 27's local bound without convexity",
        _src("Lemma 27 (one Gaussian mechanism, post-processed)"), Variant.DERIVED, Direction.UPPER,
        Quantity.RENYI, 2 * alpha * L**2 / sigma**2, (ORDER, LIPSCHITZ), frozenset({"replace_one_fixed_index"}),
        (Application("pnsgd_concave_quadratic", HOLDS, NONCONVEX_GRID, bind=ON_QUADRATIC),),
        note="Record t enters through one Gaussian mechanism of sensitivity Delta <= 2L; the later steps are "
             "post-processing whatever the loss, so the local bound needs no convexity. On the concave quadratic "
             "the last iterate stays within a constant factor of it (no amplification), attaining it at n = t.",
    ),
    Theorem(
        "feldman2018.lemma27", "Local RDP of PNSGD (one Gaussian mechanism per record)", _src("Lemma 27"),
        Variant.PRINTED, Direction.UPPER, Quantity.RENYI, 2 * alpha * L**2 / sigma**2, (ORDER, LIPSCHITZ),
        frozenset({"replace_one_fixed_index", "convex"}),
        (Application("pnsgd_linear", HOLDS, LINEAR_GRID, bind=ON_LINEAR),
         Application("pnsgd_quadratic", HOLDS, {**PNSGD_GRID, "eta": (0.1, 1.0, 2.0, 3.0)}, bind=ON_QUADRATIC)),
        note="No smoothness or step-size condition; attained at n = 1.",
    ),
    Theorem(
        "feldman2018.theorem35", "Multi-epoch PNSGD (PNMSGD), as printed", _src("Theorem 35 (Appendix B)"),
        Variant.PRINTED, Direction.UPPER, Quantity.RENYI, 4 * alpha * L**2 / sigma**2, (ORDER, STEP, LIPSCHITZ),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnmsgd_quadratic", HOLDS, PNMSGD_GRID, bind=ON_QUADRATIC),),
        note="Loose by a factor 2 at i = 1 (research §4 item 7).",
    ),
    Theorem(
        "feldman2018.theorem35.proof", "Multi-epoch PNSGD, as the proof gives (per index i)",
        _src("Theorem 35 (proof)"), Variant.PROOF, Direction.UPPER, Quantity.RENYI,
        2 * alpha * L**2 / sigma**2 * ((n - 1) / n + 1 / (n - i + 1)), (ORDER, STEP, LIPSCHITZ),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnmsgd_quadratic", HOLDS, PNMSGD_GRID, bind=ON_QUADRATIC),),
        note="a_t = 2 eta L/n between uses and 2 eta L/(n-i+1) after the last use; exact at i = 1 when |c| = 1.",
    ),
)
THEOREMS += (
    Theorem(
        "feldman2018.theorem24", "Skip-PNSGD per-index RDP", _src("Theorem 24"), Variant.PRINTED, Direction.UPPER,
        Quantity.RENYI, THM23, (ORDER,), frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("skip_pnsgd_linear_1d", HOLDS, MIXTURE_GRID),
         Application("skip_pnsgd_linear_data_1d", HOLDS, DATA_GRID,
                     note="Shared records xo in {-L, 0, L}: the other records move every component too.")),
        note="Linear losses over R (any eta, beta-smooth for every beta); truth = max over both orders of the "
             "mixture pair. The research note's table lists one order only (e.g. n = 2, t = 1: 0.4736; the other "
             "order gives 1.372).",
    ),
    Theorem(
        "feldman2018.lemma25", "Weak convexity of Rényi divergence for mixtures", _src("Lemma 25"), Variant.PRINTED,
        Direction.UPPER, Quantity.RENYI, (1 + c_cap) * ((1 - w) * D1 + w * D2),
        (ORDER, Assumption("small_divergences", c_cap <= 1, "D_alpha(mu_i || nu_i) <= c/(alpha-1) with c <= 1")),
        frozenset({"mixture"}), (Application("mixture_vs_gaussian", HOLDS, LEMMA25_GRID, bind=LEMMA25_BIND),),
        note="c is bound to its smallest admissible value (alpha-1) max_i D_i.",
    ),
    Theorem(
        "feldman2018.lemma25.large_c", "Lemma 25 with c > 1", _src("Lemma 25, outside c <= 1"), Variant.MISAPPLIED,
        Direction.UPPER, Quantity.RENYI, (1 + c_cap) * ((1 - w) * D1 + w * D2),
        (ORDER, Assumption("large_divergences", c_cap > 1, "c > 1")), frozenset({"mixture"}),
        (Application("mixture_vs_gaussian", VIOLATED, LEMMA25_GRID, bind=LEMMA25_BIND),),
        note="The proof uses e^a <= 1 + a + a^2 <= 1 + (1+c) a, valid only for a <= c <= 1 (research §3.6).",
    ),
    Theorem(
        "feldman2018.theorem26", "Stop-PNSGD RDP, as printed", _src("Theorem 26"), Variant.PRINTED, Direction.UPPER,
        Quantity.RENYI, 4 * alpha * L**2 * sp.log(n) / (n * sigma**2), (ORDER, STOP_NOISE),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("stop_pnsgd_linear_1d", VIOLATED, MIXTURE_GRID),
         Application("stop_pnsgd_linear_data_1d", VIOLATED, DATA_GRID,
                     note="Fails at n = 2 in d = 1 too: x_1 = +-L, shared x_2 = -L, alpha = 1.2, sigma at its smallest "
                          "allowed value L sqrt(2 alpha (alpha - 1)) = 0.6928: truth 3.5334 > printed 3.4657.")),
        note="The proof bounds sum_{T=t}^n 1/(T-t+1) by ln(n-t+1); the sum is the harmonic number H_{n-t+1}. "
             "At n = 1 the printed bound is 0 (research §3.3); with nonzero shared records it fails at n = 2 as well.",
    ),
    Theorem(
        "feldman2018.theorem26.proof", "Stop-PNSGD RDP, as the proof gives (harmonic number)",
        _src("Theorem 26 (proof)"), Variant.PROOF, Direction.UPPER, Quantity.RENYI,
        4 * alpha * L**2 * sp.harmonic(n - t + 1) / (n * sigma**2), (ORDER, STOP_NOISE),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("stop_pnsgd_linear_1d", HOLDS, MIXTURE_GRID),
         Application("stop_pnsgd_linear_data_1d", HOLDS, DATA_GRID)),
    ),
)
r = sp.Symbol("r", positive=True)  # ratio of a geometric shift allocation a_j ~ r^(j-t) (Theorem 22)
CALIBRATED = {"q": 1, "sigma": sp.sqrt(2 * log_(1.25 / delta)) / eps}  # noise multiplier sigma/(2L) as printed
DP_GRID = {"eps": (0.05, 0.1, 0.5, 0.9, 0.99, 2.0, 5.0, 8.0, 10.0, 20.0), "delta": (1e-10, 1e-5, 1e-2)}
SMOOTHING_GRID = {"L": (0.5, 1.0, 3.0), "lam": (1e-3, 0.1, 1.0, 10.0)}
SMOOTHING_DIMS = (1, 2, 3, 10, 100, 10_000)
# Section 5.5 / Corollary 34: smoothing at lam = R eps/(2 sqrt(n ln(1/delta))), which makes eta <= 2/beta hold
SECTION55_LAM = {"lam": R * eps / (2 * sp.sqrt(n * log_(1 / delta)))}
COR34_GRID = {"L": (1.0,), "R": (1.0,), "eps": (0.1, 1.0), "n": (100, 10_000), "d": (1, 10),
              "delta": (1e-5, 1e-10, 1e-14, 1e-20, 1e-30, 1e-50)}
COR34_ASSUMPTIONS = (Assumption("delta_range", delta < 1, "0 < delta < 1"),)

THEOREMS += (
    Theorem(
        "feldman2018.theorem22", "Contractive noisy iteration with a geometric shift allocation a_j ~ r^(j-t)",
        _src("Theorem 22"), Variant.PRINTED, Direction.UPPER, Quantity.RENYI,
        alpha * Delta**2 / (2 * sigma**2) * ((1 - r ** (2 * (n - t + 1))) / (1 - r**2))
        / ((1 - r ** (n - t + 1)) / (1 - r)) ** 2,
        (ORDER, STEP, Assumption("allocation", sp.Ne(r, 1), "r != 1 (r = 1 is Theorem 23)")),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnsgd_quadratic", HOLDS, {**PNSGD_GRID, "alpha": (2.0,), "r": (0.5, 0.9, 1.1, 2.0)},
                     bind={"beta": lam}),),
        note="s_t = eta Delta at the replaced step, a_j = s r^(j-t) / sum_k r^k for j >= t (z_j >= 0, z_n = 0), "
             "so sum_j R_alpha(N(0, (eta sigma)^2), a_j) is the bound; r = 1 (uniform) minimises it.",
    ),
    Theorem(
        "feldman2018.lemma27.dp",
        "Gaussian calibration sigma = 2L sqrt(2 ln(1.25/delta))/eps gives local (eps, delta)-DP",
        _src("Lemma 27 (second part), also used in Theorems 29, 30"), Variant.PRINTED, Direction.UPPER,
        Quantity.DP_EPSILON, eps,
        (Assumption("delta_range", delta < 1, "0 < delta < 1"),), frozenset(),
        (Application("sampled_gaussian", VIOLATED, DP_GRID, defaults=CALIBRATED,
                     note="One Gaussian mechanism (q = 1) with noise multiplier sigma/(2L)."),),
        note="The classical calibration (Dwork-Roth Thm. A.1) needs eps < 1; the paper states it for every eps. "
             "It fails for large eps (research: true up to eps ~ 8.4 at delta = 1e-5).",
    ),
    Theorem(
        "feldman2018.lemma27.dp_small_eps", "Gaussian calibration restricted to eps < 1",
        _src("Lemma 27 (second part), with Dwork-Roth's eps < 1"), Variant.CORRECTED, Direction.UPPER,
        Quantity.DP_EPSILON, eps,
        (Assumption("eps_range", eps < 1, "0 < eps < 1"), Assumption("delta_range", delta < 1, "0 < delta < 1")),
        frozenset(), (Application("sampled_gaussian", HOLDS, DP_GRID, defaults=CALIBRATED),),
    ),
    Theorem(
        "feldman2018.theorem35.dp", "PNMSGD with sigma = 5L sqrt(ln(1/delta))/eps is (eps, delta)-DP",
        _src("Theorem 35, remark after the proof"), Variant.PRINTED, Direction.UPPER, Quantity.DP_EPSILON, eps,
        (STEP, LIPSCHITZ, Assumption("order_range", 2 * log_(1 / delta) / eps >= 5, "alpha = 2 ln(1/delta)/eps >= 5"),
         Assumption("noise", sp.Eq(sigma, 5 * L * sp.sqrt(log_(1 / delta)) / eps),
                    "sigma = 5 L sqrt(ln(1/delta))/eps")),
        frozenset({"replace_one_fixed_index", "convex", "smooth"}),
        (Application("pnmsgd_quadratic", HOLDS,
                     {"eps": (0.1, 0.5, 1.0, 2.0), "delta": (1e-8, 1e-5, 1e-2), "eta": (0.5, 1.0, 2.0), "lam": (1.0,),
                      "n": (1, 2, 5, 10), "i": (1, 2, 5, 10), "Delta": (2.0,)},
                     defaults={"sigma": 5 * (Delta / 2) * sp.sqrt(log_(1 / delta)) / eps}, bind=ON_QUADRATIC),),
    ),
    # ---- Theorem 33: Gaussian smoothing, on f = L ||w|| (its construction in App. C) --------------------------------
    Theorem(
        "feldman2018.theorem33.smoothness", "Gaussian smoothing at scale lambda makes f L/lambda-smooth",
        _src("Theorem 33 (i)"), Variant.PRINTED, Direction.UPPER, Quantity.SMOOTHNESS, L / lam, (), frozenset(),
        (Application("gaussian_smoothed_norm", HOLDS, SMOOTHING_GRID, {"d": 1},
                     note="f(w) = L |w|: the kink is where smoothing is hardest."),),
        note="Proved through Pinsker's TV <= ||v||/(2 lam); the exact TV 2 Phi(||v||/(2 lam)) - 1 gives sqrt(2/pi) "
             "L/lam, attained by L |w| at 0 (research §2, Theorem 33): slack sqrt(pi/2) = 1.25.",
    ),
    Theorem(
        "feldman2018.theorem33.smoothness.exact", "The smoothness constant of smoothed L|w| is sqrt(2/pi) L/lambda",
        _src("Theorem 33 (i), sharp form (research §2)"), Variant.DERIVED, Direction.EXACT, Quantity.SMOOTHNESS,
        sp.sqrt(2 / sp.pi) * L / lam, (), frozenset(),
        (Application("gaussian_smoothed_norm", HOLDS, SMOOTHING_GRID, {"d": 1}),),
    ),
    Theorem(
        "feldman2018.theorem33.error", "Gaussian smoothing changes f by at most L lambda sqrt(d) on K",
        _src("Theorem 33 (ii)"), Variant.PRINTED, Direction.UPPER, Quantity.APPROX_ERROR, L * lam * sp.sqrt(d), (),
        frozenset(), (Application("gaussian_smoothed_norm", HOLDS, {**SMOOTHING_GRID, "d": SMOOTHING_DIMS}),),
        note="The proof writes E||Z|| = lam sqrt(d); it is <= (Jensen), so the bound holds, with slack sqrt(pi/2) at "
             "d = 1 that vanishes as d grows. f_hat >= f, so the error is one-sided.",
    ),
    Theorem(
        "feldman2018.theorem33.error.exact", "The smoothing error of L||w|| is L E||Z|| = L lambda sqrt(2) "
        "Gamma((d+1)/2)/Gamma(d/2)", _src("Theorem 33 (ii), sharp form"), Variant.DERIVED, Direction.EXACT,
        Quantity.APPROX_ERROR, L * lam * sp.sqrt(2) * sp.gamma((d + 1) / 2) / sp.gamma(d / sp.Integer(2)), (),
        frozenset(), (Application("gaussian_smoothed_norm", HOLDS, {**SMOOTHING_GRID, "d": SMOOTHING_DIMS}),),
    ),
    Theorem(
        "feldman2018.corollary34.smoothing_term",
        "Corollary 34's smoothing term (4 sqrt2 R L/sqrt n) eps sqrt(d)/(2 ln(1.25/delta))",
        _src("Corollary 34 (utility, smoothing term)"), Variant.PRINTED, Direction.UPPER, Quantity.APPROX_ERROR,
        4 * sp.sqrt(2) * R * L / sp.sqrt(n) * eps * sp.sqrt(d) / (2 * log_(sp.Rational(5, 4) / delta)),
        COR34_ASSUMPTIONS, frozenset(),
        (Application("gaussian_smoothed_norm", VIOLATED, COR34_GRID, SECTION55_LAM,
                     note="The smoothing error at Section 5.5's lambda, on f = L||w|| (where Theorem 33's error is "
                          "attained up to sqrt(pi/2))."),),
        note="Section 5.5 derives the error L R eps sqrt(d)/(2 sqrt(n ln(1/delta))); the corollary prints ln where "
             "sqrt(ln) belongs, which is smaller once ln(1/delta) exceeds about 32 (delta < 2e-14, research §7).",
    ),
    Theorem(
        "feldman2018.corollary34.smoothing_term.corrected",
        "Corollary 34's smoothing term as Section 5.5 derives it: L R eps sqrt(d)/(2 sqrt(n ln(1/delta)))",
        _src("Section 5.5 (the approximation error of Theorem 33 at the chosen lambda)"), Variant.CORRECTED,
        Direction.UPPER, Quantity.APPROX_ERROR, L * R * eps * sp.sqrt(d) / (2 * sp.sqrt(n * log_(1 / delta))),
        COR34_ASSUMPTIONS, frozenset(),
        (Application("gaussian_smoothed_norm", HOLDS, COR34_GRID, SECTION55_LAM),),
    ),
)

from verify.catalog.feldman2018_section5 import THEOREMS as _SECTION5  # noqa: E402 - Section 5's entries

THEOREMS += _SECTION5
