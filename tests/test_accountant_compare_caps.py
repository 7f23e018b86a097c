"""Issue 47 §3: `verify account --compare` runs the other accountants under verify's own caps (a process of their
own: the memory cap on its address space, the point deadline), and a peer that hits one is reported as such, in the
text and in the JSON, never as a crash and never in place of verify's own answer. Fake peers stand in for the
libraries (installed or not): one that allocates past the cap, one that sleeps past the deadline, one that raises,
one that dies, one that answers NaN, one not installed, and ones that answer below, inside or above the bracket, in
generated lists and orders."""

from __future__ import annotations

import json
import math
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import accountant
from verify import accountant_compare as compare_module
from verify.accountant_compare import (
    CONSERVATIVE,
    FAILED,
    OVER_MEMORY,
    PAST_DEADLINE,
    UNDER,
    WITHIN,
    compare,
)
from verify.cli import main
from verify.limits import memory_cap
from verify.pipeline.isolation import HEADROOM

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the peers run in forked processes")

CAP = 64 << 20
DEADLINE_S = 0.5


@pytest.fixture(scope="module")
def bracket():
    return accountant.epsilon(1e-5, [(0.01, 1.0, 100)], tol=0.1)


@pytest.fixture(autouse=True)
def caps(monkeypatch):
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(CAP))
    monkeypatch.setenv("VERIFY_TRUTH_DEADLINE", str(DEADLINE_S))


def _allocates(_r) -> float:  # past the cap and the isolation's headroom: a MemoryError under RLIMIT_AS
    return float(len(bytearray(2 * (memory_cap() + HEADROOM))))


def _sleeps(_r) -> float:  # 30 s, far past the deadline (and then an answer: without the deadline, a wrong status)
    time.sleep(30)
    return 1.0


def _raises(_r) -> float:
    raise ValueError("a peer's own error")


def _dies(_r) -> float:
    os._exit(9)


def _value(where: str):
    def answer(r) -> float:
        return {"below": r.lower / 2, "inside": (r.lower + r.upper) / 2, "above": r.upper * 2, "nan": math.nan}[where]
    return answer


KINDS = {  # kind: (module the peer needs, its answer, the status it gets, a text its note holds)
    "allocates": ("math", _allocates, OVER_MEMORY, f"more than {CAP >> 20} MiB, the cap set by VERIFY_MEMORY_CAP"),
    "sleeps": ("math", _sleeps, PAST_DEADLINE, f"after {DEADLINE_S:g} s, the deadline set by VERIFY_TRUTH_DEADLINE"),
    "raises": ("math", _raises, FAILED, "ValueError: a peer's own error"),
    "dies": ("math", _dies, FAILED, "its process died"),
    "nan": ("math", _value("nan"), FAILED, "returned NaN"),
    "below": ("math", _value("below"), UNDER, ""),
    "inside": ("math", _value("inside"), WITHIN, ""),
    "above": ("math", _value("above"), CONSERVATIVE, ""),
    "missing": ("verify_no_such_accountant", _value("inside"), "not installed", ""),
}


def _peers(kinds: list[str]) -> dict:
    return {f"peer {i} ({kind})": KINDS[kind][:2] for i, kind in enumerate(kinds)}


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4))
def test_each_peer_gets_the_status_of_what_it_did(kinds, bracket, monkeypatch):
    monkeypatch.setattr(compare_module, "ACCOUNTANTS", _peers(kinds))
    found = compare(bracket)
    assert [c.accountant for c in found] == list(_peers(kinds))
    for kind, c in zip(kinds, found, strict=True):
        _, _, status, note = KINDS[kind]
        assert c.status == status and note in c.note, (kind, c)
        assert (c.value is None) == (status not in (UNDER, WITHIN, CONSERVATIVE))


def test_a_peer_over_the_cap_or_past_its_deadline_is_reported_and_verify_answers(bracket, monkeypatch, capsys):
    """Text and JSON of the command: both peers named with their cap, verify's own bracket as without them (the text
    read a line per accountant: a terminal wide enough that nothing wraps)."""
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(compare_module, "ACCOUNTANTS", _peers(["allocates", "sleeps", "inside"]))
    argv = ["account", "--q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--tol", "0.1"]
    assert main([*argv, "--compare", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["status"], c["value"]) for c in data["compare"][:2]] == [(OVER_MEMORY, None), (PAST_DEADLINE, None)]
    assert data["compare"][2]["status"] == WITHIN
    assert (data["epsilon"]["lower"], data["epsilon"]["upper"]) == (bracket.lower, bracket.upper)
    assert main([*argv, "--compare"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "other accountants against [" in lines[1]
    assert "over the memory cap (needs more than 64 MiB, the cap set by VERIFY_MEMORY_CAP)" in lines[2]
    assert "past its deadline (stopped after 0.5 s, the deadline set by" in lines[3] and lines[4].endswith(WITHIN)
