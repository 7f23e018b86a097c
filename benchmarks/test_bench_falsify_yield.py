"""Falsifier yield (issue 22): of the points a fixed-size search draws, how many are checked (a truth computed and a
verdict decided) rather than excluded by a condition, undefined, capped or undecided; per family, over every catalog
application (and, on the families no catalog entry uses, the always-true lower bound -1 on their first quantity).

    .venv/bin/python -m pytest benchmarks/test_bench_falsify_yield.py --benchmark-enable --benchmark-only

Each benchmark times one family's searches and records each search's counts in `extra_info`; the table of all of them
is printed at the end of the session.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verify.catalog import CATALOG
from verify.families import FAMILIES
from verify.model import Application, Theorem
from verify.testing.falsify import SearchOutcome, search_outcome, user_theorem

EXAMPLES = 40  # points per search
BUDGET_S = 30.0  # wall-clock cap per search: a search of expensive truths may stop before EXAMPLES points
SEED = 0


def _searches() -> dict[str, list[tuple[Theorem, Application]]]:
    """(theorem, application) pairs per family: the catalog's, else the lower bound -1 on the first quantity."""
    out: dict[str, list[tuple[Theorem, Application]]] = {name: [] for name in sorted(FAMILIES)}
    for theorem in CATALOG.values():
        for app in theorem.applications:
            out[app.family].append((theorem, app))
    for name, pairs in out.items():
        if not pairs:
            theorem = user_theorem("-1", name, "lower", quantity=next(iter(FAMILIES[name].truths)))
            pairs.append((theorem, theorem.applications[0]))
    return out


SEARCHES = _searches()
ROWS: dict[str, list[SearchOutcome]] = {}


def _row(family: str, outcomes: list[SearchOutcome]) -> str:
    tried = sum(o.tried for o in outcomes)
    checked = sum(o.checked for o in outcomes)
    why: dict[str, int] = {}
    for o in outcomes:
        for reason, count in [*o.excluded.items(), ("undefined", o.undefined), ("capped", o.capped),
                              ("failed", o.failed), ("uncertified", o.uncertified), ("undecided", o.undecided)]:
            if count:
                why[reason] = why.get(reason, 0) + count
    lost = ", ".join(f"{k} {v}" for k, v in sorted(why.items(), key=lambda kv: -kv[1]))
    return f"{family:34s} {len(outcomes):4d} {tried:6d} {checked:7d} {checked / max(tried, 1):6.2f}  {lost}"


@pytest.fixture(scope="module", autouse=True)
def yield_table(request) -> Iterator[None]:
    """Print the per-family table once every benchmark of this module has run."""
    yield
    if not ROWS:
        return
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"falsifier yield ({EXAMPLES} examples, seed {SEED}, budget {BUDGET_S:g} s per search)",
             f"{'family':34s} apps  tried checked  yield  not checked, by reason"]
    lines += [_row(f, ROWS[f]) for f in sorted(ROWS, key=lambda f: sum(o.checked for o in ROWS[f])
                                                / max(1, sum(o.tried for o in ROWS[f])))]
    tried = sum(o.tried for rows in ROWS.values() for o in rows)
    checked = sum(o.checked for rows in ROWS.values() for o in rows)
    lines.append(f"all: {checked}/{tried} = {checked / max(tried, 1):.2f}")
    with capture.global_and_fixture_disabled():
        for line in lines:
            reporter.write_line(line)


def _search_family(family: str) -> list[SearchOutcome]:
    return [search_outcome(t, app, max_examples=EXAMPLES, budget_s=BUDGET_S, seed=SEED)
            for t, app in SEARCHES[family]]


@pytest.mark.parametrize("family", sorted(SEARCHES))
def test_falsifier_yield(benchmark, family):
    outcomes = benchmark.pedantic(_search_family, args=(family,), rounds=1, iterations=1)
    ROWS[family] = outcomes
    benchmark.extra_info["searches"] = [
        {"theorem": o.theorem, "tried": o.tried, "checked": o.checked, "excluded": dict(o.excluded),
         "undefined": o.undefined, "capped": o.capped, "failed": o.failed, "uncertified": o.uncertified,
         "undecided": o.undecided} for o in outcomes]
    benchmark.extra_info["yield"] = sum(o.checked for o in outcomes) / max(1, sum(o.tried for o in outcomes))
