"""Projected noisy SGD on a box (Feldman et al. 2018, Section 5's utility theorems): F(w) = L <u, w> with
u = (1, ..., 1)/sqrt(d) over K = [-a, a]^d, a = R/sqrt(d) (the box inscribed in the ball of radius R), gradient oracle
G = L u + N(0, sigma^2 I) (unbiased, E||G||^2 = L^2 + d sigma^2 = L_G^2). Projection onto a box acts per axis, so
the d coordinates are independent copies of one 1-D projected chain (verify.truth.projected_chain), and
E F(w_k) - F* = sqrt(d) L (E[w_k,1] + a)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from flint import arb

from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Method, Truth
from verify.symbols import K, L, R, d, eta, first, lam, shift, sigma, start, weighted
from verify.truth.numbers import Enclosure
from verify.truth.projected_chain import MAX_WORK, AffineStep, SmoothedAbsStep, lattice_laws

_AVG = Quantity.AVG_EXCESS_RISK
_LATTICE = 1000  # lattice intervals per axis (fewer when the step count would exceed the work cap)


_L = Parameter(L, L > 0, "Lipschitz constant of F")
_R = Parameter(R, R > 0, "radius of the ball holding the box")
_D = Parameter(d, sp.And(d >= 1, d <= 10**6), "dimension", integer=True)
_SIGMA = Parameter(sigma, sigma > 0, "std of the gradient noise per axis")
_ETA = Parameter(eta, eta > 0, "step size")
_FIRST = Parameter(first, first >= 0, "first iterate of the average (0: the start w_0)", integer=True)
_START = Parameter(start, sp.And(start >= -1, start <= 1), "start as a fraction of the half-width")
_STEPS = Parameter(K, sp.And(K >= 1, K <= 200), "number of steps, 1..200", integer=True)
_AVERAGE_RANGE = Assumption("average_range", first <= K, "0 <= first <= K")


def _bracket_truth(lower: float, upper: float, detail: str, how: str) -> Truth:
    """A proven [lower, upper] as a grid truth whose enclosure is that bracket."""
    def enclose(prec: int) -> Enclosure:
        return Enclosure(arb(lower), arb(upper), how, prec)

    return Truth((lower + upper) / 2, lower, upper, Method.GRID, detail, enclose=enclose)


def _mean_excess(step, L, R, d, K, first, start, increasing, decreasing) -> Truth:
    """Mean over k = first..K of E F(w_k) - F* = L sqrt(d) E phi(w_k,1), d identical axes, phi = increasing +
    decreasing (functions of the lattice points) with phi(start) at k = 0."""
    a = R / math.sqrt(d)
    n = min(_LATTICE, int(math.sqrt(MAX_WORK / K)) - 1)
    laws = lattice_laws(a, [step] * K, start * a, n)
    at_start = float(increasing(np.array([start * a]))[0] + decreasing(np.array([start * a]))[0])
    ends = np.vstack([[at_start] * 2, laws.expectation(increasing(laws.points), decreasing(laws.points))])[first:]
    scale = math.sqrt(d) * L
    return _bracket_truth(scale * max(float(ends[:, 0].mean()), 0.0), scale * float(ends[:, 1].mean()),
                          f"mean of E F(w_k) - F* over k = {first}..{K}: monotone lattice bracket, {n + 1} points "
                          "per axis", "monotone lattice chains rounded down/up (proven bracket)")


def _average_excess(L, R, d, sigma, eta, K, first, start) -> Truth:
    a = R / math.sqrt(int(d))
    return _mean_excess(AffineStep(1.0, eta * L / math.sqrt(int(d)), eta * sigma), float(L), float(R), int(d),
                        int(K), int(first), float(start), lambda x: x + a, np.zeros_like)


PSGD_BOX_LINEAR = Family(
    name="psgd_box_linear",
    description="Projected SGD (Feldman et al. Thm 28 / Stop- and Skip-PNSGD) on F(w) = L <u, w>, u = 1/sqrt(d), over "
                "the box [-R/sqrt(d), R/sqrt(d)]^d inside the ball of radius R; stochastic gradient L u + N(0, "
                "sigma^2 I); w_0 = start * R/sqrt(d) per axis; quantity: the mean of E F(w_k) - F* over "
                "k = first..K (first = 0: seed 002's average of x_1..x_T, x_1 = w_0, T = K + 1; "
                "first = 1: Theorem 28's average, = Stop-PNSGD's output; first = n - floor(n/2): "
                "Skip-PNSGD's output, which stops uniformly in {ceil(n/2)..n}).",
    parameters=(_L, _R, _D, _SIGMA, _ETA, _STEPS, _FIRST, _START),
    facts=frozenset({"convex", "lipschitz", "linear_loss", "bounded_domain", "smooth"}),
    truths={_AVG: _average_excess},
    method="monotone lattice chains (proven bracket on every E[w_k])",
    constraints=(_AVERAGE_RANGE,),
    expensive=True,
)

_QUADRATIC_LATTICE = 600  # the steps vary, so every step builds its own transition matrices


def _averaged_risk(lam, R, d, sigma, K, start, shift, weighted) -> Truth:
    """E f(x_bar) - f* for f = (lam/2)||w||^2, bracketed by Jensen: f(E x_bar) <= E f(x_bar) <= sum_t w_t E f(x_t),
    with E x_t and E x_t^2 (an increasing plus a decreasing part) from the lattice chains."""
    lam, R, d, sigma, K, start, shift, weighted = (float(lam), float(R), int(d), float(sigma), int(K), float(start),
                                                   int(shift), int(weighted))
    a = R / math.sqrt(d)
    # x_1 = w_0 = start a; x_{t+1} = clip(x_t - eta_t (lam x_t + sigma Z)), eta_t = 1/(lam (t + shift)), t < K
    steps = [AffineStep(1 - 1 / (t + shift), 0.0, sigma / (lam * (t + shift))) for t in range(1, K)]
    x0 = start * a
    if steps:
        laws = lattice_laws(a, steps, x0, _QUADRATIC_LATTICE)
        x = laws.points
        means = np.vstack([[x0, x0], laws.expectation(x)])
        squares = np.vstack([[x0**2, x0**2], laws.expectation(np.maximum(x, 0) ** 2, np.minimum(x, 0) ** 2)])
    else:
        means, squares = np.array([[x0, x0]]), np.array([[x0**2, x0**2]])
    weights = np.arange(1, K + 1, dtype=float) if weighted else np.ones(K)
    weights /= weights.sum()
    mean_lo, mean_hi = weights @ means[:, 0], weights @ means[:, 1]
    nearest = 0.0 if mean_lo <= 0 <= mean_hi else min(abs(mean_lo), abs(mean_hi))
    return _bracket_truth(d * lam / 2 * nearest**2, d * lam / 2 * float(weights @ squares[:, 1]),
                          f"between f(E x_bar) and the mean of E f(x_t): lattice bracket, {_QUADRATIC_LATTICE + 1} "
                          "points", "Jensen bracket from monotone lattice chains (proven)")


PSGD_BOX_QUADRATIC = Family(
    name="psgd_box_quadratic",
    description="Projected SGD on the lam-strongly convex f(w) = (lam/2)||w||^2 over the box [-R/sqrt(d), R/sqrt(d)]^d "
                "(f is lam R-Lipschitz there, f* = 0 at the centre), stochastic gradient lam w + N(0, sigma^2 I), step "
                "eta_t = 1/(lam (t + shift)); x_1 = start * R/sqrt(d) per axis, T = K iterates x_1..x_K; quantity: "
                "E f(x_bar) - f* for the uniform (weighted = 0) or t-weighted (weighted = 1) average, bracketed "
                "between f(E x_bar) and the average of E f(x_t) (Jensen).",
    parameters=(Parameter(lam, lam > 0, "strong convexity"), _R, _D, _SIGMA,
                Parameter(K, sp.And(K >= 1, K <= 200), "number of iterates T, 1..200", integer=True),
                Parameter(start, sp.And(start >= -1, start <= 1), "start as a fraction of the half-width"),
                Parameter(shift, sp.And(shift >= 0, shift <= 1), "eta_t = 1/(lam (t + shift))", integer=True),
                Parameter(weighted, sp.And(weighted >= 0, weighted <= 1), "0: uniform average, 1: weights ~ t",
                          integer=True)),
    facts=frozenset({"convex", "strongly_convex", "lipschitz", "bounded_domain", "smooth"}),
    truths={Quantity.AVERAGED_ITERATE_RISK: _averaged_risk},
    method="monotone lattice chains (proven brackets on E x_t and E x_t^2) and Jensen's inequality",
    expensive=True,
)

def _smoothed_abs_excess(L, R, d, sigma, eta, K, first, start, lam) -> Truth:
    """SGD on the smoothed losses, scored on F: |w| = max(w, 0) + max(-w, 0)."""
    return _mean_excess(SmoothedAbsStep(eta * L / math.sqrt(int(d)), lam, eta * sigma), float(L), float(R), int(d),
                        int(K), int(first), float(start), lambda x: np.maximum(x, 0), lambda x: np.maximum(-x, 0))


PSGD_BOX_SMOOTHED_ABS = Family(
    name="psgd_box_smoothed_abs",
    description="Projected SGD on the Gaussian-smoothed losses (Feldman et al. Thm 33 / Cor 34) of the non-smooth "
                "F(w) = (L/sqrt(d)) sum_i |w_i| (convex, L-Lipschitz on R^d, so it is its own Lipschitz extension) "
                "over the box [-R/sqrt(d), R/sqrt(d)]^d: stochastic gradient grad f_hat(w) + N(0, sigma^2 I) with "
                "f_hat(w) = E F(w + lam Z); w_0 = start * R/sqrt(d) per axis; quantity: the mean of E F(w_k) - F* "
                "(the original F) over k = first..K.",
    parameters=(_L, _R, _D, _SIGMA, _ETA, _STEPS, _FIRST, _START, Parameter(lam, lam > 0, "smoothing scale")),
    facts=frozenset({"convex", "lipschitz", "bounded_domain", "smoothed"}),
    truths={_AVG: _smoothed_abs_excess},
    method="monotone lattice chains (proven bracket on every E|w_k|)",
    constraints=(_AVERAGE_RANGE,
                 Assumption("monotone_step", eta * L / sp.sqrt(d) <= lam * sp.sqrt(sp.pi / 2),
                            "eta L/sqrt(d) <= lam sqrt(pi/2): each step is monotone (the bracket's premise)")),
    expensive=True,
)

FAMILIES = (PSGD_BOX_LINEAR, PSGD_BOX_QUADRATIC, PSGD_BOX_SMOOTHED_ABS)
