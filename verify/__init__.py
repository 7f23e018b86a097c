"""verify: symbolic-numeric verification of differential-privacy theorems.

Public entry points: `check` (one theorem at one point), `family` (instance families and their truths),
`theorem` / `CATALOG` (the encoded results), `results_frame` (a results file as a pandas DataFrame), and the result
and error types. Importing `verify` is cheap: each
public name imports its module (SymPy, the catalog, the families) on first use (PEP 562).
"""

from __future__ import annotations

import importlib

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
    """Import the module of a public name on first use and cache the name here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'verify' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
