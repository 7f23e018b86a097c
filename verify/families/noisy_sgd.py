"""Multi-step noisy SGD with random batches (Poisson or fixed-size sampling, reshuffled or shuffled-once epochs,
cyclic order) on a linear model, exactly (verify.truth.noisy_sgd_batches): the families behind later-literature
bounds for NoisySGD/NoisyCGD with b < n (Ye-Shokri, Altschuler-Talwar, Bok et al.)."""

from __future__ import annotations

import sympy as sp

from verify.model import Assumption, Family, Parameter, Quantity
from verify.results import Truth
from verify.symbols import alpha, b, delta, eps, eta, j0, m, q, reg, sigma, steps, type1, x, x_prime
from verify.truth.noisy_sgd_batches import (
    LinearSGD,
    cyclic_patterns,
    cyclic_renyi,
    mixture_dp_delta,
    mixture_dp_epsilon,
    mixture_tradeoff,
    poisson_patterns,
    poisson_renyi,
    shuffled_patterns,
    shuffled_renyi,
)

_R, _DP, _DELTA, _TRADEOFF = Quantity.RENYI, Quantity.DP_EPSILON, Quantity.DP_DELTA, Quantity.TRADEOFF
_MODEL = ("theta <- (1 - eta reg) theta + (eta/b) sum_{i in B} x_i + eta N(0, sigma^2) from theta_0 = 0, the last "
          "iterate released; every record is 0 but one, x on D and x_prime on D' (replace-one; x = 0 is add/remove "
          "with a fixed normaliser b)")
_COMMON = (Parameter(alpha, alpha > 1, "Rényi order", quantities=(_R,)), Parameter(eta, eta > 0, "step size"),
           Parameter(reg, reg >= 0, "regulariser curvature (1 - eta reg is the contraction; 0: none)"),
           Parameter(sigma, sigma > 0, "std of the gradient noise"),
           Parameter(b, b >= 1, "batch size (the normaliser of the batch's data term)", integer=True),
           Parameter(x, sp.true, "the differing record on D"),
           Parameter(x_prime, sp.true, "the differing record on D'"),
           Parameter(delta, sp.And(delta > 0, delta < 1), "delta of (eps, delta)-DP", quantities=(_DP,)),
           Parameter(eps, sp.true, "eps of (eps, delta)-DP", quantities=(_DELTA,)),
           Parameter(type1, type1 < 1, "type-I error x of the trade-off function, 0 < x < 1", quantities=(_TRADEOFF,)))
_METHOD = ("Gaussian mixture over the record's sampling pattern: R_alpha by certified quadrature both orders (closed "
           "form: cyclic), (eps, delta) by the mixture pair's hockey stick bracketed in Arb, both orders, and the "
           "trade-off function from it (its convex conjugate, at the Neyman-Pearson threshold)")
_FACTS = frozenset({"linear_model", "fixed_state_noise", "last_iterate"})


def _sgd(eta, reg, sigma, b, x, x_prime, steps) -> LinearSGD:
    return LinearSGD(eta, reg, sigma, b, x, x_prime, int(steps))


def _dp_truths(patterns, what: str) -> dict:
    """dp_epsilon, dp_delta and tradeoff_beta of a sampling scheme; `patterns(sgd, **scheme)` lists where the record
    is sampled."""
    def epsilon(eta, reg, sigma, b, x, x_prime, steps, delta, **scheme):
        sgd = _sgd(eta, reg, sigma, b, x, x_prime, steps)
        return mixture_dp_epsilon(sgd, patterns(sgd, **scheme), float(delta), what)

    def delta_of(eta, reg, sigma, b, x, x_prime, steps, eps, **scheme):
        sgd = _sgd(eta, reg, sigma, b, x, x_prime, steps)
        return mixture_dp_delta(sgd, patterns(sgd, **scheme), float(eps), what)

    def beta(eta, reg, sigma, b, x, x_prime, steps, type1, **scheme):
        sgd = _sgd(eta, reg, sigma, b, x, x_prime, steps)
        return mixture_tradeoff(sgd, patterns(sgd, **scheme), float(type1), what)

    return {_DP: epsilon, _DELTA: delta_of, _TRADEOFF: beta}


