"""Python entry points that combine the catalog and the checker."""

from __future__ import annotations

from verify.catalog import companions
from verify.catalog import theorem as get_theorem
from verify.checker import check_point, grid_points, resolve
from verify.errors import AssumptionError, ParameterError, UnknownIdError
from verify.limits import deadline, truth_deadline
from verify.model import Application
from verify.results import PointResult


def check(theorem_id: str, family: str | None = None, *, recheck_s: float | None = None,
          **params: float) -> PointResult:
    """Check catalog entry `theorem_id` at one parameter point.

    Parameters the entry's application derives (e.g. Corollary 1's start variance 2 sigma^2/lam) may be
    omitted, and so may those that take one value on every grid of the application (the instance's fixed constants,
    e.g. a step size): they take that value, shown in the result's params. A point that breaks an assumption raises
    `verify.AssumptionError` naming it. `recheck_s` caps the rigorous re-check's wall-clock time (default 20 s;
    past it the point is INCONCLUSIVE, with the reason).
    """
    if recheck_s is not None and (isinstance(recheck_s, bool) or not isinstance(recheck_s, (int, float))
                                  or not 0 < recheck_s < float("inf")):
        raise ParameterError(f"recheck_s must be a finite number of seconds > 0, got {recheck_s!r}")
    app = _application(theorem_id, family)
    return check_point(get_theorem(theorem_id), app, {**fixed_constants(app), **params}, companions(app),
                       recheck_s=recheck_s)


def fixed_constants(app: Application) -> dict[str, float]:
    """The parameters that every grid of `app` gives, each with one value on all of them, and that the application
    neither derives nor binds (a value one grid gives where another derives it, e.g. beta = max(1, mu), is that
    grid's, not a constant of the instance)."""
    derived = app.defaults.keys() | app.bind.keys()
    return {name: values[0] for name in app.grid_names
            if name not in derived and all(name in g for g in app.grids) and len(values := app.grid_values(name)) == 1}


def _application(theorem_id: str, family: str | None) -> Application:
    """The entry's application on `family` (its first one when None)."""
    thm = get_theorem(theorem_id)
    apps = [a for a in thm.applications if family is None or a.family == family]
    if not apps:
        raise UnknownIdError(f"{theorem_id} is not checked on family '{family}'; it applies to "
                             f"{', '.join(a.family for a in thm.applications)}")
    return apps[0]


def first_grid_point(theorem_id: str, family: str | None = None) -> dict[str, float]:
    """The first point of the entry's default grid (on `family`'s application, else its first) that its assumptions
    admit, as `verify run` checks it: what `verify check ID` checks when given no parameter."""
    thm, app = get_theorem(theorem_id), _application(theorem_id, family)
    for point in grid_points(app):
        try:
            with deadline(truth_deadline(), f"the {app.family} truth"):  # as a check of the point runs it
                resolve(thm, app, point)
        except AssumptionError:  # skipped by a run too
            continue
        return point
    raise ParameterError(f"{theorem_id}: no point of its grid on {app.family} meets its assumptions; give the "
                         "parameters with -p NAME=VALUE")
