"""A certified DP-SGD accountant: a proven bracket lower <= tight value <= upper on eps(delta) or delta(eps) of a
schedule of Poisson-subsampled Gaussian phases (q_i, sigma_i, T_i), sensitivity 1.

The bracket is the privacy-loss-distribution bracket of verify.truth.pld (pessimistic and optimistic PLDs: Meiser &
Mohammadi 2018; Koskela et al. 2020; Doroshenko et al. 2022, with every floating-point error accounted for), composed
over the phases on one loss grid. Its width in eps is about the grid width times sqrt(T log(1/delta)); the grid is
refined until the bracket is as narrow as asked. Identical phases (same q and sigma) are composed as one (composition
commutes). A schedule of full-batch phases only (q = 1) composes to one Gaussian mechanism, mu^2 = sum T_i / sigma_i^2
(Dong, Roth & Su 2022), and is answered by its closed form in Arb balls (verify.truth.gaussian), no grid.

The default (`tol=None`) asks for the default accuracy: a width at most the wider of 1e-3 relative and a tenth of
dp_accounting's own optimistic-to-pessimistic gap at its defaults (5e-6 T in eps for T steps in all; for delta(eps)
the change of delta across that eps shift, upwards: at most delta itself). It never refuses for width: where the time
budget or a resource cap stops the refinement first, the answer is the tightest certified bracket reached, its width
and what stopped it stated. An explicit `tol` that is not met raises AccountantRefusal (a ResourceLimitError)
carrying that tightest bracket.

Neighbouring relations: "add_remove" (the default: the larger of the add and remove orders, as DP-SGD accountants
report), "add" (P_D' || P_D with D' = D + x) and "remove" alone. Replace-one is not supported for Poisson sampling.
"""

from __future__ import annotations

import dataclasses
import fractions
import html
import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verify.errors import ParameterError, ResourceLimitError
from verify.truth.gaussian import composed_gaussian_bracket
from verify.truth.pld import schedule_delta, schedule_epsilon, schedule_orders

NEIGHBOURING = {"add_remove": ("add", "remove"), "add": ("add",), "remove": ("remove",),
                "replace_one": ("add", "remove")}  # replace-one: events that support it (verify.accountant_events)
DEFAULT_TOL = 1e-3  # relative part of the default accuracy (and the relative width callers used to get by default)
DEFAULT_STEP_WIDTH = 5e-6  # eps width per step of the default accuracy: a tenth of dp_accounting's own gap (T x 5e-5)
DEFAULT_TIME_BUDGET = 10.0  # seconds a query at the default accuracy may refine for
MAX_STEPS = 10**7
_START_WIDTH = 0.1  # eps width of the first, coarse bracket (it sets the scale of a relative tolerance)
_COARSE = 4.0  # the default query's first grid: this many times the width it aims for (an estimate, and the orders)
_ROUNDS = 6  # refinements at most
_COARSE_GOAL = 1e-9  # floating-point budget (delta) of the default delta(eps)'s coarse first grid: an estimate only
_ARB_BITS = 128  # Arb precision of the Gaussian closed form (q = 1)


def _num(x: float) -> str:
    """`x` in 6 significant digits where that is `x` itself, else in full (delta = 0.999999999 is not shown as 1)"""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


