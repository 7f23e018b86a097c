"""Run catalog entries over their default grids and collect the results of a whole run."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata

from verify.catalog import companions, select
from verify.checker import ApplicationResult, check_application
from verify.model import Theorem

SCHEMA_VERSION = "1.0"


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("dp-verify", "sympy", "numpy", "scipy", "mpmath"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


@dataclass(frozen=True)
class RunResult:
    """Every selected theorem checked on every family it applies to."""

    theorems: tuple[Theorem, ...]
    results: tuple[ApplicationResult, ...]
    seconds: float

    @property
    def unexpected(self) -> list[ApplicationResult]:
        return [r for r in self.results if not r.as_expected]

    def to_dict(self) -> dict:
        by_id = {t.id: t for t in self.theorems}
        return {
            "schema_version": SCHEMA_VERSION,
            "versions": package_versions(),
            "seconds": self.seconds,
            "all_as_expected": not self.unexpected,
            "results": [{**theorem_summary(by_id[r.theorem]), **r.to_dict()} for r in self.results],
        }


def theorem_summary(t: Theorem) -> dict:
    """The static description of a catalog entry (JSON-ready)."""
    return {
        "id": t.id,
        "title": t.title,
        "source": {"seed": t.source.seed, "paper": t.source.paper, "result": t.source.result,
                   "equation": t.source.equation},
        "variant": t.variant.value,
        "direction": t.direction.value,
        "quantity": t.quantity.value,
        "kind": t.quantity.kind,
        "bound": str(t.bound),
        "bound_latex": t.latex,
        "assumptions": [{"name": a.name, "condition": str(a.condition), "description": a.description}
                        for a in t.assumptions],
        "requires": sorted(t.requires),
        "note": t.note,
    }


def run(selectors: Sequence[str] = (), progress: Callable[[Theorem, int, int], None] | None = None) -> RunResult:
    """Check the selected entries (all by default) over their default grids."""
    start = time.perf_counter()
    theorems = select(list(selectors))
    results = []
    for i, t in enumerate(theorems):
        if progress:
            progress(t, i, len(theorems))
        results.extend(check_application(t, app, companions(app)) for app in t.applications)
    return RunResult(tuple(theorems), tuple(results), time.perf_counter() - start)
