"""Per-instance DP-SGD (Thudi et al. 2024, seed 004): one step on a two-cluster 1-D dataset, exact
(verify.truth.dpsgd_step), for the sum and the mean rule; a triple of Gaussians for the weak triangle inequality
behind the unlearning rule of Sec. 5.4; and the orders Theorem 3.3's composition charges."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy as sp

from verify.families._exact import exact
from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Method, Truth
from verify.symbols import (
    alpha,
    batches,
    d1,
    d2,
    delta,
    delta_slack,
    dev,
    eps,
    eta,
    f_prob,
    f_top,
    g_a,
    g_b,
    g_star,
    inner,
    n_a,
    n_b,
    outer,
    p_holder,
    q,
    runs,
    s,
    samples,
    sigma,
    steps_back,
)
from verify.truth.anchored_chain import anchored_chain_holder, anchored_chain_renyi, undercut_lower
from verify.truth.batch_estimators import (
    MAX_POINTS,
    corollary31_estimate_below_lower,
    theorem36_estimate_zero_lower,
)
from verify.truth.binomial_tail import mean_deviation_probability
from verify.truth.dpsgd_step import MAX_COMPONENTS, TwoClusterStep, dpsgd_step_renyi, theorem36_rhs
from verify.truth.holder_hockey_stick import holder_hockey_stick
from verify.truth.numbers import Enclosure, arb_numbers

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

def _step_region(rule: str) -> tuple[sp.Basic, ...]:
    """Where a search draws: binomial weights q^k (1 - q)^(n - k) that stay above the float range (n_a + n_b <= 40,
    q >= 1e-6; an underflowed weight opens the float interval), a quadrature over the Rényi tilt alpha x (the spread
    of U) of at most a few thousand panels of width s (the spread is n_a + n_b + 1 for the sum rule, 2 for the mean
    rule), and orders alpha <= 64, whose Arb enclosures are milliseconds (at alpha = 1304 one certificate and the
    rounding of the counterexample took 120 s)."""
    spread = n_a + n_b + 1 if rule == "sum" else 2
    return (n_a + n_b <= 40, q >= sp.Rational(1, 10**6), alpha <= 64, alpha * spread <= 200 * s)


def _step_family(rule: str, update: str) -> Family:
    return Family(name=f"dpsgd_{rule}_step", description=f"{_DOC}; {rule} rule {update}.", parameters=_STEP_PARAMS,
                  facts=frozenset({"add_remove", "poisson_subsampling", f"{rule}_rule", "fixed_state"}),
                  truths=_step_truths(rule), method=_METHOD, constraints=_SIZE, expensive=True,
                  search_region=_step_region(rule))


DPSGD_SUM_STEP = _step_family("sum", "U(B) = sum of the batch's gradients")
DPSGD_MEAN_STEP = _step_family("mean", "U(B) = mean of the batch's gradients, U(empty batch) = 0")

def _triple_renyi(alpha, d1, d2, s):
    """R_alpha(N(0, s^2) || N(d1 + d2, s^2)) = alpha (d1 + d2)^2/(2 s^2), equal variances written out: the general
    two-variance form (verify.truth.gaussian.renyi_gaussian_1d) adds a log-determinant that is 0 only up to rounding,
    divided by 2 (alpha - 1): noise far above a tiny mean term at alpha near 1."""
    return alpha * (d1 + d2) ** 2 / (2 * s * s)


GAUSSIAN_TRIPLE = Family(
    name="gaussian_triple",
    description="P = N(0, s^2), Q = N(d1, s^2), R = N(d1 + d2, s^2); the quantity is R_alpha(P || R).",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order"), Parameter(d1, True, "mean of Q (P is centred)"),
                Parameter(d2, True, "mean of R minus the mean of Q"), Parameter(s, s > 0, "common std")),
    facts=frozenset({"gaussian"}),
    truths={_R: exact(_triple_renyi, "Gaussian closed form alpha (d1 + d2)^2/(2 s^2)")},
    method="closed form",
)



def _holder_order(alpha, p_holder, steps_back):
    """g_p^i(alpha) for the proof's order map g_p(a) = (p a - 1)/(p - 1) applied i times (Theorem 3.3), in closed
    form: g_p(a) - 1 = (p/(p - 1)) (a - 1), so g_p^i(alpha) = 1 + (alpha - 1) (p/(p - 1))^i (no i-fold rounding, and
    no p a - 1 of a rounded a near 1/p)."""
    return 1 + (alpha - 1) * (p_holder / (p_holder - 1)) ** int(steps_back)


HOLDER_ORDERS = Family(
    name="holder_orders",
    description="The order g_p^i(alpha) at which Theorem 3.3 (Thudi et al. 2024) charges step n - i: the proof's map "
                "g_p(a) = (p a - 1)/(p - 1) applied i times.",
    parameters=(Parameter(alpha, alpha > 1, "Rényi order of the whole run"),
                Parameter(p_holder, p_holder > 1, "Hölder exponent p"),
                Parameter(steps_back, sp.And(steps_back >= 0, steps_back <= 100_000),
                          "i: how many steps before the last (at most 1e5 iterations)", integer=True)),
    facts=frozenset({"holder_composition"}),
    truths={Quantity.COMPOSITION_ORDER: exact(_holder_order, "the order map iterated i times, in closed form "
                                                             "1 + (alpha - 1) (p/(p - 1))^i, 50 digits")},
    method="the iterated order map in closed form",
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


_PREC = 160  # bits of the Arb evaluation behind a probability's float (its enclosure is recomputed on demand)


def _at_least(fn: Callable[..., Any], detail: str) -> Callable[..., Truth]:
    """A probability known to lie in [fn(params), 1]: the Truth's value is the proven lower end (Arb balls give both
    the float, rounded down, and the enclosure)."""

    def truth(**params: float) -> Truth:
        done: dict[int, Enclosure] = {}  # the float's own enclosure serves the re-check at 64 and 128 bits

        def enclose(prec: int) -> Enclosure:
            prec = max(prec, _PREC)
            if prec not in done:
                with arb_numbers(prec) as N:
                    low = N.mpf(fn(**{k: N.mpf(v) for k, v in params.items()}))
                    done[prec] = Enclosure(low.lower(), N.mpf(1), f"{detail}: lower end in Arb balls, upper end 1",
                                           prec)
            return done[prec]

        low = float(enclose(_PREC).lower)
        low = max(0.0, math.nextafter(low, -math.inf))
        return Truth(low, low, 1.0, Method.SERIES, f"{detail}; the probability lies in [lower, 1], the value shown "
                     "is that lower end", enclose=enclose)

    return truth


_SHARED = ("one DP-SGD step, mean rule (U(empty batch) = 0), Poisson rate q; the n_a other points of D share one "
           "clipped gradient g_a, x*'s is g_star != g_a (D' = D u {x*})")
_POINTS = Parameter(n_a, sp.And(n_a >= 1, n_a <= MAX_POINTS), f"points of D besides x*, at most {MAX_POINTS}",
                    integer=True)
THEOREM36_ESTIMATE = Family(
    name="dpsgd_mean_theorem36_estimate",
    description=f"{_SHARED}. The quantity is P(the paper's outer x inner plug-in estimate of Theorem 3.6 < the true "
                "per-instance divergence): every value of s, g_star != g_a gives the same proven lower end, the "
                "probability that the estimate is exactly 0 (verify.truth.batch_estimators).",
    parameters=(Parameter(alpha, sp.And(alpha >= 2, alpha <= 64), "integer Rényi order, at most 64", integer=True),
                Parameter(q, q < 1, "Poisson sampling rate, 0 < q < 1"), _POINTS,
                Parameter(outer, sp.And(outer >= 1, outer <= 10_000), "outer batches of the estimate", integer=True),
                Parameter(inner, sp.And(inner >= 1, inner <= 10_000), "inner alpha-tuples per outer batch",
                          integer=True)),
    facts=frozenset({"add_remove", "poisson_subsampling", "mean_rule", "fixed_state"}),
    truths={Quantity.ESTIMATOR_UNDERCUT: _at_least(
        lambda alpha, q, n_a, outer, inner: theorem36_estimate_zero_lower(alpha, q, n_a, outer, inner),
        "proven lower end P(every outer batch plain, at most one non-plain batch in every inner tuple) on "
        "P(estimate = 0)")},
    method="closed form (powers of the batch probabilities), Arb enclosure",
)

_GRADIENTS = (Parameter(g_star, sp.And(g_star >= -1, g_star <= 1), "x*'s clipped gradient (clip C = 1)"),
              Parameter(g_a, sp.And(g_a >= -1, g_a <= 1), "the other points' common clipped gradient"))
COROLLARY31_ESTIMATE = Family(
    name="dpsgd_mean_corollary31_estimate",
    description=f"{_SHARED}, noise N(0, s^2) on U. The quantity is P(the paper's `batches`-batch estimate of "
                "Corollary 3.1's eps' < the exact eps' it stands for, E over the batches of D summed over the N + 1 "
                "batch sizes), with Hölder exponent p_holder, delta'' = delta and delta' = delta_slack.",
    parameters=(Parameter(q, q < 1, "Poisson sampling rate, 0 < q < 1"), _POINTS,
                Parameter(s, s > 0, "noise std on the scale of U, in units of C"), *_GRADIENTS,
                Parameter(p_holder, p_holder > 1, "Hölder exponent p"),
                Parameter(delta, delta < 1, "delta'' of the claim"),
                Parameter(delta_slack, delta_slack < 1, "the free slack delta'"),
                Parameter(batches, sp.And(batches >= 1, batches <= 10**6), "sampled batches behind the estimate",
                          integer=True)),
    facts=frozenset({"add_remove", "poisson_subsampling", "mean_rule", "fixed_state"}),
    constraints=(Assumption("slack_below_delta", delta > delta_slack, "delta'' > delta'"),
                 Assumption("real_calibration", 5 * q / (4 * (delta - delta_slack)) > 1,
                            "1.25 q/(delta'' - delta') > 1 (a real C_{delta,s})")),
    truths={Quantity.ESTIMATE_BELOW_BOUND: _at_least(
        lambda n_a, **rest: corollary31_estimate_below_lower(n_points=n_a, **rest),
        "proven lower end P(every sampled batch has >= k0 points), k0 the smallest size whose ceiling on the "
        "estimate is below the exact eps'")},
    method="closed form (binomial atoms summed exactly), Arb enclosure",
)


def _holder_hockey_stick(sigma, eps, p_holder) -> Truth:
    low, high, enclose = holder_hockey_stick(sigma, eps, p_holder)
    low, high = max(0.0, math.nextafter(low, -math.inf)), math.nextafter(high, math.inf)
    return Truth(low, low, high, Method.SERIES, "proven lower end g(t*) at a half-line; upper end the Gaussian hockey "
                 "stick (P_0^(1 - 1/p) >= P_0); the value shown is the lower end", enclose=enclose)


GAUSSIAN_HOLDER_HOCKEY_STICK = Family(
    name="gaussian_holder_hockey_stick",
    description="The Gaussian pair P_1 = N(1, sigma^2), P_0 = N(0, sigma^2) (sensitivity 1); the quantity is "
                "sup_S [P_1(S) - e^eps P_0(S)^(1 - 1/p)], Lemma A.1's per-batch inequality after Hölder (Thudi et "
                "al. 2024) on the worst-case pair of the sum rule.",
    parameters=(Parameter(sigma, sigma > 0, "noise std (sensitivity 1)"),
                Parameter(eps, eps >= 0, "the per-batch eps"),
                Parameter(p_holder, p_holder > 1, "Hölder exponent p")),
    facts=frozenset({"add_remove", "gaussian", "sum_rule"}),
    truths={Quantity.HOLDER_HOCKEY_STICK: _holder_hockey_stick},
    method="normal tails at a maximising half-line and the Gaussian hockey-stick closed form, Arb enclosure",
)

FAMILIES = (DPSGD_SUM_STEP, DPSGD_MEAN_STEP, GAUSSIAN_TRIPLE, HOLDER_ORDERS, DPSGD_ANCHORED_TWO_STEP, TWO_POINT_MEAN,
            THEOREM36_ESTIMATE, COROLLARY31_ESTIMATE, GAUSSIAN_HOLDER_HOCKEY_STICK)
