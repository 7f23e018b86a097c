"""(1 + u)^e - 1 without cancellation: the stable form of a bound's powers of 1 + u (verify.model.stable_form).

A bound such as 1 - (1 - eta lam)^(2K) cancels to 0 in PRECISION_DPS digits, and in Arb at every precision, once
eta lam is below 10^-50: the sum is rewritten -Powm1(-eta lam, 2K), and Powm1 is expm1(e log1p(u)) where 1 + u > 0
(the plain power, as before, elsewhere: a negative base with an integer exponent)."""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p  # noqa: F401 - the stable form's functions, imported here once

from verify.recursion import RecursiveBound

# expm1 and log1p are the classes every stable form is built of and every evaluator of one looks up (the Arb and the
# interval-array translations): imported at module level, not where first used, so that whoever holds a stable form
# holds the same classes. A run that drops the modules it imported (pytester's in-process runs) once left a table
# keyed by the classes of a dropped sympy.codegen.cfunctions, and the rewrite after it built new ones the table did
# not know: "cannot evaluate expm1 with interval arithmetic", a VIOLATED entry INCONCLUSIVE.


class Powm1(RecursiveBound):
    """(1 + u)^e - 1: expm1(e log1p(u)) where 1 + u > 0 (no cancellation at a tiny u), else (1 + u)^e - 1."""

    nargs = 2

    @classmethod
    def compute(cls, N: Any, u: Any, e: Any) -> Any:
        base = 1 + u
        if base > 0:  # for an Arb ball: surely positive
            return N.expm1(e * N.log1p(u))
        k = _exact_integer(e)  # a base that may be <= 0: an integer power, as the plain form had it (Arb's base**e
        return (_int_power(base, k) if k is not None else base**e) - 1  # is NaN on a ball around 0, even at e = 2)


def _int_power(base: Any, k: int) -> Any:
    """base^k by repeated squaring (an Arb ball that holds 0 or negative numbers stays finite)."""
    out, square, n = 1, base, abs(k)
    while n:
        if n & 1:
            out = out * square
        square, n = square * square, n >> 1
    return out if k >= 0 else 1 / out


def _exact_integer(e: Any) -> int | None:
    """`e` as an int where it is exactly one (an mpf, an int, or an Arb ball of radius 0), else None."""
    if hasattr(e, "unique_fmpz"):
        k = e.unique_fmpz() if e.rad() == 0 else None
        return None if k is None else int(k)
    return int(e) if float(e).is_integer() else None


def _is_power_of_one_plus(e: sp.Basic) -> bool:
    return (isinstance(e, sp.Pow) and isinstance(e.base, sp.Add) and sp.S.One in e.base.args
            and e.base.free_symbols != set())


def _cancelling(a: sp.Basic) -> tuple[sp.Expr, sp.Expr] | None:
    """For a sum c - c (1 + u)^e + rest: (c, the power); else None."""
    if not isinstance(a, sp.Add):
        return None
    c, _ = a.as_coeff_Add()
    if c == 0:
        return None
    for term in a.args:
        coeff, rest = term.as_coeff_Mul()
        if coeff == -c and _is_power_of_one_plus(rest):
            return c, rest
    return None


def _rewritten(a: sp.Add) -> sp.Expr:
    c, power = _cancelling(a)
    return a - c + c * power - c * Powm1(power.base - 1, power.exp)


def with_stable_powers(expr: sp.Basic) -> sp.Basic:
    """`expr` with each sum c - c (1 + u)^e + ... written -c Powm1(u, e) + ...: the difference that cancels (1 minus a
    power near 1) is computed as one quantity. Other powers are left as they are (1 + Powm1 would cancel instead where
    the power is far below 1)."""
    return expr.replace(lambda e: _cancelling(e) is not None, _rewritten)
