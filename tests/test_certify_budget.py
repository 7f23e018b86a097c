"""Issue 47 §3: `verify certify --budget` is a wall-clock cap on the whole certification. Its deadline was looked at
between boxes only, so one long box evaluation (a Sum of MinOver terms within the term caps) ran past 90 s under
`--budget 10`; now the budget is a verify.limits deadline over the preparation and the search, and the certification
it stops is INCONCLUSIVE (exit 3) with its reason, the box being evaluated among the undecided ones. Generated: claims
of known truth (true or false) whose boxes take from microseconds to seconds, under budgets that land anywhere:
the answer is the right one or INCONCLUSIVE by the budget, never a wrong one."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("flint")

from verify.certify import CERTIFIED, COUNTEREXAMPLE, INCONCLUSIVE, certify, claims, run_claim  # noqa: E402
from verify.cli import main  # noqa: E402

# one box takes ~1e6 interval evaluations: seconds, far above the budgets below
LONG = "Sum(MinOver(x + j*k, j, 1, 1000), k, 1, 1000)"


def _stopped_by_the_budget(cert) -> bool:
    """Stopped by the deadline (inside the preparation or a box's evaluation), not between boxes: the box then
    being examined, here the whole box, is undecided."""
    return (cert.status == INCONCLUSIVE and cert.stopped_by == "budget_s" and "ran out" in cert.note
            and cert.certified_boxes == 0 and cert.boxes_examined <= 1 and cert.undecided == ({"x": (0.0, 1.0)},))


@settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(budget=st.floats(0.05, 1.5))
def test_one_long_box_evaluation_is_stopped_by_the_budget(budget):
    cert = certify(LONG, "0", {"x": (0, 1)}, ">=", budget_s=budget)
    assert _stopped_by_the_budget(cert), cert.summary()


def test_the_cli_exits_3_naming_the_budget(capsys):
    argv = ["certify", "--lhs", "0", "--rhs", LONG, "--box", "x=0:1", "--budget", "0.5"]
    assert main([*argv, "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == INCONCLUSIVE and data["stopped_by"] == "budget_s" and "budget of 0.5 s ran out" in \
        data["note"]
    assert main(argv) == 3
    out = capsys.readouterr().out
    assert "stopped by budget_s" in out and "the budget of 0.5 s ran out" in out


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(5, 300), holds=st.booleans(), budget=st.floats(1e-3, 1.0))
def test_a_budget_that_lands_anywhere_gives_the_right_answer_or_inconclusive(n, holds, budget):
    """sum_k min_j (x + j k) = n x + n(n+1)/2 over x in [0, 1]: at least c = n(n+1)/2 - n/2 everywhere (holds), or
    below c = n(n+1)/2 + n/2 for x < 1/2 (fails)."""
    base = Fraction(n * (n + 1), 2)
    c = base - Fraction(n, 2) if holds else base + Fraction(n, 2)
    cert = certify(f"Sum(MinOver(x + j*k, j, 1, {n}), k, 1, {n})", f"{c.numerator}/{c.denominator}", {"x": (0, 1)},
                   ">=", budget_s=budget)
    assert cert.status in ((CERTIFIED if holds else COUNTEREXAMPLE), INCONCLUSIVE), cert.summary()
    if cert.status == INCONCLUSIVE:
        assert cert.stopped_by == "budget_s" and cert.undecided_count >= 1
    if cert.status == COUNTEREXAMPLE:
        x = Fraction(cert.counterexample["x"])
        assert n * x + base < c


def test_the_parts_of_a_termwise_claim_share_one_budget(monkeypatch):
    """Each part gets what the ones before it left of the budget (each had the whole budget: a claim of k parts
    could take k times it)."""
    given_budgets = []
    real = claims.certify

    def recording(*args, **kwargs):
        given_budgets.append(kwargs["budget_s"])
        return real(*args, **kwargs)

    monkeypatch.setattr(claims, "certify", recording)
    cert = run_claim("chourasia2021.lemma6_proof_below_printed", budget_s=30)
    assert len(given_budgets) == 2 and given_budgets[1] < given_budgets[0] <= 30
    assert cert.status in (CERTIFIED, INCONCLUSIVE)
