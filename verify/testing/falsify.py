"""Search an instance family's parameter space for a counterexample to a bound, and shrink it.

`falsify` takes a SymPy expression (or a string, parsed safely) over a family's parameters, the side it claims
(upper / lower / exact), and searches the points its assumptions allow with hypothesis; a point counts only
when the checker's verdict there is VIOLATED (exact truth, or a confidence interval that excludes the bound).
Hypothesis shrinks the point; a last pass rounds each value to few significant digits while it stays violated.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy as sp
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from verify.checker import check_point
from verify.errors import ParameterError, VerifyError
from verify.families import family as get_family
from verify.model import Application, Assumption, Direction, FromFamily, Quantity, Source, Theorem, Variant
from verify.parsing import parse_expression
from verify.results import PointResult, Verdict
from verify.testing.strategies import free_parameters, point_strategy

SIDES = {"upper": Direction.UPPER, "lower": Direction.LOWER, "exact": Direction.EXACT}


@dataclass(frozen=True)
class Counterexample:
    """A point where the truth lies on the wrong side of the bound, confidently: the checker's result there,
    with what the search spent to find it."""

    result: PointResult
    examples: int  # points tried by the search
    seconds: float

    theorem = property(lambda self: self.result.theorem)
    family = property(lambda self: self.result.family)
    params = property(lambda self: self.result.params)
    bound = property(lambda self: self.result.bound)
    truth = property(lambda self: self.result.truth)
    ratio = property(lambda self: self.result.ratio)
    margin = property(lambda self: self.result.margin)

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        return (f"counterexample to {self.theorem} on {self.family}: {shown}\n"
                f"  bound = {self.bound:.10g}, truth = {self.truth.value:.10g} "
                f"[{self.truth.lower:.10g}, {self.truth.upper:.10g}] ({self.truth.method.value})"
                + (f", ratio bound/truth = {self.ratio:.4g}" if self.ratio is not None else ""))

    def to_dict(self) -> dict:
        return {**self.result.to_dict(), "examples": self.examples, "seconds": self.seconds}


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6g}"


def search(theorem: Theorem, app: Application, *, max_examples: int = 2000, budget_s: float = 10.0,
           seed: int = 0, companions: Sequence[Theorem] = ()) -> Counterexample | None:
    """Hypothesis search for a VIOLATED point of `theorem` on `app`; None if none was found.

    `max_examples` bounds the search (reproducible for a seed); `budget_s` is a wall-clock safety cap on the
    generation phase (shrinking gets as long again once a counterexample is found).
    """
    start = time.monotonic()
    deadline = [start + budget_s]
    tried = [0]

    def violated(point: dict[str, float]) -> bool:
        if time.monotonic() > deadline[0]:
            return False
        tried[0] += 1
        try:
            found = check_point(theorem, app, point).verdict is Verdict.VIOLATED
        except VerifyError:  # outside the assumptions, or the bound undefined there
            return False
        if found and deadline[0] < math.inf:
            deadline[0] = time.monotonic() + budget_s  # time to shrink
        return found

    config = settings(max_examples=max_examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                      suppress_health_check=list(HealthCheck))
    try:
        point = find(point_strategy(theorem, app), violated, settings=config, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        return None
    point = _round(theorem, app, point)
    result = check_point(theorem, app, point, companions)
    return Counterexample(result, tried[0], time.monotonic() - start)


def _round(theorem: Theorem, app: Application, point: dict[str, float]) -> dict[str, float]:
    """Round each value to the fewest significant digits (1..6) that keep the point violated."""
    point = dict(point)
    for name in sorted(point):
        value = point[name]
        if float(value).is_integer():
            continue
        for digits in range(1, 7):
            candidate = {**point, name: float(f"{value:.{digits}g}")}
            try:
                if check_point(theorem, app, candidate).verdict is Verdict.VIOLATED:
                    point = candidate
                    break
            except VerifyError:
                continue
    return point


def user_theorem(bound: sp.Expr | str, family: str, side: str = "upper", *, quantity: Quantity | str | None = None,
                 extra_assumptions: Sequence[sp.Basic | str] = (), bind: Mapping[str, sp.Expr | str] | None = None,
                 defaults: Mapping[str, sp.Expr | str] | None = None, name: str = "user.bound") -> Theorem:
    """Wrap a user's bound as a catalog-like Theorem on `family` (strings are parsed safely)."""
    if side not in SIDES:
        raise ParameterError(f"side must be one of {', '.join(SIDES)}, got '{side}'")
    fam = get_family(family)
    if quantity is None:
        quantity = Quantity.RENYI if Quantity.RENYI in fam.truths else next(iter(fam.truths))
    quantity = Quantity(quantity)
    if quantity not in fam.truths:
        raise ParameterError(f"family {family} has no truth for '{quantity.value}'; it has "
                             f"{', '.join(q.value for q in fam.truths)}")
    symbols = {p.name: p.symbol for p in fam.parameters}
    extra = {**(bind or {}), **(defaults or {})}
    symbols |= {k: sp.Symbol(k, real=True) for k in extra if k not in symbols}

    def parse(x, condition=False):
        return parse_expression(x, symbols, condition=condition, what=str(x)) if isinstance(x, str) else sp.sympify(x)

    expr = parse(bound)
    allowed = set(fam.parameter_names(quantity)) | set(extra)
    unknown = sorted({s.name for s in expr.free_symbols} - allowed)
    if unknown:
        raise ParameterError(f"bound uses {', '.join(unknown)}, which family {family} does not provide for "
                             f"'{quantity.value}'; its parameters are {', '.join(fam.parameter_names(quantity))}")
    assumptions = tuple(Assumption(f"extra_{k}", parse(c, condition=True), str(c))
                        for k, c in enumerate(extra_assumptions))
    app = Application(family, Verdict.HOLDS, {}, {k: parse(v) for k, v in (defaults or {}).items()},
                      {k: parse(v) if not isinstance(v, FromFamily) else v for k, v in (bind or {}).items()})
    return Theorem(name, f"user bound ({side})", Source("-", "user", "-"), Variant.DERIVED, SIDES[side],
                   quantity, expr, assumptions, frozenset(), (app,))


def falsify(bound: sp.Expr | str, family: str, side: str = "upper", extra_assumptions: Sequence[sp.Basic | str] = (),
            budget_s: float = 10.0, seed: int = 0, *, quantity: Quantity | str | None = None,
            bind: Mapping[str, sp.Expr | str] | None = None, defaults: Mapping[str, sp.Expr | str] | None = None,
            max_examples: int = 2000) -> Counterexample | None:
    """Search `family`'s parameter space for a point where `bound` is on the wrong side of the truth.

    Returns None when no counterexample was found within `max_examples` points (or `budget_s` seconds),
    otherwise the shrunk counterexample. `extra_assumptions` restrict the search (SymPy conditions or strings).
    """
    theorem = user_theorem(bound, family, side, quantity=quantity, extra_assumptions=extra_assumptions, bind=bind,
                           defaults=defaults)
    return search(theorem, theorem.applications[0], max_examples=max_examples, budget_s=budget_s, seed=seed)


def parameters_of(theorem: Theorem) -> list[str]:
    """The names a falsifier point assigns for `theorem` (its first application)."""
    return list(free_parameters(theorem, theorem.applications[0]))
