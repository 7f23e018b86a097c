"""The checker: evaluate a theorem's bound and its family's truth at parameter points, decide a verdict."""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import mpmath

from verify.display import application_html, application_line
from verify.errors import AssumptionError, ParameterError, UndefinedBoundError, did_you_mean
from verify.families import family as get_family
from verify.limits import deadline, truth_deadline
from verify.model import (
    Application,
    Direction,
    Family,
    FromFamily,
    Quantity,
    Theorem,
    as_number,
    breaks_facts,
    check_declared_domain,
    declared_facts,
    evaluate,
)
from verify.pipeline.bound_arrays import bound_floats
from verify.pipeline.isolation import session
from verify.pipeline.memo import remembered, truth_of
from verify.pipeline.rigorous import TIE_RTOL, certify_point, degenerate, enclosure_ratio_margin, lost_in_floats
from verify.results import CompanionValue, Method, PointCertificate, PointResult, Truth, Verdict
from verify.truth.renyi_estimator import too_weak


def decide(direction: Direction, bound: float, truth: Truth) -> Verdict:
    """Compare a bound with a truth interval.

    An exact truth's interval only covers rounding, so overlap there means equality (which satisfies
    upper, lower and exact claims); a computed truth's interval within the tie band of the bound is a tie too
    (`_tied`). An estimated truth's interval is a confidence interval, so overlap
    means the evidence cannot decide: INCONCLUSIVE, never HOLDS. A Monte-Carlo truth with a low effective sample
    size or a wide interval (`too_weak`) decides nothing.
    """
    exact = truth.method is Method.EXACT
    if truth.method is Method.MONTE_CARLO and too_weak(truth):
        return Verdict.INCONCLUSIVE  # too few effective samples or too wide an interval to decide anything
    lower, upper = truth.lower, truth.upper
    if exact:  # float inputs are exact only to ~1e-16, amplified by powers such as c^(2n): ties are within TIE_RTOL
        tol = TIE_RTOL * max(abs(truth.value), abs(bound))
        tol = tol if math.isfinite(tol) else 0.0  # an overflowed value is not a tie; the exact fallback decides
        lower, upper = lower - tol, upper + tol
    below, above = bound < lower, bound > upper
    if direction is Direction.UPPER:
        bad, good = below, upper <= bound
    elif direction is Direction.LOWER:
        bad, good = above, bound <= lower
    else:
        bad, good = below or above, False
    if bad:
        return Verdict.VIOLATED
    if good or exact or _tied(direction, bound, truth):
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def _tied(direction: Direction, bound: float, truth: Truth) -> bool:
    """True if a computed truth's whole interval is within the tie band (TIE_RTOL of the smallest magnitude of the
    bound and the interval's ends) of the bound on the side the claim could fail: whatever value in the interval the
    truth has, the bound equals it or is on the right side of it, as `pipeline.rigorous` decides a tie from enclosures
    (where the bound is the truth's own closed form: Theorem 3.2 of seed 004 at n_a = n_b = 0 is the sampled Gaussian
    itself). Only for a truth with an enclosure, so that the rigorous fallback re-checks the point (`judge`: a HOLDS
    this close is `near_bound`); never for an estimate, whose interval is only likely to hold the value."""
    if truth.method is Method.MONTE_CARLO or truth.enclose is None:
        return False
    tie = TIE_RTOL * min(abs(bound), abs(truth.lower), abs(truth.upper))
    over = {Direction.UPPER: truth.upper - bound, Direction.LOWER: bound - truth.lower}.get(
        direction, max(truth.upper - bound, bound - truth.lower))
    width = truth.upper - truth.lower  # finite: then `near_bound` holds and `judge` re-checks the tie in Arb
    return math.isfinite(tie) and math.isfinite(width) and over <= tie


def _margin(direction: Direction, bound: float, truth: float) -> float:
    if math.isinf(truth) or math.isinf(bound):  # relative slack: 0 for inf vs inf, -1 for a finite bound under +inf
        gap = 0.0 if bound == truth else (-1.0 if math.isinf(truth) else math.copysign(math.inf, bound))
        return {Direction.UPPER: gap, Direction.LOWER: -gap}.get(direction, -abs(gap))
    scale = abs(truth) if truth != 0 else 1.0
    if direction is Direction.UPPER:
        return (bound - truth) / scale
    if direction is Direction.LOWER:
        return (truth - bound) / scale
    return -abs(bound - truth) / scale


