"""Privacy curves and per-step accounting from the certified PLD bracket (verify.truth.pld), and other accountants'
values at the same points.

A curve (eps over a range of delta, or delta over a range of eps) composes the schedule's privacy-loss distribution
ONCE, on one loss grid, and reads every point off that composition (pld.schedule_epsilon / schedule_delta): each
point is a proven bracket lower <= tight value <= upper, as `verify.accountant.epsilon` / `delta` answer one query.
The grid's eps width is max(1e-3 E, min(5e-6 T, 1e-2 E)) (E the largest eps on the curve, T the number of steps)
unless one is given: the bracket at the largest eps is 1e-3 to 1e-2 relative, the others are read off the same grid.

Per-step accounting (`epsilon_per_step`) brackets eps(delta) after every k-th step (or every epoch) of a schedule:
each checkpoint's prefix of the schedule is composed on one grid fitted to the whole schedule (each composition's
per-step cores are cut as for the prefix; the grid, hence the absolute width, is shared).

An upper end of +inf at a very small delta is the engine's floating-point floor (its error budget is not below
that delta), stated as such, never a number passed off as certified.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from verify.accountant import NEIGHBOURING, Phase, schedule
from verify.accountant_compare import FAILED, OVER_MEMORY, PAST_DEADLINE, UNDER
from verify.errors import DeadlineExceeded, MemoryLimitExceeded, ParameterError, ResourceLimitError
from verify.limits import remaining, truth_deadline
from verify.truth import pld
from verify.truth.gaussian import gaussian_delta, gaussian_dp_epsilon

DEFAULT_DELTAS = tuple(float(d) for d in np.logspace(-12, -2, 21))  # two points a decade
DEFAULT_POINTS = 21  # eps points 0 .. eps(1e-12) when none are given
_SMALLEST_DELTA = 1e-12
_COARSE_WIDTH = 0.1  # eps width of the first composition, which only places the grid and the default eps range
_PER_STEP_SHARE = 1e-2  # per-step accounting's default eps width, relative to eps at the schedule's end
_TRIES = 10  # grids tried at most for one composition (coarser past a size cap, finer where the CDF underflows)


@dataclass(frozen=True)
class CurvePoint:
    """lower <= tight value <= upper (proven) at `at` (a delta on an eps curve, an eps on a delta curve)."""

    at: float
    lower: float
    upper: float

    @property
    def estimate(self) -> float:
        """the bracket's midpoint (its lower end where the upper one is vacuous)"""
        return 0.5 * (self.lower + self.upper) if math.isfinite(self.upper) else self.lower


@dataclass(frozen=True)
class PrivacyCurve:
    """`quantity` ("epsilon": eps at each delta; "delta": delta at each eps) bracketed at every point, all read off
    one composition of `phases` on a loss grid of width `grid_width`."""

    quantity: str
    points: tuple[CurvePoint, ...]
    phases: tuple
    neighbouring: str
    grid_width: float
    seconds: float

    @property
    def at_name(self) -> str:
        return "delta" if self.quantity == "epsilon" else "epsilon"

    def __str__(self) -> str:
        name, at = ("eps", "delta") if self.quantity == "epsilon" else ("delta", "eps")
        rows = [f"{name}({at}) of {_shown(self.phases)} ({self.neighbouring.replace('_', '/')}), certified:"]
        rows += [f"  {at}={p.at:<12.6g} {name} in [{p.lower:.6g}, {p.upper:.6g}]" for p in self.points]
        rows.append(f"  (every point read off one composition, loss grid {self.grid_width:.3g})")
        return "\n".join(rows)


@dataclass(frozen=True)
class StepPoint:
    """eps(delta) after `step` steps of the schedule (`epoch`: the epochs completed, None where not counted)."""

    step: int
    epoch: float | None
    lower: float
    upper: float


@dataclass(frozen=True)
class StepCurve:
    """eps(delta) after each checkpoint of `phases`, every one a proven bracket on one loss grid."""

    delta: float
    points: tuple[StepPoint, ...]
    phases: tuple
    neighbouring: str
    grid_width: float
    seconds: float

    def __str__(self) -> str:
        rows = [f"eps(delta={self.delta:g}) of {_shown(self.phases)} ({self.neighbouring.replace('_', '/')}), "
                "certified after each checkpoint:"]
        for p in self.points:
            epoch = "" if p.epoch is None else f" (epoch {p.epoch:g})"
            rows.append(f"  step {p.step}{epoch}: eps in [{p.lower:.6g}, {p.upper:.6g}]")
        rows.append(f"  (loss grid {self.grid_width:.3g})")
        return "\n".join(rows)


