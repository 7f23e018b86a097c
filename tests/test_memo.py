"""The run-wide truth memo: one computation per (family, quantity, point) inside a run, none outside, no failures
kept; entries on one family run in one worker group."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import untimed

from verify.catalog import select
from verify.errors import ParameterError
from verify.families import family
from verify.model import Quantity
from verify.pipeline.memo import shared_truths, truth_of
from verify.reporting.results_json import results_document
from verify.runner import family_groups, run

POINT = {"alpha": 2.0, "sigma": 1.0, "eta": 0.1, "n": 10.0, "K": 5.0, "S": 1.0, "lam": 1.0, "start_var": 0.0}


def _counting():
    fam = family("noisy_gd_quadratic")
    calls = []
    original = fam.truths[Quantity.RENYI]

    def counted(**params):
        calls.append(params)
        return original(**params)

    counting = dataclasses.replace(fam, truths={**fam.truths, Quantity.RENYI: counted})
    return counting, calls


def test_a_truth_is_computed_once_inside_a_run_and_every_time_outside():
    fam, calls = _counting()
    with shared_truths():
        first = truth_of(fam, Quantity.RENYI, POINT)
        assert truth_of(fam, Quantity.RENYI, dict(reversed(list(POINT.items())))) is first
        truth_of(fam, Quantity.RENYI, {**POINT, "K": 6.0})
    assert len(calls) == 2
    truth_of(fam, Quantity.RENYI, POINT)
    truth_of(fam, Quantity.RENYI, POINT)
    assert len(calls) == 4


def test_a_failing_truth_is_not_memoised():
    fam = family("noisy_gd_quadratic")
    calls = []

    def failing(**params):
        calls.append(params)
        raise ParameterError("no truth here")

    broken = dataclasses.replace(fam, truths={Quantity.RENYI: failing})
    with shared_truths():
        for _ in range(2):
            with pytest.raises(ParameterError):
                truth_of(broken, Quantity.RENYI, POINT)
    assert len(calls) == 2


def test_family_groups_cover_every_job_once_with_one_family_each():
    theorems = select([])
    jobs = [(t, i) for t in theorems for i in range(len(t.applications))]
    groups = family_groups(jobs)
    assert sorted(k for g in groups for k in g) == list(range(len(jobs)))
    for g in groups:
        assert len({jobs[k][0].applications[jobs[k][1]].family for k in g}) == 1


def test_parallel_family_groups_give_the_serial_results():
    selection = ("chourasia2021.theorem3", "feldman2018.lemma21", "wang2021.lemma12_1")
    serial, parallel = (untimed(results_document(run(selection, workers=w, falsify=10))["results"]) for w in (1, 2))
    assert serial == parallel
