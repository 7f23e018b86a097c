"""The exact deviation probability of a two-valued empirical mean against scipy's binomial distribution and a
direct mpmath sum of the binomial pmf."""

from __future__ import annotations

import math

import mpmath
import pytest
from scipy.stats import binom

from verify.errors import ParameterError
from verify.truth.binomial_tail import mean_deviation_probability


def _direct(top: float, prob: float, samples: int, dev: float) -> mpmath.mpf:
    """sum of the pmf over the X with (top - 1) |X/l - prob| >= dev, at 40 digits."""
    with mpmath.workdps(40):
        p, total = mpmath.mpf(prob), mpmath.mpf(0)
        for x in range(samples + 1):
            if (mpmath.mpf(top) - 1) * abs(mpmath.mpf(x) / samples - p) >= dev:
                total += mpmath.binomial(samples, x) * p**x * (1 - p) ** (samples - x)
        return total


@pytest.mark.parametrize(("top", "prob", "samples", "dev"), [
    (3.0, 0.3, 100, 0.41), (2.0, 0.5, 7, 0.05), (90.0, 0.01, 4, 0.103), (11.0, 0.9, 1000, 0.7), (1.5, 0.2, 1, 0.1),
    (5.0, 0.05, 2000, 0.02)])
def test_deviation_probability_matches_a_direct_sum(top, prob, samples, dev):
    truth = mean_deviation_probability(top, prob, samples, dev)
    reference = float(_direct(top, prob, samples, dev))
    assert truth.value == pytest.approx(reference, rel=1e-12, abs=1e-300)
    enclosure = truth.enclose(128)
    assert float(enclosure.lower) <= reference <= float(enclosure.upper)


def test_deviation_probability_matches_scipy_at_large_samples():
    samples, prob, u = 10**6, 0.3, 0.0021337  # the deviation event is X >= 302134 or X <= 297866
    reference = binom.sf(302133, samples, prob) + binom.cdf(297866, samples, prob)
    truth = mean_deviation_probability(3.0, prob, samples, 2 * u)
    assert truth.value == pytest.approx(reference, rel=1e-9)


def test_hoeffding_holds_at_its_sample_size():
    """2 exp(-2 l t^2/(R - 1)^2) bounds the exact probability for any two-point f (Hoeffding 1963)."""
    for top, prob, dev in ((3.0, 0.5, 0.2), (40.0, 0.02, 1.0), (1.1, 0.7, 0.01)):
        for samples in (1, 10, 1000, 10**7):
            exact = mean_deviation_probability(top, prob, samples, dev).value
            assert exact <= 2 * math.exp(-2 * samples * dev**2 / (top - 1) ** 2) * (1 + 1e-12)


@pytest.mark.parametrize(("kwargs", "name"), [({"f_top": 1.0}, "f_top"), ({"f_prob": 1.0}, "f_prob"),
                                              ({"samples": 2.5}, "samples"), ({"dev": 0.0}, "dev")])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"f_top": 2.0, "f_prob": 0.5, "samples": 10, "dev": 0.1} | kwargs
    with pytest.raises(ParameterError, match=name):
        mean_deviation_probability(**args)
