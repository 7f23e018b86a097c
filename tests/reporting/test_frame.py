"""verify.results_frame: a results file as a DataFrame whose rows and counts are those of the JSON it reads."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pandas")

import verify  # noqa: E402
from verify.errors import ParameterError  # noqa: E402


def test_one_row_per_result_and_per_point_with_the_files_counts(small_report, small_results):
    path = small_report / "results.json"
    frame = verify.results_frame(path)
    assert list(frame["id"]) == [r["id"] for r in small_results["results"]]
    assert list(frame["verdict"]) == [r["verdict"] for r in small_results["results"]]
    assert list(frame["n_points"]) == [r["n_points"] for r in small_results["results"]]
    violated = frame[frame["verdict"] == "VIOLATED"]
    assert violated["counterexample"].notna().all() and violated["counterexample"].str.contains("=").all()
    points = verify.results_frame(path, points=True)
    assert len(points) == sum(r["n_points"] for r in small_results["results"])
    for r in small_results["results"]:
        mine = points[points["id"] == r["id"]]
        assert mine["verdict"].value_counts().to_dict() == {k: n for k, n in r["counts"].items() if n}


def test_a_file_that_is_not_a_results_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ParameterError, match="x.json"):
        verify.results_frame(bad)
