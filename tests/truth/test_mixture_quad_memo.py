"""The run memo of `renyi_mixture_to_gaussians`' integer-order enclosures: inside one `shared_truths()` block, truths
whose mixtures differ in one weight, one mean, the sd, the order or the precision, and share a target, each get the
enclosure computed afresh by `enclose_renyi_mixture_gaussian` / `bracket_renyi_mixture_gaussian` (seeded random
mixtures): a key that left one of them out would hand one truth another's enclosure."""

import random

import pytest
from flint import arb, ctx

from verify.pipeline.memo import shared_truths
from verify.truth.mixture_arb import bracket_renyi_mixture_gaussian, enclose_renyi_mixture_gaussian
from verify.truth.mixture_quad import BRACKET_PREC, renyi_mixture_to_gaussians
from verify.truth.numbers import NotEnclosable


def _variants(rng: random.Random, k: int) -> list[tuple[list[float], list[float], float, int]]:
    """(weights, means, s, alpha): a base mixture of k components and one change of each input."""
    weights, means = [rng.uniform(0.1, 1) for _ in range(k)], [rng.uniform(-2, 2) for _ in range(k)]
    s, alpha = rng.uniform(0.5, 2), rng.choice([2, 3, 8])
    i = rng.randrange(k)
    return [(weights, means, s, alpha),
            (weights[:i] + [weights[i] * 1.5] + weights[i + 1:], means, s, alpha),
            (weights, means[:i] + [means[i] + 0.25] + means[i + 1:], s, alpha),
            (weights, means, s * 1.25, alpha),
            (weights, means, s, alpha + 1)]


def _exact(weights: list[float]):
    """Exact weights as Arb balls at the caller's precision (the weights over 3: inexact balls)."""
    return lambda: [arb(w) / 3 for w in weights]


def _direct(weights, means, s, target, alpha, prec):
    with ctx.workprec(prec):
        exact = _exact(weights)()
    try:
        return enclose_renyi_mixture_gaussian(exact, means, s, target, alpha, prec)
    except NotEnclosable:
        return bracket_renyi_mixture_gaussian(exact, means, s, target, alpha, prec)


@pytest.mark.parametrize(("seed", "k", "precs"), [(seed, 2 + seed, (BRACKET_PREC, 128)) for seed in range(6)]
                         + [(seed, 40, (BRACKET_PREC,)) for seed in range(3)])  # 40: the bracket (at 64 bits only)
def test_memo_keys_every_input(seed, k, precs):
    rng = random.Random(seed)
    variants = _variants(rng, k)
    target = rng.uniform(-1, 1)
    with shared_truths():
        for prec in precs:
            for weights, means, s, alpha in variants:
                targets = [target, rng.uniform(-3, 3)]  # the other target changes the truth's node window
                truth = renyi_mixture_to_gaussians(weights, means, s, targets, alpha, _exact(weights))[0]
                got = truth.enclose(prec)
                want = _direct(weights, means, s, target, alpha, prec)
                assert got.text() == want.text() and got.method == want.method
