"""Monotone lattice brackets of projected noisy SGD on an interval against independent references: the unprojected
mean, the clipped Gaussian's closed-form mean (mpmath), and a seeded Monte-Carlo simulation."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import special

from verify.errors import ParameterError
from verify.families import family
from verify.model import Quantity
from verify.truth.projected_chain import AffineStep, SmoothedAbsStep, lattice_laws, mean_bracket


def clipped_mean(mu, tau, a):
    """E clip(Y, -a, a), Y ~ N(mu, tau^2), 30 digits."""
    with mpmath.workdps(30):
        lo, hi = (-a - mu) / tau, (a - mu) / tau
        inside = mu * (mpmath.ncdf(hi) - mpmath.ncdf(lo)) + tau * (mpmath.npdf(lo) - mpmath.npdf(hi))
        return -a * mpmath.ncdf(lo) + a * (1 - mpmath.ncdf(hi)) + inside


def test_far_walls_leave_the_unprojected_mean():
    b = mean_bracket(100.0, 0.5, 1.0, 10, 0.0, 2000)
    assert np.all(b[:, 0] <= -0.5 * np.arange(1, 11)) and np.all(-0.5 * np.arange(1, 11) <= b[:, 1])


@pytest.mark.parametrize(("a", "drift", "tau", "start"), [(1.0, 0.1, 0.3, 0.5), (1.0, -0.4, 2.0, 1.0),
                                                          (0.2, 0.05, 0.01, -0.2), (3.0, 0.0, 1.0, 0.0)])
def test_one_step_brackets_the_clipped_gaussian_mean(a, drift, tau, start):
    b = mean_bracket(a, drift, tau, 1, start, 1000)
    exact = float(clipped_mean(start - drift, tau, a))
    assert b[0, 0] <= exact <= b[0, 1]
    assert b[0, 1] - b[0, 0] <= 2 * a / 1000 + 1e-9


def test_many_steps_bracket_a_seeded_simulation():
    rng = np.random.default_rng(0)
    a, drift, tau, steps = 1.0, 0.1, 0.3, 30
    w = np.full(400_000, 0.5)
    means = []
    for _ in range(steps):
        w = np.clip(w - drift - tau * rng.standard_normal(w.size), -a, a)
        means.append(w.mean())
    b = mean_bracket(a, drift, tau, steps, 0.5, 2000)
    se = 5 * 0.6 / math.sqrt(w.size)
    assert np.all(b[:, 0] - se <= means) and np.all(means <= b[:, 1] + se)
    assert np.max(b[:, 1] - b[:, 0]) < 0.01


def test_box_family_is_sqrt_d_copies_of_the_chain():
    truth = family("psgd_box_linear").truths[Quantity.AVG_EXCESS_RISK]
    d, L, R, sigma, eta = 4, 2.0, 1.0, 0.5, 0.3
    a = R / math.sqrt(d)
    one = truth(L=L, R=R, d=d, sigma=sigma, eta=eta, K=1, first=1, start=1.0)
    exact = math.sqrt(d) * L * (float(clipped_mean(a - eta * L / math.sqrt(d), eta * sigma, a)) + a)
    assert one.lower <= exact <= one.upper


def test_bad_chains_are_errors():
    with pytest.raises(ParameterError, match="start"):
        mean_bracket(1.0, 0.1, 0.3, 5, 2.0, 100)
    with pytest.raises(ParameterError, match="finite"):
        mean_bracket(1.0, math.nan, 0.3, 5, 0.0, 100)
    with pytest.raises(ParameterError, match="work cap"):
        mean_bracket(1.0, 0.1, 0.3, 10**6, 0.0, 1000)


def test_a_request_over_the_work_cap_is_refused_before_its_steps_are_read():
    """The cap depends on the counts alone: 10^6 steps were each validated first (5 s) before the refusal."""
    from collections.abc import Sequence

    from verify.truth.projected_chain import AffineStep, lattice_laws

    class Unread(Sequence):
        reads = 0

        def __len__(self):
            return 10**6

        def __getitem__(self, k):
            Unread.reads += 1
            return AffineStep(1.0, 0.1, 0.3)

    with pytest.raises(ParameterError, match="work cap"):
        lattice_laws(1.0, Unread(), 0.0, 1000)
    assert Unread.reads == 0


@pytest.mark.parametrize(("shift", "weighted"), [(0, 0), (1, 1)])
def test_averaged_iterate_risk_brackets_a_seeded_simulation(shift, weighted):
    """f = (lam/2) w^2 on [-a, a], eta_t = 1/(lam (t + shift)): E f(x_bar) by simulation lies in the Jensen bracket,
    and so does the simulated mean of f(x_t)."""
    lam, a, sigma, T = 1.0, 1.0, 1.0, 20
    truth = family("psgd_box_quadratic").truths[Quantity.AVERAGED_ITERATE_RISK](
        lam=lam, R=a, d=1, sigma=sigma, K=T, start=1.0, shift=shift, weighted=weighted)
    rng = np.random.default_rng(1)
    x = np.full(200_000, a)
    weights = np.arange(1, T + 1, dtype=float) if weighted else np.ones(T)
    weights /= weights.sum()
    total, f_mean = weights[0] * x, weights[0] * lam / 2 * x**2
    for t in range(1, T):
        step = 1 / (lam * (t + shift))
        x = np.clip(x - step * (lam * x + sigma * rng.standard_normal(x.size)), -a, a)
        total, f_mean = total + weights[t] * x, f_mean + weights[t] * lam / 2 * x**2
    risk = lam / 2 * total**2
    se = 5 * risk.std() / math.sqrt(x.size)
    assert truth.lower - se <= risk.mean() <= truth.upper + se
    assert f_mean.mean() <= truth.upper + 5 * f_mean.std() / math.sqrt(x.size)
    assert f_mean.mean() >= truth.upper - 0.01  # the upper end is the mean of E f(x_t), bracketed tightly


def test_smoothed_abs_family_brackets_a_seeded_simulation():
    """SGD on the Gaussian-smoothed (L/sqrt d)||w||_1 (gradient (L/sqrt d)(2 Phi(w/lam) - 1), the derivative of
    E|w + lam Z|, checked against a finite difference of its closed form) evaluated on the original F."""
    L, R, d, sigma, eta, K, lam = 1.0, 1.0, 2, 1.0, 0.3, 15, 0.4

    def smoothed(w):  # E|w + lam Z| (Theorem 33's f_hat for L = 1, d = 1)
        return w * (1 - 2 * special.ndtr(-w / lam)) + 2 * lam * np.exp(-(w / lam) ** 2 / 2) / math.sqrt(2 * math.pi)

    w = np.linspace(-1, 1, 7)
    assert np.allclose((smoothed(w + 1e-6) - smoothed(w - 1e-6)) / 2e-6, 2 * special.ndtr(w / lam) - 1, atol=1e-8)
    truth = family("psgd_box_smoothed_abs").truths[Quantity.AVG_EXCESS_RISK](
        L=L, R=R, d=d, sigma=sigma, eta=eta, K=K, first=5, start=1.0, lam=lam)
    a, pull = R / math.sqrt(d), eta * L / math.sqrt(d)
    rng = np.random.default_rng(2)
    x = np.full(400_000, a)
    excess = []
    for _ in range(K):
        x = np.clip(x - pull * (2 * special.ndtr(x / lam) - 1) - eta * sigma * rng.standard_normal(x.size), -a, a)
        excess.append(L * math.sqrt(d) * np.abs(x))
    sample = np.mean(excess[4:], axis=0)
    se = 5 * sample.std() / math.sqrt(x.size)
    assert truth.lower - se <= sample.mean() <= truth.upper + se


def test_a_non_monotone_step_is_an_error():
    with pytest.raises(ParameterError, match="monotone"):
        lattice_laws(1.0, [SmoothedAbsStep(2.0, 1.0, 0.5)], 0.0, 100)


def mp_lattice_laws(a, steps, start, n, up):
    """The rounded chain's laws after each step, by exact transition probabilities at 30 digits."""
    with mpmath.workdps(30):
        h = mpmath.mpf(2 * a) / n
        x = [-a + k * h for k in range(n + 1)]
        j = int(mpmath.floor((start + a) / h)) if not up else int(mpmath.ceil((start + a) / h - mpmath.mpf(1e-12)))
        law = [mpmath.mpf(k == min(max(j, 0), n)) for k in range(n + 1)]
        out = []
        for st in steps:
            nxt = [mpmath.mpf(0)] * (n + 1)
            for i, w in enumerate(law):
                if isinstance(st, SmoothedAbsStep):
                    mean = x[i] - st.pull * (2 * mpmath.ncdf(x[i] / st.scale) - 1)
                else:
                    mean = st.c * x[i] - st.drift
                cdf = [mpmath.ncdf((x[m] + (0 if up else h) - mean) / st.tau) for m in range(n)] + [1]
                for m in range(n + 1):
                    nxt[m] += w * (cdf[m] - (cdf[m - 1] if m else 0))
            law = nxt
            out.append([float(v) for v in law])
        return np.array(out)


@pytest.mark.parametrize("steps", [[AffineStep(1.0, 0.15, 0.4)] * 3, [AffineStep(1.0, -0.05, 2.0)] * 2,
                                   [AffineStep(0.7, 0.1, 0.3), AffineStep(0.5, 0.0, 0.2)],
                                   [SmoothedAbsStep(0.2, 0.3, 0.25)] * 2])
def test_lattice_laws_match_an_mpmath_propagation(steps):
    laws = lattice_laws(1.0, steps, 0.3, 24)
    assert np.abs(laws.lower - mp_lattice_laws(1.0, steps, 0.3, 24, False)).max() < 1e-14
    assert np.abs(laws.upper - mp_lattice_laws(1.0, steps, 0.3, 24, True)).max() < 1e-14
