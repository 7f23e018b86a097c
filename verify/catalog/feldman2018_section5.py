"""Feldman et al. 2018 (seed 001), Section 5: the (eps, delta)-DP claims of Theorem 30, Corollary 31 and Theorem 32,
checked against the tight eps(delta) of Skip-/Stop-PNSGD's released mixture on linear losses (research §7 items 2,
5, 7, 8), and the utility bounds of Theorems 28-30, Corollary 31 and Theorem 32 against projected SGD on a box
(psgd_box_linear). The local (eps, delta)-DP of Theorems 29-30 is Lemma 27's calibration (`feldman2018.lemma27.dp`)."""

from __future__ import annotations

import sympy as sp
from sympy import Max, harmonic
from sympy import log as log_

from verify.model import Application, Assumption, Direction, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import K, L, R, d, delta, eps, m_pub, n, sigma, t, tasks

SEED = "001_42e4c75025f5ccc0.txt"
PAPER = "Feldman, Mironov, Talwar, Thakurta 2018, Privacy Amplification by Iteration (FOCS 2018, arXiv:1808.06651)"
HOLDS, VIOLATED = Verdict.HOLDS, Verdict.VIOLATED
_DP = Quantity.DP_EPSILON
_REQUIRES = frozenset({"replace_one_fixed_index", "convex", "smooth", "bounded_domain"})


def _src(result: str) -> Source:
    return Source(SEED, PAPER, result, "")


DELTA_RANGE = Assumption("delta_range", delta < 1, "0 < delta < 1")
SMALL_EPS = Assumption("eps_range", eps < 1, "0 < eps < 1 (the classical Gaussian calibration's range)")
CALIBRATED = {"sigma": 2 * L * sp.sqrt(2 * log_(sp.Rational(5, 4) / delta)) / eps}  # Lemma 27 / Theorems 29, 30

SKIP_GRID = {"eps": (0.5, 1.0, 10.0, 20.0), "delta": (1e-5, 1e-10), "n": (1, 2, 10, 50), "t": (1, 2, 10, 50),
             "L": (1.0,)}
# Corollary 31: the last private record t = n - m_pub is the least amplified one
PUBLIC = (Assumption("public_records", m_pub < n, "1 <= m < n public records"),)
COR31_GRID = {"eps": (0.5, 1.0, 5.0, 20.0), "delta": (1e-2, 1e-5, 1e-10), "n": (2, 4, 10, 20),
              "m_pub": (1, 2, 5, 10), "L": (1.0,)}
LAST_PRIVATE = {"t": n - m_pub}
# the contracting instance: n = 2^22 records, m = n/128 public ones (the last private record is never skipped and the
# contraction leaves ~370 noise units from before it against m + 1 = 32769 after)
CONTRACTING_GRID = {"eps": (0.5, 0.7, 0.9), "delta": (1e-5, 1e-10), "n": (2**22,), "m_pub": (2**15,), "L": (1.0,)}
PRINTED_SIGMA = {"sigma": 2 * L * sp.sqrt(log_(sp.Rational(5, 4) / delta) / m_pub) / eps}
CORRECTED_SIGMA = {"sigma": 2 * L * sp.sqrt(2 * log_(sp.Rational(5, 4) / delta) / m_pub) / eps}
# Theorem 32
THM32_RANGES = (Assumption("eps_range", eps < 1, "0 < eps < 1"),
                Assumption("delta_range", delta < sp.Rational(1, 2), "0 < delta < 1/2"))
THM32_GRID = {"eps": (0.5, 0.9), "delta": (1e-5, 1e-3), "n": (1, 5), "t": (1,), "tasks": (1, 10, 100, 1000),
              "L": (1.0,)}


def _thm32_sigma(count) -> dict:
    """sigma = 4 L sqrt(q ln(1/delta))/eps with q = max(2 k count/n, 2 ln(1/delta))."""
    q = Max(2 * tasks * count / n, 2 * log_(1 / delta))
    return {"sigma": 4 * L * sp.sqrt(q * log_(1 / delta)) / eps}


