"""verify: symbolic-numeric verification of differential-privacy theorems.

Public entry points: `check` (one theorem at one point), `family` (instance families and their truths),
`theorem` / `CATALOG` (the encoded results), `results_frame` (a results file as a pandas DataFrame), and the result
and error types. Importing `verify` is cheap: each public name imports its module (SymPy, the catalog, the families)
on first use (PEP 562), and so does each submodule (`verify.accountant`, `verify.reporting.columns`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from verify._version import __version__ as __version__
from verify.errors import AssumptionError, ParameterError, UnknownIdError, VerifyError

_LAZY = {
    "check": "verify.api", "CATALOG": "verify.catalog", "theorem": "verify.catalog", "FAMILIES": "verify.families",
    "family": "verify.families", "Direction": "verify.model", "Quantity": "verify.model", "Variant": "verify.model",
    "Method": "verify.results", "PointResult": "verify.results", "Truth": "verify.results", "Verdict": "verify.results",
    "results_frame": "verify.reporting.frame",
}

__all__ = [
    "CATALOG", "FAMILIES", "AssumptionError", "Direction", "Method", "ParameterError", "PointResult",
    "Quantity", "Truth", "UnknownIdError", "Variant", "Verdict", "VerifyError", "check", "family", "results_frame",
    "theorem",
]


def __getattr__(name: str) -> object:
    """Import the module of a public name on first use and cache the name here; a public submodule is imported
    when first named (`verify.accountant.epsilon(...)` after `import verify`)."""
    module = _LAZY.get(name)
    if module is None:
        return submodule(__name__, name)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def submodule(package: str, name: str) -> ModuleType:
    """The public submodule `package.name`, imported on first use (the import binds it in its package); an
    AttributeError where `package` has none of that name. A package's `__getattr__` calls it, so that importing the
    package stays cheap and every submodule is still reachable as an attribute."""
    import importlib.util

    if not name.startswith("_"):
        full = f"{package}.{name}"
        try:
            exists = importlib.util.find_spec(full) is not None
        except (ImportError, ValueError):
            exists = False
        if exists:
            return importlib.import_module(full)
    raise AttributeError(f"module '{package}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