def _real(value, name: str, theorem: Theorem):
    """A derived value, kept in full precision; complex or NaN values are parameter errors."""
    if isinstance(value, mpmath.mpc) or mpmath.isnan(value):
        raise ParameterError(f"{theorem.id}: {name} is not a real number at this point ({value})")
    return value


def _derived(expr, values: Mapping[str, float], name: str, theorem: Theorem):
    """A derived value (a default or a bind); undefined there (a division by zero, a log of 0) is a parameter error
    naming it, so the point is excluded rather than crashing the run."""
    try:
        return evaluate(expr, values)
    except (ZeroDivisionError, ValueError, OverflowError) as err:
        missing = sorted(s.name for s in expr.free_symbols if s.name not in values)
        if missing:  # a parameter not given, not undefined arithmetic
            raise ParameterError(f"{theorem.id}: missing parameter {', '.join(missing)} (the entry derives {name} = "
                                 f"{expr} from it)") from None
        raise UndefinedBoundError(f"{theorem.id}: {name} = {expr} is undefined at {_shown(values)} ({err})") from None


def _validated(fam: Family, quantity: Quantity, params: Mapping[str, float]) -> dict[str, float]:
    """`fam.validate(quantity, params)`, once per point while a memo is active (a failure is raised every time)."""
    key = ("validate", fam.name, quantity, tuple(sorted(params.items())))
    return dict(remembered(key, lambda: fam.validate(quantity, params)))


def _family_float(theorem: Theorem, fam: Family, name: str, expr, values: Mapping[str, Any]) -> None:
    """A derived family parameter is handed to the truth as a float: one that overflows, or underflows below the normal
    range (a default 2 sigma^2/lam at sigma = 1e-162 became 0.0, a fixed start, while the bound and its assumptions
    kept the exact value), describes another instance: the point is excluded."""
    exact = values[name]
    as_float = float(exact)
    if not math.isfinite(as_float) or (exact != 0 and abs(as_float) < sys.float_info.min):
        raise UndefinedBoundError(f"{theorem.id}: {name} = {expr} is {mpmath.nstr(exact, 6)} at {_shown(values)}, "
                                  f"beyond the float range: no instance of family {fam.name} has it")


def _check_decidable(theorem: Theorem, values: Mapping[str, float]) -> None:
    """Check the assumptions over `values` alone (AssumptionError for the first that fails)."""
    for a in theorem.assumptions:
        if a.names <= values.keys():
            a.check(theorem.id, values)


def _binding(target) -> str:
    """How the entry binds a symbol, in words."""
    if isinstance(target, FromFamily):
        moved = "".join(f", {k} = {v}" for k, v in target.at.items())
        return f"the family's {target.quantity.value}{' at ' + moved[2:] if moved else ''}"
    return str(target)


@dataclass(frozen=True)
class _Plan:
    """What `resolve` needs of a theorem on a family, computed once (names, declared symbols, the assumptions
    decidable before the bindings for each set of given names)."""

    theorem_names: frozenset[str]
    family_names: frozenset[str]
    known: frozenset[str]
    declared: Mapping[str, Any]
    facts: Mapping[str, tuple[bool, bool, bool]]  # (positive, nonnegative, integer) of each declared symbol
    truth_names: frozenset[str]  # the family parameters the theorem's quantity needs
    bind_names: frozenset[str]
    before_binding: dict[frozenset[str], tuple[tuple[Any, ...], frozenset[str]]] = field(default_factory=dict)

    def checked_first(self, theorem: Theorem, names: frozenset[str]) -> tuple[tuple[Any, ...], frozenset[str]]:
        """The assumptions decidable over `names` (before the bindings), and the names of those among them that no
        binding changes (settled: not checked again after the bindings)."""
        found = self.before_binding.get(names)
        if found is None:
            first = tuple(a for a in theorem.assumptions if a.names <= names)
            found = first, frozenset(a.name for a in first if not a.names & self.bind_names)
            self.before_binding[names] = found
        return found


