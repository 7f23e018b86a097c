"""One-parameter sweeps around a base point: the data behind the report's plots. Each sweep calls
`verify.checker.check_point` at the application's worst grid point (its counterexample when VIOLATED, its tightest
point otherwise) while one parameter (K, alpha or n) varies; values the assumptions exclude are skipped and listed.
A result that HOLDS is also swept around a typical grid point (`typical_point`: the median bound/truth), where the
bound and the truth do not overlap as they do at the tightest point: along one parameter (`typical_parameters`), a
third of the cost and size of the three sweeps.
A sweep's per-point verdicts are the float filter's (bound against the truth's interval, `rigorous=False`): a figure
draws curves, and the certificates belong to the entry's own points (the rigorous re-check of every violated or near
point along the sweeps took 40% of a report's figure time). K and n stay within the application's grid range, and
each sweep has a time budget, so that a family whose truth grows costly along it cannot stall the report. The budget
is a guard that no catalog sweep comes near (the slowest, the Monte-Carlo NMF family's alpha, takes about 5 s here):
what a sweep computes must not depend on the machine's speed or load. At 2 s it cut that sweep at alpha 9.6 in one
figure and 37 in another of the same report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from verify.catalog import companions
from verify.checker import ApplicationResult, check_point, grid_points, resolve
from verify.errors import AssumptionError
from verify.model import Application, Theorem
from verify.results import PointResult

SWEPT = ("K", "alpha", "n")  # in this order, where the application's grid varies them
N_VALUES = 16
SWEEP_BUDGET_S = 30.0  # per sweep; past it the remaining (larger, costlier) values are listed as not computed


def sweep_values(parameter: str, base: float, grid: Sequence[float] = ()) -> list[float]:
    """alpha from 1.1 to 64; log-spaced integers for K and n from 1 to the largest value of the application's
    grid (its truths are known to be affordable there; 10^4 without a grid); the base value always included."""
    if parameter == "alpha":
        values = {float(f"{x:.3g}") for x in np.geomspace(1.1, 64.0, N_VALUES)}
    else:
        top = max((float(v) for v in grid), default=1e4)
        values = {float(round(x)) for x in np.geomspace(1.0, top, N_VALUES)} if top > 1 else set()
    return sorted(values | {float(base)})


@dataclass(frozen=True)
class Sweep:
    """`check_point` results along one parameter, other parameters at `base`."""

    parameter: str
    base: dict[str, float]
    points: tuple[PointResult, ...]
    values: tuple[float, ...]  # the swept values that could be checked, aligned with `points`
    excluded: tuple[tuple[float, str], ...]  # (value, the assumption or error that excluded it)

    def to_dict(self) -> dict:
        """Columnar JSON: one list per series, aligned with `values`."""
        comp_ids = sorted({c.theorem for p in self.points for c in p.companions})
        comp = {i: [next((c.value for c in p.companions if c.theorem == i), None) for p in self.points]
                for i in comp_ids}
        return {
            "parameter": self.parameter,
            "base": self.base,
            "values": list(self.values),
            "bound": [p.bound for p in self.points],
            "truth": [p.truth.value for p in self.points],
            "truth_lower": [p.truth.lower for p in self.points],
            "truth_upper": [p.truth.upper for p in self.points],
            "method": sorted({p.truth.method.value for p in self.points}),
            "verdict": [p.verdict.value for p in self.points],
            "verdicts_by": "float filter (not certified; the entry's own verdicts are)",
            "companions": comp,
            "excluded": [{"value": v, "reason": why} for v, why in self.excluded],
        }


def base_point(theorem: Theorem, app: Application, result: ApplicationResult) -> dict[str, float] | None:
    """The grid parameters of the worst checked grid point (the falsifier's points, drawn anywhere and kept unshrunk,
    are shown in the counterexample box, not swept around), else of the worst point, else of the first grid point
    inside the assumptions."""
    grid = [p for p in result.points if p.origin == "grid"]
    worst = min(grid, key=lambda p: p.margin) if grid else result.worst
    if worst is not None:
        return {k: worst.params[k] for k in app.grid_names if k in worst.params}
    for params in grid_points(app):
        try:
            resolve(theorem, app, params)
        except Exception:  # noqa: BLE001 - any point that cannot be resolved is no base
            continue
        return dict(params)
    return None


def typical_point(app: Application, result: ApplicationResult) -> dict[str, float] | None:
    """For a result that HOLDS, the grid point with the median bound/truth over the grid: the slack a reader should
    expect, beside the tightest point that `base_point` sweeps around (where the two curves meet). None where fewer
    than three grid points have a finite positive ratio, or the median is the tightest point itself."""
    if result.status != "HOLDS":
        return None
    grid = sorted((p for p in result.points if p.origin == "grid" and p.ratio is not None and p.ratio > 0
                   and math.isfinite(p.ratio)), key=lambda p: p.ratio)
    if len(grid) < 3:
        return None
    middle = grid[len(grid) // 2]
    point = {k: middle.params[k] for k in app.grid_names if k in middle.params}
    tightest = min(grid, key=lambda p: p.margin)
    return None if all(point[k] == tightest.params.get(k) for k in point) else point


def sweep(theorem: Theorem, app: Application, base: Mapping[str, float], parameter: str,
          budget_s: float = SWEEP_BUDGET_S) -> Sweep:
    """Check `theorem` along `parameter` with the other grid parameters at `base`, for at most `budget_s`."""
    others = companions(app)
    points, values, excluded = [], [], []
    start = time.perf_counter()
    for value in sweep_values(parameter, base[parameter], app.grid_values(parameter)):
        if time.perf_counter() - start > budget_s:  # values ascend, and so does the cost of K and n
            excluded.append((value, f"not computed: the sweep's time budget ({budget_s:g} s) was spent"))
            continue
        try:
            point = check_point(theorem, app, {**base, parameter: value}, others, rigorous=False)
        except AssumptionError as err:
            excluded.append((value, err.assumption))
            continue
        except Exception as err:  # noqa: BLE001 - an undefined bound or truth is shown as excluded
            excluded.append((value, f"{type(err).__name__}: {err}"))
            continue
        if not math.isfinite(point.bound):
            excluded.append((value, "bound overflows"))
            continue
        points.append(point)
        values.append(value)
    return Sweep(parameter, dict(base), tuple(points), tuple(values), tuple(excluded))


def swept_parameters(app: Application) -> list[str]:
    """K, alpha and n, where the application's grid varies them (i.e. where they are free parameters)."""
    return [p for p in SWEPT if p in app.grid_names]


def typical_parameters(app: Application) -> list[str]:
    """The one parameter swept around a typical point: the first of K, alpha, n that the grid varies."""
    return swept_parameters(app)[:1]


def sweeps_for(theorem: Theorem, app: Application, result: ApplicationResult) -> list[Sweep]:
    """The sweeps over K, alpha and n that the application's grid varies, around its base point."""
    base = base_point(theorem, app, result)
    if base is None:
        return []
    return [sweep(theorem, app, base, p) for p in swept_parameters(app)]
