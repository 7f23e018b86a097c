"""Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang 2016, Deep Learning with Differential Privacy (CCS;
arXiv:1607.00133): the moments accountant. Not one of the seeds: the accounting DP-SGD started from, and the
back-of-the-envelope bound still quoted for it. Lemma 3 bounds the log moment of one Poisson-subsampled Gaussian step,
alpha_M(lambda) = lambda D_(lambda+1), by q^2 lambda (lambda + 1)/((1 - q) sigma^2) + O(q^3 lambda^3/sigma^3), for
sigma >= 1, q < 1/(16 sigma) and positive integers lambda <= sigma^2 log(1/(q sigma)); Theorem 2 composes the moments
and converts them: delta = min_lambda exp(T alpha(lambda) - lambda eps). With the exact moments that conversion is
thudi2024.rdp_to_dp.classical.composed (Mironov's, the same formula at alpha = lambda + 1)."""

from __future__ import annotations

import sympy as sp
from sympy import Eq, log

from verify.model import Application, Assumption, Direction, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import alpha, delta, q, sigma, steps

PAPER = "Abadi et al. 2016, Deep Learning with Differential Privacy (CCS; arXiv:1607.00133)"
COMPOSED = "sampled_gaussian_composed"


def _src(result: str, equation: str = "") -> Source:
    return Source("", PAPER, result, equation)


# the order alpha = lambda + 1 of the Rényi divergence whose (lambda-scaled) value is the log moment alpha_M(lambda)
LAMBDA = alpha - 1
HYPOTHESES = (
    Assumption("moment_order", alpha >= 2, "lambda = alpha - 1 >= 1"),
    Assumption("integer_moment", Eq(alpha, sp.floor(alpha)), "lambda = alpha - 1 an integer"),
    Assumption("noise", sigma >= 1, "sigma >= 1"),
    Assumption("small_rate", q < 1 / (16 * sigma), "q < 1/(16 sigma)"),
    Assumption("moment_range", alpha <= 1 + sigma**2 * log(1 / (q * sigma)), "lambda <= sigma^2 log(1/(q sigma))"),
)
# log moment over lambda, the remainder O(q^3 lambda^3/sigma^3) dropped
LEADING_RDP = q**2 * alpha / ((1 - q) * sigma**2)
# rates up to Lemma 3's limit 1/(16 sigma) = 0.0625 at sigma = 1; every order the lemma allows
LEMMA3_GRID = {"q": (0.001, 0.01, 0.03, 0.045, 0.06), "sigma": (1.0, 1.5, 2.0, 4.0), "alpha": (2, 3, 4, 5, 8, 16, 32)}
COMPOSED_GRID = {"q": (0.01, 0.045), "sigma": (1.0, 2.0), "steps": (1000,), "delta": (1e-5,),
                 "alpha": (2, 3, 4, 8, 16)}

THEOREMS = [
    Theorem(
        id="abadi2016.lemma3.leading_term",
        title="The moments accountant's log-moment bound without its remainder: D_(lambda+1) <= q^2 (lambda + 1)/"
              "((1 - q) sigma^2) for one Poisson-subsampled Gaussian step",
        source=_src("Lemma 3", "alpha(lambda) <= q^2 lambda (lambda + 1)/((1 - q) sigma^2) + O(q^3 lambda^3/sigma^3)"),
        variant=Variant.FORMALISED, direction=Direction.UPPER, quantity=Quantity.RENYI, bound=LEADING_RDP,
        assumptions=HYPOTHESES, requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application("sampled_gaussian", Verdict.VIOLATED, LEMMA3_GRID,
                                  note="The truth is the exact Rényi divergence of one step (binomial series, both "
                                       "orders)."),),
        note="The lemma is asymptotic: the leading term alone, as back-of-the-envelope accounting uses it, is not a "
             "bound even inside the lemma's hypotheses: at sigma = 1, q = 0.045, lambda = 3 (<= log(1/0.045) = 3.1) "
             "the exact log moment is 1.06 times the leading term. The remainder the lemma keeps is needed.",
    ),
    Theorem(
        id="abadi2016.theorem2.leading_term",
        title="The moments accountant's (eps, delta) with the leading-term moments: eps = (T q^2 lambda (lambda + 1)/"
              "((1 - q) sigma^2) + log(1/delta))/lambda after T steps",
        source=_src("Theorem 2 with Lemma 3", "delta = min_lambda exp(T alpha(lambda) - lambda eps)"),
        variant=Variant.FORMALISED, direction=Direction.UPPER, quantity=Quantity.DP_EPSILON,
        bound=(steps * LAMBDA * LEADING_RDP + log(1 / delta)) / LAMBDA,
        assumptions=HYPOTHESES, requires=frozenset({"add_remove", "poisson_subsampling"}),
        applications=(Application(COMPOSED, Verdict.HOLDS, COMPOSED_GRID,
                                  note="The truth is the privacy-loss-distribution bracket on the tight eps(delta) "
                                       "of the T-fold composition (verify.truth.pld)."),),
        note="Every lambda the lemma allows is checked (the accountant reports the smallest). The conversion's own "
             "slack absorbs the leading term's shortfall (abadi2016.lemma3.leading_term) on this grid.",
    ),
]