THEOREMS = (
    Theorem(
        id="feldman2018.theorem30.per_index", title="Skip-PNSGD is (eps/sqrt(n-t+1), delta)-DP at index t",
        source=_src("Theorem 30 (privacy at index t)"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=_DP, bound=eps / sp.sqrt(n - t + 1), assumptions=(DELTA_RANGE,), requires=_REQUIRES,
        applications=(Application("skip_pnsgd_dp_linear", VIOLATED, SKIP_GRID, defaults=CALIBRATED),),
        note="Stated for every eps > 0 with the classical calibration sigma = 2L sqrt(2 ln(1.25/delta))/eps, which "
             "needs eps < 1: at t = n = 1 the claim is Lemma 27's and fails for eps > ~8.4; at small eps the true "
             "eps is far below the claim (the noise of every step, not only the later ones, hides a linear loss).",
    ),
    Theorem(
        id="feldman2018.theorem30.per_index.small_eps",
        title="Skip-PNSGD is (eps/sqrt(n-t+1), delta)-DP at index t, for eps < 1",
        source=_src("Theorem 30 (privacy at index t), with Dwork-Roth's eps < 1"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=_DP, bound=eps / sp.sqrt(n - t + 1),
        assumptions=(DELTA_RANGE, SMALL_EPS), requires=_REQUIRES,
        applications=(Application("skip_pnsgd_dp_linear", HOLDS, SKIP_GRID, defaults=CALIBRATED),),
        note="Research §7 item 8: Lemma 14 cannot derive it near eps = 1, the improved conversion can; the tight "
             "eps(delta) of the instance is below it everywhere.",
    ),
    Theorem(
        id="feldman2018.corollary31", title="Skip-PNSGD with m public records last is (eps, delta)-DP for S_priv",
        source=_src("Corollary 31 (privacy)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_DP,
        bound=eps, assumptions=(DELTA_RANGE,) + PUBLIC, requires=_REQUIRES,
        applications=(Application("skip_pnsgd_dp_linear", VIOLATED, COR31_GRID,
                                  defaults={**PRINTED_SIGMA, **LAST_PRIVATE},
                                  note="At the last private index t = n - m, the least amplified one: refuted at "
                                       "large eps only (the noise before t hides the linear record)."),
                      Application("skip_pnsgd_contracting", VIOLATED, CONTRACTING_GRID, defaults=PRINTED_SIGMA,
                                  note="Contracting private records erase most noise before t: at eps < 1 the true "
                                       "eps is 1.02-1.21 eps (1.093 at eps = 0.9, delta = 1e-10).")),
        note="Printed sigma = 2L sqrt(ln(1.25/delta)/m)/eps lacks the factor 2 under the root that the corollary's "
             "own utility term needs (research §7 item 5). It is a privacy violation at eps < 1, not only an analysis "
             "gap: on an instance whose private losses contract before the last private record (so that almost only "
             "the m + 1 later steps' noise hides it, as the amplification bound assumes) the true eps exceeds eps.",
    ),
    Theorem(
        id="feldman2018.corollary31.corrected",
        title="Corollary 31 with sigma = 2L sqrt(2 ln(1.25/delta)/m)/eps and eps < 1",
        source=_src("Corollary 31, sigma matching its utility term"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=_DP, bound=eps, assumptions=(DELTA_RANGE, SMALL_EPS) + PUBLIC,
        requires=_REQUIRES,
        applications=(Application(
            "skip_pnsgd_dp_linear", HOLDS, {**COR31_GRID, "eps": (0.1, 0.5, 0.9)},
            defaults={**CORRECTED_SIGMA, **LAST_PRIVATE}),
            Application("skip_pnsgd_contracting", HOLDS, CONTRACTING_GRID, defaults=CORRECTED_SIGMA)),
        note="Without eps < 1 the corrected sigma fails too (true eps 1.6 eps at eps = 20): the calibration's range.",
    ),
    Theorem(
        id="feldman2018.theorem32",
        title="k Stop-PNSGD runs with q = max(2k ln n/n, 2 ln(1/delta)) are (eps, delta)-DP",
        source=_src("Theorem 32 (privacy)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_DP,
        bound=eps, assumptions=THM32_RANGES, requires=_REQUIRES,
        applications=(Application("stop_pnsgd_tasks_linear", VIOLATED, THM32_GRID, defaults=_thm32_sigma(log_(n))),),
        note="Inherits Theorem 26's ln n (the sum is H_n): at n = 1, q = 2 ln(1/delta) for every k, so k runs form a "
             "Gaussian mechanism whose noise does not grow with k; at eps = 0.5, delta = 1e-5 it fails from k = 86.",
    ),
    Theorem(
        id="feldman2018.theorem32.corrected", title="Theorem 32 with H_n in place of ln n",
        source=_src("Theorem 32, with the harmonic sum of Theorem 26's proof"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=_DP, bound=eps, assumptions=THM32_RANGES, requires=_REQUIRES,
        applications=(Application("stop_pnsgd_tasks_linear", HOLDS, THM32_GRID,
                                  defaults=_thm32_sigma(harmonic(n))),),
    ),
)

# ---- utility: E F(W) - F* of projected SGD on a box, F linear (psgd_box_linear) -------------------------------------
_AVG = Quantity.AVG_EXCESS_RISK
_UTIL_REQUIRES = frozenset({"convex", "bounded_domain"})
L_G = sp.sqrt(L**2 + d * sigma**2)  # E||G||^2 = L^2 + d sigma^2 for the noisy gradient
STOP = {"K": n, "first": 1}  # Stop-PNSGD's output = Theorem 28's average over w_1..w_n
SKIP = {"K": n, "first": n - sp.floor(n / 2)}  # Skip-PNSGD's output stops uniformly in {ceil(n/2)..n}
PSGD_GRID = {"L": (1.0,), "R": (1.0,), "d": (1, 10), "sigma": (0.1, 1.0, 4.0), "K": (1, 10, 50), "start": (0.0, 1.0)}
UTIL_GRID = {"L": (1.0,), "R": (0.1, 10.0), "d": (1, 100), "eps": (0.5, 1.0), "delta": (1e-5,), "n": (10, 50),
             "start": (1.0,)}
COR31_UTIL_GRID = {**UTIL_GRID, "n": (20, 50), "m_pub": (1, 10)}
THM32_UTIL_GRID = {"L": (1.0,), "R": (1.0,), "d": (1, 100), "eps": (0.5,), "delta": (1e-5,), "n": (10, 50),
                   "tasks": (1, 1000), "start": (1.0,)}
UTILITY_29 = 4 * R * L / sp.sqrt(n) * sp.sqrt(1 + 8 * d * log_(sp.Rational(5, 4) / delta) / eps**2)


def _step(numerator) -> dict:
    """eta = numerator / sqrt(n (L^2 + d sigma^2))."""
    return {"eta": numerator / sp.sqrt(n * (L**2 + d * sigma**2))}


THEOREMS += (
    Theorem(
        id="feldman2018.theorem28", title="Projected SGD with eta = 2R/(L_G sqrt T): average excess <= 4 R L_G/sqrt T",
        source=_src("Theorem 28"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_AVG,
        bound=4 * R * L_G / sp.sqrt(K), assumptions=(), requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, PSGD_GRID,
                                  defaults={"eta": 2 * R / (L_G * sp.sqrt(K)), "first": 1}),),
        note="The standard analysis gives 2 R L_G/sqrt T for w_0..w_{T-1}; the printed update w + eta G is a sign "
             "typo.",
    ),
    Theorem(
        id="feldman2018.theorem29.utility", title="Stop-PNSGD's excess population loss (Theorem 29)",
        source=_src("Theorem 29 (utility)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_AVG,
        bound=UTILITY_29, assumptions=(DELTA_RANGE,), requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, UTIL_GRID,
                                  defaults={**CALIBRATED, **_step(2 * R), **STOP}),),
    ),
    Theorem(
        id="feldman2018.theorem30.utility", title="Skip-PNSGD's excess population loss, eta = sqrt(8) R/...",
        source=_src("Theorem 30 (utility), step read as sqrt(8) R"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=_AVG, bound=sp.sqrt(2) * UTILITY_29, assumptions=(DELTA_RANGE,),
        requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, UTIL_GRID,
                                  defaults={**CALIBRATED, **_step(sp.sqrt(8) * R), **SKIP}),),
        note="Theorem 29 on the n/2 points of Stop(n/2)-PNSGD, whose output law is Skip-PNSGD's.",
    ),
    Theorem(
        id="feldman2018.theorem30.utility.printed_step",
        title="Theorem 30's utility with the printed eta = sqrt(8R)/...",
        source=_src("Theorem 30 (utility), step as printed"), variant=Variant.PRINTED, direction=Direction.UPPER,
        quantity=_AVG, bound=sp.sqrt(2) * UTILITY_29, assumptions=(DELTA_RANGE,), requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, UTIL_GRID,
                                  defaults={**CALIBRATED, **_step(sp.sqrt(8 * R)), **SKIP}),),
        note="sqrt(8R) has the wrong units (research §7 item 9); on the box it still meets the bound (R = 0.1..10).",
    ),
    Theorem(
        id="feldman2018.corollary31.utility", title="Corollary 31's excess population loss (printed sigma)",
        source=_src("Corollary 31 (utility)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_AVG,
        bound=4 * sp.sqrt(2) * R * L / sp.sqrt(n)
        * sp.sqrt(1 + 8 * d * log_(sp.Rational(5, 4) / delta) / (m_pub * eps**2)),
        assumptions=(DELTA_RANGE,) + PUBLIC, requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, COR31_UTIL_GRID, defaults={
            "sigma": 2 * L * sp.sqrt(log_(sp.Rational(5, 4) / delta) / m_pub) / eps, **_step(sp.sqrt(8) * R),
            **SKIP}),),
        note="The printed sigma is half the variance the term assumes, so the utility holds a fortiori.",
    ),
    Theorem(
        id="feldman2018.theorem32.utility", title="Theorem 32's excess loss per task, eta = 4R/...",
        source=_src("Theorem 32 (utility)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_AVG,
        bound=4 * R * L / sp.sqrt(n) * sp.sqrt(
            1 + 16 * d * Max(2 * tasks * log_(n) / n, 2 * log_(1 / delta)) * log_(1 / delta) / eps**2),
        assumptions=THM32_RANGES, requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_linear", HOLDS, THM32_UTIL_GRID,
                                  defaults={**_thm32_sigma(log_(n)), **_step(4 * R), **STOP}),),
        note="eta = 4R/... is twice Theorem 28's 2R/...; the bound still holds here (standard SGD analysis gives "
             "about 2.5 R L_G/sqrt n), but it does not follow from Theorem 28 as stated (research §7 item 9).",
    ),
)

