"""Performance work must not change a verdict: the whole catalog, checked now (the suite's one whole-catalog run,
tests/conftest.py), against the verdicts, counts and grid counterexamples recorded before it
(tests/data/catalog_verdicts.json, seed 0)."""

from __future__ import annotations

import json
from pathlib import Path

from verify.runner import run

RECORDED = json.loads((Path(__file__).parent / "data" / "catalog_verdicts.json").read_text())


def _by_key(entries: list[dict]) -> dict[tuple[str, str], dict]:
    return {(e["theorem"], e["family"]): e for e in entries}


def _current(results) -> dict[tuple[str, str], dict]:
    out = {}
    for r in results:
        worst = r.worst
        violated = worst is not None and worst.verdict.value == "VIOLATED"
        out[(r.theorem, r.family)] = {
            "verdict": r.status, "n_skipped": r.skipped, "counts": {v.value: r.count(v) for v in type(r.verdict)},
            "counterexample": {"origin": worst.origin, "params": worst.params} if violated else None,
            "found": r.search.found if r.search else None}
    return out


def test_grid_verdicts_counts_and_counterexamples_are_unchanged(catalog_grid):
    grid_run = _current(catalog_grid.values())
    recorded = _by_key(RECORDED["grid"])
    assert set(grid_run) == set(recorded)
    for key, now in grid_run.items():
        before = recorded[key]
        assert (key, now["verdict"], now["counts"], now["n_skipped"]) == (
            key, before["verdict"], before["counts"], before["n_skipped"])
        assert now["counterexample"] == before["counterexample"], key


def test_default_run_verdicts_and_falsifier_findings_are_unchanged(catalog_run):
    now = _current(catalog_run)
    recorded = _by_key(RECORDED["falsifier"])
    assert set(now) == set(recorded)
    for key, before in recorded.items():
        assert (key, now[key]["verdict"], now[key]["found"]) == (key, before["verdict"], before["found"])


def test_the_grid_view_of_an_entry_is_its_falsify_0_run():
    """The shared run's grid view (tests/conftest.py) equals a falsify=0 run, on an entry whose falsifier finds a
    counterexample (it joins the points and the verdict) and one where it finds none."""
    from conftest import grid_only, untimed

    for selector in ("feldman2018.lemma21.expansive", "chourasia2021.theorem3.exact"):
        searched, = run([selector], falsify=100).results[:1]
        plain, = run([selector], falsify=0).results[:1]
        assert untimed(grid_only(searched).to_dict()) == untimed(plain.to_dict())
