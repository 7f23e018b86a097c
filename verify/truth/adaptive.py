"""Precision that follows cancellation, and exact rationals in and out of the active number system.

`tight(fn)` evaluates a closed form in Arb balls and again with more bits while the ball is wider than the target
(2^-(precision - SLACK_BITS) relative): a form whose terms cancel (a Rényi divergence ~ alpha eps0^2/2 formed from
terms ~ eps0, a hockey stick next to its zero) is then as accurate as one that does not, at every scale a float
can take. In mpmath (the `exact` fallback) the value is the one the Arb ball proves (`in_arb`). The other helpers
keep exact what float inputs allow: a rational from an exact input, a dyadic rational as an exact number, and the
larger/smaller of balls without widening (`larger`, `smaller`, `positive`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath

from verify.truth.numbers import NotEnclosable, ProvenInfinity, arb_fraction, extra_precision, in_arb, mpf_parts, num

try:
    from flint import arb, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb = ctx = None

SLACK_BITS = 32  # relative accuracy asked of a ball: 2^-(working precision - SLACK_BITS)
MAX_EXTRA_BITS = 8192  # the most bits `tight` adds (float inputs cancel by at most ~2200: 2 x 1075 + margins)
MAX_UNBOUNDED = 3  # tries in a row whose ball is NaN or infinite before giving up (an exponent beyond Arb's range)
MP_FALLBACK_BITS = 256  # extra bits of the plain mpmath evaluation, where the Arb one cannot be had


def _short(value: Any, target: int) -> int:
    """How many bits `value` is short of `target` bits of relative accuracy (0 when it has them; an exact value,
    an integer or a proven infinity always has them; a ball around 0, or an unbounded one, is short of all)."""
    if not isinstance(value, arb):
        return 0
    bits = value.rel_accuracy_bits() if value.is_finite() else 0
    return target if bits <= 0 else max(0, target - bits)


def tight(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (a closed form of numbers in the active system) evaluated to the working precision's relative accuracy:
    in Arb, again with the bits the ball lacked (doubled while it contains 0, or while a branch is undecided:
    NotEnclosable) up to MAX_EXTRA_BITS more, the ball of the last try returned (rigorous, if wider); in mpmath, the
    number that ball proves, else `fn` at MP_FALLBACK_BITS more bits."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not num().rigorous:
            proved = in_arb(lambda _: wrapped(*args, **kwargs))
            if proved is not None:
                return proved
            with extra_precision(MP_FALLBACK_BITS):
                value = fn(*args, **kwargs)
            return +value if isinstance(value, mpmath.mpf) else value
        target, extra, unbounded = ctx.prec - SLACK_BITS, 0, 0
        while True:
            try:
                with extra_precision(extra):
                    value = fn(*args, **kwargs)
                short, failure = _short(value, target), None
                unbounded = unbounded + 1 if isinstance(value, arb) and not value.is_finite() else 0
            except NotEnclosable as err:
                short, failure = ctx.prec + extra, err
            if short == 0 or extra >= MAX_EXTRA_BITS or unbounded >= MAX_UNBOUNDED:
                break
            extra = min(MAX_EXTRA_BITS, extra + max(short + SLACK_BITS, 64))
        if failure is not None:
            raise failure
        return value

    return wrapped


def fraction(x: Any) -> Fraction:
    """The exact rational value of an exact input: a float, an int, an mpmath number or an exact Arb ball."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, float)):
        return Fraction(x)
    if isinstance(x, mpmath.mpf):
        man, exp = mpf_parts(x)
        return Fraction(man) * Fraction(2) ** exp
    if isinstance(x, arb) and x.is_exact():
        return arb_fraction(x)
    raise NotEnclosable(f"{x!r} is not an exact number")


def dyadic(value: Fraction) -> Any:
    """A dyadic rational (denominator a power of 2: a sum or product of float inputs) as an exact number of the
    active system; any other rational rounded once."""
    N = num()
    top, bottom = value.numerator, value.denominator
    if bottom & (bottom - 1) == 0:
        if N.rigorous:
            return arb((top, -(bottom.bit_length() - 1)))
        with extra_precision(top.bit_length() + 8):
            return mpmath.ldexp(mpmath.mpf(top), -(bottom.bit_length() - 1))
    with extra_precision(max(top.bit_length(), bottom.bit_length()) + 8):
        top_n, bottom_n = N.mpf(top), N.mpf(bottom)
    return top_n / bottom_n


def sign(x: Any) -> int | None:
    """The sign of x (None where a ball contains 0 and is not 0)."""
    return num().sign(x)


def larger(*xs: Any) -> Any:
    """max of the numbers, as tight as its arguments (Arb's own max: a decided comparison gives that ball)."""
    if not num().rigorous:
        return max(xs)
    out = xs[0] if isinstance(xs[0], arb) else arb(xs[0])
    for x in xs[1:]:
        out = out.max(x if isinstance(x, arb) else arb(x))
    return out


def smaller(*xs: Any) -> Any:
    """min of the numbers, as tight as its arguments."""
    if not num().rigorous:
        return min(xs)
    out = xs[0] if isinstance(xs[0], arb) else arb(xs[0])
    for x in xs[1:]:
        out = out.min(x if isinstance(x, arb) else arb(x))
    return out


def positive(x: Any) -> Any:
    """max(x, 0): exactly 0 where x is decidedly <= 0."""
    return larger(x, num().mpf(0))


def scaled(d: Any, log_factor: Any) -> Any:
    """max(0, d) e^log_factor, as exp(log d + log_factor) where d > 0 is decided (e^log_factor alone may have no
    ball: a likelihood ratio e^(1e300) times a mass e^(-1e300))."""
    N = num()
    side = sign(d)
    if side == 1:
        return N.exp(N.log(d) + log_factor)
    if side is not None:
        return N.mpf(0)
    return positive(d) * N.exp(log_factor)


def with_tail(total: Any, bound: Any) -> Any:
    """total + [0, bound]: a sum of nonnegative terms cut short, with a proven bound on the terms left out (in
    mpmath, where a rounded value is all that is asked, the total itself)."""
    if not num().rigorous:
        return total
    return total + arb(0).union(bound if isinstance(bound, arb) else arb(bound))


def with_error(total: Any, bound: Any) -> Any:
    """total +- bound: a series cut short, with a proven bound on the rest of either sign (mpmath: total)."""
    if not num().rigorous:
        return total
    return total + arb(0, 1) * (bound if isinstance(bound, arb) else arb(bound))


def working_bits() -> int:
    """The active number system's working precision in bits."""
    return ctx.prec if num().rigorous else mpmath.mp.prec


def sin_pi(y: Any) -> Any:
    """sin(pi y) in the active number system."""
    if num().rigorous:
        return (y if isinstance(y, arb) else arb(y)).sin_pi()
    return mpmath.sinpi(y)


def either(a: Callable[[], Any], b: Callable[[], Any]) -> Any:
    """A number known to be a() or b() (two formulas that agree at a boundary a ball cannot place x on either side
    of): their union in Arb; in mpmath the branches are always decided, so a()."""
    if not num().rigorous:
        return a()
    return a().union(b())


def as_int(x: Any) -> int:
    """An integer parameter (an exact float, mpmath number or Arb ball) as a Python int."""
    if isinstance(x, ProvenInfinity):
        raise NotEnclosable("an infinite integer parameter")
    value = fraction(x)
    if value.denominator != 1:
        raise NotEnclosable(f"{x!r} is not an integer")
    return value.numerator
