"""Per-instance DP-SGD (Thudi et al. 2024, seed 004): one step on a two-cluster 1-D dataset, exact
(verify.truth.dpsgd_step), for the sum and the mean rule; a triple of Gaussians for the weak triangle inequality
behind the unlearning rule of Sec. 5.4; and the orders Theorem 3.3's composition charges."""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Method, Truth
from verify.symbols import (
    alpha,
    d1,
    d2,
    dev,
    eta,
    f_prob,
    f_top,
    g_a,
    g_b,
    g_star,
    n_a,
    n_b,
    p_holder,
    q,
    runs,
    s,
    samples,
    steps_back,
)
from verify.truth.anchored_chain import anchored_chain_holder, anchored_chain_renyi, undercut_lower
from verify.truth.binomial_tail import mean_deviation_probability
from verify.truth.dpsgd_step import MAX_COMPONENTS, TwoClusterStep, dpsgd_step_renyi, theorem36_rhs
from verify.truth.gaussian import renyi_gaussian_1d

_R = Quantity.RENYI


def _step_truths(rule: str) -> dict:
    def renyi(alpha, q, s, g_star, n_a, g_a, n_b, g_b) -> Truth:
        return dpsgd_step_renyi(TwoClusterStep(q, s, g_star, int(n_a), g_a, int(n_b), g_b, rule), alpha)

    def expected_batch(alpha, q, s, g_star, n_a, g_a, n_b, g_b) -> Truth:
        return theorem36_rhs(TwoClusterStep(q, s, g_star, int(n_a), g_a, int(n_b), g_b, rule), alpha)

    return {_R: renyi, Quantity.EXPECTED_BATCH_RENYI: expected_batch}


_GRADIENT = "a clipped gradient (clip C = 1)"
_STEP_PARAMS = (
    Parameter(alpha, alpha > 1, "Rényi order"),
    Parameter(q, q <= 1, "Poisson sampling rate of every point, 0 < q <= 1 (the same on D and D')"),
    Parameter(s, s > 0, "noise std on the scale of U, in units of C (s = sigma C for the sum rule)"),
    Parameter(g_star, sp.And(g_star >= -1, g_star <= 1), f"gradient of the added point x*, {_GRADIENT}"),
    Parameter(n_a, n_a >= 0, "points of D in the first cluster", integer=True),
    Parameter(g_a, sp.And(g_a >= -1, g_a <= 1), f"their gradient, {_GRADIENT}"),
    Parameter(n_b, n_b >= 0, "points of D in the second cluster", integer=True),
    Parameter(g_b, sp.And(g_b >= -1, g_b <= 1), f"their gradient, {_GRADIENT}"),
)
_SIZE = (Assumption("engine_cap", (n_a + 1) * (n_b + 1) <= MAX_COMPONENTS,
                    f"(n_a + 1)(n_b + 1) <= {MAX_COMPONENTS} batch-count pairs"),)
_DOC = ("One DP-SGD step (Poisson rate q, noise N(0, s^2) on U) on D = n_a points with clipped gradient g_a and n_b "
        "with g_b, against D' = D u {x*}; per-instance RDP: the larger order of R_alpha(M(D') || M(D)) and "
        "R_alpha(M(D) || M(D')) (Def. 2.2); also Theorem 3.6's expected divergence to the batch-conditional Gaussian, "
        "the larger of E_{B ~ D} R_alpha(M(D') || N(U(B), s^2)) and E_{B ~ D'} R_alpha(M(D) || N(U(B), s^2))")
_METHOD = ("exact mixture over the batch counts (binomial weights), both orders by Gauss-Legendre quadrature with an "
           "error bound, Arb enclosure")

def _step_family(rule: str, update: str) -> Family:
    return Family(name=f"dpsgd_{rule}_step", description=f"{_DOC}; {rule} rule {update}.", parameters=_STEP_PARAMS,
                  facts=frozenset({"add_remove", "poisson_subsampling", f"{rule}_rule", "fixed_state"}),
                  truths=_step_truths(rule), method=_METHOD, constraints=_SIZE, expensive=True)


DPSGD_SUM_STEP = _step_family("sum", "U(B) = sum of the batch's gradients")
DPSGD_MEAN_STEP = _step_family("mean", "U(B) = mean of the batch's gradients, U(empty batch) = 0")

GAUSSIAN_TRIPLE = Family(
    name="gaussian_triple",
    description="P = N(0, s^2), Q = N(d1, s^2), R = N(d1 + d2, s^2); the quantity is R_alpha(P || R).",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order"), Parameter(d1, True, "mean of Q (P is centred)"),
                Parameter(d2, True, "mean of R minus the mean of Q"), Parameter(s, s > 0, "common std")),
    facts=frozenset({"gaussian"}),
    truths={_R: exact(lambda alpha, d1, d2, s: renyi_gaussian_1d(0, s * s, d1 + d2, s * s, alpha),
                      "Gaussian closed form alpha (d1 + d2)^2/(2 s^2)")},
    method="closed form",
)



