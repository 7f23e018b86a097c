"""Search an instance family's parameter space for a counterexample to a bound, and shrink it.

`falsify` takes a SymPy expression (or a string, parsed safely) over a family's parameters, the side it claims
(upper / lower / exact), and searches the points its assumptions allow with hypothesis; a point counts only
when the checker's verdict there is VIOLATED (exact truth, or a confidence interval that excludes the bound).
Hypothesis shrinks the point; a last pass rounds each value to few significant digits while it stays violated.
"""

from __future__ import annotations

import ast
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace

import sympy as sp
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from verify.checker import check_point, with_companions
from verify.conventions import convention_binds
from verify.display import counterexample_html, counterexample_line, outcome_html, outcome_line
from verify.errors import (
    AssumptionError,
    DeadlineExceeded,
    NothingChecked,
    ParameterError,
    PluginError,
    PluginPointError,
    ResourceLimitError,
    UndefinedBoundError,
)
from verify.families import family as get_family
from verify.latex_input import parse_latex_expression, reading
from verify.limits import deadline
from verify.model import (
    Application,
    Assumption,
    Direction,
    FromFamily,
    Quantity,
    Source,
    Theorem,
    Variant,
    check_declared_domain,
)
from verify.parsing import ALLOWED_CONSTANTS, ALLOWED_FUNCTIONS, parse_expression, quantity_bind
from verify.pipeline.isolation import session
from verify.pipeline.memo import shared_truths
from verify.pipeline.rigorous import CERTIFY_DEADLINE_S
from verify.results import PointResult, Verdict, params_text
from verify.testing.routes import simpler_points
from verify.testing.strategies import free_parameters, no_local_constants, search_plans, strategy_of

SIDES = {"upper": Direction.UPPER, "lower": Direction.LOWER, "exact": Direction.EXACT}
MIN_CHECKED = 10  # a search that checked fewer points (and found nothing) is NothingChecked, never a pass
RECHECK_SHARE = 4  # the default re-check deadline: the budget / this, at most CERTIFY_DEADLINE_S
ROUTE_TRIES = 6  # simpler points a point's cheap routes certify at most (verify.testing.routes)
SUSPECTS_SHOWN = 50  # uncertified points listed in text (--json lists every one)

# The points a search drew, in the order it first tried them, by (plans, seed, settings), for searches that tried all
# their points and found nothing; at most _DRAWS_KEPT points in all (a few MB), the oldest searches dropped first.
# While a search's predicate is False, hypothesis's draws depend on the strategy, the seed and the settings alone: a
# later search with the same key tries the same points in the same order, so it replays them without hypothesis until
# one is a certified counterexample, and only from there runs hypothesis (which re-draws the replayed points from the
# search's memo). Entries that differ only in their bound (a printed statement and its correction) share their plans.
_DRAWS: dict[tuple, tuple[dict[str, float], ...]] = {}
_DRAWS_KEPT = 20_000
_DRAWS_LOCK = threading.Lock()


@dataclass(frozen=True)
class Suspect:
    """A point the float filter calls violated whose rigorous re-check did not prove it: evidence, uncertified."""

    params: dict[str, float]
    bound: float  # the float values the filter compared
    truth: float
    ratio: float | None  # bound / truth
    reason: str  # why its certificate failed

    def __str__(self) -> str:
        ratio = f" (ratio {self.ratio:.4g})" if self.ratio is not None else ""
        return (f"{params_text(self.params)}: bound {self.bound:.6g} vs truth {self.truth:.6g}{ratio}; "
                f"uncertified: {self.reason}")

    def to_dict(self) -> dict:
        return {"params": dict(self.params), "bound": self.bound, "truth": self.truth, "ratio": self.ratio,
                "certified": False, "reason": self.reason}


