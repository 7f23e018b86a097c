"""Python entry points that combine the catalog and the checker."""

from __future__ import annotations

from verify.catalog import companions
from verify.catalog import theorem as get_theorem
from verify.checker import check_point
from verify.errors import ParameterError, UnknownIdError
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
    thm = get_theorem(theorem_id)
    apps = [a for a in thm.applications if family is None or a.family == family]
    if not apps:
        raise UnknownIdError(f"{theorem_id} is not checked on family '{family}'; it applies to "
                             f"{', '.join(a.family for a in thm.applications)}")
    app = apps[0]
    return check_point(thm, app, {**fixed_constants(app), **params}, companions(app), recheck_s=recheck_s)


def fixed_constants(app: Application) -> dict[str, float]:
    """The parameters that every grid of `app` gives, each with one value on all of them, and that the application
    neither derives nor binds (a value one grid gives where another derives it, e.g. beta = max(1, mu), is that
    grid's, not a constant of the instance)."""
    derived = app.defaults.keys() | app.bind.keys()
    return {name: values[0] for name in app.grid_names
            if name not in derived and all(name in g for g in app.grids) and len(values := app.grid_values(name)) == 1}
