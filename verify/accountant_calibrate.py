"""Calibration on the certified accountant (verify.accountant): the smallest noise multiplier, or the largest number
of steps or sampling rate, whose certified eps(delta) upper end meets a target, with a value beside it proven not to.

A point is decided as soon as its certified bracket lies wholly at or below the target (it meets it) or wholly above
(it fails), whichever bracket decided it: one the accountant answered, or the tightest one it reached before a
refusal (`AccountantRefusal.best`, read as `getattr(err, "best", None)`). Only a point no bracket decides bounds the
search undecided. Where every value up to the search limit meets the target, the answer says so (`at_limit`) instead
of passing the limit off as the threshold.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass

from verify import accountant
from verify.accountant import MAX_STEPS, AccountantResult, Phase, _real
from verify.errors import ParameterError, ResourceLimitError

CALIBRATED = ("sigma", "steps", "q")
CALIBRATION_TOL = 1e-2  # relative width each point is bracketed to first (a tenth of it at most while undecided)
LIMITS = {"sigma": (1e-2, 1e4), "steps": (1, MAX_STEPS), "q": (1e-8, 1.0)}  # the search's range of each parameter
_START = {"sigma": 1.0, "steps": 1, "q": 1.0}


def _shown(parameter: str, value: float) -> str:
    return f"{int(value):,}" if parameter == "steps" else f"{value:g}"


@dataclass(frozen=True)
class Calibration:
    """The result of `calibrate`: `value` of `parameter` provably meets the target (its certificate's upper end is
    <= target_eps at delta), and `excluded` provably does not (its certified lower end exceeds the target; None where
    no such value was needed or found), so the exact threshold lies between them. `at_limit`: `value` is the search
    limit (LIMITS) and every value up to it meets the target, so the threshold lies beyond the search. eps falls
    with sigma and rises with steps and q (each a post-processing of the other), which makes the answer the best on
    the grid searched."""

    parameter: str
    value: float
    excluded: float | None
    target_eps: float
    delta: float
    certificate: AccountantResult
    at_limit: bool = False

    def __str__(self) -> str:
        shown = _shown(self.parameter, self.value)
        if self.at_limit:
            side = "down" if self.parameter == "sigma" else "up"
            return (f"{self.parameter}: every value {side} to the search limit {shown} meets the target eps <= "
                    f"{self.target_eps:g} at delta={self.delta:g} (certified at the limit: {self.certificate})")
        side = {"sigma": "smallest", "steps": "largest", "q": "largest"}[self.parameter]
        excl = ("" if self.excluded is None
                else f"; {self.parameter}={_shown(self.parameter, self.excluded)} provably does not")
        return (f"{side} {self.parameter} for eps <= {self.target_eps:g} at delta={self.delta:g}: {shown} (certified: "
                f"{self.certificate}{excl})")

    def __repr__(self) -> str:
        return f"<Calibration {self}>"

    def _repr_html_(self) -> str:
        return f"<div>{html.escape(str(self))}</div>"


def calibrate(parameter: str, target_eps: float, delta: float, *, q: float | None = None,
              sigma: float | None = None, steps: int | None = None, precision: float = 1e-2,
              tol: float = CALIBRATION_TOL, neighbouring: str = "add_remove") -> Calibration:
    """The smallest noise multiplier (`parameter` "sigma"), or the largest number of steps ("steps") or sampling rate
    ("q"), whose certified eps(delta) upper end meets `target_eps`; the other two are given. Geometric bisection
    until the value and a value proven not to meet the target are within `precision` (relative; one step for
    `steps`), each point bracketed to `tol` relative."""
    if parameter not in CALIBRATED:
        raise ParameterError(f"calibrate one of {', '.join(CALIBRATED)}, got {parameter!r}")
    given = {"q": q, "sigma": sigma, "steps": steps}
    missing = [k for k, v in given.items() if k != parameter and v is None]
    if missing or given[parameter] is not None:
        raise ParameterError(f"calibrating {parameter} needs the other two of q, sigma, steps (and not {parameter})")
    if _real(target_eps) is None or not (math.isfinite(_real(target_eps)) and _real(target_eps) > 0):
        raise ParameterError(f"target eps must be a finite number > 0, got {target_eps!r}")
    if _real(precision) is None or not 0 < _real(precision) < 1:
        raise ParameterError(f"precision must lie in (0, 1), got {precision!r}")
    Phase(*(1.0 if v is None else v for v in (q, sigma, steps)))  # the given two are valid values

    def at(v: float) -> AccountantResult | None:
        """The bracket at v, refined (to a tenth of `tol` at most) while it straddles the target; a refusal's best
        bracket where that decides; None where no bracket was reached."""
        values = dict(given, **{parameter: v})
        width, last = tol, None
        while True:
            try:
                r = accountant.epsilon(delta, [Phase(values["q"], values["sigma"], values["steps"])], tol=width,
                                       neighbouring=neighbouring)
            except ResourceLimitError as err:  # a cap or the time budget: the tightest bracket it reached may decide
                best = getattr(err, "best", None)
                return best if best is not None and (decides(best) or last is None) else last
            if decides(r) or width <= tol / 10:
                return r
            last = r
            width = max(tol / 10, width * max(0.1, min(0.5, 0.9 * abs(r.estimate - target_eps) / r.width)))

    def decides(r: AccountantResult) -> bool:
        return r.upper <= target_eps or r.lower > target_eps

    return _bisect(parameter, at, lambda r: r is not None and r.upper <= target_eps,
                   lambda r: r is not None and r.lower > target_eps, float(target_eps), float(delta), precision)


def _bisect(parameter: str, at: Callable[[float], AccountantResult | None],
            meets: Callable[[AccountantResult | None], bool], fails: Callable[[AccountantResult | None], bool],
            target_eps: float, delta: float, precision: float) -> Calibration:
    """Bisection on a monotone certificate: for sigma, meeting the target is upward closed; for steps and q downward
    closed. Keeps the best proven value and the nearest proven failure; a point no bracket decides bounds the search
    like a failure but is not reported as one."""
    up = parameter == "sigma"  # larger values meet the target
    integer = parameter == "steps"
    lo_lim, hi_lim = LIMITS[parameter]
    limit = lo_lim if up else hi_lim  # the end of the search on the meeting side

    def nxt(v: float, toward_meeting: bool) -> float:
        factor = 2.0 if toward_meeting == up else 0.5
        w = min(max(v * factor, lo_lim), hi_lim)
        return int(round(w)) if integer else w

    v, best, edge, worst = _START[parameter], None, None, None
    for _ in range(64):  # a proven value and, beside it, a failing or undecided one: doubling / halving
        r = at(v)
        if meets(r):
            best = (v, r)
        else:
            edge = v
            if fails(r):
                worst = v
        if best is not None and edge is not None:
            break
        w = nxt(v, toward_meeting=not meets(r))
        if w == v:
            break
        v = w
    if best is None:
        raise ResourceLimitError(f"no {parameter} in [{lo_lim:g}, {hi_lim:g}] provably meets eps <= {target_eps:g} at "
                                 f"delta={delta:g}")
    if edge is None:  # every value searched meets the target, the limit included
        return Calibration(parameter, best[0], None, target_eps, delta, best[1], at_limit=best[0] == limit)
    while True:  # edge: a proven failure, or a point no bracket decides
        a, b = (edge, best[0]) if up else (best[0], edge)
        if (integer and b - a <= 1) or (not integer and b / a <= 1 + precision):
            break
        mid = int((a + b) // 2) if integer else math.sqrt(a * b)
        r = at(mid)
        if meets(r):
            best = (mid, r)
        else:  # the threshold lies beyond mid (proven) or within its bracket's width of it: search closer to `best`
            edge = mid
            if fails(r):
                worst = mid
    step = edge
    for _ in range(8):  # the search ended at an undecided edge: prove a failure just beyond it
        if step == worst:
            break
        step = min(step + 1, hi_lim) if integer and not up else (
            step / (1 + precision) if up else min(step * (1 + precision), hi_lim))
        if fails(at(step)):
            worst = step
    return Calibration(parameter, best[0], worst, target_eps, delta, best[1])
