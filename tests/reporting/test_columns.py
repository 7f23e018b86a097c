"""Schema 3 writes points as columns: every point is still there, exactly, and old files are refused clearly."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


_ALIKE = [0.0, -0.0, 1, 1.0, True, math.nan, math.inf, -math.inf, "1.0", "Infinity", None]  # equal or alike, not same
_POOL = st.one_of(st.sampled_from(_ALIKE), st.floats(allow_nan=True, allow_infinity=True),
                  st.integers(-10**20, 10**20), st.text(alphabet="0123456789.e-", min_size=1, max_size=12))


@settings(max_examples=200, deadline=None)
@given(pool=st.lists(_POOL, min_size=1, max_size=6), picks=st.lists(st.integers(0, 5), max_size=80))
@example(pool=_ALIKE[:6], picks=[0, 1, 2, 3, 4, 5] * 10)
def test_a_coded_column_of_numbers_reads_back_every_value_exactly(pool, picks):
    """Schema 3.4 codes a column of numbers where that is shorter: written and read back through a results file,
    every entry is what it was, its type and sign included (-0.0 and 0.0, 1 and 1.0, NaN are different levels)."""
    from verify.reporting.columns import _packed, _unpacked

    column = [pool[i % len(pool)] for i in picks]
    packed = _packed(column)
    text = dump_results(json_safe({"column": packed}))
    back = _unpacked(json.loads(text)["column"])
    expected = json.loads(dump_results(json_safe({"column": column})))["column"]
    assert [(type(v), repr(v)) for v in back] == [(type(v), repr(v)) for v in expected]
    if isinstance(packed, dict):  # coded only where the file gets shorter
        assert len(text) < len(dump_results(json_safe({"column": column}))) + 16


def test_grid_columns_are_coded_and_the_catalog_file_stays_small(outcome):
    """A grid's parameter columns repeat a few values: they are written coded (the whole catalog's results.json went
    from 5.8 to about 4.4 MB; the 5 MB target is held in `nox -s bench`)."""
    data = json.loads(dump_results(results_document(outcome)))
    entry = next(r for r in data["results"] if r["theorem"] == "chourasia2021.theorem3")
    assert all(isinstance(col, dict) and len(col["levels"]) < len(col["codes"])
               for col in entry["points"]["params"].values())
