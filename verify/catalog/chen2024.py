"""Chen & Liu (arXiv 2407.08233, 2024), "Hidden State Differential Private Mini-Batch Block Coordinate Descent for
Multi-convexity Optimization" (seed 003). Printed statements, proof forms, corrections and baselines; see
shared/research/seed-003.md. The recursions are in verify.catalog.chen2024_recursions.

Symbols: m = n/b batches, K epochs, o(k, j) = o_rate^k (o_last if j = m - 1 else o) the noise schedule (variance
2 eta o per step), S the per-example sensitivity S_g of the applied gradient (Assumption 4.4 read per example),
L_F and L_T the Lipschitz constants of the gradient map and of the prox, bound to the instance's exact values.
"""

from __future__ import annotations

import sympy as sp
from sympy import Abs, Eq, Max, Min, sqrt

from verify.catalog.chen2024_recursions import (
    CompositionBaseline,
    LSIClosedForm,
    LSIRecursion,
    PerBatchCorrected,
    PerBatchOutputLSI,
    PerBatchPrinted,
    PerBatchProof,
    Theorem46ClosedForm,
    Theorem46Corrected,
    Theorem46OutputLSI,
    Theorem46Printed,
    Theorem46Proof,
)
from verify.catalog.sgm_bounds import SampledGaussianRDP
from verify.model import Application, Assumption, Direction, FromFamily, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import (
    L_F,
    L_T,
    K,
    R_prev,
    S,
    alpha,
    alpha_p,
    b,
    beta,
    c,
    eta,
    gamma_lag,
    j0,
    kappa_h,
    lam,
    m,
    mu,
    mu_c,
    o,
    o_last,
    o_rate,
    rho,
    steps,
    u_prime,
    u_rec,
    w_start,
    wd,
    x,
    x_prime,
)

SEED = "003_1c2b40d10cb11eaa.txt"
PAPER = "Chen & Liu 2024, Hidden State Differential Private Mini-Batch Block Coordinate Descent (arXiv:2407.08233)"
BLOCK, SHUFFLED = "mbcd_quadratic", "mbcd_quadratic_shuffled"
VARIANT = "mbcd_variant_step"
# eq. (17) against eq. (15), one step on a record whose input differs (where only the target differs, x' = x, the
# two are equal: an exact tie, which Arb cannot order)
VARIANT_GRID = {"alpha": (2, 5, 10, 16), "eta": (0.05, 0.1), "o": (1e-3,), "w_start": (0.0, 1.0), "x": (1.0,),
                "u_rec": (1.0,), "x_prime": (0.0, 0.5), "u_prime": (0.0,)}
COUPLED, COUPLED_SHUFFLED, LIFTED = "mbcd_coupled", "mbcd_coupled_shuffled", "lifted_layer"
NMF_MC, NMF_ROW = "nmf_hfl_mc", "nmf_record_row"


def _src(result: str, equation: str = "") -> Source:
    return Source(SEED, PAPER, result, equation)


# ---- assumptions ------------------------------------------------------------------------------------------------
ORDER = Assumption("renyi_order", alpha > 1, "Rényi order alpha > 1")
SENSITIVITY = Assumption("gradient_sensitivity", S >= 0, "Assumption 4.4: per-example gradient difference <= S_g")
LIPSCHITZ = Assumption("lipschitz_maps", sp.And(L_F > 0, L_T > 0), "F is L_F-Lipschitz and T is L_T-Lipschitz")
TWO_BATCHES = Assumption("two_batches", m >= 2, "m >= 2 batches per epoch")
INTEGER_ORDER = Assumption("integer_order", Eq(alpha, sp.floor(alpha)), "integer alpha (the binomial expansion)")
CONSTANT_NOISE = Assumption("constant_noise", sp.And(Eq(o_last, o), Eq(o_rate, 1)), "o(k, j) = o for every step")
PREVIOUS = Assumption("previous_iterate", steps >= 2, "the step's input is not the point-mass start")
RECORD_STEP = Assumption("record_step", Eq(steps, (K - 1) * m + j0 + 1),
                         "the last step (epoch K - 1) uses batch j0, which holds the differing record")
NEXT_STEP = Assumption("step_after_record", Eq(steps, (K - 1) * m + j0 + 2),
                       "the last step uses the batch after j0 (m >= 2: not the record's)")
SMOOTH = Assumption("block_smooth_convex", sp.And(mu >= 0, mu <= beta), "0 <= Hessian <= beta I (block convex)")

EXACT_LIPSCHITZ = {"L_F": FromFamily(Quantity.GRADIENT_MAP_LIPSCHITZ), "L_T": FromFamily(Quantity.PROX_LIPSCHITZ)}
PRINTED_LF = Max(Abs(1 - kappa_h), Abs(1 - eta * beta))  # Lemma 4.1 as printed
UNCLIPPED = {"beta": Max(mu, 1), "kappa_h": Max(mu, 1)}  # kappa_h = ||H|| = beta: no Hessian clipping
CONSTANT = {"o_last": o, "o_rate": 1}

