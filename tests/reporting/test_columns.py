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
        assert len(text) <= len(dump_results(json_safe({"column": column})))


def test_grid_parameter_columns_are_written_coded(outcome):
    """A grid's parameter columns repeat a few values: they are written coded (the whole catalog's results.json went
    from 5.8 to 4.2 MB; its 5 MB target is held in `nox -s bench`, not here)."""
    data = json.loads(dump_results(results_document(outcome)))
    entry = next(r for r in data["results"] if r["theorem"] == "chourasia2021.theorem3")
    assert all(isinstance(col, dict) and len(col["levels"]) < len(col["codes"])
               for col in entry["points"]["params"].values())


def _with(results, wanted):
    return next(r["points"] for r in results if wanted(r["points"]))


def _damage_seconds(results):  # a coded column of seconds: accepted, then read as a list (KeyError) before
    c = _with(results, lambda p: p["certificates"]["index"])["certificates"]
    c["seconds"] = {"levels": [0.5], "codes": [0] * len(c["index"])}
    return True  # a valid column: the file must read


def _damage_missing_truth_key(results):
    del _with(results, lambda p: p["n"])["truth"]["ess"]


def _damage_companion_value(results):
    points = _with(results, lambda p: any(c["direction"] == "lower" for c in p["companions"]))
    companion = next(c for c in points["companions"] if c["direction"] == "lower")
    values = _unpacked_list(companion["value"])
    values[next(i for i, code in enumerate(companion["verdict"]["codes"]) if code is not None)] = None
    companion["value"] = values


def _damage_huge_value(results):
    points = _with(results, lambda p: p["truth"]["rel_pad"] is not None)
    values = _unpacked_list(points["truth"]["value"])
    values[next(i for i, r in enumerate(_unpacked_list(points["truth"]["rel_pad"])) if r is not None)] = 10**400
    points["truth"]["value"] = values


def _unpacked_list(column):
    from verify.reporting.columns import _unpacked

    return list(_unpacked(column))


@pytest.mark.parametrize("damage", [_damage_seconds, _damage_missing_truth_key, _damage_companion_value,
                                    _damage_huge_value])
def test_a_file_load_results_accepts_is_one_point_rows_reads(outcome, damage, tmp_path):
    """Damaged files a hostile review found: load_results accepted them and point_rows then failed (KeyError,
    TypeError, OverflowError). Each is now refused in one line, or (a coded column of seconds) read."""
    data = json.loads(dump_results(results_document(outcome)))
    valid = damage(data["results"])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        loaded = load_results(path)
    except ParameterError as err:
        assert not valid and "\n" not in str(err) and str(path) in str(err)
        return
    assert valid
    for r in loaded["results"]:
        point_rows(r["points"], r["theorem"], r["family"])
        skipped_rows(r["skipped_points"])


def test_theorem_values_equal_to_params_but_of_another_type_read_back_as_they_were(outcome, tmp_path):
    """`theorem_values` is written "=params" only where it is the params column value for value, type and sign
    included: an integer 1 beside a parameter 1.0 read back as 1.0 before."""
    import dataclasses

    result, name = next((r, k) for r in outcome.results if r.points for k, v in r.points[0].params.items()
                        if isinstance(v, float) and v.is_integer() and k in r.points[0].theorem_values)
    changed = dataclasses.replace(result.points[0], theorem_values={
        **result.points[0].theorem_values, name: int(result.points[0].params[name])})
    doc = results_document(dataclasses.replace(outcome, results=(dataclasses.replace(
        result, points=(changed, *result.points[1:])),)))
    path = tmp_path / "results.json"
    path.write_text(dump_results(doc))
    rows = point_rows(load_results(path)["results"][0]["points"], result.theorem, result.family)
    value = rows[0]["theorem_values"][name]
    assert type(value) is int and value == int(result.points[0].params[name])