NOISY_SGD_POISSON = Family(
    name="noisy_sgd_poisson_linear",
    description=f"{_MODEL}; Poisson batches: the record joins each of `steps` steps with probability q (the same "
                "law as sampling b of n = b/q records without replacement at every step).",
    parameters=(*_COMMON, Parameter(q, q <= 1, "sampling rate, 0 < q <= 1"),
                Parameter(steps, sp.And(steps >= 1, steps <= 200), "steps T (at most 12 with reg > 0)",
                          integer=True)),
    facts=_FACTS | {"poisson_subsampling"},
    truths={_R: lambda alpha, eta, reg, sigma, b, x, x_prime, q, steps: poisson_renyi(
        _sgd(eta, reg, sigma, b, x, x_prime, steps), q, alpha),
            **_dp_truths(lambda sgd, q: poisson_patterns(sgd, float(q)), "noisy SGD, Poisson batches")},
    constraints=(Assumption("pattern_cap", sp.Or(sp.Eq(reg, 0), steps <= 12),
                            "at most 2^12 sampling patterns (steps <= 12 unless reg = 0)"),),
    method=_METHOD, expensive=True,
)

_EPOCHS = (Parameter(m, sp.And(m >= 1, m <= 64), "batches per epoch (n = m b records)", integer=True),
           Parameter(steps, sp.And(steps >= 1, steps <= 256), "steps T, whole epochs of m batches", integer=True))
_WHOLE_EPOCHS = Assumption("whole_epochs", sp.Eq(sp.Mod(steps, m), 0), "steps is a multiple of m")


def _shuffled(once: bool):
    def truth(alpha, eta, reg, sigma, b, x, x_prime, m, steps) -> Truth:
        return shuffled_renyi(_sgd(eta, reg, sigma, b, x, x_prime, steps), int(m), alpha, once=once)
    return truth


NOISY_SGD_SHUFFLED = Family(
    name="noisy_sgd_shuffled_linear",
    description=f"{_MODEL}; fixed-size batches from a fresh uniform permutation every epoch (the record in one "
                "uniform batch per epoch, independently).",
    parameters=(*_COMMON, *_EPOCHS), facts=_FACTS | {"shuffling"},
    truths={_R: _shuffled(once=False), **_dp_truths(lambda sgd, m: shuffled_patterns(sgd, int(m)),
                                                     "noisy SGD, reshuffled every epoch")},
    constraints=(_WHOLE_EPOCHS, Assumption("pattern_cap", m ** (steps / m) <= 4096,
                                           "at most 4096 patterns: m^(steps/m) <= 4096")),
    method=_METHOD, expensive=True,
)
NOISY_SGD_SHUFFLED_ONCE = Family(
    name="noisy_sgd_shuffled_once_linear",
    description=f"{_MODEL}; fixed-size batches from one uniform permutation kept for every epoch.",
    parameters=(*_COMMON, *_EPOCHS), facts=_FACTS | {"shuffling"},
    truths={_R: _shuffled(once=True), **_dp_truths(lambda sgd, m: shuffled_patterns(sgd, int(m), once=True),
                                                    "noisy SGD, one shuffle for every epoch")},
    constraints=(_WHOLE_EPOCHS,), method=_METHOD, expensive=True,
)
NOISY_SGD_CYCLIC = Family(
    name="noisy_sgd_cyclic_linear",
    description=f"{_MODEL}; cyclic fixed-size batches: the record in batch j0 of every epoch.",
    parameters=(*_COMMON, *_EPOCHS, Parameter(j0, j0 >= 0, "the record's batch (0-based)", integer=True)),
    facts=_FACTS | {"cyclic"},
    truths={_R: lambda alpha, eta, reg, sigma, b, x, x_prime, m, steps, j0: cyclic_renyi(
        _sgd(eta, reg, sigma, b, x, x_prime, steps), int(m), int(j0), alpha),
            **_dp_truths(lambda sgd, m, j0: cyclic_patterns(sgd, int(m), int(j0)), "noisy SGD, cyclic batches")},
    constraints=(_WHOLE_EPOCHS, Assumption("batch_index", j0 < m, "j0 < m")),
    method="Gaussian closed form", expensive=False,
)

FAMILIES = (NOISY_SGD_POISSON, NOISY_SGD_SHUFFLED, NOISY_SGD_SHUFFLED_ONCE, NOISY_SGD_CYCLIC)
