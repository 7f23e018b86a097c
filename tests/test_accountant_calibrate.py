"""Issue 50, calibration (verify.accountant_calibrate): a point is decided by any certified bracket that decides it,
a refusal's best bracket included (the issue: exit 3 on [5.59, 5.65] against a target of 0.5); a search that ends at
its limit says so (`at_limit`) instead of reporting the limit as the threshold. References: at q = 1 the schedule is
the Gaussian mechanism with mu = sqrt(T)/sigma, whose delta(eps) is Balle & Wang's (2018, Thm 8) closed form,
evaluated in mpmath at 40 digits at the calibrated value and at the excluded one; where T q <= delta, eps(delta) = 0
(delta(0) is the total variation, at most q per step)."""

from __future__ import annotations

import json
import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify import accountant
from verify.accountant_calibrate import LIMITS, Calibration, calibrate
from verify.cli import main
from verify.errors import ResourceLimitError


def balle_wang_delta(eps: float, mu: float) -> mpmath.mpf:
    """delta(eps) of the Gaussian mechanism with sensitivity / sigma = mu: Phi(mu/2 - eps/mu) - e^eps
    Phi(-mu/2 - eps/mu) (mpmath, 40 digits)."""
    with mpmath.workdps(40):
        eps, mu = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


@settings(max_examples=5, deadline=None, database=None)
@given(steps=st.integers(1, 30), target=st.floats(0.3, 6), delta=st.floats(1e-10, 1e-3))
def test_sigma_at_q_1_meets_the_closed_form_and_the_excluded_value_does_not(steps, target, delta):
    c = calibrate("sigma", target, delta, q=1.0, steps=steps)
    assert not c.at_limit and c.excluded is not None and c.excluded < c.value <= c.excluded * 1.05
    assert balle_wang_delta(target, math.sqrt(steps) / c.value) <= delta
    assert balle_wang_delta(target, math.sqrt(steps) / c.excluded) > delta


class Refusal(ResourceLimitError):
    """What the accountant raises where an explicit tolerance is not met: the tightest bracket it reached."""

    def __init__(self, best: accountant.AccountantResult | None) -> None:
        super().__init__("a cap")
        self.best = best


def _refusing(monkeypatch, loose: float) -> list[float]:
    """accountant.epsilon refusing every tolerance asked for, its best bracket the one at relative width `loose`."""
    real, widths = accountant.epsilon, []

    def epsilon(delta, phases, *, tol, **kwargs):
        widths.append(tol)
        raise Refusal(real(delta, phases, tol=loose, **kwargs))

    monkeypatch.setattr(accountant, "epsilon", epsilon)
    return widths


def test_a_refused_point_whose_best_bracket_decides_is_decided(monkeypatch):
    """Every point refused, with a 5% bracket as its best: those far from the threshold are decided by it, the search
    still answers, and its answer holds against the closed form (the value meets, the excluded value does not)."""
    widths = _refusing(monkeypatch, 0.05)
    c = calibrate("sigma", 0.5, 1e-6, q=1.0, steps=4)
    assert widths and c.certificate.upper <= 0.5 and c.excluded is not None
    assert balle_wang_delta(0.5, 2 / c.value) <= 1e-6 < balle_wang_delta(0.5, 2 / c.excluded)


def test_a_refusal_with_a_deciding_bracket_is_exit_0_on_the_command_line(monkeypatch, capsys):
    _refusing(monkeypatch, 0.05)
    argv = ["account", "--calibrate", "sigma", "--target-eps", "0.5", "--delta", "1e-6", "--q", "1", "--steps", "4"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certificate"]["epsilon"]["upper"] <= 0.5 and out["at_limit"] is False
    assert out["given"] == {"delta": 1e-6}


def test_a_refusal_without_a_bracket_leaves_nothing_to_decide(monkeypatch):
    def epsilon(*_args, **_kwargs):
        raise Refusal(None)

    monkeypatch.setattr(accountant, "epsilon", epsilon)
    with pytest.raises(ResourceLimitError, match="provably meets"):
        calibrate("sigma", 0.5, 1e-6, q=1.0, steps=4)


@pytest.mark.parametrize(("parameter", "kwargs", "limit"), [
    ("steps", {"q": 1e-13, "sigma": 1.0}, LIMITS["steps"][1]),  # T q <= 1e-6 < delta at every T: eps = 0
    ("sigma", {"q": 1e-8, "steps": 1}, LIMITS["sigma"][0]),  # q <= delta: eps = 0 at any sigma
    ("q", {"sigma": 50.0, "steps": 1}, 1.0),  # the Gaussian mechanism at mu = 1/50 (checked below)
])
def test_an_answer_at_the_search_limit_says_so(parameter, kwargs, limit, capsys):
    c = calibrate(parameter, 1.0, 1e-5, **kwargs)
    assert c.at_limit and c.value == limit and c.excluded is None and c.certificate.upper <= 1.0
    if parameter == "q":
        assert balle_wang_delta(1.0, 1 / 50) <= 1e-5
    side = "down" if parameter == "sigma" else "up"
    assert f"every value {side} to the search limit {'10,000,000' if parameter == 'steps' else f'{limit:g}'}" in str(c)
    argv = ["account", "--calibrate", parameter, "--target-eps", "1", "--delta", "1e-5"]
    argv += [x for k, v in kwargs.items() for x in (f"--{k}", repr(v))]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["at_limit"] is True and out["value"] == limit and out["excluded"] is None


def test_an_answer_inside_the_range_is_not_at_the_limit():
    """At q = 1, sigma = 4 the closed form's threshold (a few steps) lies inside the range: at_limit False, and the
    excluded value provably fails."""
    c = calibrate("steps", 2.0, 1e-5, q=1.0, sigma=4.0)
    assert not c.at_limit and c.excluded is not None and c.excluded > c.value
    assert balle_wang_delta(2.0, math.sqrt(c.value) / 4) <= 1e-5 < balle_wang_delta(2.0, math.sqrt(c.excluded) / 4)
    assert isinstance(c, Calibration) and "largest steps" in str(c)