def _shown(phases: tuple) -> str:
    return " + ".join(str(p) for p in phases)


def _raw(phases: tuple) -> tuple:
    """what the engine takes: (q, sigma, steps) for each Poisson-subsampled Gaussian phase (curves and per-step
    accounting take those only; verify.accountant_events' phases go to accountant.epsilon / delta)"""
    other = [p for p in phases if not isinstance(p, Phase)]
    if other:
        raise ParameterError(f"curves and per-step accounting take Poisson phases (q, sigma, steps) only, got "
                             f"{other[0]}")
    return tuple((p.q, p.sigma, p.steps) for p in phases)


def _orders(neighbouring: str) -> tuple[str, ...]:
    if not isinstance(neighbouring, str) or neighbouring not in NEIGHBOURING:
        raise ParameterError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}, got {neighbouring!r}")
    return NEIGHBOURING[neighbouring]


def _values(values, name: str, low: float, high: float) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ParameterError(f"the {name} of a curve must be numbers, got {values!r}") from None
    if not out:
        raise ParameterError(f"a curve needs at least one {name[:-1]}")
    bad = [v for v in out if not (low < v < high) or math.isnan(v)]
    if bad:
        raise ParameterError(f"every {name[:-1]} must lie in ({low:g}, {high:g}), got {bad[0]!r}")
    return tuple(sorted(set(out)))


def _width(width: float | None) -> float | None:
    if width is not None and not (isinstance(width, (int, float)) and math.isfinite(width) and width > 0):
        raise ParameterError(f"width must be a finite number > 0, got {width!r}")
    return None if width is None else float(width)


def _compose(raw: tuple, orders: tuple[str, ...], width: float, goal: float) -> list:
    """the composed PLDs at eps width `width`, or the nearest grid that can be computed: coarser past a size or
    memory cap, finer where a coarse grid's cut underflows"""
    last = None
    for _ in range(_TRIES):
        try:
            return pld.schedule_orders(raw, orders, width, goal)
        except ResourceLimitError as err:
            too_big = any(word in str(err) for word in ("cells", "memory"))
            if last is not None and too_big != last:
                raise
            last = too_big
            width = width * 4 if too_big else width / 8
    raise ResourceLimitError(f"no loss grid near eps width {width:g} could compose {raw!r}")


def _scale(comps: list, delta: float) -> float:
    """the eps at `delta` read off a composition: its bracket's upper end where finite, else its lower end"""
    b = pld.schedule_epsilon(delta, comps)
    return b.upper if math.isfinite(b.upper) else b.lower


def _fine(raw: tuple, orders: tuple[str, ...], largest: float, width: float | None, goal: float) -> list:
    """the composition every point is read off: eps width `width`, default max(1e-3 E, min(5e-6 T, 1e-2 E)) for
    E = `largest` (1e-3 relative, or a tenth of dp_accounting's own discretisation gap T x 5e-5 where that is wider,
    but never wider than 1e-2 relative)"""
    if width is None:
        steps = sum(_steps(p) for p in raw)
        width = max(1e-3 * largest, min(5e-6 * steps, 1e-2 * largest)) or _COARSE_WIDTH
    return _compose(raw, orders, width, goal)


def epsilon_curve(deltas: Sequence[float] | None, phases, *, neighbouring: str = "add_remove",
                  width: float | None = None) -> PrivacyCurve:
    """eps(delta) of the schedule at each delta (default: 1e-12 .. 1e-2, two a decade), every point a proven bracket
    read off one composition; `width` the loss grid's eps width (default: `_fine`'s, from eps at the smallest delta)."""
    start = time.perf_counter()
    phases, orders, width = schedule(phases), _orders(neighbouring), _width(width)
    deltas = DEFAULT_DELTAS if deltas is None else _values(deltas, "deltas", 0.0, 1.0)
    raw, goal = _raw(phases), 1e-4 * min(deltas)
    largest = 0.0 if width is not None else _scale(_compose(raw, orders, _COARSE_WIDTH, goal), min(deltas))
    comps = _fine(raw, orders, largest, width, goal)
    points = []
    for d in deltas:
        b = pld.schedule_epsilon(d, comps)
        points.append(CurvePoint(d, b.lower, b.upper))
    return PrivacyCurve("epsilon", tuple(points), phases, neighbouring, comps[0].h, time.perf_counter() - start)