# ---- grids ------------------------------------------------------------------------------------------------------
MAIN = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.4, 2.0), "S": (1.0,), "b": (10,), "m": (2, 5),
        "K": (1, 5, 20), "o": (1e-3,), "o_last": (1e-3, 1e-2), "o_rate": (1.0,), "wd": (0.0,)}
# weight decay (L_T < 1) with a noisier last batch: the inventory's Section 3.4 point is mu = 0.2, wd = 20/9, m = 2
CONTRACTIVE = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.2, 1.0), "S": (1.0,), "b": (10,), "m": (2, 4),
               "K": (1, 3), "o": (1e-4,), "o_last": (1e-4, 1e-2), "wd": (0.0, 20 / 9, 4.0), "o_rate": (1.0,)}
# noise decreasing within an epoch (o_last < o) or across epochs (o_rate < 1)
DECREASING = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (10.0,), "S": (1.0,), "b": (10,), "m": (3,),
              "K": (1, 2), "o": (0.01,), "o_last": (0.001, 0.01), "o_rate": (0.2, 1.0), "wd": (0.0,)}
FLAT = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.0,), "beta": (1.0,), "kappa_h": (1.1,), "S": (1.0,),
        "b": (10,), "m": (5,), "K": (10, 20, 100), "o": (1e-3,), "o_last": (1e-3,), "o_rate": (1.0,), "wd": (0.0,)}
CLIPPED = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (10.0,), "beta": (10.0,), "kappa_h": (1.0,), "S": (1.0,),
           "b": (10,), "m": (5,), "K": (5, 20), "o": (1e-3,), "o_last": (1e-3,), "o_rate": (1.0,), "wd": (0.0,)}
PER_BATCH = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.5, 10.0), "S": (1.0,), "b": (10,), "m": (3,),
             "K": (1, 3), "o": (0.01,), "o_last": (0.001, 0.01), "j0": (0, 1, 2), "wd": (0.0, 4.0), "o_rate": (1.0,)}
PER_BATCH_FLAT = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.0, 5.0), "beta": (1.0, 10.0), "kappa_h": (1.1,),
                  "S": (1.0,), "b": (10,), "m": (5,), "K": (5, 20), "o": (1e-3,), "o_last": (1e-3,), "j0": (0, 4),
                  "wd": (0.0,), "o_rate": (1.0,)}
ONE_STEP = {"alpha": (2.0, 10.0), "eta": (0.05,), "mu": (0.5, 2.0), "S": (1.0,), "b": (10,), "m": (3,),
            "K": (1, 2, 5), "o": (0.01,), "j0": (0, 1, 2), "wd": (0.0, 4.0)}
LSI_GRID = {"eta": (0.05, 0.5), "mu": (0.0, 0.5, 2.0), "b": (10,), "m": (3,), "steps": (1, 7, 30), "o": (1e-3,),
            "o_last": (1e-3, 1e-2), "o_rate": (0.5, 1.0), "wd": (0.0, 4.0)}
LIP_F_GRID = {"eta": (0.05, 0.5, 1.5), "mu": (0.0, 0.5, 1.0), "beta": (1.0, 10.0), "kappa_h": (0.5, 1.1, 20.0)}
LIP_T_GRID = {"eta": (0.05, 0.5), "wd": (0.0, 1.0, 4.0)}
EXAMPLES_GRID = {"eta": (0.05, 0.5), "wd": (0.0, 1.0)}  # Lemma 4.2's own examples: r = 0 and r = ||theta||^2/2
COUPLED_MIX = {"alpha": (2, 10), "eta": (0.05,), "lam": (1.0,), "mu_c": (4.0, 8.0, 16.0), "S": (1.0,), "b": (10,),
               "m": (5,), "K": (20, 40, 60), "o": (1e-3,)}
COUPLED_FIXED = {"alpha": (2.0, 10.0), "eta": (0.05,), "lam": (1.0,), "mu_c": (4.0, 8.0), "S": (1.0,), "b": (10,),
                 "m": (5,), "K": (5, 20), "o": (1e-3,), "j0": (0, 2, 4)}
# Algorithm 3 (NMF): clipping inactive (kappa = 100) or the paper's kappa = 1.1; few epochs keep the chains' spread
# near the last step's noise, where the Rao-Blackwellised estimate is accurate (tests/truth/test_nmf.py); the
# estimate at alpha = 10 after two epochs is too noisy to decide anything at 500 chains
NMF_MC_GRID = {"alpha": (2.0, 10.0), "eta": (0.05,), "S": (1.0,), "kappa_h": (1.1, 100.0), "o": (0.01,), "b": (20,),
               "m": (2,), "K": (1,), "chains": (500,), "seed": (0,)}
NMF_MC_EPOCHS = {**NMF_MC_GRID, "alpha": (2.0,), "K": (2, 3)}
NMF_ROW_GRID = {"alpha": (2.0, 10.0), "eta": (0.05,), "S": (0.5, 1.0), "kappa_h": (1.1, 100.0), "o": (0.01, 0.1),
                "b": (1, 5, 20), "m": (2, 10)}


