"""Property-test bounds before publishing: `falsify`, `assert_bound_holds` and hypothesis strategies.

    from verify.testing import assert_bound_holds
    def test_my_bound():
        assert_bound_holds("alpha*S**2*eta*K/(4*n**2*sigma**2)", "noisy_gd_quadratic", side="upper")
"""

from __future__ import annotations

from verify.errors import NothingChecked
from verify.testing.falsify import (
    Counterexample,
    SearchOutcome,
    falsify,
    falsify_outcome,
    search,
    search_outcome,
    user_theorem,
)
from verify.testing.strategies import point_strategy


def assert_bound_holds(bound, family: str, side: str = "upper", **kwargs) -> None:
    """Fail (AssertionError with the shrunk counterexample) if `falsify` breaks the bound; fail too (NothingChecked)
    when the search could check fewer than `min_checked` points: no evidence is not a pass."""
    found = falsify(bound, family, side, **kwargs)
    if found is not None:
        raise AssertionError(str(found))


__all__ = ["Counterexample", "NothingChecked", "SearchOutcome", "assert_bound_holds", "falsify", "falsify_outcome",
           "point_strategy", "search", "search_outcome", "user_theorem"]
