"""Class 5 of the trust issue: the Stop- and Skip-PNSGD families are the output laws of the algorithm itself
(Feldman et al. 2018, Sec. 4), checked against a direct simulation and an independent quadrature."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import check, family


def _simulate_stop(n, t, record, shared, sigma, rng, size):
    """Run Stop-PNSGD on linear losses: T ~ U{1..n}, w_T = -eta sum_{k<=T} (x_k + Z_k), eta = 1."""
    x = np.full(n, shared, dtype=float)
    x[t - 1] = record
    T = rng.integers(1, n + 1, size)
    noise = rng.normal(0, sigma, (size, n))
    steps = np.arange(1, n + 1)[None, :] <= T[:, None]
    return -np.sum((x[None, :] + noise) * steps, axis=1) / sigma  # units eta*sigma


def _mixture_cdf(weights, means, sds, z):
    from scipy.stats import norm
    return sum(w * norm.cdf((z - m) / s) for w, m, s in zip(weights, means, sds, strict=True))


def test_stop_family_is_the_law_of_the_algorithm():
    from verify.families.mixtures import stop_pnsgd_components
    rng = np.random.default_rng(0)
    n, t, sigma, shared = 5, 3, 1.3, -0.7
    sample = np.sort(_simulate_stop(n, t, 1.0, shared, sigma, rng, 200_000))
    weights, means, sds = stop_pnsgd_components(n, t, 1.0, shared, sigma)
    ks = np.max(np.abs(_mixture_cdf(weights, means, sds, sample) - np.arange(1, sample.size + 1) / sample.size))
    assert ks < 1.63 / math.sqrt(sample.size) * 1.5  # well inside the 1% Kolmogorov-Smirnov band


def _independent(alpha, sigma, L, n, t, xo, kind):
    """max of both orders by 30-digit quadrature of the mixtures written out here."""
    if kind == "stop":
        comps = [(T, T >= t) for T in range(1, n + 1)]
        used = [(T - flag, flag, T) for T, flag in comps]
    else:
        used = [(n - t0 - (t > t0), t > t0, n - t0) for t0 in range(0, n // 2 + 1)]
    k = len(used)
    with mpmath.workdps(30):
        def density(z, record):
            return sum(mpmath.npdf(z, -(m * xo + f * record) / sigma, mpmath.sqrt(v)) for m, f, v in used) / k

        def renyi(a, b):
            # the integrand p^alpha q^(1 - alpha) of two components peaks at alpha m_p + (1 - alpha) m_q, beyond
            # both means for alpha > 1: the range covers every such centre by 12 widest sds (a range around the
            # means alone cut 1e-6 of the integral at alpha = 3.5, sigma = 0.7)
            centres = [alpha * (-(mp * xo + fp * a) / sigma) + (1 - alpha) * (-(mq * xo + fq * b) / sigma)
                       for mp, fp, _ in used for mq, fq, _ in used]
            lo, hi = min(centres) - 12 * math.sqrt(n), max(centres) + 12 * math.sqrt(n)
            val = mpmath.quad(lambda z: density(z, a) ** alpha * density(z, b) ** (1 - alpha),
                              mpmath.linspace(lo, hi, 24))
            return mpmath.log(val) / (alpha - 1)
        return float(max(renyi(L, -L), renyi(-L, L)))


@settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["stop", "skip"]), n=st.integers(1, 5), data=st.data(),
       alpha=st.sampled_from([1.2, 2.0, 3.5]), sigma=st.sampled_from([0.7, 1.5, 4.0]),
       xo=st.sampled_from([-1.0, -0.3, 0.0, 1.0]))
def test_families_agree_with_an_independent_quadrature(kind, n, data, alpha, sigma, xo):
    t = data.draw(st.integers(1, n))
    truth = family(f"{kind}_pnsgd_linear_data_1d").truth("renyi", alpha=alpha, sigma=sigma, L=1.0, n=n, t=t, xo=xo)
    assert truth.value == pytest.approx(_independent(alpha, sigma, 1.0, n, t, xo, kind), rel=1e-9)
    if xo == 0.0:  # the shared-records-0 families are the same instances
        base = family(f"{kind}_pnsgd_linear_1d").truth("renyi", alpha=alpha, sigma=sigma, L=1.0, n=n, t=t)
        assert base.value == pytest.approx(truth.value, rel=1e-12)


def test_theorem26_fails_at_n_2_and_the_checker_certifies_it():
    sigma = math.sqrt(2 * 1.2 * 0.2)
    result = check("feldman2018.theorem26", family="stop_pnsgd_linear_data_1d", alpha=1.2, sigma=sigma, L=1, n=2,
                   t=1, xo=-1)
    assert result.truth.value == pytest.approx(3.5333675142, rel=1e-9) and result.bound == pytest.approx(3.46573590)
    assert result.verdict.value == "VIOLATED" and result.certificate.verdict.value == "VIOLATED"
    assert _independent(1.2, sigma, 1.0, 2, 1, -1.0, "stop") == pytest.approx(3.5333675142, rel=1e-9)
