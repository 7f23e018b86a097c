"""Interval arithmetic on (lo, hi) pairs of Arb balls: products and monotone functions are evaluated at the
endpoints, every rounding enclosed by the balls (verify.certify)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from verify.errors import ParameterError

try:  # python-flint is a runtime dependency of verify
    from flint import arb, ctx
except ImportError:  # pragma: no cover - exercised only without python-flint
    arb = ctx = None


DEFAULT_PREC = 128  # bits of the Arb midpoints
LOG_RATIO = 10.0  # an interval [lo, hi] of one sign with hi/lo >= this is bisected in log scale

Interval = tuple  # (lo, hi): two Arb balls enclosing the lower and the upper endpoint
Env = Mapping[str, Interval]


def _need_flint() -> None:
    if arb is None:
        raise ParameterError("interval certification needs python-flint: pip install python-flint")


# ---- interval arithmetic on (lo, hi) pairs of Arb balls -------------------------------------------------------

def _point(v: Any) -> Interval:
    return (v, v)


def _is_point(a: Interval) -> bool:
    return a[0] is a[1]


def _nan() -> Interval:
    x = arb.nan()
    return (x, x)


def _finite(a: Interval) -> bool:
    return a[0].is_finite() and a[1].is_finite()


def _add(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0] + b[0])
    return (a[0] + b[0], a[1] + b[1])


def _neg(a: Interval) -> Interval:
    if _is_point(a):
        return _point(-a[0])
    return (-a[1], -a[0])


def _mul(a: Interval, b: Interval) -> Interval:
    a0, a1 = a
    b0, b1 = b
    if a0 is a1:
        if b0 is b1:
            return _point(a0 * b0)
        a0, a1, b0, b1 = b0, b1, a0, a1
    if b0 is b1:
        if b0 >= 0:
            return (a0 * b0, a1 * b0)
        if b0 <= 0:
            return (a1 * b0, a0 * b0)
        p, q = a0 * b0, a1 * b0
        return (p.min(q), p.max(q))
    if a0 >= 0 and b0 >= 0:
        return (a0 * b0, a1 * b1)
    p1, p2, p3, p4 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    return (p1.min(p2).min(p3).min(p4), p1.max(p2).max(p3).max(p4))


def _positive(a: Interval) -> bool:
    return bool(a[0] > 0)


def _negative(a: Interval) -> bool:
    return bool(a[1] < 0)


def _recip(a: Interval) -> Interval:
    if _is_point(a):
        return _point(1 / a[0]) if (a[0] > 0 or a[0] < 0) else _nan()
    if _positive(a) or _negative(a):
        return (1 / a[1], 1 / a[0])
    return _nan()


def _ipow(a: Interval, k: int) -> Interval:
    if k < 0:
        return _recip(_ipow(a, -k))
    if k == 0:
        return _point(arb(1))
    if k == 1:
        return a
    if _is_point(a):
        return _point(a[0] ** k)
    lo, hi = a[0] ** k, a[1] ** k
    if k % 2 or a[0] >= 0:
        return (lo, hi)
    if a[1] <= 0:
        return (hi, lo)
    return (arb(0), lo.max(hi))


def _increasing(fn: Callable[[Any], Any], decreasing: bool = False) -> Callable[[Interval], Interval]:
    """`fn` on an interval from its ends (swapped where `fn` is `decreasing`)."""
    def apply(a: Interval) -> Interval:
        if _is_point(a):
            return _point(fn(a[0]))
        lo, hi = (a[1], a[0]) if decreasing else a
        return (fn(lo), fn(hi))
    return apply


def _decreasing(fn: Callable[[Any], Any]) -> Callable[[Interval], Interval]:
    return _increasing(fn, decreasing=True)


def _ball(fn: Callable[..., Any]) -> Callable[..., Interval]:
    """Evaluate a function on the balls covering its argument intervals (valid, maybe loose)."""
    def apply(*args: Interval) -> Interval:
        balls = [a[0] if _is_point(a) else a[0].union(a[1]) for a in args]
        y = fn(*balls)
        if all(_is_point(a) for a in args):
            return _point(y)
        return (y.lower(), y.upper())
    return apply


def _abs(a: Interval) -> Interval:
    if _is_point(a):
        return _point(abs(a[0]))
    if a[0] >= 0:
        return a
    if a[1] <= 0:
        return _neg(a)
    return (arb(0), (-a[0]).max(a[1]))


def _max(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0].max(b[0]))
    return (a[0].max(b[0]), a[1].max(b[1]))


def _min(a: Interval, b: Interval) -> Interval:
    if _is_point(a) and _is_point(b):
        return _point(a[0].min(b[0]))
    return (a[0].min(b[0]), a[1].min(b[1]))


_GAMMA_MIN = 1.4616321449683623  # argmin of Gamma on x > 0; Gamma and log Gamma increase right of it


def _gamma_like(fn: Callable[[Any], Any]) -> Callable[[Interval], Interval]:
    inc, dec, ball = _increasing(fn), _decreasing(fn), _ball(fn)

    def apply(a: Interval) -> Interval:
        if a[0] >= 1.4617:
            return inc(a)
        if a[0] > 0 and a[1] <= 1.4616:
            return dec(a)
        return ball(a)
    return apply


def _digamma(a: Interval) -> Interval:
    return _increasing(arb.digamma)(a) if a[0] > 0 else _ball(arb.digamma)(a)
