"""Two runs with the same seed give the same results.json (apart from timing fields) and the same plots."""

from __future__ import annotations

import json
import os

import pytest

from verify.backend import ENV_VAR
from verify.errors import ParameterError
from verify.reporting.results_json import results_document
from verify.runner import run

from .conftest import needs_report_extra, strip_timing

SELECTION = ("chourasia2021.theorem3.cor1_start",)  # VIOLATED: its plots carry counterexample markers


def test_same_seed_same_results_and_plots(tmp_path):
    needs_report_extra()
    from verify.reporting import write_report

    a = write_report(run(SELECTION, seed=3), tmp_path / "a", workers=1)
    b = write_report(run(SELECTION, seed=3), tmp_path / "b", workers=1)
    ja, jb = (json.loads((d / "results.json").read_text()) for d in (a, b))
    assert ja["timing"]["run_id"] == "a" and jb["timing"]["run_id"] == "b"  # timing fields do differ
    assert strip_timing(ja) == strip_timing(jb)
    assert ja["run"]["seed"] == 3
    plots = sorted(p.name for p in (a / "plots").iterdir())
    assert plots and plots == sorted(p.name for p in (b / "plots").iterdir())
    for name in plots:
        assert (a / "plots" / name).read_bytes() == (b / "plots" / name).read_bytes(), name
    assert (a / "report.md").read_text() == (b / "report.md").read_text()  # no run id, clock or wall time: diffable


def test_parallel_and_serial_runs_agree():
    serial = results_document(run(("chourasia2021.theorem3",), workers=1))
    parallel = results_document(run(("chourasia2021.theorem3",), workers=2))
    assert strip_timing(parallel) == strip_timing(serial)


def test_backend_is_used_for_the_run_and_recorded(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    seen = []
    run(("chourasia2021.theorem3.exact",), lambda *_: seen.append(os.environ.get(ENV_VAR)), backend="numpy")
    assert seen == ["numpy"] and ENV_VAR not in os.environ  # set during the run only
    monkeypatch.setenv(ENV_VAR, "array_api_strict")
    assert run(("chourasia2021.theorem3.exact",)).backend == "array_api_strict"  # the default follows the env
    with pytest.raises(ParameterError, match="backend"):
        run(("chourasia2021.theorem3.exact",), backend="no-such-backend")


def test_the_sweeps_start_from_the_runs_truths(tmp_path, monkeypatch):
    """A report computes each truth once: its sweeps start from the run's truths (`RunResult.truths`: the grid and
    falsifier points they pass through are not computed again), and draw what sweeps computed afresh draw."""
    needs_report_extra()
    import dataclasses
    from collections import Counter

    from verify.pipeline import memo
    from verify.reporting import write_report

    computed: Counter = Counter()
    truth = memo.isolation.truth

    def counted(family, quantity, params):
        computed[(family.name, quantity, tuple(sorted(params.items())))] += 1
        return truth(family, quantity, params)

    monkeypatch.setattr(memo.isolation, "truth", counted)
    assert not run(SELECTION, workers=1, falsify=0).truths  # kept only when asked for
    computed.clear()
    outcome = run(SELECTION, workers=1, falsify=20, keep_truths=True)
    assert outcome.truths and set(outcome.truths) == set(computed)
    shared = write_report(outcome, tmp_path / "shared", workers=1)
    assert computed and max(computed.values()) == 1, computed.most_common(3)
    afresh = write_report(dataclasses.replace(outcome, truths={}), tmp_path / "afresh", workers=1)
    assert max(computed.values()) == 2  # the sweeps did pass through the run's points
    plots = sorted(p.name for p in (shared / "plots").iterdir())
    assert plots == sorted(p.name for p in (afresh / "plots").iterdir())
    for name in plots:
        assert (shared / "plots" / name).read_bytes() == (afresh / "plots" / name).read_bytes(), name


def test_figure_tasks_start_with_the_costliest_family():
    """Longest-processing-time order: an expensive family's few figures (the Monte-Carlo NMF sweeps) go before a
    cheap family's many, as the run orders its entries."""
    from verify.reporting.build import _by_family, _FigureJob

    def jobs(family: str, count: int) -> list[_FigureJob]:
        return [_FigureJob(f"{family}{i}", "t", family, {}, False) for i in range(count)]

    groups = _by_family([*jobs("noisy_gd_quadratic", 9), *jobs("nmf_hfl_mc", 1), *jobs("two_point_mean", 3)])
    assert [g[0].family for g in groups] == ["nmf_hfl_mc", "noisy_gd_quadratic", "two_point_mean"]
