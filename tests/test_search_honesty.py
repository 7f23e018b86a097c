"""Class 2 of the trust issue: a search that checked nothing says so, and counts what it did."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.errors import NothingChecked, ParameterError
from verify.testing import assert_bound_holds, falsify, falsify_outcome

SETTINGS = settings(max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck))
UNDEFINED = ["sqrt({c} - alpha)", "log({c} - alpha)", "alpha/(alpha - alpha + {c} - {c})", "sqrt(-sigma*{c})",
             "log(1 - alpha*{c})", "(1 - alpha)**0.5*{c}"]


def _adds_up(outcome) -> bool:
    return outcome.tried == (outcome.checked + sum(outcome.excluded.values()) + outcome.undefined + outcome.capped
                             + outcome.failed)


@SETTINGS
@given(template=st.sampled_from(UNDEFINED), c=st.sampled_from(["1", "0.5", "2", "1e-3"]))
def test_undefined_bounds_are_counted_not_fatal(template, c):
    try:
        outcome = falsify_outcome(template.format(c=c), "noisy_gd_quadratic", max_examples=40, budget_s=20)
    except ParameterError as err:  # undefined everywhere, caught when parsed (e.g. a division by zero)
        assert "undefined" in str(err)
        return
    assert _adds_up(outcome)
    assert outcome.undefined + outcome.checked > 0


@SETTINGS
@given(cond=st.sampled_from(["eta < 0", "sigma < -1", "n < 0.5", "K < 0.9", "(alpha < 1.5) & (alpha > 2)"]))
def test_contradictory_assumptions_are_nothing_checked(cond):
    with pytest.raises(NothingChecked, match="no evidence"):
        falsify("alpha*S**2/(n**2*sigma**2)", "noisy_gd_quadratic", extra_assumptions=[cond], max_examples=30)


def test_nan_bound_never_passes():
    with pytest.raises(NothingChecked):
        assert_bound_holds("sqrt(-1 - alpha)", "noisy_gd_quadratic", max_examples=30)


def test_counts_add_up_and_report_the_checked_points():
    outcome = falsify_outcome("alpha*S**2/(2*lam*n**2*sigma**2)", "noisy_gd_quadratic",
                              extra_assumptions=("eta < 1/lam",), max_examples=60)
    assert _adds_up(outcome) and outcome.checked >= 10 and outcome.counterexample is None


@SETTINGS
@given(option=st.sampled_from([["--budget", "0"], ["--budget", "-1"], ["--budget", "nan"], ["--max-examples", "0"],
                               ["--max-examples", "2.5"], ["--min-checked", "-1"], ["--seed", "-3"],
                               ["--bind", "alpha=2"], ["--quantity", "bogus"], ["--side", "sideways"]]))
def test_bad_search_options_are_bad_input(option, capsys):
    with pytest.raises(SystemExit) as stop:
        code = main(["falsify", "--family", "noisy_gd_quadratic", "alpha*S**2", *option])
        raise SystemExit(code)
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and "Traceback" not in "".join(err) and err[-1].startswith(("error:", "verify"))


def test_cli_exit_codes_for_searches(capsys):
    assert main(["falsify", "--family", "noisy_gd_quadratic", "--assume", "eta < 0", "alpha"]) == 3
    assert "no evidence" in capsys.readouterr().err
    assert main(["falsify", "--family", "noisy_gd_quadratic", "alpha*S**2*eta*K/(8*n**2*sigma**2)"]) == 1
    assert "points checked" in capsys.readouterr().out


def test_no_hypothesis_folder_in_the_users_directory(tmp_path):
    code = "import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", code, "falsify", "--family", "noisy_gd_quadratic", "--max-examples",
                          "20", "alpha*S**2/(2*n**2*sigma**2)"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")})
    assert out.returncode in (0, 1), out.stderr  # no counterexample / a counterexample: a search that ran
    assert not (tmp_path / ".hypothesis").exists()


def test_a_certification_cut_by_the_budget_is_not_a_counterexample(monkeypatch):
    """The float filter says VIOLATED, then the rigorous re-check runs out of time: the point is uncertified (with
    the reason), never found (a regression: the float filter's answer used to stand when the re-check raised)."""
    import importlib

    from verify.errors import DeadlineExceeded
    from verify.results import Verdict as V

    falsify_module = importlib.import_module("verify.testing.falsify")  # the module, not the function it exports
    real = falsify_module.check_point

    def flaky(theorem, app, point, companions=(), *, rigorous=True, **options):
        result = real(theorem, app, point, companions, rigorous=rigorous, **options)
        if rigorous and result.verdict is V.VIOLATED:
            raise DeadlineExceeded("the rigorous re-check ran out of time")
        return result

    monkeypatch.setattr(falsify_module, "check_point", flaky)
    outcome = falsify_module.falsify_outcome("alpha*S**2*eta*K/(8*n**2*sigma**2)", "noisy_gd_quadratic",
                                             max_examples=30)
    assert outcome.counterexample is None and outcome.uncertified > 0 and outcome.capped == 0
    assert any("ran out of time" in reason for reason in outcome.uncertified_reasons)


def test_a_sum_too_long_to_evaluate_is_a_cap_not_an_undefined_bound():
    """Sum(alpha/k^2, k, 1, 10^12) is well defined but beyond the 1e5 terms evaluated: every point counts as over a
    cap, with the reason (it was counted 'undefined', with none)."""
    from verify.testing.falsify import search_outcome, user_theorem

    theorem = user_theorem("Sum(alpha/k**2, k, 1, 10**12)", "sampled_gaussian", "upper")
    outcome = search_outcome(theorem, theorem.applications[0], max_examples=5, budget_s=20)
    assert outcome.undefined == 0 and outcome.capped == outcome.tried > 0
    assert any("more than 100000" in r for r in outcome.failure_reasons)