def delta_curve(epsilons: Sequence[float] | None, phases, *, neighbouring: str = "add_remove",
                width: float | None = None) -> PrivacyCurve:
    """delta(eps) of the schedule at each eps (default: 21 from 0 to eps(1e-12)), every point a proven bracket read
    off one composition; `width` the loss grid's eps width (default: `_fine`'s, from the largest eps)."""
    start = time.perf_counter()
    phases, orders, width = schedule(phases), _orders(neighbouring), _width(width)
    raw = _raw(phases)
    if epsilons is None:
        top = _scale(_compose(raw, orders, _COARSE_WIDTH, 0.0), _SMALLEST_DELTA)
        epsilons = tuple(float(e) for e in np.linspace(0.0, top, DEFAULT_POINTS))
    else:
        epsilons = _values(epsilons, "epsilons", -math.inf, math.inf)
    comps = _fine(raw, orders, max(max(epsilons), 0.0), width, 0.0)
    points = []
    for e in epsilons:
        b = pld.schedule_delta(e, comps)
        points.append(CurvePoint(e, b.lower, b.upper))
    return PrivacyCurve("delta", tuple(points), phases, neighbouring, comps[0].h, time.perf_counter() - start)


def _checkpoints(phases: tuple, every: int | None, per_epoch: bool) -> list[tuple[int, float | None]]:
    """(step, epochs completed or None) after which eps is reported: every `every` steps, or at each epoch's end
    (ceil(1/q) steps of a phase of sampling rate q), and always at the schedule's end"""
    total = sum(p.steps for p in phases)
    if not per_epoch:
        return [(t, None) for t in sorted({*range(every, total, every), total})]
    out, before, epochs = [], 0, 0.0
    for p in phases:
        if not hasattr(p, "q"):
            raise ParameterError(f"epochs are not defined for a phase without a sampling rate: {p}")
        length = math.ceil(1 / p.q * (1 - 1e-12))  # ceil(N / B) for q = B / N, whatever the rounding of q
        for k in [*range(length, p.steps, length), p.steps]:
            out.append((before + k, epochs + k / length))
        before, epochs = before + p.steps, epochs + p.steps / length
    return out


def _prefix(phases: tuple, steps: int) -> tuple:
    """the schedule's first `steps` steps"""
    out, left = [], steps
    for p in phases:
        if left <= 0:
            break
        out.append(p if p.steps <= left else dataclasses.replace(p, steps=left))
        left -= p.steps
    return tuple(out)


def _steps(phase) -> int:
    return phase[2] if isinstance(phase, tuple) else phase.steps


def _core(order: str, phase, h: float, steps: int):
    """one step's PLD core of `phase` on the grid of width h, its tails cut for `steps` steps"""
    if isinstance(phase, tuple):
        return pld._step_pmf(order, phase[0], phase[1], h, steps)
    return phase.step_pmf(order, h, steps)