@dataclass(frozen=True)
class Phase:
    """`steps` steps of the Poisson-subsampled Gaussian mechanism: sampling rate q, noise multiplier sigma."""

    q: float
    sigma: float
    steps: int

    def __post_init__(self) -> None:
        q, sigma = _real(self.q), _real(self.sigma)
        if q is None or not 0 < q <= 1:
            raise ParameterError(f"sampling rate q must lie in (0, 1], got {self.q!r}")
        if sigma is None or not (math.isfinite(sigma) and sigma > 0):
            raise ParameterError(f"noise multiplier sigma must be a finite number > 0, got {self.sigma!r}")
        steps = _real(self.steps)
        if steps is None or not steps.is_integer() or not 1 <= steps <= MAX_STEPS:
            raise ParameterError(f"steps must be an integer in 1..{MAX_STEPS:.0e}, got {self.steps!r}")
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "steps", int(steps))

    def __str__(self) -> str:
        return f"{self.steps} steps of q={_num(self.q)}, sigma={_num(self.sigma)}"

    @classmethod
    def from_epochs(cls, epochs: float, batch_size: int, dataset_size: int, sigma: float) -> Phase:
        """`epochs` passes over a dataset of `dataset_size` records in Poisson batches of expected size
        `batch_size`: q = B / N and T = ceil(E N / B) steps (computed exactly, not in floating point)."""
        b, n, e = _integer(batch_size, "batch size"), _integer(dataset_size, "dataset size"), _real(epochs)
        if b > n:
            raise ParameterError(f"the batch size ({b}) exceeds the dataset size ({n})")
        if e is None or not (math.isfinite(e) and e > 0):
            raise ParameterError(f"epochs must be a finite number > 0, got {epochs!r}")
        return cls(b / n, sigma, math.ceil(fractions.Fraction(repr(e)) * n / b))


@dataclass(frozen=True)
class AccountantResult:
    """lower <= tight value <= upper, proven, for `quantity` ("epsilon" at the given delta, or "delta" at the given
    epsilon); `estimate` is the bracket's midpoint. `grid_width` is the loss grid's width (0: none was needed),
    `tolerance` the width asked for (`relative` to the estimate or absolute; None: the default accuracy), `target`
    the absolute width that was aimed for, and `limit` what stopped the refinement short of it ("": nothing, the
    target is met; else e.g. "the time budget"). `method` is "pld" or "gaussian" (the closed form at q = 1)."""

    quantity: str
    lower: float
    estimate: float
    upper: float
    given: float
    phases: tuple[Phase, ...]
    neighbouring: str
    tolerance: float | None
    relative: bool
    grid_width: float
    seconds: float
    target: float = math.nan
    limit: str = ""
    method: str = "pld"

    @property
    def given_name(self) -> str:
        return "delta" if self.quantity == "epsilon" else "epsilon"

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def schedule(self) -> str:
        return _shown(self.phases)

    def width_text(self) -> str:
        """'width W' and, where the refinement stopped short of its target, what stopped it"""
        where = "at" if "floor" in self.limit else "within"
        return f"width {self.width:.3g}" + (f", the tightest {where} {self.limit}" if self.limit else "")

    def __str__(self) -> str:
        name = "eps" if self.quantity == "epsilon" else "delta"
        at = "delta" if self.quantity == "epsilon" else "eps"
        return (f"{name}({at}={_num(self.given)}) in [{self.lower:.6g}, {self.upper:.6g}] "
                f"(estimate {self.estimate:.6g}, certified; {self.width_text()}) for {self.schedule()} "
                f"({_relation(self.neighbouring)})")

    def __repr__(self) -> str:
        return f"<AccountantResult {self}>"

    def _repr_html_(self) -> str:
        name = "&epsilon;" if self.quantity == "epsilon" else "&delta;"
        at = "&delta;" if self.quantity == "epsilon" else "&epsilon;"
        how = (f"loss grid {self.grid_width:.3g}" if self.grid_width else "Gaussian closed form (Arb)"
               if self.method == "gaussian" else "no grid: total variation below delta")
        return (f"<div><b>{name}</b>({at} = {_num(self.given)}) &isin; [{self.lower:.6g}, {self.upper:.6g}] "
                f"(estimate {self.estimate:.6g}, certified; {html.escape(self.width_text())})<br><small>"
                f"{html.escape(self.schedule())}; {html.escape(_relation(self.neighbouring))} neighbours; "
                f"{how}</small></div>")


class AccountantRefusal(ResourceLimitError):
    """The width asked for explicitly was not reached (a resource cap, the time budget or the floating-point floor
    stopped it): `best` is the tightest certified bracket reached (None where none was)."""

    def __init__(self, message: str, best: AccountantResult | None = None) -> None:
        super().__init__(message)
        self.best = best


