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
from verify.symbols import K, L, R, d, eta, first, sigma, start
from verify.truth.numbers import Enclosure
from verify.truth.projected_chain import MAX_WORK, mean_bracket

_AVG = Quantity.AVG_EXCESS_RISK
_LATTICE = 1000  # lattice intervals per axis (fewer when the step count would exceed the work cap)


def _average_excess(L, R, d, sigma, eta, K, first, start) -> Truth:
    L, R, d, sigma, eta, K, first, start = (float(L), float(R), int(d), float(sigma), float(eta), int(K), int(first),
                                            float(start))
    a = R / math.sqrt(d)
    n = min(_LATTICE, int(math.sqrt(MAX_WORK / K)) - 1)
    bracket = mean_bracket(a, eta * L / math.sqrt(d), eta * sigma, K, start * a, n)
    bracket = np.vstack([[start * a, start * a], bracket])[first:]  # row k: E[w_k], k = 0..K (w_0 is the start)
    scale = math.sqrt(d) * L
    lower = scale * max(float((bracket[:, 0] + a).mean()), 0.0)
    upper = scale * float((bracket[:, 1] + a).mean())

    def enclose(prec: int) -> Enclosure:
        return Enclosure(arb(lower), arb(upper), "monotone lattice chains rounded down/up (proven bracket)", prec)

    return Truth((lower + upper) / 2, lower, upper, Method.GRID,
                 f"mean of E F(w_k) - F* over k = {first}..{K}: monotone lattice bracket, {n + 1} points per axis",
                 enclose=enclose)


PSGD_BOX_LINEAR = Family(
    name="psgd_box_linear",
    description="Projected SGD (Feldman et al. Thm 28 / Stop- and Skip-PNSGD) on F(w) = L <u, w>, u = 1/sqrt(d), over "
                "the box [-R/sqrt(d), R/sqrt(d)]^d inside the ball of radius R; stochastic gradient L u + N(0, "
                "sigma^2 I); w_0 = start * R/sqrt(d) per axis; quantity: the mean of E F(w_k) - F* over "
                "k = first..K (first = 0: seed 002's average of x_1..x_T, x_1 = w_0, T = K + 1; "
                "first = 1: Theorem 28's average, = Stop-PNSGD's output; first = n - floor(n/2): "
                "Skip-PNSGD's output, which stops uniformly in {ceil(n/2)..n}).",
    parameters=(Parameter(L, L > 0, "Lipschitz constant (= ||E G||)"), Parameter(R, R > 0, "radius of the ball"),
                Parameter(d, sp.And(d >= 1, d <= 10**6), "dimension", integer=True),
                Parameter(sigma, sigma > 0, "std of the gradient noise per axis"),
                Parameter(eta, eta > 0, "step size"),
                Parameter(K, sp.And(K >= 1, K <= 200), "number of steps, 1..200", integer=True),
                Parameter(first, first >= 0, "first iterate of the average (0: the start w_0)", integer=True),
                Parameter(start, sp.And(start >= -1, start <= 1), "start as a fraction of the half-width")),
    facts=frozenset({"convex", "lipschitz", "linear_loss", "bounded_domain", "smooth"}),
    truths={_AVG: _average_excess},
    method="monotone lattice chains (proven bracket on every E[w_k])",
    constraints=(Assumption("average_range", first <= K, "0 <= first <= K"),),
    expensive=True,
)

FAMILIES = (PSGD_BOX_LINEAR,)