_PLANS: dict[tuple[int, int, int], tuple[Theorem, Application, Family, _Plan]] = {}


def _plan(theorem: Theorem, app: Application, fam: Family) -> _Plan:
    """The `_Plan` of `theorem` on `app`'s family `fam`, once per the three objects (held while cached, so that their
    ids are not reused)."""
    key = (id(theorem), id(app), id(fam))
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is theorem and hit[1] is app and hit[2] is fam:
        return hit[3]
    if len(_PLANS) >= 4096:
        _PLANS.clear()
    theorem_names = frozenset(s.name for s in theorem.symbols)
    family_names = frozenset(p.name for p in fam.parameters)
    declared = {p.name: p.symbol for p in fam.parameters} | {s.name: s for s in theorem.symbols}
    facts = {name: declared_facts(symbol) for name, symbol in declared.items()}
    plan = _Plan(theorem_names, family_names, theorem_names | family_names, declared, facts,
                 frozenset(fam.parameter_names(theorem.quantity)), frozenset(app.bind))
    _PLANS[key] = (theorem, app, fam, plan)
    return plan


def resolve(theorem: Theorem, app: Application, params: Mapping[str, float]) -> tuple[dict, dict, dict]:
    """Family parameters and theorem-symbol values at a point: defaults filled, symbols bound, all checked; and the
    truths behind the symbols bound to a family quantity (their floats are rounded: the rigorous fallback encloses
    them instead)."""
    fam = get_family(app.family)
    plan = _plan(theorem, app, fam)
    unknown = sorted(params.keys() - plan.known)
    if unknown:
        hints = "".join(did_you_mean(u, plan.known) for u in unknown)
        raise ParameterError(f"{theorem.id}: unknown parameter(s) {', '.join(unknown)}{hints}; family {fam.name} has "
                             f"{', '.join(p.name for p in fam.parameters)}")
    overridden = sorted(params.keys() & plan.bind_names)
    if overridden:
        raise ParameterError(f"{theorem.id}: parameter(s) {', '.join(overridden)} cannot be given: the entry binds "
                             + "; ".join(f"{k} = {_binding(app.bind[k])}" for k in overridden))
    values: dict[str, float] = {}
    for k, v in params.items():
        if type(v) is not float:  # a float is its own number (the common case: no message built)
            v = as_number(v, f"{theorem.id}: parameter {k}")
        if math.isnan(v):
            raise ParameterError(f"{theorem.id}: parameter {k} is NaN")
        values[k] = v
    for k, v in values.items():
        if not math.isfinite(v) or breaks_facts(plan.facts[k], v):
            check_declared_domain(theorem.id, plan.declared[k], v)  # raises, naming the fact
    for name, expr in app.defaults.items():
        if name not in values:
            try:
                values[name] = _real(_derived(expr, values, name, theorem), name, theorem)
                if name in plan.family_names:
                    _family_float(theorem, fam, name, expr, values)
            except (ParameterError, UndefinedBoundError):
                _check_decidable(theorem, values)  # an assumption on the given values that fails names the cause
                raise
    missing = sorted(plan.theorem_names - values.keys() - plan.bind_names)
    if missing:
        raise ParameterError(f"{theorem.id}: missing parameter {', '.join(missing)} "
                             f"({'symbols' if len(missing) > 1 else 'a symbol'} of the theorem)")
    family_params = _validated(fam, theorem.quantity, {k: v for k, v in values.items() if k in plan.truth_names})
    from_family: dict[str, Truth] = {}
    first, settled = plan.checked_first(theorem, frozenset(values))
    for a in first:  # those decidable before the bindings: a bind is evaluated only where they hold
        a.check(theorem.id, values)
    for name, target in app.bind.items():
        if isinstance(target, FromFamily):
            needed = {k: v for k, v in values.items() if k in fam.parameter_names(target.quantity)}
            needed |= {k: _real(evaluate(e, values), k, theorem) for k, e in target.at.items()}
            truth = truth_of(fam, target.quantity, _validated(fam, target.quantity, needed))
            if truth.method is Method.MONTE_CARLO:
                raise ParameterError(f"{theorem.id}: {name} needs a computed {target.quantity.value}, not an "
                                     f"estimate")
            values[name] = truth.value
            from_family[name] = truth
        else:
            values[name] = _real(_derived(target, values, name, theorem), name, theorem)
            if name in plan.family_names:
                _family_float(theorem, fam, name, target, values)
    theorem.check_assumptions(values, settled, domains_checked=params.keys())  # the given values' domains: above
    return family_params, values, from_family