def epsilon_per_step(delta: float, phases, *, every: int | None = None, per_epoch: bool = False,
                     neighbouring: str = "add_remove", width: float | None = None) -> StepCurve:
    """eps(delta) after every `every`-th step (or, `per_epoch`, after each epoch: ceil(1/q) steps) of the schedule
    and at its end, each a proven bracket, all on one loss grid: eps width `width` for the whole schedule (default 1e-2
    times its eps), on which each checkpoint's prefix is composed from per-step cores computed once."""
    start = time.perf_counter()
    phases, orders, width = schedule(phases), _orders(neighbouring), _width(width)
    (delta,) = _values([delta], "deltas", 0.0, 1.0)
    if per_epoch == (every is not None):
        raise ParameterError("give one of every=N (steps) and per_epoch=True")
    if every is not None and (isinstance(every, bool) or not isinstance(every, int) or every < 1):
        raise ParameterError(f"every must be an integer >= 1, got {every!r}")
    raw, goal = _raw(phases), 1e-4 * delta
    if width is None:  # 1e-2 relative at the end: a composition a checkpoint costs O(1 / width)
        width = _PER_STEP_SHARE * _scale(_compose(raw, orders, _COARSE_WIDTH, goal), delta) or _COARSE_WIDTH
    whole = _fine(raw, orders, 0.0, width, goal)  # the whole schedule's grid, shared by every checkpoint
    h, total = whole[0].h, sum(p.steps for p in phases)
    if len(whole) < len(orders):  # q = 1 throughout: both orders are one distribution (pld.schedule_orders)
        orders = orders[:len(whole)]
    cores = {(o, i): _core(o, p, h, total) for o in orders for i, p in enumerate(raw)}  # cut for all T steps
    points = []
    for step, epoch in _checkpoints(phases, every, per_epoch):
        comps = [pld.compose_parts([dataclasses.replace(cores[o, i], steps=_steps(p))
                                    for i, p in enumerate(_raw(_prefix(phases, step)))], h, goal) for o in orders]
        b = pld.schedule_epsilon(delta, comps)
        points.append(StepPoint(step, epoch, b.lower, b.upper))
    return StepCurve(delta, tuple(points), phases, neighbouring, h, time.perf_counter() - start)


NOT_INSTALLED, NOT_APPLICABLE = "not installed", "not applicable"


@dataclass(frozen=True)
class PeerCurve:
    """Another accountant's values at a curve's points (None where it gave none), or why it has none (`status`):
    `under` counts the points where its value lies below the proven lower end (a claim the mechanism lacks)."""

    accountant: str
    values: tuple[float | None, ...]
    status: str
    note: str = ""
    under: int = 0

    def __str__(self) -> str:
        if not any(v is not None for v in self.values):
            return f"{self.accountant}: {self.status}{f' ({self.note})' if self.note else ''}"
        shown = ", ".join("-" if v is None else f"{v:.4g}" for v in self.values)
        flag = f"; UNDER-REPORTS at {self.under} of {len(self.values)} points" if self.under else ""
        return f"{self.accountant}: {shown}{flag}{f' ({self.note})' if self.note else ''}"


def _dp_accounting(kind: str) -> Callable[[PrivacyCurve], list[float | None]]:
    def values(c: PrivacyCurve) -> list[float | None]:
        from dp_accounting import dp_event

        if kind == "rdp":
            from dp_accounting.rdp import RdpAccountant as Accountant
        else:
            from dp_accounting.pld import PLDAccountant as Accountant
        acc = Accountant()
        for p in c.phases:
            acc.compose(dp_event.PoissonSampledDpEvent(p.q, dp_event.GaussianDpEvent(p.sigma)), p.steps)
        answer = acc.get_epsilon if c.quantity == "epsilon" else acc.get_delta
        return _each(answer, c)
    return values


def _prv_accountant(c: PrivacyCurve) -> list[float | None]:
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=p.sigma, sampling_probability=p.q) for p in c.phases]
    steps = [p.steps for p in c.phases]
    # its error bars: eps to 1e-2; delta to a thousandth of the smallest delta asked for (of the smallest delta
    # bracketed on a delta curve)
    smallest = min(p.at if c.quantity == "epsilon" else max(p.lower, 1e-15) for p in c.points)
    acc = PRVAccountant(prvs=prvs, max_self_compositions=steps, eps_error=0.01, delta_error=1e-3 * smallest)
    if c.quantity == "epsilon":
        return _each(lambda d: acc.compute_epsilon(delta=d, num_self_compositions=steps)[1], c)
    return _each(lambda e: acc.compute_delta(epsilon=e, num_self_compositions=steps)[1], c)


def _opacus(kind: str) -> Callable[[PrivacyCurve], list[float | None]]:
    def values(c: PrivacyCurve) -> list[float | None]:
        from opacus.accountants import PRVAccountant, RDPAccountant

        acc = {"rdp": RDPAccountant, "prv": PRVAccountant}[kind]()
        acc.history = [(p.sigma, p.q, p.steps) for p in c.phases]
        return _each(lambda d: acc.get_epsilon(d), c)
    return values