@dataclass(frozen=True)
class SearchOutcome:
    """What a search did: points tried, how many were really checked (a truth computed and a verdict decided), how
    many were excluded and why, and the counterexample if one was found. Zero checked is evidence of nothing."""

    theorem: str
    family: str
    seed: int
    tried: int
    checked: int
    excluded: dict[str, int]  # points outside an assumption or a family domain, by its name
    undefined: int  # points where the bound is not a real number (NaN, complex, division by zero)
    capped: int  # points whose truth hit its deadline or memory cap
    failed: int  # points whose truth or binding failed otherwise
    seconds: float
    budget_hit: bool
    counterexample: Counterexample | None = None
    first_failure: str = ""
    uncertified: int = 0  # points the float filter calls violated whose rigorous re-check did not prove it
    undecided: int = 0  # points whose truth interval (a confidence interval, a bracket) overlaps the bound
    failure_reasons: Mapping[str, int] = field(default_factory=dict)  # why points failed or were capped, counted
    uncertified_reasons: Mapping[str, int] = field(default_factory=dict)  # why re-checks did not certify, counted
    region: tuple[str, ...] = ()  # the family's search region the points were drawn in (); () for the whole domain
    suspects: tuple[Suspect, ...] = ()  # every point counted in `uncertified`, in the order found
    raised: int = 0  # of the `failed` points, those where a user's family's code raised (PluginPointError)
    recheck_s: float = CERTIFY_DEADLINE_S  # the wall-clock cap of each point's rigorous re-check
    reading: Mapping[str, object] = field(default_factory=dict)  # LaTeX input: what the bound and --assume read as

    def __repr__(self) -> str:
        return outcome_line(self)

    def _repr_html_(self) -> str:
        return outcome_html(self)

    def to_dict(self) -> dict:
        return {"theorem": self.theorem, "family": self.family, "seed": self.seed, "tried": self.tried,
                "checked": self.checked, "excluded": dict(sorted(self.excluded.items())),
                "undefined": self.undefined, "capped": self.capped, "failed": self.failed,
                "uncertified": self.uncertified, "undecided": self.undecided,
                "failure_reasons": dict(self.failure_reasons), "uncertified_reasons": dict(self.uncertified_reasons),
                "seconds": self.seconds, "budget_hit": self.budget_hit, "first_failure": self.first_failure,
                "region": list(self.region), "raised": self.raised, "recheck_s": self.recheck_s,
                "uncertified_points": [p.to_dict() for p in self.suspects],
                "counterexample": self.counterexample.to_dict() if self.counterexample else None,
                **({"reading": dict(self.reading)} if self.reading else {})}

    @property
    def commonest_failure(self) -> tuple[str, int] | None:
        """The reason most points failed or were capped for, with its count (None if none did)."""
        return max(self.failure_reasons.items(), key=lambda item: item[1]) if self.failure_reasons else None

    def summary(self) -> str:
        """e.g. '137 points checked (of 200 tried: 50 outside the assumptions, 13 where the bound is undefined)'."""
        parts = []
        if self.excluded:
            parts.append(f"{sum(self.excluded.values())} outside the assumptions")
        raised = ("; restrict the search to where the family's code is defined (--assume / extra_assumptions, or the "
                  "family's search_region)") if self.raised else ""
        for count, what in ((self.undefined, "where the bound is undefined"), (self.capped, "over a time/memory cap"),
                            (self.failed, "where the truth failed" + (f" ({self.raised} where the family's code "
                                                                      f"raised, most often {self._commonest_raise})"
                                                                      if self.raised else "")),
                            (self.uncertified, "violated in floating point but not certified (the rigorous "
                                               "re-check could not decide)"),
                            (self.undecided, "undecided (the truth's interval overlaps the bound)")):
            if count:
                parts.append(f"{count} {what}")
        detail = f" (of {self.tried} tried: {', '.join(parts)})" if parts else f" (of {self.tried} tried)"
        budget = "; stopped by the time budget" if self.budget_hit else ""
        region = f"; drawn in the family's search region ({', '.join(self.region)})" if self.region else ""
        return f"{self.checked} points checked{detail}{budget}{region}{raised}"

    @property
    def _commonest_raise(self) -> str:
        raised = {r: n for r, n in self.failure_reasons.items() if r.startswith(_RAISED)}
        return max(raised, key=raised.__getitem__)[len(_RAISED):] if raised else "an exception"

    def suspects_text(self) -> str:
        """The uncertified points as lines (at most SUSPECTS_SHOWN; `to_dict` has every one), '' where none."""
        if not self.suspects:
            return ""
        lines = [f"{len(self.suspects)} points look violated in floating point, not certified (rigorous re-check "
                 f"capped at {self.recheck_s:g} s):"]
        lines += [f"  {p}" for p in self.suspects[:SUSPECTS_SHOWN]]
        if len(self.suspects) > SUSPECTS_SHOWN:
            lines.append(f"  ... and {len(self.suspects) - SUSPECTS_SHOWN} more (--json lists every one)")
        return "\n".join(lines)


_RAISED = "the family's code raised "  # how a point's PluginPointError is tallied among the failure reasons


@dataclass(frozen=True)
class Counterexample:
    """A point where the truth lies on the wrong side of the bound, confidently: the checker's result there,
    certified by rigorous enclosures, with what the search spent to find it."""

    result: PointResult
    examples: int  # points tried by the search
    seconds: float
    checked: int = 0  # points really checked by the search
    instead_of: dict[str, float] | None = None  # the point drawn whose re-check ran out, where `params` is simpler

    theorem = property(lambda self: self.result.theorem)
    family = property(lambda self: self.result.family)
    params = property(lambda self: self.result.params)
    bound = property(lambda self: self.result.bound)
    truth = property(lambda self: self.result.truth)
    ratio = property(lambda self: self.result.ratio)
    margin = property(lambda self: self.result.margin)

    def __repr__(self) -> str:
        return counterexample_line(self)

    def _repr_html_(self) -> str:
        return counterexample_html(self)

    def __str__(self) -> str:
        return (f"counterexample to {self.theorem} on {self.family}: {params_text(self.params)}\n"
                f"  bound = {self.bound:.10g}, truth = {self.truth.value:.10g} "
                f"[{self.truth.lower:.10g}, {self.truth.upper:.10g}] ({self.truth.method.value})"
                + (f", ratio bound/truth = {self.ratio:.4g}" if self.ratio is not None else "")
                + f"\n  found after {self.checked} points checked ({self.examples} tried)"
                + (f"\n  certified at this simpler point: the re-check at the point drawn, "
                   f"{params_text(self.instead_of)}, ran out" if self.instead_of is not None else ""))

    def to_dict(self) -> dict:
        return {**self.result.to_dict(), "examples": self.examples, "checked": self.checked, "seconds": self.seconds,
                "instead_of": self.instead_of}


