"""Python entry points that combine the catalog and the checker."""

from __future__ import annotations

from verify.catalog import companions
from verify.catalog import theorem as get_theorem
from verify.checker import check_point
from verify.errors import UnknownIdError
from verify.results import PointResult


def check(theorem_id: str, family: str | None = None, **params: float) -> PointResult:
    """Check catalog entry `theorem_id` at one parameter point.

    Parameters the entry's application derives (e.g. Corollary 1's start variance 2 sigma^2/lam) may be
    omitted; a point that breaks an assumption raises `verify.AssumptionError` naming it.
    """
    thm = get_theorem(theorem_id)
    apps = [a for a in thm.applications if family is None or a.family == family]
    if not apps:
        raise UnknownIdError(f"{theorem_id} is not checked on family '{family}'; it applies to "
                             f"{', '.join(a.family for a in thm.applications)}")
    return check_point(thm, apps[0], params, companions(apps[0]))
