"""Bounds given by an algorithm instead of a closed form: a recursion along a schedule, a sum over batch positions.

A `RecursiveBound` is a SymPy function, so it sits in a theorem's bound like any closed form (composed with Max, a
log-mean-exp, a product): `compute(N, *args)` runs the recursion in the number system `N` of
verify.truth.numbers, so the same code gives the checker's 50-digit value (mpmath, through lambdify) and the rigorous
fallback's enclosure (Arb balls, through verify.certify's interval translation). Arguments listed in `integer_args`
are loop counts (epochs, batches): they must be integers at the point, and an Arb ball is snapped to the unique
integer it contains (the true value is an integer by the family's constraints, and the ball contains it).

A class with `evaluate_in_arb` (opt-in, for a `compute` audited to take the same branches and fail at the same
points in both number systems: an Arb comparison is False on an undecided ball, and a NaN Arb carries where mpmath
raised could be discarded) gets the checker's value from Arb first: a recursion of thousands of steps costs a tenth
of mpmath's time there, and the ball's midpoint is kept only where its radius is below mpmath's own rounding at the
working precision (as accurate as mpmath's value, and proven so); anything else (a wider ball, an infinity, an
error) is computed by mpmath as before, so the values and errors a point gets are mpmath's.
"""

from __future__ import annotations

from typing import Any, ClassVar

import mpmath
import sympy as sp

from verify.truth.numbers import MP, NotEnclosable, arb_numbers, in_arb


class RecursiveBound(sp.Function):
    """Base class: subclasses set `nargs`, `integer_args` and `compute`; the docstring cites the result."""

    integer_args: ClassVar[tuple[int, ...]] = ()
    evaluate_in_arb: ClassVar[bool] = False  # see the module's docstring: only for an audited `compute`

    @classmethod
    def eval(cls, *args: sp.Expr) -> None:
        return None  # never simplified symbolically: the value is the algorithm's

    @classmethod
    def compute(cls, N: Any, *args: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def _imp_(cls, *args: Any) -> mpmath.mpf:
        """The mpmath value (lambdify calls this at the caller's working precision)."""
        values = [mpmath.mpf(v) for v in args]
        for i in cls.integer_args:
            x = mpmath.mpf(values[i])
            if not mpmath.isint(x):
                raise ValueError(f"{cls.__name__}: argument {i + 1} must be an integer, got {x}")
            values[i] = int(x)
        if cls.evaluate_in_arb:
            value = _in_arb(cls, values)
            if value is not None:
                return value
        return cls.compute(MP, *values)

    @classmethod
    def enclose(cls, *intervals: tuple[Any, Any]) -> tuple[Any, Any]:
        """An Arb enclosure (lo, hi) of the value over argument intervals (pairs of Arb balls, verify.certify)."""
        from flint import arb, ctx

        balls: list[Any] = []
        for i, (lo, hi) in enumerate(intervals):
            ball = lo if lo is hi or lo == hi else lo.union(hi)
            if i in cls.integer_args:
                k = ball.unique_fmpz()
                if k is None:
                    raise NotEnclosable(f"{cls.__name__}: argument {i + 1} is not a unique integer on {ball}")
                ball = int(k)
            balls.append(ball)
        with arb_numbers(ctx.prec) as N:
            value = cls.compute(N, *balls)
        value = value if isinstance(value, arb) else arb(value)
        return value.lower(), value.upper()

    def _latex(self, printer: Any) -> str:
        args = ", ".join(printer._print(a) for a in self.args)
        return rf"\operatorname{{{self.func.__name__}}}\left({args}\right)"



def _in_arb(cls: type[RecursiveBound], values: list) -> mpmath.mpf | None:
    """`cls.compute` at exact Arb inputs, as verify.truth.numbers.in_arb proves it (None: compute it in mpmath)."""
    return in_arb(lambda N: cls.compute(N, *(v if isinstance(v, int) else N.mpf(v) for v in values)))
