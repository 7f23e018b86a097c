"""verify.results_frame: a results file as a DataFrame whose rows and counts are those of the JSON it reads."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

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


# ---- any file load_results accepts gives a frame (issue 47, section 4) ----------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.just(10**400), st.floats(allow_nan=False),
              st.sampled_from(["Infinity", "-Infinity", "NaN", "", "x", "HOLDS"]), st.text(max_size=5)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)), max_leaves=6)


def _paths(obj, prefix=()):
    """Every node under `obj` (lists: their first two items), as key paths."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:2]):
            yield from _paths(v, (*prefix, i))


def _mutated(data: dict, path: tuple, action: str, value) -> dict:
    """A copy of `data` with the node at `path` deleted, replaced by `value`, emptied or (a list) shortened. Only the
    containers on the path are copied (`data` is left as it was; a whole copy per mutation was a third of the test's
    time)."""
    data = copy.copy(data)
    parent = data
    for key in path[:-1]:
        parent[key] = copy.copy(parent[key])
        parent = parent[key]
    if isinstance(parent[path[-1]], list):  # shortened in place below
        parent[path[-1]] = list(parent[path[-1]])
    node = parent[path[-1]]
    if action == "delete":
        del parent[path[-1]]
    elif action == "empty" and isinstance(node, (list, dict)):
        parent[path[-1]] = type(node)()
    elif action == "shorten" and isinstance(node, list) and node:
        node.pop()
    else:
        parent[path[-1]] = value
    return data


def _frames_or_one_clear_error(doc: dict, path) -> bool:
    """Write `doc` to `path`: `results_frame` refuses it in one line naming the file, or gives both frames (True)."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        frames = verify.results_frame(path), verify.results_frame(path, points=True)
    except ParameterError as err:
        assert "\n" not in str(err) and str(path) in str(err)
        return False
    assert all(type(f).__name__ == "DataFrame" for f in frames)
    return True


KINDS = [None, True, -1, 10**400, "x", [1], {}]  # a value of each JSON kind (a negative count, one no float holds)


@pytest.fixture(scope="module")
def small_doc(small_report) -> dict:
    """The small report's results.json, read once (the test below copies what it mutates)."""
    return json.loads((small_report / "results.json").read_text(encoding="utf-8"))


def test_each_field_of_a_result_deleted_or_of_another_kind_gives_a_frame_or_one_clear_error(small_doc, tmp_path):
    """Every field of one result (one with a counterexample, alone in the file: the others have the same fields) and
    of its counterexample, deleted or replaced by a value of each JSON kind, one at a time: the contract of the fuzz
    below, for every field for sure (the fuzz draws combinations and the nodes below)."""
    result = next(r for r in small_doc["results"] if r["counterexample"])
    base = {**small_doc, "results": [result]}
    assert _frames_or_one_clear_error(base, tmp_path / "results.json")
    paths = [("results", 0, k) for k in result]
    paths += [("results", 0, "counterexample", k) for k in result["counterexample"]]
    for path in paths:
        for action, value in [("delete", None)] + [("replace", v) for v in KINDS]:
            _frames_or_one_clear_error(_mutated(base, path, action, value), tmp_path / "results.json")


# 60 examples (300 thorough, tests/hypothesis_budget.py), each two results_frame calls on the whole file: a field
# deleted or replaced alone is the test above's, every one of them; here one to three nodes at once, at any depth
@settings(max_examples=examples(60, 300), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_file_load_results_accepts_gives_a_frame(small_doc, data, tmp_path):
    """A small valid results.json (a report's, with counterexamples), one to three nodes of its results deleted,
    replaced by any JSON value, emptied or shortened: `results_frame` refuses it in one line naming the file (the
    documented ParameterError) or returns both frames; a KeyError or TypeError (a dropped `id` or `n_errors`, a
    counterexample that is a list) was what load_results let through."""
    doc = small_doc
    paths = [p for p in _paths(doc) if len(p) >= 3 and p[0] == "results"]
    fields = [p for p in paths if len(p) == 3 or p[2] == "counterexample"]  # what a result's frame row reads
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.one_of(st.sampled_from(fields), st.sampled_from(paths)))
        try:
            doc = _mutated(doc, path, data.draw(st.sampled_from(["delete", "replace", "empty", "shorten"])),
                           data.draw(JSON_VALUES))
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed or replaced the path
            continue
    _frames_or_one_clear_error(doc, tmp_path / "results.json")
