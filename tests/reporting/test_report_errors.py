"""A check that fails with an error (not an excluded assumption) is an ERROR entry: shown, never dropped."""

from __future__ import annotations

import json

from verify.checker import check_application
from verify.cli import main
from verify.results import Verdict

from .conftest import BROKEN_ID, needs_report_extra


def test_errors_are_recorded_and_make_the_result_verdict_less(broken_catalog):
    r = check_application(broken_catalog, broken_catalog.applications[0])
    assert r.errors and r.status == "ERROR" and not r.as_expected
    assert {e.error for e in r.errors} == {"UndefinedBoundError"}  # a ParameterError: the bound is not real there
    assert all(e.params["eta"] == 0.5 for e in r.errors) and "undefined" in r.errors[0].message
    assert r.points and r.verdict is Verdict.INCONCLUSIVE  # the other points are checked; no HOLDS claim
    assert r.to_dict()["verdict"] == "ERROR"


def test_verify_run_exits_1_on_errors(broken_catalog, capsys):
    assert main(["run", "--only", BROKEN_ID, "--quiet"]) == 1
    assert "UNEXPECTED" in capsys.readouterr().out


def test_report_shows_error_entries(broken_catalog, tmp_path, capsys):
    needs_report_extra()
    out = tmp_path / "report"
    assert main(["report", "--only", BROKEN_ID, "--out", str(out), "--quiet"]) == 1
    assert "1 with errors" in capsys.readouterr().out
    data = json.loads((out / "results.json").read_text())
    (r,) = data["results"]
    assert r["verdict"] == "ERROR" and r["n_errors"] == len(r["errors"]) > 0 and not data["all_as_expected"]
    assert data["summary"]["verdicts"]["ERROR"] == 1
    md = (out / "report.md").read_text()
    assert "**ERROR**" in md and "UndefinedBoundError" in md and "no verdict" in md
    html = (out / "index.html").read_text()
    assert 'class="badge error">ERROR' in html and "UndefinedBoundError" in html
    try:
        from verify.reporting.schema import validate
    except ImportError:  # pragma: no cover - jsonschema is in the test extra
        return
    validate(data)
