"""Property-test bounds before publishing: `falsify`, `assert_bound_holds` and hypothesis strategies.

    from verify.testing import assert_bound_holds
    def test_my_bound():
        assert_bound_holds("alpha*S**2*eta*K/(4*n**2*sigma**2)", "noisy_gd_quadratic", side="upper")

Importing this package is cheap (pytest imports it with verify's plugin in every session): the falsifier, SymPy and
hypothesis load on first use of a name (PEP 562).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable

from verify.errors import NothingChecked

_LAZY = {"Counterexample": "falsify", "SearchOutcome": "falsify", "falsify_outcome": "falsify", "search": "falsify",
         "search_outcome": "falsify", "user_theorem": "falsify", "point_strategy": "strategies"}


def assert_bound_holds(bound, family: str, side: str = "upper", **kwargs) -> None:
    """Fail (AssertionError with the shrunk counterexample) if `falsify` breaks the bound; fail too (NothingChecked)
    when the search could check fewer than `min_checked` points: no evidence is not a pass."""
    from verify.testing.falsify import falsify

    found = falsify(bound, family, side, **kwargs)
    if found is not None:
        raise AssertionError(str(found))


def __getattr__(name: str) -> object:
    """Import the module of a public name on first use and cache the name here."""
    if name not in _LAZY:
        raise AttributeError(f"module 'verify.testing' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"verify.testing.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """This package, whose `falsify` is the function: the import system binds the submodule of the same name here
    when it is first imported, and that binding is ignored."""

    @property
    def falsify(self) -> Callable:
        from verify.testing.falsify import falsify

        return falsify

    @falsify.setter
    def falsify(self, _submodule: types.ModuleType) -> None:
        pass


sys.modules[__name__].__class__ = _Package

__all__ = ["Counterexample", "NothingChecked", "SearchOutcome", "assert_bound_holds", "falsify", "falsify_outcome",
           "point_strategy", "search", "search_outcome", "user_theorem"]
