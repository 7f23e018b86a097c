"""The checker: evaluate a theorem's bound and its family's truth at parameter points, decide a verdict."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from verify.errors import AssumptionError, ParameterError
from verify.families import family as get_family
from verify.model import Application, Direction, FromFamily, Theorem, check_declared_domain, evaluate
from verify.results import CompanionValue, Method, PointResult, Truth, Verdict


def decide(direction: Direction, bound: float, truth: Truth) -> Verdict:
    """Compare a bound with a truth interval.

    An exact truth's interval only covers rounding, so overlap there means equality (which satisfies
    upper, lower and exact claims). An estimated truth's interval is a confidence interval, so overlap
    means the evidence cannot decide: INCONCLUSIVE, never HOLDS.
    """
    exact = truth.method is Method.EXACT
    below, above = bound < truth.lower, bound > truth.upper
    if direction is Direction.UPPER:
        bad, good = below, truth.upper <= bound
    elif direction is Direction.LOWER:
        bad, good = above, bound <= truth.lower
    else:
        bad, good = below or above, False
    if bad:
        return Verdict.VIOLATED
    if good or exact:
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def _margin(direction: Direction, bound: float, truth: float) -> float:
    scale = abs(truth) if truth != 0 else 1.0
    if direction is Direction.UPPER:
        return (bound - truth) / scale
    if direction is Direction.LOWER:
        return (truth - bound) / scale
    return -abs(bound - truth) / scale


def resolve(theorem: Theorem, app: Application, params: Mapping[str, float]) -> tuple[dict, dict]:
    """Family parameters and theorem-symbol values at a point: defaults filled, symbols bound, all checked."""
    fam = get_family(app.family)
    theorem_names = {s.name for s in theorem.symbols}
    family_names = {p.name for p in fam.parameters}
    unknown = sorted(set(params) - family_names - theorem_names)
    if unknown:
        raise ParameterError(f"{theorem.id}: unknown parameter(s) {', '.join(unknown)}; family {fam.name} has "
                             f"{', '.join(p.name for p in fam.parameters)}")
    values: dict[str, float] = {}
    for k, v in params.items():
        v = float(v)
        if math.isnan(v):
            raise ParameterError(f"{theorem.id}: parameter {k} is NaN")
        values[k] = v
    declared = {p.name: p.symbol for p in fam.parameters} | {s.name: s for s in theorem.symbols}
    for k, v in values.items():
        check_declared_domain(theorem.id, declared[k], v)
    for name, expr in app.defaults.items():
        if name not in values:
            values[name] = float(evaluate(expr, values))
    family_params = fam.validate(theorem.quantity, {k: v for k, v in values.items()
                                                    if k in fam.parameter_names(theorem.quantity)})
    for name, target in app.bind.items():
        if isinstance(target, FromFamily):
            needed = {k: v for k, v in values.items() if k in fam.parameter_names(target.quantity)}
            values[name] = fam.truth(target.quantity, **needed).value
        else:
            values[name] = float(evaluate(target, values))
    theorem.check_assumptions(values)
    return family_params, values


def _bound(theorem: Theorem, values: Mapping[str, float]) -> float:
    try:
        bound = float(theorem.value(values))
    except ZeroDivisionError:
        bound = math.nan
    if math.isnan(bound):
        raise ParameterError(f"{theorem.id}: the bound is undefined at {values}")
    return bound


def _companion(other: Theorem, family: str, point: Mapping[str, float], truth: Truth) -> CompanionValue | None:
    """`other` evaluated at the same point, or None where its own assumptions exclude the point."""
    app = other.application(family)
    if app is None:
        return None
    known = {p.name for p in get_family(family).parameters} | {s.name for s in other.symbols}
    try:
        _, values = resolve(other, app, {k: v for k, v in point.items() if k in known})
        value = _bound(other, values)
    except (AssumptionError, ParameterError):
        return None
    return CompanionValue(other.id, other.direction.value, value, decide(other.direction, value, truth))


def check_point(theorem: Theorem, app: Application, params: Mapping[str, float],
                companions: Sequence[Theorem] = ()) -> PointResult:
    """Check `theorem` on `app.family` at one point. Raises AssumptionError/ParameterError on bad input.

    `companions` are other bounds on the same quantity evaluated at the same point where their own
    assumptions allow (the catalog lists them per application).
    """
    family_params, values = resolve(theorem, app, params)
    bound = _bound(theorem, values)
    truth = get_family(app.family).truth_validated(theorem.quantity, family_params)
    verdict = decide(theorem.direction, bound, truth)
    ratio = bound / truth.value if truth.value != 0 and math.isfinite(truth.value) else None
    used = {s.name for s in theorem.symbols if s.name in values}
    inputs = {k: values[k] for k in sorted(set(family_params) | set(params))}
    extra = tuple(c for c in (_companion(o, app.family, inputs, truth) for o in companions) if c is not None)
    return PointResult(theorem.id, app.family, inputs, bound, truth, verdict,
                       _margin(theorem.direction, bound, truth.value), ratio, {k: values[k] for k in sorted(used)},
                       extra)


@dataclass(frozen=True)
class ApplicationResult:
    """A theorem checked over the default grid of one application."""

    theorem: str
    family: str
    expected: Verdict
    verdict: Verdict
    points: tuple[PointResult, ...]
    skipped: int  # grid points outside the theorem's assumptions
    seconds: float

    @property
    def as_expected(self) -> bool:
        return self.verdict is self.expected

    @property
    def ratios(self) -> list[float]:
        return [p.ratio for p in self.points if p.ratio is not None and math.isfinite(p.ratio)]

    @property
    def worst(self) -> PointResult | None:
        """The point with the smallest margin: the counterexample when the verdict is VIOLATED."""
        return min(self.points, key=lambda p: p.margin, default=None)

    def count(self, verdict: Verdict) -> int:
        return sum(p.verdict is verdict for p in self.points)

    def to_dict(self) -> dict:
        ratios = self.ratios
        worst = self.worst
        return {
            "theorem": self.theorem,
            "family": self.family,
            "expected": self.expected.value,
            "verdict": self.verdict.value,
            "as_expected": self.as_expected,
            "n_points": len(self.points),
            "n_skipped": self.skipped,
            "counts": {v.value: self.count(v) for v in Verdict},
            "ratio_min": min(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
            "worst": worst.to_dict() if worst else None,
            "seconds": self.seconds,
            "points": [p.to_dict() for p in self.points],
        }


def aggregate(points: list[PointResult]) -> Verdict:
    """VIOLATED if any point is; HOLDS only if every point holds and there is at least one."""
    if any(p.verdict is Verdict.VIOLATED for p in points):
        return Verdict.VIOLATED
    if points and all(p.verdict is Verdict.HOLDS for p in points):
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def grid_points(app: Application) -> list[dict[str, float]]:
    names = sorted(app.grid)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(app.grid[k] for k in names))]


def check_application(theorem: Theorem, app: Application, companions: Sequence[Theorem] = ()) -> ApplicationResult:
    """Check `theorem` over the default grid of `app`; points outside its assumptions are skipped."""
    start = time.perf_counter()
    points, skipped = [], 0
    for params in grid_points(app):
        try:
            points.append(check_point(theorem, app, params, companions))
        except AssumptionError:
            skipped += 1
    return ApplicationResult(theorem.id, app.family, app.expected, aggregate(points), tuple(points), skipped,
                             time.perf_counter() - start)
