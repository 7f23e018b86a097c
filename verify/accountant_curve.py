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

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from verify.accountant import NEIGHBOURING, Phase
from verify.errors import ParameterError, ResourceLimitError
from verify.truth import pld

DEFAULT_DELTAS = tuple(float(d) for d in np.logspace(-12, -2, 21))  # two points a decade
DEFAULT_POINTS = 21  # eps points 0 .. eps(1e-12) when none are given
_SMALLEST_DELTA = 1e-12
_COARSE_WIDTH = 0.1  # eps width of the first composition, which only places the grid and the default eps range
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
        rows = [f"{name}({at}) of {_shown(self.phases)} ({self.neighbouring.replace('_', '/')}), certified, one "
                f"composition (loss grid {self.grid_width:.3g}):"]
        rows += [f"  {at}={p.at:<12.6g} {name} in [{p.lower:.6g}, {p.upper:.6g}]" for p in self.points]
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
        rows = [f"eps(delta={self.delta:g}) after each checkpoint of {_shown(self.phases)} "
                f"({self.neighbouring.replace('_', '/')}), certified (loss grid {self.grid_width:.3g}):"]
        for p in self.points:
            epoch = "" if p.epoch is None else f" (epoch {p.epoch:g})"
            rows.append(f"  step {p.step}{epoch}: eps in [{p.lower:.6g}, {p.upper:.6g}]")
        return "\n".join(rows)


def _shown(phases: tuple) -> str:
    return " + ".join(str(p) for p in phases)


def _schedule(phases) -> tuple:
    """the phases as a tuple (a bare Phase or (q, sigma, steps) is one phase), each validated"""
    if isinstance(phases, Phase) or (isinstance(phases, (tuple, list)) and len(phases) == 3
                                     and all(isinstance(v, (int, float)) for v in phases)):
        phases = [phases]
    try:
        out = tuple(p if hasattr(p, "steps") else Phase(*p) for p in phases)
    except TypeError:
        raise ParameterError(f"a schedule is a sequence of phases (q, sigma, steps), got {phases!r}") from None
    if not out:
        raise ParameterError("a schedule needs at least one phase (q, sigma, steps)")
    return out


def _raw(phases: tuple) -> tuple:
    """what the engine takes: (q, sigma, steps) for a Gaussian phase, the phase object itself otherwise"""
    return tuple((p.q, p.sigma, p.steps) if isinstance(p, Phase) else p for p in phases)


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
        steps = sum(p[2] if isinstance(p, tuple) else p.steps for p in raw)
        width = max(1e-3 * largest, min(5e-6 * steps, 1e-2 * largest)) or _COARSE_WIDTH
    return _compose(raw, orders, width, goal)


def epsilon_curve(deltas: Sequence[float] | None, phases, *, neighbouring: str = "add_remove",
                  width: float | None = None) -> PrivacyCurve:
    """eps(delta) of the schedule at each delta (default: 1e-12 .. 1e-2, two a decade), every point a proven bracket
    read off one composition; `width` the loss grid's eps width (default: `_fine`'s, from eps at the smallest delta)."""
    start = time.perf_counter()
    phases, orders, width = _schedule(phases), _orders(neighbouring), _width(width)
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
    phases, orders, width = _schedule(phases), _orders(neighbouring), _width(width)
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
