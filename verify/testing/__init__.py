"""Property-test bounds before publishing: `falsify`, `assert_bound_holds` and hypothesis strategies.

    from verify.testing import assert_bound_holds
    def test_my_bound():
        assert_bound_holds("alpha*S**2*eta*K/(4*n**2*sigma**2)", "noisy_gd_quadratic", side="upper")
"""

from __future__ import annotations

from verify.testing.falsify import Counterexample, falsify, search, user_theorem
from verify.testing.strategies import point_strategy


def assert_bound_holds(bound, family: str, side: str = "upper", **kwargs) -> None:
    """Fail (AssertionError with the shrunk counterexample) if `falsify` breaks the bound."""
    found = falsify(bound, family, side, **kwargs)
    if found is not None:
        raise AssertionError(str(found))


__all__ = ["Counterexample", "assert_bound_holds", "falsify", "point_strategy", "search", "user_theorem"]
