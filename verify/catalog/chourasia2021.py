"""Chourasia, Ye, Shokri (NeurIPS 2021), "Differential Privacy Dynamics of Langevin Diffusion and Noisy
Gradient Descent" (seed 000). Printed statements, proof forms and findings; see shared/research/seed-000.md.

Symbols follow verify.symbols: S is the summed-gradient sensitivity S_g (Def. B.10), sigma^2 the Langevin
noise variance (each step adds N(0, 2 eta sigma^2 I)), lam the strong convexity, beta the smoothness.
"""

from __future__ import annotations

import sympy as sp
from sympy import Eq, exp, log, sqrt

from verify.model import (
    Application,
    Assumption,
    Direction,
    FromFamily,
    Quantity,
    Source,
    Theorem,
    Variant,
)
from verify.results import Verdict
from verify.symbols import (
    E0,
    K,
    L,
    R,
    S,
    S_v,
    T,
    alpha,
    beta,
    c,
    center,
    d,
    delta,
    dist,
    eps,
    eps_p,
    eps_rdp,
    eta,
    gamma,
    lam,
    n,
    sigma,
    start_var,
    x,
    xo,
)

SEED = "000_7992779d639a2c87.txt"
PAPER = ("Chourasia, Ye, Shokri 2021, Differential Privacy Dynamics of Langevin Diffusion and Noisy Gradient Descent "
         "(NeurIPS 2021, arXiv:2102.05855)")
FAMILY = "noisy_gd_quadratic"


def _src(result: str, equation: str = "") -> Source:
    return Source(SEED, PAPER, result, equation)