# ---- Corollary 34's whole utility bound: Skip-PNSGD on the smoothed non-smooth F = (L/sqrt d) ||w||_1 -------------
SECTION55 = {"lam": R * eps / (2 * sp.sqrt(n * log_(1 / delta)))}
COR34_UTIL_GRID = {"L": (1.0,), "R": (1.0,), "d": (2, 10, 100), "eps": (0.5, 1.0), "delta": (1e-5, 1e-14),
                   "n": (10, 50), "start": (1.0,)}
COR34_DEFAULTS = {**CALIBRATED, **_step(sp.sqrt(8) * R), **SKIP, **SECTION55}

THEOREMS += (
    Theorem(
        id="feldman2018.corollary34.utility", title="Corollary 34's excess population loss, as printed",
        source=_src("Corollary 34 (utility)"), variant=Variant.PRINTED, direction=Direction.UPPER, quantity=_AVG,
        bound=4 * sp.sqrt(2) * R * L / sp.sqrt(n) * (
            sp.sqrt(1 + 8 * d * log_(sp.Rational(5, 4) / delta) / eps**2)
            + eps * sp.sqrt(d) / (2 * log_(sp.Rational(5, 4) / delta))),
        assumptions=(DELTA_RANGE,), requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_smoothed_abs", HOLDS, COR34_UTIL_GRID, defaults=COR34_DEFAULTS),),
        note="Its smoothing term alone is refuted (corollary34.smoothing_term); in the sum the first term, loose "
             "here by two orders, absorbs the error.",
    ),
    Theorem(
        id="feldman2018.corollary34.utility.corrected",
        title="Corollary 34's excess loss with Section 5.5's smoothing error L R eps sqrt(d)/(2 sqrt(n ln(1/delta)))",
        source=_src("Corollary 34 (utility) with Section 5.5's smoothing error"), variant=Variant.CORRECTED,
        direction=Direction.UPPER, quantity=_AVG,
        bound=sp.sqrt(2) * UTILITY_29 + L * R * eps * sp.sqrt(d) / (2 * sp.sqrt(n * log_(1 / delta))),
        assumptions=(DELTA_RANGE,), requires=_UTIL_REQUIRES,
        applications=(Application("psgd_box_smoothed_abs", HOLDS, COR34_UTIL_GRID, defaults=COR34_DEFAULTS),),
    ),
)
