"""The basic mechanisms as families, exact and certified (Arb) in every quantity: renyi, dp_delta, dp_epsilon and
tradeoff_beta (and gdp_mu for the Gaussian mechanism). Each is the mechanism's worst-case pair of output laws on
neighbouring datasets; the closed forms and their sources are in verify/truth/basic_mechanisms.py and
verify/truth/discrete_gaussian.py.

The exponential mechanism over a finite output set is parameterised as a structured class of score vectors: k
outputs, scores in units of the score's sensitivity Delta_u, P(r) ~ exp(eps0 u(r)/2) (Dwork & Roth's
exp(eps u/(2 Delta_u))). On D the scores are (u0, 0, ..., 0); on the neighbour D' output 0's score rises by the full
sensitivity and every other falls by `drop` (<= 1): (u0 + 1, -drop, ..., -drop). drop = 1 with many outputs
approaches the mechanism's worst case eps0; drop = 0 is a monotone score, eps0/2-DP.
"""

from __future__ import annotations

import sympy as sp

from verify.families._exact import exact
from verify.model import Family, Parameter, Quantity
from verify.symbols import Delta, alpha, delta, drop, eps, eps0, k, scale, sigma, type1, u0
from verify.truth import basic_mechanisms as bm
from verify.truth import discrete_gaussian as dg

_R, _DELTA, _EPS, _T = Quantity.RENYI, Quantity.DP_DELTA, Quantity.DP_EPSILON, Quantity.TRADEOFF
_LEVELS = (
    Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)),
    Parameter(eps, eps > 0, "eps of delta(eps)", quantities=(_DELTA,)),
    Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP", quantities=(_EPS,)),
    Parameter(type1, type1 < 1, "type-I error x of the trade-off function", quantities=(_T,)),
)


def _truths(renyi, delta_of, epsilon_of, tradeoff_of, how: str, root: bool = True) -> dict:
    """The four quantities from functions (level, *parameters) of the truth module, by the family's names."""
    return {_R: exact(lambda alpha, **p: renyi(alpha, **p), how),
            _DELTA: exact(lambda eps, **p: delta_of(eps, **p), how),
            _EPS: exact(lambda delta, **p: epsilon_of(delta, **p), how, arb_first=root),
            _T: exact(lambda type1, **p: tradeoff_of(type1, **p), how)}


_LAPLACE_HOW = "closed forms (Mironov 2017; Dong, Roth & Su), Arb balls with the bits their cancellation needs"
LAPLACE = Family(
    name="laplace",
    description="The Laplace mechanism f(D) + Lap(scale) on a query of sensitivity Delta: Lap(0, scale) against "
                "Lap(Delta, scale) (eps0 = Delta/scale-DP, Dwork & Roth Thm 3.6).",
    parameters=(Parameter(Delta, Delta >= 0, "sensitivity of the query"),
                Parameter(scale, scale > 0, "scale b of the noise, density exp(-|x|/b)/(2b)"), *_LEVELS),
    facts=frozenset({"laplace_noise"}),
    truths=_truths(lambda a, Delta, scale: bm.laplace_renyi(a, Delta, scale),
                   lambda e, Delta, scale: bm.laplace_delta(e, Delta, scale),
                   lambda d, Delta, scale: bm.laplace_epsilon(d, Delta, scale),
                   lambda x, Delta, scale: bm.laplace_tradeoff(x, Delta, scale), _LAPLACE_HOW),
    method=_LAPLACE_HOW,
    search_region=(Delta <= 10**4 * scale,),  # Delta/scale up to 1e4: every quantity far past its float range
)

_FINITE_HOW = "exact sums over the outputs (every term >= 0), Arb balls with the bits their cancellation needs"
RANDOMIZED_RESPONSE = Family(
    name="randomized_response",
    description="Binary randomized response: the true bit with probability e^eps0/(1 + e^eps0), on inputs 0 and 1 "
                "(eps0-DP; Dwork & Roth Sec. 3.2).",
    parameters=(Parameter(eps0, eps0 >= 0, "privacy parameter: P(truth) = e^eps0/(1 + e^eps0)"), *_LEVELS),
    facts=frozenset({"finite_output"}),
    truths=_truths(lambda a, eps0: bm.rr_renyi(a, eps0), lambda e, eps0: bm.rr_delta(e, eps0),
                   lambda d, eps0: bm.rr_epsilon(d, eps0), lambda x, eps0: bm.rr_tradeoff(x, eps0), _FINITE_HOW),
    method=_FINITE_HOW,
)

RANDOMIZED_RESPONSE_K = Family(
    name="randomized_response_k",
    description="k-ary randomized response: the true value with probability e^eps0/(e^eps0 + k - 1), each other "
                "with 1/(e^eps0 + k - 1), on inputs x != x' (eps0-DP).",
    parameters=(Parameter(eps0, eps0 >= 0, "privacy parameter"),
                Parameter(k, k >= 2, "number of values", integer=True), *_LEVELS),
    facts=frozenset({"finite_output"}),
    truths=_truths(bm.rr_renyi, bm.rr_delta, bm.rr_epsilon, bm.rr_tradeoff, _FINITE_HOW),
    method=_FINITE_HOW,
)

