"""Helper to wrap an mpmath closed form as an exact Truth."""

from __future__ import annotations

from collections.abc import Callable

import mpmath

from verify.results import Truth

DPS = 50


def exact(fn: Callable[..., mpmath.mpf], detail: str) -> Callable[..., Truth]:
    """A truth function evaluating `fn` at DPS digits and reporting it as exact."""

    def truth(**params: float) -> Truth:
        with mpmath.workdps(DPS):  # every input becomes an exact binary mpf before any arithmetic
            return Truth.exact(float(fn(**{k: mpmath.mpf(v) for k, v in params.items()})), detail)

    return truth