def _validate(max_examples: int, budget_s: float, min_checked: int | None, recheck_s: float | None = None) -> int:
    if isinstance(max_examples, bool) or not isinstance(max_examples, int) or max_examples < 1:
        raise ParameterError(f"max_examples must be an integer >= 1, got {max_examples!r}")
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not (budget_s > 0):
        raise ParameterError(f"budget_s must be a number of seconds > 0, got {budget_s!r}")
    if recheck_s is not None and (isinstance(recheck_s, bool) or not isinstance(recheck_s, (int, float))
                                  or not 0 < recheck_s < float("inf")):
        raise ParameterError(f"recheck_s must be a finite number of seconds > 0, got {recheck_s!r}")
    if min_checked is None:
        return min(MIN_CHECKED, max_examples)
    if isinstance(min_checked, bool) or not isinstance(min_checked, int) or not 0 <= min_checked <= max_examples:
        raise ParameterError(f"min_checked must be an integer in [0, max_examples = {max_examples}], "
                             f"got {min_checked!r}")
    return min_checked


class _BudgetSpent(Exception):
    """Raised by the search's predicate once the wall-clock budget is spent: it ends hypothesis's search at once."""


REASONS_KEPT = 5  # distinct reasons stored per kind (failed, uncertified), each with its count


def _reason(err: BaseException | str) -> str:
    text = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _tally(reasons: dict[str, int], reason: str) -> None:
    if reason in reasons or len(reasons) < REASONS_KEPT:
        reasons[reason] = reasons.get(reason, 0) + 1
    else:
        reasons["(other reasons)"] = reasons.get("(other reasons)", 0) + 1