def _app(family: str, expected: Verdict, grid: dict, defaults: dict | None = None, bind: dict | None = None,
         note: str = "", regimes: tuple[dict, ...] = ()) -> Application:
    return Application(family=family, expected=expected, grid=grid, defaults=defaults or {}, bind=bind or {},
                       note=note, regimes=regimes)


def _mixture_bound(kind) -> sp.Expr:
    return kind(alpha, K, m, b, eta, S, L_F, L_T, o, o_last, o_rate)


def _batch_bound(kind) -> sp.Expr:
    return kind(alpha, K, m, b, eta, S, L_F, L_T, o, o_last, o_rate, j0)


THM46_ASSUMPTIONS = (ORDER, SENSITIVITY, LIPSCHITZ)
PER_BATCH_DEFAULTS = {**UNCLIPPED, "steps": K * m}

# the u-block of two coupled blocks as the paper accounts for it: the other block held fixed, L_F = |1 - eta(lam +
# mu_c)|, L_T = 1; the v-block's gradient does not see the data (S_g = 0), so its own bound is 0
_U_BLOCK = Theorem46Corrected(alpha, K, m, b, eta, S, L_F, 1, o, o, 1)
_V_BLOCK = Theorem46Corrected(alpha, K, m, b, eta, 0, Abs(1 - eta * mu_c), 1, o, o, 1)
_U_BATCH = PerBatchCorrected(alpha, K, m, b, eta, S, L_F, 1, o, o, 1, j0)
_V_BATCH = PerBatchCorrected(alpha, K, m, b, eta, 0, Abs(1 - eta * mu_c), 1, o, o, 1, j0)
U_LIPSCHITZ = {"L_F": Abs(1 - eta * (lam + mu_c))}

# ---- Corollary 4.5 ------------------------------------------------------------------------------------------------
_CASE1_BIND = {"c": FromFamily(Quantity.LSI_CONSTANT, {"steps": steps - 1}), **EXACT_LIPSCHITZ,
               "alpha_p": (alpha - 1) / (1 + 2 * eta * o * c / L_F**2) + 1,
               "R_prev": FromFamily(Quantity.RENYI, {"steps": steps - 1, "alpha": alpha_p})}
_CASE1_DEFAULTS = {**UNCLIPPED, **CONSTANT, "steps": (K - 1) * m + j0 + 2}
_CASE1_NOTE = ("The step after the record's step, from the exact iterate law at steps - 1 (R_prev = R_alpha' there, "
               "c its exact LSI constant).")
CASE1_PRINTED = alpha * R_prev / alpha_p * (1 + 2 * eta * o * c / L_F**2) ** (-1 / L_T**2)


def _case1(id_: str, title: str, source: Source, variant: Variant, bound: sp.Expr, expected: Verdict,
           note: str) -> Theorem:
    return Theorem(
        id=id_, title=title, source=source, variant=variant, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=bound, assumptions=(ORDER, LIPSCHITZ, TWO_BATCHES, CONSTANT_NOISE, PREVIOUS, NEXT_STEP),
        requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, expected, ONE_STEP, _CASE1_DEFAULTS, _CASE1_BIND, _CASE1_NOTE),), note=note)


