"""Run catalog entries over their default grids and collect the results of a whole run.

`RunResult.to_dict()` is the JSON certificate documented by `verify/reporting/results.schema.json`; every
field that depends on the clock is named `seconds` or lives under the top-level `timing` object, so two runs
with the same selection, seed and backend give identical JSON apart from those.
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata

import sympy as sp

from verify.catalog import companions, select
from verify.checker import ApplicationResult, check_application
from verify.model import Application, FromFamily, Theorem
from verify.reporting.latex import assumption_latex, statement_latex, to_latex

SCHEMA_VERSION = "2.0"
SCHEMA_FILE = "verify/reporting/results.schema.json"
VERSIONED = ("dp-verify", "sympy", "numpy", "scipy", "mpmath")


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class RunResult:
    """Every selected theorem checked on every family it applies to."""

    theorems: tuple[Theorem, ...]
    results: tuple[ApplicationResult, ...]
    seconds: float
    seed: int = 0
    backend: str = "numpy"
    selectors: tuple[str, ...] = ()
    started: str = field(default_factory=_utc_now)  # UTC, ISO 8601: a timing field

    @property
    def unexpected(self) -> list[ApplicationResult]:
        """Results whose verdict differs from the expected one, and results with errors."""
        return [r for r in self.results if not r.as_expected]

    @property
    def errors(self) -> list[ApplicationResult]:
        return [r for r in self.results if r.errors]

    def to_dict(self, run_id: str | None = None) -> dict:
        """The JSON certificate (see results.schema.json); non-finite floats become "Infinity"/"NaN" strings."""
        by_id = {t.id: t for t in self.theorems}
        results = [result_dict(by_id[r.theorem], r) for r in self.results]
        statuses = [r["verdict"] for r in results]
        return json_safe({
            "schema_version": SCHEMA_VERSION,
            "schema": SCHEMA_FILE,
            "run": {"selectors": list(self.selectors), "seed": self.seed, "backend": self.backend,
                    "versions": package_versions(), "theorems": [t.id for t in self.theorems]},
            "all_as_expected": not self.unexpected,
            "summary": {"n_results": len(results), "n_as_expected": len(results) - len(self.unexpected),
                        "n_unexpected": len(self.unexpected), "n_errors": len(self.errors),
                        "verdicts": {v: statuses.count(v) for v in ("HOLDS", "VIOLATED", "INCONCLUSIVE", "ERROR")},
                        "n_points": sum(len(r.points) for r in self.results),
                        "n_skipped": sum(r.skipped for r in self.results)},
            "results": results,
            "timing": {"run_id": run_id, "started": self.started, "seconds": self.seconds},
        })


def json_safe(obj):
    """A copy of `obj` with non-finite floats as the strings "Infinity", "-Infinity", "NaN" (strict JSON)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


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
        "bound_latex": to_latex(t.bound),
        "statement_latex": statement_latex(t),
        "assumptions": [{"name": a.name, "condition": str(a.condition), "condition_latex": assumption_latex(a),
                         "description": a.description} for a in t.assumptions],
        "requires": sorted(t.requires),
        "note": t.note,
    }


def application_summary(app: Application) -> dict:
    """How an entry is checked on one family: its grid, derived defaults, bound symbols and companions."""
    return {
        "family": app.family,
        "grid": {k: list(v) for k, v in sorted(app.grid.items())},
        "defaults": {k: sp.sstr(v) for k, v in app.defaults.items()},
        "bind": {k: (f"truth of {v.quantity.value}" if isinstance(v, FromFamily) else sp.sstr(v))
                 for k, v in app.bind.items()},
        "companions": list(app.companions),
        "note": app.note,
    }


def result_dict(t: Theorem, r: ApplicationResult) -> dict:
    """One entry's description and its result on one family, with each assumption's status on the grid."""
    summary = theorem_summary(t)
    excluded = r.skipped_by()
    for a in summary["assumptions"]:
        a["status"] = {"holds_at_checked_points": True, "n_checked": len(r.points),
                       "n_excluded": excluded.get(a["name"], 0)}
    app = t.application(r.family)
    return {**summary, "application": application_summary(app) if app else None, **r.to_dict()}


def run(selectors: Sequence[str] = (), progress: Callable[[Theorem, int, int], None] | None = None, *,
        seed: int = 0, backend: str = "numpy") -> RunResult:
    """Check the selected entries (all by default) over their default grids.

    `seed` and `backend` are recorded in the result (and in its JSON) so that a run can be reproduced; the
    current families are exact, so neither changes a value yet.
    """
    started = _utc_now()
    start = time.perf_counter()
    theorems = select(list(selectors))
    results = []
    for i, t in enumerate(theorems):
        if progress:
            progress(t, i, len(theorems))
        results.extend(check_application(t, app, companions(app)) for app in t.applications)
    return RunResult(tuple(theorems), tuple(results), time.perf_counter() - start, int(seed), str(backend),
                     tuple(selectors), started)