@session()
def search_outcome(theorem: Theorem, app: Application, *, max_examples: int = 2000, budget_s: float = 10.0,
                   seed: int = 0, companions: Sequence[Theorem] = (),
                   progress: Callable[[str, int, int], None] | None = None, shrink: bool = True,
                   region: bool = True, recheck_s: float | None = None) -> SearchOutcome:
    """Hypothesis search for a VIOLATED point of `theorem` on `app`, with the counts of what it did.

    `max_examples` bounds the points tried (reproducible for a seed); `budget_s` caps the whole search in wall-clock
    seconds, shrinking and the final rounding included (each point gets what is left as its deadline; once it is
    spent the search stops and reports the last certified counterexample, if any). The search's predicate is the
    float filter; a point it calls VIOLATED counts only once the rigorous re-check (pipeline.rigorous) proved it: a
    re-check that is undecided, capped or fails is an *uncertified* point, and the reasons are kept.
    `progress(label, tried, max_examples)` is called as each point is tried (verify.progress draws it). `shrink=False`
    keeps the first certified counterexample instead of shrinking it (hypothesis's shrinker re-draws points, costly
    ones included: the catalog run's searches skip it). `region`: draw inside the family's search region
    (`Family.search_region`: where its truths are computable within the caps), where the theorem leaves points
    there; `region=False` searches the whole domain. The outcome names the region's conditions it used.
    `recheck_s` caps each point's rigorous re-check (default: budget_s / RECHECK_SHARE, at most
    CERTIFY_DEADLINE_S = 20 s). A re-check that runs out, or cannot enclose, tries the cheap certified routes
    (verify.testing.routes: simpler points near it that still look violated, under as much time again) before the
    search moves on; one certified there is the counterexample, at that point (`Counterexample.instead_of` names the
    point drawn). Every point left uncertified is kept (`SearchOutcome.suspects`) with the reason. A user's family
    whose code raises at a point (PluginPointError) fails that point only: counted in `failed` and `raised`.
    """
    _validate(max_examples, budget_s, None, recheck_s)
    start = time.monotonic()
    end = start + float(budget_s)
    recheck = float(recheck_s) if recheck_s is not None else min(CERTIFY_DEADLINE_S, budget_s / RECHECK_SHARE)
    memo: dict[tuple, bool] = {}
    counts = {"tried": 0, "checked": 0, "undefined": 0, "capped": 0, "failed": 0, "uncertified": 0, "undecided": 0,
              "raised": 0}
    excluded: dict[str, int] = {}
    failures: dict[str, int] = {}
    uncertified: dict[str, int] = {}
    suspects: list[Suspect] = []
    state: dict = {"budget_hit": False, "first_failure": "", "best": None}
    drawn: list[dict[str, float]] = []

    def rigorous(point: dict[str, float], seconds: float, float_only: bool = False) -> PointResult:
        """`check_point` at `point`, its re-check capped at `seconds`, under the search's budget."""
        left = end - time.monotonic()
        with deadline(max(left, 1e-3), "the search's time budget"):
            return check_point(theorem, app, point, rigorous=not float_only, recheck_s=max(min(seconds, left), 1e-3))

    def certify(point: dict[str, float], looked: PointResult) -> tuple[dict[str, float], PointResult] | None:
        """The rigorous re-check of a float-VIOLATED point: the point and its result if proven VIOLATED there or at a
        simpler point near it (`unproven`), else None (counted)."""
        try:
            result = rigorous(point, recheck)
        except Exception as err:  # noqa: BLE001 - a certificate that could not be computed is no certificate
            return unproven(point, looked, _reason(err), True)
        if result.verdict is not Verdict.INCONCLUSIVE:  # proven, or the enclosures overturned the float filter
            counts["checked"] += 1
            return (point, result) if result.verdict is Verdict.VIOLATED else None
        return unproven(point, looked, *_why(result))

    def unproven(point: dict[str, float], looked: PointResult, why: str,
                 routes: bool) -> tuple[dict[str, float], PointResult] | None:
        """Count a point whose re-check did not prove it, keep it as a suspect, and try its cheap routes where
        simpler points may do better (`routes`: no enclosure was computed, for a deadline or a failure)."""
        counts["uncertified"] += 1
        _tally(uncertified, why)
        suspects.append(Suspect(dict(point), looked.bound, looked.truth.value, looked.ratio, why))
        return nearby(point) if routes and looked.truth.enclose is not None else None

    def nearby(point: dict[str, float]) -> tuple[dict[str, float], PointResult] | None:
        """A simpler point near `point` certified VIOLATED (`simpler_points`), within `recheck` seconds more."""
        until = min(end, time.monotonic() + recheck)

        def looks_violated(candidate: dict[str, float]) -> bool:
            if time.monotonic() >= until:
                return False
            try:
                return rigorous(candidate, until - time.monotonic(), float_only=True).verdict is Verdict.VIOLATED
            except Exception:  # noqa: BLE001 - a candidate that cannot be checked is not taken
                return False

        for candidate in simpler_points(get_family(app.family), point, looks_violated)[:ROUTE_TRIES]:
            if time.monotonic() >= until:
                break
            try:
                result = rigorous(candidate, min(until - time.monotonic(), recheck / 2))
            except Exception:  # noqa: BLE001 - a route that cannot be certified is not taken
                continue
            counts["checked"] += result.verdict is not Verdict.INCONCLUSIVE
            if result.verdict is Verdict.VIOLATED:
                return candidate, result
        return None

    def violated(point: dict[str, float]) -> bool:
        key = tuple(sorted(point.items()))
        if key in memo:  # hypothesis replays points: the same answer every time
            return memo[key]
        if state.get("stop") is not None:  # a plugin broke its contract: every later call stops the search the same
            raise state["stop"]  # way (a replay of the point whose truth failed once but not again was a FlakyFailure)
        if time.monotonic() >= end:
            state["budget_hit"] = True
            raise _BudgetSpent
        counts["tried"] += 1
        drawn.append(point)
        if progress is not None:
            progress("shrinking the counterexample" if state["best"] else f"{counts['checked']} checked",
                     counts["tried"], max_examples)
        with shared_truths():  # the point's truth once, for its certificate too (a run's memo where one is active)
            found = judged(point)
        memo[key] = found
        return found

    def judged(point: dict[str, float]) -> bool:
        """Check the point, count what happened, and say whether it is a certified counterexample."""
        found = False
        try:
            result = rigorous(point, recheck, float_only=True)
            verdict = result.verdict
        except AssumptionError as err:
            excluded[err.assumption] = excluded.get(err.assumption, 0) + 1
        except UndefinedBoundError:
            counts["undefined"] += 1
        except ResourceLimitError as err:
            if isinstance(err, DeadlineExceeded) and time.monotonic() >= end:  # the search's budget, not a cap of
                counts["tried"] -= 1  # the point's: it is not counted (never judged), and the next call stops the
                state["budget_hit"] = True  # search where every call past the budget does (hypothesis replays a
                return False  # failing call and calls it flaky if the exception comes from elsewhere: exit 4)
            counts["capped"] += 1
            _tally(failures, _reason(err))
        except PluginPointError as err:  # a user's family's code raised here: this point's error, the search goes on
            counts["failed"] += 1
            counts["raised"] += 1
            _tally(failures, _reason(_RAISED + err.raised))
            state["first_failure"] = state["first_failure"] or _reason(err)
        except PluginError as err:  # a user's family that breaks its contract: bad input, the search stops (exit 2)
            state["stop"] = _BudgetSpent()
            raise state["stop"] from err
        except Exception as err:  # noqa: BLE001 - a truth or a bind that fails at a point is counted, not fatal
            counts["failed"] += 1
            _tally(failures, _reason(err))
            state["first_failure"] = state["first_failure"] or _reason(err)
        else:
            cert = result.certificate
            proven = None
            if (verdict is Verdict.INCONCLUSIVE and cert is not None and cert.reason  # floats under/overflowed,
                    and cert.filter_verdict is Verdict.VIOLATED):  # looked violated, and no enclosure could decide
                proven = unproven(point, result, *_why(result))
            elif verdict is Verdict.INCONCLUSIVE:  # an estimate's interval, or a bracket, overlapping the bound
                counts["undecided"] += 1
            elif verdict is Verdict.VIOLATED:  # the float filter is not enough: certify before it counts
                proven = certify(point, result)
            else:
                counts["checked"] += 1
            if proven is not None:  # at this point, or at a simpler one near it (returned True: hypothesis shrinks)
                found = True
                state["best"] = (*proven, None if proven[0] is point else dict(point))
        return found

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    config = settings(max_examples=max_examples, deadline=None, database=None, phases=phases,
                      suppress_health_check=list(HealthCheck))
    used: tuple[str, ...] = ()
    try:  # the strategy's analysis of the assumptions (which can be heavy) is part of the search: under its budget
        with deadline(max(end - time.monotonic(), 1e-3), "the search's time budget"):
            ps, used = search_plans(theorem, app, region)
            strategy = strategy_of(ps)
    except DeadlineExceeded:
        strategy, state["budget_hit"] = None, True
    key = (_faithful(ps), seed, max_examples, shrink) if strategy is not None else None
    try:  # hypothesis's own machinery is never interrupted: the predicate stops it once the budget is spent
        if strategy is not None and not _replayed(_DRAWS.get(key, ()), violated):
            with no_local_constants():
                find(strategy, violated, settings=config, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):  # hypothesis tried every point it would: none is a counterexample
        _keep(key, drawn)
    except _BudgetSpent:
        pass
    if state.get("stop") is not None:
        raise state["stop"].__cause__  # the plugin's PluginError
    found: Counterexample | None = None
    if state["best"] is not None:  # the simplest certified point hypothesis reached (the last one it accepted)
        point, result, instead_of = state["best"]
        point, result = _round(theorem, app, point, result, end, recheck)
        if companions and time.monotonic() < end:
            try:
                with deadline(end - time.monotonic(), "the search's time budget"):
                    result = with_companions(result, companions)  # the certified point is not checked again
            except Exception:  # noqa: BLE001 - companions are decoration: the certified result stands without them
                pass
        found = Counterexample(result, counts["tried"], time.monotonic() - start, counts["checked"], instead_of)
    return SearchOutcome(theorem.id, app.family, seed, counts["tried"], counts["checked"], excluded,
                         counts["undefined"], counts["capped"], counts["failed"], time.monotonic() - start,
                         state["budget_hit"], found, state["first_failure"], counts["uncertified"],
                         counts["undecided"], failures, uncertified, used, tuple(suspects), counts["raised"], recheck)


