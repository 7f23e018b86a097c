"""Fixtures of the reporting tests: one small report (Theorem 3 and its variants), built once per session."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
from pathlib import Path

import pytest
import sympy as sp

import verify.catalog
from verify.symbols import eta

SMALL = ("chourasia2021.theorem3",)  # Theorem 3 and its four variants, two of them expected VIOLATED
BROKEN_ID = "chourasia2021.corollary2.appendix"  # an upper bound whose grid has eta = 0.5


def needs_report_extra() -> None:
    for module in ("matplotlib", "jinja2"):
        pytest.importorskip(module, reason=f"the report extra ({module}) is not installed", exc_type=ImportError)


@pytest.fixture(scope="session")
def small_report(tmp_path_factory) -> Path:
    """A report of SMALL written by `verify report --out DIR` (serial plotting). Every test only reads it, so under
    pytest-xdist the first worker to need it writes it and the others read it (as tests/conftest.py's catalog_run:
    a folder in the session's shared temporary folder, behind a lock; ~20 s of CPU a worker before)."""
    needs_report_extra()
    from verify.cli import main

    if "PYTEST_XDIST_WORKER" not in os.environ:
        out = tmp_path_factory.mktemp("small") / "report"
        assert main(["report", "--only", *SMALL, "--out", str(out), "--quiet"]) == 0
        return out
    shared = tmp_path_factory.getbasetemp().parent
    out, written = shared / "small_report" / "report", shared / "small_report.written"
    with open(shared / "small_report.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not written.exists():
            out.parent.mkdir(exist_ok=True)
            assert main(["report", "--only", *SMALL, "--out", str(out), "--quiet"]) == 0
            written.touch()
    return out


@pytest.fixture(scope="session")
def small_results(small_report) -> dict:
    return json.loads((small_report / "results.json").read_text(encoding="utf-8"))


@pytest.fixture
def broken_catalog(monkeypatch):
    """BROKEN_ID's bound times 1 + x^2/(x^2 + x^4), x = eta - 1/2: still an upper bound, but 0/0 (a
    ParameterError) at the grid's eta = 0.5."""
    t = verify.catalog.CATALOG[BROKEN_ID]
    x = eta - sp.Rational(1, 2)
    broken = dataclasses.replace(t, bound=t.bound * (1 + x**2 / (x**2 + x**4)))
    monkeypatch.setitem(verify.catalog.CATALOG, BROKEN_ID, broken)
    return broken


def strip_timing(data):
    """results.json without its clock-dependent fields (`timing` and every `seconds`)."""
    if isinstance(data, dict):
        return {k: strip_timing(v) for k, v in data.items() if k not in ("timing", "seconds")}
    if isinstance(data, list):
        return [strip_timing(v) for v in data]
    return data