def _gdp_clt(c: PrivacyCurve) -> list[float | None]:
    """The Gaussian-DP central-limit approximation (Bu, Dong, Long & Su 2020, Thm 5): mu = sqrt(sum_i q_i^2 T_i
    (e^{1/sigma_i^2} - 1)), read as the mu-GDP pair (verify.truth.gaussian, 50 digits)."""
    import mpmath

    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.fsum(p.q**2 * p.steps * mpmath.expm1(1 / mpmath.mpf(p.sigma) ** 2)
                                     for p in c.phases))
        answer = (lambda d: gaussian_dp_epsilon(d, mu)) if c.quantity == "epsilon" else (
            lambda e: gaussian_delta(e, mu))
        return _each(answer, c)


def _each(answer: Callable[[float], float], c: PrivacyCurve) -> list[float | None]:
    """`answer` at every point (None where it raised or gave NaN), without another library's warnings"""
    out: list[float | None] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in c.points:
            try:
                value = float(answer(p.at))
            except Exception:  # noqa: BLE001 - another library's failure at one point leaves that point blank
                value = math.nan
            out.append(None if math.isnan(value) else value)
    return out


# name -> (the module it needs, the quantities it answers, its values on a curve)
PEERS: dict[str, tuple[str, tuple[str, ...], Callable[[PrivacyCurve], list[float | None]]]] = {
    "dp_accounting PLD": ("dp_accounting", ("epsilon", "delta"), _dp_accounting("pld")),
    "dp_accounting RDP": ("dp_accounting", ("epsilon", "delta"), _dp_accounting("rdp")),
    "prv_accountant": ("prv_accountant", ("epsilon", "delta"), _prv_accountant),
    "opacus RDP": ("opacus", ("epsilon",), _opacus("rdp")),
    "opacus PRV": ("opacus", ("epsilon",), _opacus("prv")),
    "Gaussian-DP CLT (formula)": ("mpmath", ("epsilon", "delta"), _gdp_clt),
}


def peer_curves(curve: PrivacyCurve) -> tuple[PeerCurve, ...]:
    """Every accountant of PEERS at the curve's points, each in a process of its own under verify's memory cap and
    point deadline (as `verify account --compare` runs them); one not installed, not applicable (the schedule has
    other phases than Poisson-subsampled Gaussian ones, other neighbours, or a quantity it does not answer) or that
    fails is listed as such."""
    out = []
    for name, (module, answers, values) in PEERS.items():
        if importlib.util.find_spec(module) is None:
            out.append(PeerCurve(name, (), NOT_INSTALLED))
        elif (curve.quantity not in answers or curve.neighbouring != "add_remove"
              or not all(isinstance(p, Phase) for p in curve.phases)):
            out.append(PeerCurve(name, (), NOT_APPLICABLE, "it accounts add/remove Poisson-subsampled Gaussian "
                                 f"steps{'' if curve.quantity in answers else ', eps(delta) only'}"))
        else:
            out.append(_capped(name, values, curve))
    return tuple(out)


def _capped(name: str, values: Callable[[PrivacyCurve], list[float | None]], curve: PrivacyCurve) -> PeerCurve:
    from verify.pipeline import isolation  # the isolation imports the families (~1.5 s): only here

    seconds = min(remaining(), truth_deadline())
    try:
        got = tuple(isolation.call_capped(values, curve, seconds=seconds, what=name))
    except MemoryLimitExceeded:
        return PeerCurve(name, (), OVER_MEMORY, "over verify's memory cap (VERIFY_MEMORY_CAP)")
    except DeadlineExceeded:
        return PeerCurve(name, (), PAST_DEADLINE, f"stopped after {seconds:.3g} s (VERIFY_TRUTH_DEADLINE)")
    except Exception as err:  # noqa: BLE001 - another library's failure is reported, not ours to raise
        return PeerCurve(name, (), FAILED, " ".join(f"{type(err).__name__}: {err}".split())[:160])
    under = sum(v is not None and v < p.lower for v, p in zip(got, curve.points, strict=True))
    missing = sum(v is None for v in got)
    return PeerCurve(name, got, UNDER if under else "answered",
                     f"no value at {missing} of {len(got)} points" if missing else "", under)