def _bound(theorem: Theorem, values: Mapping[str, float]) -> mpmath.mpf:
    """The bound at a point in PRECISION_DPS digits (+-inf allowed; no float underflow); UndefinedBoundError where
    it is not a real number."""
    try:
        value = theorem.value(values)
    except (ZeroDivisionError, ValueError, OverflowError) as err:
        raise UndefinedBoundError(f"{theorem.id}: the bound is undefined at {_shown(values)} ({err})") from None
    except TypeError as err:  # mpmath comparing a complex value (a log of a negative number inside a recursion)
        if "complex" not in str(err):
            raise
        raise UndefinedBoundError(f"{theorem.id}: the bound is not a real number at {_shown(values)}") from None
    if isinstance(value, mpmath.mpc) or mpmath.isnan(value):
        raise UndefinedBoundError(f"{theorem.id}: the bound is not a real number at {_shown(values)} ({value})")
    return mpmath.mpf(value)


def judge(theorem: Theorem, values: Mapping[str, float], bound: mpmath.mpf, truth: Truth,
          rigorous: bool = True, from_family: Mapping[str, Truth] | None = None, recheck_s: float | None = None
          ) -> tuple[Verdict, PointCertificate | None]:
    """The verdict at a point: the float filter (`decide`), then, for a point it would call VIOLATED, cannot decide,
    holds only narrowly (`near_bound`) or whose floats underflowed/overflowed, the rigorous fallback
    (verify.pipeline.rigorous), whose verdict stands.
    `from_family`: the truths of bound symbols (from `resolve`), enclosed rather than taken at their floats.

    `rigorous=False` keeps the float filter's VIOLATED and undecided points (a search's cheap predicate, whose
    final point is re-checked rigorously); under- and overflowed points are still re-checked. `recheck_s`: the
    fallback's wall-clock cap (`certify_point`)."""
    fast = decide(theorem.direction, float(bound), truth)
    lost = degenerate(bound, truth) and truth.enclose is not None
    if lost and _holds_beyond_floats(theorem.direction, bound, truth):
        return Verdict.HOLDS, None
    undecided = (fast is Verdict.INCONCLUSIVE and truth.enclose is not None and truth.method is not Method.MONTE_CARLO)
    near = fast is Verdict.HOLDS and truth.enclose is not None and near_bound(float(bound), truth)
    if not lost and (not rigorous or (fast is not Verdict.VIOLATED and not undecided and not near)):
        return fast, None
    cert = certify_point(theorem.direction.value, theorem.bound, values, bound, truth, fast, from_family or {},
                         recheck_s)
    return cert.verdict, cert


def decisive_truth(direction: Direction, bound: float, truth: Truth) -> Truth:
    """`truth` refined (`Truth.refine`, finest level last) while the float filter cannot decide `bound` against it."""
    while truth.refine is not None and decide(direction, bound, truth) is Verdict.INCONCLUSIVE:
        truth = truth.refine()
    return truth


def _holds_beyond_floats(direction: Direction, bound: mpmath.mpf, truth: Truth) -> bool:
    """True where one side left the normal float range but cannot have decided the point: the bound over- or
    underflowed while its PRECISION_DPS-digit value is finite and the truth's float is normal, or the truth's float is
    exactly 0 (at most an underflow of a tiny value) against a normal bound; and the point holds far from the truth
    (the standard the float filter applies to any HOLDS, `near_bound`). No Arb re-check of the truth is needed."""
    bound_lost, truth_lost = lost_in_floats(float(bound), bound), lost_in_floats(truth.value)
    if bound_lost == truth_lost or (bound_lost and not mpmath.isfinite(bound)) or (truth_lost and truth.value != 0):
        return False
    value = bound if bound_lost else float(bound)
    if decide(direction, value, truth) is not Verdict.HOLDS:
        return False
    reach = NEAR_RTOL * max(abs(value), abs(truth.value)) + NEAR_WIDTHS * (truth.upper - truth.lower)
    return abs(value - truth.value) > reach