THEOREMS = (
    # ---- Lemma 4.1: the gradient map --------------------------------------------------------------------------
    Theorem(
        id="chen2024.lemma4_1", title="Lipschitz constant of the clipped gradient map F", source=_src("Lemma 4.1"),
        variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.GRADIENT_MAP_LIPSCHITZ,
        bound=PRINTED_LF, assumptions=(SMOOTH,), requires=frozenset(),
        applications=(_app(BLOCK, Verdict.VIOLATED, LIP_F_GRID),),
        note="A flat direction (mu = 0, merely convex) has Lip(F) = 1; with active clipping the kappa-term is "
             "|1 - eta kappa| (the proof equates an adaptive step with gradient clipping).",
    ),
    Theorem(
        id="chen2024.lemma4_1.corrected", title="Lipschitz constant of F on a quadratic block, corrected",
        source=_src("Lemma 4.1 (corrected)"), variant=Variant.CORRECTED, direction=Direction.EXACT,
        quantity=Quantity.GRADIENT_MAP_LIPSCHITZ,
        bound=Max(Abs(1 - eta * Min(kappa_h / beta, 1) * mu), Abs(1 - eta * Min(kappa_h / beta, 1) * beta)),
        assumptions=(SMOOTH,), requires=frozenset({"quadratic_loss"}),
        applications=(_app(BLOCK, Verdict.HOLDS, LIP_F_GRID),),
        note="max over the Hessian's spectrum [mu, beta] of |1 - eta s lambda|, s = min(kappa/||H||, 1).",
    ),
    # ---- Lemma 4.2: the prox -------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.lemma4_2", title="Lipschitz constant of the proximal map T", source=_src("Lemma 4.2"),
        variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.PROX_LIPSCHITZ, bound=sp.Integer(2),
        assumptions=(), requires=frozenset(), applications=(_app(BLOCK, Verdict.HOLDS, LIP_T_GRID),),
        note="True but loose: the prox of a convex function is firmly non-expansive (L_T <= 1).",
    ),
    Theorem(
        id="chen2024.lemma4_2.nonexpansive", title="The prox of a convex function is 1-Lipschitz",
        source=_src("Lemma 4.2 (corrected)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.PROX_LIPSCHITZ, bound=sp.Integer(1), assumptions=(), requires=frozenset(),
        applications=(_app(BLOCK, Verdict.HOLDS, LIP_T_GRID),),
    ),
    Theorem(
        id="chen2024.lemma4_2.examples", title="'In all these three cases the Lipschitz constant is 1'",
        source=_src("Lemma 4.2, examples after it"), variant=Variant.PRINTED, direction=Direction.EXACT,
        quantity=Quantity.PROX_LIPSCHITZ, bound=sp.Integer(1), assumptions=(), requires=frozenset(),
        applications=(_app(BLOCK, Verdict.VIOLATED, EXAMPLES_GRID,
                           note="The paper's examples this family has: r = 0 (wd = 0) and r = ||theta||^2/2 "
                                "(wd = 1); the l1 norm's prox is not in it."),),
        note="False for the printed example r = ||theta||^2/2: its prox theta/(1 + eta) has constant 1/(1 + eta) < 1 "
             "(true for r = 0 and for the l1 norm).",
    ),
    Theorem(
        id="chen2024.lemma4_2.weight_decay", title="The prox of r = ||theta||^2/2 as printed, eta/(1 + eta) theta",
        source=_src("Lemma 4.2, example r = ||theta||^2/2"), variant=Variant.PRINTED, direction=Direction.EXACT,
        quantity=Quantity.PROX_LIPSCHITZ, bound=eta / (1 + eta),
        assumptions=(Assumption("unit_weight_decay", Eq(wd, 1), "r(theta) = ||theta||^2/2"),), requires=frozenset(),
        applications=(_app(BLOCK, Verdict.VIOLATED, {"eta": (0.05, 0.5, 2.0)}, {"wd": 1}),),
        note="A typo: argmin_u ||u||^2/2 + ||u - theta||^2/(2 eta) is theta/(1 + eta).",
    ),
    Theorem(
        id="chen2024.lemma4_2.weight_decay.corrected", title="The prox of a weight decay, corrected",
        source=_src("Lemma 4.2 (corrected example)"), variant=Variant.CORRECTED, direction=Direction.EXACT,
        quantity=Quantity.PROX_LIPSCHITZ, bound=1 / (1 + eta * wd), assumptions=(), requires=frozenset(),
        applications=(_app(BLOCK, Verdict.HOLDS, LIP_T_GRID),),
    ),
    # ---- App. B.2.2: the variant of Algorithm 4 used in the experiments -------------------------------------------
    Theorem(
        id="chen2024.variant_eq17", title="Scaling the update by (I + eta x^T x)^-1 (eq. 17) does not increase the "
                                          "privacy loss of eq. (15)",
        source=_src("App. B.2.2, the variant of Algorithm 4", "eqs. (15)-(17)"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=alpha * eta * (u_rec * x - u_prime * x_prime - w_start * (x**2 - x_prime**2)) ** 2 / (4 * o),
        assumptions=(ORDER,), requires=frozenset({"variant_eq17"}),
        applications=(_app(VARIANT, Verdict.VIOLATED, VARIANT_GRID,
                           note="The bound is eq. (15)'s exact divergence on the same instance (one record, the same "
                                "start); the truth is eq. (17)'s."),),
        note="'Given that (I + eta x^T x)^-1 <= 1, the privacy loss remains unaffected': the factor depends on the "
             "record, so it scales D's and D''s noise differently and is not a post-processing. One step from 0 "
             "with D = {(x = 1, u = 1)}, D' = {(0, 0)}, eta = 0.05, o = 1e-3: R_2 = 27.86 against eq. (15)'s 25, "
             "and R_alpha = +inf for alpha >= 1/(1 - (1 + eta)^-2) = 10.76. Where only u differs (x = x') the two "
             "agree. The paper's MNIST/FashionMNIST experiments use this variant.",
    ),
    # ---- Lemma C.3: LSI constants along the trajectory ------------------------------------------------------------
    Theorem(
        id="chen2024.lemma_c3", title="LSI constant of the iterate after `steps` steps (the proof's recursion)",
        source=_src("Lemma C.3 (proof)"), variant=Variant.PROOF, direction=Direction.LOWER,
        quantity=Quantity.LSI_CONSTANT, bound=LSIRecursion(steps, m, eta, L_F, L_T, o, o_last, o_rate),
        assumptions=(LIPSCHITZ,), requires=frozenset({"fixed_start"}),
        applications=(_app(BLOCK, Verdict.HOLDS, LSI_GRID, UNCLIPPED,
                           EXACT_LIPSCHITZ),),
        note="The recursion of the proof, 1/c^(t+1) = L_F^2 L_T^2 / c^(t) + 2 eta L_T^2 o_t from the point mass (c^(0) "
             "= +inf); a valid (smaller) LSI constant. On a Gaussian iterate the best constant is 1/max variance. The "
             "lemma itself states the closed form (the .closed_form entry); the ids predate this labelling.",
    ),
    Theorem(
        id="chen2024.lemma_c3.closed_form", title="LSI constant along the trajectory, closed form (as stated)",
        source=_src("Lemma C.3"), variant=Variant.PRINTED, direction=Direction.LOWER,
        quantity=Quantity.LSI_CONSTANT, bound=LSIClosedForm(steps, m, eta, L_F, L_T, o, o_last, o_rate),
        assumptions=(LIPSCHITZ,), requires=frozenset({"fixed_start"}),
        applications=(_app(BLOCK, Verdict.HOLDS, LSI_GRID, UNCLIPPED,
                           EXACT_LIPSCHITZ),),
        note="The closed form that Lemma C.3 states; equal to the proof's recursion (tests/test_chen2024.py).",
    ),
    # ---- Corollary 4.5 and Theorem C.2 ---------------------------------------------------------------------------
    Theorem(
        id="chen2024.corollary4_5.case2", title="One step that uses the differing record",
        source=_src("Corollary 4.5, case i0 in B"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=R_prev + alpha * eta * S**2 / (4 * b**2 * o),
        assumptions=(ORDER, SENSITIVITY, CONSTANT_NOISE, PREVIOUS, RECORD_STEP), requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, Verdict.HOLDS, ONE_STEP, {**UNCLIPPED, **CONSTANT, "steps": (K - 1) * m + j0 + 1},
                           {"R_prev": FromFamily(Quantity.RENYI, {"steps": steps - 1})},
                           "The record's step, from the exact R_alpha of the iterate before it."),),
        note="R/alpha grows by at most eta S^2/(4 b^2 o): Cauchy-Schwarz, (A + B)^2/(X + Y) <= A^2/X + B^2/Y.",
    ),
    _case1("chen2024.corollary4_5.case1", "One step that does not use the differing record",
           _src("Corollary 4.5, case i0 not in B"), Variant.PRINTED, CASE1_PRINTED, Verdict.VIOLATED,
           "The exponent -1/L_T^2 claims extra contraction from a contractive prox; a bijective T = tau id leaves "
           "R unchanged, so the printed factor is too small whenever L_T < 1 (research 3.4)."),
    _case1("chen2024.corollary4_5.case1.corrected", "One step without the record, exponent -1",
           _src("Corollary 4.5 (corrected)"), Variant.CORRECTED,
           alpha * R_prev / alpha_p * (1 + 2 * eta * o * c / L_F**2) ** (-1), Verdict.HOLDS,
           "L_T enters only through the LSI constant c; exact on a Gaussian when L_F is the contraction."),
    _case1("chen2024.theorem_c2", "Rate of RDP under the heat flow with pushforwards, integrated over one step",
           _src("Theorem C.2", "eq. (23), integrated here"), Variant.DERIVED, CASE1_PRINTED, Verdict.VIOLATED,
           "Derived by verify, not printed: Theorem C.2 states only the rate (23); this entry integrates it over one "
           "step. On a Gaussian R = alpha g(t); eq. (23) gives g' <= -2 c_t o g with c_t = 1/(L_T^2 (L_F^2/c + 2 t "
           "o)), which integrates over t in [0, eta] to Corollary 4.5's case-1 factor with exponent -1/L_T^2. The "
           "derivation treats the pushforward T_# as a pointwise map of the density; for T = tau id the tau^2 "
           "cancels."),
    # ---- Theorem 4.6 ---------------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.theorem4_6", title="RDP of DP-MBCD after K epochs, as printed (eq. 9)",
        source=_src("Theorem 4.6", "eq. (9)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46Printed), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"shuffled_once"}),
        applications=(_app(SHUFFLED, Verdict.HOLDS, MAIN, UNCLIPPED, EXACT_LIPSCHITZ),),
        note="Vacuous: under the paper's point-mass start (c_0^0 = +inf) the j0 = k = 0 term has the factor "
             "c_0^1/c_0^0 = 0 raised to -1/L_T^2, so eq. (9) is +inf. Its other indices are also off: c_K^{n/b-1} "
             "should be c_K^0 and the product should run over l = k+1..K-1.",
    ),
    Theorem(
        id="chen2024.theorem4_6.proof", title="Theorem 4.6 as its proof computes it (exponent -1/L_T^2)",
        source=_src("Theorem 4.6 (proof)", "eqs. (33)-(39)"), variant=Variant.PROOF, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46Proof), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"shuffled_once"}),
        applications=(_app(SHUFFLED, Verdict.VIOLATED, MAIN, UNCLIPPED, EXACT_LIPSCHITZ,
                           "The default grid has L_T = 1 (no weight decay); the regime adds weight decay (L_T < 1) and "
                           "a noisier last batch (research 3.4).", (CONTRACTIVE,)),),
        note="Corollary 4.5 step by step with the input's LSI constant (Lemma C.3), mixed over j0 by eq. (39).",
    ),
    Theorem(
        id="chen2024.theorem4_6.output_lsi", title="Theorem 4.6 with the proof text's LSI index (output constant)",
        source=_src("Theorem 4.6 (proof text)", "eqs. (33)-(34)"), variant=Variant.PROOF, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46OutputLSI), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"shuffled_once"}),
        applications=(_app(SHUFFLED, Verdict.HOLDS, DECREASING, UNCLIPPED, EXACT_LIPSCHITZ),),
        note="The update producing theta^j uses c_0^j, the LSI constant of its output: optimistic when the noise "
             "decreases. See the per-batch entry for the violation.",
    ),
    Theorem(
        id="chen2024.theorem4_6.corrected", title="Theorem 4.6, corrected (exponent -1, input LSI constant)",
        source=_src("Theorem 4.6 (corrected)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46Corrected), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"shuffled_once", "single_released_block"}),
        applications=(_app(SHUFFLED, Verdict.HOLDS, MAIN, UNCLIPPED, EXACT_LIPSCHITZ,
                           "Regimes: weight decay with a noisier last batch; decreasing noise; a flat direction "
                           "(L_F = 1: the bound grows linearly in K like the truth).",
                           (CONTRACTIVE, DECREASING, FLAT)),),
        note="Valid for one released block whose map does not depend on other data-dependent blocks.",
    ),
    Theorem(
        id="chen2024.theorem4_6.closed_form", title="Theorem 4.6, corrected closed form",
        source=_src("Theorem 4.6 (corrected)", "eq. (9) with c_K^0 and l = k+1..K-1"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46ClosedForm),
        assumptions=THM46_ASSUMPTIONS, requires=frozenset({"shuffled_once", "single_released_block"}),
        applications=(_app(SHUFFLED, Verdict.HOLDS, MAIN, UNCLIPPED, EXACT_LIPSCHITZ,
                           regimes=(CONTRACTIVE,)),),
        note="Equal to the corrected recursion (tests/catalog/test_chen2024.py).",
    ),
    Theorem(
        id="chen2024.theorem4_6.lemma4_1", title="Theorem 4.6 with L_F from Lemma 4.1 as printed",
        source=_src("Theorem 4.6 with Lemma 4.1"), variant=Variant.MISAPPLIED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_mixture_bound(Theorem46Corrected), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"shuffled_once"}),
        applications=(_app(SHUFFLED, Verdict.VIOLATED, FLAT, {}, {"L_F": PRINTED_LF, "L_T": 1},
                           "A flat direction: printed L_F = 0.95, true 1 (research 3.6a); the regime has active "
                           "Hessian clipping: printed L_F = 0.5, true 0.95 (research 3.6b).", (CLIPPED,)),),
        note="The paper's headline claim 'only convexity, not strong convexity' rests on Lemma 4.1.",
    ),
    # ---- Theorem 4.6 per batch assignment (fixed batches, eq. 38) -------------------------------------------------
    Theorem(
        id="chen2024.theorem4_6.per_batch", title="RDP given the record's batch j0, eq. (9) as printed",
        source=_src("Theorem 4.6", "eq. (9), eps_K(alpha, j0)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_batch_bound(PerBatchPrinted), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, Verdict.VIOLATED, PER_BATCH, PER_BATCH_DEFAULTS, EXACT_LIPSCHITZ),),
        note="+inf for j0 = 0; the index errors and the exponent -1/L_T^2 make it too small elsewhere.",
    ),
    Theorem(
        id="chen2024.theorem4_6.per_batch.proof", title="RDP given j0 by the proof's recursion (exponent -1/L_T^2)",
        source=_src("Theorem 4.6 (proof)", "eq. (38)"), variant=Variant.PROOF, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_batch_bound(PerBatchProof), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, Verdict.VIOLATED, PER_BATCH, PER_BATCH_DEFAULTS, EXACT_LIPSCHITZ),),
    ),
    Theorem(
        id="chen2024.theorem4_6.per_batch.output_lsi", title="RDP given j0 with the output's LSI constant",
        source=_src("Theorem 4.6 (proof text)", "eqs. (33)-(34)"), variant=Variant.PROOF, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_batch_bound(PerBatchOutputLSI), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, Verdict.VIOLATED, {**PER_BATCH, "wd": (0.0,)}, PER_BATCH_DEFAULTS, EXACT_LIPSCHITZ,
                           "No weight decay: only the LSI index differs from the corrected entry."),),
        note="Research 3.7: K = 1, m = 3, o = (0.01, 0.01, 0.001), L_F = 0.5, j0 = 1 gives 6.346e-3 < 7.576e-3.",
    ),
    Theorem(
        id="chen2024.theorem4_6.per_batch.lemma4_1", title="RDP given j0 with L_F from Lemma 4.1 as printed",
        source=_src("Theorem 4.6 with Lemma 4.1", "eq. (38)"), variant=Variant.MISAPPLIED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_batch_bound(PerBatchCorrected), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"fixed_batches"}),
        applications=(_app(BLOCK, Verdict.VIOLATED, PER_BATCH_FLAT, {"steps": K * m}, {"L_F": PRINTED_LF, "L_T": 1},
                           "A flat direction (mu = 0) and active Hessian clipping (kappa < beta)."),),
        note="The fixed-batch form of chen2024.theorem4_6.lemma4_1: one assignment, cheap enough to search.",
    ),
    Theorem(
        id="chen2024.theorem4_6.per_batch.corrected", title="RDP given j0, corrected",
        source=_src("Theorem 4.6 (corrected)", "eq. (38)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_batch_bound(PerBatchCorrected), assumptions=THM46_ASSUMPTIONS,
        requires=frozenset({"fixed_batches", "single_released_block"}),
        applications=(_app(BLOCK, Verdict.HOLDS, PER_BATCH, PER_BATCH_DEFAULTS, EXACT_LIPSCHITZ),),
        note="Tight (equal to the truth) for K = 1, j0 = 0.",
    ),
    # ---- several blocks -------------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.block_sum", title="Summing the sub-problems' privacy losses ('no inter-block leakage')",
        source=_src("Section 4.2"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=_U_BLOCK + _V_BLOCK, assumptions=(ORDER, SENSITIVITY), requires=frozenset({"coupled_blocks"}),
        applications=(_app(COUPLED_SHUFFLED, Verdict.VIOLATED, COUPLED_MIX, bind=U_LIPSCHITZ),),
        note="Each block by the (corrected) Theorem 4.6 with the other block held fixed: the v-gradient does not see "
             "the data (S_g = 0, eps_v = 0). Under hidden state the other block is random and data-dependent.",
    ),
    Theorem(
        id="chen2024.block_sum.per_batch", title="Summing the sub-problems' losses, given j0",
        source=_src("Section 4.2, with eq. (38)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=_U_BATCH + _V_BATCH, assumptions=(ORDER, SENSITIVITY),
        requires=frozenset({"coupled_blocks"}),
        applications=(_app(COUPLED, Verdict.VIOLATED, COUPLED_FIXED, bind=U_LIPSCHITZ),),
    ),
    Theorem(
        id="chen2024.hfl", title="HFL accounting rule (max over row blocks plus the shared block), on a two-block "
                                 "quadratic standing in for NMF",
        source=_src("Appendix B.2.1", "eps_H = max_i eps_{X_i} + eps_Y"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.RENYI, bound=Max(_U_BLOCK, 0) + _V_BLOCK,
        assumptions=(ORDER, SENSITIVITY), requires=frozenset({"coupled_blocks"}),
        applications=(_app(COUPLED_SHUFFLED, Verdict.VIOLATED, COUPLED_MIX, bind=U_LIPSCHITZ),),
        note="Checked on a two-block coupled quadratic, not on NMF itself (chen2024.nmf.hfl is, on NMF's exact row "
             "marginal): u plays the differing user's row block X_i0 (the other rows' gradients do not see the "
             "record: eps 0), v the shared block Y, whose gradient with X fixed does not see the record either "
             "(eps_Y = 0).",
    ),
    Theorem(
        id="chen2024.vfl", title="VFL accounting rule (max over column blocks plus the shared block), on a "
                                 "two-block quadratic standing in for NMF",
        source=_src("Appendix B.2.1", "eps_V = max_j eps_{Y_j} + eps_X"), variant=Variant.PRINTED,
        direction=Direction.UPPER, quantity=Quantity.RENYI, bound=Max(_U_BLOCK, 0) + _V_BLOCK,
        assumptions=(ORDER, SENSITIVITY), requires=frozenset({"coupled_blocks"}),
        applications=(_app(COUPLED_SHUFFLED, Verdict.VIOLATED, COUPLED_MIX, bind=U_LIPSCHITZ),),
        note="Checked on a two-block coupled quadratic, not on NMF itself: u plays the block Y_j that sees the "
             "record, v the shared block X coupled to it.",
    ),
    # ---- Algorithm 3 (NMF) ----------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.nmf.hfl", title="HFL accounting of Algorithm 3 (NMF) with the per-example cost S_g/b",
        source=_src("Appendix B.2.1 with Theorem 4.6", "eps_H = max_i eps_{X_i} + eps_Y"), variant=Variant.MISAPPLIED,
        direction=Direction.UPPER, quantity=Quantity.RENYI,
        bound=K * alpha * eta * S**2 / (4 * o) * (1 / b**2 + 1 / (m * b) ** 2),
        assumptions=(ORDER, Assumption("clipped_gradients", S > 0, "every block gradient is clipped to S_g")),
        requires=frozenset({"nmf"}),
        applications=(
            _app(NMF_ROW, Verdict.VIOLATED, NMF_ROW_GRID, {"K": 1},
                 note="The differing user's entry of x after one epoch: exact. Its divergence lower-bounds that of "
                      "the released (X, Y), so exceeding the bound refutes eps_H."),
            _app(NMF_MC, Verdict.INCONCLUSIVE, NMF_MC_GRID, regimes=(NMF_MC_EPOCHS,),
                 note="y alone (x hidden), estimated: far above the bound once kappa does not damp the y-step, but a "
                      "Monte-Carlo estimate cannot certify a violation."),
        ),
        note="eps_X + eps_Y with Theorem 4.6's per-step cost alpha eta S_g^2/(4 b^2 o) for the rows' batches and "
             "alpha eta S_g^2/(4 n^2 o) for y (all n = m b rows, once per epoch), K epochs and no contraction at all "
             "(larger than Theorem 4.6 for any L_F <= 1: generous to the paper). Algorithm 3 clips the batch "
             "gradient, not each example's, so one record moves it by up to 2 S_g, not S_g/b (research 11).",
    ),
    Theorem(
        id="chen2024.nmf.composition", title="Algorithm 3 (NMF) by composition over every block step",
        source=_src("Appendix B.2.1 (corrected)"), variant=Variant.CORRECTED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=2 * K * alpha * eta * S**2 / o,
        assumptions=(ORDER, Assumption("clipped_gradients", S > 0, "every block gradient is clipped to S_g")),
        requires=frozenset({"nmf"}),
        applications=(_app(NMF_ROW, Verdict.HOLDS, NMF_ROW_GRID, {"K": 1}),
                      _app(NMF_MC, Verdict.HOLDS, NMF_MC_GRID, regimes=(NMF_MC_EPOCHS,))),
        note="Each step moves its block by eta s g with s ||g|| <= S_g, so one record shifts the record's x-batch step "
             "and the y-step by at most 2 eta S_g each (the other x-batches do not see it): two Gaussian mechanisms "
             "of noise variance 2 eta o per epoch, alpha eta S_g^2/o each, composed adaptively over K epochs.",
    ),
    # ---- Lemma B.1 -----------------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.lemma_b1", title="Lipschitz constant of the W-update of the lifted network",
        source=_src("Lemma B.1"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=Quantity.GRADIENT_MAP_LIPSCHITZ, bound=Abs(1 - gamma_lag * eta * rho**2), assumptions=(),
        requires=frozenset({"lifted_network"}),
        applications=(_app(LIFTED, Verdict.VIOLATED, {"eta": (0.05, 0.1, 0.5), "gamma_lag": (1.0,),
                                                     "rho": (0.5, 1.0, 2.0), "d_in": (1, 2, 10)}),),
        note="The Hessian gamma x x^T (x) I is rank-deficient: directions orthogonal to x keep Lip(F) = 1 when "
             "d_in >= 2. The 'sensitivity S_g = gamma rho^2' that follows is a smoothness constant.",
    ),
    # ---- baselines -------------------------------------------------------------------------------------------------
    Theorem(
        id="chen2024.composition", title="Composition with every state revealed (baseline)",
        source=_src("Section 4.4 / Appendix E baseline"), variant=Variant.DERIVED, direction=Direction.UPPER,
        quantity=Quantity.RENYI, bound=CompositionBaseline(alpha, K, m, b, eta, S, o, o_last, o_rate, -1),
        assumptions=(ORDER, SENSITIVITY), requires=frozenset(),
        applications=(_app(SHUFFLED, Verdict.HOLDS, MAIN, UNCLIPPED, regimes=(CONTRACTIVE,)),),
        note="alpha eta S^2/(4 b^2) sum_k 1/o(k, j0), worst j0: one Gaussian mechanism per epoch.",
    ),
    Theorem(
        id="chen2024.dpsgd_baseline", title="DP-SGD accounting (Poisson rate b/n) the paper compares with",
        source=_src("Section 5 (DP-SGD comparison)"), variant=Variant.DERIVED, direction=Direction.UPPER,
        quantity=Quantity.RENYI,
        bound=SampledGaussianRDP(alpha, K * m, 1 / m, S / (b * sqrt(2 * o / eta))),
        assumptions=(ORDER, INTEGER_ORDER, CONSTANT_NOISE, TWO_BATCHES,
                     Assumption("positive_sensitivity", S > 0, "S_g > 0")), requires=frozenset(),
        applications=(_app(SHUFFLED, Verdict.HOLDS, MAIN, UNCLIPPED),),
        note="K n/b compositions of the sampled Gaussian with noise multiplier z = b sqrt(2 o/eta)/S_g. Poisson "
             "sampling and add/remove neighbours differ from the algorithm's fixed batches and replace-one: a "
             "reference point, not a proof for this algorithm.",
    ),
)

