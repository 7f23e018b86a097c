"""Schema 3 writes points as columns: every point is still there, exactly, and old files are refused clearly."""

from __future__ import annotations

import json

import pytest

from verify.checker import _point_dict
from verify.errors import ParameterError
from verify.reporting.columns import dump_results, load_results, point_rows, skipped_rows
from verify.reporting.results_json import json_safe, results_document
from verify.runner import run

SELECTION = ("chourasia2021.theorem3", "chourasia2021.corollary2.appendix", "chourasia2021.lemma5",
             "wang2021.noisysgd_tcdp")


@pytest.fixture(scope="module")
def outcome():
    return run(SELECTION, falsify=20)


def test_columns_give_back_every_point_and_skipped_point_exactly(outcome, tmp_path):
    path = tmp_path / "results.json"
    path.write_text(dump_results(results_document(outcome)))
    data = load_results(path)
    by_key = {(r.theorem, r.family): r for r in outcome.results}
    seen = {"certificate": 0, "companions": 0, "falsifier": 0, "monte-carlo": 0, "skipped": 0}
    for entry in data["results"]:
        r = by_key[(entry["theorem"], entry["family"])]
        rows = point_rows(entry["points"], entry["theorem"], entry["family"])
        assert rows == json.loads(json.dumps(json_safe([_point_dict(p) for p in r.points])))
        assert skipped_rows(entry["skipped_points"]) == json_safe([s.to_dict() for s in r.skipped_points])
        seen["certificate"] += sum(p.certificate is not None for p in r.points)
        seen["companions"] += sum(bool(p.companions) for p in r.points)
        seen["falsifier"] += sum(p.origin == "falsifier" for p in r.points)
        seen["monte-carlo"] += sum(p.truth.ess is not None for p in r.points)
        seen["skipped"] += r.skipped
    assert all(seen.values()), seen  # the selection exercises every optional column


def test_an_old_row_layout_file_is_refused_with_the_reason(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema_version": "2.2", "results": [{"points": [{"bound": 1.0}]}]}))
    with pytest.raises(ParameterError, match=r"schema 2\.2.*schema 3\.x.*re-run `verify run --json`"):
        load_results(old)


def test_columnar_results_follow_the_schema(outcome):
    pytest.importorskip("jsonschema")
    from verify.reporting.schema import validate

    validate(json.loads(dump_results(results_document(outcome))))
