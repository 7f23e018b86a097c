"""results.json follows the shipped JSON Schema and records what a certificate needs."""

from __future__ import annotations

import json
import math

import pytest

from verify.cli import main
from verify.reporting.columns import point_rows, skipped_rows
from verify.reporting.results_json import SCHEMA_VERSION, json_safe, results_document
from verify.runner import run

from .conftest import SMALL

jsonschema = pytest.importorskip("jsonschema")

from verify.reporting.schema import SCHEMA_PATH, schema, validate  # noqa: E402


def test_schema_is_a_valid_draft_2020_12_schema_shipped_in_the_package():
    assert SCHEMA_PATH.is_file() and SCHEMA_PATH.parent.name == "reporting"
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["properties"]["schema_version"]["const"] == SCHEMA_VERSION


def test_report_results_follow_the_schema(small_report, small_results):
    validate(small_results)
    assert {r["id"] for r in small_results["results"]} == set(small_results["run"]["theorems"])
    for r in small_results["results"]:
        for s in json.loads((small_report / r["figure"]["data"]).read_text()):
            validate(s, "sweep")


def test_run_json_follows_the_schema(tmp_path):
    path = tmp_path / "run.json"
    assert main(["run", "--only", "chourasia2021.lemma5", "--json", str(path), "--quiet"]) == 0
    data = json.loads(path.read_text())
    validate(data)
    assert data["timing"]["run_id"] is None


def test_a_broken_certificate_is_rejected(small_results):
    bad = json.loads(json.dumps(small_results))
    bad["results"][0]["points"]["verdict"]["codes"][0] = "HOLDS"
    with pytest.raises(jsonschema.ValidationError):
        validate(bad)
    bad = json.loads(json.dumps(small_results))
    del bad["results"][0]["points"]["truth"]["upper"]
    with pytest.raises(jsonschema.ValidationError):
        validate(bad)


def test_points_carry_bound_truth_interval_lower_bound_and_verdict():
    data = results_document(run(["chourasia2021.corollary2.appendix"], seed=7, backend="numpy"))
    assert data["run"]["seed"] == 7 and data["run"]["backend"] == "numpy"
    assert {"python", "dp-verify", "sympy"} <= set(data["run"]["versions"])
    r = data["results"][0]
    assert r["id"] == "chourasia2021.corollary2.appendix" and r["source"]["seed"].endswith(".txt")
    assert r["bound"] and r["bound_latex"] and r["statement_latex"].startswith("R_{")
    points = point_rows(r["points"], r["theorem"], r["family"])
    p = points[0]
    assert p["truth"]["lower"] <= p["truth"]["value"] <= p["truth"]["upper"] and p["truth"]["method"] == "exact"
    assert p["verdict"] == "HOLDS" and p["ratio"] == pytest.approx(p["bound"] / p["truth"]["value"])
    lowers = [q["lower"] for q in points if q["lower"]]
    assert lowers and all(q["theorem"] == "chourasia2021.theorem3" and q["direction"] == "lower" for q in lowers)


def test_skipped_points_name_the_assumption_that_excluded_them():
    r = results_document(run(["chourasia2021.lemma5"]))["results"][0]  # (the selector also takes lemma5.lsi_start)
    skipped = skipped_rows(r["skipped_points"])
    assert r["n_skipped"] == len(skipped) == sum(r["skipped_by"].values()) > 0
    assert {s["assumption"] for s in skipped} == set(r["skipped_by"]) == {"step_size"}
    status = {a["name"]: a["status"] for a in r["assumptions"]}
    assert status["step_size"]["n_excluded"] == r["n_skipped"]
    assert all(s["holds_at_checked_points"] and s["n_checked"] == r["n_points"] for s in status.values())
    assert all(s["params"]["eta"] * s["params"]["lam"] >= 1 for s in skipped)  # eta < 1/beta, beta = lam
    assert all(p["params"]["eta"] * p["params"]["lam"] < 1 for p in point_rows(r["points"], r["theorem"], r["family"]))


def test_non_finite_numbers_become_strict_json():
    data = json_safe({"a": [math.inf, -math.inf, math.nan, 1.5], "b": {"c": None}})
    assert json.dumps(data, allow_nan=False) == '{"a": ["Infinity", "-Infinity", "NaN", 1.5], "b": {"c": null}}'


def test_small_selection_is_the_one_the_fixture_uses():
    assert SMALL == ("chourasia2021.theorem3",)