NEAR_RTOL = 1e-6  # a float-filter HOLDS this close (relative) to an unproven truth is re-checked in Arb ...
NEAR_WIDTHS = 1e3  # ... and so is one within this many widths of the truth's (estimated, unproven) interval


def near_bound(bound: float, truth: Truth) -> bool:
    """True if a HOLDS rests on a float truth, whose interval is not a proof (a rounding pad, or a quadrature error
    estimate), close enough to the bound that an error the interval does not admit (lost digits, an optimistic error
    estimate) could flip it: within NEAR_RTOL relative, or NEAR_WIDTHS times the interval's width. The rigorous
    fallback decides such a point like a VIOLATED one. Infinite sides are decided exactly by the filter."""
    if not (math.isfinite(bound) and math.isfinite(truth.value) and math.isfinite(truth.upper - truth.lower)):
        return False
    reach = NEAR_RTOL * max(abs(bound), abs(truth.value)) + NEAR_WIDTHS * (truth.upper - truth.lower)
    return abs(bound - truth.value) <= reach


def _shown(values: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={float(v):g}" for k, v in sorted(values.items()))


def _companion(other: Theorem, family: str, point: Mapping[str, float], truth: Truth) -> CompanionValue | None:
    """`other` evaluated at the same point, or None where its own assumptions exclude the point (once per point and
    truth interval while a memo is active: the entries on one family share grid points and companions)."""
    key = ("companion", other.id, family, tuple(sorted(point.items())), truth.value, truth.lower, truth.upper)
    return remembered(key, lambda: _companion_value(other, family, point, truth))


def _companion_value(other: Theorem, family: str, point: Mapping[str, float], truth: Truth) -> CompanionValue | None:
    app = other.application(family)
    if app is None:
        return None
    known = {p.name for p in get_family(family).parameters} | {s.name for s in other.symbols}
    try:
        _, values, from_family = resolve(other, app, {k: v for k, v in point.items() if k in known})
        value = _bound(other, values)
    except (AssumptionError, ParameterError):
        return None
    verdict = judge(other, values, value, truth, from_family=from_family)[0]
    return CompanionValue(other.id, other.direction.value, float(value), verdict)


@session()
def check_point(theorem: Theorem, app: Application, params: Mapping[str, float],
                companions: Sequence[Theorem] = (), *, rigorous: bool = True,
                recheck_s: float | None = None) -> PointResult:
    """Check `theorem` on `app.family` at one point. Raises AssumptionError/ParameterError on bad input.

    `companions` are other bounds on the same quantity evaluated at the same point where their own
    assumptions allow (the catalog lists them per application). `rigorous=False` skips the exact fallback of
    `judge` for points the float filter decides (for a search's predicate only: never report such a VIOLATED).
    `recheck_s` caps the exact fallback's wall-clock time (default verify.pipeline.rigorous.CERTIFY_DEADLINE_S).
    """
    with deadline(truth_deadline(), f"the {app.family} truth"):  # bound symbols' own truths (resolve) included
        resolved = resolve(theorem, app, params)
        decided = _decide(theorem, app, resolved, None, rigorous, recheck_s)
    return _point_result(theorem, app, params, resolved, decided, companions)


_Decided = tuple[Any, Truth, Verdict, "PointCertificate | None"]  # the bound (float or mpf), truth, verdict, cert


def _decide(theorem: Theorem, app: Application, resolved: tuple[dict, dict, dict], bound_float: float | None,
            rigorous: bool = True, recheck_s: float | None = None) -> _Decided:
    """The bound, the (decisive) truth and the verdict at a resolved point. `bound_float`: the bound's float from
    the grid's arrays (pipeline.bound_arrays), where they gave one: a point the float filter then decides without the
    rigorous fallback (`judge`'s own test, `_filter_decides`) keeps it; any other is evaluated in PRECISION_DPS
    digits and judged as before."""
    family_params, values, from_family = resolved
    if bound_float is not None:
        truth = truth_of(get_family(app.family), theorem.quantity, family_params)
        truth = decisive_truth(theorem.direction, bound_float, truth)
        fast = _filter_decides(theorem.direction, bound_float, truth, rigorous)
        if fast is not None:
            return bound_float, truth, fast, None
        bound_mp = _bound(theorem, values)
    else:
        bound_mp = _bound(theorem, values)
        truth = truth_of(get_family(app.family), theorem.quantity, family_params)
    truth = decisive_truth(theorem.direction, float(bound_mp), truth)
    verdict, cert = judge(theorem, values, bound_mp, truth, rigorous, from_family, recheck_s)
    return bound_mp, truth, verdict, cert


def _filter_decides(direction: Direction, bound: float, truth: Truth, rigorous: bool) -> Verdict | None:
    """The float filter's verdict where `judge` would return it without the rigorous fallback, for a normal, finite,
    nonzero float `bound`; None where `judge` must see the PRECISION_DPS-digit bound: a truth lost in floats, a point
    the fallback re-checks, or a verdict one ulp of the bound could change."""
    if lost_in_floats(truth.value) and truth.enclose is not None:
        return None
    fast = decide(direction, bound, truth)
    if rigorous and truth.enclose is not None and (
            fast is Verdict.VIOLATED or (fast is Verdict.INCONCLUSIVE and truth.method is not Method.MONTE_CARLO)
            or (fast is Verdict.HOLDS and near_bound(bound, truth))):
        return None
    if rigorous and truth.enclose is None and fast is Verdict.VIOLATED:
        return None  # judge's own path (the certificate says why none exists): unchanged
    for beside in (math.nextafter(bound, -math.inf), math.nextafter(bound, math.inf)):
        if decide(direction, beside, truth) is not fast:
            return None
    return fast


def _point_result(theorem: Theorem, app: Application, params: Mapping[str, float], resolved: tuple[dict, dict, dict],
                  decided: _Decided, companions: Sequence[Theorem]) -> PointResult:
    family_params, values, _ = resolved
    bound_value, truth, verdict, cert = decided
    bound = float(bound_value)
    if cert is not None and _finite_ends(cert) and degenerate(bound_value, truth):  # the floats lost the comparison
        ratio, margin = enclosure_ratio_margin(theorem.direction.value, cert)
    else:
        ratio = bound / truth.value if truth.value != 0 and math.isfinite(truth.value) else None
        margin = _margin(theorem.direction, bound, truth.value)
    used = {s.name for s in theorem.symbols if s.name in values}
    inputs = {k: float(values[k]) for k in sorted(set(family_params) | set(params))}
    extra = _companion_values(app.family, inputs, truth, companions)
    vacuous = bool(mpmath.isinf(bound_value)) and {Direction.UPPER: bound_value > 0,
                                                    Direction.LOWER: bound_value < 0}.get(theorem.direction, False)
    return PointResult(theorem.id, app.family, inputs, bound, truth, verdict, margin, ratio,
                       {k: float(values[k]) for k in sorted(used)}, extra, certificate=cert, vacuous=vacuous)


def with_companions(result: PointResult, companions: Sequence[Theorem]) -> PointResult:
    """`result` with the bounds `companions` at its point (as `check_point` gives them), without checking it again."""
    return replace(result, companions=_companion_values(result.family, result.params, result.truth, companions))


def _companion_values(family: str, inputs: Mapping[str, float], truth: Truth,
                      companions: Sequence[Theorem]) -> tuple[CompanionValue, ...]:
    return tuple(c for c in (_companion(o, family, inputs, truth) for o in companions) if c is not None)


def _finite_ends(cert: PointCertificate) -> bool:
    ends = (cert.truth_lower, cert.truth_upper, cert.bound_lower, cert.bound_upper)
    return all(e is not None and "inf" not in e for e in ends)


@dataclass(frozen=True)
class SkippedPoint:
    """A grid point outside the theorem's assumptions, with the assumption that excluded it."""

    params: dict[str, float]
    assumption: str

    def to_dict(self) -> dict:
        return {"params": self.params, "assumption": self.assumption}


@dataclass(frozen=True)
class PointError:
    """A grid point whose check failed with an error other than an excluded assumption."""

    params: dict[str, float]
    error: str  # exception class name, e.g. ParameterError
    message: str

    def to_dict(self) -> dict:
        return {"params": self.params, "error": self.error, "message": self.message}


@dataclass(frozen=True)
class SearchSummary:
    """What the falsifier did beside the grid: points allowed and tried with this seed, how many were really checked
    and why the others were not, and whether it found a (certified) violation."""

    examples: int
    seed: int
    found: bool
    tried: int = 0
    checked: int = 0
    excluded: int = 0
    undefined: int = 0
    capped: int = 0
    failed: int = 0
    uncertified: int = 0
    undecided: int = 0
    failure_reasons: Mapping[str, int] = field(default_factory=dict)  # why points failed or hit a cap, counted
    uncertified_reasons: Mapping[str, int] = field(default_factory=dict)  # why re-checks did not certify, counted
    region: tuple[str, ...] = ()  # the family's search region the points were drawn in; () for the whole domain

    def to_dict(self) -> dict:
        return {"examples": self.examples, "tried": self.tried, "checked": self.checked, "excluded": self.excluded,
                "undefined": self.undefined, "capped": self.capped, "failed": self.failed,
                "uncertified": self.uncertified, "undecided": self.undecided, "seed": self.seed, "found": self.found,
                "failure_reasons": dict(sorted(self.failure_reasons.items())),
                "uncertified_reasons": dict(sorted(self.uncertified_reasons.items())), "region": list(self.region)}


@dataclass(frozen=True)
class ApplicationResult:
    """A theorem checked over the default grid of one application.

    `verdict` aggregates the points that could be checked; a result with `errors` has no verdict (its
    `status` is "ERROR") and never counts as expected.
    """

    theorem: str
    family: str
    expected: Verdict
    verdict: Verdict
    points: tuple[PointResult, ...]
    skipped: int  # grid points outside the theorem's assumptions
    seconds: float
    skipped_points: tuple[SkippedPoint, ...] = ()
    errors: tuple[PointError, ...] = ()
    search: SearchSummary | None = None

    def __repr__(self) -> str:
        return application_line(self)

    def _repr_html_(self) -> str:
        return application_html(self)

    @property
    def status(self) -> str:
        """The verdict's name, or "ERROR" when some grid point failed with an error."""
        return "ERROR" if self.errors else self.verdict.value

    @property
    def as_expected(self) -> bool:
        return not self.errors and self.verdict is self.expected

    @property
    def ratios(self) -> list[float]:
        return [p.ratio for p in self.points if p.ratio is not None and math.isfinite(p.ratio)]

    @property
    def worst(self) -> PointResult | None:
        """The point with the smallest margin, whatever its verdict (an undecided point can have the smallest)."""
        return min(self.points, key=lambda p: p.margin, default=None)

    @property
    def counterexample(self) -> PointResult | None:
        """The certified VIOLATED grid point with the smallest margin; a falsifier's point (drawn anywhere in the
        domain, and kept unshrunk by a catalog run) only where no grid point is VIOLATED; None when none is."""
        violated = [p for p in self.points if p.verdict is Verdict.VIOLATED]
        grid = [p for p in violated if p.origin == "grid"]
        return min(grid or violated, key=lambda p: p.margin, default=None)

    @property
    def vacuous(self) -> bool:
        """HOLDS only because the bound is infinite (+inf for an upper bound, -inf for a lower) at every checked
        point: a claim that says nothing, shown as vacuous wherever the verdict is shown (e.g. eq. 9 of seed 003)."""
        return self.verdict is Verdict.HOLDS and bool(self.points) and all(p.vacuous for p in self.points)

    @property
    def shown_verdict(self) -> str:
        """The status as a reader sees it: "HOLDS (vacuous)" where `vacuous`, the status otherwise."""
        return "HOLDS (vacuous)" if self.vacuous else self.status

    def count(self, verdict: Verdict) -> int:
        return sum(p.verdict is verdict for p in self.points)

    def skipped_by(self) -> dict[str, int]:
        """How many grid points each assumption excluded."""
        out: dict[str, int] = {}
        for s in self.skipped_points:
            out[s.assumption] = out.get(s.assumption, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        ratios = self.ratios
        worst = self.worst
        return {
            "theorem": self.theorem,
            "family": self.family,
            "expected": self.expected.value,
            "verdict": self.status,
            "as_expected": self.as_expected,
            "vacuous": self.vacuous,
            "n_points": len(self.points),
            "n_skipped": self.skipped,
            "n_errors": len(self.errors),
            "counts": {v.value: self.count(v) for v in Verdict},
            "ratio_min": min(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
            "worst": _point_dict(worst) if worst else None,
            "counterexample": _point_dict(self.counterexample) if self.counterexample else None,
            "skipped_by": self.skipped_by(),
            "errors": [e.to_dict() for e in self.errors],
            "falsifier": self.search.to_dict() if self.search else None,
            "seconds": self.seconds,
        }


def _point_dict(p: PointResult) -> dict:
    lower = p.lower
    return {**p.to_dict(), "lower": lower.to_dict() if lower else None}


def aggregate(points: Sequence[PointResult], errors: Sequence[PointError] = ()) -> Verdict:
    """VIOLATED if any point is; HOLDS only if every point holds, there is at least one and no point failed (the
    failed points are unchecked: no claim over the whole grid)."""
    if any(p.verdict is Verdict.VIOLATED for p in points):
        return Verdict.VIOLATED
    if points and all(p.verdict is Verdict.HOLDS for p in points) and not errors:
        return Verdict.HOLDS
    return Verdict.INCONCLUSIVE


def grid_points(app: Application) -> list[dict[str, float]]:
    """The points of the default grid, then of each regime (a point on two grids is checked once)."""
    out, seen = [], set()
    for grid in app.grids:
        names = sorted(grid)
        for combo in itertools.product(*(grid[k] for k in names)):
            point = dict(zip(names, combo, strict=True))
            key = tuple(sorted(point.items()))
            if key not in seen:
                seen.add(key)
                out.append(point)
    return out


@session()
def check_application(theorem: Theorem, app: Application, companions: Sequence[Theorem] = ()) -> ApplicationResult:
    """Check `theorem` over the default grid of `app`.

    Points outside its assumptions are skipped and recorded with the assumption that excluded them; a point
    whose check raises any other exception (e.g. a ParameterError from an undefined bound) is recorded as an
    error, which makes the result verdict-less ("ERROR") instead of crashing the run.

    The grid is checked in two passes: every point resolved (`resolve`, one by one), then the bound's floats of all
    resolved points at once as arrays (pipeline.bound_arrays), then each point decided (`_decide`: the float filter on
    the array float where it decides, PRECISION_DPS digits and the rigorous fallback elsewhere), in grid order.
    """
    start = time.perf_counter()
    grid = grid_points(app)
    outcomes: list[Any] = [None] * len(grid)
    resolved: list[tuple[int, tuple[dict, dict, dict]]] = []
    for i, params in enumerate(grid):
        try:
            with deadline(truth_deadline(), f"the {app.family} truth"):
                resolved.append((i, resolve(theorem, app, params)))
        except Exception as err:  # noqa: BLE001 - any failure becomes a skipped point or an error entry
            outcomes[i] = _failed(params, err)
    floats = bound_floats(theorem.bound, [point[1] for _, point in resolved])
    for (i, point), bound_float in zip(resolved, floats, strict=True):
        try:
            with deadline(truth_deadline(), f"the {app.family} truth"):
                decided = _decide(theorem, app, point, bound_float)
            outcomes[i] = _point_result(theorem, app, grid[i], point, decided, companions)
        except Exception as err:  # noqa: BLE001 - any failure becomes a skipped point or an error entry
            outcomes[i] = _failed(grid[i], err)
    points = [o for o in outcomes if isinstance(o, PointResult)]
    skipped = [o for o in outcomes if isinstance(o, SkippedPoint)]
    errors = [o for o in outcomes if isinstance(o, PointError)]
    return ApplicationResult(theorem.id, app.family, app.expected, aggregate(points, errors), tuple(points),
                             len(skipped), time.perf_counter() - start, tuple(skipped), tuple(errors))


def _failed(params: dict[str, float], err: Exception) -> SkippedPoint | PointError:
    """A point outside the theorem's assumptions (skipped), or one whose check failed otherwise (an error entry)."""
    if isinstance(err, AssumptionError):
        return SkippedPoint(params, err.assumption)
    return PointError(params, type(err).__name__, str(err))
