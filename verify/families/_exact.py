"""Wrap a closed form as an exact Truth that can also enclose itself rigorously."""

from __future__ import annotations

from collections.abc import Callable

import mpmath

from verify.results import Truth
from verify.truth.numbers import Enclosure, arb_numbers, num

DPS = 50


def exact(fn: Callable[..., mpmath.mpf], detail: str) -> Callable[..., Truth]:
    """A truth function evaluating `fn` at DPS digits and reporting it as exact.

    `fn` is written against `verify.truth.numbers.num()` (or plain arithmetic on its inputs), so the same formula
    evaluated in Arb balls gives the truth's rigorous enclosure (`Truth.enclose`).
    """

    def truth(**params: float) -> Truth:
        def enclose(prec: int) -> Enclosure:
            with arb_numbers(prec) as N:
                return Enclosure.of(fn(**{k: N.mpf(v) for k, v in params.items()}), "closed form in Arb balls", prec)

        with mpmath.workdps(DPS):  # every input becomes an exact binary mpf before any arithmetic
            N = num()
            return Truth.exact(float(fn(**{k: N.mpf(v) for k, v in params.items()})), detail, enclose=enclose)

    return truth