EXPONENTIAL_MECHANISM = Family(
    name="exponential_mechanism",
    description="The exponential mechanism P(r) ~ exp(eps0 u(r)/2) over k outputs, scores in units of their "
                "sensitivity: (u0, 0, ..., 0) on D, (u0 + 1, -drop, ..., -drop) on D' (eps0-DP, Dwork & Roth Thm "
                "3.10; eps0/2-DP at drop = 0, a monotone score).",
    parameters=(Parameter(eps0, eps0 >= 0, "privacy parameter eps of exp(eps u/(2 Delta_u))"),
                Parameter(k, k >= 2, "number of outputs", integer=True),
                Parameter(u0, sp.true, "score lead of output 0 over the others on D (units of Delta_u)"),
                Parameter(drop, drop <= 1, "fall of the other outputs' scores on D' (units of Delta_u)"), *_LEVELS),
    facts=frozenset({"finite_output"}),
    truths=_truths(bm.em_renyi, bm.em_delta, bm.em_epsilon, bm.em_tradeoff, _FINITE_HOW),
    method=_FINITE_HOW,
)

_DLAP_HOW = "closed forms (geometric sums over the Delta + 1 loss values), Arb balls with the bits they need"
_INTEGER_DELTA = Parameter(Delta, Delta >= 0, "integer sensitivity of the query", integer=True)
DISCRETE_LAPLACE = Family(
    name="discrete_laplace",
    description="The discrete Laplace mechanism f(D) + DLap(scale), P(x) ~ exp(-|x|/scale) on the integers, on an "
                "integer query of sensitivity Delta (Canonne, Kamath & Steinke 2020; Delta/scale-DP).",
    parameters=(_INTEGER_DELTA, Parameter(scale, scale > 0, "scale t of the noise, P(x) ~ exp(-|x|/t)"), *_LEVELS),
    facts=frozenset({"laplace_noise", "integer_output"}),
    truths=_truths(lambda a, Delta, scale: bm.dlap_renyi(a, Delta, scale),
                   lambda e, Delta, scale: bm.dlap_delta(e, Delta, scale),
                   lambda d, Delta, scale: bm.dlap_epsilon(d, Delta, scale),
                   lambda x, Delta, scale: bm.dlap_tradeoff(x, Delta, scale), _DLAP_HOW),
    method=_DLAP_HOW,
    search_region=(Delta <= 1000, Delta <= 10**4 * scale),
)

_DG_HOW = ("truncated sums over the integers plus proven tail bounds, in Arb (Canonne, Kamath & Steinke 2020); "
           "Poisson summation for sigma > 1")
DISCRETE_GAUSSIAN = Family(
    name="discrete_gaussian",
    description="The discrete Gaussian mechanism f(D) + N_Z(0, sigma^2) on an integer query of sensitivity Delta: "
                "N_Z(0, sigma^2) against N_Z(Delta, sigma^2) (Canonne, Kamath & Steinke 2020; R_alpha <= alpha "
                "Delta^2/(2 sigma^2), equal where alpha Delta is an integer).",
    parameters=(_INTEGER_DELTA, Parameter(sigma, sigma > 0, "scale of the discrete Gaussian"), *_LEVELS),
    facts=frozenset({"gaussian_noise", "integer_output"}),
    truths=_truths(lambda a, Delta, sigma: dg.dg_renyi(a, Delta, sigma),
                   lambda e, Delta, sigma: dg.dg_delta(e, Delta, sigma),
                   lambda d, Delta, sigma: dg.dg_epsilon(d, Delta, sigma),
                   lambda x, Delta, sigma: dg.dg_tradeoff(x, Delta, sigma), _DG_HOW),
    method=_DG_HOW,
    search_region=(sigma <= 100, sigma >= sp.Rational(1, 100), Delta <= 1000),
)

_GAUSS_HOW = "closed forms of the Gaussian pair (Balle & Wang; Dong, Roth & Su), mu = Delta/sigma, Arb balls"
GAUSSIAN_MECHANISM = Family(
    name="gaussian_mechanism",
    description="The Gaussian mechanism f(D) + N(0, sigma^2) on a query of l2-sensitivity Delta: N(0, sigma^2) "
                "against N(Delta, sigma^2), exactly mu-GDP with mu = Delta/sigma.",
    parameters=(Parameter(Delta, Delta >= 0, "l2-sensitivity of the query"),
                Parameter(sigma, sigma > 0, "standard deviation of the noise"), *_LEVELS),
    facts=frozenset({"gaussian_noise"}),
    truths={**_truths(lambda a, Delta, sigma: bm.gaussian_mech_renyi(a, Delta, sigma),
                      lambda e, Delta, sigma: bm.gaussian_mech_delta(e, Delta, sigma),
                      lambda d, Delta, sigma: bm.gaussian_mech_epsilon(d, Delta, sigma),
                      lambda x, Delta, sigma: bm.gaussian_mech_tradeoff(x, Delta, sigma), _GAUSS_HOW, root=False),
            Quantity.GDP_MU: exact(lambda Delta, sigma: bm.gaussian_mu(Delta, sigma), _GAUSS_HOW)},
    method=_GAUSS_HOW,
    search_region=(Delta <= 10**6 * sigma,),  # eps(delta) is refused beyond mu = 1e8 (bm.MAX_ROOT_MU)
)

FAMILIES = (LAPLACE, RANDOMIZED_RESPONSE, RANDOMIZED_RESPONSE_K, EXPONENTIAL_MECHANISM, DISCRETE_LAPLACE,
            DISCRETE_GAUSSIAN, GAUSSIAN_MECHANISM)
