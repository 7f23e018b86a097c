"""verify: symbolic-numeric verification of differential-privacy theorems.

Public entry points: `check` (one theorem at one point), `family` (instance families and their truths),
`theorem` / `CATALOG` (the encoded results), and the result and error types.
"""

from __future__ import annotations

from verify.api import check
from verify.catalog import CATALOG, theorem
from verify.errors import AssumptionError, ParameterError, UnknownIdError, VerifyError
from verify.families import FAMILIES, family
from verify.model import Direction, Quantity, Variant
from verify.results import Method, PointResult, Truth, Verdict

__all__ = [
    "CATALOG", "FAMILIES", "AssumptionError", "Direction", "Method", "ParameterError", "PointResult",
    "Quantity", "Truth", "UnknownIdError", "Variant", "Verdict", "VerifyError", "check", "family", "theorem",
]
__version__ = "0.1.0"
