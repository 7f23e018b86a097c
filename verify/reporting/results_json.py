"""A run's JSON certificate (results.json, `verify run --json`): the runner hands its RunResult here, and this module
describes each entry (its claim in text and LaTeX, its assumptions, how it is checked), lays the points out in
columns (verify.reporting.columns) and records the run's facts. Every field that depends on the clock is named
`seconds` or lives under the top-level `timing` object, so two runs with the same selection, seed and backend give
identical JSON apart from those. The schema is verify/reporting/results.schema.json."""

from __future__ import annotations

import copy
import importlib
import math
import os
import platform
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import sympy as sp

from verify._version import __version__
from verify.catalog import CATALOG
from verify.catalog_index import summaries
from verify.model import Application, FromFamily, Theorem
from verify.reporting.columns import point_columns, skipped_columns
from verify.reporting.latex import assumption_latex, statement_latex, to_latex
from verify.results import RESULTS_SCHEMA

if TYPE_CHECKING:  # not imported at run time: the catalog listing's text depends on this module's imports
    from verify.checker import ApplicationResult  # (verify.catalog_index), and printing needs no checker
    from verify.runner import RunResult

SCHEMA_VERSION = "3.4"  # 3: points and skipped points as columns (verify.reporting.columns); 3.1: run.git_commit;
# 3.2: figure.typical; 3.3: falsifier.region; 3.4: columns of numbers coded (levels and codes) where that is shorter
# distributions whose versions a run records, with the module whose __version__ stands in without metadata
VERSIONED = {"dp-verify": "verify", "hypothesis": "hypothesis", "python-flint": "flint", "sympy": "sympy",
             "mpmath": "mpmath", "numpy": "numpy", "scipy": "scipy"}
NOT_INSTALLED = "not installed"


def package_versions() -> dict[str, str]:
    """Python's version, verify's own (`verify`, its __version__) and each VERSIONED distribution's."""
    out = {"python": platform.python_version(), "verify": __version__}
    for dist, module in VERSIONED.items():
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            try:
                out[dist] = str(importlib.import_module(module).__version__)
            except (ImportError, AttributeError):
                out[dist] = NOT_INSTALLED
    return out


@cache
def git_commit() -> str | None:
    """The commit checked out in verify's source tree (`git rev-parse HEAD`) if the package runs from a git checkout
    (its parent folder holds .git), else None; None, silently, without git or on any git error. Computed once per
    process: the commit of the code that was imported."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # the source tree's own repository
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=root, env=env, timeout=10,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) and all(
        c in "0123456789abcdef" for c in commit) else None


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
    """The static description of a catalog entry (JSON-ready): the shipped one (verify.catalog_index) for a catalog
    theorem where the listing matches the sources, printed here otherwise (a theorem of the user's, changed sources)."""
    shipped = summaries().get(t.id) if CATALOG.get(t.id) is t else None
    return copy.deepcopy(shipped) if shipped is not None else printed_summary(t)


def printed_summary(t: Theorem) -> dict:
    """`theorem_summary` printed by SymPy."""
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
        "regimes": [{k: list(v) for k, v in sorted(r.items())} for r in app.regimes],
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
    return {**summary, "application": application_summary(app) if app else None, **r.to_dict(),
            "skipped_points": skipped_columns(r.skipped_points),
            "points": point_columns(r.points, app.companions if app else ())}


def results_document(outcome: RunResult, run_id: str | None = None) -> dict:
    """A run's JSON certificate (results.schema.json): every entry's description and result, the run's facts and
    versions; non-finite floats become "Infinity"/"NaN" strings."""
    by_id = {t.id: t for t in outcome.theorems}
    results = [result_dict(by_id[r.theorem], r) for r in outcome.results]
    statuses = [r["verdict"] for r in results]
    return json_safe({
        "schema_version": SCHEMA_VERSION,
        "schema": RESULTS_SCHEMA,  # verify.runner recognises its own files by it
        "run": {"selectors": list(outcome.selectors), "seed": outcome.seed, "backend": outcome.backend,
                "versions": package_versions(), "git_commit": git_commit(),
                "theorems": [t.id for t in outcome.theorems]},
        "all_as_expected": not outcome.unexpected,
        "summary": {"n_results": len(results), "n_as_expected": len(results) - len(outcome.unexpected),
                    "n_unexpected": len(outcome.unexpected), "n_errors": len(outcome.errors),
                    "verdicts": {v: statuses.count(v) for v in ("HOLDS", "VIOLATED", "INCONCLUSIVE", "ERROR")},
                    "n_points": sum(len(r.points) for r in outcome.results),
                    "n_skipped": sum(r.skipped for r in outcome.results)},
        "results": results,
        "timing": {"run_id": run_id, "started": outcome.started, "seconds": outcome.seconds},
    })