def _holder_order(alpha, p_holder, steps_back):
    """g_p^i(alpha) by iterating the proof's order map g_p(a) = (p a - 1)/(p - 1) i times (Theorem 3.3)."""
    order = alpha
    for _ in range(int(steps_back)):
        order = (p_holder * order - 1) / (p_holder - 1)
    return order


HOLDER_ORDERS = Family(
    name="holder_orders",
    description="The order g_p^i(alpha) at which Theorem 3.3 (Thudi et al. 2024) charges step n - i: the proof's map "
                "g_p(a) = (p a - 1)/(p - 1) applied i times.",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order of the whole run"),
                Parameter(p_holder, p_holder > 1, "Hölder exponent p"),
                Parameter(steps_back, sp.And(steps_back >= 0, steps_back <= 100_000),
                          "i: how many steps before the last (at most 1e5 iterations)", integer=True)),
    facts=frozenset({"holder_composition"}),
    truths={Quantity.COMPOSITION_ORDER: exact(_holder_order, "the order map iterated at 50 digits")},
    method="iteration of the order map",
)


def _undercut(alpha, q, eta, runs) -> Truth:
    value, enclose = undercut_lower(alpha, q, eta, runs)
    return Truth(value, value, 1.0, Method.SERIES,
                 "proven lower end P(every run's per-step divergence < the truth) = erf(Delta_t/(eta sqrt 2))^runs; "
                 "the probability lies in [lower, 1], the value shown is that lower end", enclose=enclose)


_HOLDER, _UNDERCUT = Quantity.HOLDER_BOUND, Quantity.ESTIMATOR_UNDERCUT
DPSGD_ANCHORED_TWO_STEP = Family(
    name="dpsgd_anchored_two_step",
    description="Two released DP-SGD steps (research 4.5): D = {}, D' = {x*}, theta_0 = x*, clip 1, noise s = 1 on "
                "the gradient, step eta, Poisson rate q; x*'s clipped gradient at step 2 is min(eta |xi_1|, 1), set "
                "by step 1's noise. Quantities: the add-order path divergence R_alpha(law on D' || law on D); "
                "Theorem 3.3's right-hand side at Hölder exponent p_holder with the exact per-step divergences; and "
                "P(the paper's plug-in estimate of Theorem 3.3 from `runs` training runs < that divergence).",
    parameters=(Parameter(alpha, sp.And(alpha >= 2, alpha <= 16), "integer Rényi order, at most 16",
                          integer=True),
                Parameter(q, q <= 1, "Poisson sampling rate, 0 < q <= 1"),
                Parameter(eta, eta > 0, "step size (the noise on theta is eta xi)"),
                Parameter(p_holder, sp.And(p_holder >= 2, p_holder <= 12), "Hölder exponent p, an integer in "
                          "[2, 12]", integer=True, quantities=(_HOLDER,)),
                Parameter(runs, sp.And(runs >= 1, runs <= 10_000), "training runs behind the estimate",
                          integer=True, quantities=(_UNDERCUT,))),
    facts=frozenset({"add_remove", "poisson_subsampling", "sum_rule", "markov_chain"}),
    truths={_R: exact(anchored_chain_renyi, "closed form: finite sums of E[e^{m min(eta|xi|,1)^2}] in erf/erfi"),
            _HOLDER: exact(anchored_chain_holder, "closed form: M^p expanded, E[e^{m min(eta|xi|,1)^2}] in erf/erfi"),
            _UNDERCUT: _undercut},
    method="closed form (erf/erfi of the clipped Gaussian moment), Arb enclosure",
)

MAX_SAMPLES = 10**15
TWO_POINT_MEAN = Family(
    name="two_point_mean",
    description="The mean of `samples` i.i.d. draws of f in {1, f_top}, P(f = f_top) = f_prob (the extreme case of a "
                "bounded f in Hoeffding's inequality); the quantity is P(|E^l f - E f| >= dev).",
    parameters=(Parameter(f_top, f_top > 1, "the larger value R of f"),
                Parameter(f_prob, f_prob < 1, "P(f = f_top), in (0, 1)"),
                Parameter(samples, samples <= MAX_SAMPLES, f"number of draws l, at most {MAX_SAMPLES:.0e}",
                          integer=True),
                Parameter(dev, dev > 0, "the deviation t")),
    facts=frozenset({"bounded_mean"}),
    truths={Quantity.DEVIATION_PROBABILITY: mean_deviation_probability},
    method="exact binomial tail (regularized incomplete beta), Arb enclosure",
)

FAMILIES = (DPSGD_SUM_STEP, DPSGD_MEAN_STEP, GAUSSIAN_TRIPLE, HOLDER_ORDERS, DPSGD_ANCHORED_TWO_STEP, TWO_POINT_MEAN)
