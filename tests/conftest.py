"""Session fixtures: the whole catalog is run once (seed 0, the default falsifier) and every test that needs a
catalog entry's result reads it from there."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pickle
import sys

import pytest
from hypothesis import HealthCheck, settings
from hypothesis_budget import THOROUGH  # tests/ is on the path (pytest's rootdir-based imports)

from verify.cli import single_threaded_blas

# No test may depend on the machine's speed: hypothesis's per-example deadline (200 ms by default) and its too-slow
# health check fail a test on a loaded machine; every test's settings start from this profile (explicit settings
# made after it inherit it). VERIFY_HYPOTHESIS_PROFILE=thorough (tests/hypothesis_budget.py) draws the large counts:
# 500 examples where a test sets none, and each test's own thorough count where it sets one.
settings.register_profile("verify", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("verify-thorough", parent=settings.get_profile("verify"), max_examples=500)
settings.load_profile("verify-thorough" if THOROUGH else "verify")

if "numpy" not in sys.modules:  # as a `verify` process does: one BLAS thread per (forked) process
    single_threaded_blas()

from verify.checker import ApplicationResult, aggregate  # noqa: E402 - NumPy loads after the BLAS setting


def untimed(obj):
    """`obj` (a result's dict) without the clock fields (every field named `seconds`, see verify.runner)."""
    if isinstance(obj, dict):
        return {k: untimed(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [untimed(v) for v in obj]
    return obj


def grid_only(result: ApplicationResult) -> ApplicationResult:
    """`result` as a falsify=0 run gives it: the falsifier's counterexample point and search summary dropped, the
    verdict aggregated over the grid alone (check_application's rule)."""
    points = tuple(p for p in result.points if p.origin != "falsifier")
    return dataclasses.replace(result, points=points, verdict=aggregate(points, result.errors), search=None)


@pytest.fixture(scope="session")
def catalog_run(tmp_path_factory) -> tuple[ApplicationResult, ...]:
    """Every catalog entry, checked over its grid and searched by the falsifier (seed 0, verify's default), with up
    to 4 worker processes: the one whole-catalog run of the suite. Under pytest-xdist the first worker to need it
    makes it and the others read it (pytest-xdist's recipe for a session fixture made once: a file in the session's
    shared temporary folder, behind a lock)."""
    from verify.runner import run

    if "PYTEST_XDIST_WORKER" not in os.environ:
        return run(workers=None).results
    shared = tmp_path_factory.getbasetemp().parent
    made = shared / "catalog_run.pickle"
    with open(shared / "catalog_run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.exists():
            return pickle.loads(made.read_bytes())
        results = run(workers=None).results
        made.write_bytes(pickle.dumps(results))
        return results


@pytest.fixture(scope="session")
def catalog_grid(catalog_run) -> dict[tuple[str, str], ApplicationResult]:
    """(theorem id, family) -> the entry's grid result (`grid_only`)."""
    return {(r.theorem, r.family): grid_only(r) for r in catalog_run}