def _real(value: object) -> float | None:
    """`value` as a float if it is a real number (Python or NumPy; not a bool, a string or NaN), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        out = float(value)
    except OverflowError:  # an integer beyond the float range (10**400)
        return math.inf if value > 0 else -math.inf
    return None if math.isnan(out) else out


def _relation(neighbouring: str) -> str:
    """a neighbouring relation as shown: add/remove, add, remove, replace-one"""
    return {"add_remove": "add/remove", "replace_one": "replace-one"}.get(neighbouring, neighbouring)
def _integer(value: object, name: str) -> int:
    """`value` as an int >= 1 (an integral float too), else one ParameterError line"""
    real = _real(value)
    if real is None or not (math.isfinite(real) and real.is_integer() and real >= 1):
        raise ParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def schedule(phases: Sequence[Phase | tuple] | Phase) -> tuple[Phase, ...]:
    """the schedule as phases: `Phase`s, tuples (q, sigma, steps) and other phase types (verify.accountant_events:
    any object with `engine(neighbouring)`)"""
    if isinstance(phases, Phase) or hasattr(phases, "engine") or (
            isinstance(phases, (tuple, list)) and len(phases) == 3 and all(_real(v) is not None for v in phases)):
        phases = [phases]  # one phase, given bare
    try:
        out = tuple(p if isinstance(p, Phase) or hasattr(p, "engine") else Phase(*p) for p in phases)
    except TypeError:
        raise ParameterError(f"a schedule is a sequence of phases (q, sigma, steps), got {phases!r}") from None
    if not out:
        raise ParameterError("a schedule needs at least one phase (q, sigma, steps)")
    if sum(p.steps for p in out) > MAX_STEPS:
        raise ParameterError(f"the schedule has {sum(p.steps for p in out)} steps in all, more than {MAX_STEPS:.0e}")
    return out


def _tolerance(tol: float) -> float:
    value = _real(tol)
    if value is None or not (math.isfinite(value) and value > 0):
        raise ParameterError(f"tolerance must be a finite number > 0, got {tol!r}")
    return value


def _orders(neighbouring: str) -> tuple[str, ...]:
    if not isinstance(neighbouring, str) or neighbouring not in NEIGHBOURING:
        raise ParameterError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}, got {neighbouring!r}")
    return NEIGHBOURING[neighbouring]


def _shown(phases: tuple[Phase, ...]) -> str:
    return " + ".join(str(p) for p in phases)


def _engine_phases(phases: tuple[Phase, ...], neighbouring: str) -> tuple:
    """each phase as the engine takes it (verify.truth.pld.schedule_orders): (q, sigma, steps) or an object with
    `step_pmf`; a phase type refuses a neighbouring relation it does not support (ParameterError)"""
    if neighbouring == "replace_one" and any(isinstance(p, Phase) for p in phases):
        raise ParameterError("Poisson-subsampled Gaussian phases (q, sigma, steps) support add_remove, add and "
                             "remove, not replace_one")
    return tuple(p.engine(neighbouring) if hasattr(p, "engine") else (p.q, p.sigma, p.steps) for p in phases)


class _Short(ResourceLimitError):
    """`_refined` stopped short of the width allowed: `bracket` the tightest certified one reached (None: none),
    `reason` what stopped it (for the answer's text)."""

    def __init__(self, message: str, bracket=None, reason: str = "a resource cap", target: float = math.nan) -> None:
        super().__init__(message)
        self.bracket = bracket
        self.reason = reason
        self.target = target


def _refined(solve, target_of, phases: tuple[Phase, ...], orders: tuple[str, ...], solve_delta: bool = False,
             start: float = _START_WIDTH, budget_goal: Callable | float = 0.0, deadline: float = math.inf,
             progress: Callable[[float, float], None] | None = None, aim: float | None = None,
             raw: tuple | None = None):
    """Brackets from successively finer grids, the first of eps width `start`, until `target_of(bracket)` (the width
    allowed) is met: (that bracket, the width allowed); `budget_goal` as for verify.truth.pld.compose_schedule (or
    a function of the width last allowed, None before the first bracket). A grid whose predicted time would pass
    `deadline` (perf_counter) is not started. Stops short with `_Short`. `raw`: the engine's phases
    (`_engine_phases`; default: the Gaussian phases' tuples)."""
    raw = tuple((p.q, p.sigma, p.steps) for p in phases) if raw is None else raw
    # first widths to try: a grid too fine for a long schedule whose eps is large hits a size cap (then coarser, the
    # tolerance being relative); one too coarse for a tiny eps puts a cut where the CDF underflows (then finer)
    width = start
    coarser = [start * 8**k for k in range(1, 7)] if start <= 10 * _START_WIDTH else [_START_WIDTH]
    finer = [min(start, _START_WIDTH) / 8**k for k in range(1, 13)]
    last_error, stalled, best, fitted, capped, took = None, False, None, width, None, 0.0
    last_allowed = None
    refused: dict[bool, tuple[float, ResourceLimitError]] = {}  # too big or not -> the last such refusal's width
    for _ in range(_ROUNDS + len(coarser) + len(finer) + 1):
        left = deadline - time.perf_counter()
        if best is not None and took * fitted / width > left:  # a grid's time ~ its cells ~ 1 / width: the finest
            width = fitted * took / (0.8 * max(left, 0.0)) if left > 0 else math.inf  # grid the budget still fits
            if not width < fitted / 1.3:
                raise _Short(f"the bracket reached width {last_error:.3g}{_best(best)}; a finer grid would run past "
                             "the time budget", best, "the time budget", last_allowed)
        goal = budget_goal(last_allowed) if callable(budget_goal) else budget_goal
        began = time.perf_counter()
        try:
            comps = schedule_orders(raw, orders, width, goal)
            bracket = solve(comps)
        except ResourceLimitError as err:
            too_big = any(word in str(err) for word in ("cells", "memory"))
            refused[too_big] = (width, err)
            if last_error is None and (coarser if too_big else finer):
                width = (coarser if too_big else finer).pop(0)
                continue
            if last_error is None:
                raise _Short(f"the certified bracket cannot be computed for {_shown(phases)} at any grid it tried: "
                             f"{_refusals(refused)}") from None
            if too_big and width < fitted / 1.5:  # a long jump overshot the cap: the tightest grid that fits lies
                width, capped = math.sqrt(width * fitted), err  # between, so back off towards the last one that did
                continue
            raise _capped(last_error, best, err, last_allowed) from None
        if not math.isfinite(bracket.upper):  # the tight value is finite: only the bracket's floor makes it vacuous
            raise _Short(f"the bracket's upper end is vacuous (+inf) for {_shown(phases)}: its floating-point and "
                         f"truncation floor ({bracket.error_budget:.3g} in delta) is not below the delta asked for")
        took = time.perf_counter() - began
        allowed = last_allowed = target_of(bracket, comps)
        got = bracket.upper - bracket.lower
        if progress is not None:
            progress(got, allowed)
        if got <= allowed and (aim is None or width <= aim):  # (a coarse bracket may overstate the width allowed)
            return bracket, allowed
        if solve_delta and goal < bracket.error_budget and 2 * bracket.error_budget >= allowed:  # a finer grid
            # does not move this floor (a budget within its goal was spent in double: a smaller goal spends less)
            raise _Short(f"the width asked for ({allowed:.3g} in delta) is below the bracket's floating-point and "
                         f"truncation floor ({2 * bracket.error_budget:.3g}); ask for an absolute tolerance above it",
                         _tighter(best, bracket), "the floating-point floor", allowed)
        if capped is not None and got > 0.8 * last_error:  # a grid backed off below the cap narrows it less
            if got >= last_error:
                raise _capped(last_error, best, capped, last_allowed)
            last_error, best, fitted = got, bracket, width
            width /= math.sqrt(2)  # a little finer: the cap decides how far
            continue
        if last_error is not None and got > 0.8 * last_error:  # a finer grid did not narrow it: the width is not
            if stalled:  # monotone in the grid, so once more at half the width; twice, the floor binds
                raise _Short(f"the bracket stays about {got:.3g} wide on finer grids: its floating-point and "
                             f"truncation floor ({bracket.error_budget:.3g} in delta) binds at this delta; ask for a "
                             "larger tolerance", _tighter(best, bracket), "the floating-point floor", allowed)
            stalled = True
            width /= 2
            continue
        last_error, best, fitted = got, bracket, width
        if len(comps) > 1:  # the tight value is the larger order's: one whose upper end lies below the other's lower
            each = [solve([c]) for c in comps]  # end cannot be it, and only the other is refined
            top = max(b.lower for b in each)
            orders = tuple(o for o, b in zip(orders, each, strict=True) if b.upper >= top)
        # the width is about proportional to the grid's once the grid is fine (delta(eps): the part beyond the
        # floating-point budget, which the next goal cuts instead): a long jump
        ratio = allowed / (max(got - 2 * bracket.error_budget, 1e-300) if solve_delta else got)
        if solve_delta:  # delta's bracket is an eps bracket seen through delta(eps), about exponential: its log
            # ratio is what scales with the grid (measured: linear); without it (a lower end at 0) the linear model
            # overshoots by up to 10x, so such a jump is at most 8x (a grid 8x coarser costs about an eighth)
            ratio = _log_ratio(bracket, allowed) or max(ratio, 1 / 6)
        width *= max(1e-3, min(0.9, (0.75 if ratio < 0.2 else 0.9) * ratio))  # from a coarse one aims lower
        if aim is not None and fitted > aim:  # a coarse bracket misstates the width allowed: first the grid aimed at
            width = aim
    raise _Short(f"the bracket did not reach the tolerance in its refinements (width {last_error:.3g}{_best(best)})",
                 best, "its refinements", last_allowed)


def _log_ratio(bracket, allowed: float) -> float | None:
    """the grid-width ratio that takes a delta bracket [lower, upper] (less its floating-point floor, which a finer
    grid does not scale) to the width allowed, where log(upper / lower) is linear in the grid width; None where the
    model does not apply (a lower end at 0, or a width allowed beyond the bracket's midpoint)"""
    low, up = bracket.lower + bracket.error_budget, bracket.upper - bracket.error_budget
    mid = 0.5 * (bracket.lower + bracket.upper)
    if not (0 < bracket.lower and low < up and 0 < allowed < 2 * mid):
        return None
    return math.log((2 * mid + allowed) / (2 * mid - allowed)) / math.log(up / low)


def _tighter(best, bracket):
    """the narrower of two certified brackets (either may be None)"""
    if best is None or (bracket is not None and bracket.upper - bracket.lower < best.upper - best.lower):
        return bracket
    return best


def _refusals(refused: dict[bool, tuple[float, ResourceLimitError]]) -> str:
    """The last refusal of each kind (a grid too large for a cap; any other), for `_refined`'s message: a user who
    asked for a loose tolerance sees why coarse grids failed too, not only the finest grid's cell count."""
    return "; ".join(f"at eps width {width:g}, {err}" for _, (width, err) in sorted(refused.items(), reverse=True))


def _capped(width: float, best, err: Exception, target: float | None) -> _Short:
    cap = "the memory cap" if "memory" in str(err) else "a resource cap"
    return _Short(f"the bracket reached width {width:.3g}{_best(best)} but a tighter one would exceed a resource cap "
                  f"({err}); ask for a larger tolerance", best, cap,
                  math.nan if target is None else target)


def _best(bracket) -> str:
    """the tightest certified bracket had before a refusal, for the user to use knowingly (it misses the tolerance)"""
    return "" if bracket is None else f"; certified so far: [{bracket.lower:.6g}, {bracket.upper:.6g}]"


def epsilon(delta: float, phases: Sequence[Phase | tuple] | Phase, *, tol: float | None = None,
            relative: bool = True, neighbouring: str = "add_remove", time_budget: float | None = None,
            progress: Callable[[float, float], None] | None = None) -> AccountantResult:
    """The tight eps(delta) of the schedule, bracketed within `tol` (relative to the estimate, or absolute; None: the
    default accuracy, answered within `time_budget` seconds, default DEFAULT_TIME_BUDGET; an explicit tol has no
    time budget unless one is given). `progress(width, target)` is called after each grid."""
    if _real(delta) is None or not 0 < _real(delta) < 1:
        raise ParameterError(f"delta must lie in (0, 1), got {delta!r}")
    return _account("epsilon", float(delta), phases, tol, relative, neighbouring, time_budget, progress)


def delta(eps: float, phases: Sequence[Phase | tuple] | Phase, *, tol: float | None = None, relative: bool = True,
          neighbouring: str = "add_remove", time_budget: float | None = None,
          progress: Callable[[float, float], None] | None = None) -> AccountantResult:
    """The tight delta(eps) of the schedule, bracketed as `epsilon` brackets eps(delta)."""
    if _real(eps) is None or not math.isfinite(_real(eps)):
        raise ParameterError(f"eps must be a finite number, got {eps!r}")
    return _account("delta", float(eps), phases, tol, relative, neighbouring, time_budget, progress)


def merged(phases: tuple[Phase, ...]) -> tuple[Phase, ...]:
    """The schedule with identical phases (same q and sigma) as one, their steps added: composition commutes, so the
    composed PLD is the same; in the order of first appearance."""
    steps: dict[tuple[float, float], int] = {}
    for p in phases:
        steps[(p.q, p.sigma)] = steps.get((p.q, p.sigma), 0) + p.steps
    return tuple(Phase(q, s, t) for (q, s), t in steps.items())


def _merged_engine(raw: tuple) -> tuple:
    """`merged` for the engine's phases: tuples (q, sigma, steps) with the same q and sigma as one, and event phases
    equal but for their steps as one (dataclasses.replace with the steps added); in order of first appearance."""
    out: dict = {}
    for r in raw:
        key = (r[0], r[1]) if isinstance(r, tuple) else dataclasses.replace(r, steps=1)
        out[key] = out.get(key, 0) + (r[2] if isinstance(r, tuple) else r.steps)
    return tuple((*key, t) if isinstance(key, tuple) else dataclasses.replace(key, steps=t) for key, t in out.items())


def _budget(time_budget: float | None, tol: float | None) -> float:
    if time_budget is None:
        return DEFAULT_TIME_BUDGET if tol is None else math.inf
    value = _real(time_budget)
    if value is None or not value > 0:
        raise ParameterError(f"time budget must be a number of seconds > 0, got {time_budget!r}")
    return value


def _account(quantity: str, given: float, phases, tol, relative: bool, neighbouring: str,
             time_budget: float | None = None, progress=None) -> AccountantResult:
    """The bracket on `quantity` ("epsilon" at delta = given, or "delta" at eps = given), refined to the tolerance
    (None: the default accuracy, never refused for width)."""
    start = time.perf_counter()
    phases, orders = schedule(phases), _orders(neighbouring)
    tol = None if tol is None else _tolerance(tol)
    if isinstance(relative, str) or relative not in (True, False):
        raise ParameterError(f"relative must be True or False, got {relative!r}")
    deadline = start + _budget(time_budget, tol)
    solve_delta = quantity == "delta"
    floor = 1e-300 if solve_delta else 1e-12  # a relative width of a value near 0 is measured against this
    total = sum(p.steps for p in phases)
    shift = DEFAULT_STEP_WIDTH * total  # the default accuracy's eps width

    def result(b, target: float = math.nan, limit: str = "", method: str = "pld", grid: float | None = None):
        return AccountantResult(quantity, b.lower, 0.5 * (b.lower + b.upper), b.upper, given, phases, neighbouring,
                                tol, relative, b.grid_width if grid is None else grid, time.perf_counter() - start,
                                target, limit, method)

    raw = _merged_engine(_engine_phases(phases, neighbouring))
    if not solve_delta and math.fsum(p.steps * getattr(p, "total_variation", getattr(p, "q", 1.0))
                                     for p in phases) * (1 + 1e-9) <= given:
        # eps = 0 exactly: delta(0) is the total variation, subadditive over the steps, and one step's is
        # q TV(N(1, s^2), N(0, s^2)) <= q (either order); so no grid is needed (q = 1e-300 underflows one)
        return AccountantResult(quantity, 0.0, 0.0, 0.0, given, phases, neighbouring, tol, relative, 0.0,
                                time.perf_counter() - start, 0.0)
    if all(isinstance(r, tuple) and r[0] == 1 for r in raw):
        closed = _gaussian(quantity, given, raw)
        if closed is not None:
            return result(closed, closed.upper - closed.lower, method="gaussian", grid=0.0)
    solve = (lambda comps: schedule_delta(given, comps)) if solve_delta else (
        lambda comps: schedule_epsilon(given, comps))

    def allowed(b, comps) -> float:
        mid = (b.lower + b.upper) / 2
        if tol is not None:  # relative to the estimate, the bracket's midpoint
            return tol * max(mid, floor) if relative else tol
        if not solve_delta:
            return max(DEFAULT_TOL * mid, shift)
        # delta's change across the default eps shift, from the same PLDs: upwards (delta is convex and decreasing
        # in eps, so the smaller of the two directions' changes, and at most delta itself)
        moved = schedule_delta(given + shift, comps)
        return max(DEFAULT_TOL * max(mid, floor), mid - (moved.lower + moved.upper) / 2)

    if tol is None:  # the default: a coarse grid first (an estimate, the orders), then one near the width aimed for
        first = max(_COARSE * shift, _START_WIDTH)  # (at least 0.1: where 1e-3 relative is wider, it is a jump)
    else:  # an absolute eps width is the grid's own: start there (a wider one is wasted work, a narrower one may
        first = tol if quantity == "epsilon" and not relative else _START_WIDTH  # not fit)

    def goal(last_allowed: float | None) -> float:
        """the floating-point budget (in delta) the powers may spend in double before a long-double pass: at eps(delta)
        it moves eps by about goal / (delta |d log delta / d eps|), so a tenth of the eps width last allowed (at most
        1e-2, and 1e-3 before a first bracket) times delta; delta(eps) spends a fiftieth of the width last allowed
        (before a first bracket: _COARSE_GOAL at the default, whose first grid only estimates; else none)"""
        if not solve_delta:
            return given * (1e-3 if last_allowed is None else min(1e-2, 0.1 * last_allowed))
        if last_allowed is None:  # the default's coarse first grid only estimates: double arithmetic
            return _COARSE_GOAL if tol is None else 0.0
        return 0.02 * last_allowed

    try:
        b, target = _refined(solve, allowed, phases, orders, solve_delta=solve_delta, start=first,
                             budget_goal=goal, deadline=deadline, progress=progress,
                             aim=0.9 * shift if tol is None and solve_delta else None, raw=raw)
    except _Short as short:
        best = None if short.bracket is None else result(short.bracket, short.target, short.reason)
        if tol is None and best is not None:
            return best
        raise AccountantRefusal(str(short), best) from None
    return result(b, target)


def _gaussian(quantity: str, given: float, raw: tuple[tuple[float, float, int], ...]):
    """The exact bracket of a full-batch schedule (q = 1 throughout): mu-GDP with mu^2 = sum T_i / sigma_i^2, its
    closed form enclosed in Arb (verify.truth.gaussian.composed_gaussian_bracket); None where Arb cannot enclose it
    (extreme sigma: the PLD engine then answers or refuses)."""
    found = composed_gaussian_bracket(quantity, given, [(t, s) for _, s, t in raw], _ARB_BITS)
    return None if found is None else _Closed(*found)


@dataclass(frozen=True)
class _Closed:
    lower: float
    upper: float
    grid_width: float = 0.0