def _grid(**overrides: tuple[float, ...]) -> dict[str, tuple[float, ...]]:
    """The default privacy grid on noisy_gd_quadratic; `None`-valued overrides drop a parameter."""
    base = {
        "alpha": (2.0, 10.0),
        "sigma": (0.1, 1.0),
        "eta": (0.01, 0.1, 0.5, 0.9, 1.5),
        "K": (1, 3, 10, 100, 1000),
        "S": (4.0,),
        "n": (1, 100),
        "lam": (0.5, 1.0, 2.0),
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


STABLE_STEPS = (0.01, 0.1, 0.5, 0.9)  # eta*lam < 2 on the default lam grid: variances stay in float range
PROJECTED_GRID = {"alpha": (2.0, 10.0), "sigma": (0.3,), "eta": (0.1, 0.5), "n": (1,), "K": (1, 5, 50), "S": (0.2,),
                  "lam": (1.0,), "R": (0.05, 0.25, 1.0), "center": (0.0,)}
LOGISTIC_GRID = {"alpha": (2.0, 10.0), "sigma": (0.5,), "eta": (0.1, 0.3), "n": (4,), "K": (1, 10, 30),
                 "x": (2.0,), "xo": (0.5, -1.0), "lam": (0.5,)}

# ---- assumptions shared by several results -------------------------------------------------------------
ORDER = Assumption("renyi_order", alpha > 1, "Rényi order alpha > 1")
CONVEX_SMOOTH = Assumption("strongly_convex_smooth", lam <= beta, "loss lam-strongly convex and beta-smooth")
STEP_LEMMA5 = Assumption("step_size", eta < 1 / beta, "eta < 1/beta (Lemma 5, Corollary 1)")
START_PRINTED = Assumption("start_law", Eq(start_var, 2 * sigma**2 / lam),
                           "theta_0 ~ Pi_C(N(0, 2 sigma^2/lam I)) as printed")
START_LSI = Assumption("start_lsi", start_var <= 2 * sigma**2 / lam,
                       "start law (lam/(2 sigma^2))-LSI: N(0, s I) with s <= 2 sigma^2/lam, or a fixed point")
FIXED_START = Assumption("fixed_start", Eq(start_var, 0), "deterministic start theta_0 = 0")
UNIT_LOSS = Assumption("half_squared_norm_loss", Eq(lam, 1), "loss 1/2 ||theta - x||^2 (curvature 1)")
LSI = Assumption("lsi", c > 0, "every tracing-diffusion marginal on [0, eta K] is c-LSI")

QUADRATIC = frozenset({"quadratic_loss", "unconstrained"})
SMOOTH_BIND = {"beta": lam}  # on (lam/2)||theta - x||^2 the smoothness equals the curvature
START_DEFAULT = {"start_var": 2 * sigma**2 / lam}

A_UNIT = alpha * S**2 / (4 * sigma**2 * n**2)  # the unit of Theorem 3 / Corollary 2 (Appendix E)
COR1 = alpha * S**2 / (lam * sigma**2 * n**2) * (1 - exp(-lam * eta * K / 2))
THM3_EXACT = A_UNIT * (2 - eta) * (1 - (1 - eta) ** K) / (1 + (1 - eta) ** K)
# THM3_EXACT * n**2 as sp.simplify writes it (spelled out: simplify costs ~0.2 s at import; tests/test_startup.py
# checks the two are the same expression)
THM3_MAINTEXT = alpha * S**2 * (eta - 2) * ((1 - eta) ** K - 1) / (4 * sigma**2 * (1 + (1 - eta) ** K))


LOWER_BOUNDS = ("chourasia2021.theorem3",)  # shown beside every upper bound where its hypotheses hold


def _renyi(id_: str, title: str, source: Source, variant: Variant, direction: Direction, bound: sp.Expr,
           assumptions: tuple[Assumption, ...], expected: Verdict, grid: dict, *, defaults=None, bind=None,
           requires: frozenset[str] = frozenset(), note: str = "", extra: tuple[Application, ...] = ()) -> Theorem:
    companions = LOWER_BOUNDS if direction is Direction.UPPER else ()
    app = Application(FAMILY, expected, grid, defaults or {}, bind or {}, companions)
    return Theorem(id_, title, source, variant, direction, Quantity.RENYI, bound, (ORDER, *assumptions),
                   requires, (app, *extra), note)


THEOREMS = (
    _renyi(
        "chourasia2021.theorem1", "Linear Rényi divergence bound (coupled diffusions)", _src("Theorem 1"),
        Variant.PRINTED, Direction.UPPER, alpha * S_v**2 * T / (4 * sigma**2), (), Verdict.HOLDS,
        _grid(start_var=(0.0, 1.0)), bind={"S_v": S / n, "T": eta * K},
        note="Applied to the tracing diffusion of noisy GD: S_v = S_g/n (Lemma 4), T = eta K.",
    ),
    _renyi(
        "chourasia2021.composition", "Composition (moments accountant) baseline",
        _src("Appendix E, Figures 1-2"), Variant.PRINTED, Direction.UPPER,
        alpha * S**2 * eta * K / (4 * n**2 * sigma**2), (), Verdict.HOLDS, _grid(start_var=(0.0, 1.0)),
        note="Bounds the release of every iterate, hence the last one.",
    ),
    _renyi(
        "chourasia2021.theorem2", "RDP of noisy GD under c-LSI (gamma = 1/2)", _src("Theorem 2", "eq. (16) = (56)"),
        Variant.PRINTED, Direction.UPPER,
        alpha * S**2 / (2 * c * sigma**4 * n**2) * (1 - exp(-sigma**2 * c * eta * K)), (LSI,), Verdict.HOLDS,
        _grid(start_var=(0.0, 0.5, 4.0), eta=STABLE_STEPS), bind={"c": FromFamily(Quantity.LSI_CONSTANT)},
        note="c is bound to the instance's exact LSI constant 1/max_t Var(Theta_t).",
    ),
    _renyi(
        "chourasia2021.theorem2.proof", "RDP of noisy GD under c-LSI, any Young split gamma",
        _src("Theorem 2 (proof)", "eq. (68)"), Variant.PROOF, Direction.UPPER,
        alpha * S**2 / (8 * gamma * (1 - gamma) * c * sigma**4 * n**2)
        * (1 - exp(-2 * (1 - gamma) * sigma**2 * c * eta * K)),
        (LSI, Assumption("young_split", sp.And(gamma > 0, gamma < 1), "0 < gamma < 1")), Verdict.HOLDS,
        _grid(start_var=(0.0, 0.5), gamma=(0.1, 0.5, 0.9), alpha=(2.0,), eta=STABLE_STEPS),
        bind={"c": FromFamily(Quantity.LSI_CONSTANT)},
        note="The proof holds for every fixed gamma in (0, 1); gamma = 1/2 gives eq. (16).",
    ),
    Theorem(
        "chourasia2021.lemma5", "LSI constant of the tracing diffusions of noisy GD", _src("Lemma 5"),
        Variant.PRINTED, Direction.LOWER, Quantity.LSI_CONSTANT, lam / (2 * sigma**2),
        (CONVEX_SMOOTH, STEP_LEMMA5, START_PRINTED), frozenset(),
        (Application(FAMILY, Verdict.HOLDS, _grid(alpha=None, S=None, n=None), START_DEFAULT, SMOOTH_BIND),),
        note="Claimed c = lam/(2 sigma^2) is a lower bound on the best LSI constant.",
    ),
    Theorem(
        "chourasia2021.lemma5.lsi_start", "Lemma 5 for any (lam/(2 sigma^2))-LSI start, fixed start included",
        _src("Lemma 5 (proof, extended)"), Variant.DERIVED, Direction.LOWER, Quantity.LSI_CONSTANT,
        lam / (2 * sigma**2), (CONVEX_SMOOTH, STEP_LEMMA5, START_LSI), frozenset(),
        (Application(FAMILY, Verdict.HOLDS, _grid(alpha=None, S=None, n=None, start_var=(0.0, 0.01, 0.5, 2.0)),
                     bind=SMOOTH_BIND),),
        note="The induction of Lemma 5 only uses that the start is c-LSI with c >= lam/(2 sigma^2) "
             "(research note P13).",
    ),
    _renyi(
        "chourasia2021.corollary1", "Privacy guarantee for noisy GD (strongly convex, smooth)",
        _src("Corollary 1"), Variant.PRINTED, Direction.UPPER, COR1,
        (CONVEX_SMOOTH, STEP_LEMMA5, START_PRINTED), Verdict.HOLDS, _grid(),
        defaults=START_DEFAULT, bind=SMOOTH_BIND,
        extra=(
            Application("noisy_gd_projected_1d", Verdict.HOLDS, PROJECTED_GRID, START_DEFAULT, SMOOTH_BIND,
                        note="S is the gradient difference over C (research S15)."),
            Application("noisy_gd_logistic_1d", Verdict.HOLDS, LOGISTIC_GRID, START_DEFAULT,
                        {"beta": lam + sp.Max(x**2, xo**2) / 4, "S": sp.Abs(x)},
                        note="beta = lam + max x^2/4; the gradient difference of x vs -x is constant |x|."),
        ),
    ),
    _renyi(
        "chourasia2021.corollary1.lsi_start", "Corollary 1 for any (lam/(2 sigma^2))-LSI start",
        _src("Corollary 1 (with Lemma 5 extended)"), Variant.DERIVED, Direction.UPPER, COR1,
        (CONVEX_SMOOTH, STEP_LEMMA5, START_LSI), Verdict.HOLDS, _grid(start_var=(0.0, 0.01, 0.5)),
        bind=SMOOTH_BIND, note="Covers a fixed start, which the printed statement does not.",
    ),
    _renyi(
        "chourasia2021.corollary1.maintext", "Corollary 1 as restated after Theorem 3 (exponent -eta K)",
        _src("Section 4, paragraph after Theorem 3"), Variant.PRINTED, Direction.UPPER,
        alpha * S**2 / (sigma**2 * n**2) * (1 - exp(-eta * K)), (UNIT_LOSS, FIXED_START,
                                                                 Assumption("step_size", eta < 1, "eta < 1")),
        Verdict.HOLDS, _grid(lam=(1.0,), start_var=(0.0,)), requires=QUADRATIC,
        note="Corollary 1 at lam = 1 gives exponent -eta K/2, not -eta K (research S4); still an upper bound here.",
    ),
    _renyi(
        "chourasia2021.theorem3", "Lower bound on the RDP of noisy GD (tightness instance)",
        _src("Theorem 3", "eq. (17) = (70)"), Variant.PRINTED, Direction.LOWER,
        A_UNIT * (1 - exp(-eta * K)),
        (UNIT_LOSS, FIXED_START, Assumption("step_size", eta < 1, "eta < 1")), Verdict.HOLDS,
        _grid(lam=(1.0,), start_var=(0.0,), eta=(0.01, 0.1, 0.5, 0.9, 0.99)), requires=QUADRATIC,
    ),
    _renyi(
        "chourasia2021.theorem3.exact", "Exact RDP on Theorem 3's instance, from its proof",
        _src("Theorem 3 (proof, Appendix E)"), Variant.PROOF, Direction.EXACT, THM3_EXACT,
        (UNIT_LOSS, FIXED_START, Assumption("step_size", eta <= 1, "eta <= 1")), Verdict.HOLDS,
        _grid(lam=(1.0,), start_var=(0.0,), eta=(0.01, 0.1, 0.5, 0.9, 1.0)), requires=QUADRATIC,
    ),
    _renyi(
        "chourasia2021.theorem3.maintext_variance", "Exact RDP implied by the main text's variance formula",
        _src("Section 4, paragraph before Theorem 3"), Variant.PRINTED, Direction.EXACT,
        THM3_MAINTEXT,
        (UNIT_LOSS, FIXED_START, Assumption("step_size", eta <= 1, "eta <= 1")), Verdict.VIOLATED,
        _grid(lam=(1.0,), start_var=(0.0,), eta=(0.01, 0.1, 0.5, 0.9)), requires=QUADRATIC,
        note="The main text prints sigma_k^2 = (2 eta sigma^2/n^2) sum (1-eta)^(2i); the appendix has no 1/n^2. "
             "The printed variance inflates R by n^2 (research S2).",
    ),
    _renyi(
        "chourasia2021.theorem3.cor1_start", "Theorem 3's lower bound under Corollary 1's random start",
        _src("Theorem 3, used with Corollary 1's start"), Variant.MISAPPLIED, Direction.LOWER,
        A_UNIT * (1 - exp(-eta * K)),
        (UNIT_LOSS, START_PRINTED, Assumption("step_size", eta < 1, "eta < 1")), Verdict.VIOLATED,
        _grid(lam=(1.0,), eta=(0.01, 0.1, 0.5, 0.9)), defaults=START_DEFAULT, requires=QUADRATIC,
        note="Theorem 3 needs theta_0 = 0; with theta_0 ~ N(0, 2 sigma^2) it fails for eta K below about 0.88 "
             "(research S1). A checker must not combine the two.",
    ),
    _renyi(
        "chourasia2021.theorem3.large_step", "Theorem 3's lower bound for 1 < eta < 2",
        _src("Theorem 3, outside its step-size range"), Variant.MISAPPLIED, Direction.LOWER,
        A_UNIT * (1 - exp(-eta * K)),
        (UNIT_LOSS, FIXED_START, Assumption("step_size", sp.And(eta > 1, eta < 2), "1 < eta < 2")),
        Verdict.VIOLATED, _grid(lam=(1.0,), start_var=(0.0,), eta=(1.2, 1.5, 1.9)), requires=QUADRATIC,
        note="The proof uses (2-eta)/(1+(1-eta)^K) >= 1, false for eta > 1 (research S1).",
    ),
    _renyi(
        "chourasia2021.corollary2", "RDP of noisy GD on 1/2||theta - x||^2, as printed (any step size and start)",
        _src("Corollary 2 (main text)", "eq. (18)"), Variant.PRINTED, Direction.UPPER,
        alpha * S**2 / ((2 - eta) * sigma**2 * n**2) * (1 - exp(-(2 - eta) * eta * K / 2)),
        (UNIT_LOSS, Assumption("step_size", sp.Ne(eta, 2), "any step size; the formula is 0/0 at eta = 2")),
        Verdict.HOLDS, _grid(lam=(1.0,), start_var=(0.0, 1.0), eta=(0.01, 0.1, 0.5, 0.9, 1.5, 1.99, 2.5)),
        requires=QUADRATIC,
        note="The printed 'any step-size' needs 0 < eta < 2 for its LSI constant c = (2-eta)/(2 sigma^2) > 0; "
             "past eta = 2 the formula grows like exp(K) and holds trivially (research S7).",
    ),
    _renyi(
        "chourasia2021.corollary2.appendix", "Corollary 2 as stated in the appendix (theta_0 = 0, 0 < eta < 2)",
        _src("Corollary 2 (appendix)", "eq. (72)"), Variant.PROOF, Direction.UPPER,
        alpha * S**2 / ((2 - eta) * sigma**2 * n**2) * (1 - exp(-(2 - eta) * eta * K / 2)),
        (UNIT_LOSS, FIXED_START, Assumption("step_size", eta < 2, "0 < eta < 2")), Verdict.HOLDS,
        _grid(lam=(1.0,), start_var=(0.0,), eta=(0.001, 0.01, 0.1, 0.5, 0.9, 1.5, 1.99),
              K=(1, 3, 10, 100, 1000, 10000)),
        requires=QUADRATIC,
    ),
    Theorem(
        "chourasia2021.theorem7", "RDP to (eps, delta)-DP conversion", _src("Theorem 7 (Mironov Prop. 3)"),
        Variant.PRINTED, Direction.UPPER, Quantity.DP_EPSILON, eps_rdp + log(1 / delta) / (alpha - 1),
        (ORDER, Assumption("delta_range", sp.And(delta > 0, delta < 1), "0 < delta < 1")), frozenset(),
        (Application(FAMILY, Verdict.HOLDS,
                     _grid(alpha=(1.5, 2.0, 10.0, 30.0), delta=(1e-5, 1e-2), start_var=(0.0,),
                           eta=(0.1, 0.9), K=(1, 10, 1000), lam=(1.0,)),
                     bind={"eps_rdp": FromFamily(Quantity.RENYI)}),),
        note="eps_rdp is bound to the instance's exact R_alpha; the truth is the tight eps(delta) of the "
             "Gaussian output pair.",
    ),
    Theorem(
        "chourasia2021.theorem4.rdp", "Noisy GD tuned as in Theorem 4 is (alpha, eps')-RDP",
        _src("Theorem 4 (RDP part)", "eq. (21) = (73)"), Variant.PRINTED, Direction.UPPER, Quantity.RENYI, eps_p,
        (ORDER, CONVEX_SMOOTH, START_PRINTED,
         Assumption("lipschitz", S <= 2 * L, "S_g <= 2L for an L-Lipschitz loss"),
         Assumption("step_size", Eq(eta, lam / (2 * beta**2)), "eta = lam/(2 beta^2)"),
         Assumption("noise", Eq(sigma**2, 4 * alpha * L**2 / (lam * eps_p * n**2)),
                    "sigma^2 = 4 alpha L^2/(lam eps' n^2)")),
        frozenset(),
        (Application(FAMILY, Verdict.HOLDS,
                     {"alpha": (2.0, 10.0), "eps_p": (0.1, 1.0, 8.0), "S": (1.0,), "n": (10, 1000),
                      "lam": (0.5, 2.0), "K": (1, 10, 100, 10000)},
                     defaults={"sigma": sqrt(alpha * S**2 / (lam * eps_p * n**2)), "eta": 1 / (2 * lam),
                               **START_DEFAULT},
                     bind={"beta": lam, "L": S / 2}),),
        note="Corollary 1 with S_g = 2L has asymptote exactly eps'; the claim holds for every K.",
    ),
    Theorem(
        "chourasia2021.theorem4.dp", "Noisy GD tuned as in Theorem 4 is (eps, delta)-DP",
        _src("Theorem 4 (DP part)", "eq. (22) = (74)"), Variant.PRINTED, Direction.UPPER, Quantity.DP_EPSILON, eps,
        (CONVEX_SMOOTH, START_PRINTED,
         Assumption("lipschitz", S <= 2 * L, "S_g <= 2L for an L-Lipschitz loss"),
         Assumption("eps_range", eps <= 2 * log(1 / delta), "eps <= 2 log(1/delta)"),
         Assumption("step_size", Eq(eta, lam / (2 * beta**2)), "eta = lam/(2 beta^2)"),
         Assumption("noise", Eq(sigma**2, 8 * L**2 * (eps + 2 * log(1 / delta)) / (lam * eps**2 * n**2)),
                    "sigma^2 = 8 L^2 (eps + 2 log(1/delta))/(lam eps^2 n^2)")),
        frozenset(),
        (Application(FAMILY, Verdict.HOLDS,
                     {"eps": (0.1, 1.0, 5.0), "delta": (1e-6, 1e-3), "S": (1.0,), "n": (10, 1000),
                      "lam": (0.5, 2.0), "K": (1, 10, 100, 10000)},
                     defaults={"sigma": sqrt(2 * S**2 * (eps + 2 * log(1 / delta)) / (lam * eps**2 * n**2)),
                               "eta": 1 / (2 * lam), **START_DEFAULT},
                     bind={"beta": lam, "L": S / 2}),),
    ),
    Theorem(
        "chourasia2021.lemma6", "Excess empirical risk of noisy GD, as printed", _src("Lemma 6", "eq. (20) = (78)"),
        Variant.PRINTED, Direction.UPPER, Quantity.EXCESS_RISK,
        2 * beta * L**2 / lam**2 * exp(-lam * eta * K) + 2 * beta * d * sigma**2 / lam,
        (CONVEX_SMOOTH, START_PRINTED, Assumption("step_size", eta <= lam / (2 * beta**2), "eta <= lam/(2 beta^2)"),
         Assumption("bounded_domain", E0 <= 4 * L**2 / lam**2,
                    "E||theta_0 - theta*||^2 <= diam(C)^2 <= (2L/lam)^2 (L-Lipschitz and lam-strongly convex on C)")),
        frozenset(),
        (Application(FAMILY, Verdict.HOLDS,
                     {"sigma": (0.1, 1.0), "eta": (0.01, 0.1, 0.25, 0.5), "K": (1, 10, 100, 1000),
                      "lam": (0.5, 1.0, 2.0), "d": (1, 10), "dist": (0.0, 1.0, 10.0)},
                     defaults=START_DEFAULT,
                     bind={"beta": lam, "E0": d * start_var + dist**2, "L": lam * sqrt(d * start_var + dist**2) / 2},
                     note="The unconstrained quadratic is not globally Lipschitz; L is bound to the smallest "
                          "value the proof uses (E0 <= 4L^2/lam^2)."),
         Application("noisy_gd_projected_1d", Verdict.HOLDS,
                     {"sigma": (0.1, 0.3), "eta": (0.1, 0.5), "K": (1, 20, 200), "lam": (1.0,), "n": (1, 10),
                      "S": (0.2, 1.0), "R": (1.0,), "center": (0.0, 0.3)},
                     defaults=START_DEFAULT,
                     bind={"beta": lam, "d": 1, "E0": 4 * R**2, "L": lam * (R + sp.Abs(center) + S / (2 * lam))},
                     note="L = sup over C and records of |lam (theta - x_i)|; E0 <= diam(C)^2 = 4 R^2.")),
        note="The printed noise term 2 beta d sigma^2/lam is twice what the proof gives (research S11).",
    ),
    Theorem(
        "chourasia2021.lemma6.proof", "Excess empirical risk of noisy GD, as the proof gives",
        _src("Lemma 6 (proof)", "eqs. (79)-(81)"), Variant.PROOF, Direction.UPPER, Quantity.EXCESS_RISK,
        beta / 2 * (1 - eta * lam) ** K * E0 + beta * d * sigma**2 * (1 - (1 - eta * lam) ** K) / lam,
        (CONVEX_SMOOTH, Assumption("step_size", eta <= lam / (2 * beta**2), "eta <= lam/(2 beta^2)")),
        frozenset(),
        (Application(FAMILY, Verdict.HOLDS,
                     {"sigma": (0.1, 1.0), "eta": (0.01, 0.1, 0.25, 0.5), "K": (1, 10, 100, 1000),
                      "lam": (0.5, 1.0, 2.0), "d": (1, 10), "dist": (0.0, 1.0, 10.0), "start_var": (0.0, 1.0)},
                     bind={"beta": lam, "E0": d * start_var + dist**2}),),
        note="E0 = E||theta_0 - theta*||^2; the sum sum_{k<K} eta (1 - eta lam)^k is written in closed form.",
    ),
)
