"""Wrap a closed form as an exact Truth that can also enclose itself rigorously."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath

from verify.errors import ResourceLimitError
from verify.results import Truth
from verify.truth.numbers import Enclosure, ProvenInfinity, arb, arb_numbers, num

DPS = 50
FAST_PREC = 128  # bits of the first, Arb evaluation of a closed form (about 10x faster than mpmath at DPS digits)


def _nearest_float(x: Any) -> float:
    """An exact Arb value rounded to the nearest float once (ties to even; subnormals and overflow included: Python's
    integer division is correctly rounded)."""
    man, exp = (int(v) for v in x.man_exp())
    size = exp + man.bit_length()  # 2^(size - 1) <= |x| < 2^size
    if man == 0 or size < -1100:  # below half the smallest subnormal, 2^-1075 (an exponent of -1e11 is no shift)
        return math.copysign(0.0, man)
    if size > 1100:
        return math.copysign(math.inf, man)
    try:
        return man / (1 << -exp) if exp < 0 else float(man << exp)
    except OverflowError:
        return math.copysign(math.inf, man)


def _ball_float(ball: Any) -> float | None:
    """The float that an Arb ball proves: both ends round to it, with the same sign (a ball around 0 whose ends round
    to -0.0 and 0.0 proves no sign), so it is the exact value correctly rounded (an integer, or a ProvenInfinity, is
    its own value); None where the ends round apart (the caller recomputes)."""
    if isinstance(ball, ProvenInfinity):
        return float(ball)
    if isinstance(ball, int) and not isinstance(ball, bool):
        return float(ball)
    if not isinstance(ball, arb) or not ball.is_finite():
        return None
    low, high = _nearest_float(ball.lower()), _nearest_float(ball.upper())
    return low if low == high and math.copysign(1.0, low) == math.copysign(1.0, high) else None


def _fast_value(fn: Callable[..., Any], params: dict[str, float]) -> float | None:
    """`fn` in Arb balls of FAST_PREC bits, or None where that fails or proves too few bits: a closed form is written
    once against `num()`, and a branch a ball cannot decide (NotEnclosable), a form with no Arb version, or a wide
    ball all leave the value to the DPS-digit mpmath evaluation, which raises the point's own errors."""
    try:
        with arb_numbers(FAST_PREC) as N:
            return _ball_float(fn(**{k: N.mpf(v) for k, v in params.items()}))
    except (ResourceLimitError, MemoryError):  # a cap is a cap on every path
        raise
    except Exception:  # noqa: BLE001 - any failure here is re-raised, or not, by the reference evaluation
        return None


def exact(fn: Callable[..., mpmath.mpf], detail: str, arb_first: bool = True) -> Callable[..., Truth]:
    """A truth function evaluating `fn` and reporting it as exact: first in Arb balls (`_fast_value`: a proven
    value), else at DPS digits in mpmath. `arb_first=False` for a root solve (an eps(delta)): on balls it costs more
    than the mpmath solve and rarely narrows to one float.

    `fn` is written against `verify.truth.numbers.num()` (or plain arithmetic on its inputs), so the same formula
    evaluated in Arb balls gives the truth's rigorous enclosure (`Truth.enclose`).
    """

    def truth(**params: float) -> Truth:
        def enclose(prec: int) -> Enclosure:
            with arb_numbers(prec) as N:
                return Enclosure.of(fn(**{k: N.mpf(v) for k, v in params.items()}), "closed form in Arb balls", prec)

        fast = _fast_value(fn, params) if arb_first else None
        if fast is not None:
            return Truth.exact(fast, detail, enclose=enclose)
        with mpmath.workdps(DPS):  # every input becomes an exact binary mpf before any arithmetic
            N = num()
            return Truth.exact(float(fn(**{k: N.mpf(v) for k, v in params.items()})), detail, enclose=enclose)

    return truth
