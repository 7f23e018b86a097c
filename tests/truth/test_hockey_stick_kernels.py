"""The hockey stick's float kernels against independent references: the stacked pair kernel of hockey_stick_1d against
Mixture1D's log_pdf_np, components_np and mass (bit for bit) and mpmath at 40 digits, its slope against mpmath's
derivative, and the scan that both orders of a pair share against a direct evaluation, on seeded random mixtures."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verify.backend import log_sum_exp
from verify.truth.hockey_stick_1d import (
    _log_sum_exp_rows,
    _Pair,
    _scan,
)
from verify.truth.mixture import Mixture1D


def _mixture(rng: np.random.Generator, k: int) -> Mixture1D:
    w = rng.random(k) + 1e-3
    return Mixture1D.of(w / w.sum(), rng.normal(0, 3, k), np.exp(rng.normal(0, 0.7, k)))


def _mp_log_pdf(mix: Mixture1D, x: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.log(mpmath.fsum(mpmath.mpf(w) * mpmath.npdf(x, m, s)
                                      for w, m, s in zip(mix.weights, mix.means, mix.sds, strict=True)))


def _mp_score(mix: Mixture1D, x: float) -> mpmath.mpf:
    """d/dx log p(x) = sum w_i N_i(x) (m_i - x)/s_i^2 / p(x), 40 digits."""
    with mpmath.workdps(40):
        x = mpmath.mpf(x)
        terms = [(mpmath.mpf(w) * mpmath.npdf(x, m, s), (m - x) / mpmath.mpf(s) ** 2)
                 for w, m, s in zip(mix.weights, mix.means, mix.sds, strict=True)]
        return mpmath.fsum(d * g for d, g in terms) / mpmath.fsum(d for d, _ in terms)


CASES = [(seed, k, r) for seed, (k, r) in enumerate([(1, 1), (2, 3), (7, 1), (8, 2), (9, 5), (26, 1), (51, 4),
                                                    (130, 3), (3, 4000), (26, 4000)])]


@pytest.mark.parametrize(("seed", "k", "r"), CASES)
def test_pair_kernel_is_mixture1d_bit_for_bit(seed, k, r):
    """log p, log q, the component rows and the masses of the stacked kernel equal Mixture1D's own, p with k
    components and q with another count (1, 8, 9 or 130: numpy's pairwise sums change at 8 and 128 terms)."""
    rng = np.random.default_rng(seed)
    p, q = _mixture(rng, k), _mixture(rng, (1, 8, 9, 130)[seed % 4])
    z = np.concatenate([rng.normal(0, 8, r - 1), [1e160]]) if r > 1 else rng.normal(0, 8, 1)  # 1e160: underflow
    pair = _Pair(p, q)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # -inf - -inf at 1e160
        logs, comp = pair.log_pdfs(z)
        for row, mix in zip(logs, (p, q), strict=True):
            np.testing.assert_array_equal(row, mix.log_pdf_np(z))
        np.testing.assert_array_equal(comp, np.concatenate([p.components_np(z), q.components_np(z)]))
        np.testing.assert_array_equal(pair.loss(z), p.log_pdf_np(z) - q.log_pdf_np(z))
    for x, got in list(zip(z.tolist(), logs[0].tolist(), strict=True))[:40]:
        if abs(x) < 1e3:
            assert got == pytest.approx(float(_mp_log_pdf(p, x)), rel=1e-13, abs=1e-13)
    a = np.sort(rng.normal(0, 4, (min(r, 50), 2)), axis=1)
    a[0, 0] = -np.inf
    for got, mix in zip(pair.masses(a[:, 0], a[:, 1]), (p, q), strict=True):
        np.testing.assert_array_equal(got, mix.mass(a[:, 0], a[:, 1]))


@pytest.mark.parametrize("seed", range(6))
def test_loss_and_slope_match_mpmath(seed):
    rng = np.random.default_rng(100 + seed)
    p, q = _mixture(rng, int(rng.integers(1, 12))), _mixture(rng, int(rng.integers(1, 12)))
    x = rng.normal(0, 4, 5)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss, slope = _Pair(p, q).loss_and_slope(x)
    for xi, li, si in zip(x.tolist(), loss.tolist(), slope.tolist(), strict=True):
        assert li == pytest.approx(float(_mp_log_pdf(p, xi) - _mp_log_pdf(q, xi)), rel=1e-12, abs=1e-12)
        assert si == pytest.approx(float(_mp_score(p, xi) - _mp_score(q, xi)), rel=1e-11, abs=1e-11)


@pytest.mark.parametrize("seed", range(4))
def test_both_orders_share_one_scan_exactly(seed):
    rng = np.random.default_rng(200 + seed)
    p, q = _mixture(rng, 5), _mixture(rng, 9)
    for x, y in ((p, q), (q, p)):
        xs, loss = _scan(x, y)
        lo = min(x.means + y.means) - 40 * max(x.sds + y.sds)
        assert xs[0] == lo and np.all(np.diff(xs) > 0)
        np.testing.assert_array_equal(loss, x.log_pdf_np(xs) - y.log_pdf_np(xs))
    np.testing.assert_array_equal(_scan(p, q)[1], -_scan(q, p)[1])


@pytest.mark.parametrize(("seed", "axis"), [(s, a) for s in range(4) for a in (0, 1)])
def test_numpys_lean_log_sum_exp_is_the_array_api_one_bit_for_bit(seed, axis):
    """verify.backend.log_sum_exp's numpy path (ufunc reductions, in place) against its array-API path on the same
    numpy arrays (array_api_compat's namespace), and the one-column shortcut of the hockey stick's rows, on shapes
    from 1 to 300 terms, with rows and columns all -inf, one NaN and terms far apart."""
    import array_api_compat.numpy as xp

    rng = np.random.default_rng(300 + seed)
    for shape in ((1, 1), (1, 7), (9, 1), (5, 6), (300, 3), (3, 300)):
        x = rng.normal(0, 10, shape) * rng.choice([1.0, 100.0], shape)
        if shape[0] > 2 and shape[1] > 2:
            x[0, :], x[:, 0], x[1, 1] = -np.inf, -np.inf, np.nan
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a NaN row's shift is 0
            reference = np.asarray(log_sum_exp(x, axis=axis, xp=xp))
            np.testing.assert_array_equal(log_sum_exp(x, axis=axis), reference)
            if axis == 1:
                np.testing.assert_array_equal(_log_sum_exp_rows(x), reference)