def _why(result: PointResult) -> tuple[str, bool]:
    """Why a re-check left `result` undecided, and whether a simpler point may do better: not where the enclosures
    were computed and overlap (a tie, or too wide), nor where no enclosure exists."""
    cert = result.certificate
    if cert is None or not cert.reason:
        return "the enclosures overlap", False
    return _reason(cert.reason), cert.truth_lower is None and "no rigorous enclosure exists" not in cert.reason


def _replayed(points: Sequence[dict[str, float]], violated: Callable[[dict[str, float]], bool]) -> bool:
    """Try the points a search with the same plans, seed and settings drew (`_DRAWS`) in their order; True if that was
    the whole search (none is a counterexample), False if there are none or one is (hypothesis goes on from there)."""
    if not points:
        return False
    return not any(violated(dict(point)) for point in points)


def _faithful(value: object) -> object:
    """A key for the plans that tells apart what draws differently: their repr, but every SymPy part as srepr (str
    prints a Float to its 15 digits: eta*lam < 0.3 and eta*lam < 0.1 + 0.2 printed alike, drawing 1 ulp apart)."""
    if isinstance(value, sp.Basic):
        return sp.srepr(value)
    if is_dataclass(value):
        return (type(value).__name__, *(_faithful(getattr(value, f.name)) for f in fields(value)))
    if isinstance(value, Mapping):  # in order: the order draws follow
        return tuple((k, _faithful(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_faithful(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(map(repr, value)))
    return repr(value)  # a float's repr round-trips (and tells -0.0 from 0.0)


def _keep(key: tuple | None, drawn: list[dict[str, float]]) -> None:
    """Keep the points of a search that tried all it would and found nothing (see `_DRAWS`)."""
    if key is None:
        return
    with _DRAWS_LOCK:  # searches may run in threads (a Dask worker with several)
        if key in _DRAWS:
            return
        _DRAWS[key] = tuple(dict(point) for point in drawn)
        while sum(len(points) for points in _DRAWS.values()) > _DRAWS_KEPT:
            del _DRAWS[next(iter(_DRAWS))]


def search(theorem: Theorem, app: Application, *, max_examples: int = 2000, budget_s: float = 10.0,
           seed: int = 0, companions: Sequence[Theorem] = ()) -> Counterexample | None:
    """The counterexample of `search_outcome`, or None."""
    return search_outcome(theorem, app, max_examples=max_examples, budget_s=budget_s, seed=seed,
                          companions=companions).counterexample


def _round(theorem: Theorem, app: Application, point: dict[str, float], result: PointResult,
           end: float, recheck_s: float | None = None) -> tuple[dict[str, float], PointResult]:
    """Round each value to the fewest significant digits (1..6) that keep the point certifiably violated, while the
    budget (monotonic time `end`) lasts; returns the point and its certified result."""
    point = dict(point)
    for name in sorted(point):
        value = point[name]
        if float(value).is_integer():
            continue
        for digits in range(1, 7):
            if time.monotonic() >= end:
                return point, result
            candidate = {**point, name: float(f"{value:.{digits}g}")}
            if candidate == point:
                break
            try:
                with deadline(end - time.monotonic(), "the search's time budget"):
                    rounded = check_point(theorem, app, candidate, recheck_s=recheck_s)
            except Exception:  # noqa: BLE001 - a candidate that cannot be checked is not taken
                continue
            if rounded.verdict is Verdict.VIOLATED:
                point, result = candidate, rounded
                break
    return point, result


def _declared(declarations: Sequence[str], known: Mapping[str, sp.Symbol]) -> dict[str, sp.Symbol]:
    """The new symbols that `--symbol` declarations introduce ("eps0 > 0", "0 < t", or a bare name): each names at
    least one symbol that is neither a family parameter nor a function or constant of the bound language."""
    out: dict[str, sp.Symbol] = {}
    for text in declarations:
        try:
            tree = ast.parse(str(text).strip(), mode="eval")
        except SyntaxError:
            raise ParameterError(f"--symbol '{text}': not a name or a condition such as 'eps0 > 0'") from None
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called
                 and n.id not in ALLOWED_CONSTANTS]
        new = [x for x in dict.fromkeys(names) if x not in known and x not in out]
        if not new:
            raise ParameterError(f"--symbol '{text}' declares no new symbol (its names are all parameters of the "
                                 "family or already declared); restrict known symbols with --assume")
        for x in new:
            if not x.isidentifier() or x in ALLOWED_FUNCTIONS or x.startswith("_"):
                raise ParameterError(f"--symbol '{text}': '{x}' cannot name a symbol")
            out[x] = sp.Symbol(x, real=True)
    return out


def _is_condition(text: str) -> bool:
    """A declaration with a comparison ("eps0 > 0", "(0 < t) & (t < 1)") rather than a bare name."""
    tree = ast.parse(str(text).strip(), mode="eval")
    return any(isinstance(n, (ast.Compare, ast.BoolOp))
               or isinstance(n, ast.BinOp) and isinstance(n.op, (ast.BitAnd, ast.BitOr)) for n in ast.walk(tree))


def user_theorem(bound: sp.Expr | str, family: str, side: str = "upper", *, quantity: Quantity | str | None = None,
                 extra_assumptions: Sequence[sp.Basic | str] = (), bind: Mapping[str, sp.Expr | str] | None = None,
                 defaults: Mapping[str, sp.Expr | str] | None = None, name: str = "user.bound",
                 conventions: Sequence[str] = (), symbols: Sequence[str] = (),
                 integers: Sequence[str] = (), latex: bool = False) -> Theorem:
    """Wrap a user's bound as a catalog-like Theorem on `family` (strings are parsed safely); `conventions` name
    verify.conventions entries that define symbols of the bound (e.g. L = S/2 under replace-one). `symbols` declare
    the bound's own variables with their domains ("eps0 > 0": a statement "for every eps0 > 0"), drawn by the
    falsifier like parameters; a `bind` value such as "renyi(alpha=a)" is the family's quantity at other arguments
    (enclosed in Arb like every truth). `integers` name parameters or declared symbols that take integer values only
    (an integer Rényi order): the falsifier draws them as integers instead of rejecting the other draws. `latex`
    reads the bound and `extra_assumptions` given as text as LaTeX (verify.latex_input); the rest stays SymPy text."""
    if not isinstance(side, str) or side not in SIDES:
        raise ParameterError(f"side must be one of {', '.join(SIDES)}, got '{side}'")
    fam = get_family(family)
    if quantity is None:
        quantity = Quantity.RENYI if Quantity.RENYI in fam.truths else next(iter(fam.truths))
    try:
        quantity = Quantity(quantity)
    except ValueError:
        raise ParameterError(f"unknown quantity '{quantity}'; family {family} has "
                             f"{', '.join(q.value for q in fam.truths)}") from None
    named = convention_binds(conventions, family, [p.name for p in fam.parameters])
    both = sorted(set(named) & set(bind or {}))
    if both:
        raise ParameterError(f"{', '.join(both)} is defined by a convention and by --bind; keep one")
    bind = {**named, **(bind or {})}
    clash = sorted(set(bind or {}) & {p.name for p in fam.parameters})
    if clash:
        raise ParameterError(f"--bind defines {', '.join(clash)}, which family {family} already has as a parameter; "
                             "bind only symbols of your bound that the family does not provide")
    if quantity not in fam.truths:
        raise ParameterError(f"family {family} has no truth for '{quantity.value}'; it has "
                             f"{', '.join(q.value for q in fam.truths)}")
    table = {p.name: p.symbol for p in fam.parameters}
    extra = {**(bind or {}), **(defaults or {})}
    table |= {k: sp.Symbol(k, real=True) for k in extra if k not in table}
    symbols_text = list(symbols)
    own = _declared(symbols_text, table)
    table |= own
    symbols = table

    def parse(x, condition=False, text_parser=parse_expression):
        return text_parser(x, symbols, condition=condition, what=str(x)) if isinstance(x, str) else sp.sympify(x)

    stated = parse_latex_expression if latex else parse_expression  # the bound and its extra assumptions
    expr = parse(bound, text_parser=stated)
    if isinstance(expr, sp.Expr) and expr.has(sp.zoo, sp.nan):
        raise ParameterError(f"the bound {sp.sstr(expr)} is undefined everywhere (a division by zero)")
    bind = {k: (quantity_bind(v, fam, parse) or v) if isinstance(v, str) else v for k, v in bind.items()}
    allowed = set(fam.parameter_names(quantity)) | set(extra) | set(own)
    unknown = sorted({s.name for s in expr.free_symbols} - allowed)
    if unknown:
        raise ParameterError(f"bound uses {', '.join(unknown)}, which family {family} does not provide for "
                             f"'{quantity.value}'; its parameters are {', '.join(fam.parameter_names(quantity))}")
    _check_pinned(fam, {k: parse(v) for k, v in (defaults or {}).items()})
    for k, v in {**(bind or {}), **(defaults or {})}.items():
        if isinstance(v, FromFamily):
            continue
        e = parse(v)
        if isinstance(e, sp.Expr) and e.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise ParameterError(f"{k} = {sp.sstr(e)} is not a finite number anywhere (e.g. a log of 0)")
        if k in {s.name for s in e.free_symbols}:
            raise ParameterError(f"{k} = {sp.sstr(e)} defines {k} by itself")
    declared = [c for c in symbols_text if _is_condition(c)]
    assumptions = tuple(Assumption(f"extra_{k}", parse(c, condition=True, text_parser=stated), str(c))
                        for k, c in enumerate(extra_assumptions))
    assumptions += tuple(Assumption(f"symbol_{k}", parse(c, condition=True), f"declared: {c}")
                         for k, c in enumerate(declared))
    for name_ in integers:
        if name_ not in symbols or name_ in (bind or {}) and name_ not in own:
            raise ParameterError(f"--integer {name_}: not a parameter of family {family} or a declared symbol")
        pinned = parse((defaults or {})[name_]) if name_ in (defaults or {}) else None
        if pinned is not None and pinned.is_number and not float(pinned).is_integer():
            raise ParameterError(f"--integer {name_} with --fix {name_}={defaults[name_]}: not an integer")
        x = symbols[name_]
        assumptions += (Assumption(f"integer_{name_}", sp.Eq(x, sp.floor(x)), f"{name_} is an integer"),)
    app = Application(family, Verdict.HOLDS, {}, {k: parse(v) for k, v in (defaults or {}).items()},
                      {k: parse(v) if not isinstance(v, FromFamily) else v for k, v in (bind or {}).items()})
    return Theorem(name, f"user bound ({side})", Source("-", "user", "-"), Variant.DERIVED, SIDES[side],
                   quantity, expr, assumptions, frozenset(), (app,))


def _check_pinned(fam, pinned: Mapping[str, sp.Basic]) -> None:
    """A family parameter pinned at a number (`--fix`) must lie in the family's domain: else no point could be
    checked, and the search would only say so after trying."""
    for p in fam.parameters:
        value = pinned.get(p.name)
        if value is None or not value.is_number:
            continue
        x = float(value)
        check_declared_domain(f"--fix {p.name}", p.symbol, x)
        if p.domain.subs(p.symbol, value) is sp.false:
            raise ParameterError(f"--fix {p.name}={x:g} is outside family {fam.name}'s domain {sp.sstr(p.domain)} "
                                 f"({p.description})")


def falsify_outcome(bound: sp.Expr | str, family: str, side: str = "upper",
                    extra_assumptions: Sequence[sp.Basic | str] = (), budget_s: float = 10.0, seed: int = 0, *,
                    quantity: Quantity | str | None = None, bind: Mapping[str, sp.Expr | str] | None = None,
                    defaults: Mapping[str, sp.Expr | str] | None = None, max_examples: int = 2000,
                    conventions: Sequence[str] = (), symbols: Sequence[str] = (),
                    integers: Sequence[str] = (),
                    progress: Callable[[str, int, int], None] | None = None, region: bool = True,
                    recheck_s: float | None = None, latex: bool = False) -> SearchOutcome:
    """Search `family`'s parameter space for a point where `bound` is on the wrong side of the truth; the full
    record of the search (points tried, checked, excluded and why, the uncertified points, the counterexample if
    any). `region` and `recheck_s` as in `search_outcome`; `latex` as in `user_theorem` (the outcome's `reading`
    then says what the bound and the extra assumptions were read as)."""
    _validate(max_examples, budget_s, None, recheck_s)
    theorem = user_theorem(bound, family, side, quantity=quantity, extra_assumptions=extra_assumptions, bind=bind,
                           defaults=defaults, conventions=conventions, symbols=symbols, integers=integers,
                           latex=latex)
    outcome = search_outcome(theorem, theorem.applications[0], max_examples=max_examples, budget_s=budget_s,
                             seed=seed, progress=progress, region=region, recheck_s=recheck_s)
    if not latex:
        return outcome
    extra = [a.condition for a in theorem.assumptions if a.name.startswith("extra_")]
    return replace(outcome, reading={"bound": reading(theorem.bound).to_dict(),
                                     "assume": [reading(c).to_dict() for c in extra]})


def falsify(bound: sp.Expr | str, family: str, side: str = "upper", extra_assumptions: Sequence[sp.Basic | str] = (),
            budget_s: float = 10.0, seed: int = 0, *, quantity: Quantity | str | None = None,
            bind: Mapping[str, sp.Expr | str] | None = None, defaults: Mapping[str, sp.Expr | str] | None = None,
            max_examples: int = 2000, min_checked: int | None = None,
            conventions: Sequence[str] = (), symbols: Sequence[str] = (),
            integers: Sequence[str] = (), region: bool = True, recheck_s: float | None = None,
            latex: bool = False) -> Counterexample | None:
    """Search `family`'s parameter space for a point where `bound` is on the wrong side of the truth.

    Returns the shrunk, certified counterexample, or None when none was found among the points checked; raises
    NothingChecked (CLI exit 3) when fewer than `min_checked` points (default min(10, max_examples)) could be
    checked: contradictory assumptions, a bound undefined everywhere, a budget too small; and when points look
    violated but none could be certified (its `outcome` lists them). `extra_assumptions` restrict the search (SymPy
    conditions or strings); `symbols` declare the bound's own variables ("eps0 > 0"); `region=False` searches beyond
    the family's search region; `recheck_s` caps each point's rigorous re-check (see `search_outcome`); `latex`
    reads the bound and the extra assumptions as LaTeX pasted from a paper (verify.latex_input).
    """
    needed = _validate(max_examples, budget_s, min_checked, recheck_s)
    outcome = falsify_outcome(bound, family, side, extra_assumptions, budget_s, seed, quantity=quantity, bind=bind,
                              defaults=defaults, max_examples=max_examples, conventions=conventions,
                              symbols=symbols, integers=integers, region=region, recheck_s=recheck_s, latex=latex)
    require_checked(outcome, needed)
    return outcome.counterexample


def require_checked(outcome: SearchOutcome, needed: int) -> None:
    """Raise NothingChecked unless the search found a counterexample or checked at least `needed` points; also when
    points look violated in floating point but could not be certified: that is undecided, never a pass. The error
    carries the outcome (`err.outcome`, whose `suspects` are the uncertified points)."""
    if outcome.counterexample is None and outcome.uncertified:
        reasons = "; ".join(f"{r} (x{n})" for r, n in outcome.uncertified_reasons.items())
        why = list(outcome.uncertified_reasons)
        if why and all(any(w in r for w in ("DeadlineExceeded", "MemoryLimitExceeded", "deadline", "memory cap"))
                       for r in why):
            hint = ("the re-check ran out of time or memory (a larger --recheck / recheck_s or --budget, or "
                    "VERIFY_MEMORY_CAP)")
        elif any("no rigorous enclosure exists" in r for r in why):
            hint = "a truth needs a rigorous `enclose`, e.g. from verify.families.closed_form"
        else:
            hint = "the enclosures could not decide at the precisions tried"
        shown = f"; the first: {outcome.suspects[0]}" if outcome.suspects else ""
        _raise(NothingChecked(f"{outcome.theorem} on {outcome.family}: {outcome.summary()}: the bound looks violated "
                              f"in floating point at {outcome.uncertified} points but no certificate could be computed "
                              f"({hint}): undecided" + (f"; why: {reasons}" if reasons else "") + shown), outcome)
    if outcome.counterexample is None and outcome.checked < needed:
        why = f"; first failure: {outcome.first_failure}" if outcome.first_failure else ""
        if outcome.commonest_failure and not outcome.first_failure:  # capped points only: the commonest cap
            why += "; most often: {} (x{})".format(*outcome.commonest_failure)
        if outcome.tried == 0 and not outcome.budget_hit:
            why += "; the search could draw no point that satisfies the assumptions and declared domains together"
        if outcome.region:
            why += "; --whole-domain (region=False) searches beyond the family's search region"
        _raise(NothingChecked(f"{outcome.theorem} on {outcome.family}: only {outcome.summary()}, fewer than the "
                              f"{needed} required: no evidence either way{why}"), outcome)


def _raise(err: NothingChecked, outcome: SearchOutcome) -> None:
    err.outcome = outcome
    raise err


def parameters_of(theorem: Theorem) -> list[str]:
    """The names a falsifier point assigns for `theorem` (its first application)."""
    return list(free_parameters(theorem, theorem.applications[0]))
